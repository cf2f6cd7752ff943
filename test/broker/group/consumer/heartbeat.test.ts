// ConsumerGroupHeartbeat through the coordinator: reconciliation, timeouts,
// leave, static membership, validation.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCode, SimulatedMember, assertOneOwner, hb, startConsumerHarness } from './consumer-harness.js';

async function stableGroup(n: number, partitions = 4) {
  const h = await startConsumerHarness();
  h.topics.add('t', partitions);
  const members: SimulatedMember[] = [];
  for (let i = 0; i < n; i++) members.push(new SimulatedMember(h, `m${i}`));
  for (let round = 0; round < 4; round++) {
    for (const m of members) {
      await m.heartbeat();
      assertOneOwner(members, `round ${round}`);
    }
  }
  return { h, members };
}

test('a joining member gets partitions only after their owner revoked them', async () => {
  const h = await startConsumerHarness();
  h.topics.add('t', 4);
  const a = new SimulatedMember(h, 'a');
  const b = new SimulatedMember(h, 'b');
  assert.equal((await a.heartbeat()).errorCode, ErrorCode.NONE);
  assert.equal(a.epoch, 1);
  assert.equal(a.ownedCount(), 4);
  a.holding = true;
  const first = await b.heartbeat();
  assert.equal(first.memberEpoch, 2);
  assert.equal(b.ownedCount(), 0, 'all four are still a\'s');
  // a is asked to revoke two, and stays at epoch 1 until it does.
  await a.heartbeat();
  assert.equal(a.epoch, 1);
  assert.equal(h.coordinator.consumerGroupDescribe(['g'])[0]?.groupState, 'Reconciling');
  await b.heartbeat();
  assert.equal(b.ownedCount(), 0, 'a has not acknowledged the revocation');
  assertOneOwner([a, b]);
  a.holding = false;
  await a.heartbeat();
  assert.equal(a.epoch, 2);
  assert.equal(a.ownedCount(), 2);
  await b.heartbeat();
  assert.equal(b.ownedCount(), 2);
  assertOneOwner([a, b]);
  const d = h.coordinator.consumerGroupDescribe(['g'])[0]!;
  assert.equal(d.groupState, 'Stable');
  assert.equal(d.groupEpoch, 2);
  assert.equal(d.assignmentEpoch, 2);
  assert.equal(d.assignorName, 'uniform');
});

test('the session timeout fences a silent member and frees its partitions', async () => {
  const { h, members } = await stableGroup(2);
  const [a, b] = members as [SimulatedMember, SimulatedMember];
  assert.equal(a.ownedCount() + b.ownedCount(), 4);
  // a keeps heartbeating every 5 s, b is silent.
  for (let t = 0; t < 45_000; t += 5_000) {
    await h.advance(5_000);
    await a.heartbeat();
  }
  await a.heartbeat();
  assert.equal(a.ownedCount(), 4);
  const d = h.coordinator.consumerGroupDescribe(['g'])[0]!;
  assert.deepEqual(d.members.map((m) => m.memberId), ['m0']);
  assert.equal((await b.heartbeat()).errorCode, ErrorCode.UNKNOWN_MEMBER_ID);
});

test('a member that does not revoke within its rebalance timeout is fenced', async () => {
  const h = await startConsumerHarness();
  h.topics.add('t', 2);
  const a = new SimulatedMember(h, 'a', { rebalanceTimeoutMs: 10_000 });
  const b = new SimulatedMember(h, 'b');
  await a.heartbeat();
  a.holding = true;
  await b.heartbeat();
  await a.heartbeat(); // asked to revoke one
  for (let t = 0; t < 8_000; t += 2_000) {
    await h.advance(2_000);
    await b.heartbeat();
    assertOneOwner([a, b]);
  }
  assert.equal(b.ownedCount(), 0);
  await h.advance(2_000);
  // Fenced (a is a zombie from here on): b can now take both.
  await b.heartbeat();
  await b.heartbeat();
  assert.equal(b.ownedCount(), 2);
  assert.equal((await a.heartbeat()).errorCode, ErrorCode.UNKNOWN_MEMBER_ID);
});

test('leaving with epoch -1 removes the member and bumps the group epoch', async () => {
  const { h, members } = await stableGroup(2);
  const [a, b] = members as [SimulatedMember, SimulatedMember];
  const before = h.coordinator.consumerGroupDescribe(['g'])[0]!.groupEpoch;
  const r = await b.leave();
  assert.equal(r.errorCode, ErrorCode.NONE);
  assert.equal(r.memberEpoch, -1);
  await a.heartbeat();
  await a.heartbeat();
  assert.equal(a.ownedCount(), 4);
  assert.equal(h.coordinator.consumerGroupDescribe(['g'])[0]!.groupEpoch, before + 1);
  assert.equal((await b.leave()).errorCode, ErrorCode.UNKNOWN_MEMBER_ID);
});

test('a static member leaving with -2 keeps its partitions for its next instance', async () => {
  const h = await startConsumerHarness();
  h.topics.add('t', 4);
  const a = new SimulatedMember(h, 'a1', { instanceId: 'inst-a' });
  const b = new SimulatedMember(h, 'b');
  for (let i = 0; i < 3; i++) {
    await a.heartbeat();
    await b.heartbeat();
  }
  const mine = a.ownedList();
  const epoch = h.coordinator.consumerGroupDescribe(['g'])[0]!.groupEpoch;
  const left = await h.coordinator.consumerGroupHeartbeat(hb({ memberId: 'a1', memberEpoch: -2, instanceId: 'inst-a', topicPartitions: null }));
  assert.equal(left.memberEpoch, -2);
  // b does not get a's partitions while a is away.
  await b.heartbeat();
  assert.equal(b.ownedCount(), 2);
  // Another instance id holder with a new member id takes over, without a rebalance.
  const a2 = new SimulatedMember(h, 'a2', { instanceId: 'inst-a' });
  const r = await a2.heartbeat();
  assert.equal(r.errorCode, ErrorCode.NONE);
  assert.deepEqual(a2.ownedList(), mine);
  assert.equal(h.coordinator.consumerGroupDescribe(['g'])[0]!.groupEpoch, epoch);
  // While a2 is in the group, a third instance with the same id is refused.
  const a3 = await h.coordinator.consumerGroupHeartbeat(hb({ memberId: 'a3', instanceId: 'inst-a' }));
  assert.equal(a3.errorCode, ErrorCode.UNRELEASED_INSTANCE_ID);
  // The old member id is fenced.
  const old = await h.coordinator.consumerGroupHeartbeat(hb({ memberId: 'a1', memberEpoch: r.memberEpoch, instanceId: 'inst-a', topicPartitions: mine }));
  assert.equal(old.errorCode, ErrorCode.FENCED_INSTANCE_ID);
});

test('a static member that never comes back is removed at its session timeout', async () => {
  const h = await startConsumerHarness();
  h.topics.add('t', 2);
  const a = new SimulatedMember(h, 'a', { instanceId: 'i' });
  const b = new SimulatedMember(h, 'b');
  await a.heartbeat();
  await b.heartbeat();
  await a.heartbeat();
  await b.heartbeat();
  await h.coordinator.consumerGroupHeartbeat(hb({ memberId: 'a', memberEpoch: -2, instanceId: 'i', topicPartitions: null }));
  for (let t = 0; t < 50_000; t += 5_000) {
    await h.advance(5_000);
    await b.heartbeat();
  }
  assert.equal(b.ownedCount(), 2);
  assert.deepEqual(h.coordinator.consumerGroupDescribe(['g'])[0]!.members.map((m) => m.memberId), ['b']);
});

test('request validation answers Kafka\'s errors', async () => {
  const h = await startConsumerHarness();
  h.topics.add('t', 1);
  const c = h.coordinator;
  const code = async (p: Parameters<typeof c.consumerGroupHeartbeat>[0]) => (await c.consumerGroupHeartbeat(p)).errorCode;
  assert.equal(await code(hb({ memberId: 'x', groupId: '' })), ErrorCode.INVALID_REQUEST);
  assert.equal(await code(hb({ memberId: '' })), ErrorCode.INVALID_REQUEST);
  assert.equal(await code(hb({ memberId: 'x', rebalanceTimeoutMs: -1 })), ErrorCode.INVALID_REQUEST);
  assert.equal(await code(hb({ memberId: 'x', topicPartitions: null })), ErrorCode.INVALID_REQUEST);
  assert.equal(await code(hb({ memberId: 'x', subscribedTopicNames: null })), ErrorCode.INVALID_REQUEST);
  assert.equal(await code(hb({ memberId: 'x', memberEpoch: -3 })), ErrorCode.INVALID_REQUEST);
  assert.equal(await code(hb({ memberId: 'x', memberEpoch: -2 })), ErrorCode.INVALID_REQUEST);
  assert.equal(await code(hb({ memberId: 'x', serverAssignor: 'sticky' })), ErrorCode.UNSUPPORTED_ASSIGNOR);
  assert.equal(await code(hb({ memberId: 'x', subscribedTopicNames: null, subscribedTopicRegex: '(' })), ErrorCode.INVALID_REGULAR_EXPRESSION);
  assert.equal(await code(hb({ memberId: 'x', memberEpoch: 3 })), ErrorCode.GROUP_ID_NOT_FOUND);
  const joined = await c.consumerGroupHeartbeat(hb({ memberId: 'x' }));
  assert.equal(joined.errorCode, ErrorCode.NONE);
  assert.equal(joined.heartbeatIntervalMs, 5_000);
  assert.equal(await code(hb({ memberId: 'x', memberEpoch: joined.memberEpoch + 1, topicPartitions: [] })), ErrorCode.FENCED_MEMBER_EPOCH);
  assert.equal(await code(hb({ memberId: 'y', memberEpoch: 1, topicPartitions: [] })), ErrorCode.UNKNOWN_MEMBER_ID);
  // v0 lets the coordinator choose the member id.
  const v0 = await c.consumerGroupHeartbeat(hb({ memberId: '', apiVersion: 0 }));
  assert.equal(v0.errorCode, ErrorCode.NONE);
  assert.equal(v0.memberId, 'generated-1');
});

test('a lost response: the previous epoch with owned partitions inside the assignment is accepted', async () => {
  const h = await startConsumerHarness();
  h.topics.add('t', 2);
  const a = new SimulatedMember(h, 'a');
  await a.heartbeat();
  const tid = h.topics.byName('t')!.topicId;
  const b = await h.coordinator.consumerGroupHeartbeat(hb({ memberId: 'b' }));
  assert.equal(b.errorCode, ErrorCode.NONE);
  await a.heartbeat(); // a revokes one and moves to epoch 2
  const r = await h.coordinator.consumerGroupHeartbeat(hb({ memberId: 'a', memberEpoch: 1, topicPartitions: a.ownedList() }));
  assert.equal(r.errorCode, ErrorCode.NONE, `${JSON.stringify(a.ownedList())} ${tid}`);
  const stale = await h.coordinator.consumerGroupHeartbeat(hb({ memberId: 'a', memberEpoch: 1, topicPartitions: [{ topicId: tid, partitions: [0, 1] }] }));
  assert.equal(stale.errorCode, ErrorCode.FENCED_MEMBER_EPOCH);
});

test('the range assignor is used when members ask for it', async () => {
  const h = await startConsumerHarness();
  h.topics.add('t', 3);
  const a = new SimulatedMember(h, 'a', { serverAssignor: 'range' });
  const b = new SimulatedMember(h, 'b', { serverAssignor: 'range' });
  for (let i = 0; i < 3; i++) {
    await a.heartbeat();
    await b.heartbeat();
  }
  const d = h.coordinator.consumerGroupDescribe(['g'])[0]!;
  assert.equal(d.assignorName, 'range');
  assert.deepEqual(d.members.find((m) => m.memberId === 'a')?.assignment[0]?.partitions, [0, 1]);
  assert.deepEqual(d.members.find((m) => m.memberId === 'b')?.assignment[0]?.partitions, [2]);
});

test('a regex subscription follows topics created later', async () => {
  const h = await startConsumerHarness();
  h.topics.add('orders-eu', 1);
  h.topics.add('other', 1);
  const a = new SimulatedMember(h, 'a', { subscribedTopicNames: null, subscribedTopicRegex: 'orders-.*' });
  await a.heartbeat();
  assert.deepEqual(a.ownedList(), [{ topicId: h.topics.byName('orders-eu')!.topicId, partitions: [0] }]);
  h.topics.add('orders-us', 2);
  await a.heartbeat({ subscribedTopicRegex: null });
  await a.heartbeat({ subscribedTopicRegex: null });
  assert.equal(a.ownedCount(), 3);
  const d = h.coordinator.consumerGroupDescribe(['g'])[0]!;
  assert.equal(d.members[0]?.subscribedTopicRegex, 'orders-.*');
  assert.deepEqual(d.members[0]?.assignment.map((t) => t.topicName), ['orders-eu', 'orders-us']);
});

test('a member dropping a topic from its subscription gives its partitions back', async () => {
  const h = await startConsumerHarness();
  h.topics.add('t', 2);
  h.topics.add('u', 2);
  const a = new SimulatedMember(h, 'a', { subscribedTopicNames: ['t', 'u'] });
  await a.heartbeat();
  assert.equal(a.ownedCount(), 4);
  await a.heartbeat({ subscribedTopicNames: ['t'] });
  await a.heartbeat({ subscribedTopicNames: null });
  assert.deepEqual(a.ownedList(), [{ topicId: h.topics.byName('t')!.topicId, partitions: [0, 1] }]);
});
