// DeleteTopics (key 20), versions 1-6 (v0 was removed in Kafka 4.0).
// By name (v1-5 topicNames, v6 topics[].name) or by topic id (v6). Deleting a
// topic removes its partitions' local logs and, through the remote log
// manager, its remote segments. Internal topics cannot be deleted.
// delete.topic.enable=false refuses with TOPIC_DELETION_DISABLED.
import type { ApiHandler } from './api-handler.js';
import type { BrokerContext } from '../broker-context.js';
import type { DeleteTopicsRequest, DeleteTopicsResponse } from '../protocol/messages/delete-topics.js';
import { ErrorCode } from '../protocol/errors.js';
import { toErrorPair } from './admin-errors.js';
import { ZERO_UUID } from '../protocol/reader.js';


export const handler: ApiHandler<DeleteTopicsRequest, DeleteTopicsResponse, BrokerContext> = {
  apiKey: 20,
  minVersion: 1,
  maxVersion: 6,
  async handle(broker, req, ctx) {
    const wanted = ctx.apiVersion >= 6 ? req.topics : req.topicNames.map((name) => ({ name, topicId: ZERO_UUID }));
    const responses = [];
    for (const w of wanted) {
      const record = w.name !== null ? broker.topics.store.get(w.name) : broker.topics.store.getById(w.topicId);
      if (record === undefined) {
        responses.push({ name: w.name, topicId: w.topicId, errorCode: w.name !== null ? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION : ErrorCode.UNKNOWN_TOPIC_ID, errorMessage: null });
        continue;
      }
      if (!broker.config.getBoolean('delete.topic.enable')) {
        responses.push({ name: record.name, topicId: record.topicId, errorCode: ErrorCode.TOPIC_DELETION_DISABLED, errorMessage: 'delete.topic.enable is false' });
        continue;
      }
      if (broker.topics.isInternal(record.name)) {
        responses.push({ name: record.name, topicId: record.topicId, errorCode: ErrorCode.INVALID_TOPIC_EXCEPTION, errorMessage: `internal topic ${record.name} cannot be deleted` });
        continue;
      }
      try {
        await broker.topics.deleteTopic(record.name);
        ctx.log.info({ topic: record.name, topicId: record.topicId }, 'deleted topic');
        responses.push({ name: record.name, topicId: record.topicId, errorCode: 0, errorMessage: null });
      } catch (err) {
        responses.push({ name: record.name, topicId: record.topicId, ...toErrorPair(err, ctx.log) });
      }
    }
    return { throttleTimeMs: 0, responses };
  },
  errorResponse(req, errorCode, ctx) {
    const wanted = ctx.apiVersion >= 6 ? req.topics : req.topicNames.map((name) => ({ name, topicId: ZERO_UUID }));
    return { throttleTimeMs: 0, responses: wanted.map((w) => ({ name: w.name, topicId: w.topicId, errorCode, errorMessage: null })) };
  },
};
