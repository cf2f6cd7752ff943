import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CorruptIndexError, IndexOffsetOverflowError } from '../../../broker/log/abstract-index.js';
import { OffsetIndex } from '../../../broker/log/offset-index.js';

describe('OffsetIndex', () => {
  const base = 1000n;
  function filled(): OffsetIndex {
    const idx = new OffsetIndex(base, 100);
    idx.append(1010n, 100);
    idx.append(1020n, 200);
    idx.append(1030n, 300);
    return idx;
  }

  it('looks up the largest entry at or below the target', () => {
    const idx = filled();
    assert.deepEqual(idx.lookup(999n), { offset: base, position: 0 });
    assert.deepEqual(idx.lookup(1000n), { offset: base, position: 0 });
    assert.deepEqual(idx.lookup(1009n), { offset: base, position: 0 });
    assert.deepEqual(idx.lookup(1010n), { offset: 1010n, position: 100 });
    assert.deepEqual(idx.lookup(1019n), { offset: 1010n, position: 100 });
    assert.deepEqual(idx.lookup(1020n), { offset: 1020n, position: 200 });
    assert.deepEqual(idx.lookup(1030n), { offset: 1030n, position: 300 });
    assert.deepEqual(idx.lookup(1n << 40n), { offset: 1030n, position: 300 });
  });

  it('answers the base offset on an empty index', () => {
    const idx = new OffsetIndex(base, 10);
    assert.deepEqual(idx.lookup(5000n), { offset: base, position: 0 });
    assert.equal(idx.lastOffset, base);
  });

  it('binary search agrees with a linear scan on many entries', () => {
    const idx = new OffsetIndex(0n, 10_000);
    const entries: Array<[bigint, number]> = [];
    let off = 0n;
    for (let i = 0; i < 1000; i++) {
      off += BigInt(1 + (i % 7));
      entries.push([off, i * 50]);
      idx.append(off, i * 50);
    }
    for (let t = 0n; t < off + 5n; t++) {
      let expect = { offset: 0n, position: 0 };
      for (const [o, p] of entries) if (o <= t) expect = { offset: o, position: p };
      assert.deepEqual(idx.lookup(t), expect);
    }
  });

  it('rejects non-increasing offsets, overflow and a full index', () => {
    const idx = new OffsetIndex(base, 2);
    idx.append(1005n, 10);
    assert.throws(() => idx.append(1005n, 20), { name: 'RangeError', message: 'offset index entries must increase: 1005 after 1005' });
    assert.throws(() => new OffsetIndex(base, 2).append(base + (1n << 31n), 1), IndexOffsetOverflowError);
    idx.append(1006n, 20);
    assert.equal(idx.isFull, true);
    assert.throws(() => idx.append(1007n, 30), { name: 'RangeError', message: /offset index for base 1000 is full \(2 entries\)/ });
  });

  it('truncates entries at or after an offset', () => {
    const idx = filled();
    assert.equal(idx.truncateTo(1020n), 1);
    assert.equal(idx.lastOffset, 1010n);
    assert.equal(filled().truncateTo(1025n), 2);
    assert.equal(filled().truncateTo(0n), 0);
  });

  it('round-trips its bytes and sanity-checks damaged files', () => {
    const idx = filled();
    const copy = new OffsetIndex(base, 100, Buffer.from(idx.bytes()));
    copy.sanityCheck(400);
    assert.deepEqual(copy.lookup(1025n), { offset: 1020n, position: 200 });
    assert.throws(() => new OffsetIndex(base, 100, idx.bytes().subarray(0, 13)).sanityCheck(400), CorruptIndexError);
    assert.throws(() => copy.sanityCheck(250), CorruptIndexError);
    const swapped = Buffer.from(idx.bytes());
    swapped.copy(swapped, 0, 8, 16);
    assert.throws(() => new OffsetIndex(base, 100, swapped).sanityCheck(400), CorruptIndexError);
  });
});
