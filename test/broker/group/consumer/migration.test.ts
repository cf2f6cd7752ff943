// Online migration between classic and consumer groups (KIP-848): the
// upgrade when a consumer-protocol member joins a classic group with
// members, classic members inside the consumer group (JoinGroup, SyncGroup,
// Heartbeat, LeaveGroup answered from the server-side assignment), the
// downgrade when the last consumer-protocol member leaves, the policy, and
// the records that bring it all back after a restart.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCode, SimulatedMember, startConsumerHarness, type ConsumerHarness } from './consumer-harness.js';
import { ClassicClient, assertSingleOwners, assignmentBytes } from './classic-client.js';
import type { ConsumerGroupConfig } from '../../../../broker/group/consumer/config.js';
import { partitionForGroup } from '../../../../broker/group/offsets-topic.js';
import { decodeCoordinatorRecord } from '../../../../broker/group/group-records.js';

/** A Stable classic group of `names` over t (4 partitions), the leader assigning `plan`. */
async function classicGroup(h: ConsumerHarness, names: string[], plan: Record<string, number[]>): Promise<ClassicClient[]> {
  const clients = names.map((n) => new ClassicClient(h, n));
  const joins = clients.map((c) => c.join());
  // group.initial.rebalance.delay.ms (3 s), extended once per member that arrived during it.
  await h.advance(10_000);
  const results = await Promise.all(joins);
  const leader = results.find((r) => r.memberId === r.leader)!;
  const byMember = new Map(clients.map((c) => [c.memberId, c.name]));
  const assignments = leader.members.map((m) => ({ memberId: m.memberId, assignment: assignmentBytes({ t: plan[byMember.get(m.memberId)!] ?? [] }) }));
  await Promise.all(clients.map((c) => c.sync(c.memberId === leader.leader ? assignments : [])));
  for (const c of clients) assert.equal(c.needsRejoin, false);
  assert.equal(h.coordinator.describeGroups(['g'])[0]?.groupState, 'Stable');
  return clients;
}

function namesOf(h: ConsumerHarness, m: SimulatedMember): { name: string; owned: Map<string, Set<number>> } {
  return { name: m.memberId, owned: new Map([...m.owned].map(([id, ps]) => [h.topics.byId(id)?.name ?? id, ps])) };
}

/** Rounds of heartbeats and rejoins until every partition has one owner and the group is Stable. */
async function converge(h: ConsumerHarness, classic: ClassicClient[], consumers: SimulatedMember[], rounds = 8): Promise<void> {
  const check = (context: string) => assertSingleOwners([...classic, ...consumers.map((m) => namesOf(h, m))], context);
  for (let round = 0; round < rounds; round++) {
    for (const c of classic) {
      await c.step();
      check(`after ${c.name} in round ${round}`);
    }
    for (const m of consumers) {
      await m.heartbeat();
      check(`after ${m.memberId} in round ${round}`);
    }
  }
}

async function upgraded(config: Partial<ConsumerGroupConfig> = {}) {
  const h = await startConsumerHarness({ config });
  h.topics.add('t', 4);
  const [a, b] = (await classicGroup(h, ['a', 'b'], { a: [0, 1], b: [2, 3] })) as [ClassicClient, ClassicClient];
  const c = new SimulatedMember(h, 'c');
  const first = await c.heartbeat();
  return { h, a, b, c, first };
}

test('a consumer-protocol member joining a classic group with members upgrades it; the classic members stay with their assignment', async () => {
  const { h, a, b, c, first } = await upgraded();
  assert.equal(first.errorCode, ErrorCode.NONE);
  assert.equal(h.coordinator.describeGroups(['g'])[0]?.protocolType, 'consumer');
  const d = h.coordinator.consumerGroupDescribe(['g'])[0]!;
  assert.equal(d.errorCode, ErrorCode.NONE);
  assert.equal(d.members.length, 3);
  const byId = new Map(d.members.map((m) => [m.memberId, m]));
  assert.equal(byId.get(a.memberId)?.memberType, 0);
  assert.equal(byId.get(b.memberId)?.memberType, 0);
  assert.equal(byId.get('c')?.memberType, 1);
  // The classic members hold their classic assignment at the classic generation (1); c waits for what they release.
  assert.deepEqual(byId.get(a.memberId)?.assignment[0]?.partitions, [0, 1]);
  assert.equal(byId.get(a.memberId)?.memberEpoch, 1);
  assert.equal(d.groupEpoch, 2);
  assert.equal(c.ownedCount(), 0);
  assert.deepEqual(h.coordinator.listGroups().groups.map((g) => g.groupType), ['consumer']);
  // The classic members learn of the new epoch from their heartbeats.
  assert.equal(a.heartbeat(), ErrorCode.REBALANCE_IN_PROGRESS);
  await converge(h, [a, b], [c]);
  const after = h.coordinator.consumerGroupDescribe(['g'])[0]!;
  assert.equal(after.groupState, 'Stable');
  assert.equal(a.ownedCount() + b.ownedCount() + c.ownedCount(), 4);
  assert.ok(c.ownedCount() >= 1, 'c got its share');
  for (const m of after.members) assert.equal(m.memberEpoch, after.groupEpoch);
  // In sync, a plain heartbeat is fine.
  assert.equal(a.heartbeat(), ErrorCode.NONE);
});

test('classic members of a consumer group commit with their generation; another generation is ILLEGAL_GENERATION', async () => {
  const { h, a, b, c } = await upgraded();
  await converge(h, [a, b], [c]);
  const commit = (generationId: number, apiVersion: number) =>
    h.coordinator.commitOffsets({
      groupId: 'g',
      generationId,
      memberId: a.memberId,
      groupInstanceId: null,
      retentionTimeMs: -1,
      groupIdNotFoundSupported: true,
      apiVersion,
      topics: [{ name: 't', partitions: [{ partitionIndex: 0, committedOffset: 5n, committedLeaderEpoch: -1, committedMetadata: null }] }],
    });
  assert.equal((await commit(a.generation, 8)).topics[0]?.partitions[0]?.errorCode, ErrorCode.NONE);
  assert.equal((await commit(a.generation - 1, 9)).topics[0]?.partitions[0]?.errorCode, ErrorCode.ILLEGAL_GENERATION);
});

test('the upgrade and the classic members survive a restart', async () => {
  const { h, a, b, c } = await upgraded();
  await converge(h, [a, b], [c]);
  const before = h.coordinator.consumerGroupDescribe(['g'])[0]!;
  const h2 = await h.restart();
  const after = h2.coordinator.consumerGroupDescribe(['g'])[0]!;
  assert.deepEqual(after, before);
  assert.equal(h2.coordinator.describeGroups(['g'])[0]?.protocolType, 'consumer');
  assert.equal(h2.coordinator.groupState('g'), null, 'no classic group left behind');
  // A classic member goes on heartbeating the reloaded group.
  const a2 = Object.assign(new ClassicClient(h2, 'a'), { memberId: a.memberId, generation: a.generation, owned: a.owned, needsRejoin: false });
  assert.equal(a2.heartbeat(), ErrorCode.NONE);
  // The reloaded classic members keep their own session timeout (10 s, not 45 s): b, silent, is fenced; a and c stay.
  const c2 = Object.assign(new SimulatedMember(h2, 'c'), { epoch: c.epoch, owned: c.owned });
  for (let t = 0; t < 12_000; t += 1_000) {
    await h2.advance(1_000);
    if (t % 3_000 === 0) a2.heartbeat();
    if (t % 5_000 === 0) await c2.heartbeat();
  }
  assert.deepEqual(h2.coordinator.consumerGroupDescribe(['g'])[0]!.members.map((m) => m.memberId).sort(), [a.memberId, 'c'].sort());
});

test('a classic member of a consumer group is fenced after its own session timeout', async () => {
  const { h, a, b, c } = await upgraded();
  await converge(h, [a, b], [c]);
  // a heartbeats (classic, every 3 s), c too (5 s); b is silent: its 10 s session ends well before 45 s.
  for (let t = 0; t < 12_000; t += 1_000) {
    await h.advance(1_000);
    if (t % 3_000 === 0) a.heartbeat();
    if (t % 5_000 === 0) await c.heartbeat();
  }
  const d = h.coordinator.consumerGroupDescribe(['g'])[0]!;
  assert.deepEqual(d.members.map((m) => m.memberId).sort(), [a.memberId, 'c'].sort());
});

test('a classic member leaving a consumer group with LeaveGroup frees its partitions', async () => {
  const { h, a, b, c } = await upgraded();
  await converge(h, [a, b], [c]);
  assert.equal(await b.leave(), ErrorCode.NONE);
  await converge(h, [a], [c]);
  assert.equal(a.ownedCount() + c.ownedCount(), 4);
  assert.equal(h.coordinator.consumerGroupDescribe(['g'])[0]?.members.length, 2);
  // A consumer-protocol member cannot leave through LeaveGroup.
  const r = await h.coordinator.leaveGroup('g', [{ memberId: 'c', groupInstanceId: null }]);
  assert.equal(r.members[0]?.errorCode, ErrorCode.UNKNOWN_MEMBER_ID);
});

test('a new classic member joins the consumer group and gets partitions only once released', async () => {
  const { h, a, b, c } = await upgraded();
  await converge(h, [a, b], [c]);
  const n = new ClassicClient(h, 'n');
  await converge(h, [a, b, n], [c]);
  assert.equal(a.ownedCount() + b.ownedCount() + c.ownedCount() + n.ownedCount(), 4);
  assert.equal(h.coordinator.consumerGroupDescribe(['g'])[0]?.members.length, 4);
  assert.equal(h.coordinator.consumerGroupDescribe(['g'])[0]?.groupState, 'Stable');
});

test('the last consumer-protocol member leaving downgrades the group to a classic group that rebalances', async () => {
  const { h, a, b, c } = await upgraded();
  await converge(h, [a, b], [c]);
  const epoch = h.coordinator.consumerGroupDescribe(['g'])[0]!.groupEpoch;
  assert.equal((await c.leave()).errorCode, ErrorCode.NONE);
  assert.equal(h.coordinator.consumerGroupDescribe(['g'])[0]?.errorCode, ErrorCode.GROUP_ID_NOT_FOUND);
  const summary = h.coordinator.groupSummary('g');
  assert.equal(summary?.state, 'PreparingRebalance');
  assert.equal(summary?.generationId, epoch);
  assert.deepEqual([...(summary?.memberIds ?? [])].sort(), [a.memberId, b.memberId].sort());
  assert.deepEqual(h.coordinator.listGroups().groups.map((g) => g.groupType), ['classic']);
  // The classic members are told to rejoin, and rebalance as a classic group (the leader assigns).
  assert.equal(a.heartbeat(), ErrorCode.REBALANCE_IN_PROGRESS);
  assert.equal(b.heartbeat(), ErrorCode.REBALANCE_IN_PROGRESS);
  const joins = await Promise.all([a.join(), b.join()]);
  for (const j of joins) assert.equal(j.errorCode, ErrorCode.NONE);
  const leader = joins.find((j) => j.memberId === j.leader)!;
  assert.equal(leader.members.length, 2);
  assert.equal(leader.generationId, epoch + 1);
  // The restart finds the classic group.
  const h2 = await h.restart();
  assert.equal(h2.coordinator.consumerGroupDescribe(['g'])[0]?.errorCode, ErrorCode.GROUP_ID_NOT_FOUND);
  assert.notEqual(h2.coordinator.groupState('g'), null);
});

test('the session expiry of the last consumer-protocol member downgrades too', async () => {
  const { h, a, b, c } = await upgraded();
  await converge(h, [a, b], [c]);
  for (let t = 0; t < 46_000; t += 2_000) {
    await h.advance(2_000);
    a.heartbeat();
    b.heartbeat();
  }
  assert.equal(h.coordinator.consumerGroupDescribe(['g'])[0]?.errorCode, ErrorCode.GROUP_ID_NOT_FOUND);
  assert.notEqual(h.coordinator.groupState('g'), null);
});

test('group.consumer.migration.policy: disabled refuses the upgrade, upgrade refuses the downgrade', async () => {
  const disabled = await upgraded({ migrationPolicy: 'disabled' });
  assert.equal(disabled.first.errorCode, ErrorCode.GROUP_ID_NOT_FOUND);
  assert.equal(disabled.h.coordinator.groupState('g'), 'Stable');
  assert.equal(disabled.a.heartbeat(), ErrorCode.NONE);
  const downgrade = await upgraded({ migrationPolicy: 'downgrade' });
  assert.equal(downgrade.first.errorCode, ErrorCode.GROUP_ID_NOT_FOUND);

  const { h, a, b, c, first } = await upgraded({ migrationPolicy: 'upgrade' });
  assert.equal(first.errorCode, ErrorCode.NONE);
  await converge(h, [a, b], [c]);
  await c.leave();
  const d = h.coordinator.consumerGroupDescribe(['g'])[0]!;
  assert.equal(d.errorCode, ErrorCode.NONE, 'still a consumer group');
  assert.deepEqual(d.members.map((m) => m.memberType), [0, 0]);
  await converge(h, [a, b], []);
  assert.equal(a.ownedCount() + b.ownedCount(), 4);
});

test('a rejoining consumer-protocol member is refused by a classic group (epoch > 0) and a non-consumer protocol type is not upgraded', async () => {
  const h = await startConsumerHarness();
  h.topics.add('t', 4);
  await classicGroup(h, ['a', 'b'], { a: [0, 1], b: [2, 3] });
  const late = new SimulatedMember(h, 'x');
  late.epoch = 3;
  assert.equal((await late.heartbeat()).errorCode, ErrorCode.GROUP_ID_NOT_FOUND);
  assert.equal(h.coordinator.groupState('g'), 'Stable');
});

test('a classic member keeps a partition it must give up until it rejoins without it; only then does another member get it', async () => {
  const { h, a, b, c } = await upgraded();
  const owners = () => [a, b, namesOf(h, c)];
  // Both rejoin, still owning their classic partitions: the coordinator asks them to revoke first.
  await a.join();
  await b.join();
  await c.heartbeat();
  assertSingleOwners(owners(), 'after the joins');
  assert.equal(c.ownedCount(), 0, 'nothing was released yet');
  const d = h.coordinator.consumerGroupDescribe(['g'])[0]!;
  assert.equal(d.groupState, 'Reconciling');
  // SyncGroup hands over the reduced assignment; the revoking member must rejoin.
  await a.sync();
  await b.sync();
  assert.ok(a.needsRejoin || b.needsRejoin, 'one of them revoked a partition');
  await c.heartbeat();
  assertSingleOwners(owners(), 'after the syncs');
  assert.equal(c.ownedCount(), 0, 'not before the rejoin reports it gone');
  for (const x of [a, b]) if (x.needsRejoin) {
    assert.equal(x.heartbeat(), ErrorCode.REBALANCE_IN_PROGRESS);
    await x.join();
    await x.sync();
  }
  await c.heartbeat();
  assertSingleOwners(owners(), 'after the rejoins');
  assert.equal(c.ownedCount(), 1);
  assert.equal(a.ownedCount() + b.ownedCount() + c.ownedCount(), 4);
});

test('a classic group record landing after the upgrade (a classic rebalance that raced it) does not bring the classic group back on replay', async () => {
  const h = await startConsumerHarness();
  h.topics.add('t', 4);
  const [a, b] = (await classicGroup(h, ['a', 'b'], { a: [0, 1], b: [2, 3] })) as [ClassicClient, ClassicClient];
  const partition = partitionForGroup('g', 5);
  const stale = h.log.records(partition).at(-1)!;
  assert.equal(decodeCoordinatorRecord(stale).type, 'groupMetadata');
  const c = new SimulatedMember(h, 'c');
  await c.heartbeat();
  await h.log.append(partition, [stale]);
  const h2 = await h.restart();
  assert.equal(h2.coordinator.groupState('g'), null);
  const d = h2.coordinator.consumerGroupDescribe(['g'])[0]!;
  assert.deepEqual(d.members.map((m) => m.memberId).sort(), [a.memberId, b.memberId, 'c'].sort());
});

test('a classic static member taking over the instance id of the last consumer-protocol member downgrades the group, keeping its assignment, without a rebalance', async () => {
  const h = await startConsumerHarness();
  h.topics.add('t', 4);
  const [a, b] = (await classicGroup(h, ['a', 'b'], { a: [0, 1], b: [2, 3] })) as [ClassicClient, ClassicClient];
  const s = new SimulatedMember(h, 's', { instanceId: 'i' });
  await s.heartbeat();
  await converge(h, [a, b], [s]);
  const held = [...(s.owned.values().next().value ?? [])].sort();
  assert.ok(held.length >= 1);
  const epoch = h.coordinator.consumerGroupDescribe(['g'])[0]!.groupEpoch;
  // s restarts as a classic member with the same group.instance.id: it leaves as a static member (epoch -2) ...
  assert.equal((await s.heartbeat({ memberEpoch: -2, topicPartitions: null })).errorCode, ErrorCode.NONE);
  // ... and its successor joins with the classic protocol.
  const successor = new ClassicClient(h, 's2');
  successor.instanceId = 'i';
  const j = await successor.join();
  assert.equal(j.errorCode, ErrorCode.NONE);
  assert.equal(j.generationId, epoch);
  assert.equal(h.coordinator.consumerGroupDescribe(['g'])[0]?.errorCode, ErrorCode.GROUP_ID_NOT_FOUND);
  const summary = h.coordinator.groupSummary('g')!;
  assert.equal(summary.state, 'Stable', 'same subscription: no rebalance');
  assert.equal(summary.generationId, epoch);
  assert.equal(summary.memberIds.length, 3);
  assert.equal(await successor.sync(), ErrorCode.NONE);
  assert.deepEqual([...(successor.owned.get('t') ?? [])].sort(), held, 'the successor has what s had');
  assert.equal(a.heartbeat(), ErrorCode.NONE);
  assertSingleOwners([a, b, successor]);
  const h2 = await h.restart();
  assert.equal(h2.coordinator.groupSummary('g')?.memberIds.length, 3);
  assert.equal(h2.coordinator.consumerGroupDescribe(['g'])[0]?.errorCode, ErrorCode.GROUP_ID_NOT_FOUND);
});
