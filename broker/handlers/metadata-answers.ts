// What Metadata (3) and DescribeTopicPartitions (75) say about one partition and
// one topic. Both answers are built here so the two APIs never disagree about a
// leader, its epoch, the replicas or the ISR.
//
// One broker leads every partition: replicas and ISR are this node, nothing is
// offline. A partition whose log is not open yet (between the topic store and
// the log manager, at creation or start-up) is LEADER_NOT_AVAILABLE, which
// clients retry.
import type { BrokerContext } from '../broker-context.js';
import { ErrorCode } from '../protocol/errors.js';
import type { TopicRecord } from '../../metadata/topics.js';

export interface PartitionMetadata {
  errorCode: number;
  partitionIndex: number;
  leaderId: number;
  leaderEpoch: number;
  replicaNodes: number[];
  isrNodes: number[];
  offlineReplicas: number[];
}

export type PartitionMetadataSource = Pick<BrokerContext, 'nodeId' | 'topics'>;

export function partitionMetadata(broker: PartitionMetadataSource, topic: string, partitionIndex: number): PartitionMetadata {
  const p = broker.topics.partition(topic, partitionIndex);
  return {
    errorCode: p === undefined ? ErrorCode.LEADER_NOT_AVAILABLE : ErrorCode.NONE,
    partitionIndex,
    leaderId: broker.nodeId,
    leaderEpoch: p?.leaderEpoch ?? 0,
    replicaNodes: [broker.nodeId],
    isrNodes: [broker.nodeId],
    offlineReplicas: [],
  };
}

/** The topic-level fields both APIs share. */
export interface TopicMetadata {
  name: string;
  topicId: string;
  isInternal: boolean;
}

export function topicMetadata(broker: PartitionMetadataSource, t: TopicRecord): TopicMetadata {
  return { name: t.name, topicId: t.topicId, isInternal: broker.topics.isInternal(t.name) };
}
