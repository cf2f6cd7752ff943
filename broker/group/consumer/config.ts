// KIP-848 consumer group settings, with Kafka's broker config names, defaults
// and bounds (GroupCoordinatorConfig).

export type MigrationPolicy = 'bidirectional' | 'upgrade' | 'downgrade' | 'disabled';

export interface ConsumerGroupConfig {
  /** group.consumer.session.timeout.ms */
  readonly sessionTimeoutMs: number;
  /** group.consumer.min.session.timeout.ms / max */
  readonly minSessionTimeoutMs: number;
  readonly maxSessionTimeoutMs: number;
  /** group.consumer.heartbeat.interval.ms */
  readonly heartbeatIntervalMs: number;
  /** group.consumer.min.heartbeat.interval.ms / max */
  readonly minHeartbeatIntervalMs: number;
  readonly maxHeartbeatIntervalMs: number;
  /** group.consumer.assignors, as short names; the first is the default. */
  readonly assignors: readonly string[];
  /** group.consumer.max.size */
  readonly maxSize: number;
  /** group.consumer.migration.policy */
  readonly migrationPolicy: MigrationPolicy;
}

export const defaultConsumerGroupConfig: ConsumerGroupConfig = {
  sessionTimeoutMs: 45_000,
  minSessionTimeoutMs: 45_000,
  maxSessionTimeoutMs: 60_000,
  heartbeatIntervalMs: 5_000,
  minHeartbeatIntervalMs: 5_000,
  maxHeartbeatIntervalMs: 15_000,
  assignors: ['uniform', 'range'],
  maxSize: 2_147_483_647,
  migrationPolicy: 'bidirectional',
};

/** Kafka's start-up checks of these settings; a message per violation. */
export function consumerGroupConfigErrors(c: ConsumerGroupConfig): string[] {
  const errors: string[] = [];
  if (c.sessionTimeoutMs < c.minSessionTimeoutMs || c.sessionTimeoutMs > c.maxSessionTimeoutMs) {
    errors.push('group.consumer.session.timeout.ms must be between group.consumer.min.session.timeout.ms and group.consumer.max.session.timeout.ms');
  }
  if (c.heartbeatIntervalMs < c.minHeartbeatIntervalMs || c.heartbeatIntervalMs > c.maxHeartbeatIntervalMs) {
    errors.push('group.consumer.heartbeat.interval.ms must be between group.consumer.min.heartbeat.interval.ms and group.consumer.max.heartbeat.interval.ms');
  }
  if (c.heartbeatIntervalMs >= c.sessionTimeoutMs) {
    errors.push('group.consumer.heartbeat.interval.ms must be less than group.consumer.session.timeout.ms');
  }
  if (c.assignors.length === 0) errors.push('group.consumer.assignors must name at least one assignor');
  return errors;
}
