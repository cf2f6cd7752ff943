import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCode, joinParams, settle, startHarness, syncAll, syncParams, track, type Harness } from './harness.js';
import type { JoinGroupResult } from '../../../broker/group/types.js';

/** Static members i1..in join (no MEMBER_ID_REQUIRED round for static members) and sync. */
async function formStaticGroup(h: Harness, n: number): Promise<JoinGroupResult[]> {
  const joins = [];
  for (let i = 1; i <= n; i++) {
    joins.push(track(h.coordinator.joinGroup(joinParams({ groupInstanceId: `i${i}`, clientId: `c${i}` }))));
    await settle();
  }
  await h.advance(n > 1 ? 6_000 : 3_000);
  const results = joins.map((j) => j.value);
  for (const r of results) assert.equal(r.errorCode, ErrorCode.NONE);
  await syncAll(h, results);
  assert.equal(h.coordinator.groupState('g'), 'Stable');
  return results;
}

test('a static member restarting within its session gets its old assignment back, no rebalance', async () => {
  const h = await startHarness();
  const [m1, m2] = await formStaticGroup(h, 2);
  assert.ok(m1 !== undefined && m2 !== undefined);
  await h.advance(5_000); // restart, within the 10 s session
  const rejoin = await h.coordinator.joinGroup(joinParams({ groupInstanceId: 'i2', clientId: 'c2' }));
  assert.equal(rejoin.errorCode, ErrorCode.NONE);
  assert.notEqual(rejoin.memberId, m2.memberId, 'a new member id replaces the old one');
  assert.equal(rejoin.generationId, 1, 'same generation: no rebalance');
  assert.equal(rejoin.leader, m1.memberId);
  assert.equal(h.coordinator.groupState('g'), 'Stable');
  const sync = await h.coordinator.syncGroup({ ...syncParams(rejoin.memberId, 1), groupInstanceId: 'i2' });
  assert.equal(sync.errorCode, ErrorCode.NONE);
  assert.equal(sync.assignment.toString(), `assignment-of-${m2.memberId}`);
  // The other member never noticed.
  assert.equal(h.coordinator.heartbeat({ groupId: 'g', generationId: 1, memberId: m1.memberId, groupInstanceId: 'i1' }), ErrorCode.NONE);
});

test('the old incarnation of a replaced static member is fenced', async () => {
  const h = await startHarness();
  const [, m2] = await formStaticGroup(h, 2);
  assert.ok(m2 !== undefined);
  const rejoin = await h.coordinator.joinGroup(joinParams({ groupInstanceId: 'i2' }));
  const stale = { groupId: 'g', generationId: 1, memberId: m2.memberId, groupInstanceId: 'i2' };
  assert.equal(h.coordinator.heartbeat(stale), ErrorCode.FENCED_INSTANCE_ID);
  assert.equal((await h.coordinator.syncGroup({ ...syncParams(m2.memberId, 1), groupInstanceId: 'i2' })).errorCode, ErrorCode.FENCED_INSTANCE_ID);
  assert.equal((await h.coordinator.joinGroup(joinParams({ memberId: m2.memberId, groupInstanceId: 'i2' }))).errorCode, ErrorCode.FENCED_INSTANCE_ID);
  const commit = await h.coordinator.commitOffsets({
    groupId: 'g',
    generationId: 1,
    memberId: m2.memberId,
    groupInstanceId: 'i2',
    retentionTimeMs: -1,
    groupIdNotFoundSupported: true,
    topics: [{ name: 't', partitions: [{ partitionIndex: 0, committedOffset: 5n, committedLeaderEpoch: -1, committedMetadata: null }] }],
  });
  assert.equal(commit.topics[0]?.partitions[0]?.errorCode, ErrorCode.FENCED_INSTANCE_ID);
  const leave = await h.coordinator.leaveGroup('g', [{ memberId: m2.memberId, groupInstanceId: 'i2' }]);
  assert.equal(leave.members[0]?.errorCode, ErrorCode.FENCED_INSTANCE_ID);
  assert.equal(h.coordinator.heartbeat({ ...stale, memberId: rejoin.memberId }), ErrorCode.NONE);
});

test('a static leader rejoining (JoinGroup v9+) is told to skip the assignment; older versions see the old leader id', async () => {
  const h = await startHarness();
  const [m1] = await formStaticGroup(h, 2);
  assert.ok(m1 !== undefined);
  const v9 = await h.coordinator.joinGroup(joinParams({ groupInstanceId: 'i1' }));
  assert.equal(v9.leader, v9.memberId);
  assert.equal(v9.skipAssignment, true);
  assert.equal(v9.members.length, 2);
  const v5 = await h.coordinator.joinGroup(joinParams({ groupInstanceId: 'i1', supportsSkipAssignment: false }));
  assert.equal(v5.skipAssignment, false);
  assert.equal(v5.leader, v9.memberId, 'the previous leader id: the client does not assign again');
  assert.notEqual(v5.leader, v5.memberId);
  assert.equal(h.coordinator.groupState('g'), 'Stable');
});

test('a static member that is gone longer than its session is removed and the group rebalances', async () => {
  const h = await startHarness();
  const [m1, m2] = await formStaticGroup(h, 2);
  assert.ok(m1 !== undefined && m2 !== undefined);
  for (let t = 0; t < 3; t++) {
    await h.advance(4_000);
    h.coordinator.heartbeat({ groupId: 'g', generationId: 1, memberId: m1.memberId, groupInstanceId: 'i1' });
  }
  assert.equal(h.coordinator.groupState('g'), 'PreparingRebalance');
  assert.deepEqual(h.coordinator.groupSummary('g')?.memberIds, [m1.memberId]);
  const back = track(h.coordinator.joinGroup(joinParams({ groupInstanceId: 'i2' })));
  const r1 = track(h.coordinator.joinGroup(joinParams({ memberId: m1.memberId, groupInstanceId: 'i1' })));
  await settle();
  assert.equal(back.value.generationId, 2);
  assert.equal(r1.value.members.length, 2);
});

test('a static member rejoining during CompletingRebalance restarts the rebalance', async () => {
  const h = await startHarness();
  const joins = [
    track(h.coordinator.joinGroup(joinParams({ groupInstanceId: 'i1' }))),
    track(h.coordinator.joinGroup(joinParams({ groupInstanceId: 'i2' }))),
  ];
  await h.advance(6_000);
  assert.equal(h.coordinator.groupState('g'), 'CompletingRebalance');
  const old = joins[1]?.value;
  assert.ok(old !== undefined);
  const rejoin = track(h.coordinator.joinGroup(joinParams({ groupInstanceId: 'i2' })));
  await settle();
  assert.equal(h.coordinator.groupState('g'), 'PreparingRebalance');
  assert.equal(rejoin.settled, false);
  const leader = await h.coordinator.joinGroup(joinParams({ memberId: joins[0]?.value.memberId ?? '', groupInstanceId: 'i1' }));
  await settle();
  assert.equal(leader.generationId, 2);
  assert.equal(rejoin.value.generationId, 2);
  assert.ok(leader.members.some((m) => m.memberId === rejoin.value.memberId && m.groupInstanceId === 'i2'));
  assert.ok(!leader.members.some((m) => m.memberId === old.memberId));
});

test('static members that do not rejoin in time stay in the group (only dynamic ones are dropped)', async () => {
  const h = await startHarness();
  const [m1, m2] = await formStaticGroup(h, 2);
  assert.ok(m1 !== undefined && m2 !== undefined);
  const r1 = track(
    h.coordinator.joinGroup(joinParams({ memberId: m1.memberId, groupInstanceId: 'i1', protocols: [{ name: 'range', metadata: Buffer.from('x') }] })),
  );
  for (let t = 0; t < 3; t++) {
    await h.advance(9_000);
    h.coordinator.heartbeat({ groupId: 'g', generationId: 1, memberId: m2.memberId, groupInstanceId: 'i2' });
  }
  await h.advance(3_000);
  assert.equal(r1.value.generationId, 2);
  assert.equal(r1.value.members.length, 2, 'the leader still assigns to the absent static member');
});

test('LeaveGroup by instance id alone removes a static member (admin removal)', async () => {
  const h = await startHarness();
  await formStaticGroup(h, 2);
  const res = await h.coordinator.leaveGroup('g', [
    { memberId: '', groupInstanceId: 'i2' },
    { memberId: '', groupInstanceId: 'nobody' },
  ]);
  assert.deepEqual(res.members.map((m) => m.errorCode), [ErrorCode.NONE, ErrorCode.UNKNOWN_MEMBER_ID]);
  assert.equal(h.coordinator.groupSummary('g')?.memberIds.length, 1);
  assert.equal(h.coordinator.groupState('g'), 'PreparingRebalance');
});
