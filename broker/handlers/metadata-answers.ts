// What Metadata (3) and DescribeTopicPartitions (75) say about one partition and
// one topic. Both answers are built here so the two APIs never disagree about a
// leader, its epoch, the replicas or the ISR.
//
// As a single broker, it leads every partition: replicas and ISR are this
// node, nothing is offline. A partition whose log is not open yet (between the
// topic store and the log manager, at creation or start-up) is
// LEADER_NOT_AVAILABLE, which clients retry. In a cluster (broker.cluster set),
// a cluster topic's partitions are answered from the image: leader (-1 and
// LEADER_NOT_AVAILABLE while offline), leader epoch, replicas, ISR and the
// replicas whose brokers are not registered.
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

export type PartitionMetadataSource = Pick<BrokerContext, 'nodeId' | 'topics' | 'cluster'>;

export function partitionMetadata(broker: PartitionMetadataSource, topic: string, partitionIndex: number): PartitionMetadata {
  const state = broker.cluster?.partition(topic, partitionIndex);
  if (state !== undefined && broker.cluster !== undefined && broker.cluster !== null) {
    return {
      errorCode: state.leader === -1 ? ErrorCode.LEADER_NOT_AVAILABLE : ErrorCode.NONE,
      partitionIndex,
      leaderId: state.leader,
      leaderEpoch: state.leaderEpoch,
      replicaNodes: [...state.replicas],
      isrNodes: [...state.isr],
      offlineReplicas: broker.cluster.offlineReplicas(state),
    };
  }
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
