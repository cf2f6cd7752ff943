// The one place config keys are defined: the broker table and the topic table,
// with lookups. Parsing (broker/config.ts), topic config resolution
// (metadata/topic-config.ts) and the docs generator all read these tables.
import { BROKER_CONFIG_DEFS } from './broker-config-defs.js';
import type { BrokerConfigDef, TopicConfigDef } from './config-schema.js';
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

// The tables must agree with each other: every broker key a topic key inherits
// from exists. Checked once at load so a typo fails every test immediately.
for (const def of TOPIC_CONFIG_DEFS) {
  for (const s of def.synonyms) {
    if (!brokerDefs.has(s.name)) throw new Error(`topic config ${def.name} inherits from unknown broker config ${s.name}`);
  }
}
