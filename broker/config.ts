// The broker's typed configuration: server.properties plus `--override key=value`,
// checked against the key table in metadata/config-defs.ts. An unknown key or a
// bad value throws a ConfigError naming the key; start-up prints it and exits.
// Derived values follow Kafka's KafkaConfig: log.retention.ms <- .minutes <-
// .hours, log.roll.ms <- .hours, log.flush.interval.ms <- log.flush.scheduler.interval.ms,
// log.dirs <- log.dir.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  brokerConfigDef,
  BROKER_CONFIG_DEFS,
  RLMM_CONFIG_PREFIX,
  RSM_CONFIG_PREFIX,
  topicConfigDef,
} from '../metadata/config-defs.js';
import {
  ConfigError,
  formatConfigValue,
  parseConfigValue,
  type BrokerConfigDef,
  type ConfigValue,
} from '../metadata/config-schema.js';
import type { BrokerDefaults } from '../metadata/topic-config.js';
import { isValidUuid } from '../metadata/uuid.js';
import { parseOverrides, parseProperties } from './properties/properties.js';
import { consumerGroupConfigErrors, type ConsumerGroupConfig, type MigrationPolicy } from './group/consumer/config.js';
import { assignorName } from './group/consumer/assignors.js';

export { ConfigError } from '../metadata/config-schema.js';
export { parseProperties, parsePropertiesEntries, parseOverrides } from './properties/properties.js';

export interface ListenerConfig {
  /** Listener name (`PLAINTEXT`). */
  readonly name: string;
  /** Empty string: all interfaces. IPv6 literals without brackets. */
  readonly host: string;
  /** 0: an ephemeral port chosen at bind time. */
  readonly port: number;
  readonly securityProtocol: 'PLAINTEXT';
}

export interface HttpListenerConfig {
  readonly host: string;
  readonly port: number;
}

export interface LoadBrokerConfigOptions {
  /** Path of server.properties; omitted: defaults only. */
  readonly file?: string;
  /** `key=value` strings from `--override`, applied after the file. */
  readonly overrides?: readonly string[];
  /** Resolves relative paths (log.dirs, the default remote store); default process.cwd(). */
  readonly cwd?: string;
}

/** Reads server.properties (UTF-8) and the overrides, and builds the config. */
export async function loadBrokerConfig(options: LoadBrokerConfigOptions = {}): Promise<BrokerConfig> {
  const props = new Map<string, string>();
  if (options.file !== undefined) {
    let text: string;
    try {
      text = await readFile(options.file, 'utf8');
    } catch (err) {
      throw new ConfigError('', `Cannot read configuration file ${options.file}: ${(err as Error).message}`);
    }
    for (const [k, v] of parseProperties(text)) props.set(k, v);
  }
  for (const [k, v] of parseOverrides(options.overrides ?? [])) props.set(k, v);
  return BrokerConfig.fromProperties(props, options.cwd === undefined ? {} : { cwd: options.cwd });
}

export class BrokerConfig implements BrokerDefaults {
  /** Parsed values of every defined key (null when unset without default). */
  private readonly values = new Map<string, ConfigValue>();
  /** Keys set explicitly (file or override): Kafka's static broker configs. */
  private readonly explicit = new Set<string>();
  /** `rsm.config.*` with the prefix removed, for the remote storage backend. */
  readonly rsmConfig: Readonly<Record<string, string>>;

  readonly nodeId: number;
  readonly clusterId: string | null;
  readonly listeners: readonly ListenerConfig[];
  /** What Metadata advertises; listeners when advertised.listeners is unset. */
  readonly advertisedListeners: readonly ListenerConfig[];
  readonly httpListeners: readonly HttpListenerConfig[];
  /** Absolute log directories; the first holds broker metadata. */
  readonly logDirs: readonly string[];
  /** Effective log.retention.ms (minutes/hours folded in; negative -> -1). */
  readonly logRetentionMs: number;
  /** Effective log.roll.ms. */
  readonly logRollMs: number;
  /** Effective log.roll.jitter.ms. */
  readonly logRollJitterMs: number;
  /** Effective log.flush.interval.ms (falls back to log.flush.scheduler.interval.ms). */
  readonly logFlushIntervalMs: number;
  /** The remote store URL, defaulting to file://<first log dir>/remote. */
  readonly remoteLogStorageUrl: string;

  private constructor(
    /** The key/value strings this config was built from (server.properties and overrides). */
    private readonly props: ReadonlyMap<string, string>,
    private readonly cwd: string,
  ) {
    const rsm: Record<string, string> = {};
    for (const [rawKey, raw] of props) {
      const key = rawKey.trim();
      if (key.startsWith(RSM_CONFIG_PREFIX) && key.length > RSM_CONFIG_PREFIX.length) {
        rsm[key.slice(RSM_CONFIG_PREFIX.length)] = raw;
        continue;
      }
      const name = key.startsWith(RLMM_CONFIG_PREFIX + 'remote.log.metadata.') ? key.slice(RLMM_CONFIG_PREFIX.length) : key;
      const def = brokerConfigDef(name);
      if (def === undefined) throw unknownKey(key);
      this.values.set(name, parseConfigValue(def, raw));
      this.explicit.add(name);
    }
    this.rsmConfig = Object.freeze(rsm);
    for (const def of BROKER_CONFIG_DEFS) if (!this.values.has(def.name)) this.values.set(def.name, def.default);

    this.nodeId = this.nodeIdFrom();
    this.clusterId = this.getString('cluster.id');
    if (this.clusterId !== null && !isValidUuid(this.clusterId)) {
      throw new ConfigError('cluster.id', `Invalid value ${this.clusterId} for configuration cluster.id: must be a 22-character base64url Kafka Uuid`);
    }
    this.listeners = parseListeners('listeners', this.getList('listeners') ?? []);
    if (this.listeners.length === 0) throw new ConfigError('listeners', 'Invalid value for configuration listeners: at least one listener is required');
    const advertised = this.getList('advertised.listeners');
    this.advertisedListeners = advertised === null ? this.listeners : parseListeners('advertised.listeners', advertised);
    for (const l of this.advertisedListeners) {
      if (l.host === '0.0.0.0' || l.host === '::') {
        throw new ConfigError('advertised.listeners', `Invalid value for configuration advertised.listeners: ${l.host} is not a valid address to advertise`);
      }
    }
    this.httpListeners = (this.getList('http.listeners') ?? []).map((spec) => {
      const l = splitListener(spec);
      return { host: l.host, port: l.port };
    });
    const dirs = this.getList('log.dirs') ?? [this.getString('log.dir') ?? './sediment-data'];
    if (dirs.length === 0 || dirs.some((d) => d === '')) throw new ConfigError('log.dirs', 'Invalid value for configuration log.dirs: at least one non-empty directory is required');
    this.logDirs = dirs.map((d) => path.resolve(cwd, d));
    if (new Set(this.logDirs).size !== this.logDirs.length) throw new ConfigError('log.dirs', 'Invalid value for configuration log.dirs: duplicate directories');

    this.logRetentionMs = this.retentionMsFrom();
    this.logRollMs = this.getNumberOrNull('log.roll.ms') ?? this.getInt('log.roll.hours') * 3_600_000;
    this.logRollJitterMs = this.getNumberOrNull('log.roll.jitter.ms') ?? this.getInt('log.roll.jitter.hours') * 3_600_000;
    this.logFlushIntervalMs = this.getNumberOrNull('log.flush.interval.ms') ?? this.getLong('log.flush.scheduler.interval.ms');
    this.remoteLogStorageUrl = this.getString('remote.log.storage.url') ?? pathToFileURL(path.join(this.logDirs[0] as string, 'remote')).href;
    this.crossCheck();
  }

  /** Builds a config from key/value strings (already read from a file and overrides). */
  static fromProperties(
    props: ReadonlyMap<string, string> | Readonly<Record<string, string>>,
    options: { cwd?: string } = {},
  ): BrokerConfig {
    const map = props instanceof Map ? props : new Map(Object.entries(props as Record<string, string>));
    return new BrokerConfig(map, options.cwd ?? process.cwd());
  }

  /**
   * This config with `dynamic` laid over its properties (Kafka's dynamic broker
   * configs, rebuilt as KafkaConfig is): every key parsed and cross-checked
   * again, so a bad combination throws a ConfigError naming the key. The keys
   * of `dynamic` count as set (isSet) in the result.
   */
  withDynamic(dynamic: ReadonlyMap<string, string>): BrokerConfig {
    const merged = new Map(this.props);
    for (const [k, v] of dynamic) merged.set(k, v);
    return new BrokerConfig(merged, this.cwd);
  }

  // ---- generic access ----

  /** The parsed value of a broker key (its default when not set). Throws on an undefined key. */
  get(name: string): ConfigValue {
    if (!this.values.has(name)) throw new Error(`unknown broker config ${name}`);
    return this.values.get(name) ?? null;
  }

  /** True when the key was set in server.properties or with --override. */
  isSet(name: string): boolean {
    return this.explicit.has(name);
  }

  /** The value as Kafka renders it (DescribeConfigs), null when unset. */
  valueString(name: string): string | null {
    const def = this.def(name);
    return formatConfigValue(def.type, this.get(name));
  }

  getInt(name: string): number {
    const v = this.get(name);
    if (typeof v !== 'number') throw new Error(`broker config ${name} is not a number`);
    return v;
  }

  getLong(name: string): number {
    return this.getInt(name);
  }

  getDouble(name: string): number {
    return this.getInt(name);
  }

  getNumberOrNull(name: string): number | null {
    const v = this.get(name);
    return typeof v === 'number' ? v : null;
  }

  getBoolean(name: string): boolean {
    const v = this.get(name);
    if (typeof v !== 'boolean') throw new Error(`broker config ${name} is not a boolean`);
    return v;
  }

  getString(name: string): string | null {
    const v = this.get(name);
    return typeof v === 'string' ? v : null;
  }

  getList(name: string): readonly string[] | null {
    const v = this.get(name);
    return Array.isArray(v) ? v : null;
  }

  /** The keys set explicitly, with their rendered values (for logging at start-up). */
  explicitEntries(): [string, string | null][] {
    return [...this.explicit].sort().map((k) => [k, this.valueString(k)]);
  }

  // ---- camelCased accessors for what the broker uses ----

  get numPartitions(): number { return this.getInt('num.partitions'); }
  get defaultReplicationFactor(): number { return this.getInt('default.replication.factor'); }
  get autoCreateTopicsEnable(): boolean { return this.getBoolean('auto.create.topics.enable'); }
  get deleteTopicEnable(): boolean { return this.getBoolean('delete.topic.enable'); }
  get socketRequestMaxBytes(): number { return this.getInt('socket.request.max.bytes'); }
  get maxIncrementalFetchSessionCacheSlots(): number { return this.getInt('max.incremental.fetch.session.cache.slots'); }
  get socketSendBufferBytes(): number { return this.getInt('socket.send.buffer.bytes'); }
  get socketReceiveBufferBytes(): number { return this.getInt('socket.receive.buffer.bytes'); }
  get messageMaxBytes(): number { return this.getInt('message.max.bytes'); }
  get logSegmentBytes(): number { return this.getInt('log.segment.bytes'); }
  get logRetentionBytes(): number { return this.getLong('log.retention.bytes'); }
  get logRetentionCheckIntervalMs(): number { return this.getLong('log.retention.check.interval.ms'); }
  get logIndexIntervalBytes(): number { return this.getInt('log.index.interval.bytes'); }
  get logIndexSizeMaxBytes(): number { return this.getInt('log.index.size.max.bytes'); }
  get logFlushIntervalMessages(): number { return this.getLong('log.flush.interval.messages'); }
  get logFlushSchedulerIntervalMs(): number { return this.getLong('log.flush.scheduler.interval.ms'); }
  get logFlushOffsetCheckpointIntervalMs(): number { return this.getInt('log.flush.offset.checkpoint.interval.ms'); }
  get logFlushStartOffsetCheckpointIntervalMs(): number { return this.getInt('log.flush.start.offset.checkpoint.interval.ms'); }
  get logSegmentDeleteDelayMs(): number { return this.getLong('log.segment.delete.delay.ms'); }
  get logCleanupPolicy(): readonly string[] { return this.getList('log.cleanup.policy') ?? []; }
  get logMessageTimestampType(): 'CreateTime' | 'LogAppendTime' {
    return this.getString('log.message.timestamp.type') === 'LogAppendTime' ? 'LogAppendTime' : 'CreateTime';
  }
  get logLocalRetentionMs(): number { return this.getLong('log.local.retention.ms'); }
  get logLocalRetentionBytes(): number { return this.getLong('log.local.retention.bytes'); }
  get logCleanerEnable(): boolean { return this.getBoolean('log.cleaner.enable'); }
  get offsetsTopicNumPartitions(): number { return this.getInt('offsets.topic.num.partitions'); }
  get offsetsTopicSegmentBytes(): number { return this.getInt('offsets.topic.segment.bytes'); }
  get offsetsRetentionMinutes(): number { return this.getInt('offsets.retention.minutes'); }
  get offsetsRetentionMs(): number { return this.getInt('offsets.retention.minutes') * 60_000; }
  get offsetsRetentionCheckIntervalMs(): number { return this.getLong('offsets.retention.check.interval.ms'); }
  /** How long a group coordinator write to __consumer_offsets waits for the ISR (Kafka's offsetCommitTimeoutMs). */
  get offsetCommitTimeoutMs(): number { return this.getInt('offsets.commit.timeout.ms'); }
  get groupInitialRebalanceDelayMs(): number { return this.getInt('group.initial.rebalance.delay.ms'); }
  get groupMinSessionTimeoutMs(): number { return this.getInt('group.min.session.timeout.ms'); }
  get groupMaxSessionTimeoutMs(): number { return this.getInt('group.max.session.timeout.ms'); }
  get groupMaxSize(): number { return this.getInt('group.max.size'); }
  /** The KIP-848 settings (group.consumer.*); assignor names are resolved, an unknown one is a ConfigError. */
  get consumerGroupConfig(): ConsumerGroupConfig {
    const assignors = (this.getList('group.consumer.assignors') ?? []).map((n) => {
      const name = assignorName(n);
      if (name === null) throw new ConfigError('group.consumer.assignors', `Unknown assignor ${n}: Sediment has uniform and range`);
      return name;
    });
    return {
      sessionTimeoutMs: this.getInt('group.consumer.session.timeout.ms'),
      minSessionTimeoutMs: this.getInt('group.consumer.min.session.timeout.ms'),
      maxSessionTimeoutMs: this.getInt('group.consumer.max.session.timeout.ms'),
      heartbeatIntervalMs: this.getInt('group.consumer.heartbeat.interval.ms'),
      minHeartbeatIntervalMs: this.getInt('group.consumer.min.heartbeat.interval.ms'),
      maxHeartbeatIntervalMs: this.getInt('group.consumer.max.heartbeat.interval.ms'),
      assignors,
      maxSize: this.getInt('group.consumer.max.size'),
      migrationPolicy: (this.getString('group.consumer.migration.policy') ?? 'bidirectional') as MigrationPolicy,
    };
  }
  get transactionStateLogNumPartitions(): number { return this.getInt('transaction.state.log.num.partitions'); }
  get transactionMaxTimeoutMs(): number { return this.getInt('transaction.max.timeout.ms'); }
  get transactionalIdExpirationMs(): number { return this.getInt('transactional.id.expiration.ms'); }
  get producerIdExpirationMs(): number { return this.getInt('producer.id.expiration.ms'); }
  get remoteLogStorageSystemEnable(): boolean { return this.getBoolean('remote.log.storage.system.enable'); }
  get remoteLogManagerTaskIntervalMs(): number { return this.getLong('remote.log.manager.task.interval.ms'); }
  get remoteLogManagerCopyMaxBytesPerSecond(): number { return this.getLong('remote.log.manager.copy.max.bytes.per.second'); }
  get remoteLogManagerFetchMaxBytesPerSecond(): number { return this.getLong('remote.log.manager.fetch.max.bytes.per.second'); }
  get remoteFetchMaxWaitMs(): number { return this.getInt('remote.fetch.max.wait.ms'); }
  get remoteLogIndexFileCacheTotalSizeBytes(): number { return this.getLong('remote.log.index.file.cache.total.size.bytes'); }
  get remoteLogReaderThreads(): number { return this.getInt('remote.log.reader.threads'); }
  get remoteLogReaderMaxPendingTasks(): number { return this.getInt('remote.log.reader.max.pending.tasks'); }
  get remoteLogMetadataTopicNumPartitions(): number { return this.getInt('remote.log.metadata.topic.num.partitions'); }
  get remoteLogMetadataTopicReplicationFactor(): number { return this.getInt('remote.log.metadata.topic.replication.factor'); }
  get remoteLogMetadataTopicRetentionMs(): number { return this.getLong('remote.log.metadata.topic.retention.ms'); }

  // ---- derivations and cross-key checks ----

  private def(name: string): BrokerConfigDef {
    const def = brokerConfigDef(name);
    if (def === undefined) throw new Error(`unknown broker config ${name}`);
    return def;
  }

  private nodeIdFrom(): number {
    const brokerId = this.getInt('broker.id');
    if (!this.isSet('node.id') && this.isSet('broker.id')) {
      if (brokerId < 0) throw new ConfigError('broker.id', `Invalid value ${brokerId} for configuration broker.id: must be at least 0 when node.id is not set`);
      return brokerId;
    }
    const nodeId = this.getInt('node.id');
    if (this.isSet('broker.id') && brokerId !== -1 && brokerId !== nodeId) {
      throw new ConfigError('broker.id', `Invalid value ${brokerId} for configuration broker.id: it must equal node.id (${nodeId})`);
    }
    return nodeId;
  }

  /** KafkaConfig.logRetentionTimeMillis: ms, else minutes, else hours; negative means -1. */
  private retentionMsFrom(): number {
    const ms = this.getNumberOrNull('log.retention.ms');
    const minutes = this.getNumberOrNull('log.retention.minutes');
    const millis = ms ?? (minutes !== null ? minutes * 60_000 : this.getInt('log.retention.hours') * 3_600_000);
    return millis < 0 ? -1 : millis;
  }

  private crossCheck(): void {
    const min = this.groupMinSessionTimeoutMs;
    const max = this.groupMaxSessionTimeoutMs;
    if (min > max) {
      throw new ConfigError('group.min.session.timeout.ms', `group.min.session.timeout.ms (${min}) must not be greater than group.max.session.timeout.ms (${max})`);
    }
    const consumerProblems = consumerGroupConfigErrors(this.consumerGroupConfig);
    if (consumerProblems[0] !== undefined) throw new ConfigError('group.consumer.session.timeout.ms', consumerProblems[0]);
    const names = new Set<string>();
    for (const l of this.listeners) {
      if (names.has(l.name)) throw new ConfigError('listeners', `Each listener must have a different name, listeners: ${this.valueString('listeners') ?? ''}`);
      names.add(l.name);
    }
    // Kafka's validateBrokerLogConfigValues with tiered storage on.
    if (this.remoteLogStorageSystemEnable) {
      checkLocalRetention('log.local.retention.bytes', this.logLocalRetentionBytes, 'log.retention.bytes', this.logRetentionBytes);
      checkLocalRetention('log.local.retention.ms', this.logLocalRetentionMs, 'log.retention.ms', this.logRetentionMs);
    }
    const minLag = this.getLong('log.cleaner.min.compaction.lag.ms');
    const maxLag = this.getLong('log.cleaner.max.compaction.lag.ms');
    if (minLag > maxLag) {
      throw new ConfigError('log.cleaner.min.compaction.lag.ms', `conflict broker config setting log.cleaner.min.compaction.lag.ms (${minLag}) > log.cleaner.max.compaction.lag.ms (${maxLag})`);
    }
  }
}

function checkLocalRetention(localKey: string, local: number, totalKey: string, total: number): void {
  if (total < 0 || local === -2) return;
  if (local === -1) throw new ConfigError(localKey, `Invalid value -1 for configuration ${localKey}: Value must not be -1 as ${totalKey} value is set as ${total}.`);
  if (local > total) throw new ConfigError(localKey, `Invalid value ${local} for configuration ${localKey}: Value must not be more than ${totalKey} property value: ${total}`);
}

function unknownKey(key: string): ConfigError {
  const topicDef = topicConfigDef(key);
  const hint = topicDef?.synonyms[0] !== undefined
    ? ` (${key} is a topic config; the broker default is ${topicDef.synonyms[0].name})`
    : topicDef !== undefined
      ? ` (${key} is a topic config; set it per topic)`
      : '';
  return new ConfigError(key, `Unknown configuration '${key}'${hint}`);
}

function splitListener(spec: string): { name: string; host: string; port: number } {
  const m = /^([A-Za-z0-9_]+):\/\/(\[[0-9a-fA-F:.]+\]|[^:/\s]*):(\d+)$/.exec(spec);
  if (!m) throw new Error(`malformed listener ${spec}`);
  const host = (m[2] as string).replace(/^\[(.*)\]$/, '$1');
  return { name: (m[1] as string).toUpperCase(), host, port: Number(m[3]) };
}

function parseListeners(key: string, specs: readonly string[]): ListenerConfig[] {
  return specs.map((spec) => {
    const l = splitListener(spec);
    if (l.name !== 'PLAINTEXT') throw new ConfigError(key, `Invalid value ${spec} for configuration ${key}: Sediment only supports the PLAINTEXT security protocol`);
    return { name: l.name, host: l.host, port: l.port, securityProtocol: 'PLAINTEXT' as const };
  });
}
