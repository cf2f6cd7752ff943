// Shared fixtures for the log tests: temp dirs, batches, opening logs.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ManualClock } from '../../../broker/common/clock.js';
import { type LogConfig, logConfig } from '../../../metadata/log-config.js';
import { PartitionLog, type PartitionLogOptions } from '../../../broker/log/partition-log.js';
import { buildRecordBatch, decodeRecordBatches } from '../../../broker/protocol/record-batch.js';

export async function tempDir(prefix = 'sediment-log-'): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

export interface BatchSpec {
  count?: number;
  valueSize?: number;
  timestamp?: number;
  producerId?: bigint;
  producerEpoch?: number;
  baseSequence?: number;
  transactional?: boolean;
  tag?: string;
}

/** A batch of `count` records with values `<tag>-<i>` padded to valueSize. */
export function batch(spec: BatchSpec = {}): Buffer {
  const count = spec.count ?? 1;
  const ts = spec.timestamp ?? 1_700_000_000_000;
  const records = Array.from({ length: count }, (_, i) => {
    const v = `${spec.tag ?? 'v'}-${i}`;
    return { key: null, value: spec.valueSize === undefined ? v : v.padEnd(spec.valueSize, '.'), timestamp: ts + i };
  });
  return buildRecordBatch({
    records,
    ...(spec.producerId === undefined ? {} : { producerId: spec.producerId }),
    ...(spec.producerEpoch === undefined ? {} : { producerEpoch: spec.producerEpoch }),
    ...(spec.baseSequence === undefined ? {} : { baseSequence: spec.baseSequence }),
    ...(spec.transactional === undefined ? {} : { transactional: spec.transactional }),
  });
}

export function values(bufs: Buffer[]): string[] {
  const out: string[] = [];
  for (const b of bufs) for (const d of decodeRecordBatches(b)) for (const r of d.records) out.push(r.value?.toString() ?? '');
  return out;
}

export function offsets(bufs: Buffer[]): bigint[] {
  const out: bigint[] = [];
  for (const b of bufs) for (const d of decodeRecordBatches(b)) for (const r of d.records) out.push(r.offset);
  return out;
}

export async function openLog(
  dir: string,
  config: Partial<LogConfig> = {},
  extra: Partial<PartitionLogOptions> = {},
): Promise<{ log: PartitionLog; clock: ManualClock }> {
  const clock = (extra.clock as ManualClock | undefined) ?? new ManualClock(1_700_000_000_000);
  const log = await PartitionLog.open({
    dir: path.join(dir, 'topic-0'),
    topic: 'topic',
    partition: 0,
    topicId: 'AAAAAAAAAAAAAAAAAAAAAA',
    config: logConfig(config),
    clock,
    ...extra,
  });
  return { log, clock };
}

/** Reads everything from `from` to the end, batch by batch. */
export async function readAll(log: PartitionLog, from = log.logStartOffset): Promise<Buffer[]> {
  const out: Buffer[] = [];
  let next = from;
  while (next < log.logEndOffset) {
    const r = await log.read(next, 1 << 20, { maxOffset: log.highWatermark, minOneBatch: true });
    if (r.records.length === 0) break;
    out.push(...r.records);
    const decoded = decodeRecordBatches(Buffer.concat(r.records));
    const last = decoded[decoded.length - 1];
    if (last === undefined) break;
    next = last.header.baseOffset + BigInt(last.header.lastOffsetDelta) + 1n;
  }
  return out;
}
