// The coordinator's settings, with Kafka's broker config names and defaults.

export interface GroupCoordinatorConfig {
  /** offsets.topic.num.partitions */
  readonly offsetsTopicNumPartitions: number;
  /** group.min.session.timeout.ms */
  readonly groupMinSessionTimeoutMs: number;
  /** group.max.session.timeout.ms */
  readonly groupMaxSessionTimeoutMs: number;
  /** group.initial.rebalance.delay.ms */
  readonly groupInitialRebalanceDelayMs: number;
  /** group.max.size */
  readonly groupMaxSize: number;
  /** offsets.retention.minutes, in ms */
  readonly offsetsRetentionMs: number;
  /** offsets.retention.check.interval.ms */
  readonly offsetsRetentionCheckIntervalMs: number;
  /** offset.metadata.max.bytes (Kafka compares the string length) */
  readonly offsetMetadataMaxBytes: number;
  /** How long a new member may wait in JoinGroup before it is dropped (Kafka: 5 minutes). */
  readonly newMemberJoinTimeoutMs: number;
}

export const defaultGroupCoordinatorConfig: GroupCoordinatorConfig = {
  offsetsTopicNumPartitions: 50,
  groupMinSessionTimeoutMs: 6_000,
  groupMaxSessionTimeoutMs: 1_800_000,
  groupInitialRebalanceDelayMs: 3_000,
  groupMaxSize: 2_147_483_647,
  offsetsRetentionMs: 10_080 * 60_000,
  offsetsRetentionCheckIntervalMs: 600_000,
  offsetMetadataMaxBytes: 4_096,
  newMemberJoinTimeoutMs: 300_000,
};
