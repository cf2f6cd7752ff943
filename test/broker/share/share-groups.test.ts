// Share group membership (heartbeat epochs, the simple assignor, session
// timeouts), share sessions, and the share coordinator's records, with a
// ManualClock/ManualScheduler and the in-memory offsets-topic log.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ManualClock } from '../../../broker/common/clock.js';
import { ManualScheduler } from '../../../broker/common/scheduler.js';
import { ErrorCode, KafkaError } from '../../../broker/protocol/errors.js';
import { MemoryOffsetsTopicLog } from '../../../broker/group/offsets-topic.js';
import { assignSimple } from '../../../broker/share/simple-assignor.js';
import { ShareGroupCoordinator, type HeartbeatParams } from '../../../broker/share/share-group-coordinator.js';
import { ShareSessionCache } from '../../../broker/share/share-session-cache.js';
import { combineStateBatches, decodeShareKey, partitionForShareKey, ShareCoordinator } from '../../../broker/share/share-coordinator.js';
import { parseIsoDurationMs, ShareGroupConfigs, type GroupConfigSource } from '../../../broker/share/share-group-configs.js';

function rejects(fn: () => unknown, code: number): void {
  assert.throws(fn, (e: unknown) => e instanceof KafkaError && e.code === code);
}

function count(a: Map<string, Map<string, number[]>>, member: string): number {
  return [...(a.get(member)?.values() ?? [])].reduce((n, ps) => n + ps.length, 0);
}

test('simple assignor: fewer members than partitions splits them; more members share each partition', () => {
  const none = new Map<string, number[]>();
  const two = assignSimple([{ memberId: 'a', topicIds: ['T'], current: none }, { memberId: 'b', topicIds: ['T'], current: none }], () => 5);
  assert.deepEqual([count(two, 'a'), count(two, 'b')].sort(), [2, 3]);
  const all = new Set([...two.get('a')!.get('T')!, ...two.get('b')!.get('T')!]);
  assert.equal(all.size, 5, 'every partition is assigned');
  const five = assignSimple(['a', 'b', 'c', 'd', 'e'].map((m) => ({ memberId: m, topicIds: ['T'], current: none })), () => 2);
  for (const m of ['a', 'b', 'c', 'd', 'e']) assert.ok(count(five, m) >= 1, `${m} gets a partition`);
  const sharing = [0, 1].map((p) => ['a', 'b', 'c', 'd', 'e'].filter((m) => five.get(m)!.get('T')!.includes(p)).length);
  assert.deepEqual(sharing.sort(), [3, 3], 'ceil(5/2) = 3 members per partition');
});

test('simple assignor keeps what a member had when it still fits (stickiness)', () => {
  const a1 = assignSimple([{ memberId: 'a', topicIds: ['T'], current: new Map() }], () => 4);
  assert.deepEqual(a1.get('a')!.get('T'), [0, 1, 2, 3]);
  const a2 = assignSimple([{ memberId: 'a', topicIds: ['T'], current: a1.get('a')! }, { memberId: 'b', topicIds: ['T'], current: new Map() }], () => 4);
  assert.equal(count(a2, 'a'), 2);
  assert.equal(count(a2, 'b'), 2);
  for (const p of a2.get('a')!.get('T')!) assert.ok([0, 1, 2, 3].includes(p));
  assert.equal(new Set([...a2.get('a')!.get('T')!, ...a2.get('b')!.get('T')!]).size, 4);
});

function coordinator(clock: ManualClock, removed: string[] = []): ShareGroupCoordinator {
  const topics = new Map([['t', { topicId: 'TID', partitionCount: 3 }]]);
  const c = new ShareGroupCoordinator({
    clock,
    scheduler: new ManualScheduler(clock),
    topics: { byName: (n) => topics.get(n), nameOf: () => 't' },
    config: { maxSize: 2, sessionTimeoutMs: () => 45_000, heartbeatIntervalMs: () => 5_000 },
    otherGroupExists: (g) => g === 'classic',
    onMemberRemoved: (_g, m) => removed.push(m),
    stateInitializer: { initialize: async (_g, _e, _s, ts) => ts.flatMap((t) => t.partitions.map((partition) => ({ topicId: t.topicId, partition, errorCode: 0, errorMessage: null }))) },
    initializeRetryIntervalMs: 30_000,
    onInitializeError: (_g, err) => assert.fail(`initialisation failed: ${String(err)}`),
  });
  // The share-partitions' state exists already (share-state-init.test.ts tests its initialisation): they are assignable at once.
  c.getOrCreate('g').stateMetadata.markInitialized('TID', 't', [0, 1, 2], clock.now());
  return c;
}

const hb = (memberId: string, memberEpoch: number, subscribed: string[] | null = null, groupId = 'g'): HeartbeatParams => ({ groupId, memberId, memberEpoch, rackId: null, subscribedTopicNames: subscribed, clientId: 'c', clientHost: '/127.0.0.1' });

test('heartbeat: join, epochs, assignment only when it changes, fencing and leaving', () => {
  const clock = new ManualClock();
  const c = coordinator(clock);
  const j1 = c.heartbeat(hb('m1', 0, ['t']));
  assert.equal(j1.memberEpoch, 1);
  assert.deepEqual(j1.assignment, [{ topicId: 'TID', partitions: [0, 1, 2] }]);
  assert.equal(j1.heartbeatIntervalMs, 5_000);
  assert.equal(c.heartbeat(hb('m1', 1)).assignment, null, 'unchanged: no assignment');
  const j2 = c.heartbeat(hb('m2', 0, ['t']));
  assert.equal(j2.memberEpoch, 2);
  rejects(() => c.heartbeat(hb('m1', 5)), ErrorCode.FENCED_MEMBER_EPOCH);
  const h1 = c.heartbeat(hb('m1', 1));
  assert.equal(h1.memberEpoch, 2, 'members take the new target at once');
  assert.ok(h1.assignment !== null && h1.assignment[0]!.partitions.length + j2.assignment![0]!.partitions.length === 3);
  rejects(() => c.heartbeat(hb('m3', 0, ['t'])), ErrorCode.GROUP_MAX_SIZE_REACHED);
  rejects(() => c.heartbeat(hb('nobody', 3)), ErrorCode.UNKNOWN_MEMBER_ID);
  rejects(() => c.heartbeat(hb('m9', 0, null)), ErrorCode.INVALID_REQUEST);
  rejects(() => c.heartbeat(hb('', 0, ['t'])), ErrorCode.INVALID_REQUEST);
  rejects(() => c.heartbeat(hb('m1', 0, ['t'], 'classic')), ErrorCode.GROUP_ID_NOT_FOUND);
  assert.equal(c.heartbeat(hb('m2', -1)).memberEpoch, -1);
  assert.equal(c.group('g')!.members.size, 1);
  const after = c.heartbeat(hb('m1', 2));
  assert.equal(after.memberEpoch, 3, 'a member takes the epoch of a change when it next heartbeats');
  assert.deepEqual(after.assignment, [{ topicId: 'TID', partitions: [0, 1, 2] }]);
});

test('a leave moves the group epoch on; the target assignment follows at the next heartbeat, as Kafka computes it (an emptied group stays one behind)', () => {
  const c = coordinator(new ManualClock());
  c.heartbeat(hb('m1', 0, ['t']));
  c.heartbeat(hb('m2', 0, ['t']));
  assert.equal(c.heartbeat(hb('m1', 1)).memberEpoch, 2);
  const g = c.group('g')!;
  assert.deepEqual([g.groupEpoch, g.assignmentEpoch], [2, 2]);
  c.heartbeat(hb('m2', -1));
  assert.deepEqual([g.groupEpoch, g.assignmentEpoch], [3, 2], 'no assignment computed by the leave');
  const next = c.heartbeat(hb('m1', 2));
  assert.deepEqual([next.memberEpoch, g.groupEpoch, g.assignmentEpoch], [3, 3, 3], 'the next heartbeat computes it, without another bump');
  assert.deepEqual(next.assignment, [{ topicId: 'TID', partitions: [0, 1, 2] }]);
  c.heartbeat(hb('m1', -1));
  assert.deepEqual([g.state, g.groupEpoch, g.assignmentEpoch], ['Empty', 4, 3], "Kafka 4.3.1's ShareGroupDescribe of an emptied group (test/golden/kafka-responses)");
});

test('a member that stops heartbeating is removed after the session timeout and its records released', async () => {
  const clock = new ManualClock();
  const removed: string[] = [];
  const c = coordinator(clock, removed);
  c.heartbeat(hb('m1', 0, ['t']));
  c.heartbeat(hb('m2', 0, ['t']));
  clock.advance(40_000);
  assert.equal(c.heartbeat(hb('m1', 1)).memberEpoch, 2);
  clock.advance(5_001);
  assert.deepEqual(removed, ['m2']);
  assert.equal(c.group('g')!.state, 'Stable');
  clock.advance(45_000);
  assert.deepEqual(removed, ['m2', 'm1']);
  assert.equal(c.group('g')!.state, 'Empty');
  await c.deleteGroup('g');
  assert.equal(c.group('g'), undefined);
});

test('share sessions: epochs, limits and closing', () => {
  const s = new ShareSessionCache(1);
  const { session } = s.open('g', 'm', [{ topicId: 'T', partition: 0 }], 7);
  assert.equal(session.epoch, 1);
  rejects(() => s.continue('g', 'm', 5, 7), ErrorCode.INVALID_SHARE_SESSION_EPOCH);
  assert.equal(s.continue('g', 'm', 1, 7).epoch, 2);
  rejects(() => s.continue('g', 'other', 1, 7), ErrorCode.SHARE_SESSION_NOT_FOUND);
  rejects(() => s.open('g', 'other', [], 8), ErrorCode.SHARE_SESSION_LIMIT_REACHED);
  const again = s.open('g', 'm', [], 7);
  assert.equal(again.replaced, session, 'an initial epoch replaces the member\'s session');
  assert.deepEqual(s.ofConnection(7), [again.session]);
  s.remove(s.closing('g', 'm'));
  assert.equal(s.size, 0);
  rejects(() => s.closing('g', 'm'), ErrorCode.SHARE_SESSION_NOT_FOUND);
});

test('share coordinator: a snapshot first, then updates, a snapshot again every N updates; replay gives the same state', async () => {
  const clock = new ManualClock();
  const log = new MemoryOffsetsTopicLog();
  const sc = new ShareCoordinator({ log, numPartitions: 3, updatesPerSnapshot: 2, clock });
  const state = (start: bigint, n: number) => ({ startOffset: start, stateBatches: [{ firstOffset: start, lastOffset: start + BigInt(n), deliveryState: 0, deliveryCount: 1 }] });
  await sc.write('g', 'AAAAAAAAAAAAAAAAAAAAAA', 0, state(0n, 3));
  await sc.write('g', 'AAAAAAAAAAAAAAAAAAAAAA', 0, state(2n, 3));
  await sc.write('g', 'AAAAAAAAAAAAAAAAAAAAAA', 0, state(4n, 3));
  await sc.write('g', 'AAAAAAAAAAAAAAAAAAAAAA', 0, state(5n, 1));
  const p = partitionForShareKey('g', 'AAAAAAAAAAAAAAAAAAAAAA', 0, 3);
  const types: string[] = [];
  for await (const r of log.readAll(p)) types.push(decodeShareKey(r.key)!.type);
  assert.deepEqual(types, ['snapshot', 'update', 'update', 'snapshot']);
  const replayed = new ShareCoordinator({ log, numPartitions: 3, updatesPerSnapshot: 2, clock });
  await replayed.start();
  assert.deepEqual(await replayed.read('g', 'AAAAAAAAAAAAAAAAAAAAAA', 0), state(5n, 1));
  // Updates over a snapshot replay to the latest state too.
  await replayed.write('g', 'AAAAAAAAAAAAAAAAAAAAAA', 0, { startOffset: 6n, stateBatches: [{ firstOffset: 6n, lastOffset: 6n, deliveryState: 2, deliveryCount: 2 }] });
  const third = new ShareCoordinator({ log, numPartitions: 3, updatesPerSnapshot: 2, clock });
  await third.start();
  assert.deepEqual(await third.read('g', 'AAAAAAAAAAAAAAAAAAAAAA', 0), { startOffset: 6n, stateBatches: [{ firstOffset: 6n, lastOffset: 6n, deliveryState: 2, deliveryCount: 2 }] });
  await third.delete('g', 'AAAAAAAAAAAAAAAAAAAAAA', 0);
  const fourth = new ShareCoordinator({ log, numPartitions: 3, updatesPerSnapshot: 2, clock });
  await fourth.start();
  assert.equal(await fourth.read('g', 'AAAAAAAAAAAAAAAAAAAAAA', 0), null, 'tombstones delete the state');
});

test('combineStateBatches: the update overrides, batches below the start go', () => {
  assert.deepEqual(
    combineStateBatches([{ firstOffset: 0n, lastOffset: 9n, deliveryState: 0, deliveryCount: 1 }], [{ firstOffset: 4n, lastOffset: 5n, deliveryState: 2, deliveryCount: 1 }], 2n),
    [
      { firstOffset: 2n, lastOffset: 3n, deliveryState: 0, deliveryCount: 1 },
      { firstOffset: 4n, lastOffset: 5n, deliveryState: 2, deliveryCount: 1 },
      { firstOffset: 6n, lastOffset: 9n, deliveryState: 0, deliveryCount: 1 },
    ],
  );
});

test('group configs: validation, defaults, by_duration', async () => {
  const d = { recordLockDurationMs: 30_000, minRecordLockDurationMs: 15_000, maxRecordLockDurationMs: 60_000, deliveryCountLimit: 5, maxRecordLocks: 2000, sessionTimeoutMs: 45_000, minSessionTimeoutMs: 45_000, maxSessionTimeoutMs: 60_000, heartbeatIntervalMs: 5_000, minHeartbeatIntervalMs: 5_000, maxHeartbeatIntervalMs: 15_000 };
  const c = new ShareGroupConfigs(d, null);
  assert.equal(c.autoOffsetReset('g'), 'latest');
  await c.alter('g', [{ name: 'share.auto.offset.reset', op: 0, value: 'by_duration:PT1H' }], false);
  assert.equal(c.autoOffsetReset('g'), 'by_duration:PT1H');
  assert.equal(parseIsoDurationMs('P1DT2H3M4.5S'), 93_784_500);
  await assert.rejects(c.alter('g', [{ name: 'share.record.lock.duration.ms', op: 0, value: '1000' }], false), (e: unknown) => e instanceof KafkaError && e.code === ErrorCode.INVALID_CONFIG);
  await assert.rejects(c.alter('g', [{ name: 'share.nope', op: 0, value: '1' }], false), (e: unknown) => e instanceof KafkaError && e.code === ErrorCode.INVALID_CONFIG);
  await c.alter('g', [{ name: 'share.auto.offset.reset', op: 1, value: null }], false);
  assert.equal(c.autoOffsetReset('g'), 'latest');
  assert.ok(c.describe('g').every((e) => !e.isOverride));
});

test('group configs from a shared source (the cluster metadata): set through one broker, every broker reads them; delete and forget remove them there', async () => {
  const kept = new Map<string, Map<string, string>>();
  const writes: Record<string, string | null>[] = [];
  const source: GroupConfigSource = {
    overrides: (g) => kept.get(g) ?? new Map(),
    async write(g, changes) {
      writes.push({ ...changes });
      const m = new Map(kept.get(g) ?? []);
      for (const [k, v] of Object.entries(changes)) if (v === null) m.delete(k); else m.set(k, v);
      kept.set(g, m);
    },
  };
  const defaults = { recordLockDurationMs: 30_000, minRecordLockDurationMs: 15_000, maxRecordLockDurationMs: 60_000, deliveryCountLimit: 5, maxRecordLocks: 2000, sessionTimeoutMs: 45_000, minSessionTimeoutMs: 45_000, maxSessionTimeoutMs: 60_000, heartbeatIntervalMs: 5_000, minHeartbeatIntervalMs: 5_000, maxHeartbeatIntervalMs: 15_000 };
  const one = new ShareGroupConfigs(defaults, null, source);
  const two = new ShareGroupConfigs(defaults, null, source);
  await one.alter('g', [{ name: 'share.auto.offset.reset', op: 0, value: 'earliest' }, { name: 'share.delivery.count.limit', op: 0, value: '3' }], false);
  assert.equal(two.autoOffsetReset('g'), 'earliest');
  assert.equal(two.deliveryCountLimit('g'), 3);
  assert.equal(two.describe('g').find((e) => e.name === 'share.auto.offset.reset')?.isOverride, true);
  await one.alter('g', [{ name: 'share.auto.offset.reset', op: 0, value: 'earliest' }], true);
  await rejectsAsync(two.alter('g', [{ name: 'share.delivery.count.limit', op: 0, value: '99' }], false), ErrorCode.INVALID_CONFIG);
  await two.alter('g', [{ name: 'share.delivery.count.limit', op: 1, value: null }], false);
  assert.equal(one.deliveryCountLimit('g'), 5);
  await one.forget('g');
  assert.equal(two.autoOffsetReset('g'), 'latest');
  assert.deepEqual(writes, [{ 'share.auto.offset.reset': 'earliest', 'share.delivery.count.limit': '3' }, { 'share.delivery.count.limit': null }, { 'share.auto.offset.reset': null }], 'only changes are written; validateOnly and refused ones write nothing');
});

async function rejectsAsync(p: Promise<unknown>, code: number): Promise<void> {
  await assert.rejects(p, (e: unknown) => e instanceof KafkaError && e.code === code);
}

test('group configs in a file: alters at once (members setting configs together) all land, none fails on the shared temporary file', async () => {
  const d = { recordLockDurationMs: 30_000, minRecordLockDurationMs: 15_000, maxRecordLockDurationMs: 60_000, deliveryCountLimit: 5, maxRecordLocks: 2000, sessionTimeoutMs: 45_000, minSessionTimeoutMs: 45_000, maxSessionTimeoutMs: 60_000, heartbeatIntervalMs: 5_000, minHeartbeatIntervalMs: 5_000, maxHeartbeatIntervalMs: 15_000 };
  const dir = await mkdtemp(path.join(os.tmpdir(), 'share-configs-'));
  try {
    const file = path.join(dir, 'share-group-configs.json');
    const c = new ShareGroupConfigs(d, file);
    const groups = Array.from({ length: 12 }, (_, i) => `g${i}`);
    await Promise.all(groups.map((g) => c.alter(g, [{ name: 'share.auto.offset.reset', op: 0, value: 'earliest' }], false)));
    const saved = JSON.parse(await readFile(file, 'utf8')) as Record<string, Record<string, string>>;
    assert.deepEqual(Object.keys(saved).sort(), [...groups].sort());
    const again = new ShareGroupConfigs(d, file);
    await again.load();
    assert.ok(groups.every((g) => again.autoOffsetReset(g) === 'earliest'));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
