import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ManualClock } from '../../../broker/common/clock.js';
import { ManualScheduler } from '../../../broker/common/scheduler.js';
import { ErrorCode, KafkaError } from '../../../broker/protocol/errors.js';
import { MemoryOffsetsTopicLog, partitionForGroup } from '../../../broker/group/offsets-topic.js';
import { encodeTxnRecord } from '../../../broker/txn/txn-records.js';
import { TxnCoordinator, type TxnMarker } from '../../../broker/txn/txn-coordinator.js';
import { newTxnMetadata, type TopicPartition } from '../../../broker/txn/txn-state.js';

interface Harness {
  clock: ManualClock;
  scheduler: ManualScheduler;
  log: MemoryOffsetsTopicLog;
  markers: { tp: TopicPartition; marker: TxnMarker }[];
  completed: { producerId: bigint; committed: boolean }[];
  coordinator: TxnCoordinator;
}

async function harness(log = new MemoryOffsetsTopicLog(), clock = new ManualClock()): Promise<Harness> {
  const scheduler = new ManualScheduler(clock);
  let nextId = 100n;
  const markers: Harness['markers'] = [];
  const completed: Harness['completed'] = [];
  const coordinator = new TxnCoordinator({
    log,
    producerIds: { nextProducerId: async () => nextId++ },
    writeMarker: async (tp, marker) => {
      markers.push({ tp, marker });
    },
    offsetsPartitionFor: () => 7,
    onTxnCompleted: async (producerId, committed) => {
      completed.push({ producerId, committed });
    },
    config: { numPartitions: 3, maxTimeoutMs: 60_000, abortTimedOutIntervalMs: 1000 },
    clock,
    scheduler,
  });
  await coordinator.start();
  return { clock, scheduler, log, markers, completed, coordinator };
}

const tp = (topic: string, partition: number): TopicPartition => ({ topic, partition });

test('InitProducerId: timeout validated, new id at epoch 0, epoch bumped on each init', async () => {
  const h = await harness();
  assert.equal((await h.coordinator.initProducerId('t', 60_001, null)).errorCode, ErrorCode.INVALID_TRANSACTION_TIMEOUT);
  assert.equal((await h.coordinator.initProducerId('t', 0, null)).errorCode, ErrorCode.INVALID_TRANSACTION_TIMEOUT);
  assert.deepEqual(await h.coordinator.initProducerId('t', 10_000, null), { errorCode: 0, producerId: 100n, producerEpoch: 0 });
  assert.deepEqual(await h.coordinator.initProducerId('t', 10_000, null), { errorCode: 0, producerId: 100n, producerEpoch: 1 });
  // KIP-360: the producer's current id/epoch bumps; a retry of that bump (the epoch before it) gets the same
  // answer; another epoch, or another producer id, is fenced.
  assert.deepEqual(await h.coordinator.initProducerId('t', 10_000, { producerId: 100n, producerEpoch: 1 }), { errorCode: 0, producerId: 100n, producerEpoch: 2 });
  assert.deepEqual(await h.coordinator.initProducerId('t', 10_000, { producerId: 100n, producerEpoch: 1 }), { errorCode: 0, producerId: 100n, producerEpoch: 2 });
  assert.equal((await h.coordinator.initProducerId('t', 10_000, { producerId: 100n, producerEpoch: 0 })).errorCode, ErrorCode.PRODUCER_FENCED);
  assert.equal((await h.coordinator.initProducerId('t', 10_000, { producerId: 99n, producerEpoch: 2 })).errorCode, ErrorCode.PRODUCER_FENCED);
  assert.deepEqual(await h.coordinator.initProducerId('t', 10_000, { producerId: 100n, producerEpoch: 2 }), { errorCode: 0, producerId: 100n, producerEpoch: 3 });
  await h.coordinator.close();
});

test('commit: partitions added, markers written with the epoch, Complete state persisted; fenced epochs refused', async () => {
  const h = await harness();
  const { producerId, producerEpoch } = await h.coordinator.initProducerId('t', 10_000, null);
  assert.equal(await h.coordinator.addPartitions('t', producerId, producerEpoch + 1, [tp('a', 0)]), ErrorCode.PRODUCER_FENCED);
  assert.equal(await h.coordinator.addPartitions('t', 5n, producerEpoch, [tp('a', 0)]), ErrorCode.INVALID_PRODUCER_ID_MAPPING);
  assert.equal(await h.coordinator.addPartitions('nope', producerId, producerEpoch, [tp('a', 0)]), ErrorCode.INVALID_PRODUCER_ID_MAPPING);
  assert.equal(h.coordinator.verifyProduce(producerId, producerEpoch, 'a', 0), ErrorCode.INVALID_TXN_STATE);
  assert.equal(await h.coordinator.endTxn('t', producerId, producerEpoch, true), ErrorCode.INVALID_TXN_STATE, 'nothing to end');
  assert.equal(await h.coordinator.addPartitions('t', producerId, producerEpoch, [tp('a', 0), tp('b', 1)]), ErrorCode.NONE);
  assert.equal(await h.coordinator.addOffsets('t', producerId, producerEpoch, 'g'), ErrorCode.NONE);
  assert.equal(h.coordinator.verifyProduce(producerId, producerEpoch, 'a', 0), ErrorCode.NONE);
  assert.equal(h.coordinator.verifyProduce(producerId, producerEpoch, 'a', 1), ErrorCode.INVALID_TXN_STATE, 'partition not added');
  assert.equal(h.coordinator.verifyTxnOffsetCommit('t', producerId, producerEpoch, 7), ErrorCode.NONE);
  assert.equal(h.coordinator.describe('t')?.state, 'Ongoing');
  assert.equal(await h.coordinator.endTxn('t', producerId, producerEpoch, true), ErrorCode.NONE);
  assert.deepEqual(
    h.markers.map((m) => `${m.tp.topic}-${m.tp.partition}:${m.marker.type}@${m.marker.producerEpoch}`).sort(),
    ['__consumer_offsets-7:COMMIT@0', 'a-0:COMMIT@0', 'b-1:COMMIT@0'],
  );
  assert.deepEqual(h.completed, [{ producerId, committed: true }]);
  assert.equal(h.coordinator.describe('t')?.state, 'CompleteCommit');
  assert.equal(await h.coordinator.endTxn('t', producerId, producerEpoch, true), ErrorCode.NONE, 'a retried commit');
  assert.equal(await h.coordinator.endTxn('t', producerId, producerEpoch, false), ErrorCode.INVALID_TXN_STATE);
  // Records: init, add, add offsets, prepare, complete, all in the id's partition.
  const partition = h.coordinator.partitionFor('t');
  assert.equal(h.log.records(partition).length, 5);
  await h.coordinator.close();
});

test('a timed-out transaction is aborted with an epoch bump that fences its producer', async () => {
  const h = await harness();
  const { producerId, producerEpoch } = await h.coordinator.initProducerId('t', 5_000, null);
  await h.coordinator.addPartitions('t', producerId, producerEpoch, [tp('a', 0)]);
  h.clock.advance(4_000);
  await h.coordinator.abortTimedOutTransactions();
  assert.equal(h.coordinator.describe('t')?.state, 'Ongoing', 'not yet timed out');
  h.clock.advance(2_000);
  await h.coordinator.abortTimedOutTransactions();
  const m = h.coordinator.describe('t')!;
  assert.equal(m.state, 'CompleteAbort');
  assert.equal(m.producerEpoch, producerEpoch + 1);
  assert.deepEqual(h.markers.map((x) => `${x.marker.type}@${x.marker.producerEpoch}`), [`ABORT@${producerEpoch + 1}`]);
  assert.deepEqual(h.completed, [{ producerId, committed: false }]);
  assert.equal(await h.coordinator.endTxn('t', producerId, producerEpoch, true), ErrorCode.PRODUCER_FENCED);
  assert.equal(h.coordinator.verifyProduce(producerId, producerEpoch, 'a', 0), ErrorCode.PRODUCER_FENCED);
  assert.ok(h.scheduler.pending > 0, 'the abort check stays scheduled');
  await h.coordinator.close();
});

test('InitProducerId during an ongoing transaction aborts it (CONCURRENT_TRANSACTIONS), then bumps', async () => {
  const h = await harness();
  const first = await h.coordinator.initProducerId('t', 10_000, null);
  await h.coordinator.addPartitions('t', first.producerId, first.producerEpoch, [tp('a', 0)]);
  assert.equal((await h.coordinator.initProducerId('t', 10_000, null)).errorCode, ErrorCode.CONCURRENT_TRANSACTIONS);
  assert.equal(h.coordinator.describe('t')?.state, 'CompleteAbort');
  assert.deepEqual(await h.coordinator.initProducerId('t', 10_000, null), { errorCode: 0, producerId: first.producerId, producerEpoch: 2 });
  assert.equal(await h.coordinator.addPartitions('t', first.producerId, first.producerEpoch, [tp('a', 0)]), ErrorCode.PRODUCER_FENCED);
  await h.coordinator.close();
});

test('reload: state comes back; a transaction left in PrepareCommit gets its markers; idle ids expire', async () => {
  const h = await harness();
  const a = await h.coordinator.initProducerId('open', 10_000, null);
  await h.coordinator.addPartitions('open', a.producerId, a.producerEpoch, [tp('x', 0)]);
  const b = await h.coordinator.initProducerId('done', 10_000, null);
  await h.coordinator.addPartitions('done', b.producerId, b.producerEpoch, [tp('y', 1)]);
  await h.coordinator.endTxn('done', b.producerId, b.producerEpoch, false);
  await h.coordinator.close();
  const h2 = await harness(h.log, h.clock);
  assert.equal(h2.coordinator.describe('open')?.state, 'Ongoing');
  assert.equal(h2.coordinator.describe('done')?.state, 'CompleteAbort');
  assert.equal(h2.markers.length, 0);
  // A crash between PrepareCommit and the markers: the log ends at PrepareCommit.
  const h3log = new MemoryOffsetsTopicLog();
  const h3 = await harness(h3log, h.clock);
  const d = await h3.coordinator.initProducerId('half', 10_000, null);
  await h3.coordinator.addPartitions('half', d.producerId, d.producerEpoch, [tp('z', 2)]);
  await h3.coordinator.endTxn('half', d.producerId, d.producerEpoch, true);
  await h3.coordinator.close();
  const part = h3.coordinator.partitionFor('half');
  const records = h3log.records(part);
  const truncated = new MemoryOffsetsTopicLog();
  await truncated.append(part, records.slice(0, records.length - 1));
  const h4 = await harness(truncated, h.clock);
  assert.equal(h4.coordinator.describe('half')?.state, 'CompleteCommit');
  assert.deepEqual(h4.markers.map((m) => `${m.tp.topic}-${m.tp.partition}:${m.marker.type}`), ['z-2:COMMIT']);
  // Expiry: idle beyond transactional.id.expiration.ms -> tombstone.
  h4.clock.advance(604_800_000);
  await h4.coordinator.expireTransactionalIds();
  assert.equal(h4.coordinator.describe('half'), undefined);
  const h5 = await harness(truncated, h.clock);
  assert.equal(h5.coordinator.describe('half'), undefined, 'the tombstone is replayed');
  for (const x of [h2, h4, h5]) await x.coordinator.close();
});

test('an exhausted epoch rotates to a new producer id; a retry with the old id is answered the same', async () => {
  const log = new MemoryOffsetsTopicLog();
  const seeded = { ...newTxnMetadata('t', 42n, 10_000, 1), producerEpoch: 32766 };
  await log.append(partitionForGroup('t', 3), [encodeTxnRecord(seeded)]);
  const h = await harness(log);
  assert.deepEqual(await h.coordinator.initProducerId('t', 10_000, { producerId: 42n, producerEpoch: 32766 }), { errorCode: 0, producerId: 100n, producerEpoch: 0 });
  assert.equal(h.coordinator.describe('t')?.lastProducerId, 42n);
  assert.deepEqual(await h.coordinator.initProducerId('t', 10_000, { producerId: 42n, producerEpoch: 32766 }), { errorCode: 0, producerId: 100n, producerEpoch: 0 });
  await h.coordinator.close();
});

test('a marker refused NOT_ENOUGH_REPLICAS (ISR below min.insync.replicas) is retried until it is written; the transaction stays PrepareCommit meanwhile', async () => {
  const clock = new ManualClock();
  const scheduler = new ManualScheduler(clock);
  let refusals = 2;
  const written: string[] = [];
  const coordinator = new TxnCoordinator({
    log: new MemoryOffsetsTopicLog(),
    producerIds: { nextProducerId: async () => 100n },
    writeMarker: async (p, marker) => {
      if (p.topic === 'a' && refusals > 0) {
        refusals--;
        throw new KafkaError(ErrorCode.NOT_ENOUGH_REPLICAS, 'the ISR of a-0 is below min.insync.replicas');
      }
      written.push(`${p.topic}-${p.partition}:${marker.type}`);
    },
    offsetsPartitionFor: () => 7,
    config: { numPartitions: 3, maxTimeoutMs: 60_000, abortTimedOutIntervalMs: 1000 },
    clock,
    scheduler,
  });
  await coordinator.start();
  const { producerId, producerEpoch } = await coordinator.initProducerId('t', 10_000, null);
  assert.equal(await coordinator.addPartitions('t', producerId, producerEpoch, [tp('a', 0)]), ErrorCode.NONE);
  assert.equal(await coordinator.endTxn('t', producerId, producerEpoch, true), ErrorCode.NONE);
  const settle = async () => {
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
  };
  await settle();
  assert.equal(coordinator.describe('t')?.state, 'PrepareCommit');
  assert.deepEqual(written, []);
  for (let i = 0; i < 10 && coordinator.describe('t')?.state !== 'CompleteCommit'; i++) {
    clock.advance(1000);
    await settle();
  }
  assert.equal(refusals, 0, 'refused twice');
  assert.deepEqual(written, ['a-0:COMMIT']);
  assert.equal(coordinator.describe('t')?.state, 'CompleteCommit');
  await coordinator.close();
});
