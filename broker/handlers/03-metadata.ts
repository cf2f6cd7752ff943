// Metadata (key 3), versions 0-13.
// Brokers, controller and each partition's leader, replicas and ISR as the
// cluster image shows them, or this broker alone without etcd.connect (the
// same answer as DescribeTopicPartitions, see metadata-answers.ts). A null
// topic list (or an empty one at v0) means all topics, internal ones flagged.
// Unknown topics are created when auto.create.topics.enable is on and the
// request allows it (always before v4), and answered in the same response.
// Topic ids are returned from v10. Authorized operations, when asked for (topic
// v8+, cluster v8-10), are every operation, as Kafka answers without an authorizer.
// v13's top-level error code is for REBOOTSTRAP_REQUIRED (KIP-1102), which one
// broker never asks for: 0, or the error of a request that failed as a whole.
import type { ApiHandler } from './api-handler.js';
import type { BrokerContext } from '../broker-context.js';
import type {
  MetadataRequest,
  MetadataResponse,
  MetadataResponseMetadataResponseTopic,
} from '../protocol/messages/metadata.js';
import { ErrorCode, KafkaError } from '../protocol/errors.js';
import type { TopicRecord } from '../../metadata/topics.js';
import { ZERO_UUID } from '../protocol/reader.js';
import { AUTHORIZED_OPERATIONS_OMITTED as NOT_REQUESTED, CLUSTER_AUTHORIZED_OPERATIONS, TOPIC_AUTHORIZED_OPERATIONS } from './authorized-operations.js';
import { partitionMetadata, topicMetadata } from './metadata-answers.js';

function topicEntry(broker: BrokerContext, t: TopicRecord, operations: number): MetadataResponseMetadataResponseTopic {
  const partitions = [];
  for (let i = 0; i < t.partitionCount; i++) partitions.push(partitionMetadata(broker, t.name, i));
  return { errorCode: 0, ...topicMetadata(broker, t), partitions, topicAuthorizedOperations: operations };
}

function errorEntry(name: string | null, topicId: string, errorCode: number, operations = NOT_REQUESTED): MetadataResponseMetadataResponseTopic {
  return { errorCode, name, topicId, isInternal: false, partitions: [], topicAuthorizedOperations: operations };
}

export const handler: ApiHandler<MetadataRequest, MetadataResponse, BrokerContext> = {
  apiKey: 3,
  minVersion: 0,
  maxVersion: 13,
  async handle(broker, req, ctx) {
    const all = req.topics === null || (ctx.apiVersion === 0 && req.topics.length === 0);
    // Kafka fills it in for every topic of the answer, unknown ones included.
    const ops = ctx.apiVersion >= 8 && req.includeTopicAuthorizedOperations ? TOPIC_AUTHORIZED_OPERATIONS : NOT_REQUESTED;
    const topics: MetadataResponseMetadataResponseTopic[] = [];
    if (all) {
      for (const t of broker.topics.store.list()) topics.push(topicEntry(broker, t, ops));
    } else {
      const allowCreate = broker.config.getBoolean('auto.create.topics.enable') && (ctx.apiVersion < 4 || req.allowAutoTopicCreation);
      for (const rt of req.topics ?? []) {
        let record: TopicRecord | undefined;
        if (rt.name === null) {
          record = broker.topics.store.getById(rt.topicId);
          if (record === undefined) {
            topics.push(errorEntry(null, rt.topicId, ErrorCode.UNKNOWN_TOPIC_ID, ops));
            continue;
          }
        } else {
          record = broker.topics.store.get(rt.name);
          if (record === undefined && allowCreate && !broker.topics.isInternal(rt.name)) {
            try {
              record = await broker.topics.createTopic({ name: rt.name });
              ctx.log.info({ topic: rt.name }, 'auto-created topic');
            } catch (err) {
              if (err instanceof KafkaError && err.code === ErrorCode.TOPIC_ALREADY_EXISTS) record = broker.topics.store.get(rt.name);
              else if (err instanceof KafkaError) {
                topics.push(errorEntry(rt.name, ZERO_UUID, err.code, ops));
                continue;
              } else throw err;
            }
          }
          if (record === undefined) {
            topics.push(errorEntry(rt.name, ZERO_UUID, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ops));
            continue;
          }
        }
        topics.push(topicEntry(broker, record, ops));
      }
    }
    return {
      errorCode: ErrorCode.NONE,
      throttleTimeMs: 0,
      brokers: broker.cluster?.brokers() ?? [{ nodeId: broker.nodeId, host: broker.advertised.host, port: broker.advertised.port, rack: null }],
      clusterId: broker.clusterId,
      controllerId: broker.cluster?.controllerId ?? broker.nodeId,
      topics,
      clusterAuthorizedOperations:
        ctx.apiVersion >= 8 && ctx.apiVersion <= 10 && req.includeClusterAuthorizedOperations ? CLUSTER_AUTHORIZED_OPERATIONS : NOT_REQUESTED,
    };
  },
  errorResponse(req, errorCode) {
    return {
      errorCode,
      throttleTimeMs: 0,
      brokers: [],
      clusterId: null,
      controllerId: -1,
      topics: (req.topics ?? []).map((t) => errorEntry(t.name, t.topicId, errorCode)),
      clusterAuthorizedOperations: NOT_REQUESTED,
    };
  },
};
