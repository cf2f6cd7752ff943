// Topic configuration: overrides resolved against the broker's defaults (Kafka's
// LogConfig.fromProps over KafkaConfig.extractLogConfigMap), the validation
// CreateTopics/AlterConfigs run (LogConfig.validate, including the tiered storage
// rules), and the mapping to the log layer's LogConfig (broker/log/log-config.ts).
//
// Sediment's one derived default: remote.storage.enable is true for a new topic
// when the broker has tiered storage on, the topic's cleanup.policy is exactly
// "delete" and the topic is not internal (`__*`); false otherwise. An explicit
// remote.storage.enable=true is still refused on a compacted topic.
import type { LogConfig } from './log-config.js';
import { ErrorCode, KafkaError } from '../broker/protocol/errors.js';
import type { TopicCompression, TopicCompressionType } from '../broker/protocol/recompress.js';
import { topicConfigDef, TOPIC_CONFIG_DEFS } from './config-defs.js';
import {
  ConfigError,
  formatConfigValue,
  parseConfigValue,
  type ConfigSourceCode,
  type ConfigValue,
  type TopicConfigDef,
} from './config-schema.js';
import { ConfigSource } from './config-schema.js';

/** What topic resolution needs from the broker config (BrokerConfig implements it). */
export interface BrokerDefaults {
  /** Parsed value of a broker key, its default when unset (null: no default). */
  get(name: string): ConfigValue;
  /** True when the key was set in server.properties or with --override. */
  isSet(name: string): boolean;
  /** Where a key's value comes from, when there are dynamic layers (a cluster); absent: STATIC_BROKER_CONFIG when set, else DEFAULT_CONFIG. */
  sourceOf?(name: string): ConfigSourceCode;
  readonly remoteLogStorageSystemEnable: boolean;
}

/** Topic overrides as stored: key -> Kafka's string form of the value. */
export type TopicOverrides = Readonly<Record<string, string>>;

export interface TopicConfigOptions {
  /** Internal topics (`__consumer_offsets`, `__remote_log_metadata`...) are never tiered by default. */
  readonly topicName?: string;
}

export interface ResolvedTopicConfigEntry {
  readonly def: TopicConfigDef;
  readonly value: ConfigValue;
  readonly source: ConfigSourceCode;
  /** Where the value came from: the override key, a broker key, or the table default. */
  readonly sourceKey: string | null;
}

/** A topic's effective configuration: every topic key, resolved. */
export class EffectiveTopicConfig {
  constructor(
    readonly overrides: TopicOverrides,
    private readonly entries: ReadonlyMap<string, ResolvedTopicConfigEntry>,
  ) {}

  entry(name: string): ResolvedTopicConfigEntry {
    const e = this.entries.get(name);
    if (e === undefined) throw new Error(`unknown topic config ${name}`);
    return e;
  }

  get(name: string): ConfigValue {
    return this.entry(name).value;
  }

  number(name: string): number {
    const v = this.get(name);
    if (typeof v !== 'number') throw new Error(`topic config ${name} is not a number`);
    return v;
  }

  boolean(name: string): boolean {
    const v = this.get(name);
    if (typeof v !== 'boolean') throw new Error(`topic config ${name} is not a boolean`);
    return v;
  }

  list(name: string): readonly string[] {
    const v = this.get(name);
    return Array.isArray(v) ? v : [];
  }

  string(name: string): string {
    const v = this.get(name);
    return typeof v === 'string' ? v : String(v);
  }

  /** The value as DescribeConfigs renders it. */
  valueString(name: string): string | null {
    const e = this.entry(name);
    return formatConfigValue(e.def.type, e.value);
  }

  /** All entries in table order (internal keys included). */
  all(): IterableIterator<ResolvedTopicConfigEntry> {
    return this.entries.values();
  }
}

export function isInternalTopicName(name: string): boolean {
  return name.startsWith('__');
}

/**
 * Resolves every topic key: the override if present, else the first broker
 * synonym that has a value (set, or its own default) converted to the topic
 * unit, else the table default. Overrides must already be valid (see
 * validateTopicOverrides); a bad stored value throws a ConfigError.
 */
export function effectiveTopicConfig(
  broker: BrokerDefaults,
  overrides: TopicOverrides,
  options: TopicConfigOptions = {},
): EffectiveTopicConfig {
  const entries = new Map<string, ResolvedTopicConfigEntry>();
  const deferred: TopicConfigDef[] = [];
  for (const def of TOPIC_CONFIG_DEFS) {
    const raw = overrides[def.name];
    if (raw !== undefined) {
      entries.set(def.name, { def, value: parseConfigValue(def, raw), source: ConfigSource.DYNAMIC_TOPIC_CONFIG, sourceKey: def.name });
    } else if (def.name === 'remote.storage.enable') {
      deferred.push(def);
    } else {
      entries.set(def.name, inherited(broker, def));
    }
  }
  for (const def of deferred) {
    const policy = entries.get('cleanup.policy')?.value;
    const deleteOnly = Array.isArray(policy) && policy.length === 1 && policy[0] === 'delete';
    const tiered = broker.remoteLogStorageSystemEnable && deleteOnly && !isInternalTopicName(options.topicName ?? '');
    entries.set(def.name, { def, value: tiered, source: ConfigSource.DEFAULT_CONFIG, sourceKey: null });
  }
  return new EffectiveTopicConfig({ ...overrides }, entries);
}

function inherited(broker: BrokerDefaults, def: TopicConfigDef): ResolvedTopicConfigEntry {
  for (const s of def.synonyms) {
    const v = broker.get(s.name);
    if (v === null) continue;
    let value: ConfigValue = typeof v === 'number' && s.factor !== undefined ? v * s.factor : v;
    // KafkaConfig.logRetentionTimeMillis: any negative retention means unlimited.
    if (def.name === 'retention.ms' && typeof value === 'number' && value < 0) value = -1;
    const source = broker.sourceOf?.(s.name) ?? (broker.isSet(s.name) ? ConfigSource.STATIC_BROKER_CONFIG : ConfigSource.DEFAULT_CONFIG);
    return { def, value, source, sourceKey: s.name };
  }
  return { def, value: def.default, source: ConfigSource.DEFAULT_CONFIG, sourceKey: null };
}

// ---- validation ----

/** Kafka stores config values in records with int16 lengths. */
const MAX_CONFIG_VALUE_LENGTH = 32767;

function invalidConfig(message: string, cause?: unknown): KafkaError {
  return new KafkaError(ErrorCode.INVALID_CONFIG, message, cause === undefined ? undefined : { cause });
}

/**
 * Checks a complete set of topic overrides as CreateTopics / AlterConfigs do and
 * returns them normalized to Kafka's string forms. Throws KafkaError
 * INVALID_CONFIG (40) naming the key. `previous` (the overrides in force before
 * an alter) enables the rule on turning remote storage off; omit it at creation.
 */
export function validateTopicOverrides(
  broker: BrokerDefaults,
  overrides: Readonly<Record<string, string | null>>,
  options: TopicConfigOptions & { previous?: TopicOverrides } = {},
): TopicOverrides {
  const normalized: Record<string, string> = {};
  const nulls = Object.keys(overrides).filter((k) => overrides[k] === null);
  if (nulls.length > 0) throw invalidConfig(`Null value not supported for topic configs: ${nulls.join(',')}`);
  for (const [key, raw] of Object.entries(overrides)) {
    const def = topicConfigDef(key);
    if (def === undefined) throw invalidConfig(`Unknown topic config name: ${key}`);
    if ((raw as string).length > MAX_CONFIG_VALUE_LENGTH) {
      throw invalidConfig(`The configuration value of ${key} cannot be added because it exceeds the maximum value size of ${MAX_CONFIG_VALUE_LENGTH} bytes.`);
    }
    try {
      normalized[key] = formatConfigValue(def.type, parseConfigValue(def, raw as string)) ?? '';
    } catch (err) {
      if (err instanceof ConfigError) throw invalidConfig(err.message, err);
      throw err;
    }
  }
  const config = effectiveTopicConfig(broker, normalized, options);
  validateValues(config);
  const tiered = config.boolean('remote.storage.enable');
  if (tiered) {
    validateTiering(broker, config);
  } else if (options.previous !== undefined) {
    const before = effectiveTopicConfig(broker, options.previous, options);
    if (before.boolean('remote.storage.enable') && !config.boolean('remote.log.delete.on.disable')) {
      if (normalized['remote.storage.enable'] === undefined && config.list('cleanup.policy').includes('compact')) {
        throw invalidConfig('cleanup.policy=compact cannot be set on a topic in remote storage (remote.storage.enable=true): remote log storage only supports cleanup.policy=delete.');
      }
      throw invalidConfig(
        'It is invalid to disable remote storage without deleting remote data. If you want to keep the remote data and turn to read only, ' +
          'set remote.storage.enable=true,remote.log.copy.disable=true. If you want to disable remote storage and delete all remote data, ' +
          'set remote.storage.enable=false,remote.log.delete.on.disable=true.',
      );
    }
  }
  return normalized;
}

function validateValues(config: EffectiveTopicConfig): void {
  const minLag = config.number('min.compaction.lag.ms');
  const maxLag = config.number('max.compaction.lag.ms');
  if (minLag > maxLag) {
    throw invalidConfig(`conflict topic config setting min.compaction.lag.ms (${minLag}) > max.compaction.lag.ms (${maxLag})`);
  }
}

function validateTiering(broker: BrokerDefaults, config: EffectiveTopicConfig): void {
  if (!broker.remoteLogStorageSystemEnable) {
    throw invalidConfig('Tiered Storage functionality is disabled in the broker (remote.log.storage.system.enable=false). Topic cannot be configured with remote.storage.enable=true.');
  }
  const policy = config.list('cleanup.policy');
  if (policy.length > 0 && (policy.length !== 1 || policy[0] !== 'delete')) {
    throw invalidConfig(`Remote log storage only supports topics with cleanup.policy=delete or cleanup.policy being an empty list (got cleanup.policy=${policy.join(',')} with remote.storage.enable=true).`);
  }
  checkLocalRetention('local.retention.bytes', config.number('local.retention.bytes'), 'retention.bytes', config.number('retention.bytes'));
  checkLocalRetention('local.retention.ms', config.number('local.retention.ms'), 'retention.ms', config.number('retention.ms'));
  if (config.boolean('remote.log.copy.disable')) {
    const lb = config.number('local.retention.bytes');
    if (lb !== -2 && lb !== config.number('retention.bytes')) {
      throw invalidConfig('When remote.log.copy.disable is set to true, local.retention.bytes and retention.bytes must be set to the identical value because there will be no more logs copied to the remote storage.');
    }
    const lm = config.number('local.retention.ms');
    if (lm !== -2 && lm !== config.number('retention.ms')) {
      throw invalidConfig('When remote.log.copy.disable is set to true, local.retention.ms and retention.ms must be set to the identical value because there will be no more logs copied to the remote storage.');
    }
  }
}

function checkLocalRetention(localKey: string, local: number, totalKey: string, total: number): void {
  // Kafka: retention.bytes > -1 / retention.ms != -1 bound the local tier.
  if (total < 0 || local === -2) return;
  if (local === -1) {
    throw invalidConfig(`Invalid value -1 for configuration ${localKey}: Value must not be -1 as ${totalKey} value is set as ${total}.`);
  }
  if (local > total) {
    throw invalidConfig(`Invalid value ${local} for configuration ${localKey}: Value must not be more than ${totalKey} property value: ${total}`);
  }
}

// ---- the log layer's view (broker/log/log-config.ts owns the shape) ----

export function toLogConfig(config: EffectiveTopicConfig, producerIdExpirationMs?: number): LogConfig {
  const retentionMs = config.number('retention.ms');
  const retentionBytes = config.number('retention.bytes');
  const localMs = config.number('local.retention.ms');
  const localBytes = config.number('local.retention.bytes');
  const internalSegmentBytes = config.get('internal.segment.bytes');
  const policy = config.list('cleanup.policy').map((p) => p.toLowerCase());
  return {
    segmentBytes: typeof internalSegmentBytes === 'number' ? internalSegmentBytes : config.number('segment.bytes'),
    segmentMs: config.number('segment.ms'),
    segmentJitterMs: config.number('segment.jitter.ms'),
    retentionMs,
    retentionBytes,
    localRetentionMs: localMs === -2 ? retentionMs : localMs,
    localRetentionBytes: localBytes === -2 ? retentionBytes : localBytes,
    indexIntervalBytes: config.number('index.interval.bytes'),
    segmentIndexBytes: config.number('segment.index.bytes'),
    maxMessageBytes: config.number('max.message.bytes'),
    flushIntervalMessages: config.number('flush.messages'),
    flushIntervalMs: config.number('flush.ms'),
    fileDeleteDelayMs: config.number('file.delete.delay.ms'),
    messageTimestampType: config.string('message.timestamp.type') === 'LogAppendTime' ? 'LogAppendTime' : 'CreateTime',
    messageTimestampBeforeMaxMs: config.number('message.timestamp.before.max.ms'),
    messageTimestampAfterMaxMs: config.number('message.timestamp.after.max.ms'),
    cleanupPolicy: { delete: policy.includes('delete'), compact: policy.includes('compact') },
    remoteStorageEnable: config.boolean('remote.storage.enable'),
    remoteLogCopyDisable: config.boolean('remote.log.copy.disable'),
    remoteLogDeleteOnDisable: config.boolean('remote.log.delete.on.disable'),
    deleteRetentionMs: config.number('delete.retention.ms'),
    minCleanableDirtyRatio: config.number('min.cleanable.dirty.ratio'),
    minCompactionLagMs: config.number('min.compaction.lag.ms'),
    maxCompactionLagMs: config.number('max.compaction.lag.ms'),
    minInSyncReplicas: config.number('min.insync.replicas'),
    compression: topicCompression(config),
    producerIdExpirationMs,
  };
}

/** compression.type and its levels; Kafka's "uncompressed" is the codec 'none'. */
function topicCompression(config: EffectiveTopicConfig): TopicCompression {
  const name = config.string('compression.type');
  const type: TopicCompressionType =
    name === 'uncompressed' ? 'none' : name === 'gzip' || name === 'snappy' || name === 'lz4' || name === 'zstd' ? name : 'producer';
  return { type, gzipLevel: config.number('compression.gzip.level'), zstdLevel: config.number('compression.zstd.level') };
}

/** Broker defaults + overrides -> LogConfig, with the broker-level producer id expiration. */
export function logConfigFor(broker: BrokerDefaults, overrides: TopicOverrides, options: TopicConfigOptions = {}): LogConfig {
  const expiration = broker.get('producer.id.expiration.ms');
  return toLogConfig(effectiveTopicConfig(broker, overrides, options), typeof expiration === 'number' ? expiration : undefined);
}
