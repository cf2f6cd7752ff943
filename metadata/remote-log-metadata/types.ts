// The remote log metadata domain: what the `__remote_log_metadata` topic
// records about each remote segment, in Kafka's vocabulary (KIP-405). Pure data.

/** A partition of a topic, identified by its topic id as well as its name. */
export interface TopicIdPartition {
  /** Kafka Uuid in its string form: 16 bytes, base64url without padding (22 chars). */
  readonly topicId: string;
  readonly topic: string;
  readonly partition: number;
}

export interface RemoteLogSegmentId {
  readonly topicIdPartition: TopicIdPartition;
  /** Kafka Uuid in its string form (base64url, 22 chars). */
  readonly id: string;
}

/** Kafka's RemoteLogSegmentState; the wire ids are 0..3 in this order. */
export type RemoteLogSegmentState =
  | 'COPY_SEGMENT_STARTED'
  | 'COPY_SEGMENT_FINISHED'
  | 'DELETE_SEGMENT_STARTED'
  | 'DELETE_SEGMENT_FINISHED';

/** Kafka's RemotePartitionDeleteState; the wire ids are 0..2 in this order. */
export type RemotePartitionDeleteState =
  | 'DELETE_PARTITION_MARKED'
  | 'DELETE_PARTITION_STARTED'
  | 'DELETE_PARTITION_FINISHED';

/** The first offset written under `leaderEpoch` within one segment. */
export interface SegmentLeaderEpoch {
  readonly leaderEpoch: number;
  readonly startOffset: bigint;
}

export interface RemoteLogSegmentMetadata {
  readonly remoteLogSegmentId: RemoteLogSegmentId;
  readonly startOffset: bigint;
  /** Inclusive: the last offset held by the segment. */
  readonly endOffset: bigint;
  /** Broker that generated the latest event for this segment. */
  readonly brokerId: number;
  readonly maxTimestampMs: number;
  /** When the latest event for this segment was generated. */
  readonly eventTimestampMs: number;
  /** Sorted by leaderEpoch ascending, with non-decreasing start offsets; never empty. */
  readonly segmentLeaderEpochs: readonly SegmentLeaderEpoch[];
  readonly segmentSizeInBytes: number;
  readonly customMetadata?: Buffer;
  readonly state: RemoteLogSegmentState;
  /** True when the segment has no aborted transactions (no transaction index to read). */
  readonly txnIndexEmpty: boolean;
}

export interface RemoteLogSegmentMetadataUpdate {
  readonly remoteLogSegmentId: RemoteLogSegmentId;
  readonly brokerId: number;
  readonly eventTimestampMs: number;
  /** Replaces the segment's custom metadata (absent clears it), as Kafka's createWithUpdates does. */
  readonly customMetadata?: Buffer;
  /** Never COPY_SEGMENT_STARTED: that state is only reachable by adding a segment. */
  readonly state: RemoteLogSegmentState;
}

export interface RemotePartitionDeleteMetadata {
  readonly topicIdPartition: TopicIdPartition;
  readonly state: RemotePartitionDeleteState;
  readonly brokerId: number;
  readonly eventTimestampMs: number;
}

/**
 * Kafka's RemoteLogSegmentMetadataSnapshot: a segment without its partition, as
 * written to per-partition snapshot files. Never written to the topic by Kafka;
 * decoded here so that such a record is recognised rather than reported as garbage.
 */
export interface RemoteLogSegmentMetadataSnapshot {
  readonly segmentId: string;
  readonly startOffset: bigint;
  readonly endOffset: bigint;
  readonly brokerId: number;
  readonly maxTimestampMs: number;
  readonly eventTimestampMs: number;
  readonly segmentLeaderEpochs: readonly SegmentLeaderEpoch[];
  readonly segmentSizeInBytes: number;
  readonly customMetadata?: Buffer;
  readonly state: RemoteLogSegmentState;
  readonly txnIndexEmpty: boolean;
}

/** One record of the `__remote_log_metadata` topic. */
export type RemoteLogMetadataEvent =
  | { readonly type: 'segment'; readonly metadata: RemoteLogSegmentMetadata }
  | { readonly type: 'segmentUpdate'; readonly update: RemoteLogSegmentMetadataUpdate }
  | { readonly type: 'partitionDelete'; readonly delete: RemotePartitionDeleteMetadata }
  | { readonly type: 'segmentSnapshot'; readonly snapshot: RemoteLogSegmentMetadataSnapshot };

export const REMOTE_LOG_SEGMENT_STATES: readonly RemoteLogSegmentState[] = [
  'COPY_SEGMENT_STARTED',
  'COPY_SEGMENT_FINISHED',
  'DELETE_SEGMENT_STARTED',
  'DELETE_SEGMENT_FINISHED',
];

export const REMOTE_PARTITION_DELETE_STATES: readonly RemotePartitionDeleteState[] = [
  'DELETE_PARTITION_MARKED',
  'DELETE_PARTITION_STARTED',
  'DELETE_PARTITION_FINISHED',
];

/** Kafka's RemoteLogSegmentState.id(). */
export function segmentStateId(state: RemoteLogSegmentState): number {
  switch (state) {
    case 'COPY_SEGMENT_STARTED':
      return 0;
    case 'COPY_SEGMENT_FINISHED':
      return 1;
    case 'DELETE_SEGMENT_STARTED':
      return 2;
    case 'DELETE_SEGMENT_FINISHED':
      return 3;
  }
}

/** Kafka's RemoteLogSegmentState.forId(); undefined for an unknown id. */
export function segmentStateForId(id: number): RemoteLogSegmentState | undefined {
  return REMOTE_LOG_SEGMENT_STATES[id];
}

/** Kafka's RemotePartitionDeleteState.id(). */
export function partitionDeleteStateId(state: RemotePartitionDeleteState): number {
  switch (state) {
    case 'DELETE_PARTITION_MARKED':
      return 0;
    case 'DELETE_PARTITION_STARTED':
      return 1;
    case 'DELETE_PARTITION_FINISHED':
      return 2;
  }
}

export function partitionDeleteStateForId(id: number): RemotePartitionDeleteState | undefined {
  return REMOTE_PARTITION_DELETE_STATES[id];
}

/** A map key for a TopicIdPartition: the topic id decides, the name is informative. */
export function topicIdPartitionKey(tp: TopicIdPartition): string {
  return `${tp.topicId}:${tp.partition}`;
}

/** Kafka's TopicIdPartition.toString(): `topicId:topic-partition`. */
export function formatTopicIdPartition(tp: TopicIdPartition): string {
  return `${tp.topicId}:${tp.topic}-${tp.partition}`;
}
