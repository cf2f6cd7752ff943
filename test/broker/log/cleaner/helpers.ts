// Fixtures for the log cleaner tests: keyed batches, a compacted log, reading
// the log back as a key -> value table, and a cleaner driven by a ManualClock.
import { readdir } from 'node:fs/promises';
import { ManualClock } from '../../../../broker/common/clock.js';
import { LogCleaner, type LogCleanerConfig } from '../../../../broker/log/cleaner/log-cleaner.js';
import type { SwapStepHook } from '../../../../broker/log/cleaner/segment-swap.js';
import type { LogConfig } from '../../../../metadata/log-config.js';
import type { PartitionLog, PartitionLogOptions } from '../../../../broker/log/partition-log.js';
import { type CompressionType, type DecodedBatch, buildRecordBatch, decodeRecordBatches } from '../../../../broker/protocol/record-batch.js';
import { ManualScheduler } from '../../../../broker/common/scheduler.js';
import { openLog, readAll } from '../helpers.js';

export const T0 = 1_700_000_000_000;

export interface KeyedSpec {
  timestamp?: number;
  compression?: CompressionType;
  producerId?: bigint;
  producerEpoch?: number;
  baseSequence?: number;
  transactional?: boolean;
}

/** One batch of keyed records; a null value is a tombstone. */
export function keyed(records: ReadonlyArray<readonly [string, string | null]>, spec: KeyedSpec = {}): Buffer {
  const ts = spec.timestamp ?? T0;
  return buildRecordBatch({
    records: records.map(([key, value], i) => ({ key, value, timestamp: ts + i })),
    ...(spec.compression === undefined ? {} : { compression: spec.compression }),
    ...(spec.producerId === undefined ? {} : { producerId: spec.producerId }),
    ...(spec.producerEpoch === undefined ? {} : { producerEpoch: spec.producerEpoch }),
    ...(spec.baseSequence === undefined ? {} : { baseSequence: spec.baseSequence }),
    ...(spec.transactional === undefined ? {} : { transactional: spec.transactional }),
  });
}

export const COMPACT: Partial<LogConfig> = {
  cleanupPolicy: { delete: false, compact: true },
  minCleanableDirtyRatio: 0.5,
  deleteRetentionMs: 86_400_000,
  minCompactionLagMs: 0,
};

export async function openCompacted(
  dir: string,
  config: Partial<LogConfig> = {},
  extra: Partial<PartitionLogOptions> = {},
): Promise<{ log: PartitionLog; clock: ManualClock }> {
  return openLog(dir, { ...COMPACT, segmentBytes: 4096, indexIntervalBytes: 256, ...config }, extra);
}

export async function appendKeyed(log: PartitionLog, records: ReadonlyArray<readonly [string, string | null]>, spec: KeyedSpec = {}): Promise<bigint> {
  const r = await log.append(keyed(records, spec), { leaderEpoch: 0, isFromClient: false });
  return r.baseOffset;
}

export interface ReadBack {
  /** key -> latest value after replaying the log from its start (tombstones remove). */
  table: Map<string, string>;
  /** Every record offset, in order. */
  offsets: bigint[];
  /** Keys of tombstones still in the log. */
  tombstones: string[];
  batches: DecodedBatch[];
}

/** Replays the whole log from its start, as a consumer rebuilding a table would. */
export async function readBack(log: PartitionLog, from = log.logStartOffset): Promise<ReadBack> {
  const bufs = await readAll(log, from);
  const table = new Map<string, string>();
  const offsets: bigint[] = [];
  const tombstones: string[] = [];
  const batches: DecodedBatch[] = [];
  for (const buf of bufs) {
    for (const b of decodeRecordBatches(buf)) {
      batches.push(b);
      if ((b.header.attributes & 0x20) !== 0) continue;
      for (const r of b.records) {
        offsets.push(r.offset);
        const key = r.key?.toString() ?? '';
        if (r.value === null) {
          table.delete(key);
          tombstones.push(key);
        } else table.set(key, r.value.toString());
      }
    }
  }
  return { table, offsets, tombstones, batches };
}

/** A cleaner over the given logs, its periodic task off unless asked. */
export function cleanerFor(
  logs: () => PartitionLog[],
  clock: ManualClock,
  config: Partial<LogCleanerConfig> = {},
  afterSwapStep?: SwapStepHook,
): { cleaner: LogCleaner; scheduler: ManualScheduler } {
  const scheduler = new ManualScheduler(clock);
  const cleaner = LogCleaner.start({
    logManager: { allLogs: logs },
    clock,
    scheduler,
    config: { enable: false, dedupeBufferSize: 1024 * 1024, ...config },
    ...(afterSwapStep === undefined ? {} : { afterSwapStep }),
  });
  return { cleaner, scheduler };
}

/** Files of a partition directory with a given suffix. */
export async function filesEnding(dir: string, suffix: string): Promise<string[]> {
  return (await readdir(dir)).filter((n) => n.endsWith(suffix));
}

export function isStrictlyIncreasing(xs: readonly bigint[]): boolean {
  for (let i = 1; i < xs.length; i++) if ((xs[i] as bigint) <= (xs[i - 1] as bigint)) return false;
  return true;
}
