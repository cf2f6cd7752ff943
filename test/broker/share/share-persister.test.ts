// The share coordinator in partitioned mode and the routed persister, over the
// in-memory twin of a replicated __share_group_state (one MemoryOffsetsTopicLog
// both coordinators read, as the replicas of a partition hold the same
// records): keys are served only where their partition is loaded
// (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS), the persister follows the
// partition's leadership with retries, leader and state epochs fence stale
// writers, and a share-partition whose leader changes is loaded by the new
// leader from the coordinator: acknowledged records stay done, acquired ones
// become available again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { ManualClock } from '../../../broker/common/clock.js';
import { ManualScheduler } from '../../../broker/common/scheduler.js';
import { MemoryOffsetsTopicLog, type OffsetsTopicRecord } from '../../../broker/group/offsets-topic.js';
import { buildRecordBatch } from '../../../broker/protocol/record-batch.js';
import { ErrorCode, KafkaError } from '../../../broker/protocol/errors.js';
import { partitionForShareKey, ShareCoordinator } from '../../../broker/share/share-coordinator.js';
import { ShareGroupConfigs } from '../../../broker/share/share-group-configs.js';
import { MemoryShareStatePersister, SharePartitionManager } from '../../../broker/share/share-partition-manager.js';
import { RoutedStatePersister, shareCoordinatorKey, type PersisterRouting } from '../../../broker/share/share-persister.js';
import { shareStateService, type ShareStateChannel } from '../../../broker/share/share-state-service.js';
import type { ShareLogView } from '../../../broker/share/share-ports.js';

const T = 'AAAAAAAAAAAAAAAAAAAAAQ';
const N = 4;
const silent = pino({ level: 'silent' });

async function rejectsWith(p: Promise<unknown>, code: number): Promise<void> {
  await assert.rejects(p, (e: unknown) => e instanceof KafkaError && e.code === code);
}

/** Lets pending promise chains run (the persister's calls, the coordinators' appends). */
async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise<void>((r) => setImmediate(r));
}

/** Brokers 1 and 2, each with a partitioned share coordinator over the same log, and which of them leads each state partition. */
function twoBrokers(log = new MemoryOffsetsTopicLog()) {
  const clock = new ManualClock(1_000);
  const scheduler = new ManualScheduler(clock);
  const coordinators = new Map<number, ShareCoordinator>([1, 2].map((n) => [n, new ShareCoordinator({ log, numPartitions: N, updatesPerSnapshot: 3, clock, partitioned: true })] as const));
  const services = new Map<number, ShareStateChannel>([...coordinators].map(([n, c]) => [n, shareStateService(c)] as const));
  const leaders = new Map<number, number>();
  const calls: number[] = [];
  const routing: PersisterRouting = {
    coordinatorOf: (key) => {
      const [g, t, p] = key.split(':');
      return leaders.get(partitionForShareKey(g!, t!, Number(p), N)) ?? null;
    },
    channel: (node) => {
      calls.push(node);
      return services.get(node)!;
    },
    candidates: () => [{ topicId: T, partitionCount: 3 }],
  };
  /** Each broker has its own persister (they share nothing but the coordinators). */
  const newPersister = (): RoutedStatePersister => new RoutedStatePersister({ routing, clock, scheduler, log: silent, timeoutMs: 5_000, backoffMs: 100, maxBackoffMs: 400 });
  const persister = newPersister();
  /** Leadership of state partition p moves to `node` (the old leader unloads first, as ClusterCoordinators does). */
  const lead = async (p: number, node: number | null): Promise<void> => {
    const old = leaders.get(p);
    if (old !== undefined) coordinators.get(old)!.unloadPartition(p);
    if (node === null) leaders.delete(p);
    else {
      leaders.set(p, node);
      await coordinators.get(node)!.loadPartition(p, 0);
    }
  };
  return { clock, scheduler, coordinators, leaders, persister, newPersister, lead, calls, log };
}

const stateOf = (start: bigint, states: number[]) => ({
  startOffset: start,
  stateBatches: states.map((s, i) => ({ firstOffset: start + BigInt(i), lastOffset: start + BigInt(i), deliveryState: s, deliveryCount: 1 })),
});

test('partitioned share coordinator: a key is served only where its partition is loaded; loading answers COORDINATOR_LOAD_IN_PROGRESS', async () => {
  let open: () => void = () => undefined;
  const gate = new Promise<void>((r) => (open = r));
  class SlowLog extends MemoryOffsetsTopicLog {
    override async *readAll(partition: number): AsyncIterable<OffsetsTopicRecord> {
      await gate;
      yield* super.readAll(partition);
    }
  }
  const sc = new ShareCoordinator({ log: new SlowLog(), numPartitions: N, updatesPerSnapshot: 3, clock: new ManualClock(), partitioned: true });
  const key = { groupId: 'g', topicId: T, partition: 0 };
  const p = sc.partitionFor('g', T, 0);
  await rejectsWith(sc.readState(key, 0), ErrorCode.NOT_COORDINATOR);
  const loading = sc.loadPartition(p, 3);
  assert.equal(sc.ownedPartitions().get(p), 'loading');
  await rejectsWith(sc.readState(key, 0), ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
  await rejectsWith(sc.writeState(key, { stateEpoch: 0, leaderEpoch: 0, ...stateOf(0n, [2]) }), ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
  open();
  await loading;
  assert.deepEqual(await sc.readState(key, 0), { stateEpoch: 0, startOffset: -1n, stateBatches: [] }, 'never initialised: start offset -1');
  sc.unloadPartition(p);
  await rejectsWith(sc.readState(key, 0), ErrorCode.NOT_COORDINATOR);
});

test('share coordinator fencing: a write below the recorded leader epoch is FENCED_LEADER_EPOCH, below the stored state epoch FENCED_STATE_EPOCH', async () => {
  const { coordinators, lead } = twoBrokers();
  const key = { groupId: 'g', topicId: T, partition: 1 };
  const sc = coordinators.get(1)!;
  await lead(sc.partitionFor('g', T, 1), 1);
  await sc.writeState(key, { stateEpoch: 0, leaderEpoch: 4, ...stateOf(5n, [0]) });
  // A new share-partition leader (epoch 5) reads: the old one (4) can no longer write.
  assert.equal((await sc.readState(key, 5)).startOffset, 5n);
  await rejectsWith(sc.writeState(key, { stateEpoch: 0, leaderEpoch: 4, ...stateOf(6n, []) }), ErrorCode.FENCED_LEADER_EPOCH);
  await rejectsWith(sc.readState(key, 3), ErrorCode.FENCED_LEADER_EPOCH);
  await sc.writeState(key, { stateEpoch: 0, leaderEpoch: 5, ...stateOf(6n, [2]) });
  // InitializeShareGroupState at a new state epoch (offsets reset): writes of the older state epoch are fenced.
  await sc.initializeState(key, 1, 20n);
  await rejectsWith(sc.writeState(key, { stateEpoch: 0, leaderEpoch: 5, ...stateOf(21n, []) }), ErrorCode.FENCED_STATE_EPOCH);
  await rejectsWith(sc.initializeState(key, 0, 30n), ErrorCode.FENCED_STATE_EPOCH);
  assert.deepEqual(await sc.readSummary(key, 5), { stateEpoch: 1, leaderEpoch: 5, startOffset: 20n, deliveryCompleteCount: 0 });
});

test('routed persister: the state follows its __share_group_state partition from one coordinator to the other', async () => {
  const { coordinators, persister, lead, calls } = twoBrokers();
  const p = partitionForShareKey('g', T, 0, N);
  for (let q = 0; q < N; q++) await lead(q, 1);
  const state = stateOf(3n, [2, 0, 4, 0]);
  await persister.write('g', T, 0, state, 0);
  assert.deepEqual(calls, [1]);
  calls.length = 0;
  await lead(p, 2);
  // Broker 2 replays the partition it now leads: the same state, read through the persister.
  assert.deepEqual(await persister.read('g', T, 0, 1), state);
  assert.deepEqual(calls, [2]);
  await rejectsWith(coordinators.get(1)!.readState({ groupId: 'g', topicId: T, partition: 0 }, 1), ErrorCode.NOT_COORDINATOR);
  assert.deepEqual(await persister.partitionsOf('g'), [{ topicId: T, partition: 0 }]);
  await persister.delete('g', T, 0);
  assert.equal(await persister.read('g', T, 0, 1), null);
  assert.deepEqual(await persister.partitionsOf('g'), []);
});

test('routed persister: NOT_COORDINATOR and no coordinator are retried with backoff until the new coordinator has loaded; then the deadline', async () => {
  const { clock, coordinators, persister, lead, leaders, calls } = twoBrokers();
  const p = partitionForShareKey('g', T, 2, N);
  await lead(p, 1);
  // Broker 1 lost the partition, but the routing still names it (the image lags): NOT_COORDINATOR.
  coordinators.get(1)!.unloadPartition(p);
  assert.equal(leaders.get(p), 1);
  const write = persister.write('g', T, 2, stateOf(0n, [2]), 0);
  let done = false;
  void write.then(() => (done = true), () => (done = true));
  await settle();
  assert.equal(done, false);
  await lead(p, 2);
  clock.advance(100);
  await settle();
  assert.equal(done, true);
  await write;
  assert.ok(calls.includes(2), `retried at the new coordinator: ${calls.join(',')}`);
  // Nobody leads the partition: COORDINATOR_NOT_AVAILABLE once timeoutMs (5 s) has passed.
  await lead(p, null);
  const failing = persister.read('g', T, 2, 0);
  let failed: unknown = null;
  failing.catch((e: unknown) => (failed = e));
  for (let i = 0; i < 60 && failed === null; i++) {
    clock.advance(100);
    await settle();
  }
  assert.ok(failed instanceof KafkaError && failed.code === ErrorCode.COORDINATOR_NOT_AVAILABLE, String(failed));
});

/** A one-partition log of ten single-record batches. */
class TenRecords implements ShareLogView {
  logStartOffset = 0n;
  highWatermark = 10n;
  lastStableOffset = 10n;
  constructor(public leaderEpoch: number) {}
  async read(fetchOffset: bigint): Promise<{ records: Buffer | null; abortedTransactions: { producerId: bigint; firstOffset: bigint }[] }> {
    const parts: Buffer[] = [];
    for (let o = fetchOffset; o < 10n; o++) parts.push(buildRecordBatch({ baseOffset: o, records: [{ value: `v${o}`, timestamp: 0 }] }));
    return { records: parts.length === 0 ? null : Buffer.concat(parts), abortedTransactions: [] };
  }
  async offsetForTimestamp(): Promise<{ offset: bigint } | null> {
    return null;
  }
}

test('leadership move: the new share-partition leader loads the state from the coordinator; acknowledged stay done, acquired are available; the old leader is fenced', async () => {
  const { clock, scheduler, persister, lead } = twoBrokers();
  await lead(partitionForShareKey('g', T, 0, N), 1);
  const configs = new ShareGroupConfigs({ recordLockDurationMs: 30_000, minRecordLockDurationMs: 15_000, maxRecordLockDurationMs: 60_000, deliveryCountLimit: 5, maxRecordLocks: 2000, sessionTimeoutMs: 45_000, minSessionTimeoutMs: 45_000, maxSessionTimeoutMs: 60_000, heartbeatIntervalMs: 5_000, minHeartbeatIntervalMs: 5_000, maxHeartbeatIntervalMs: 15_000 }, null);
  await configs.alter('g', [{ name: 'share.auto.offset.reset', op: 0, value: 'earliest' }], false);
  const manager = (view: ShareLogView) => new SharePartitionManager({ clock, scheduler, log: silent, persister, groupConfigs: configs, partition: () => view, onAvailable: () => undefined });
  const oldView = new TenRecords(0);
  const old = manager(oldView);
  const opts = { maxRecords: 100, maxBytes: 1 << 20, mode: 'batch_optimized' as const };
  const got = await old.fetch('g', 'm1', T, 0, oldView, opts);
  assert.deepEqual(got.acquired, [{ firstOffset: 0n, lastOffset: 9n, deliveryCount: 1 }]);
  await old.acknowledge('g', 'm1', T, 0, oldView, [{ firstOffset: 0n, lastOffset: 3n, acknowledgeTypes: [1] }]);
  // The partition's leader changes (epoch 1) with 4-9 still acquired by m1.
  const newView = new TenRecords(1);
  const next = manager(newView);
  const again = await next.fetch('g', 'm2', T, 0, newView, opts);
  assert.deepEqual(again.acquired, [{ firstOffset: 4n, lastOffset: 9n, deliveryCount: 2 }], 'in-flight records available again with their delivery count, acknowledged ones not redelivered');
  // The old leader's write (epoch 0) is fenced: its acknowledgement fails, its copy is dropped.
  await rejectsWith(old.acknowledge('g', 'm1', T, 0, oldView, [{ firstOffset: 4n, lastOffset: 5n, acknowledgeTypes: [1] }]), ErrorCode.NOT_LEADER_OR_FOLLOWER);
  assert.equal(old.loaded('g', T, 0), undefined);
  // The same manager sees its partition's epoch change: it reloads from the coordinator.
  await next.acknowledge('g', 'm2', T, 0, newView, [{ firstOffset: 4n, lastOffset: 9n, acknowledgeTypes: [1] }]);
  newView.leaderEpoch = 2;
  await next.fetch('g', 'm2', T, 0, newView, opts);
  assert.equal(next.loaded('g', T, 0)?.startOffset, 10n);
});

test('share-state service: each partition of a request is answered on its own, errors as Kafka codes', async () => {
  const { coordinators, lead } = twoBrokers();
  const service = shareStateService(coordinators.get(1)!);
  const served = [0, 1, 2, 3, 4, 5].find((p) => partitionForShareKey('g', T, p, N) === 0)!;
  const other = [0, 1, 2, 3, 4, 5].find((p) => partitionForShareKey('g', T, p, N) !== 0)!;
  await lead(0, 1);
  const write = await service.write({ groupId: 'g', topics: [{ topicId: T, partitions: [served, other].map((partition) => ({ partition, stateEpoch: 0, leaderEpoch: 2, startOffset: 7n, deliveryCompleteCount: 1, stateBatches: [{ firstOffset: 7n, lastOffset: 7n, deliveryState: 2, deliveryCount: 1 }] })) }] });
  assert.deepEqual(write.results[0]!.partitions.map((p) => [p.partition, p.errorCode]), [[served, ErrorCode.NONE], [other, ErrorCode.NOT_COORDINATOR]]);
  const read = await service.read({ groupId: 'g', topics: [{ topicId: T, partitions: [{ partition: served, leaderEpoch: 1 }, { partition: -1, leaderEpoch: 2 }] }] });
  assert.deepEqual(read.results[0]!.partitions.map((p) => p.errorCode), [ErrorCode.FENCED_LEADER_EPOCH, ErrorCode.INVALID_REQUEST]);
  const summary = await service.summary({ groupId: 'g', topics: [{ topicId: T, partitions: [{ partition: served, leaderEpoch: 2 }] }] });
  assert.deepEqual(summary.results[0]!.partitions[0], { partition: served, errorCode: 0, errorMessage: null, stateEpoch: 0, leaderEpoch: 2, startOffset: 7n, deliveryCompleteCount: 1 });
  const del = await service.delete({ groupId: 'g', topics: [{ topicId: T, partitions: [{ partition: served }] }] });
  assert.equal(del.results[0]!.partitions[0]!.errorCode, ErrorCode.NONE);
  const init = await service.initialize({ groupId: 'g', topics: [{ topicId: T, partitions: [{ partition: served, stateEpoch: 1, startOffset: 3n }] }] });
  assert.equal(init.results[0]!.partitions[0]!.errorCode, ErrorCode.NONE);
  const after = await service.read({ groupId: 'g', topics: [{ topicId: T, partitions: [{ partition: served, leaderEpoch: 3 }] }] });
  assert.deepEqual(after.results[0]!.partitions[0], { partition: served, errorCode: 0, errorMessage: null, stateEpoch: 1, startOffset: 3n, stateBatches: [] });
});

test('routed persister: InitializeShareGroupState at start offset -1 reaches the key\'s coordinator; the key then counts as having state, a lower state epoch is fenced', async () => {
  const { coordinators, persister, lead } = twoBrokers();
  for (let q = 0; q < N; q++) await lead(q, 2);
  assert.deepEqual(await persister.partitionsOf('g'), []);
  await persister.initialize('g', T, 1, 3, -1n);
  assert.deepEqual(await coordinators.get(2)!.readState({ groupId: 'g', topicId: T, partition: 1 }, -1), { stateEpoch: 3, startOffset: -1n, stateBatches: [] });
  assert.equal(await persister.read('g', T, 1, 0), null, 'no start offset yet: the share-partition resolves share.auto.offset.reset');
  assert.deepEqual(await persister.partitionsOf('g'), [{ topicId: T, partition: 1 }], 'initialised by the group coordinator');
  await rejectsWith(persister.initialize('g', T, 1, 2, -1n), ErrorCode.FENCED_STATE_EPOCH);
  // The share-partition's first write carries the state epoch it read; one below is fenced.
  assert.deepEqual(await persister.readWithStateEpoch('g', T, 1, 0), { state: null, stateEpoch: 3 });
  await rejectsWith(persister.write('g', T, 1, stateOf(5n, [0]), 0, 2), ErrorCode.FENCED_STATE_EPOCH);
  await persister.write('g', T, 1, stateOf(5n, [0]), 0, 3);
  assert.deepEqual(await persister.read('g', T, 1, 0), stateOf(5n, [0]));
});

test('offsets reset from another broker: the share-partition leader\'s next write carries the old state epoch and is fenced (FENCED_STATE_EPOCH); it drops its copy and its next fetch loads the new start offset', async () => {
  const { clock, scheduler, coordinators, newPersister, lead } = twoBrokers();
  // Broker 2 coordinates the key's state; broker 1 leads the share-partition; broker 2 is also the group coordinator.
  await lead(partitionForShareKey('g', T, 0, N), 2);
  const configs = new ShareGroupConfigs({ recordLockDurationMs: 30_000, minRecordLockDurationMs: 15_000, maxRecordLockDurationMs: 60_000, deliveryCountLimit: 5, maxRecordLocks: 2000, sessionTimeoutMs: 45_000, minSessionTimeoutMs: 45_000, maxSessionTimeoutMs: 60_000, heartbeatIntervalMs: 5_000, minHeartbeatIntervalMs: 5_000, maxHeartbeatIntervalMs: 15_000 }, null);
  await configs.alter('g', [{ name: 'share.auto.offset.reset', op: 0, value: 'earliest' }], false);
  const view = new TenRecords(0);
  const persister1 = newPersister();
  const persister2 = newPersister();
  const leader = new SharePartitionManager({ clock, scheduler, log: silent, persister: persister1, groupConfigs: configs, partition: () => view, onAvailable: () => undefined });
  const groupSide = new SharePartitionManager({ clock, scheduler, log: silent, persister: persister2, groupConfigs: configs, partition: () => view, onAvailable: () => undefined });
  const opts = { maxRecords: 100, maxBytes: 1 << 20, mode: 'batch_optimized' as const };
  // The group coordinator initialises the state at group epoch 1; the leader loads it (state epoch 1) and delivers 0-9.
  await persister2.initialize('g', T, 0, 1, -1n);
  assert.deepEqual((await leader.fetch('g', 'm1', T, 0, view, opts)).acquired, [{ firstOffset: 0n, lastOffset: 9n, deliveryCount: 1 }]);
  await leader.acknowledge('g', 'm1', T, 0, view, [{ firstOffset: 0n, lastOffset: 1n, acknowledgeTypes: [1] }]);
  // The group empties (epoch 3) and AlterShareGroupOffsets on broker 2 sets the start offset to 7 at that epoch.
  await groupSide.initialize('g', T, 0, 3, 7n);
  const sc = coordinators.get(2)!;
  assert.deepEqual(await sc.readState({ groupId: 'g', topicId: T, partition: 0 }, -1), { stateEpoch: 3, startOffset: 7n, stateBatches: [] });
  // A describe answered on broker 1 reads through the same persister: it must not move the epoch the cached copy writes with.
  assert.deepEqual(await persister1.readWithStateEpoch('g', T, 0), { state: { startOffset: 7n, stateBatches: [] }, stateEpoch: 3 });
  // Broker 1 still holds its copy (start 2, 2-9 acquired); its acknowledgement writes at state epoch 1: refused, the reset stands.
  assert.equal(leader.loaded('g', T, 0)?.startOffset, 2n);
  await rejectsWith(leader.acknowledge('g', 'm1', T, 0, view, [{ firstOffset: 2n, lastOffset: 4n, acknowledgeTypes: [1] }]), ErrorCode.FENCED_STATE_EPOCH);
  assert.equal(leader.loaded('g', T, 0), undefined, 'the fenced copy is dropped from the cache');
  assert.deepEqual(await sc.readState({ groupId: 'g', topicId: T, partition: 0 }, -1), { stateEpoch: 3, startOffset: 7n, stateBatches: [] }, 'the reset was not overwritten');
  // The next fetch loads the share-partition again from the coordinator: from offset 7, at state epoch 3.
  assert.deepEqual((await leader.fetch('g', 'm2', T, 0, view, opts)).acquired, [{ firstOffset: 7n, lastOffset: 9n, deliveryCount: 1 }]);
  assert.equal(leader.loaded('g', T, 0)?.startOffset, 7n);
  await leader.acknowledge('g', 'm2', T, 0, view, [{ firstOffset: 7n, lastOffset: 9n, acknowledgeTypes: [1] }]);
  assert.deepEqual(await sc.readState({ groupId: 'g', topicId: T, partition: 0 }, -1), { stateEpoch: 3, startOffset: 10n, stateBatches: [] }, 'the reloaded copy writes at the new epoch');
});

test('in memory: an offsets reset fences the cached share-partition; its lock-expiry write is refused (FENCED_STATE_EPOCH), the copy goes, the next fetch starts at the new start offset', async () => {
  const clock = new ManualClock(1_000);
  const scheduler = new ManualScheduler(clock);
  const persister = new MemoryShareStatePersister();
  const configs = new ShareGroupConfigs({ recordLockDurationMs: 30_000, minRecordLockDurationMs: 15_000, maxRecordLockDurationMs: 60_000, deliveryCountLimit: 5, maxRecordLocks: 2000, sessionTimeoutMs: 45_000, minSessionTimeoutMs: 45_000, maxSessionTimeoutMs: 60_000, heartbeatIntervalMs: 5_000, minHeartbeatIntervalMs: 5_000, maxHeartbeatIntervalMs: 15_000 }, null);
  await configs.alter('g', [{ name: 'share.auto.offset.reset', op: 0, value: 'earliest' }], false);
  const view = new TenRecords(0);
  let available = 0;
  const leader = new SharePartitionManager({ clock, scheduler, log: silent, persister, groupConfigs: configs, partition: () => view, onAvailable: () => void available++ });
  const opts = { maxRecords: 100, maxBytes: 1 << 20, mode: 'batch_optimized' as const };
  await persister.initialize('g', T, 0, 1, -1n);
  assert.deepEqual((await leader.fetch('g', 'm1', T, 0, view, opts)).acquired, [{ firstOffset: 0n, lastOffset: 9n, deliveryCount: 1 }]);
  await settle();
  assert.equal(persister.stateEpochs.get(`g\u0000${T}\u00000`), 1);
  // Another broker's AlterShareGroupOffsets: the state starts at 6, at state epoch 2 (nothing reaches this manager).
  await persister.initialize('g', T, 0, 2, 6n);
  await rejectsWith(persister.write('g', T, 0, { startOffset: 0n, stateBatches: [] }, 0, 1), ErrorCode.FENCED_STATE_EPOCH);
  // The locks of 0-9 expire: the copy writes at epoch 1, is refused and dropped; the reset stands.
  clock.advance(30_000);
  await settle();
  assert.ok(available > 0);
  assert.equal(leader.loaded('g', T, 0), undefined, 'the fenced copy is dropped');
  assert.deepEqual(await persister.read('g', T, 0), { startOffset: 6n, stateBatches: [] });
  assert.deepEqual((await leader.fetch('g', 'm1', T, 0, view, opts)).acquired, [{ firstOffset: 6n, lastOffset: 9n, deliveryCount: 1 }], 'reloaded at the new start offset');
  await settle();
  assert.equal(persister.states.get(`g\u0000${T}\u00000`)?.startOffset, 6n);
  leader.close();
});

test('in memory: a member new to a cached share-partition has its state epoch checked first, so its first fetch after a reset or a delete elsewhere is served from the new state', async () => {
  const clock = new ManualClock(1_000);
  const scheduler = new ManualScheduler(clock);
  const persister = new MemoryShareStatePersister();
  const configs = new ShareGroupConfigs({ recordLockDurationMs: 30_000, minRecordLockDurationMs: 15_000, maxRecordLockDurationMs: 60_000, deliveryCountLimit: 5, maxRecordLocks: 2000, sessionTimeoutMs: 45_000, minSessionTimeoutMs: 45_000, maxSessionTimeoutMs: 60_000, heartbeatIntervalMs: 5_000, minHeartbeatIntervalMs: 5_000, maxHeartbeatIntervalMs: 15_000 }, null);
  await configs.alter('g', [{ name: 'share.auto.offset.reset', op: 0, value: 'earliest' }], false);
  const view = new TenRecords(0);
  const leader = new SharePartitionManager({ clock, scheduler, log: silent, persister, groupConfigs: configs, partition: () => view, onAvailable: () => undefined });
  const opts = { maxRecords: 100, maxBytes: 1 << 20, mode: 'batch_optimized' as const };
  await persister.initialize('g', T, 0, 1, -1n);
  await leader.fetch('g', 'm1', T, 0, view, opts);
  await leader.acknowledge('g', 'm1', T, 0, view, [{ firstOffset: 0n, lastOffset: 2n, acknowledgeTypes: [1] }]);
  await leader.releaseMember('g', 'm1');
  assert.equal(leader.loaded('g', T, 0)?.startOffset, 3n);
  // The group is empty; another broker resets the start offset to 8 (state epoch 2).
  await persister.initialize('g', T, 0, 2, 8n);
  assert.deepEqual((await leader.fetch('g', 'm2', T, 0, view, opts)).acquired, [{ firstOffset: 8n, lastOffset: 9n, deliveryCount: 1 }], 'not 3-9 from the stale copy');
  // A member it served goes on without a read; the state is then deleted elsewhere (DeleteShareGroupOffsets).
  await leader.acknowledge('g', 'm2', T, 0, view, [{ firstOffset: 8n, lastOffset: 9n, acknowledgeTypes: [1] }]);
  await leader.releaseMember('g', 'm2');
  await persister.delete('g', T, 0);
  assert.deepEqual((await leader.fetch('g', 'm3', T, 0, view, opts)).acquired, [{ firstOffset: 0n, lastOffset: 9n, deliveryCount: 1 }], 'no state: share.auto.offset.reset (earliest) again');
  leader.close();
});
