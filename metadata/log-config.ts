// What a partition log needs from its topic's configuration: Kafka's topic keys
// camelCased, numbers in ms/bytes, -1 = unlimited. The one definition of the
// shape: metadata/topic-config.ts resolves a topic's overrides into it
// (toLogConfig), and logConfig() builds one from Kafka's defaults for code that
// has no topic behind it (tools, tests). Optional fields have a documented
// meaning when absent, which the log applies.

import type { TopicCompression } from '../broker/protocol/recompress.js';

export type TimestampType = 'CreateTime' | 'LogAppendTime';

export interface LogConfig {
  /** segment.bytes */
  readonly segmentBytes: number;
  /** segment.ms */
  readonly segmentMs: number;
  /** segment.jitter.ms */
  readonly segmentJitterMs: number;
  /** retention.ms; -1 = unlimited */
  readonly retentionMs: number;
  /** retention.bytes; -1 = unlimited */
  readonly retentionBytes: number;
  /** index.interval.bytes */
  readonly indexIntervalBytes: number;
  /** segment.index.bytes: size cap of each sparse index */
  readonly segmentIndexBytes: number;
  /** max.message.bytes (one batch) */
  readonly maxMessageBytes: number;
  /** flush.messages: fsync after this many unflushed messages */
  readonly flushIntervalMessages: number;
  /** flush.ms: fsync when the oldest unflushed append is this old (checked by LogManager) */
  readonly flushIntervalMs: number;
  /** file.delete.delay.ms */
  readonly fileDeleteDelayMs: number;
  /** message.timestamp.type */
  readonly messageTimestampType: TimestampType;
  /** message.timestamp.before.max.ms (CreateTime only) */
  readonly messageTimestampBeforeMaxMs?: number;
  /** message.timestamp.after.max.ms (CreateTime only) */
  readonly messageTimestampAfterMaxMs?: number;
  /** min.insync.replicas */
  readonly minInSyncReplicas: number;
  /**
   * compression.type (with compression.gzip.level / compression.zstd.level);
   * absent = producer: batches are stored in the codec they came in.
   */
  readonly compression?: TopicCompression;
  /** producer.id.expiration.ms (broker-level in Kafka; metadata's logConfigFor sets it) */
  readonly producerIdExpirationMs?: number;
  /**
   * How deep appends look into batches (Sediment-specific): 'header' (framing,
   * CRC, counts), 'records' (also walks uncompressed records without copying;
   * the default), 'deep' (also decompresses, as Kafka's LogValidator does).
   */
  readonly validationLevel?: 'header' | 'records' | 'deep';
  /**
   * remote.storage.enable: the partition is tiered. Local retention then bounds
   * the local tier with local.retention.* (retention.* bound local + remote and are
   * applied by the RemoteLogManager), and the tiering veto keeps segments that are
   * not yet remote.
   */
  readonly remoteStorageEnable?: boolean;
  /** remote.log.copy.disable */
  readonly remoteLogCopyDisable?: boolean;
  /** remote.log.delete.on.disable */
  readonly remoteLogDeleteOnDisable?: boolean;
  /** local.retention.ms; -2 (or absent) = retention.ms (toLogConfig resolves -2) */
  readonly localRetentionMs?: number;
  /** local.retention.bytes; -2 (or absent) = retention.bytes (toLogConfig resolves -2) */
  readonly localRetentionBytes?: number;
  /** cleanup.policy (absent = delete only). Without delete, retention.ms/bytes remove nothing; compact enables the log cleaner. */
  readonly cleanupPolicy?: { readonly delete: boolean; readonly compact: boolean };
  /** delete.retention.ms: how long tombstones and transaction markers outlive the clean that first saw them. */
  readonly deleteRetentionMs?: number;
  /** min.cleanable.dirty.ratio */
  readonly minCleanableDirtyRatio?: number;
  /** min.compaction.lag.ms */
  readonly minCompactionLagMs?: number;
  /** max.compaction.lag.ms */
  readonly maxCompactionLagMs?: number;
}

const LONG_MAX_AS_NUMBER = Number.MAX_SAFE_INTEGER;

export const defaultLogConfig: Readonly<LogConfig> = Object.freeze({
  segmentBytes: 1024 * 1024 * 1024,
  segmentMs: 7 * 24 * 60 * 60 * 1000,
  segmentJitterMs: 0,
  retentionMs: 7 * 24 * 60 * 60 * 1000,
  retentionBytes: -1,
  indexIntervalBytes: 4096,
  maxMessageBytes: 1024 * 1024 + 12,
  flushIntervalMessages: LONG_MAX_AS_NUMBER,
  flushIntervalMs: LONG_MAX_AS_NUMBER,
  fileDeleteDelayMs: 60_000,
  messageTimestampType: 'CreateTime',
  segmentIndexBytes: 10 * 1024 * 1024,
  messageTimestampBeforeMaxMs: LONG_MAX_AS_NUMBER,
  messageTimestampAfterMaxMs: LONG_MAX_AS_NUMBER,
  minInSyncReplicas: 1,
  producerIdExpirationMs: 86_400_000,
});

export function logConfig(overrides: Partial<LogConfig> = {}): LogConfig {
  return { ...defaultLogConfig, ...overrides };
}
