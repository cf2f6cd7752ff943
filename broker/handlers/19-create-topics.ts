// CreateTopics (key 19), versions 2-7.
// -1 partitions / replication factor take the broker defaults; with one broker
// the replication factor must be 1. Manual assignments must name this broker.
// validateOnly runs every check and changes nothing. From v5 the response
// carries the resulting partition count, replication factor and configs.
import type { ApiHandler } from './api-handler.js';
import type { BrokerContext } from '../broker-context.js';
import type { CreateTopicsRequest, CreateTopicsResponse, CreateTopicsResponseCreatableTopicResult } from '../protocol/messages/create-topics.js';
import { describeTopicConfigs } from '../../metadata/describe-configs.js';
import { toErrorPair } from './admin-errors.js';
import { ZERO_UUID } from '../protocol/reader.js';
import { ErrorCode } from '../protocol/errors.js';


export const handler: ApiHandler<CreateTopicsRequest, CreateTopicsResponse, BrokerContext> = {
  apiKey: 19,
  minVersion: 2,
  maxVersion: 7,
  async handle(broker, req, ctx) {
    const topics: CreateTopicsResponseCreatableTopicResult[] = [];
    const seen = new Set<string>();
    for (const t of req.topics) {
      if (seen.has(t.name)) {
        topics.push({ name: t.name, topicId: ZERO_UUID, errorCode: ErrorCode.INVALID_REQUEST, errorMessage: `Duplicate topic ${t.name} in request`, numPartitions: -1, replicationFactor: -1, configs: null });
        continue;
      }
      seen.add(t.name);
      try {
        const configs: Record<string, string | null> = {};
        for (const c of t.configs) configs[c.name] = c.value;
        const record = await broker.topics.createTopic(
          {
            name: t.name,
            numPartitions: t.numPartitions,
            replicationFactor: t.replicationFactor,
            assignments: t.assignments.map((a) => ({ partitionIndex: a.partitionIndex, brokerIds: a.brokerIds })),
            configs,
          },
          { validateOnly: req.validateOnly },
        );
        if (!req.validateOnly) ctx.log.info({ topic: t.name, topicId: record.topicId, partitions: record.partitionCount }, 'created topic');
        topics.push({
          name: t.name,
          topicId: req.validateOnly ? ZERO_UUID : record.topicId,
          errorCode: 0,
          errorMessage: null,
          numPartitions: record.partitionCount,
          // In a cluster the replicas the topic got (or, validate-only, would get); one broker holds one.
          replicationFactor: broker.cluster == null ? 1 : (broker.cluster.partition(t.name, 0)?.replicas.length ?? (t.replicationFactor > 0 ? t.replicationFactor : broker.config.getInt('default.replication.factor'))),
          configs: describeTopicConfigs(broker.config, record.configs, { topicName: t.name }).map((e) => ({
            name: e.name,
            value: e.value,
            readOnly: e.readOnly,
            configSource: e.configSource,
            isSensitive: e.isSensitive,
          })),
        });
      } catch (err) {
        const { errorCode, errorMessage } = toErrorPair(err, ctx.log);
        topics.push({ name: t.name, topicId: ZERO_UUID, errorCode, errorMessage, numPartitions: -1, replicationFactor: -1, configs: null });
      }
    }
    return { throttleTimeMs: 0, topics };
  },
  errorResponse(req, errorCode) {
    return { throttleTimeMs: 0, topics: req.topics.map((t) => ({ name: t.name, topicId: ZERO_UUID, errorCode, errorMessage: null, numPartitions: -1, replicationFactor: -1, configs: null })) };
  },
};
