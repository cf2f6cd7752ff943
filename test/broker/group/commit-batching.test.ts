// Offset commits of one group share __consumer_offsets appends: the group's
// lock covers validation and queueing only, the append is written after it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCode, GatedLog, commitParams, track } from './harness.js';
import { GroupCoordinator } from '../../../broker/group/group-coordinator.js';
import { decodeCoordinatorRecord } from '../../../broker/group/group-records.js';
import type { OffsetCommitParams } from '../../../broker/group/types.js';
import { KafkaError } from '../../../broker/protocol/errors.js';
import { ManualClock } from '../../../broker/common/clock.js';
import { ManualScheduler } from '../../../broker/common/scheduler.js';

function commit(offset: bigint, groupId = 'g', partition = 0): OffsetCommitParams {
  return commitParams(offset, { groupId }, { partitionIndex: partition });
}

async function start(): Promise<{ log: GatedLog; coordinator: GroupCoordinator; partition: number }> {
  const log = new GatedLog();
  const clock = new ManualClock();
  const coordinator = new GroupCoordinator({ log, clock, scheduler: new ManualScheduler(clock), config: { offsetsTopicNumPartitions: 3 } });
  await coordinator.start();
  return { log, coordinator, partition: coordinator.partitionFor('g') };
}

const errorOf = (r: Awaited<ReturnType<GroupCoordinator['commitOffsets']>>): number | undefined => r.topics[0]?.partitions[0]?.errorCode;

function committed(c: GroupCoordinator, partition = 0): bigint | undefined {
  return c.fetchOffsets([{ groupId: 'g', topics: [{ name: 't', partitionIndexes: [partition] }] }])[0]?.topics[0]?.partitions[0]?.committedOffset;
}

/** The committed offsets of the log's records, in log order (tombstones as null). */
function loggedOffsets(log: GatedLog, partition: number): (bigint | null)[] {
  return log.inner.records(partition).map((r) => {
    const rec = decodeCoordinatorRecord(r);
    assert.equal(rec.type, 'offsetCommit');
    return rec.type === 'offsetCommit' ? (rec.value?.committedOffset ?? null) : null;
  });
}

test('64 concurrent commits of one group share appends, land in order, and the last one wins', async () => {
  const { log, coordinator, partition } = await start();
  const first = track(coordinator.commitOffsets(commit(0n)));
  await log.started(1);
  const rest = Array.from({ length: 63 }, (_, i) => coordinator.commitOffsets(commit(BigInt(i + 1))));
  await new Promise((r) => setImmediate(r));
  assert.equal(log.appends.length, 1, 'nothing else starts while the first append is in flight');
  assert.equal(first.settled, false, 'not acknowledged before it is durable');
  assert.equal(committed(coordinator), -1n, 'not applied before it is durable');
  log.release();
  await first.promise;
  await log.started(2);
  assert.equal(log.appends[1]?.length, 63, 'the queued commits go out as one append');
  log.release();
  const results = await Promise.all(rest);
  assert.ok(results.every((r) => errorOf(r) === ErrorCode.NONE));
  assert.deepEqual(loggedOffsets(log, partition), Array.from({ length: 64 }, (_, i) => BigInt(i)));
  assert.equal(committed(coordinator), 63n);
});

test('a failed shared append fails exactly its commits (mapped error), not applied; later commits go through', async () => {
  const { log, coordinator, partition } = await start();
  const a = coordinator.commitOffsets(commit(1n));
  await log.started(1);
  const b = coordinator.commitOffsets(commit(2n));
  const c = coordinator.commitOffsets(commit(3n, 'g', 1));
  await new Promise((r) => setImmediate(r)); // both queued behind the append in flight
  log.release();
  assert.equal(errorOf(await a), ErrorCode.NONE);
  await log.started(2);
  const d = coordinator.commitOffsets(commit(4n, 'g', 1));
  log.release(new KafkaError(ErrorCode.NOT_LEADER_OR_FOLLOWER, 'moved'));
  assert.equal(errorOf(await b), ErrorCode.NOT_COORDINATOR);
  assert.equal(errorOf(await c), ErrorCode.NOT_COORDINATOR);
  await log.started(3);
  log.release();
  assert.equal(errorOf(await d), ErrorCode.NONE);
  assert.equal(committed(coordinator, 0), 1n);
  assert.equal(committed(coordinator, 1), 4n);
  assert.deepEqual(loggedOffsets(log, partition), [1n, 4n]);
});

test('the simple group of a failed first commit stays while a later commit of it is in flight', async () => {
  const { log, coordinator } = await start();
  const a = coordinator.commitOffsets(commit(1n));
  await log.started(1);
  const b = coordinator.commitOffsets(commit(2n));
  await new Promise((r) => setImmediate(r));
  log.release(new Error('disk on fire'));
  assert.equal(errorOf(await a), ErrorCode.UNKNOWN_SERVER_ERROR);
  assert.notEqual(coordinator.groupState('g'), null);
  await log.started(2);
  log.release();
  assert.equal(errorOf(await b), ErrorCode.NONE);
  assert.equal(coordinator.groupState('g'), 'Empty');
  assert.equal(committed(coordinator), 2n);
});

test('OffsetDelete and DeleteGroups wait for the commits in flight, so none is missed', async () => {
  const { log, coordinator, partition } = await start();
  const a = coordinator.commitOffsets(commit(5n));
  await log.started(1);
  const deleted = track(coordinator.deleteOffsets({ groupId: 'g', topics: [{ name: 't', partitionIndexes: [0] }] }));
  await new Promise((r) => setImmediate(r));
  assert.equal(deleted.settled, false);
  assert.equal(log.appends.length, 1, 'the deletion has not looked at the offsets yet');
  log.release();
  assert.equal(errorOf(await a), ErrorCode.NONE);
  await log.started(2);
  log.release();
  assert.equal((await deleted.promise).errorCode, ErrorCode.NONE);
  assert.deepEqual(loggedOffsets(log, partition), [5n, null], 'the commit, then its tombstone');
  assert.equal(committed(coordinator), -1n);

  const b = coordinator.commitOffsets(commit(6n));
  await log.started(3);
  const groups = coordinator.deleteGroups(['g']);
  await new Promise((r) => setImmediate(r));
  log.release();
  await b;
  await log.started(4);
  log.release();
  assert.deepEqual(await groups, [{ groupId: 'g', errorCode: ErrorCode.NONE }]);
  assert.equal(coordinator.groupState('g'), null);
  assert.equal(committed(coordinator), -1n);
});
