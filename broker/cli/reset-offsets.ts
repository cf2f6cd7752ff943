// The pure part of `sediment groups --reset-offsets`: parsing the target
// (topics with optional partitions, a strategy, a datetime) and computing new
// offsets from the log's bounds and the group's committed offsets, with the
// same clamping rules as kafka-consumer-groups.sh.
import { Reader } from '../protocol/reader.js';
import { decodeConsumerProtocolAssignment } from '../protocol/messages/records/consumer-protocol-assignment.js';
import { UsageError, parseBigIntStrict, parseIntStrict } from './args.js';
import type { TopicPartition } from './admin-client.js';

export type ResetStrategy =
  | { readonly kind: 'earliest' }
  | { readonly kind: 'latest' }
  | { readonly kind: 'offset'; readonly offset: bigint }
  | { readonly kind: 'shift'; readonly by: bigint }
  | { readonly kind: 'datetime'; readonly timestamp: bigint };

/** `--topic T` (every partition) or `--topic T:0,2,5`. */
export interface TopicSelection {
  readonly topic: string;
  /** Null: every partition of the topic. */
  readonly partitions: readonly number[] | null;
}

export function parseTopicSelection(s: string): TopicSelection {
  const colon = s.lastIndexOf(':');
  if (colon < 0) {
    if (s === '') throw new UsageError('--topic needs a topic name');
    return { topic: s, partitions: null };
  }
  const topic = s.slice(0, colon);
  if (topic === '') throw new UsageError(`--topic '${s}' has no topic name`);
  const parts = s
    .slice(colon + 1)
    .split(',')
    .map((p) => parseIntStrict(p, `partition in --topic '${s}'`, 0, 2 ** 31 - 1));
  return { topic, partitions: [...new Set(parts)].sort((a, b) => a - b) };
}

/**
 * `YYYY-MM-DDTHH:mm:SS[.sss][Z|+hh:mm|+hhmm]`, Kafka's --to-datetime format;
 * without a zone the local time zone applies, as in Kafka.
 */
export function parseDateTime(s: string): number {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,3}))?(Z|[+-]\d{2}:?\d{2})?$/.exec(s.trim());
  if (m === null) throw new UsageError(`--to-datetime must look like YYYY-MM-DDTHH:mm:SS.sss, optionally followed by Z or +hh:mm; got '${s}'`);
  const [, y, mo, d, h, mi, sec, frac, zone] = m;
  const ms = frac === undefined ? 0 : Number(frac.padEnd(3, '0'));
  const fields = [Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(sec), ms] as const;
  let t: number;
  if (zone === undefined) t = new Date(...fields).getTime();
  else {
    t = Date.UTC(...fields);
    if (zone !== 'Z') {
      const sign = zone.startsWith('-') ? -1 : 1;
      const digits = zone.slice(1).replace(':', '');
      t -= sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2))) * 60_000;
    }
  }
  // Reject impossible dates that Date would roll over (2024-02-31).
  const check = zone === undefined ? new Date(t) : new Date(Date.UTC(...fields));
  const [cy, cmo, cd] = zone === undefined ? [check.getFullYear(), check.getMonth(), check.getDate()] : [check.getUTCFullYear(), check.getUTCMonth(), check.getUTCDate()];
  if (Number.isNaN(t) || cy !== fields[0] || cmo !== fields[1] || cd !== fields[2] || fields[3] > 23 || fields[4] > 59 || fields[5] > 59) {
    throw new UsageError(`--to-datetime '${s}' is not a valid date and time`);
  }
  return t;
}

export function parseStrategy(kind: string, value: string | undefined): ResetStrategy {
  switch (kind) {
    case 'to-earliest':
      return { kind: 'earliest' };
    case 'to-latest':
      return { kind: 'latest' };
    case 'to-offset':
      return { kind: 'offset', offset: parseBigIntStrict(value ?? '', '--to-offset') };
    case 'shift-by':
      return { kind: 'shift', by: parseBigIntStrict(value ?? '', '--shift-by') };
    case 'to-datetime':
      return { kind: 'datetime', timestamp: BigInt(parseDateTime(value ?? '')) };
    default:
      throw new UsageError(`unknown reset strategy --${kind}`);
  }
}

export interface PartitionPosition extends TopicPartition {
  readonly earliest: bigint;
  readonly latest: bigint;
  /** The group's committed offset, or null. */
  readonly current: bigint | null;
  /** For datetime: ListOffsets' answer for the timestamp (-1: no record at or after it). */
  readonly atTimestamp?: bigint;
}

export interface PlannedOffset extends TopicPartition {
  readonly offset: bigint;
}

export interface ResetPlan {
  readonly offsets: readonly PlannedOffset[];
  readonly warnings: readonly string[];
  /** Partitions that cannot be reset with this strategy (e.g. shift without a committed offset). */
  readonly errors: readonly string[];
}

/** New offsets, clamped into [earliest, latest] like Kafka's tool, with a warning for each clamp. */
export function planReset(strategy: ResetStrategy, positions: readonly PartitionPosition[]): ResetPlan {
  const offsets: PlannedOffset[] = [];
  const warnings: string[] = [];
  const errors: string[] = [];
  const clamp = (p: PartitionPosition, wanted: bigint): bigint => {
    if (wanted < p.earliest) {
      warnings.push(`New offset (${wanted}) is lower than earliest offset for ${p.topic}-${p.partition}. Value will be set to ${p.earliest}`);
      return p.earliest;
    }
    if (wanted > p.latest) {
      warnings.push(`New offset (${wanted}) is higher than latest offset for ${p.topic}-${p.partition}. Value will be set to ${p.latest}`);
      return p.latest;
    }
    return wanted;
  };
  for (const p of positions) {
    let offset: bigint;
    switch (strategy.kind) {
      case 'earliest':
        offset = p.earliest;
        break;
      case 'latest':
        offset = p.latest;
        break;
      case 'offset':
        offset = clamp(p, strategy.offset);
        break;
      case 'shift':
        if (p.current === null) {
          errors.push(`cannot shift the offset of ${p.topic}-${p.partition}: the group has no committed offset there`);
          continue;
        }
        offset = clamp(p, p.current + strategy.by);
        break;
      case 'datetime':
        // No record at or after the timestamp: the end of the log.
        offset = p.atTimestamp === undefined || p.atTimestamp < 0n ? p.latest : clamp(p, p.atTimestamp);
        break;
    }
    offsets.push({ topic: p.topic, partition: p.partition, offset });
  }
  return { offsets, warnings, errors };
}

/** A classic consumer's assignment (ConsumerProtocolAssignment); empty when absent or unreadable. */
export function decodeAssignment(buf: Buffer): TopicPartition[] {
  if (buf.length < 2) return [];
  try {
    const r = new Reader(buf);
    const version = r.readInt16();
    if (version < 0) return [];
    // Later versions only append fields, so read with the newest we know.
    const a = decodeConsumerProtocolAssignment(r, Math.min(version, 3));
    return a.assignedPartitions.flatMap((t) => t.partitions.map((partition) => ({ topic: t.topic, partition })));
  } catch {
    return [];
  }
}
