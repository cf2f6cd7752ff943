// DescribeTopicPartitions (key 75), version 0 (KIP-966), as Kafka 4.x serves it
// (Kafka 4.3.1's captured answers match it byte for byte).
// Kafka 3.7+ admin clients describe topics by name with it (kafka-topics
// --describe prints its Elr and LastKnownElr; with Metadata alone they are N/A).
// - Topics are named: the request carries no topic ids (Admin.describeTopics by
//   id goes through Metadata). An empty list means every topic, internal ones
//   flagged, and then only existing topics are listed.
// - Topics at or after the cursor's topic (Java string order) are answered once
//   each, sorted by name; the cursor's partition index applies to its topic
//   only. A named list that lacks the cursor's topic, or a negative cursor
//   partition, is INVALID_REQUEST for the whole request.
// - At most max(1, min(ResponsePartitionLimit, max.request.partition.size.limit))
//   partitions are answered. When a topic is cut short, NextCursor names it and
//   its first partition left out; when the limit is used up exactly at the end
//   of a topic, NextCursor points at partition 0 of the next topic (existing or
//   not, as Kafka does); otherwise it is null.
// - An unknown name: UNKNOWN_TOPIC_OR_PARTITION (INVALID_TOPIC_EXCEPTION for an
//   illegal name), zero topic id, no partitions; it does not count against the
//   limit.
// - Partitions are what Metadata returns (metadata-answers.ts): this node leads
//   with the log's leader epoch, replicas = ISR = [this node]. With one broker no
//   replica is ever out of the ISR, so the eligible leader replicas and the last
//   known ELR are empty lists, as a single-node Kafka reports them.
// - No authorizer: every topic gets every topic operation, as Kafka without an
//   authorizer computes it (this API has no "include" flag).
import type { ApiHandler } from './api-handler.js';
import { AUTHORIZED_OPERATIONS_OMITTED, TOPIC_AUTHORIZED_OPERATIONS } from './authorized-operations.js';
import type { BrokerContext } from '../broker-context.js';
import type {
  DescribeTopicPartitionsRequest,
  DescribeTopicPartitionsResponse,
  DescribeTopicPartitionsResponseCursor,
  DescribeTopicPartitionsResponseDescribeTopicPartitionsResponsePartition as ResponsePartition,
  DescribeTopicPartitionsResponseDescribeTopicPartitionsResponseTopic as ResponseTopic,
} from '../protocol/messages/describe-topic-partitions.js';
import { ErrorCode, KafkaError } from '../protocol/errors.js';
import { ZERO_UUID } from '../protocol/reader.js';
import { validateTopicName } from '../../metadata/topics.js';
import { partitionMetadata, topicMetadata, type PartitionMetadataSource } from './metadata-answers.js';

/** Kafka's default for max.request.partition.size.limit (and the request's ResponsePartitionLimit). */
export const DEFAULT_MAX_REQUEST_PARTITION_SIZE_LIMIT = 2000;


function unknownTopic(broker: PartitionMetadataSource, name: string): ResponseTopic {
  let errorCode: number = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
  try {
    validateTopicName(name);
  } catch (err) {
    if (!(err instanceof KafkaError)) throw err;
    errorCode = err.code;
  }
  return {
    errorCode,
    name,
    topicId: ZERO_UUID,
    isInternal: broker.topics.isInternal(name),
    partitions: [],
    topicAuthorizedOperations: TOPIC_AUTHORIZED_OPERATIONS,
  };
}

/** The topics a request asks for, at or after the cursor's topic, sorted, each once. */
function requestedNames(broker: PartitionMetadataSource, req: DescribeTopicPartitionsRequest): string[] {
  const from = req.cursor?.topicName ?? '';
  const names = new Set<string>();
  const candidates = req.topics.length === 0 ? broker.topics.store.list().map((t) => t.name) : req.topics.map((t) => t.name);
  for (const name of candidates) if (name >= from) names.add(name);
  if (req.cursor !== null) {
    if (req.topics.length > 0 && !names.has(req.cursor.topicName)) {
      throw new KafkaError(ErrorCode.INVALID_REQUEST, `DescribeTopicPartitionsRequest topic list should contain the cursor topic: ${req.cursor.topicName}`);
    }
    if (req.cursor.partitionIndex < 0) {
      throw new KafkaError(ErrorCode.INVALID_REQUEST, `DescribeTopicPartitionsRequest cursor partition must be valid: ${req.cursor.topicName}-${req.cursor.partitionIndex}`);
    }
  }
  // UTF-16 code unit order, as Java's String.compareTo.
  return [...names].sort();
}

/**
 * The response body for `req`, answering at most `maxPartitions` partitions
 * (max.request.partition.size.limit); throws INVALID_REQUEST for a bad cursor.
 */
export function describeTopicPartitions(
  broker: PartitionMetadataSource,
  req: DescribeTopicPartitionsRequest,
  maxPartitions: number,
): DescribeTopicPartitionsResponse {
  const names = requestedNames(broker, req);
  const describeAll = req.topics.length === 0;
  let remaining = Math.max(Math.min(maxPartitions, req.responsePartitionLimit), 1);
  const topics: ResponseTopic[] = [];
  let nextCursor: DescribeTopicPartitionsResponseCursor | null = null;
  for (const name of names) {
    if (remaining === 0) {
      nextCursor = { topicName: name, partitionIndex: 0 };
      break;
    }
    const record = broker.topics.store.get(name);
    if (record === undefined) {
      if (!describeAll) topics.push(unknownTopic(broker, name));
      continue;
    }
    const first = req.cursor !== null && req.cursor.topicName === name ? req.cursor.partitionIndex : 0;
    const end = Math.min(record.partitionCount, first + remaining);
    const partitions: ResponsePartition[] = [];
    for (let i = first; i < end; i++) {
      partitions.push({ ...partitionMetadata(broker, name, i), eligibleLeaderReplicas: [], lastKnownElr: [] });
    }
    topics.push({ errorCode: ErrorCode.NONE, ...topicMetadata(broker, record), partitions, topicAuthorizedOperations: TOPIC_AUTHORIZED_OPERATIONS });
    if (end < record.partitionCount) {
      nextCursor = { topicName: name, partitionIndex: end };
      break;
    }
    remaining -= partitions.length;
  }
  return { throttleTimeMs: 0, topics, nextCursor };
}

export const handler: ApiHandler<DescribeTopicPartitionsRequest, DescribeTopicPartitionsResponse, BrokerContext> = {
  apiKey: 75,
  minVersion: 0,
  maxVersion: 0,
  handle(broker, req) {
    return describeTopicPartitions(broker, req, broker.config.getInt('max.request.partition.size.limit'));
  },
  errorResponse(req, errorCode) {
    // Kafka's DescribeTopicPartitionsRequest.getErrorResponse: every named topic with the error.
    return {
      throttleTimeMs: 0,
      topics: req.topics.map((t) => ({
        errorCode,
        name: t.name,
        topicId: ZERO_UUID,
        isInternal: false,
        partitions: [],
        topicAuthorizedOperations: AUTHORIZED_OPERATIONS_OMITTED,
      })),
      nextCursor: null,
    };
  },
};
