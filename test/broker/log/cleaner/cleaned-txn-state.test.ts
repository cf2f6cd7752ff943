import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CleanedTxnState } from '../../../../broker/log/cleaner/cleaned-txn-state.js';
import type { AbortedTxn } from '../../../../broker/log/txn-index.js';

const ABORT = 0;
const COMMIT = 1;
const data = (producerId: bigint, lastOffset: bigint, isTransactional = true) => ({ producerId, lastOffset, isTransactional });

describe('CleanedTxnState', () => {
  it('flags the batches of aborted transactions and keeps the ABORT marker while some were seen', () => {
    const state = new CleanedTxnState();
    const retained: AbortedTxn[] = [];
    state.onRetainedAbort = (t) => retained.push(t);
    const t1: AbortedTxn = { producerId: 1n, firstOffset: 0n, lastOffset: 5n, lastStableOffset: 6n };
    state.addAbortedTransactions([t1, t1]);
    assert.equal(state.onBatchRead(data(1n, 1n)), true, 'aborted data');
    assert.equal(state.onBatchRead(data(2n, 2n)), false, 'another producer commits');
    assert.equal(state.onBatchRead(data(3n, 3n, false)), false, 'not transactional');
    assert.equal(state.onControlBatchRead(data(1n, 5n), ABORT), false, 'its data was seen: the marker stays');
    assert.deepEqual(retained, [t1]);
    assert.equal(state.onControlBatchRead(data(2n, 6n), COMMIT), false, 'committed data seen: the marker stays');
    assert.equal(state.onControlBatchRead(data(2n, 9n), COMMIT), true, 'a second COMMIT with no data in between may go');
  });

  it('lets an ABORT marker go once no batch of its transaction is left', () => {
    const state = new CleanedTxnState();
    const retained: AbortedTxn[] = [];
    state.onRetainedAbort = (t) => retained.push(t);
    state.addAbortedTransactions([{ producerId: 7n, firstOffset: 10n, lastOffset: 12n, lastStableOffset: 13n }]);
    assert.equal(state.onBatchRead(data(8n, 11n)), false);
    assert.equal(state.onControlBatchRead(data(7n, 12n), ABORT), true);
    assert.deepEqual(retained, []);
    // The producer's next transaction is not mistaken for the aborted one.
    assert.equal(state.onBatchRead(data(7n, 20n)), false);
  });

  it('treats an emptied control batch as removable and unknown control types as kept', () => {
    const state = new CleanedTxnState();
    assert.equal(state.onControlBatchRead(data(1n, 3n), null), true);
    assert.equal(state.onControlBatchRead(data(1n, 4n), 2), false);
  });
});
