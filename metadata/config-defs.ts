// The one place config keys are defined: the broker table and the topic table,
// with lookups. Parsing (broker/config.ts), topic config resolution
// (metadata/topic-config.ts) and the docs generator all read these tables.
import { BROKER_CONFIG_DEFS } from './broker-config-defs.js';
import { formatConfigValue, typeName, type BrokerConfigDef, type ConfigDef, type TopicConfigDef } from './config-schema.js';
import { TOPIC_CONFIG_DEFS } from './topic-config-defs.js';

export { BROKER_CONFIG_DEFS, RSM_CONFIG_PREFIX, RLMM_CONFIG_PREFIX } from './broker-config-defs.js';
export { TOPIC_CONFIG_DEFS } from './topic-config-defs.js';

const brokerDefs = new Map<string, BrokerConfigDef>(BROKER_CONFIG_DEFS.map((d) => [d.name, d]));
const topicDefs = new Map<string, TopicConfigDef>(TOPIC_CONFIG_DEFS.map((d) => [d.name, d]));

export function brokerConfigDef(name: string): BrokerConfigDef | undefined {
  return brokerDefs.get(name);
}

export function topicConfigDef(name: string): TopicConfigDef | undefined {
  return topicDefs.get(name);
}

/** Topic keys DescribeConfigs lists (Kafka's nonInternalConfigNames), sorted. */
export const TOPIC_CONFIG_NAMES: readonly string[] = TOPIC_CONFIG_DEFS.filter((d) => !d.internal)
  .map((d) => d.name)
  .sort();

/** Broker keys, sorted. */
export const BROKER_CONFIG_NAMES: readonly string[] = BROKER_CONFIG_DEFS.map((d) => d.name).sort();

/**
 * Kafka's DynamicBrokerConfig.brokerConfigSynonyms: the broker keys that feed one
 * value, highest priority first (log.retention.ms <- .minutes <- .hours).
 */
export function brokerConfigSynonyms(name: string): readonly string[] {
  for (const group of BROKER_SYNONYM_GROUPS) if (group.includes(name)) return group;
  return [name];
}

const BROKER_SYNONYM_GROUPS: readonly (readonly string[])[] = [
  ['log.roll.ms', 'log.roll.hours'],
  ['log.roll.jitter.ms', 'log.roll.jitter.hours'],
  ['log.flush.interval.ms', 'log.flush.scheduler.interval.ms'],
  ['log.retention.ms', 'log.retention.minutes', 'log.retention.hours'],
];

/** One row of the generated configuration reference (docs/configuration.md). */
export interface ConfigDocRow {
  readonly name: string;
  readonly scope: 'broker' | 'topic';
  /** Kafka's type name: INT, LONG, LIST... */
  readonly type: string;
  /** The default as text; a derived default is described in words. */
  readonly default: string;
  readonly validValues: string;
  readonly importance: string;
  readonly doc: string;
  /** Topic keys: the broker keys the default comes from, highest priority first. */
  readonly serverDefaultProperties: readonly string[];
}

function docRow(def: ConfigDef, scope: 'broker' | 'topic', synonyms: readonly string[]): ConfigDocRow {
  return {
    name: def.name,
    scope,
    type: typeName(def.type),
    default: def.defaultDoc ?? formatConfigValue(def.type, def.default) ?? 'null',
    validValues: def.validator?.describe ?? '',
    importance: def.importance,
    doc: def.doc,
    serverDefaultProperties: synonyms,
  };
}

/** Rows for the docs generator, sorted by name; internal topic keys omitted. */
export function configDocRows(scope: 'broker' | 'topic'): ConfigDocRow[] {
  const rows = scope === 'broker'
    ? BROKER_CONFIG_DEFS.map((d) => docRow(d, 'broker', []))
    : TOPIC_CONFIG_DEFS.filter((d) => !d.internal).map((d) => docRow(d, 'topic', d.synonyms.map((s) => s.name)));
  return rows.sort((a, b) => (a.name < b.name ? -1 : 1));
}

// The tables must agree with each other: every broker key a topic key inherits
// from exists. Checked once at load so a typo fails every test immediately.
for (const def of TOPIC_CONFIG_DEFS) {
  for (const s of def.synonyms) {
    if (!brokerDefs.has(s.name)) throw new Error(`topic config ${def.name} inherits from unknown broker config ${s.name}`);
  }
}
