// DescribeConfigs entries as Kafka's ConfigHelper builds them: value, source,
// synonyms (topic override, then broker keys set in server.properties, then
// broker defaults), sensitivity, read-only flag, type code and documentation.
// Field names follow DescribeConfigsResponse's DescribeConfigsResourceResult.
import { brokerConfigDef, brokerConfigSynonyms, BROKER_CONFIG_NAMES, TOPIC_CONFIG_NAMES } from './config-defs.js';
import {
  ConfigSource,
  ConfigTypeCode,
  formatConfigValue,
  isSensitiveKey,
  type ConfigSourceCode,
} from './config-schema.js';
import { isDynamicBrokerConfig } from './dynamic-broker-configs.js';
import { effectiveTopicConfig, type BrokerDefaults, type TopicConfigOptions, type TopicOverrides } from './topic-config.js';

export interface DescribeConfigsSynonym {
  readonly name: string;
  readonly value: string | null;
  readonly source: ConfigSourceCode;
}

export interface DescribeConfigsEntry {
  readonly name: string;
  readonly value: string | null;
  readonly readOnly: boolean;
  /** v0 only: true when the value is a default. */
  readonly isDefault: boolean;
  readonly configSource: ConfigSourceCode;
  readonly isSensitive: boolean;
  /** Empty unless includeSynonyms. */
  readonly synonyms: readonly DescribeConfigsSynonym[];
  readonly configType: number;
  /** null unless includeDocumentation. */
  readonly documentation: string | null;
}

export interface DescribeOptions {
  /** Keys to describe; null/undefined: all. Unknown keys are skipped, as Kafka does. */
  readonly keys?: readonly string[] | null;
  readonly includeSynonyms?: boolean;
  readonly includeDocumentation?: boolean;
}

/** A broker's view of its own keys, for synonyms (BrokerConfig implements it; DynamicBrokerConfig adds the dynamic layers). */
export interface DescribableBroker extends BrokerDefaults {
  /** Rendered (effective) value of a broker key, null when unset and without default. */
  valueString(name: string): string | null;
  /** Dynamic configs of this broker (DYNAMIC_BROKER_CONFIG); absent: none, and nothing can be altered. */
  dynamicBrokerConfigs?(): ReadonlyMap<string, string>;
  /** Dynamic cluster-wide defaults (DYNAMIC_DEFAULT_BROKER_CONFIG). */
  dynamicDefaultConfigs?(): ReadonlyMap<string, string>;
}

function selected(all: readonly string[], keys: readonly string[] | null | undefined): readonly string[] {
  if (keys === null || keys === undefined) return all;
  const known = new Set(all);
  return keys.filter((k) => known.has(k));
}

/**
 * Kafka's configSynonyms: for each name of a broker synonym group, its value
 * in this broker's dynamic configs (DYNAMIC_BROKER_CONFIG), then for each name
 * the cluster-wide dynamic default (DYNAMIC_DEFAULT_BROKER_CONFIG), then the
 * explicitly set value (STATIC_BROKER_CONFIG), then its default (DEFAULT_CONFIG).
 */
function brokerSynonymEntries(broker: DescribableBroker, names: readonly string[], sensitive: boolean): DescribeConfigsSynonym[] {
  const out: DescribeConfigsSynonym[] = [];
  const layers: Array<[ReadonlyMap<string, string> | undefined, ConfigSourceCode]> = [
    [broker.dynamicBrokerConfigs?.(), ConfigSource.DYNAMIC_BROKER_CONFIG],
    [broker.dynamicDefaultConfigs?.(), ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG],
  ];
  for (const [layer, source] of layers) {
    if (layer === undefined) continue;
    for (const n of names) {
      const v = layer.get(n);
      if (v !== undefined) out.push({ name: n, value: sensitive ? null : v, source });
    }
  }
  for (const n of names) {
    if (broker.isSet(n)) out.push({ name: n, value: sensitive ? null : broker.valueString(n), source: ConfigSource.STATIC_BROKER_CONFIG });
  }
  for (const n of names) {
    const def = brokerConfigDef(n);
    if (def === undefined || def.default === null) continue;
    out.push({ name: n, value: sensitive ? null : formatConfigValue(def.type, def.default), source: ConfigSource.DEFAULT_CONFIG });
  }
  return out;
}

/** DescribeConfigs for a TOPIC resource (type 2). */
export function describeTopicConfigs(
  broker: DescribableBroker,
  overrides: TopicOverrides,
  options: DescribeOptions & TopicConfigOptions = {},
): DescribeConfigsEntry[] {
  const config = effectiveTopicConfig(broker, overrides, options);
  return selected(TOPIC_CONFIG_NAMES, options.keys).map((name) => {
    const entry = config.entry(name);
    const def = entry.def;
    const sensitive = isSensitiveKey(name, def.type);
    const value = sensitive ? null : formatConfigValue(def.type, entry.value);
    const synonyms: DescribeConfigsSynonym[] = [];
    if (overrides[name] !== undefined) synonyms.push({ name, value, source: ConfigSource.DYNAMIC_TOPIC_CONFIG });
    const first = def.synonyms[0];
    if (first !== undefined) synonyms.push(...brokerSynonymEntries(broker, brokerConfigSynonyms(first.name), sensitive));
    const source = synonyms[0]?.source ?? ConfigSource.DEFAULT_CONFIG;
    return {
      name,
      value,
      readOnly: false,
      isDefault: source === ConfigSource.DEFAULT_CONFIG,
      configSource: source,
      isSensitive: sensitive,
      synonyms: options.includeSynonyms ? synonyms : [],
      configType: ConfigTypeCode[def.type],
      documentation: options.includeDocumentation ? def.doc : null,
    };
  });
}

/**
 * DescribeConfigs for a BROKER resource (type 4) named by this broker's id.
 * A key is read-only unless the broker has dynamic layers and the key is
 * dynamic (metadata/dynamic-broker-configs.ts). `effective` supplies values
 * computed at start-up (the default remote store URL, the cluster id from
 * meta.properties).
 */
export function describeBrokerConfigs(
  broker: DescribableBroker,
  options: DescribeOptions & { effective?: Readonly<Record<string, string>> } = {},
): DescribeConfigsEntry[] {
  const alterable = broker.dynamicDefaultConfigs !== undefined;
  return selected(BROKER_CONFIG_NAMES, options.keys).map((name) => {
    const def = brokerConfigDef(name);
    if (def === undefined) throw new Error(`unknown broker config ${name}`);
    const sensitive = isSensitiveKey(name, def.type);
    const computed = options.effective?.[name];
    const raw = computed ?? broker.valueString(name);
    const value = sensitive ? null : raw;
    const all = brokerSynonymEntries(broker, brokerConfigSynonyms(name), sensitive);
    // Kafka drops the higher-priority synonyms when describing a lower one.
    const start = all.findIndex((s) => s.name === name);
    const synonyms = start < 0 ? [] : all.slice(start);
    const source = synonyms[0]?.source ?? ConfigSource.DEFAULT_CONFIG;
    return {
      name,
      value,
      readOnly: !(alterable && isDynamicBrokerConfig(name)),
      isDefault: source === ConfigSource.DEFAULT_CONFIG,
      configSource: source,
      isSensitive: sensitive,
      synonyms: options.includeSynonyms ? synonyms : [],
      configType: ConfigTypeCode[def.type],
      documentation: options.includeDocumentation ? def.doc : null,
    };
  });
}


/**
 * DescribeConfigs for the BROKER resource named "" (Kafka's default broker
 * config): only the keys of the cluster-wide dynamic default, each with
 * source DYNAMIC_DEFAULT_BROKER_CONFIG and only synonyms of that source (as
 * Kafka's ConfigHelper with perBrokerConfig = false).
 */
export function describeDefaultBrokerConfigs(broker: DescribableBroker, options: DescribeOptions = {}): DescribeConfigsEntry[] {
  const defaults = broker.dynamicDefaultConfigs?.() ?? new Map<string, string>();
  const names = [...defaults.keys()].filter((n) => brokerConfigDef(n) !== undefined).sort();
  return selected(names, options.keys).map((name) => {
    const def = brokerConfigDef(name)!;
    const sensitive = isSensitiveKey(name, def.type);
    const all = brokerSynonymEntries(broker, brokerConfigSynonyms(name), sensitive).filter((s) => s.source === ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG);
    const start = all.findIndex((s) => s.name === name);
    const synonyms = start < 0 ? [] : all.slice(start);
    return {
      name,
      value: sensitive ? null : (defaults.get(name) ?? null),
      readOnly: !isDynamicBrokerConfig(name),
      isDefault: false,
      configSource: ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG,
      isSensitive: sensitive,
      synonyms: options.includeSynonyms ? synonyms : [],
      configType: ConfigTypeCode[def.type],
      documentation: options.includeDocumentation ? def.doc : null,
    };
  });
}
