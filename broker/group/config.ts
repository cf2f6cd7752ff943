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

/** Reads Kafka-named properties (as strings or numbers) over the defaults. */
export function groupCoordinatorConfigFrom(props: Readonly<Record<string, string | number | undefined>>): GroupCoordinatorConfig {
  const num = (name: string, fallback: number): number => {
    const v = props[name];
    if (v === undefined) return fallback;
    const n = typeof v === 'number' ? v : Number(v);
    if (!Number.isFinite(n)) throw new Error(`Invalid value for ${name}: ${String(v)}`);
    return n;
  };
  const d = defaultGroupCoordinatorConfig;
  const config: GroupCoordinatorConfig = {
    offsetsTopicNumPartitions: num('offsets.topic.num.partitions', d.offsetsTopicNumPartitions),
    groupMinSessionTimeoutMs: num('group.min.session.timeout.ms', d.groupMinSessionTimeoutMs),
    groupMaxSessionTimeoutMs: num('group.max.session.timeout.ms', d.groupMaxSessionTimeoutMs),
    groupInitialRebalanceDelayMs: num('group.initial.rebalance.delay.ms', d.groupInitialRebalanceDelayMs),
    groupMaxSize: num('group.max.size', d.groupMaxSize),
    offsetsRetentionMs: num('offsets.retention.minutes', d.offsetsRetentionMs / 60_000) * 60_000,
    offsetsRetentionCheckIntervalMs: num('offsets.retention.check.interval.ms', d.offsetsRetentionCheckIntervalMs),
    offsetMetadataMaxBytes: num('offset.metadata.max.bytes', d.offsetMetadataMaxBytes),
    newMemberJoinTimeoutMs: d.newMemberJoinTimeoutMs,
  };
  if (config.offsetsTopicNumPartitions < 1) throw new Error('offsets.topic.num.partitions must be at least 1');
  if (config.groupMinSessionTimeoutMs > config.groupMaxSessionTimeoutMs) {
    throw new Error('group.min.session.timeout.ms must not exceed group.max.session.timeout.ms');
  }
  return config;
}
