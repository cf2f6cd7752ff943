import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { ErrorCode, KafkaError } from '../../../broker/protocol/errors.js';
import { batch, offsets, openLog, readAll, tempDir, values } from './helpers.js';

describe('PartitionLog', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => ({ dir, cleanup } = await tempDir()));
  afterEach(async () => cleanup());

  it('assigns offsets, reads back whole batches and keeps the high watermark at the log end', async () => {
    const { log } = await openLog(dir);
    const r1 = await log.append(batch({ count: 3, tag: 'a' }), { leaderEpoch: 0, isFromClient: true });
    const r2 = await log.append(batch({ count: 2, tag: 'b' }), { leaderEpoch: 0, isFromClient: true });
    assert.deepEqual([r1.baseOffset, r1.lastOffset, r2.baseOffset, r2.lastOffset], [0n, 2n, 3n, 4n]);
    assert.equal(r1.logAppendTime, -1n);
    assert.equal(log.logEndOffset, 5n);
    assert.equal(log.highWatermark, 5n);
    assert.equal(log.lastStableOffset, 5n);
    const all = await readAll(log);
    assert.deepEqual(values(all), ['a-0', 'a-1', 'a-2', 'b-0', 'b-1']);
    assert.deepEqual(offsets(all), [0n, 1n, 2n, 3n, 4n]);
    const mid = await log.read(4n, 1000, { maxOffset: 5n, minOneBatch: true });
    assert.equal(mid.firstOffset, 3n);
    await log.close();
  });

  it('stops reads at maxOffset and answers OFFSET_OUT_OF_RANGE past the end', async () => {
    const { log } = await openLog(dir);
    await log.append(batch({ count: 2 }), { leaderEpoch: 0, isFromClient: true });
    await log.append(batch({ count: 2 }), { leaderEpoch: 0, isFromClient: true });
    const r = await log.read(0n, 1 << 20, { maxOffset: 2n, minOneBatch: true });
    assert.deepEqual(offsets(r.records), [0n, 1n]);
    const none = await log.read(4n, 1 << 20, { maxOffset: 4n, minOneBatch: true });
    assert.deepEqual(none, { records: [], firstOffset: null });
    await assert.rejects(log.read(5n, 100, { maxOffset: 4n, minOneBatch: true }), (e: unknown) => e instanceof KafkaError && e.code === ErrorCode.OFFSET_OUT_OF_RANGE);
    await log.close();
  });

  it('respects maxBytes with whole batches, and minOneBatch', async () => {
    const { log } = await openLog(dir);
    const b = batch({ count: 1, valueSize: 200 });
    for (let i = 0; i < 3; i++) await log.append(Buffer.from(b), { leaderEpoch: 0, isFromClient: true });
    const small = await log.read(0n, 10, { maxOffset: 3n, minOneBatch: false });
    assert.deepEqual(small.records, []);
    const one = await log.read(0n, 10, { maxOffset: 3n, minOneBatch: true });
    assert.deepEqual(offsets(one.records), [0n]);
    const two = await log.read(0n, b.length * 2 + 5, { maxOffset: 3n, minOneBatch: true });
    assert.deepEqual(offsets(two.records), [0n, 1n]);
    await log.close();
  });

  it('rolls by segment.bytes, reopens cleanly and keeps reading across segments', async () => {
    const { log, clock } = await openLog(dir, { segmentBytes: 1000, indexIntervalBytes: 100 });
    for (let i = 0; i < 20; i++) await log.append(batch({ count: 2, valueSize: 100, tag: `m${i}` }), { leaderEpoch: 0, isFromClient: true });
    assert.ok(log.closedSegments().length >= 3, `segments: ${log.closedSegments().length}`);
    const before = values(await readAll(log));
    await log.close();
    const files = await readdir(path.join(dir, 'topic-0'));
    assert.ok(files.includes('00000000000000000000.log'));
    assert.ok(files.includes('00000000000000000000.index'));
    assert.ok(files.includes('00000000000000000000.timeindex'));
    assert.ok(files.includes('00000000000000000000.txnindex'));
    assert.ok(files.includes('partition.metadata'));
    assert.ok(files.some((f) => f.endsWith('.snapshot')));
    const { log: again } = await openLog(dir, { segmentBytes: 1000, indexIntervalBytes: 100 }, { clock, cleanShutdown: true });
    assert.equal(again.logEndOffset, 40n);
    assert.deepEqual(values(await readAll(again)), before);
    const r = await again.append(batch({ count: 1 }), { leaderEpoch: 0, isFromClient: true });
    assert.equal(r.baseOffset, 40n);
    await again.close();
  });
});

describe('PartitionLog group commit', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => ({ dir, cleanup } = await tempDir()));
  afterEach(async () => cleanup());

  it('settles concurrent appends one by one: dense offsets, per-append errors, duplicates, rolls inside a group', async () => {
    const { log, clock } = await openLog(dir, { segmentBytes: 2000, indexIntervalBytes: 100 });
    const client = { leaderEpoch: 0, isFromClient: true };
    const pending: Promise<unknown>[] = [];
    const expected: string[] = [];
    for (let i = 0; i < 60; i++) {
      const pid = BigInt(i % 3);
      const seq = Math.floor(i / 3);
      pending.push(log.append(batch({ producerId: pid, producerEpoch: 0, baseSequence: 2 * seq, count: 2, valueSize: 50, tag: `p${pid}s${seq}` }), client));
      expected.push(`p${pid}s${seq}-0`.padEnd(50, '.'), `p${pid}s${seq}-1`.padEnd(50, '.'));
      if (i === 10) pending.push(log.append(Buffer.from('not a batch at all, not at all........................................'), client));
      if (i === 20) pending.push(log.append(batch({ producerId: 0n, producerEpoch: 0, baseSequence: 99 }), client));
      if (i === 9) pending.push(log.append(batch({ producerId: 1n, producerEpoch: 0, baseSequence: 4, count: 2, valueSize: 50, tag: 'p1s2' }), client));
    }
    const settled = await Promise.allSettled(pending);
    const results = settled.map((s) => (s.status === 'fulfilled' ? (s.value as { baseOffset: bigint; duplicate: boolean }) : s.reason));
    const rejected = settled.filter((s) => s.status === 'rejected').map((s) => (s as PromiseRejectedResult).reason as KafkaError);
    assert.deepEqual(rejected.map((e) => e.code), [ErrorCode.CORRUPT_MESSAGE, ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER]);
    const appended = results.filter((r): r is { baseOffset: bigint; duplicate: boolean } => !(r instanceof Error) && !r.duplicate);
    assert.deepEqual(appended.map((r) => r.baseOffset), Array.from({ length: 60 }, (_, i) => BigInt(2 * i)));
    const dup = results.find((r) => !(r instanceof Error) && (r as { duplicate: boolean }).duplicate) as { baseOffset: bigint };
    assert.equal(dup.baseOffset, 14n, 'p1 seq 2 was the 8th append');
    assert.ok(log.closedSegments().length >= 3);
    assert.deepEqual(values(await readAll(log)), expected);
    await log.close();
    const { log: again } = await openLog(dir, { segmentBytes: 2000, indexIntervalBytes: 100 }, { clock, cleanShutdown: false, recoveryPoint: 0n });
    assert.deepEqual(values(await readAll(again)), expected);
    await again.close();
  });
});
