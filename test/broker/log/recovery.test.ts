import assert from 'node:assert/strict';
import { readFile, readdir, stat, truncate, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { batch, offsets, openLog, readAll, tempDir, values } from './helpers.js';

const client = { leaderEpoch: 0, isFromClient: true };

describe('recovery', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => ({ dir, cleanup } = await tempDir()));
  afterEach(async () => cleanup());
  const pdir = () => path.join(dir, 'topic-0');
  const logFile = (base = 0n) => path.join(pdir(), `${base.toString().padStart(20, '0')}.log`);

  /** Three batches of 3 records; returns the file size before the last batch. */
  async function writeThree(config = {}): Promise<{ before: number; total: number }> {
    const { log } = await openLog(dir, config);
    await log.append(batch({ count: 3, tag: 'a' }), client);
    await log.append(batch({ count: 3, tag: 'b' }), client);
    const before = (await stat(logFile())).size;
    await log.append(batch({ count: 3, tag: 'c', valueSize: 50 }), client);
    const total = (await stat(logFile())).size;
    await log.closeHandles();
    return { before, total };
  }

  it('cuts a torn last batch at every byte boundary and serves the valid prefix', async () => {
    const { before, total } = await writeThree();
    const original = await readFile(logFile());
    for (let cut = before; cut <= total; cut++) {
      await writeFile(logFile(), original.subarray(0, cut));
      const { log } = await openLog(dir);
      const whole = cut === total;
      assert.equal(log.logEndOffset, whole ? 9n : 6n, `cut at ${cut}`);
      assert.deepEqual(values(await readAll(log)), whole ? ['a-0', 'a-1', 'a-2', 'b-0', 'b-1', 'b-2', 'c-0'.padEnd(50, '.'), 'c-1'.padEnd(50, '.'), 'c-2'.padEnd(50, '.')] : ['a-0', 'a-1', 'a-2', 'b-0', 'b-1', 'b-2']);
      assert.equal((await stat(logFile())).size, whole ? total : before);
      // The next append continues right after the valid prefix.
      const r = await log.append(batch({ tag: 'n' }), client);
      assert.equal(r.baseOffset, whole ? 9n : 6n);
      await log.closeHandles();
      await writeFile(logFile(), original);
    }
  });

  it('drops everything from a flipped byte on', async () => {
    const { before, total } = await writeThree();
    const original = await readFile(logFile());
    for (const at of [before + 20, before + 61, total - 1, 30]) {
      const damaged = Buffer.from(original);
      damaged.writeUInt8((damaged[at] ?? 0) ^ 0x5a, at);
      await writeFile(logFile(), damaged);
      const { log } = await openLog(dir);
      const expectEnd = at < before / 2 ? 0n : 6n;
      assert.equal(log.logEndOffset, expectEnd, `flip at ${at}`);
      assert.equal(offsets(await readAll(log)).length, Number(expectEnd));
      await log.closeHandles();
      await writeFile(logFile(), original);
    }
  });

  it('rebuilds missing and damaged index files, even after a clean shutdown', async () => {
    const cfg = { indexIntervalBytes: 64, segmentBytes: 2000 };
    const { log, clock } = await openLog(dir, cfg);
    for (let i = 0; i < 40; i++) await log.append(batch({ count: 2, tag: `m${i}` }), client);
    const expected = values(await readAll(log));
    const lookups = await Promise.all([5n, 33n, 61n].map((o) => log.read(o, 1, { maxOffset: 80n, minOneBatch: true })));
    await log.close();
    const files = await readdir(pdir());
    const indexes = files.filter((f) => f.endsWith('.index'));
    assert.ok(indexes.length >= 2);
    await unlink(path.join(pdir(), indexes[0] as string));
    const tfile = path.join(pdir(), files.find((f) => f.endsWith('.timeindex')) as string);
    await truncate(tfile, Math.max(0, (await stat(tfile)).size - 5));
    const ofile = path.join(pdir(), indexes[1] as string);
    const obytes = await readFile(ofile);
    obytes.writeInt32BE(0x7fffff00, 4); // a position far past the log
    await writeFile(ofile, obytes);

    const { log: again } = await openLog(dir, cfg, { clock, cleanShutdown: true });
    assert.deepEqual(values(await readAll(again)), expected);
    for (const [i, o] of [5n, 33n, 61n].entries()) {
      const r = await again.read(o, 1, { maxOffset: 80n, minOneBatch: true });
      assert.equal(r.firstOffset, lookups[i]?.firstOffset);
    }
    await again.close();
    for (const f of indexes) assert.ok((await stat(path.join(pdir(), f))).size > 0, `${f} rebuilt`);
  });

  it('rebuilds index entries a crash kept from reaching the files: lookups by offset and timestamp stay right', async () => {
    // Index entries reach their files at flush, roll and close only: a crash loses the active segment's.
    const cfg = { indexIntervalBytes: 64, segmentBytes: 3000 };
    const { log, clock } = await openLog(dir, cfg);
    for (let i = 0; i < 60; i++) await log.append(batch({ count: 2, valueSize: 20, tag: `k${i}`, timestamp: 1_700_000_000_000 + 100 * i }), client);
    await log.flush();
    for (let i = 60; i < 90; i++) await log.append(batch({ count: 2, valueSize: 20, tag: `k${i}`, timestamp: 1_700_000_000_000 + 100 * i }), client);
    assert.ok(log.closedSegments().length >= 1);
    const active = log.activeSegment();
    const memOffsetIndex = Buffer.from(active.offsetIndex.bytes());
    const memTimeIndex = Buffer.from(active.timeIndex.bytes());
    assert.ok((await readFile(active.files.offsetIndex)).length < memOffsetIndex.length, 'the crash loses index entries');
    // Closed segments were written whole at the roll.
    for (const s of log.closedSegments()) {
      assert.deepEqual(await readFile(s.files.offsetIndex), s.offsetIndex.bytes());
      assert.deepEqual(await readFile(s.files.timeIndex), s.timeIndex.bytes());
    }
    const end = log.logEndOffset;
    const byOffset = [];
    for (let o = 0n; o < end; o++) byOffset.push((await log.read(o, 1, { maxOffset: end, minOneBatch: true })).firstOffset);
    const stamps = [0, 1, 150, 4_050, 6_000, 7_999, 8_901, 9_000].map((d) => BigInt(1_700_000_000_000 + d));
    const byTime = await Promise.all(stamps.map((t) => log.offsetForTimestamp(t)));
    const expected = values(await readAll(log));
    const rp = log.recoveryPoint;
    await log.closeHandles();

    for (const recoveryPoint of [rp, undefined]) {
      const { log: again } = await openLog(dir, cfg, { clock, ...(recoveryPoint === undefined ? {} : { recoveryPoint }) });
      const seg = again.activeSegment();
      assert.deepEqual(seg.offsetIndex.bytes(), memOffsetIndex);
      assert.deepEqual(seg.timeIndex.bytes().subarray(0, memTimeIndex.length), memTimeIndex);
      assert.deepEqual(await readFile(seg.files.offsetIndex), memOffsetIndex);
      for (let o = 0n; o < end; o++) {
        assert.equal((await again.read(o, 1, { maxOffset: end, minOneBatch: true })).firstOffset, byOffset[Number(o)], `offset ${o}`);
      }
      assert.deepEqual(await Promise.all(stamps.map((t) => again.offsetForTimestamp(t))), byTime);
      assert.deepEqual(values(await readAll(again)), expected);
      await again.closeHandles();
    }
  });

  it('keeps trusted segments below the recovery point and truncates the active tail', async () => {
    const cfg = { segmentBytes: 500 };
    const { log, clock } = await openLog(dir, cfg);
    for (let i = 0; i < 12; i++) await log.append(batch({ count: 1, valueSize: 80, tag: `r${i}` }), client);
    await log.flush();
    const rp = log.recoveryPoint;
    const active = log.activeSegment();
    const activeFile = active.files.log;
    const size = active.size;
    await log.closeHandles();
    await truncate(activeFile, size - 7);
    const { log: again } = await openLog(dir, cfg, { clock, recoveryPoint: rp });
    assert.equal(again.logEndOffset, 11n);
    assert.deepEqual(values(await readAll(again)).length, 11);
    await again.close();
  });

  it('deletes segments that follow a corrupt one', async () => {
    const cfg = { segmentBytes: 400 };
    const { log, clock } = await openLog(dir, cfg);
    for (let i = 0; i < 12; i++) await log.append(batch({ count: 1, valueSize: 80 }), client);
    const segs = log.closedSegments();
    assert.ok(segs.length >= 2);
    const victim = segs[1];
    assert.ok(victim);
    const victimNext = victim.baseOffset;
    await log.closeHandles();
    await truncate(victim.files.log, 30);
    const { log: again } = await openLog(dir, cfg, { clock });
    assert.equal(again.logEndOffset, victimNext);
    assert.equal(again.closedSegments().length, 1);
    await again.close();
  });
});
