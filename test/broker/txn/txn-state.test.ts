import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KafkaError, ErrorCode } from '../../../broker/protocol/errors.js';
import { TXN_STATE_IDS, bumpedEpoch, canTransition, newTxnMetadata, transition, txnStateFromId, withPartitions, type TxnState } from '../../../broker/txn/txn-state.js';

const ALL = Object.keys(TXN_STATE_IDS) as TxnState[];

test('legal transitions are exactly Kafka’s', () => {
  const legal = new Set([
    'Empty->Empty', 'CompleteCommit->Empty', 'CompleteAbort->Empty',
    'Ongoing->Ongoing', 'Empty->Ongoing', 'CompleteCommit->Ongoing', 'CompleteAbort->Ongoing',
    'Ongoing->PrepareCommit',
    'Ongoing->PrepareAbort', 'PrepareEpochFence->PrepareAbort', 'Empty->PrepareAbort', 'CompleteCommit->PrepareAbort', 'CompleteAbort->PrepareAbort',
    'PrepareCommit->CompleteCommit', 'PrepareAbort->CompleteAbort',
    'Empty->Dead', 'CompleteCommit->Dead', 'CompleteAbort->Dead',
    'Ongoing->PrepareEpochFence',
  ]);
  for (const from of ALL) for (const to of ALL) assert.equal(canTransition(from, to), legal.has(`${from}->${to}`), `${from} -> ${to}`);
});

test('transition applies changes, refuses illegal moves with INVALID_TXN_STATE, clears partitions on completion', () => {
  const m = newTxnMetadata('t', 7n, 1000, 1);
  assert.throws(() => transition(m, 'PrepareCommit'), (e: unknown) => e instanceof KafkaError && e.code === ErrorCode.INVALID_TXN_STATE);
  const ongoing = transition(m, 'Ongoing', { partitions: withPartitions(m, [{ topic: 'a', partition: 0 }, { topic: 'a', partition: 0 }, { topic: 'b', partition: 1 }]), txnStartTimestampMs: 5 });
  assert.equal(ongoing.state, 'Ongoing');
  assert.equal(ongoing.partitions.size, 2);
  assert.equal(m.state, 'Empty', 'the original is not mutated');
  const prepared = transition(ongoing, 'PrepareCommit');
  assert.equal(prepared.partitions.size, 2);
  assert.throws(() => transition(prepared, 'CompleteAbort'), (e: unknown) => e instanceof KafkaError && e.code === ErrorCode.INVALID_TXN_STATE && /illegal transition PrepareCommit -> CompleteAbort/.test(e.message));
  const done = transition(prepared, 'CompleteCommit');
  assert.equal(done.partitions.size, 0);
});

test('state ids round trip; epochs bump until exhausted', () => {
  for (const s of ALL) assert.equal(txnStateFromId(TXN_STATE_IDS[s]), s);
  assert.throws(() => txnStateFromId(42), (e: unknown) => e instanceof KafkaError && e.code === ErrorCode.CORRUPT_MESSAGE && /unknown transaction state id 42/.test(e.message));
  assert.equal(bumpedEpoch(0), 1);
  assert.equal(bumpedEpoch(32765), 32766);
  assert.equal(bumpedEpoch(32766), null);
});
