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
