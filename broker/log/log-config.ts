// Topic-level log configuration, Kafka's names camelCased, with Kafka's defaults.

export type TimestampType = 'CreateTime' | 'LogAppendTime';

export interface LogConfig {
  /** segment.bytes */
  segmentBytes: number;
  /** segment.ms */
  segmentMs: number;
  /** retention.ms; -1 = unlimited */
  retentionMs: number;
  /** retention.bytes; -1 = unlimited */
  retentionBytes: number;
  /** index.interval.bytes */
  indexIntervalBytes: number;
  /** max.message.bytes (one batch) */
  maxMessageBytes: number;
  /** flush.messages: fsync after this many unflushed messages */
  flushIntervalMessages: number;
  /** flush.ms: fsync when the oldest unflushed append is this old (checked by LogManager) */
  flushIntervalMs: number;
  /** message.timestamp.type */
  messageTimestampType: TimestampType;
  /** segment.index.bytes: size cap of each sparse index */
  segmentIndexBytes: number;
  /** message.timestamp.before.max.ms (CreateTime only) */
  messageTimestampBeforeMaxMs?: number;
  /** message.timestamp.after.max.ms (CreateTime only) */
  messageTimestampAfterMaxMs?: number;
  /** producer.id.expiration.ms (broker-level in Kafka) */
  producerIdExpirationMs?: number;
  /**
   * How deep appends look into batches (Sediment-specific): 'header' (framing,
   * CRC, counts), 'records' (also walks uncompressed records without copying;
   * the default), 'deep' (also decompresses, as Kafka's LogValidator does).
   */
  validationLevel?: 'header' | 'records' | 'deep';
  /**
   * remote.storage.enable: the partition is tiered. Local retention then bounds
   * the local tier with local.retention.* (retention.* bound local + remote and are
   * applied by the RemoteLogManager), and the tiering veto keeps segments that are
   * not yet remote.
   */
  remoteStorageEnable?: boolean;
  /** remote.log.copy.disable */
  remoteLogCopyDisable?: boolean;
  /** remote.log.delete.on.disable */
  remoteLogDeleteOnDisable?: boolean;
  /** local.retention.ms; -2 (or absent) = retention.ms */
  localRetentionMs?: number;
  /** local.retention.bytes; -2 (or absent) = retention.bytes */
  localRetentionBytes?: number;
  /** cleanup.policy (absent = delete only). Without delete, retention.ms/bytes remove nothing; compact enables the log cleaner. */
  cleanupPolicy?: { delete: boolean; compact: boolean };
  /** delete.retention.ms: how long tombstones and transaction markers outlive the clean that first saw them. */
  deleteRetentionMs?: number;
  /** min.cleanable.dirty.ratio */
  minCleanableDirtyRatio?: number;
  /** min.compaction.lag.ms */
  minCompactionLagMs?: number;
  /** max.compaction.lag.ms */
  maxCompactionLagMs?: number;
}

const LONG_MAX_AS_NUMBER = Number.MAX_SAFE_INTEGER;

export const defaultLogConfig: Readonly<LogConfig> = Object.freeze({
  segmentBytes: 1024 * 1024 * 1024,
  segmentMs: 7 * 24 * 60 * 60 * 1000,
  retentionMs: 7 * 24 * 60 * 60 * 1000,
  retentionBytes: -1,
  indexIntervalBytes: 4096,
  maxMessageBytes: 1024 * 1024 + 12,
  flushIntervalMessages: LONG_MAX_AS_NUMBER,
  flushIntervalMs: LONG_MAX_AS_NUMBER,
  messageTimestampType: 'CreateTime',
  segmentIndexBytes: 10 * 1024 * 1024,
  messageTimestampBeforeMaxMs: LONG_MAX_AS_NUMBER,
  messageTimestampAfterMaxMs: LONG_MAX_AS_NUMBER,
  producerIdExpirationMs: 86_400_000,
});

export function logConfig(overrides: Partial<LogConfig> = {}): LogConfig {
  return { ...defaultLogConfig, ...overrides };
}
