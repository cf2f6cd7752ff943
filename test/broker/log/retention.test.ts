import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { ErrorCode, KafkaError } from '../../../broker/protocol/errors.js';
import { batch, offsets, openLog, readAll, tempDir } from './helpers.js';

const client = { leaderEpoch: 0, isFromClient: true };
const HOUR = 3_600_000;

describe('roll, retention and DeleteRecords', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => ({ dir, cleanup } = await tempDir()));
  afterEach(async () => cleanup());

  it('rolls by segment.ms on append (batch timestamps) and when idle (clock)', async () => {
    const { log, clock } = await openLog(dir, { segmentMs: HOUR });
    await log.append(batch({ timestamp: clock.now() }), client);
    await log.append(batch({ timestamp: clock.now() + HOUR - 1 }), client);
    assert.equal(log.closedSegments().length, 0);
    await log.append(batch({ timestamp: clock.now() + HOUR + 1 }), client);
    assert.equal(log.closedSegments().length, 1);
    assert.equal(log.activeSegment().baseOffset, 2n);
    assert.equal(await log.maybeRoll(clock.now()), false);
    clock.advance(2 * HOUR + 2);
    assert.equal(await log.maybeRoll(clock.now()), true);
    assert.equal(log.activeSegment().baseOffset, 3n);
    assert.equal(log.activeSegment().isEmpty, true);
    assert.equal(await log.maybeRoll(clock.now() + 10 * HOUR), false, 'an empty segment never rolls');
    await log.close();
  });

  it('deletes closed segments past retention.ms, oldest first, and moves the log start offset', async () => {
    const { log, clock } = await openLog(dir, { segmentBytes: 300, retentionMs: 10 * HOUR });
    const t0 = clock.now();
    for (let i = 0; i < 6; i++) await log.append(batch({ count: 1, valueSize: 100, timestamp: t0 + i * HOUR }), client);
    const segs = log.closedSegments().length;
    assert.ok(segs >= 3);
    const r0 = await log.applyRetention(t0 + 10 * HOUR);
    assert.equal(r0.deletedSegments, 0);
    const r1 = await log.applyRetention(t0 + 11 * HOUR + 1);
    assert.ok(r1.deletedSegments >= 1);
    assert.deepEqual(r1.reasons, ['retention-ms']);
    assert.equal(log.logStartOffset, log.closedSegments()[0]?.baseOffset ?? log.activeSegment().baseOffset);
    assert.ok(log.logStartOffset > 0n);
    await assert.rejects(log.read(0n, 100, { maxOffset: 6n, minOneBatch: true }), (e: unknown) => e instanceof KafkaError && e.code === ErrorCode.OFFSET_OUT_OF_RANGE);
    // Everything expired: the partition keeps an empty active segment at the log end.
    const r2 = await log.applyRetention(t0 + 100 * HOUR);
    assert.ok(r2.deletedSegments >= 1);
    assert.equal(log.logStartOffset, 6n);
    assert.equal(log.logEndOffset, 6n);
    assert.equal(log.activeSegment().baseOffset, 6n);
    const files = await readdir(path.join(dir, 'topic-0'));
    assert.deepEqual(files.filter((f) => f.endsWith('.log')), ['00000000000000000006.log']);
    assert.deepEqual(files.filter((f) => f.endsWith('.snapshot')), ['00000000000000000006.snapshot']);
    const next = await log.append(batch({}), client);
    assert.equal(next.baseOffset, 6n);
    await log.close();
  });

  it('deletes by retention.bytes while the rest stays at or above the limit', async () => {
    const { log, clock } = await openLog(dir, { segmentBytes: 400, retentionBytes: 800 });
    for (let i = 0; i < 12; i++) await log.append(batch({ count: 1, valueSize: 100 }), client);
    const before = log.size;
    const r = await log.applyRetention(clock.now());
    assert.ok(r.deletedSegments >= 1);
    assert.deepEqual(r.reasons, ['retention-bytes']);
    assert.ok(log.size >= 800 || log.closedSegments().length === 0);
    assert.ok(log.size < before);
    assert.equal(offsets(await readAll(log)).at(-1), 11n);
    await log.close();
  });

  it('lets a veto keep segments (tiered storage hook)', async () => {
    const { log, clock } = await openLog(dir, { segmentBytes: 300, retentionMs: 1 }, { canDeleteSegment: (s) => s.baseOffset < 1n });
    for (let i = 0; i < 6; i++) await log.append(batch({ count: 1, valueSize: 100, timestamp: clock.now() }), client);
    const r = await log.applyRetention(clock.now() + 10);
    assert.equal(r.deletedSegments, 1);
    await log.close();
  });

  it('DeleteRecords advances the log start offset and refuses to pass the high watermark', async () => {
    const { log } = await openLog(dir, { segmentBytes: 300 });
    for (let i = 0; i < 6; i++) await log.append(batch({ count: 2, valueSize: 60 }), client);
    await assert.rejects(log.deleteRecordsBefore(13n), (e: unknown) => e instanceof KafkaError && e.code === ErrorCode.OFFSET_OUT_OF_RANGE);
    const segsBefore = log.closedSegments().length;
    assert.equal(await log.deleteRecordsBefore(5n), 5n);
    assert.equal(log.logStartOffset, 5n);
    assert.ok(log.closedSegments().length < segsBefore);
    await assert.rejects(log.read(4n, 100, { maxOffset: 12n, minOneBatch: true }), (e: unknown) => e instanceof KafkaError && e.code === ErrorCode.OFFSET_OUT_OF_RANGE);
    const r = await log.read(5n, 1 << 20, { maxOffset: 12n, minOneBatch: true });
    assert.equal(r.firstOffset, 4n, 'the batch holding the start offset is served whole');
    assert.equal(await log.deleteRecordsBefore(3n), 5n, 'never moves back');
    assert.equal(await log.deleteRecordsBefore(12n), 12n);
    await log.close();
    const { log: again } = await openLog(dir, { segmentBytes: 300 }, { logStartOffset: 12n, cleanShutdown: true });
    assert.equal(again.logStartOffset, 12n);
    await again.close();
  });

  it('finds offsets by timestamp and the max-timestamp record', async () => {
    const { log, clock } = await openLog(dir, { segmentBytes: 400, indexIntervalBytes: 50 });
    const t0 = clock.now();
    for (let i = 0; i < 10; i++) await log.append(batch({ count: 3, timestamp: t0 + i * 1000 }), client);
    assert.deepEqual(await log.offsetForTimestamp(BigInt(t0)), { timestamp: BigInt(t0), offset: 0n, leaderEpoch: 0 });
    assert.deepEqual(await log.offsetForTimestamp(BigInt(t0 + 1)), { timestamp: BigInt(t0 + 1), offset: 1n, leaderEpoch: 0 });
    assert.deepEqual(await log.offsetForTimestamp(BigInt(t0 + 3)), { timestamp: BigInt(t0 + 1000), offset: 3n, leaderEpoch: 0 });
    assert.deepEqual(await log.offsetForTimestamp(BigInt(t0 + 7002)), { timestamp: BigInt(t0 + 7002), offset: 23n, leaderEpoch: 0 });
    assert.equal(await log.offsetForTimestamp(BigInt(t0 + 20_000)), null);
    assert.deepEqual(await log.maxTimestampOffset(), { timestamp: BigInt(t0 + 9002), offset: 29n, leaderEpoch: 0 });
    await log.close();
  });

  it('stamps LogAppendTime and records leader epochs', async () => {
    const { log, clock } = await openLog(dir, { messageTimestampType: 'LogAppendTime' });
    const r = await log.append(batch({ timestamp: 5 }), { leaderEpoch: 3, isFromClient: true });
    assert.equal(r.logAppendTime, BigInt(clock.now()));
    await log.append(batch({}), { leaderEpoch: 4, isFromClient: true });
    assert.deepEqual(log.leaderEpochEntries(), [{ epoch: 3, startOffset: 0n }, { epoch: 4, startOffset: 1n }]);
    assert.deepEqual(log.endOffsetForEpoch(3), { epoch: 3, endOffset: 1n });
    const ts = await log.offsetForTimestamp(BigInt(clock.now()));
    assert.equal(ts?.offset, 0n);
    await log.close();
  });
});
