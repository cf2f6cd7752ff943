// DescribeProducers (key 61), version 0.
// Per requested partition, the producers its producer state holds (Kafka's
// UnifiedLog.activeProducers): producer id, epoch, last sequence (-1 when no
// batch is retained), last timestamp, coordinator epoch and the first offset
// of its open transaction (-1 when none). UNKNOWN_TOPIC_OR_PARTITION for a
// topic or partition this broker does not have, as Kafka's
// ReplicaManager.getPartitionOrError answers.
import type { ApiHandler } from './api-handler.js';
import type { BrokerContext } from '../broker-context.js';
import type { DescribeProducersRequest, DescribeProducersResponse } from '../protocol/messages/describe-producers.js';
import { ErrorCode } from '../protocol/errors.js';

export const handler: ApiHandler<DescribeProducersRequest, DescribeProducersResponse, BrokerContext> = {
  apiKey: 61,
  minVersion: 0,
  maxVersion: 0,
  handle(broker, req) {
    return {
      throttleTimeMs: 0,
      topics: req.topics.map((t) => ({
        name: t.name,
        partitions: t.partitionIndexes.map((partitionIndex) => {
          const p = broker.topics.partition(t.name, partitionIndex);
          if (p === undefined) {
            return { partitionIndex, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: null, activeProducers: [] };
          }
          return { partitionIndex, errorCode: ErrorCode.NONE, errorMessage: null, activeProducers: p.activeProducers() };
        }),
      })),
    };
  },
  errorResponse(req, errorCode) {
    return {
      throttleTimeMs: 0,
      topics: req.topics.map((t) => ({
        name: t.name,
        partitions: t.partitionIndexes.map((partitionIndex) => ({ partitionIndex, errorCode, errorMessage: null, activeProducers: [] })),
      })),
    };
  },
};
