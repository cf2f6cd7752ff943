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

/** A broker's view of its own keys, for synonyms (BrokerConfig implements it). */
export interface DescribableBroker extends BrokerDefaults {
  /** Rendered value of a broker key, null when unset and without default. */
  valueString(name: string): string | null;
}

function selected(all: readonly string[], keys: readonly string[] | null | undefined): readonly string[] {
  if (keys === null || keys === undefined) return all;
  const known = new Set(all);
  return keys.filter((k) => known.has(k));
}

/**
 * Kafka's configSynonyms: for each name of a broker synonym group, the explicitly
 * set value (STATIC_BROKER_CONFIG), then for each name its default (DEFAULT_CONFIG).
 */
function brokerSynonymEntries(broker: DescribableBroker, names: readonly string[], sensitive: boolean): DescribeConfigsSynonym[] {
  const out: DescribeConfigsSynonym[] = [];
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
 * DescribeConfigs for a BROKER resource (type 4). Sediment has no dynamic broker
 * configs, so every entry is read-only. `effective` supplies values computed at
 * start-up (the default remote store URL, the cluster id from meta.properties).
 */
export function describeBrokerConfigs(
  broker: DescribableBroker,
  options: DescribeOptions & { effective?: Readonly<Record<string, string>> } = {},
): DescribeConfigsEntry[] {
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
      readOnly: true,
      isDefault: source === ConfigSource.DEFAULT_CONFIG,
      configSource: source,
      isSensitive: sensitive,
      synonyms: options.includeSynonyms ? synonyms : [],
      configType: ConfigTypeCode[def.type],
      documentation: options.includeDocumentation ? def.doc : null,
    };
  });
}

