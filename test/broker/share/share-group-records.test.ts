// Share groups keep Kafka's ShareGroupMetadata and ShareGroupStatePartitionMetadata
// records in __consumer_offsets (the group coordinator's, in memory here) and
// replay them at load: after a restart an initialised partition is not
// initialised again (its consumed state stays) and a member gets it on its
// first heartbeat; DeleteShareGroupOffsets, AlterShareGroupOffsets and
// DeleteGroups go through the records as Kafka's do; a deleted topic leaves
// the metadata; a partition that moves away takes its groups with it.
// ManualClock/ManualScheduler; the share coordinator over an in-memory
// __share_group_state.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { ManualClock } from '../../../broker/common/clock.js';
import { ManualScheduler } from '../../../broker/common/scheduler.js';
import { ErrorCode, KafkaError } from '../../../broker/protocol/errors.js';
import { MemoryOffsetsTopicLog } from '../../../broker/group/offsets-topic.js';
import { GroupCoordinator } from '../../../broker/group/group-coordinator.js';
import { PartitionWaiters } from '../../../broker/partition-waiters.js';
import { buildRecordBatch } from '../../../broker/protocol/record-batch.js';
import { ShareCoordinator } from '../../../broker/share/share-coordinator.js';
import { ShareGroups } from '../../../broker/share/share-groups.js';
import { ShareGroupConfigs } from '../../../broker/share/share-group-configs.js';
import type { ShareStatePersister } from '../../../broker/share/share-partition-manager.js';
import type { ShareLogView } from '../../../broker/share/share-ports.js';
import { decodeShareGroupRecord, encodeShareGroupRecord, type ShareGroupRecord } from '../../../broker/share/share-group-records.js';

const T1 = 'AAAAAAAAAAAAAAAAAAAAAQ';
const T2 = 'AAAAAAAAAAAAAAAAAAAAAg';

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

interface World {
  readonly clock: ManualClock;
  readonly offsetsLog: MemoryOffsetsTopicLog;
  readonly stateLog: MemoryOffsetsTopicLog;
  readonly log: MemoryLog;
  /** Topic name -> id and partition count; deleting one is removing it. */
  readonly topics: Map<string, { topicId: string; partitionCount: number }>;
}

interface Broker {
  readonly groups: GroupCoordinator;
  readonly share: ShareGroups;
  readonly sc: ShareCoordinator;
  /** Every InitializeShareGroupState the group coordinator sent. */
  readonly initializations: { topicId: string; partition: number; stateEpoch: number; startOffset: bigint }[];
}

function world(): World {
  const log = new MemoryLog();
  log.append(['a', 'b', 'c']);
  return { clock: new ManualClock(), offsetsLog: new MemoryOffsetsTopicLog(), stateLog: new MemoryOffsetsTopicLog(), log, topics: new Map([['t', { topicId: T1, partitionCount: 1 }]]) };
}

/** A broker's group coordinator, share coordinator and share groups, started as broker.ts starts them (groups first, then share groups attach). */
async function start(w: World, opts: { partitioned?: boolean } = {}): Promise<Broker> {
  const scheduler = new ManualScheduler(w.clock);
  const groups = new GroupCoordinator({ log: w.offsetsLog, clock: w.clock, scheduler, config: { offsetsTopicNumPartitions: 1 }, partitioned: opts.partitioned ?? false });
  await groups.start();
  const sc = new ShareCoordinator({ log: w.stateLog, numPartitions: 1, updatesPerSnapshot: 10, clock: w.clock });
  await sc.start();
  const initializations: Broker['initializations'] = [];
  const persister: ShareStatePersister = {
    read: (g, t, p, e) => sc.read(g, t, p, e),
    readWithStateEpoch: (g, t, p, e) => sc.readWithStateEpoch(g, t, p, e),
    write: (g, t, p, s, e, se) => sc.write(g, t, p, s, e, se),
    delete: (g, t, p) => sc.delete(g, t, p),
    initialize: (g, t, p, stateEpoch, startOffset) => {
      initializations.push({ topicId: t, partition: p, stateEpoch, startOffset });
      return sc.initialize(g, t, p, stateEpoch, startOffset);
    },
    partitionsOf: (g) => sc.partitionsOf(g),
  };
  const configs = new ShareGroupConfigs({ recordLockDurationMs: 30_000, minRecordLockDurationMs: 15_000, maxRecordLockDurationMs: 60_000, deliveryCountLimit: 5, maxRecordLocks: 2000, sessionTimeoutMs: 45_000, minSessionTimeoutMs: 45_000, maxSessionTimeoutMs: 60_000, heartbeatIntervalMs: 5_000, minHeartbeatIntervalMs: 5_000, maxHeartbeatIntervalMs: 15_000 }, null);
  const byId = (id: string): string | undefined => [...w.topics].find(([, t]) => t.topicId === id)?.[0];
  const share = new ShareGroups({
    clock: w.clock, scheduler, log: pino({ level: 'silent' }), waiters: new PartitionWaiters(scheduler), persister, configs, maxSize: 10, maxShareSessions: 10, initializeRetryIntervalMs: 30_000,
    records: { append: (g, r) => groups.appendShareRecords(g, r), availability: (g) => groups.shareGroupAvailability(g) },
    broker: {
      topicName: byId,
      topicByName: (n) => w.topics.get(n),
      partition: (t, p) => (w.topics.has(t) && p === 0 ? w.log : undefined),
      notLeader: () => null,
      otherGroupExists: () => false,
    },
  });
  groups.attachShareGroups({ replay: (k, v) => share.coordinator.replay(k, v), unload: (owns) => share.coordinator.unload(owns) });
  return { groups, share, sc, initializations };
}

async function stop(b: Broker): Promise<void> {
  b.share.close();
  await b.groups.close();
}

const join = (b: Broker, memberId = 'm', topics = ['t']) => b.share.coordinator.heartbeat({ groupId: 'g', memberId, memberEpoch: 0, rackId: null, subscribedTopicNames: topics, clientId: 'c', clientHost: '/h' });
const leave = (b: Broker, memberId = 'm') => b.share.coordinator.heartbeat({ groupId: 'g', memberId, memberEpoch: -1, rackId: null, subscribedTopicNames: null, clientId: 'c', clientHost: '/h' });

function fetch(b: Broker, epoch: number, acks: { first: bigint; last: bigint }[] = []) {
  return b.share.fetch({
    groupId: 'g', memberId: 'm', shareSessionEpoch: epoch, maxWaitMs: 0, minBytes: 1, maxBytes: 1 << 20, maxRecords: 500, acquireMode: 'batch_optimized', isRenewAck: false, renewAllowed: true,
    topics: [{ topicId: T1, partitions: [{ partitionIndex: 0, acknowledgementBatches: acks.map((a) => ({ firstOffset: a.first, lastOffset: a.last, acknowledgeTypes: [1] })) }] }],
    forgotten: [], connectionId: 1, signal: new AbortController().signal,
  });
}

/** The share-group records of __consumer_offsets, decoded, oldest first. */
function shareRecords(w: World): ShareGroupRecord[] {
  return w.offsetsLog.records(0).map((r) => decodeShareGroupRecord(r.key, r.value)).filter((r) => r.type !== 'other');
}

/** The last ShareGroupStatePartitionMetadata of the group, as [initializing, initialized, deleting] topic ids with partitions. */
function lastStateMetadata(w: World): { initializing: [string, number[]][]; initialized: [string, number[]][]; deleting: string[] } | null {
  const last = shareRecords(w).filter((r) => r.type === 'statePartitionMetadata').at(-1);
  if (last === undefined || last.type !== 'statePartitionMetadata' || last.value === null) return null;
  return {
    initializing: last.value.initializingTopics.map((t) => [t.topicId, t.partitions]),
    initialized: last.value.initializedTopics.map((t) => [t.topicId, t.partitions]),
    deleting: last.value.deletingTopics.map((t) => t.topicId),
  };
}

test('records: Kafka key types 11 and 15, round trip, tombstones', () => {
  const cases: Exclude<ShareGroupRecord, { type: 'other' }>[] = [
    { type: 'groupMetadata', groupId: 'g', value: { epoch: 7 } },
    { type: 'groupMetadata', groupId: 'g', value: null },
    { type: 'statePartitionMetadata', groupId: 'g', value: { initializingTopics: [{ topicId: T1, topicName: 't', partitions: [1] }], initializedTopics: [{ topicId: T2, topicName: 'u', partitions: [0, 2] }], deletingTopics: [{ topicId: T2, topicName: 'u' }] } },
    { type: 'statePartitionMetadata', groupId: 'g', value: null },
  ];
  for (const r of cases) {
    const e = encodeShareGroupRecord(r);
    assert.equal(e.key.readInt16BE(0), r.type === 'groupMetadata' ? 11 : 15, 'the key opens with the record type');
    if (r.value !== null) assert.equal(e.value!.readInt16BE(0), 0, 'value version 0');
    assert.deepEqual(decodeShareGroupRecord(e.key, e.value), r);
  }
});

test('a restart replays the records: no second initialisation, the consumed state stays, the member is assigned on its first heartbeat', async () => {
  const w = world();
  const first = await start(w);
  const j = join(first);
  assert.deepEqual(j.assignment, [], 'nothing initialised yet');
  await first.share.coordinator.initialized('g');
  assert.deepEqual(first.initializations, [{ topicId: T1, partition: 0, stateEpoch: 1, startOffset: -1n }]);
  // Recorded initializing before the share coordinator was asked, then initialized.
  const states = shareRecords(w).filter((r) => r.type === 'statePartitionMetadata').map((r) => r.type === 'statePartitionMetadata' && r.value !== null ? [r.value.initializingTopics.length, r.value.initializedTopics.length] : null);
  assert.deepEqual(states, [[1, 0], [0, 1]]);
  assert.ok(shareRecords(w).some((r) => r.type === 'groupMetadata' && r.value?.epoch === 1), 'the group epoch is recorded');
  assert.deepEqual((await fetch(first, 0)).partitions, [], 'latest: nothing before offset 3 (a partition with nothing to report is left out, as Kafka does)');
  w.log.append(['d', 'e', 'f']);
  assert.deepEqual((await fetch(first, 1)).partitions[0]!.acquired, [{ firstOffset: 3n, lastOffset: 5n, deliveryCount: 1 }]);
  await fetch(first, 2, [{ first: 3n, last: 4n }]);
  const epochBefore = first.share.coordinator.group('g')!.groupEpoch;
  await stop(first);

  const second = await start(w);
  const g = second.share.coordinator.group('g');
  assert.ok(g !== undefined, 'the group is back, empty');
  assert.equal(g.state, 'Empty');
  assert.equal(g.groupEpoch, epochBefore, 'its epoch is back');
  assert.deepEqual(g.stateMetadata.toRecord().initializedTopics, [{ topicId: T1, topicName: 't', partitions: [0] }]);
  const again = join(second);
  assert.deepEqual(again.assignment, [{ topicId: T1, partitions: [0] }], 'assigned on the first heartbeat');
  assert.ok(again.memberEpoch > epochBefore, 'the epoch goes on from the recorded one');
  await second.share.coordinator.initialized('g');
  assert.deepEqual(second.initializations, [], 'not initialised again');
  const got = await fetch(second, 0);
  assert.deepEqual(got.partitions[0]!.acquired, [{ firstOffset: 5n, lastOffset: 5n, deliveryCount: 2 }], 'only the unacknowledged record comes again; 3 and 4 stay acknowledged');
  await stop(second);
});

test('DeleteShareGroupOffsets: recorded deleting, state deleted, then out of the metadata; Kafka\'s row errors', async () => {
  const w = world();
  w.topics.set('u', { topicId: T2, partitionCount: 1 });
  const b = await start(w);
  join(b);
  await b.share.coordinator.initialized('g');
  await assert.rejects(b.share.admin.deleteOffsets('g', ['t']), (e: unknown) => e instanceof KafkaError && e.code === ErrorCode.NON_EMPTY_GROUP);
  leave(b);
  await b.share.coordinator.initialized('g');
  const before = w.offsetsLog.records(0).length;
  const rows = await b.share.admin.deleteOffsets('g', ['t', 'u', 'nope']);
  assert.deepEqual(rows.map((r) => [r.topicName, r.errorCode, r.errorMessage]), [
    ['t', ErrorCode.NONE, null],
    ['u', ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 'There is no offset information to delete.'],
    ['nope', ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 'This server does not host this topic-partition.'],
  ]);
  const written = w.offsetsLog.records(0).slice(before).map((r) => decodeShareGroupRecord(r.key, r.value));
  assert.deepEqual(written.map((r) => r.type === 'statePartitionMetadata' && r.value !== null ? [r.value.initializedTopics.length, r.value.deletingTopics.map((t) => t.topicId)] : r.type), [[0, [T1]], [0, []]], 'deleting first, then removed');
  assert.deepEqual(await b.sc.partitionsOf('g'), [], 'the share coordinator holds no state');
  assert.deepEqual(await b.share.admin.deleteOffsets('g', ['t']).then((r) => r.map((x) => x.errorCode)), [ErrorCode.UNKNOWN_TOPIC_OR_PARTITION], 'nothing left to delete');
  await stop(b);
});

test('AlterShareGroupOffsets: InitializeShareGroupState at the new start, recorded initialized; NON_EMPTY_GROUP with members', async () => {
  const w = world();
  w.log.append(['d', 'e', 'f']);
  const b = await start(w);
  const fresh = await b.share.admin.alterOffsets('g', [{ topicName: 't', partitions: [{ partitionIndex: 0, startOffset: 2n }, { partitionIndex: 5, startOffset: 0n }] }]);
  assert.deepEqual(fresh[0]!.partitions.map((p) => p.errorCode), [ErrorCode.NONE, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]);
  assert.deepEqual(b.initializations, [{ topicId: T1, partition: 0, stateEpoch: 0, startOffset: 2n }], 'the share coordinator initialises it');
  assert.deepEqual(lastStateMetadata(w), { initializing: [], initialized: [[T1, [0]]], deleting: [] });
  join(b);
  assert.deepEqual(b.share.coordinator.group('g')!.members.get('m')!.assignment, new Map([[T1, [0]]]), 'initialised by the alter: assigned at once');
  await b.share.coordinator.initialized('g');
  assert.equal(b.initializations.length, 1, 'a heartbeat does not initialise it again');
  assert.deepEqual((await fetch(b, 0)).partitions[0]!.acquired, [{ firstOffset: 2n, lastOffset: 5n, deliveryCount: 1 }]);
  await fetch(b, 1, [{ first: 2n, last: 5n }]);
  await assert.rejects(b.share.admin.alterOffsets('g', [{ topicName: 't', partitions: [{ partitionIndex: 0, startOffset: 0n }] }]), (e: unknown) => e instanceof KafkaError && e.code === ErrorCode.NON_EMPTY_GROUP);
  leave(b);
  await b.share.coordinator.initialized('g');
  await b.share.admin.alterOffsets('g', [{ topicName: 't', partitions: [{ partitionIndex: 0, startOffset: 1n }] }]);
  const state = await b.sc.readState({ groupId: 'g', topicId: T1, partition: 0 }, -1);
  assert.equal(state.startOffset, 1n, 'reset below what was acknowledged');
  assert.deepEqual(state.stateBatches, [], 'no in-flight records');
  assert.equal(b.initializations.at(-1)!.startOffset, 1n);
  await stop(b);
});

test('DeleteGroups: the share state is deleted before the group\'s tombstones; after a restart the group is gone', async () => {
  const w = world();
  const b = await start(w);
  join(b);
  await b.share.coordinator.initialized('g');
  assert.equal(await b.share.admin.deleteGroup('g'), ErrorCode.NON_EMPTY_GROUP);
  leave(b);
  await b.share.coordinator.initialized('g');
  const before = w.offsetsLog.records(0).length;
  assert.equal(await b.share.admin.deleteGroup('g'), ErrorCode.NONE);
  assert.deepEqual(await b.sc.partitionsOf('g'), []);
  const written = w.offsetsLog.records(0).slice(before).map((r) => decodeShareGroupRecord(r.key, r.value)).filter((r) => r.type !== 'other');
  assert.deepEqual(written.map((r) => [r.type, r.value === null ? null : r.type === 'statePartitionMetadata' ? r.value.deletingTopics.map((t) => t.topicId) : 'value']), [
    ['statePartitionMetadata', [T1]],
    ['statePartitionMetadata', null],
    ['groupMetadata', null],
  ], 'recorded deleting, then the tombstones');
  assert.equal(b.share.coordinator.group('g'), undefined);
  await stop(b);
  const again = await start(w);
  assert.equal(again.share.coordinator.group('g'), undefined, 'the tombstones replayed');
  await stop(again);
});

test('a deleted topic leaves the group\'s metadata (and the record): on the deletion, or at the next admin operation', async () => {
  const w = world();
  w.topics.set('u', { topicId: T2, partitionCount: 1 });
  const b = await start(w);
  join(b, 'm', ['t', 'u']);
  await b.share.coordinator.initialized('g');
  leave(b);
  await b.share.coordinator.initialized('g');
  assert.deepEqual(lastStateMetadata(w)?.initialized.map(([id]) => id), [T1, T2]);
  w.topics.delete('t');
  b.share.coordinator.topicDeleted(T1);
  await b.share.coordinator.initialized('g');
  assert.deepEqual(lastStateMetadata(w), { initializing: [], initialized: [[T2, [0]]], deleting: [] }, 'the deletion was heard');
  w.topics.delete('u');
  await b.share.admin.deleteOffsets('g', []);
  assert.deepEqual(lastStateMetadata(w), { initializing: [], initialized: [], deleting: [] }, 'a deletion not heard is swept by the next operation');
  await stop(b);
});

test('partitioned: groups answer NOT_COORDINATOR until their partition loads, come back from the records, and go when it unloads', async () => {
  const w = world();
  const alone = await start(w);
  join(alone);
  await alone.share.coordinator.initialized('g');
  await stop(alone);
  const b = await start(w, { partitioned: true });
  assert.throws(() => join(b), (e: unknown) => e instanceof KafkaError && e.code === ErrorCode.NOT_COORDINATOR);
  assert.equal(await b.share.admin.deleteGroup('g'), ErrorCode.NOT_COORDINATOR);
  await b.groups.loadPartition(0);
  assert.deepEqual(b.share.coordinator.group('g')?.stateMetadata.toRecord().initializedTopics.map((t) => t.topicId), [T1], 'replayed with the partition');
  assert.deepEqual(join(b).assignment, [{ topicId: T1, partitions: [0] }]);
  b.groups.unloadPartition(0);
  assert.equal(b.share.coordinator.group('g'), undefined, 'gone with the partition');
  assert.throws(() => join(b), (e: unknown) => e instanceof KafkaError && e.code === ErrorCode.NOT_COORDINATOR);
  await stop(b);
});
