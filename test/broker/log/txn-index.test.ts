import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CorruptIndexError } from '../../../broker/log/abstract-index.js';
import { ABORTED_TXN_SIZE, TransactionIndex } from '../../../broker/log/txn-index.js';

describe('TransactionIndex', () => {
  const t = (pid: bigint, first: bigint, last: bigint, lso: bigint) => ({ producerId: pid, firstOffset: first, lastOffset: last, lastStableOffset: lso });

  it('encodes 34-byte entries and collects aborted transactions in a range', () => {
    const idx = new TransactionIndex(0n);
    assert.equal(idx.append(t(1n, 0n, 10n, 11n)).length, ABORTED_TXN_SIZE);
    idx.append(t(2n, 5n, 20n, 21n));
    idx.append(t(3n, 30n, 40n, 41n));
    const r = idx.collectAbortedTxns(12n, 35n);
    assert.deepEqual(r.abortedTransactions.map((a) => a.producerId), [2n, 3n]);
    assert.equal(r.isComplete, true);
    const open = idx.collectAbortedTxns(0n, 100n);
    assert.equal(open.isComplete, false);
    assert.equal(open.abortedTransactions.length, 3);
    const copy = new TransactionIndex(0n, Buffer.from(idx.bytes()));
    copy.sanityCheck();
    assert.deepEqual(copy.all(), idx.all());
    assert.equal(copy.truncateTo(20n), 1);
  });

  it('rejects out-of-order entries and partial files', () => {
    const idx = new TransactionIndex(0n);
    idx.append(t(1n, 0n, 10n, 11n));
    assert.throws(() => idx.append(t(1n, 0n, 10n, 11n)), { name: 'RangeError', message: /aborted txn last offset 10 is not after the previous 10/ });
    assert.throws(() => new TransactionIndex(0n, idx.bytes().subarray(0, 30)).sanityCheck(), CorruptIndexError);
  });
});
