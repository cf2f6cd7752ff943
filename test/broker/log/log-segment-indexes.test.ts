// The offset and time indexes of a segment live in memory and reach their files
// in one write per flush / roll / close: lookups see every entry before any
// write, and the files end up byte-identical to what writing each entry as it
// was appended (the former behaviour, Kafka's mmap'd index) produces.
import assert from 'node:assert/strict';
import { mkdir, open, readFile, stat } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { afterEach, beforeEach, describe, it } from 'node:test';
import fc from 'fast-check';
import { type AppendMeta, LogSegment } from '../../../broker/log/log-segment.js';
import { OFFSET_INDEX_ENTRY_SIZE, OffsetIndex } from '../../../broker/log/offset-index.js';
import { NO_TIMESTAMP, TIME_INDEX_ENTRY_SIZE, TimeIndex } from '../../../broker/log/time-index.js';
import { assignBaseOffset, buildRecordBatch } from '../../../broker/protocol/record-batch.js';
import { tempDir } from './helpers.js';

const BASE = 100n;

/** A batch of `count` records at `base` with timestamps ts, ts+1, ...; returns it with its append metadata. */
function batchAt(base: bigint, count: number, valueSize: number, ts: number): { records: Buffer; meta: AppendMeta } {
  const records = buildRecordBatch({
    records: Array.from({ length: count }, (_, i) => ({ key: null, value: `${base + BigInt(i)}:`.padEnd(valueSize, 'x'), timestamp: ts + i })),
  });
  assignBaseOffset(records, 0, base);
  const last = base + BigInt(count - 1);
  return { records, meta: { firstOffset: base, lastOffset: last, maxTimestamp: BigInt(ts + count - 1), offsetOfMaxTimestamp: last } };
}

/**
 * The former write path, kept as the reference: Kafka's rule (an entry when more
 * than index.interval.bytes went in since the last one), each entry written to
 * its file at its position the moment it is appended.
 */
class PerAppendReference {
  private readonly offsetIndex: OffsetIndex;
  private readonly timeIndex: TimeIndex;
  private bytesSinceLastIndexEntry = 0;
  private position = 0;
  private maxTs = { timestamp: NO_TIMESTAMP, offset: -1n };

  private constructor(
    private readonly dir: string,
    private readonly oFile: FileHandle,
    private readonly tFile: FileHandle,
    private readonly interval: number,
    maxIndexBytes: number,
  ) {
    this.offsetIndex = new OffsetIndex(BASE, Math.max(1, Math.floor(maxIndexBytes / OFFSET_INDEX_ENTRY_SIZE)));
    this.timeIndex = new TimeIndex(BASE, Math.max(1, Math.floor(maxIndexBytes / TIME_INDEX_ENTRY_SIZE)));
  }

  static async create(dir: string, interval: number, maxIndexBytes: number): Promise<PerAppendReference> {
    return new PerAppendReference(dir, await open(`${dir}/ref.index`, 'w+'), await open(`${dir}/ref.timeindex`, 'w+'), interval, maxIndexBytes);
  }

  async append(parts: ReadonlyArray<{ records: Buffer; meta: AppendMeta }>): Promise<void> {
    for (const { records, meta } of parts) {
      if (meta.maxTimestamp > this.maxTs.timestamp) this.maxTs = { timestamp: meta.maxTimestamp, offset: meta.offsetOfMaxTimestamp };
      if (this.bytesSinceLastIndexEntry > this.interval && !this.offsetIndex.isFull && !this.timeIndex.isFull) {
        const at = this.offsetIndex.sizeInBytes;
        await this.oFile.write(Buffer.from(this.offsetIndex.append(meta.lastOffset, this.position)), 0, OFFSET_INDEX_ENTRY_SIZE, at);
        const tAt = this.timeIndex.sizeInBytes;
        const t = this.timeIndex.maybeAppend(this.maxTs.timestamp, this.maxTs.offset);
        if (t !== null) await this.tFile.write(Buffer.from(t), 0, TIME_INDEX_ENTRY_SIZE, tAt);
        this.bytesSinceLastIndexEntry = 0;
      }
      this.bytesSinceLastIndexEntry += records.length;
      this.position += records.length;
    }
  }

  async becomeInactive(): Promise<void> {
    if (this.maxTs.timestamp < 0n) return;
    const tAt = this.timeIndex.sizeInBytes;
    const t = this.timeIndex.maybeAppend(this.maxTs.timestamp, this.maxTs.offset, true);
    if (t !== null) await this.tFile.write(Buffer.from(t), 0, TIME_INDEX_ENTRY_SIZE, tAt);
  }

  async files(): Promise<{ offsetIndex: Buffer; timeIndex: Buffer }> {
    // By path: FileHandle.readFile reads from the handle's current position.
    return { offsetIndex: await readFile(`${this.dir}/ref.index`), timeIndex: await readFile(`${this.dir}/ref.timeindex`) };
  }

  async close(): Promise<void> {
    await this.oFile.close();
    await this.tFile.close();
  }
}

async function segmentFiles(seg: LogSegment): Promise<{ offsetIndex: Buffer; timeIndex: Buffer }> {
  return { offsetIndex: await readFile(seg.files.offsetIndex), timeIndex: await readFile(seg.files.timeIndex) };
}

describe('LogSegment index files', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => ({ dir, cleanup } = await tempDir()));
  afterEach(async () => cleanup());

  it('serves lookups by offset and timestamp from entries no file holds yet', async () => {
    const seg = await LogSegment.create(dir, BASE, { indexIntervalBytes: 100, maxIndexBytes: 1 << 20 }, 0);
    let next = BASE;
    for (let i = 0; i < 40; i++) {
      const b = batchAt(next, 3, 40, 1000 + 10 * i);
      await seg.append(b.records, b.meta);
      next += 3n;
    }
    assert.ok(seg.offsetIndex.entries >= 10, `entries: ${seg.offsetIndex.entries}`);
    assert.ok(seg.timeIndex.entries >= 10);
    assert.equal((await stat(seg.files.offsetIndex)).size, 0);
    assert.equal((await stat(seg.files.timeIndex)).size, 0);
    for (let o = BASE; o < next; o += 7n) {
      const b = await seg.translateOffset(o);
      assert.ok(b !== null && b.header.baseOffset <= o && b.lastOffset >= o, `offset ${o}`);
      // The scan starts at an index entry, not at the file's start.
      if (o > BASE + 30n) assert.ok(seg.offsetIndex.lookup(o).position > 0);
    }
    // Batch i holds offsets 100+3i.. with timestamps 1000+10i..
    assert.deepEqual(await seg.findOffsetByTimestamp(1255n, BASE), { timestamp: 1260n, offset: 178n, leaderEpoch: -1 });
    assert.deepEqual(await seg.findOffsetByTimestamp(1391n, BASE), { timestamp: 1391n, offset: 218n, leaderEpoch: -1 });
    await seg.flush();
    assert.deepEqual(await readFile(seg.files.offsetIndex), seg.offsetIndex.bytes());
    assert.deepEqual(await readFile(seg.files.timeIndex), seg.timeIndex.bytes());
    await seg.close();
  });

  it('after flush, roll and close the files equal what per-append writing produced', async () => {
    type Op = { kind: 'append'; batches: Array<{ count: number; size: number; tsStep: number }> } | { kind: 'flush' } | { kind: 'flushDuringAppend'; count: number; size: number };
    const op: fc.Arbitrary<Op> = fc.oneof(
      { weight: 6, arbitrary: fc.record({ kind: fc.constant('append' as const), batches: fc.array(fc.record({ count: fc.integer({ min: 1, max: 4 }), size: fc.integer({ min: 0, max: 400 }), tsStep: fc.integer({ min: -50, max: 50 }) }), { minLength: 1, maxLength: 4 }) }) },
      { weight: 1, arbitrary: fc.constant({ kind: 'flush' as const }) },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant('flushDuringAppend' as const), count: fc.integer({ min: 1, max: 3 }), size: fc.integer({ min: 0, max: 300 }) }) },
    );
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(op, { minLength: 1, maxLength: 40 }),
        fc.constantFrom(0, 1, 64, 200, 1000, 4096),
        fc.constantFrom(1 << 20, 48, 120),
        fc.constantFrom('roll', 'close'),
        async (ops, interval, maxIndexBytes, ending) => {
          const sub = `${dir}/run-${run++}`;
          await mkdir(sub);
          const seg = await LogSegment.create(sub, BASE, { indexIntervalBytes: interval, maxIndexBytes }, 0);
          const ref = await PerAppendReference.create(sub, interval, maxIndexBytes);
          let next = BASE;
          let ts = 10_000;
          const make = (count: number, size: number, tsStep: number): { records: Buffer; meta: AppendMeta } => {
            ts += tsStep;
            const b = batchAt(next, count, size, ts);
            next += BigInt(count);
            return b;
          };
          const check = async (what: string): Promise<void> => {
            const got = await segmentFiles(seg);
            const want = await ref.files();
            assert.deepEqual(got.offsetIndex, want.offsetIndex, `${what}: .index`);
            assert.deepEqual(got.timeIndex, want.timeIndex, `${what}: .timeindex`);
          };
          for (const o of ops) {
            if (o.kind === 'append') {
              const parts = o.batches.map((b) => make(b.count, b.size, b.tsStep));
              await seg.appendMany(parts);
              await ref.append(parts);
            } else if (o.kind === 'flush') {
              await seg.flush();
              await check('flush');
            } else {
              // PartitionLog.flush() is not serialised with appends: a flush may overlap one.
              const part = make(o.count, o.size, 1);
              const flushing = seg.flush();
              await Promise.all([seg.appendMany([part]), flushing]);
              await ref.append([part]);
              await seg.flush();
              await check('flush during append');
            }
          }
          // The in-memory indexes are what lookups use: the same entries as the reference.
          await seg.writeIndexTails();
          await check('writeIndexTails');
          if (ending === 'roll') {
            await seg.onBecomeInactive();
            await ref.becomeInactive();
            await check('roll (before its flush)');
            await seg.flush();
            await seg.releaseIndexHandles();
          } else {
            await seg.onBecomeInactive();
            await ref.becomeInactive();
            await seg.close();
          }
          await check(ending);
          await ref.close();
          if (ending === 'roll') await seg.close();
          // Reopened, the files pass the sanity check and give back the same entries.
          const { segment, indexesValid } = await LogSegment.open(sub, BASE, { indexIntervalBytes: interval, maxIndexBytes }, 0);
          assert.equal(indexesValid, true);
          assert.deepEqual(segment.offsetIndex.bytes(), await readFile(`${sub}/ref.index`));
          assert.deepEqual(segment.timeIndex.bytes(), await readFile(`${sub}/ref.timeindex`));
          await segment.close();
        },
      ),
      { numRuns: 80 },
    );
  });
});
