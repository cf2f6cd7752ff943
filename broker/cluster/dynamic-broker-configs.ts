// Dynamic broker configs in a cluster (IncrementalAlterConfigs on BROKER
// resources): only the replication throttle rates, which
// kafka-reassign-partitions.sh --throttle sets and --verify deletes. A broker
// id names one broker's config (configs/brokers/<id>/<name> in etcd), the
// empty name the cluster-wide default (configs/cluster/<name>); any broker
// accepts the change for any other, as Kafka's forward to the controller, and
// answers once its own image shows it. Every other broker config is static
// (server.properties) and refused. DescribeConfigs lists them with their
// source (per broker, cluster default, or Kafka's default Long.MAX_VALUE).
import type { MetadataImage } from '../../metadata/cluster/image.js';
import type { ConfigResource } from '../../metadata/cluster/records.js';
import type { ClusterMetadataStore } from '../../metadata/cluster/store.js';
import { AlterConfigOpType, type AlterConfigOp } from '../../metadata/config-alter.js';
import type { DynamicBrokerConfigs } from '../broker-context.js';
import { ErrorCode, KafkaError } from '../protocol/errors.js';
import { FOLLOWER_THROTTLED_RATE, LEADER_THROTTLED_RATE } from '../replica/replication-quota.js';
import type { TopicSync } from './topic-sync.js';

/** The broker configs that may be set dynamically (Kafka's QuotaConfig throttle rates, long, bytes/s). */
export const DYNAMIC_BROKER_CONFIG_NAMES: ReadonlySet<string> = new Set([LEADER_THROTTLED_RATE, FOLLOWER_THROTTLED_RATE]);
/** Kafka deletes this one with the rates (ReassignPartitionsCommand); Sediment has no log dir moves, so there is never one to delete. */
const ALWAYS_UNSET = 'replica.alter.log.dirs.io.max.bytes.per.second';
const LONG_MAX = 9223372036854775807n;
/** DescribeConfigs ConfigSource codes. */
const CONFIG_SOURCE = { DYNAMIC_BROKER_CONFIG: 2, DYNAMIC_DEFAULT_BROKER_CONFIG: 3, DEFAULT_CONFIG: 5 } as const;

/** The resource a BROKER resource name stands for: a broker id, or '' for the cluster default. */
export function brokerConfigResource(name: string): ConfigResource {
  if (name === '') return { type: 'cluster' };
  if (!/^\d{1,10}$/.test(name) || Number(name) > 2147483647) throw new KafkaError(ErrorCode.INVALID_REQUEST, `Invalid broker id '${name}'`);
  return { type: 'broker', nodeId: Number(name) };
}

/** The store changes of one resource's operations (null: delete); KafkaError for what Kafka refuses. */
export function brokerConfigChanges(ops: readonly AlterConfigOp[]): Record<string, string | null> {
  const changes: Record<string, string | null> = {};
  for (const o of ops) {
    if (o.name in changes) throw new KafkaError(ErrorCode.INVALID_REQUEST, `Error due to duplicate config keys: ${o.name}`);
    const op = typeof o.op === 'string' ? AlterConfigOpType[o.op] : o.op;
    if (o.name === ALWAYS_UNSET && op === AlterConfigOpType.DELETE) continue;
    if (!DYNAMIC_BROKER_CONFIG_NAMES.has(o.name)) {
      throw new KafkaError(ErrorCode.INVALID_REQUEST, `${o.name} cannot be changed dynamically in Sediment (set it in server.properties); only ${[...DYNAMIC_BROKER_CONFIG_NAMES].join(', ')} can`);
    }
    if (op === AlterConfigOpType.DELETE) {
      changes[o.name] = null;
    } else if (op === AlterConfigOpType.SET) {
      const v = (o.value ?? '').trim();
      if (!/^\d{1,19}$/.test(v) || BigInt(v) > LONG_MAX) throw new KafkaError(ErrorCode.INVALID_CONFIG, `Invalid value ${o.value} for configuration ${o.name}: Not a number of type LONG at least 0`);
      changes[o.name] = v;
    } else {
      throw new KafkaError(ErrorCode.INVALID_CONFIG, `Config value append is not allowed for config key: ${o.name}`);
    }
  }
  return changes;
}

export class ClusterDynamicBrokerConfigs implements DynamicBrokerConfigs {
  constructor(
    private readonly o: { readonly store: ClusterMetadataStore; readonly image: MetadataImage; readonly sync: Pick<TopicSync, 'waitFor'>; readonly visibleWithinMs: number },
  ) {}

  async alter(resourceName: string, ops: readonly AlterConfigOp[], validateOnly: boolean): Promise<void> {
    const resource = brokerConfigResource(resourceName);
    const changes = brokerConfigChanges(ops);
    if (validateOnly || Object.keys(changes).length === 0) return;
    await this.o.store.alterConfigs(resource, changes);
    const shown = (): boolean => {
      const now = this.o.image.configs(resource);
      return Object.entries(changes).every(([k, v]) => (now.get(k) ?? null) === v);
    };
    await this.o.sync.waitFor(shown, this.o.visibleWithinMs, `alter the configs of ${resource.type === 'cluster' ? 'the cluster default' : `broker ${resourceName}`}`);
  }

  describe(resourceName: string): ReturnType<DynamicBrokerConfigs['describe']> {
    const resource = brokerConfigResource(resourceName);
    const cluster = this.o.image.configs({ type: 'cluster' });
    const own = resource.type === 'broker' ? this.o.image.configs(resource) : new Map<string, string>();
    const out: ReturnType<DynamicBrokerConfigs['describe']> = [];
    for (const name of DYNAMIC_BROKER_CONFIG_NAMES) {
      const synonyms: Array<{ name: string; value: string; source: number }> = [];
      const b = own.get(name);
      if (b !== undefined) synonyms.push({ name, value: b, source: CONFIG_SOURCE.DYNAMIC_BROKER_CONFIG });
      const c = cluster.get(name);
      if (c !== undefined) synonyms.push({ name, value: c, source: CONFIG_SOURCE.DYNAMIC_DEFAULT_BROKER_CONFIG });
      if (resource.type === 'cluster') {
        if (c !== undefined) out.push({ name, value: c, source: CONFIG_SOURCE.DYNAMIC_DEFAULT_BROKER_CONFIG, synonyms });
        continue;
      }
      synonyms.push({ name, value: String(LONG_MAX), source: CONFIG_SOURCE.DEFAULT_CONFIG });
      out.push({ ...synonyms[0]!, synonyms });
    }
    return out;
  }
}
