import assert from 'node:assert/strict';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import fc from 'fast-check';
import { IndexFile } from '../../../broker/log/index-file.js';
import { OffsetIndex } from '../../../broker/log/offset-index.js';
import { tempDir } from './helpers.js';

describe('IndexFile', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => ({ dir, cleanup } = await tempDir()));
  afterEach(async () => cleanup());

  it('writes only the tail past what the file holds, and cuts the file when the index shrank', async () => {
    const file = path.join(dir, 'a.index');
    const f = new IndexFile(file);
    await f.truncate(0);
    const idx = new OffsetIndex(0n, 100);
    for (let i = 1; i <= 5; i++) idx.append(BigInt(i * 10), i * 100);
    await f.writeTail(idx.takeUnwritten());
    assert.deepEqual(await readFile(file), idx.bytes());
    // Nothing new: no write (the file is left alone even if changed behind our back).
    await writeFile(file, Buffer.concat([idx.bytes().subarray(0, 8), Buffer.alloc(32, 0xee)]));
    await f.writeTail(idx.takeUnwritten());
    assert.equal((await readFile(file)).subarray(8, 40).every((b) => b === 0xee), true);
    // Only the new entry is written.
    idx.append(60n, 600);
    await f.writeTail(idx.takeUnwritten());
    const now = await readFile(file);
    assert.equal(now.subarray(8, 40).every((b) => b === 0xee), true);
    assert.deepEqual(now.subarray(40), idx.bytes().subarray(40));
    await writeFile(file, idx.bytes());
    idx.truncateTo(30n);
    await f.writeTail(idx.takeUnwritten());
    assert.deepEqual(await readFile(file), idx.bytes());
    assert.equal(f.writtenBytes, 16);
    // Cut and regrown to the same length between two writes: the changed bytes still go out.
    idx.truncateTo(20n);
    idx.append(25n, 250);
    await f.writeTail(idx.takeUnwritten());
    assert.deepEqual(await readFile(file), idx.bytes());
    await f.close();
  });

  it('continues after the entries loaded from an existing file', async () => {
    const file = path.join(dir, 'b.index');
    const idx = new OffsetIndex(0n, 100);
    idx.append(1n, 0);
    idx.append(2n, 50);
    await writeFile(file, idx.bytes());
    const f = new IndexFile(file);
    const loaded = await f.load();
    assert.ok(loaded !== null);
    const again = new OffsetIndex(0n, 100, loaded);
    again.append(3n, 90);
    await f.writeTail(again.takeUnwritten());
    assert.deepEqual(await readFile(file), again.bytes());
    await f.close();
  });

  it('queues concurrent tail writes and flushes in call order; the file always ends up equal to the index', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.constantFrom('append', 'write', 'flush', 'shrink'), { minLength: 1, maxLength: 60 }), async (ops) => {
        const file = path.join(dir, `p-${Math.random().toString(36).slice(2)}.index`);
        const f = new IndexFile(file);
        await f.truncate(0);
        const idx = new OffsetIndex(0n, 1000);
        let next = 1n;
        const pending: Promise<void>[] = [];
        for (const op of ops) {
          if (op === 'append') idx.append(next, Number(next) * 7);
          else if (op === 'write') pending.push(f.writeTail(idx.takeUnwritten()));
          else if (op === 'flush') pending.push(f.flush());
          else idx.truncateTo(idx.lastOffset);
          next++;
        }
        pending.push(f.writeTail(idx.takeUnwritten()));
        await Promise.all(pending);
        assert.deepEqual(await readFile(file), Buffer.from(idx.bytes()));
        await f.close();
      }),
      { numRuns: 40 },
    );
  });

  it('a failed write sticks until the file is rewritten', async () => {
    const file = path.join(dir, 'missing-dir', 'c.index');
    const f = new IndexFile(file);
    const idx = new OffsetIndex(0n, 10);
    idx.append(1n, 0);
    // The file's directory is missing: the open fails, and so does every later write and flush.
    const missing = { code: 'ENOENT', syscall: 'open', path: file };
    await assert.rejects(f.writeTail(idx.takeUnwritten()), missing);
    await assert.rejects(f.flush(), missing);
    idx.append(2n, 10);
    await assert.rejects(f.writeTail(idx.takeUnwritten()), missing);
    await mkdir(path.dirname(file));
    await f.rewrite(idx.bytes());
    idx.markWritten();
    idx.append(3n, 20);
    await f.writeTail(idx.takeUnwritten());
    await f.flush();
    assert.deepEqual(await readFile(file), idx.bytes());
    await f.close();
  });
});
