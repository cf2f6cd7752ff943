// The transaction coordinator of a cluster member: it serves only the
// __transaction_state partitions it leads (loadPartition) and completes, on
// load, the transactions a previous coordinator left prepared.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ManualClock } from '../../../broker/common/clock.js';
import { ManualScheduler } from '../../../broker/common/scheduler.js';
import { ErrorCode, KafkaError } from '../../../broker/protocol/errors.js';
import { MemoryOffsetsTopicLog, partitionForGroup } from '../../../broker/group/offsets-topic.js';
import { TxnCoordinator, type TxnMarker } from '../../../broker/txn/txn-coordinator.js';
import type { TopicPartition } from '../../../broker/txn/txn-state.js';

const PARTITIONS = 3;

function coordinator(log: MemoryOffsetsTopicLog, markers: string[] = [], partitioned = true, epochs: number[] = []): TxnCoordinator {
  const clock = new ManualClock();
  let nextId = 100n;
  return new TxnCoordinator({
    log,
    partitioned,
    producerIds: { nextProducerId: async () => nextId++ },
    writeMarker: async (tp: TopicPartition, marker: TxnMarker) => {
      markers.push(`${tp.topic}-${tp.partition}:${marker.type}`);
      epochs.push(marker.coordinatorEpoch);
    },
    config: { numPartitions: PARTITIONS, maxTimeoutMs: 60_000 },
    clock,
    scheduler: new ManualScheduler(clock),
  });
}

function idIn(partition: number, not?: string): string {
  for (let i = 0; ; i++) {
    const id = `txn-${i}`;
    if (partitionForGroup(id, PARTITIONS) === partition && id !== not) return id;
  }
}

test('partitioned: ids of partitions not loaded answer NOT_COORDINATOR; loaded ones are served; unload forgets them', async () => {
  const log = new MemoryOffsetsTopicLog();
  const c = coordinator(log);
  await c.start();
  const mine = idIn(0);
  const other = idIn(1);
  assert.equal((await c.initProducerId(mine, 10_000, null)).errorCode, ErrorCode.NOT_COORDINATOR);
  await c.loadPartition(0);
  const r = await c.initProducerId(mine, 10_000, null);
  assert.equal(r.errorCode, ErrorCode.NONE);
  assert.equal((await c.initProducerId(other, 10_000, null)).errorCode, ErrorCode.NOT_COORDINATOR);
  assert.equal(await c.addPartitions(other, 1n, 0, [{ topic: 'x', partition: 0 }]), ErrorCode.NOT_COORDINATOR);
  assert.deepEqual(c.allTransactions().map((m) => m.transactionalId), [mine]);
  // TxnOffsetCommit for an id coordinated elsewhere is not checked here (the group's broker cannot).
  assert.equal(c.verifyTxnOffsetCommit(other, 5n, 0, 0), ErrorCode.NONE);
  c.unloadPartition(0);
  assert.equal(c.describe(mine), undefined);
  assert.equal(await c.endTxn(mine, r.producerId, r.producerEpoch, true), ErrorCode.NOT_COORDINATOR);
  assert.equal(c.unavailable(mine), ErrorCode.NOT_COORDINATOR);
  await c.close();
});

test('partitioned: a new leader of the partition loads its ids and completes a transaction left in PrepareCommit', async () => {
  const log = new MemoryOffsetsTopicLog();
  const first = coordinator(log);
  await first.start();
  await first.loadPartition(2);
  const id = idIn(2);
  const r = await first.initProducerId(id, 10_000, null);
  assert.equal(await first.addPartitions(id, r.producerId, r.producerEpoch, [{ topic: 'orders', partition: 4 }]), ErrorCode.NONE);
  assert.equal(await first.endTxn(id, r.producerId, r.producerEpoch, true), ErrorCode.NONE);
  await first.close();
  // Cut the log back to PrepareCommit: the old coordinator died before its markers.
  const records = log.records(2);
  const truncated = new MemoryOffsetsTopicLog();
  await truncated.append(2, records.slice(0, records.length - 1));

  const markers: string[] = [];
  const next = coordinator(truncated, markers);
  await next.start();
  assert.equal(next.unavailable(id), ErrorCode.NOT_COORDINATOR);
  await next.loadPartition(2);
  await next.close(); // waits for the background completion it started
  assert.deepEqual(markers, ['orders-4:COMMIT']);
  assert.equal(next.describe(id)?.state, 'CompleteCommit');
});

test('partitioned: markers carry the leader epoch of the id\'s __transaction_state partition as coordinator epoch', async () => {
  const markers: string[] = [];
  const epochs: number[] = [];
  const c = coordinator(new MemoryOffsetsTopicLog(), markers, true, epochs);
  await c.start();
  await c.loadPartition(1, 7);
  const id = idIn(1);
  const r = await c.initProducerId(id, 10_000, null);
  assert.equal(await c.addPartitions(id, r.producerId, r.producerEpoch, [{ topic: 'orders', partition: 0 }]), ErrorCode.NONE);
  assert.equal(await c.endTxn(id, r.producerId, r.producerEpoch, true), ErrorCode.NONE);
  await c.close();
  assert.deepEqual(markers, ['orders-0:COMMIT']);
  assert.deepEqual(epochs, [7]);
});

test('partitioned with a committed wait: a state record not replicated answers COORDINATOR_NOT_AVAILABLE (NOT_ENOUGH_REPLICAS) or NOT_COORDINATOR (leadership lost), and is not made current', async () => {
  const log = new MemoryOffsetsTopicLog();
  const clock = new ManualClock();
  let failWith: number | null = ErrorCode.NOT_ENOUGH_REPLICAS;
  const waited: number[] = [];
  let nextId = 100n;
  const c = new TxnCoordinator({
    log,
    partitioned: true,
    committed: async (p) => {
      waited.push(p);
      if (failWith !== null) throw new KafkaError(failWith, 'not replicated');
    },
    producerIds: { nextProducerId: async () => nextId++ },
    writeMarker: async () => undefined,
    config: { numPartitions: PARTITIONS, maxTimeoutMs: 60_000 },
    clock,
    scheduler: new ManualScheduler(clock),
  });
  await c.start();
  const id = idIn(2);
  await c.loadPartition(2);
  assert.equal((await c.initProducerId(id, 10_000, null)).errorCode, ErrorCode.COORDINATOR_NOT_AVAILABLE);
  assert.equal(c.describe(id), undefined);
  failWith = ErrorCode.NOT_LEADER_OR_FOLLOWER;
  assert.equal((await c.initProducerId(id, 10_000, null)).errorCode, ErrorCode.NOT_COORDINATOR);
  failWith = null;
  const r = await c.initProducerId(id, 10_000, null);
  assert.equal(r.errorCode, ErrorCode.NONE);
  assert.equal(c.describe(id)?.producerId, r.producerId);
  assert.deepEqual([...new Set(waited)], [2]);
  await c.close();
});
