// Dynamic broker configs (Kafka's DynamicBrokerConfig): which broker keys may
// change at run time, and the changes AlterConfigs / IncrementalAlterConfigs
// make to one layer (a broker's own, or the cluster-wide default). Pure: the
// caller reads the current layer, stores the result, and rebuilds the broker
// config with it.
//
// The dynamic keys are those Kafka 4.3 lists as cluster-wide that Sediment
// applies live: the broker defaults of topic configs (every partition log takes
// the new value at once unless its topic overrides it, as Kafka's
// DynamicLogConfig), producer.id.expiration.ms (read with each log's config),
// follower.fetch.last.tiered.offset.enable (read when a fetcher takes on a
// replica, as Kafka's DynamicReplicationConfig), and three thread counts that
// have no effect in Sediment at all. Kafka's other dynamic keys that Sediment
// has (listeners, the log cleaner's threads and buffers, num.replica.fetchers,
// the remote log manager's quotas and caches, remote.fetch.max.wait.ms,
// unclean.leader.election.enable) are read once at start-up here, so they are
// read-only: refused rather than accepted and ignored.
import { ErrorCode, KafkaError } from '../broker/protocol/errors.js';
import { AlterConfigOpType, type AlterConfigOp, type AlterConfigOpName } from './config-alter.js';
import { brokerConfigDef } from './config-defs.js';
import { formatConfigValue, type ConfigValue } from './config-schema.js';

/** Broker keys whose dynamic value Sediment applies while running. */
export const DYNAMIC_BROKER_CONFIG_NAMES: ReadonlySet<string> = new Set([
  // topic defaults (the topic key they feed in brackets)
  'compression.type', // compression.type
  'compression.gzip.level',
  'compression.lz4.level',
  'compression.zstd.level',
  'log.cleaner.delete.retention.ms', // delete.retention.ms
  'log.cleaner.max.compaction.lag.ms',
  'log.cleaner.min.cleanable.ratio',
  'log.cleaner.min.compaction.lag.ms',
  'log.cleanup.policy',
  'log.flush.interval.messages', // flush.messages
  'log.flush.interval.ms', // flush.ms
  'log.index.interval.bytes',
  'log.index.size.max.bytes', // segment.index.bytes
  'log.local.retention.bytes',
  'log.local.retention.ms',
  'log.message.timestamp.after.max.ms',
  'log.message.timestamp.before.max.ms',
  'log.message.timestamp.type',
  'log.preallocate',
  'log.retention.bytes',
  'log.retention.ms',
  'log.roll.jitter.ms', // segment.jitter.ms
  'log.roll.ms', // segment.ms
  'log.segment.bytes',
  'log.segment.delete.delay.ms', // file.delete.delay.ms
  'message.max.bytes', // max.message.bytes
  'min.insync.replicas',
  // broker-level, read with each log's config
  'producer.id.expiration.ms',
  // replication, read when a fetcher takes on a replica
  'follower.fetch.last.tiered.offset.enable',
  // no effect in Sediment, dynamic or not
  'num.io.threads',
  'num.network.threads',
  'num.recovery.threads.per.data.dir',
]);

export function isDynamicBrokerConfig(name: string): boolean {
  return DYNAMIC_BROKER_CONFIG_NAMES.has(name);
}

/** One layer's change: a value to set, or null to remove the key from the layer. */
export type DynamicConfigChanges = Record<string, string | null>;

function rejectDuplicates(names: readonly string[]): void {
  const seen = new Set<string>();
  const dups = new Set<string>();
  for (const n of names) (seen.has(n) ? dups : seen).add(n);
  if (dups.size > 0) throw new KafkaError(ErrorCode.INVALID_REQUEST, `Error due to duplicate config keys: ${[...dups].join(', ')}`);
}

/**
 * Refuses keys that may not change at run time, as Kafka's
 * DynamicBrokerConfig.validateConfigs, which the broker answers with
 * INVALID_REQUEST (KAFKA-13609 keeps it so). Unknown keys are INVALID_CONFIG
 * (Kafka would store them as custom configs; Sediment has no plugin to read them).
 * Removing a key is always allowed, so a layer written by hand can be cleaned.
 */
export function checkDynamicKeys(changes: DynamicConfigChanges): void {
  const unknown = Object.keys(changes).filter((k) => brokerConfigDef(k) === undefined);
  if (unknown.length > 0) throw new KafkaError(ErrorCode.INVALID_CONFIG, `Unknown broker config name: ${unknown.join(', ')}`);
  const readOnly = Object.entries(changes).filter(([k, v]) => v !== null && !isDynamicBrokerConfig(k)).map(([k]) => k);
  if (readOnly.length > 0) throw new KafkaError(ErrorCode.INVALID_REQUEST, `Cannot update these configs dynamically: Set(${readOnly.join(', ')})`);
}

/** AlterConfigs (legacy): the entries become the layer's whole content; every other key of it is removed. */
export function replaceLayer(current: ReadonlyMap<string, string>, entries: readonly { name: string; value: string | null }[]): DynamicConfigChanges {
  rejectDuplicates(entries.map((e) => e.name));
  const changes: DynamicConfigChanges = {};
  for (const k of current.keys()) changes[k] = null;
  for (const e of entries) {
    if (e.value === null) throw new KafkaError(ErrorCode.INVALID_REQUEST, `Null value not supported for : ${e.name}`);
    changes[e.name] = e.value;
  }
  return dropNoOps(current, changes);
}

function opName(op: AlterConfigOpName | number): AlterConfigOpName {
  if (typeof op === 'string') return op;
  const entry = Object.entries(AlterConfigOpType).find(([, code]) => code === op);
  if (entry === undefined) throw new KafkaError(ErrorCode.INVALID_REQUEST, `Unknown alter config operation type ${op}`);
  return entry[0] as AlterConfigOpName;
}

/**
 * IncrementalAlterConfigs on one layer: SET, DELETE (a missing key is fine),
 * APPEND / SUBTRACT on a LIST key starting from its effective value (`effective`).
 */
export function incrementalLayerChanges(
  current: ReadonlyMap<string, string>,
  ops: readonly AlterConfigOp[],
  effective: (name: string) => ConfigValue,
): DynamicConfigChanges {
  rejectDuplicates(ops.map((o) => o.name));
  const changes: DynamicConfigChanges = {};
  for (const o of ops) {
    const op = opName(o.op);
    switch (op) {
      case 'SET':
        if (o.value === null) throw new KafkaError(ErrorCode.INVALID_REQUEST, `Null value not supported for : ${o.name}`);
        changes[o.name] = o.value;
        break;
      case 'DELETE':
        changes[o.name] = null;
        break;
      case 'APPEND':
      case 'SUBTRACT': {
        const def = brokerConfigDef(o.name);
        if (def === undefined) throw new KafkaError(ErrorCode.INVALID_CONFIG, `Unknown broker config name: ${o.name}`);
        if (def.type !== 'list') throw new KafkaError(ErrorCode.INVALID_CONFIG, `Config value append is not allowed for config key: ${o.name}`);
        const items = [...new Set((o.value ?? '').split(',').map((s) => s.trim()).filter((s) => s !== ''))];
        const now = effective(o.name);
        const base = Array.isArray(now) ? [...now] : [];
        const result = op === 'APPEND' ? [...base, ...items.filter((i) => !base.includes(i))] : base.filter((b) => !items.includes(b));
        changes[o.name] = formatConfigValue('list', result);
        break;
      }
    }
  }
  return dropNoOps(current, changes);
}

/** The layer after the changes. */
export function applyLayerChanges(current: ReadonlyMap<string, string>, changes: DynamicConfigChanges): Map<string, string> {
  const next = new Map(current);
  for (const [k, v] of Object.entries(changes)) {
    if (v === null) next.delete(k);
    else next.set(k, v);
  }
  return next;
}

function dropNoOps(current: ReadonlyMap<string, string>, changes: DynamicConfigChanges): DynamicConfigChanges {
  const out: DynamicConfigChanges = {};
  for (const [k, v] of Object.entries(changes)) {
    if (v === null ? current.has(k) : current.get(k) !== v) out[k] = v;
  }
  return out;
}

/** Only the dynamic keys of a stored layer (one written by hand may hold others): those are laid over the static config. */
export function dynamicOnly(layer: ReadonlyMap<string, string>): { readonly kept: Map<string, string>; readonly ignored: string[] } {
  const kept = new Map<string, string>();
  const ignored: string[] = [];
  for (const [k, v] of layer) {
    if (isDynamicBrokerConfig(k)) kept.set(k, v);
    else ignored.push(k);
  }
  return { kept, ignored };
}
