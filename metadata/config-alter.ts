// AlterConfigs (full replace) and IncrementalAlterConfigs (SET / DELETE /
// APPEND / SUBTRACT) applied to a topic's overrides. Pure: the result is the
// new override set, which the caller validates (validateTopicOverrides with the
// previous overrides) and stores.
import { ErrorCode, KafkaError } from '../broker/protocol/errors.js';
import { topicConfigDef } from './config-defs.js';
import { formatConfigValue } from './config-schema.js';
import { effectiveTopicConfig, type BrokerDefaults, type TopicConfigOptions, type TopicOverrides } from './topic-config.js';

/** IncrementalAlterConfigsRequest ConfigOperation codes. */
export const AlterConfigOpType = { SET: 0, DELETE: 1, APPEND: 2, SUBTRACT: 3 } as const;
export type AlterConfigOpName = keyof typeof AlterConfigOpType;

export interface AlterConfigOp {
  readonly name: string;
  /** The operation, by name or by its wire code. */
  readonly op: AlterConfigOpName | number;
  readonly value: string | null;
}

function opName(op: AlterConfigOpName | number): AlterConfigOpName {
  if (typeof op === 'string') return op;
  const entry = Object.entries(AlterConfigOpType).find(([, code]) => code === op);
  if (entry === undefined) throw new KafkaError(ErrorCode.INVALID_REQUEST, `Unknown alter config operation type ${op}`);
  return entry[0] as AlterConfigOpName;
}

function rejectDuplicates(names: readonly string[]): void {
  const seen = new Set<string>();
  const dups = new Set<string>();
  for (const n of names) (seen.has(n) ? dups : seen).add(n);
  if (dups.size > 0) throw new KafkaError(ErrorCode.INVALID_REQUEST, `Error due to duplicate config keys: ${[...dups].join(', ')}`);
}

/** AlterConfigs: the request's entries become the whole override set. */
export function replaceOverrides(entries: readonly { name: string; value: string | null }[]): Record<string, string | null> {
  rejectDuplicates(entries.map((e) => e.name));
  const next: Record<string, string | null> = {};
  for (const e of entries) next[e.name] = e.value;
  return next;
}

/**
 * IncrementalAlterConfigs on a topic. SET replaces, DELETE removes the override
 * (a missing one is fine), APPEND/SUBTRACT edit a LIST key starting from its
 * current effective value. Unknown keys are left for validation to refuse.
 */
export function incrementalAlterOverrides(
  broker: BrokerDefaults,
  current: TopicOverrides,
  ops: readonly AlterConfigOp[],
  options: TopicConfigOptions = {},
): Record<string, string | null> {
  rejectDuplicates(ops.map((o) => o.name));
  const next: Record<string, string | null> = { ...current };
  const effective = effectiveTopicConfig(broker, current, options);
  for (const o of ops) {
    const op = opName(o.op);
    switch (op) {
      case 'SET':
        next[o.name] = o.value;
        break;
      case 'DELETE':
        delete next[o.name];
        break;
      case 'APPEND':
      case 'SUBTRACT': {
        const def = topicConfigDef(o.name);
        if (def === undefined) throw new KafkaError(ErrorCode.INVALID_CONFIG, `Unknown topic config name: ${o.name}`);
        if (def.type !== 'list') {
          throw new KafkaError(ErrorCode.INVALID_CONFIG, `Can't ${op} to key ${o.name} because its type is not LIST.`);
        }
        const items = [...new Set((o.value ?? '').split(',').map((s) => s.trim()).filter((s) => s !== ''))];
        const base = [...effective.list(o.name)];
        const result = op === 'APPEND' ? [...base, ...items.filter((i) => !base.includes(i))] : base.filter((b) => !items.includes(b));
        next[o.name] = formatConfigValue('list', result);
        break;
      }
    }
  }
  return next;
}
