// The broker config as it is now: the static config (server.properties and
// overrides) with two dynamic layers over it, this broker's own and the
// cluster-wide default (Kafka's DynamicBrokerConfig: per-broker beats default
// beats static beats the key's default). In a cluster the layers come from the
// metadata image (configs/brokers/<id>/ and configs/cluster/ in etcd); the topic
// registry resolves topic defaults through this object, so a new layer reaches
// every partition log once the owner re-applies the logs' configs.
import type { BrokerConfig } from './config.js';
import { ConfigError, ConfigSource, type ConfigSourceCode, type ConfigValue } from '../metadata/config-schema.js';
import type { DescribableBroker } from '../metadata/describe-configs.js';
import { dynamicOnly } from '../metadata/dynamic-broker-configs.js';
import type { TopicBrokerSettings } from '../metadata/topics.js';
import { ErrorCode, KafkaError } from './protocol/errors.js';

export interface DynamicLayers {
  /** configs/cluster/: DYNAMIC_DEFAULT_BROKER_CONFIG. */
  readonly defaults: ReadonlyMap<string, string>;
  /** configs/brokers/<this node>/: DYNAMIC_BROKER_CONFIG. */
  readonly perBroker: ReadonlyMap<string, string>;
}

export class DynamicBrokerConfig implements TopicBrokerSettings, DescribableBroker {
  private merged: BrokerConfig;
  private defaults: ReadonlyMap<string, string> = new Map();
  private perBroker: ReadonlyMap<string, string> = new Map();

  constructor(readonly staticConfig: BrokerConfig) {
    this.merged = staticConfig;
  }

  /** The effective config (static with the layers over it). */
  get current(): BrokerConfig {
    return this.merged;
  }

  get nodeId(): number {
    return this.staticConfig.nodeId;
  }

  get numPartitions(): number {
    return this.merged.numPartitions;
  }

  get remoteLogStorageSystemEnable(): boolean {
    return this.merged.remoteLogStorageSystemEnable;
  }

  get(name: string): ConfigValue {
    return this.merged.get(name);
  }

  /** Set in server.properties or --override (the static layer only). */
  isSet(name: string): boolean {
    return this.staticConfig.isSet(name);
  }

  valueString(name: string): string | null {
    return this.merged.valueString(name);
  }

  sourceOf(name: string): ConfigSourceCode {
    if (this.perBroker.has(name)) return ConfigSource.DYNAMIC_BROKER_CONFIG;
    if (this.defaults.has(name)) return ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG;
    return this.staticConfig.isSet(name) ? ConfigSource.STATIC_BROKER_CONFIG : ConfigSource.DEFAULT_CONFIG;
  }

  dynamicBrokerConfigs(): ReadonlyMap<string, string> {
    return this.perBroker;
  }

  dynamicDefaultConfigs(): ReadonlyMap<string, string> {
    return this.defaults;
  }

  /**
   * The config these layers would give, checked as at start-up (each value
   * parsed, cross-key rules); a problem is INVALID_REQUEST naming the key, as
   * Kafka answers a dynamic change that fails validation. Keys that are not
   * dynamic are left out of the layers (see dynamicOnly).
   */
  build(layers: DynamicLayers): BrokerConfig {
    const over = new Map(dynamicOnly(layers.defaults).kept);
    for (const [k, v] of dynamicOnly(layers.perBroker).kept) over.set(k, v);
    if (over.size === 0) return this.staticConfig;
    try {
      return this.staticConfig.withDynamic(over);
    } catch (e) {
      if (e instanceof ConfigError) throw new KafkaError(ErrorCode.INVALID_REQUEST, e.message, { cause: e });
      throw e;
    }
  }

  /**
   * Takes new layers. Returns the dynamic keys whose layered value changed
   * (empty: nothing to re-apply). Layers that do not build (a value written
   * into etcd by hand) throw and leave the current config in force.
   */
  apply(layers: DynamicLayers): string[] {
    const next = this.build(layers);
    const defaults = dynamicOnly(layers.defaults).kept;
    const perBroker = dynamicOnly(layers.perBroker).kept;
    const changed = new Set<string>();
    for (const [a, b] of [[this.defaults, defaults], [this.perBroker, perBroker]] as const) {
      for (const k of new Set([...a.keys(), ...b.keys()])) if (a.get(k) !== b.get(k)) changed.add(k);
    }
    this.merged = next;
    this.defaults = defaults;
    this.perBroker = perBroker;
    return [...changed].sort();
  }
}
