// ListTransactions (66) and DescribeTransactions (65) against a real
// transaction coordinator on a memory log with a ManualClock: state names,
// the state / producer id / duration filters, unknown state filters, Dead ids
// hidden, TRANSACTIONAL_ID_NOT_FOUND, INVALID_REQUEST, load in progress.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ManualClock } from '../../../broker/common/clock.js';
import { ManualScheduler } from '../../../broker/common/scheduler.js';
import { ErrorCode } from '../../../broker/protocol/errors.js';
import { MemoryOffsetsTopicLog } from '../../../broker/group/offsets-topic.js';
import { TxnCoordinator } from '../../../broker/txn/txn-coordinator.js';
import { listTransactions } from '../../../broker/handlers/66-list-transactions.js';
import { describeTransaction } from '../../../broker/handlers/65-describe-transactions.js';
import type { ListTransactionsRequest } from '../../../broker/protocol/messages/list-transactions.js';

async function coordinator(clock: ManualClock, start = true): Promise<TxnCoordinator> {
  let nextId = 100n;
  const c = new TxnCoordinator({
    log: new MemoryOffsetsTopicLog(),
    producerIds: { nextProducerId: async () => nextId++ },
    writeMarker: async () => undefined,
    offsetsPartitionFor: () => 0,
    config: { numPartitions: 3, maxTimeoutMs: 60_000 },
    clock,
    scheduler: new ManualScheduler(clock),
  });
  if (start) await c.start();
  return c;
}

const list = (filters: Partial<ListTransactionsRequest> = {}): ListTransactionsRequest => ({ stateFilters: [], producerIdFilters: [], durationFilter: -1n, transactionalIdPattern: null, ...filters });

/** t-empty: Empty; t-open: Ongoing since 1000 on a-0, a-1, b-0; t-done: CompleteCommit. */
async function populated(clock: ManualClock): Promise<TxnCoordinator> {
  const c = await coordinator(clock);
  clock.set(1000);
  const empty = await c.initProducerId('t-empty', 30_000, null);
  assert.equal(empty.errorCode, 0);
  const open = await c.initProducerId('t-open', 20_000, null);
  assert.equal(await c.addPartitions('t-open', open.producerId, open.producerEpoch, [{ topic: 'a', partition: 0 }, { topic: 'b', partition: 0 }, { topic: 'a', partition: 1 }]), 0);
  const done = await c.initProducerId('t-done', 10_000, null);
  assert.equal(await c.addPartitions('t-done', done.producerId, done.producerEpoch, [{ topic: 'a', partition: 0 }]), 0);
  assert.equal(await c.endTxn('t-done', done.producerId, done.producerEpoch, true), 0);
  return c;
}

const ids = (r: ReturnType<typeof listTransactions>): string[] => r.transactionStates.map((s) => `${s.transactionalId}:${s.producerId}:${s.transactionState}`).sort();

test('ListTransactions: every id with producer id and Kafka state name; state and producer id filters', async () => {
  const clock = new ManualClock();
  const c = await populated(clock);
  const all = listTransactions(c, list(), clock.now());
  assert.equal(all.errorCode, ErrorCode.NONE);
  assert.deepEqual(ids(all), ['t-done:102:CompleteCommit', 't-empty:100:Empty', 't-open:101:Ongoing']);
  assert.deepEqual(ids(listTransactions(c, list({ stateFilters: ['Ongoing', 'CompleteCommit'] }), clock.now())), ['t-done:102:CompleteCommit', 't-open:101:Ongoing']);
  assert.deepEqual(ids(listTransactions(c, list({ producerIdFilters: [100n, 102n, 999n] }), clock.now())), ['t-done:102:CompleteCommit', 't-empty:100:Empty']);
  assert.deepEqual(ids(listTransactions(c, list({ stateFilters: ['Ongoing'], producerIdFilters: [100n] }), clock.now())), []);
  // Names are exact (Kafka's TransactionState.fromName): unknown ones are reported, the known ones still filter.
  const unknown = listTransactions(c, list({ stateFilters: ['ongoing', 'Empty', 'Bogus'] }), clock.now());
  assert.deepEqual(unknown.unknownStateFilters, ['ongoing', 'Bogus']);
  assert.deepEqual(ids(unknown), ['t-empty:100:Empty']);
  await c.close();
});

test('ListTransactions: the duration filter keeps transactions started more than that long ago', async () => {
  const clock = new ManualClock();
  const c = await populated(clock);
  clock.set(6000); // t-open started at 1000: running 5000 ms
  assert.deepEqual(ids(listTransactions(c, list({ durationFilter: 5000n, stateFilters: ['Ongoing'] }), clock.now())), []);
  assert.deepEqual(ids(listTransactions(c, list({ durationFilter: 4999n, stateFilters: ['Ongoing'] }), clock.now())), ['t-open:101:Ongoing']);
  // As in Kafka, an id whose start time is -1 (never started) counts as running since the epoch.
  assert.deepEqual(ids(listTransactions(c, list({ durationFilter: 4999n, stateFilters: ['Empty'] }), clock.now())), ['t-empty:100:Empty']);
  await c.close();
});

test('DescribeTransactions: state, timeout, start time, producer, partitions by topic; unknown ids not found', async () => {
  const clock = new ManualClock();
  const c = await populated(clock);
  const open = describeTransaction(c, 't-open');
  assert.equal(open.errorCode, ErrorCode.NONE);
  assert.equal(open.transactionState, 'Ongoing');
  assert.equal(open.transactionTimeoutMs, 20_000);
  assert.equal(open.transactionStartTimeMs, 1000n);
  assert.equal(open.producerId, 101n);
  assert.equal(open.producerEpoch, 0);
  assert.deepEqual(open.topics.map((t) => ({ topic: t.topic, partitions: [...t.partitions].sort() })).sort((x, y) => x.topic.localeCompare(y.topic)), [
    { topic: 'a', partitions: [0, 1] },
    { topic: 'b', partitions: [0] },
  ]);
  const empty = describeTransaction(c, 't-empty');
  assert.equal(empty.transactionState, 'Empty');
  assert.equal(empty.transactionStartTimeMs, -1n);
  assert.deepEqual(empty.topics, []);
  const done = describeTransaction(c, 't-done');
  assert.equal(done.transactionState, 'CompleteCommit');
  assert.deepEqual(done.topics, [], 'a completed transaction has no partitions');
  const missing = describeTransaction(c, 'nope');
  assert.equal(missing.errorCode, ErrorCode.TRANSACTIONAL_ID_NOT_FOUND);
  assert.equal(missing.transactionalId, 'nope');
  assert.equal(describeTransaction(c, '').errorCode, ErrorCode.INVALID_REQUEST);
  await c.close();
  assert.equal(describeTransaction(c, 't-open').errorCode, ErrorCode.COORDINATOR_NOT_AVAILABLE);
  assert.equal(listTransactions(c, list(), clock.now()).errorCode, ErrorCode.COORDINATOR_NOT_AVAILABLE);
});

test('both answer COORDINATOR_LOAD_IN_PROGRESS before the coordinator has loaded', async () => {
  const clock = new ManualClock();
  const c = await coordinator(clock, false);
  assert.equal(listTransactions(c, list(), clock.now()).errorCode, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
  assert.equal(describeTransaction(c, 'x').errorCode, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
  await c.start();
  assert.equal(describeTransaction(c, 'x').errorCode, ErrorCode.TRANSACTIONAL_ID_NOT_FOUND);
  await c.close();
});
