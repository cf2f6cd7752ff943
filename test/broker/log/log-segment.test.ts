import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { LogSegment, RESIDENT_READ_MAX_BYTES, RESIDENT_READ_WINDOW_MS } from '../../../broker/log/log-segment.js';
import { TimeIndex } from '../../../broker/log/time-index.js';
import { assignBaseOffset, buildRecordBatch, decodeRecordBatches } from '../../../broker/protocol/record-batch.js';
import { tempDir } from './helpers.js';

describe('LogSegment', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => ({ dir, cleanup } = await tempDir()));
  afterEach(async () => cleanup());

  /** Appends `n` batches of 2 records at 100 + 2i with timestamps 1000 + 10i. */
  async function filled(n: number, indexIntervalBytes = 100, now?: number): Promise<LogSegment> {
    const seg = await LogSegment.create(dir, 100n, { indexIntervalBytes, maxIndexBytes: 1 << 20 }, 0);
    for (let i = 0; i < n; i++) {
      const base = 100n + BigInt(2 * i);
      const b = buildRecordBatch({ records: [{ value: `v${i}a`, timestamp: 1000 + 10 * i }, { value: `v${i}b`, timestamp: 1000 + 10 * i + 5 }] });
      assignBaseOffset(b, 0, base);
      await seg.append(b, { firstOffset: base, lastOffset: base + 1n, maxTimestamp: BigInt(1000 + 10 * i + 5), offsetOfMaxTimestamp: base + 1n }, now);
    }
    return seg;
  }

  /** Counts the segment file's reads by path: on this thread (resident) or through the libuv pool. */
  function countReads(seg: LogSegment): { resident: number; pool: number } {
    const counts = { resident: 0, pool: 0 };
    const file = seg.log;
    const read = file.read.bind(file);
    const readResident = file.readResident.bind(file);
    file.read = (...args) => (counts.pool++, read(...args));
    file.readResident = (...args) => (counts.resident++, readResident(...args));
    return counts;
  }

  it('indexes every index.interval.bytes and translates offsets to batches', async () => {
    const seg = await filled(30);
    assert.ok(seg.offsetIndex.entries > 3);
    assert.ok(seg.timeIndex.entries > 3);
    assert.equal(seg.nextOffset, 160n);
    for (const target of [100n, 101n, 133n, 158n, 159n]) {
      const b = await seg.translateOffset(target);
      assert.ok(b !== null);
      assert.ok(b.header.baseOffset <= target && b.lastOffset >= target, `${target}`);
    }
    assert.equal(await seg.translateOffset(160n), null);
    await seg.close();
  });

  it('reads whole batches within maxBytes, maxPosition and maxOffset', async () => {
    const seg = await filled(10);
    const one = await seg.read(104n, 1, seg.size, true, 1000n);
    assert.deepEqual(decodeRecordBatches(one?.records ?? Buffer.alloc(0)).map((b) => b.header.baseOffset), [104n]);
    const none = await seg.read(104n, 1, seg.size, false, 1000n);
    assert.equal(none?.records.length, 0);
    const capped = await seg.read(100n, 1 << 20, seg.size, true, 106n);
    assert.deepEqual(decodeRecordBatches(capped?.records ?? Buffer.alloc(0)).map((b) => b.header.baseOffset), [100n, 102n, 104n]);
    assert.equal(await seg.read(200n, 100, seg.size, true, 1000n), null);
    await seg.close();
  });

  it('reads bytes written within the resident window on the calling thread, older or larger reads through the pool, the same bytes either way', async () => {
    const t0 = 1_000_000;
    const seg = await filled(10, 100, t0);
    const counts = countReads(seg);
    const pooled = await seg.read(102n, 1 << 20, seg.size, true, 1000n);
    assert.deepEqual(counts, { resident: 0, pool: 1 }, 'no clock: the pool');
    const recent = await seg.read(102n, 1 << 20, seg.size, true, 1000n, undefined, t0 + 1_000);
    assert.deepEqual(counts, { resident: 1, pool: 1 });
    assert.deepEqual(recent, pooled);
    const old = await seg.read(102n, 1 << 20, seg.size, true, 1000n, undefined, t0 + RESIDENT_READ_WINDOW_MS + 1);
    assert.deepEqual(counts, { resident: 1, pool: 2 }, 'written longer ago than the window: the pool');
    assert.deepEqual(old, pooled);
    await seg.truncateTo(106n);
    const before = { ...counts };
    await seg.read(100n, 1 << 20, seg.size, true, 1000n, undefined, t0 + 1_000);
    assert.deepEqual({ resident: counts.resident - before.resident, pool: counts.pool - before.pool }, { resident: 0, pool: 1 }, 'after a truncation nothing is known to be recent');
    await seg.close();
  });

  it('reads more than RESIDENT_READ_MAX_BYTES through the pool even when recent', async () => {
    const seg = await LogSegment.create(dir, 0n, { indexIntervalBytes: 4096, maxIndexBytes: 1 << 20 }, 0);
    const b = buildRecordBatch({ records: [{ value: Buffer.alloc(RESIDENT_READ_MAX_BYTES + 1, 7), timestamp: 1 }] });
    await seg.append(b, { firstOffset: 0n, lastOffset: 0n, maxTimestamp: 1n, offsetOfMaxTimestamp: 0n }, 0);
    const counts = countReads(seg);
    const r = await seg.read(0n, 1, seg.size, true, 10n, undefined, 1);
    assert.equal(r?.records.length, b.length);
    // The first read (the batch header and READ_SLACK) is small and recent; the batch itself is not small.
    assert.deepEqual(counts, { resident: 1, pool: 1 });
    await seg.close();
  });

  it('finds the first record at or after a timestamp, inside a batch', async () => {
    const seg = await filled(20);
    assert.deepEqual(await seg.findOffsetByTimestamp(0n, 100n), { timestamp: 1000n, offset: 100n, leaderEpoch: -1 });
    assert.deepEqual(await seg.findOffsetByTimestamp(1003n, 100n), { timestamp: 1005n, offset: 101n, leaderEpoch: -1 });
    assert.deepEqual(await seg.findOffsetByTimestamp(1150n, 100n), { timestamp: 1150n, offset: 130n, leaderEpoch: -1 });
    assert.deepEqual(await seg.findOffsetByTimestamp(1150n, 135n), { timestamp: 1175n, offset: 135n, leaderEpoch: -1 });
    assert.equal(await seg.findOffsetByTimestamp(5000n, 100n), null);
    await seg.close();
  });

  it('rolls on size, index fullness, offset overflow and segment.ms', async () => {
    const seg = await filled(3);
    const p = { segmentBytes: 10_000, segmentMs: 1000, messagesSize: 10, maxTimestampInMessages: 1030n, maxOffsetInMessages: 107n, now: 0 };
    assert.equal(seg.shouldRoll(p), false);
    assert.equal(seg.shouldRoll({ ...p, segmentBytes: seg.size + 5 }), true);
    assert.equal(seg.shouldRoll({ ...p, maxTimestampInMessages: 2006n }), true);
    assert.equal(seg.shouldRoll({ ...p, maxOffsetInMessages: 100n + (1n << 31n) }), true);
    await seg.close();
  });

  it('recover() rebuilds identical indexes and cuts a torn tail', async () => {
    const seg = await filled(25);
    const oi = Buffer.from(seg.offsetIndex.bytes());
    const ti = Buffer.from(seg.timeIndex.bytes());
    const size = seg.size;
    await seg.log.truncate(size - 10);
    const cut = await seg.recover(100n);
    assert.equal(cut, size - 10 - seg.size);
    assert.ok(cut > 0);
    assert.equal(seg.nextOffset, 148n);
    assert.deepEqual(seg.offsetIndex.bytes(), oi.subarray(0, seg.offsetIndex.sizeInBytes));
    const kept = new TimeIndex(100n, 1000, ti);
    kept.truncateTo(seg.nextOffset);
    assert.deepEqual(seg.timeIndex.bytes().subarray(0, kept.sizeInBytes), kept.bytes());
    // Recovery ends the time index with the largest timestamp, like a closed segment.
    assert.deepEqual(seg.timeIndex.lastEntry(), { timestamp: seg.maxTimestampSoFar, offset: 147n });
    await seg.close();
  });
});
