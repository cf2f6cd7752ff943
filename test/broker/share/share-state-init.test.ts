// The group coordinator initialises share-partition state (Kafka's
// ShareGroupStatePartitionMetadata and InitializeShareGroupState): the plan
// per heartbeat, the retry interval, the coordinator's calls through a
// persister twin whose answers the test controls, and the whole path over the
// share coordinator on an in-memory __share_group_state (a restart keeps the
// state, a delete removes state nobody fetched).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { ManualClock } from '../../../broker/common/clock.js';
import { ManualScheduler } from '../../../broker/common/scheduler.js';
import { ErrorCode } from '../../../broker/protocol/errors.js';
import { Reader } from '../../../broker/protocol/reader.js';
import { Writer } from '../../../broker/protocol/writer.js';
import { MemoryOffsetsTopicLog } from '../../../broker/group/offsets-topic.js';
import { PartitionWaiters } from '../../../broker/partition-waiters.js';
import { buildRecordBatch } from '../../../broker/protocol/record-batch.js';
import { decodeShareGroupStatePartitionMetadataValue, encodeShareGroupStatePartitionMetadataValue } from '../../../broker/protocol/messages/records/share-group-state-partition-metadata-value.js';
import { ShareStatePartitionMetadata } from '../../../broker/share/share-state-init.js';
import { ShareGroupCoordinator, type InitializeOutcome } from '../../../broker/share/share-group-coordinator.js';
import { ShareCoordinator } from '../../../broker/share/share-coordinator.js';
import { ShareGroups } from '../../../broker/share/share-groups.js';
import { ShareGroupConfigs } from '../../../broker/share/share-group-configs.js';
import type { ShareLogView } from '../../../broker/share/share-ports.js';

const T1 = 'AAAAAAAAAAAAAAAAAAAAAQ';
const T2 = 'AAAAAAAAAAAAAAAAAAAAAg';

test('plan: every subscribed partition once; in flight until the retry interval; added partitions; a deleted topic leaves', () => {
  const m = new ShareStatePartitionMetadata();
  const subscribed = new Map([[T1, { name: 'a', partitionCount: 2 }], [T2, { name: 'b', partitionCount: 1 }]]);
  const exists = (): boolean => true;
  assert.deepEqual(m.plan(subscribed, exists, 1000, 30_000), [{ topicId: T1, name: 'a', partitions: [0, 1] }, { topicId: T2, name: 'b', partitions: [0] }]);
  assert.deepEqual(m.plan(subscribed, exists, 2000, 30_000), [], 'initializing since less than the retry interval');
  m.markInitialized(T1, 'a', [0, 1], 2500);
  assert.deepEqual(m.plan(subscribed, exists, 31_000, 30_000), [{ topicId: T2, name: 'b', partitions: [0] }], 'an initialisation older than the interval starts again');
  m.markUninitialized(T2, [0]);
  subscribed.set(T1, { name: 'a', partitionCount: 3 });
  assert.deepEqual(m.plan(subscribed, exists, 32_000, 30_000), [{ topicId: T1, name: 'a', partitions: [2] }, { topicId: T2, name: 'b', partitions: [0] }], 'the added partition, and the failed one again');
  m.markInitialized(T1, 'a', [2], 33_000);
  m.markInitialized(T2, 'b', [0], 33_000);
  assert.deepEqual(m.plan(subscribed, exists, 34_000, 30_000), []);
  // Kafka's record value: generated codec, round trip.
  const w = new Writer();
  encodeShareGroupStatePartitionMetadataValue(w, 0, m.toRecord());
  const back = decodeShareGroupStatePartitionMetadataValue(new Reader(w.toBuffer()), 0);
  assert.deepEqual(back.initializedTopics.map((t) => [t.topicId, t.topicName, t.partitions]), [[T1, 'a', [0, 1, 2]], [T2, 'b', [0]]]);
  assert.deepEqual(back.initializingTopics, []);
  // The topic is deleted (and recreated with another id): it leaves the sets.
  m.plan(new Map([[T1, { name: 'a', partitionCount: 3 }]]), (id) => id === T1, 35_000, 30_000);
  assert.deepEqual([...m.initialized.keys()], [T1]);
});

/** A share coordinator twin: records the calls, answers what the test says when it says. */
class InitializerTwin {
  readonly calls: { groupId: string; stateEpoch: number; startOffset: bigint; topics: { topicId: string; partitions: number[] }[] }[] = [];
  private readonly pending: ((errorCode: number) => void)[] = [];
  initialize(groupId: string, stateEpoch: number, startOffset: bigint, topics: readonly { topicId: string; partitions: readonly number[] }[]): Promise<InitializeOutcome[]> {
    this.calls.push({ groupId, stateEpoch, startOffset, topics: topics.map((t) => ({ topicId: t.topicId, partitions: [...t.partitions] })) });
    return new Promise((resolve) => this.pending.push((errorCode) => resolve(topics.flatMap((t) => t.partitions.map((partition) => ({ topicId: t.topicId, partition, errorCode, errorMessage: null }))))));
  }
  answer(errorCode: number): void {
    const next = this.pending.shift();
    assert.ok(next !== undefined, 'a call is pending');
    next(errorCode);
  }
}

test('the group coordinator initialises the subscribed partitions at the group epoch and start offset -1, asynchronously', async () => {
  const clock = new ManualClock();
  const topics = new Map([['a', { topicId: T1, partitionCount: 2 }]]);
  const twin = new InitializerTwin();
  const errors: unknown[] = [];
  const gc = new ShareGroupCoordinator({
    clock,
    scheduler: new ManualScheduler(clock),
    topics: { byName: (n) => topics.get(n), nameOf: (id) => [...topics].find(([, t]) => t.topicId === id)?.[0] },
    config: { maxSize: 10, sessionTimeoutMs: () => 45_000, heartbeatIntervalMs: () => 5_000 },
    otherGroupExists: () => false,
    onMemberRemoved: () => undefined,
    stateInitializer: twin,
    initializeRetryIntervalMs: 30_000,
    onInitializeError: (_g, err) => errors.push(err),
  });
  const hb = (memberId: string, memberEpoch: number) => gc.heartbeat({ groupId: 'g', memberId, memberEpoch, rackId: null, subscribedTopicNames: memberEpoch === 0 ? ['a'] : null, clientId: 'c', clientHost: '/h' });
  const r = hb('m1', 0);
  assert.equal(r.memberEpoch, 1);
  assert.deepEqual(r.assignment, [], 'answered before the initialisation ends: nothing assignable yet');
  assert.deepEqual(twin.calls, [{ groupId: 'g', stateEpoch: 1, startOffset: -1n, topics: [{ topicId: T1, partitions: [0, 1] }] }]);
  hb('m2', 0);
  assert.equal(twin.calls.length, 1, 'in flight: not asked again');
  twin.answer(ErrorCode.COORDINATOR_NOT_AVAILABLE);
  await gc.initialized('g');
  assert.equal(errors.length, 1);
  assert.deepEqual(gc.group('g')!.stateMetadata.toRecord().initializingTopics, [], 'a failed initialisation leaves the initializing set');
  const retry = hb('m1', 1);
  assert.equal(retry.memberEpoch, 2);
  assert.deepEqual(retry.assignment, [], 'still nothing assigned');
  assert.deepEqual(twin.calls[1], { groupId: 'g', stateEpoch: 2, startOffset: -1n, topics: [{ topicId: T1, partitions: [0, 1] }] }, 'retried by the next heartbeat, at the group epoch now');
  twin.answer(ErrorCode.NONE);
  await gc.initialized('g');
  assert.deepEqual(gc.group('g')!.stateMetadata.toRecord().initializedTopics, [{ topicId: T1, topicName: 'a', partitions: [0, 1] }]);
  const assigned = hb('m1', 2);
  assert.equal(assigned.memberEpoch, 3, 'the initialisation moved the epoch on');
  assert.equal(assigned.assignment?.flatMap((t) => t.partitions).length, 1, 'two members share the two initialised partitions');
  assert.equal(twin.calls.length, 2, 'initialised: nothing more to do');
  topics.set('a', { topicId: T1, partitionCount: 3 });
  hb('m1', 3);
  assert.deepEqual(twin.calls[2]?.topics, [{ topicId: T1, partitions: [2] }], 'a partition added to the topic is initialised');
  twin.answer(ErrorCode.NONE);
  await gc.initialized('g');
  const all = [hb('m1', 4), hb('m2', 2)].flatMap((x) => x.assignment ?? []).flatMap((t) => t.partitions).sort();
  assert.deepEqual(all, [0, 1, 2], 'the added partition is assigned once initialised');
  gc.close();
});

/** A one-partition log of whole batches in memory. */
class MemoryLog implements ShareLogView {
  readonly batches: Buffer[] = [];
  readonly offsets: { base: bigint; last: bigint }[] = [];
  logStartOffset = 0n;
  leaderEpoch = 0;
  get highWatermark(): bigint {
    return (this.offsets.at(-1)?.last ?? -1n) + 1n;
  }
  get lastStableOffset(): bigint {
    return this.highWatermark;
  }
  append(values: string[]): void {
    const base = this.highWatermark;
    this.batches.push(buildRecordBatch({ baseOffset: base, records: values.map((value) => ({ value, timestamp: 0 })) }));
    this.offsets.push({ base, last: base + BigInt(values.length) - 1n });
  }
  async read(fetchOffset: bigint): Promise<{ records: Buffer | null; abortedTransactions: { producerId: bigint; firstOffset: bigint }[] }> {
    const parts = this.batches.filter((_, i) => this.offsets[i]!.last >= fetchOffset);
    return { records: parts.length === 0 ? null : Buffer.concat(parts), abortedTransactions: [] };
  }
  async offsetForTimestamp(): Promise<{ offset: bigint } | null> {
    return null;
  }
}

function broker(clock: ManualClock, stateLog: MemoryOffsetsTopicLog, log: MemoryLog): { share: ShareGroups; sc: ShareCoordinator } {
  const scheduler = new ManualScheduler(clock);
  const sc = new ShareCoordinator({ log: stateLog, numPartitions: 3, updatesPerSnapshot: 10, clock });
  const configs = new ShareGroupConfigs({ recordLockDurationMs: 30_000, minRecordLockDurationMs: 15_000, maxRecordLockDurationMs: 60_000, deliveryCountLimit: 5, maxRecordLocks: 2000, sessionTimeoutMs: 45_000, minSessionTimeoutMs: 45_000, maxSessionTimeoutMs: 60_000, heartbeatIntervalMs: 5_000, minHeartbeatIntervalMs: 5_000, maxHeartbeatIntervalMs: 15_000 }, null);
  const share = new ShareGroups({
    clock, scheduler, log: pino({ level: 'silent' }), waiters: new PartitionWaiters(scheduler), persister: sc, configs, maxSize: 10, maxShareSessions: 10, initializeRetryIntervalMs: 30_000,
    broker: {
      topicName: (id) => (id === T1 ? 't' : undefined),
      topicByName: (n) => (n === 't' ? { topicId: T1, partitionCount: 1 } : undefined),
      partition: (t, p) => (t === 't' && p === 0 ? log : undefined),
      notLeader: () => null,
      otherGroupExists: () => false,
    },
  });
  return { share, sc };
}

test('over the share coordinator: a heartbeat initialises the state before any fetch; a restart keeps what was consumed; a delete removes it', async () => {
  const clock = new ManualClock();
  const stateLog = new MemoryOffsetsTopicLog();
  const log = new MemoryLog();
  log.append(['a', 'b', 'c']);
  const first = broker(clock, stateLog, log);
  await first.sc.start();
  const join = (share: ShareGroups) => share.coordinator.heartbeat({ groupId: 'g', memberId: 'm', memberEpoch: 0, rackId: null, subscribedTopicNames: ['t'], clientId: 'c', clientHost: '/h' });
  join(first.share);
  await first.share.coordinator.initialized('g');
  assert.deepEqual(await first.sc.readState({ groupId: 'g', topicId: T1, partition: 0 }, -1), { stateEpoch: 1, startOffset: -1n, stateBatches: [] }, 'initialised at the group epoch, start offset to be resolved');
  assert.deepEqual(await first.sc.partitionsOf('g'), [{ topicId: T1, partition: 0 }]);
  // The first fetch resolves share.auto.offset.reset (latest): nothing before offset 3 is delivered.
  const fetch = (share: ShareGroups, epoch: number, acks: { first: bigint; last: bigint }[] = []) => share.fetch({
    groupId: 'g', memberId: 'm', shareSessionEpoch: epoch, maxWaitMs: 0, minBytes: 1, maxBytes: 1 << 20, maxRecords: 500, acquireMode: 'batch_optimized', isRenewAck: false, renewAllowed: true,
    topics: [{ topicId: T1, partitions: [{ partitionIndex: 0, acknowledgementBatches: acks.map((a) => ({ firstOffset: a.first, lastOffset: a.last, acknowledgeTypes: [1] })) }] }],
    forgotten: [], connectionId: 1, signal: new AbortController().signal,
  });
  assert.deepEqual((await fetch(first.share, 0)).partitions, [], 'nothing acquired: the partition is left out of the answer');
  log.append(['d', 'e']);
  assert.deepEqual((await fetch(first.share, 1)).partitions[0]!.acquired, [{ firstOffset: 3n, lastOffset: 4n, deliveryCount: 1 }]);
  await fetch(first.share, 2, [{ first: 3n, last: 3n }]);
  first.share.close();
  // A restart: the new group coordinator does not know the group; its heartbeat must not reset the consumed state.
  const second = broker(clock, stateLog, log);
  await second.sc.start();
  join(second.share);
  await second.share.coordinator.initialized('g');
  const kept = await second.sc.readState({ groupId: 'g', topicId: T1, partition: 0 }, -1);
  assert.equal(kept.startOffset, 4n, 'offset 3 acknowledged before the restart');
  assert.deepEqual(kept.stateBatches.map((b) => [b.firstOffset, b.lastOffset, b.deliveryState, b.deliveryCount]), [[4n, 4n, 0, 1]], 'offset 4 still recorded as delivered once (available again)');
  second.share.close();
  // A group that subscribed and never fetched: deleting it removes the initialised state.
  const third = broker(clock, new MemoryOffsetsTopicLog(), log);
  await third.sc.start();
  join(third.share);
  await third.share.coordinator.initialized('g');
  assert.deepEqual(await third.sc.partitionsOf('g'), [{ topicId: T1, partition: 0 }]);
  third.share.coordinator.heartbeat({ groupId: 'g', memberId: 'm', memberEpoch: -1, rackId: null, subscribedTopicNames: null, clientId: 'c', clientHost: '/h' });
  assert.equal(await third.share.admin.deleteGroup('g'), ErrorCode.NONE);
  assert.deepEqual(await third.sc.partitionsOf('g'), []);
  third.share.close();
});
