// The group coordinator of a cluster member: it serves only the
// __consumer_offsets partitions it is told to load (this broker leads them)
// and forgets them when told to unload (leadership went). Memory log, manual
// clock.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../../broker/common/clock.js';
import { ManualScheduler } from '../../../broker/common/scheduler.js';
import { GroupCoordinator } from '../../../broker/group/group-coordinator.js';
import { MemoryOffsetsTopicLog, partitionForGroup, type OffsetsTopicLog, type OffsetsTopicRecord } from '../../../broker/group/offsets-topic.js';
import { ErrorCode, commitParams, joinParams, settle, TEST_CONFIG, track } from './harness.js';
import { KafkaError } from '../../../broker/protocol/errors.js';

const PARTITIONS = TEST_CONFIG.offsetsTopicNumPartitions!;

/** Two group ids in different partitions. */
function groupsInTwoPartitions(): { a: string; b: string; pa: number; pb: number } {
  const a = 'group-a';
  const pa = partitionForGroup(a, PARTITIONS);
  for (let i = 0; ; i++) {
    const b = `group-b${i}`;
    const pb = partitionForGroup(b, PARTITIONS);
    if (pb !== pa) return { a, b, pa, pb };
  }
}

/** A log whose replay of one partition waits until released (a slow load). */
class GatedLog implements OffsetsTopicLog {
  private gates = new Map<number, { promise: Promise<void>; release: () => void }>();
  constructor(readonly inner: MemoryOffsetsTopicLog) {}
  gate(p: number): () => void {
    let release = (): void => undefined;
    const promise = new Promise<void>((r) => (release = r));
    this.gates.set(p, { promise, release });
    return () => {
      this.gates.delete(p);
      release();
    };
  }
  append(p: number, records: readonly OffsetsTopicRecord[]): Promise<void> {
    return this.inner.append(p, records);
  }
  async *readAll(p: number): AsyncIterable<OffsetsTopicRecord> {
    const gate = this.gates.get(p);
    let first = true;
    for await (const r of this.inner.readAll(p)) {
      if (first && gate !== undefined) await gate.promise;
      first = false;
      yield r;
    }
  }
}

function coordinator(log: OffsetsTopicLog, clock = new ManualClock()): GroupCoordinator {
  return new GroupCoordinator({ log, partitioned: true, clock, scheduler: new ManualScheduler(clock), config: TEST_CONFIG });
}

const offsetOf = (c: GroupCoordinator, groupId: string): { errorCode: number; offset: bigint | undefined } => {
  const r = c.fetchOffsets([{ groupId, topics: [{ name: 't', partitionIndexes: [0] }] }])[0]!;
  return { errorCode: r.errorCode, offset: r.topics[0]?.partitions[0]?.committedOffset };
};

test('partitioned: NOT_COORDINATOR for groups of partitions not loaded, LOAD_IN_PROGRESS while loading, served once loaded', async () => {
  const { a, b, pa, pb } = groupsInTwoPartitions();
  const memory = new MemoryOffsetsTopicLog();
  // An earlier coordinator of partition pa committed an offset for group a.
  const before = coordinator(memory);
  await before.start();
  await before.loadPartition(pa);
  assert.equal((await before.commitOffsets(commitParams(41n, { groupId: a }))).topics[0]?.partitions[0]?.errorCode, ErrorCode.NONE);
  await before.close();

  const log = new GatedLog(memory);
  const c = coordinator(log);
  await c.start();
  assert.equal(offsetOf(c, a).errorCode, ErrorCode.NOT_COORDINATOR);
  assert.equal((await c.joinGroup(joinParams({ groupId: a }))).errorCode, ErrorCode.NOT_COORDINATOR);
  assert.equal(c.heartbeat({ groupId: a, memberId: 'm', groupInstanceId: null, generationId: 1 }), ErrorCode.NOT_COORDINATOR);

  const release = log.gate(pa);
  const loading = track(c.loadPartition(pa));
  await settle();
  assert.equal(loading.settled, false);
  assert.deepEqual([...c.ownedPartitions()], [[pa, 'loading']]);
  assert.equal(offsetOf(c, a).errorCode, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
  assert.equal(c.describeGroups([a])[0]?.errorCode, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
  assert.equal(c.listGroups().errorCode, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
  assert.equal(offsetOf(c, b).errorCode, ErrorCode.NOT_COORDINATOR, 'another partition is not ours at all');
  release();
  await loading.promise;
  assert.deepEqual(offsetOf(c, a), { errorCode: ErrorCode.NONE, offset: 41n });
  assert.deepEqual(c.listGroups().groups.map((g) => g.groupId), [a]);
  // The other partition, loaded later, is served too and writes its own partition.
  await c.loadPartition(pb);
  assert.equal((await c.commitOffsets(commitParams(7n, { groupId: b }))).topics[0]?.partitions[0]?.errorCode, ErrorCode.NONE);
  assert.equal(memory.records(pb).length, 1);
  await c.close();
});

test('partitioned: unloading answers parked joins NOT_COORDINATOR, forgets the groups and offsets, and a reload brings them back from the log', async () => {
  const { a, b, pa, pb } = groupsInTwoPartitions();
  const memory = new MemoryOffsetsTopicLog();
  const clock = new ManualClock();
  const c = coordinator(memory, clock);
  await c.start();
  await c.loadPartition(pa);
  await c.loadPartition(pb);
  await c.commitOffsets(commitParams(5n, { groupId: a }));
  await c.commitOffsets(commitParams(9n, { groupId: b }));
  // A member of group a waits in its first join (initial rebalance delay).
  const first = await c.joinGroup(joinParams({ groupId: a }));
  assert.equal(first.errorCode, ErrorCode.MEMBER_ID_REQUIRED);
  const parked = track(c.joinGroup(joinParams({ groupId: a, memberId: first.memberId })));
  await settle();
  assert.equal(parked.settled, false);

  c.unloadPartition(pa);
  await settle();
  assert.equal(parked.value.errorCode, ErrorCode.NOT_COORDINATOR);
  assert.equal(offsetOf(c, a).errorCode, ErrorCode.NOT_COORDINATOR);
  assert.equal(c.groupState(a), null, 'the group is gone from memory');
  assert.deepEqual(offsetOf(c, b), { errorCode: ErrorCode.NONE, offset: 9n }, 'the other partition is untouched');
  assert.deepEqual(c.listGroups().groups.map((g) => g.groupId), [b]);

  await c.loadPartition(pa);
  assert.deepEqual(offsetOf(c, a), { errorCode: ErrorCode.NONE, offset: 5n });
  await c.close();
});

test('partitioned: a partition unloaded while it loads ends up not served and empty', async () => {
  const { a, pa } = groupsInTwoPartitions();
  const memory = new MemoryOffsetsTopicLog();
  const seed = coordinator(memory);
  await seed.start();
  await seed.loadPartition(pa);
  await seed.commitOffsets(commitParams(3n, { groupId: a }));
  await seed.close();

  const log = new GatedLog(memory);
  const c = coordinator(log);
  await c.start();
  const release = log.gate(pa);
  const loading = c.loadPartition(pa);
  await settle();
  c.unloadPartition(pa);
  release();
  await loading;
  assert.equal(c.ownedPartitions().size, 0);
  assert.equal(offsetOf(c, a).errorCode, ErrorCode.NOT_COORDINATOR);
  assert.equal(c.groupState(a), null);
  await c.close();
});

test('partitioned with a committed wait: an offset commit is answered once replicated; NOT_ENOUGH_REPLICAS reaches the client as COORDINATOR_NOT_AVAILABLE and the offset is not served', async () => {
  const { a, pa } = groupsInTwoPartitions();
  const memory = new MemoryOffsetsTopicLog();
  const clock = new ManualClock();
  let replicated: number | null = null;
  const c = new GroupCoordinator({
    log: memory,
    partitioned: true,
    clock,
    scheduler: new ManualScheduler(clock),
    config: TEST_CONFIG,
    committed: async (p) => {
      if (replicated === null) throw new KafkaError(ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND, 'the ISR is below min.insync.replicas');
      replicated = p;
    },
  });
  await c.start();
  await c.loadPartition(pa);
  const failed = await c.commitOffsets(commitParams(12n, { groupId: a }));
  assert.equal(failed.topics[0]?.partitions[0]?.errorCode, ErrorCode.COORDINATOR_NOT_AVAILABLE);
  assert.equal(offsetOf(c, a).offset, -1n, 'an unreplicated commit is not served');
  replicated = -1;
  assert.equal((await c.commitOffsets(commitParams(13n, { groupId: a }))).topics[0]?.partitions[0]?.errorCode, ErrorCode.NONE);
  assert.equal(replicated, pa, 'the wait is for the group\'s partition');
  assert.deepEqual(offsetOf(c, a), { errorCode: ErrorCode.NONE, offset: 13n });
  await c.close();
});
