import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CorruptIndexError } from '../../../broker/log/abstract-index.js';
import { TimeIndex } from '../../../broker/log/time-index.js';

describe('TimeIndex', () => {
  it('keeps only increasing timestamps and looks up the floor entry', () => {
    const idx = new TimeIndex(100n, 10);
    assert.notEqual(idx.maybeAppend(1000n, 105n), null);
    assert.equal(idx.maybeAppend(1000n, 110n), null);
    assert.equal(idx.maybeAppend(900n, 111n), null);
    assert.notEqual(idx.maybeAppend(2000n, 120n), null);
    assert.deepEqual(idx.lookup(999n), { timestamp: -1n, offset: 100n });
    assert.deepEqual(idx.lookup(1000n), { timestamp: 1000n, offset: 105n });
    assert.deepEqual(idx.lookup(1999n), { timestamp: 1000n, offset: 105n });
    assert.deepEqual(idx.lookup(5000n), { timestamp: 2000n, offset: 120n });
    assert.deepEqual(idx.lastEntry(), { timestamp: 2000n, offset: 120n });
  });

  it('rejects decreasing offsets and lets the final entry past a full index', () => {
    const idx = new TimeIndex(0n, 1);
    idx.maybeAppend(10n, 5n);
    assert.throws(() => idx.maybeAppend(20n, 6n), { name: 'RangeError', message: 'time index for base 0 is full' });
    assert.notEqual(idx.maybeAppend(20n, 6n, true), null);
    assert.throws(() => idx.maybeAppend(30n, 1n, true), { name: 'RangeError', message: 'time index offsets must not decrease: 1 after 6' });
  });

  it('truncates and sanity-checks', () => {
    const idx = new TimeIndex(0n, 10);
    idx.maybeAppend(10n, 5n);
    idx.maybeAppend(20n, 15n);
    idx.maybeAppend(30n, 25n);
    const copy = new TimeIndex(0n, 10, Buffer.from(idx.bytes()));
    copy.sanityCheck();
    assert.equal(copy.truncateTo(15n), 1);
    assert.throws(() => new TimeIndex(0n, 10, idx.bytes().subarray(0, 20)).sanityCheck(), CorruptIndexError);
    const bad = Buffer.from(idx.bytes());
    bad.writeBigInt64BE(5n, 12);
    assert.throws(() => new TimeIndex(0n, 10, bad).sanityCheck(), CorruptIndexError);
  });
});
