import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  ErrorCode,
  joinParams,
  protocols,
  requestMemberId,
  settle,
  startHarness,
  startJoin,
  syncAll,
  syncParams,
  track,
  type Harness,
} from './harness.js';
import type { JoinGroupResult } from '../../../broker/group/types.js';

/**
 * n members join a new group at once. The initial rebalance waits
 * `group.initial.rebalance.delay.ms` and once more per delay in which new
 * members arrived (Kafka's behaviour): 3 s for one member, 6 s for more.
 */
async function formGroup(h: Harness, n: number): Promise<JoinGroupResult[]> {
  const joins = [];
  for (let i = 0; i < n; i++) joins.push((await startJoin(h, { clientId: `c${i}` })).join);
  assert.equal(h.coordinator.groupState('g'), 'PreparingRebalance');
  await h.advance(3_000);
  if (n > 1) {
    assert.ok(joins.every((j) => !j.settled), 'the delay is extended when members arrived during it');
    await h.advance(3_000);
  }
  return joins.map((j) => {
    assert.ok(j.settled, 'join still parked after the initial delay');
    assert.equal(j.value.errorCode, ErrorCode.NONE);
    return j.value;
  });
}

for (const n of [1, 2, 3]) {
  test(`${n} member(s): handshake, join, leader gets all metadata, sync delivers the assignment`, async () => {
    const h = await startHarness();
    const joins = await formGroup(h, n);
    assert.equal(h.coordinator.groupState('g'), 'CompletingRebalance');
    const leaders = joins.filter((j) => j.leader === j.memberId);
    assert.equal(leaders.length, 1);
    for (const j of joins) {
      assert.equal(j.generationId, 1);
      assert.equal(j.protocolName, 'range');
      assert.equal(j.protocolType, 'consumer');
      assert.equal(j.leader, joins[0]?.memberId, 'the first member leads');
      assert.equal(j.members.length, j.memberId === j.leader ? n : 0);
    }
    assert.deepEqual(
      new Set(leaders[0]?.members.map((m) => m.memberId)),
      new Set(joins.map((j) => j.memberId)),
    );
    const syncs = await syncAll(h, joins);
    for (const j of joins) {
      const s = syncs.get(j.memberId);
      assert.equal(s?.errorCode, ErrorCode.NONE);
      assert.equal(s?.assignment.toString(), `assignment-of-${j.memberId}`);
      assert.equal(s?.protocolName, 'range');
    }
    assert.equal(h.coordinator.groupState('g'), 'Stable');
    for (const j of joins) {
      assert.equal(
        h.coordinator.heartbeat({ groupId: 'g', generationId: 1, memberId: j.memberId, groupInstanceId: null }),
        ErrorCode.NONE,
      );
    }
  });
}

test('followers wait in SyncGroup until the leader assigns', async () => {
  const h = await startHarness();
  const [leader, follower] = await formGroup(h, 2);
  assert.ok(leader !== undefined && follower !== undefined);
  const followerSync = track(h.coordinator.syncGroup(syncParams(follower.memberId, 1)));
  await settle();
  assert.equal(followerSync.settled, false);
  const leaderSync = await h.coordinator.syncGroup(
    syncParams(leader.memberId, 1, [{ memberId: follower.memberId, assignment: Buffer.from('F') }]),
  );
  await settle();
  assert.equal(leaderSync.errorCode, ErrorCode.NONE);
  assert.equal(leaderSync.assignment.length, 0, 'members missing from the assignment get an empty one');
  assert.equal(followerSync.value.assignment.toString(), 'F');
});

test('JoinGroup v0-3 joins without the MEMBER_ID_REQUIRED round', async () => {
  const h = await startHarness();
  const join = track(h.coordinator.joinGroup(joinParams({ requireKnownMemberId: false })));
  await h.advance(3_000);
  assert.equal(join.value.errorCode, ErrorCode.NONE);
  assert.notEqual(join.value.memberId, '');
  assert.equal(join.value.leader, join.value.memberId);
});

test('validation: group id, session timeout, unknown member, inconsistent protocol', async () => {
  const h = await startHarness();
  const c = h.coordinator;
  assert.equal((await c.joinGroup(joinParams({ groupId: '' }))).errorCode, ErrorCode.INVALID_GROUP_ID);
  assert.equal((await c.joinGroup(joinParams({ sessionTimeoutMs: 1_000 }))).errorCode, ErrorCode.INVALID_SESSION_TIMEOUT);
  assert.equal((await c.joinGroup(joinParams({ sessionTimeoutMs: 400_000 }))).errorCode, ErrorCode.INVALID_SESSION_TIMEOUT);
  assert.equal((await c.joinGroup(joinParams({ groupId: 'nope', memberId: 'ghost' }))).errorCode, ErrorCode.UNKNOWN_MEMBER_ID);
  assert.equal((await c.joinGroup(joinParams({ protocolType: '' }))).errorCode, ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
  await startJoin(h, { protocols: protocols('range') });
  const other = await c.joinGroup(joinParams({ protocols: protocols('roundrobin') }));
  assert.equal(other.errorCode, ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
  const otherType = await c.joinGroup(joinParams({ protocolType: 'connect', protocols: protocols('range') }));
  assert.equal(otherType.errorCode, ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
  assert.equal(c.heartbeat({ groupId: 'nope', generationId: 0, memberId: 'x', groupInstanceId: null }), ErrorCode.UNKNOWN_MEMBER_ID);
  assert.equal((await c.syncGroup(syncParams('x', 0, [], 'nope'))).errorCode, ErrorCode.UNKNOWN_MEMBER_ID);
});

test('protocol selection: only protocols every member supports, most votes wins', async () => {
  const h = await startHarness();
  const a = await startJoin(h, { protocols: protocols('cooperative-sticky', 'range') });
  const b = await startJoin(h, { protocols: protocols('range', 'cooperative-sticky') });
  const c = await startJoin(h, { protocols: protocols('cooperative-sticky', 'range', 'roundrobin') });
  await h.advance(6_000);
  for (const j of [a, b, c]) assert.equal(j.join.value.protocolName, 'cooperative-sticky');
  const leader = a.join.value;
  assert.equal(leader.members.find((m) => m.memberId === b.memberId)?.metadata.toString(), 'meta-cooperative-sticky');
});

test('the initial rebalance delay is extended while new members arrive, bounded by the rebalance timeout', async () => {
  const h = await startHarness({ config: { groupInitialRebalanceDelayMs: 3_000 } });
  const first = await startJoin(h, { rebalanceTimeoutMs: 7_000 });
  await h.advance(2_000);
  const second = await startJoin(h, { rebalanceTimeoutMs: 7_000 });
  await h.advance(1_000); // first delay over, but a member arrived: extended
  assert.equal(first.join.settled, false);
  await h.advance(3_000);
  assert.ok(first.join.settled && second.join.settled);
  assert.equal(first.join.value.generationId, 1);
  assert.equal(first.join.value.members.length, 2);
});

test('members arriving without pause cannot delay the initial rebalance past the rebalance timeout', async () => {
  const h = await startHarness({ config: { groupInitialRebalanceDelayMs: 3_000 } });
  const first = await startJoin(h, { rebalanceTimeoutMs: 7_000 });
  for (let t = 0; t < 3; t++) {
    await h.advance(2_000);
    await startJoin(h, { rebalanceTimeoutMs: 7_000 });
  }
  await h.advance(900); // 6.9 s
  assert.equal(first.join.settled, false);
  await h.advance(100); // 7 s: the rebalance timeout
  assert.equal(first.join.value.members.length, 4);
});

test('a new member joining a Stable group triggers a rebalance every member goes through', async () => {
  const h = await startHarness();
  const [a, b] = await formGroup(h, 2);
  assert.ok(a !== undefined && b !== undefined);
  await syncAll(h, [a, b]);
  const c = await startJoin(h, { clientId: 'c-new' });
  assert.equal(h.coordinator.groupState('g'), 'PreparingRebalance');
  assert.equal(c.join.settled, false);
  // Existing members learn about it from their heartbeat and rejoin.
  assert.equal(
    h.coordinator.heartbeat({ groupId: 'g', generationId: 1, memberId: b.memberId, groupInstanceId: null }),
    ErrorCode.REBALANCE_IN_PROGRESS,
  );
  const ra = track(h.coordinator.joinGroup(joinParams({ memberId: a.memberId })));
  await settle();
  assert.equal(ra.settled, false, 'waits for b');
  const rb = track(h.coordinator.joinGroup(joinParams({ memberId: b.memberId })));
  await settle();
  for (const j of [ra, rb, c.join]) {
    assert.equal(j.value.errorCode, ErrorCode.NONE);
    assert.equal(j.value.generationId, 2);
  }
  assert.equal(ra.value.leader, a.memberId, 'the old leader keeps leading');
  assert.equal(ra.value.members.length, 3);
  await syncAll(h, [ra.value, rb.value, c.join.value]);
  assert.equal(h.coordinator.groupState('g'), 'Stable');
});

test('cooperative rebalance: a member rejoining a Stable group with new metadata starts two rounds, every member rejoins each', async () => {
  const h = await startHarness();
  const coop = (owned: string) => [{ name: 'cooperative-sticky', metadata: Buffer.from(owned) }];
  const a = await startJoin(h, { protocols: coop('a:none') });
  const b = await startJoin(h, { protocols: coop('b:none') });
  await h.advance(6_000);
  await syncAll(h, [a.join.value, b.join.value]);
  let generation = 1;
  // Round 1: b's owned partitions changed; round 2: after revocation, members rejoin again.
  for (const round of [1, 2]) {
    const rb = track(h.coordinator.joinGroup(joinParams({ memberId: b.memberId, protocols: coop(`b:round${round}`) })));
    await settle();
    assert.equal(h.coordinator.groupState('g'), 'PreparingRebalance');
    assert.equal(rb.settled, false);
    assert.equal(
      h.coordinator.heartbeat({ groupId: 'g', generationId: generation, memberId: a.memberId, groupInstanceId: null }),
      ErrorCode.REBALANCE_IN_PROGRESS,
    );
    const ra = track(h.coordinator.joinGroup(joinParams({ memberId: a.memberId, protocols: coop(`a:round${round}`) })));
    await settle();
    generation++;
    assert.equal(ra.value.generationId, generation);
    assert.equal(rb.value.generationId, generation);
    assert.equal(
      ra.value.members.find((m) => m.memberId === b.memberId)?.metadata.toString(),
      `b:round${round}`,
      'the leader sees the latest owned partitions',
    );
    await syncAll(h, [ra.value, rb.value]);
    assert.equal(h.coordinator.groupState('g'), 'Stable');
  }
});

test('a follower rejoining a Stable group with unchanged metadata gets the current generation, no rebalance', async () => {
  const h = await startHarness();
  const [a, b] = await formGroup(h, 2);
  assert.ok(a !== undefined && b !== undefined);
  await syncAll(h, [a, b]);
  const again = await h.coordinator.joinGroup(joinParams({ memberId: b.memberId }));
  assert.equal(again.generationId, 1);
  assert.equal(again.members.length, 0);
  assert.equal(h.coordinator.groupState('g'), 'Stable');
  // The leader rejoining forces a rebalance (metadata changes it noticed).
  const leaderJoin = track(h.coordinator.joinGroup(joinParams({ memberId: a.memberId })));
  await settle();
  assert.equal(h.coordinator.groupState('g'), 'PreparingRebalance');
  assert.equal(leaderJoin.settled, false);
});

test('session timeout evicts a silent member and the rest rebalance without it', async () => {
  const h = await startHarness();
  const [a, b] = await formGroup(h, 2);
  assert.ok(a !== undefined && b !== undefined);
  await syncAll(h, [a, b]);
  for (let t = 0; t < 2; t++) {
    await h.advance(4_000);
    assert.equal(h.coordinator.heartbeat({ groupId: 'g', generationId: 1, memberId: a.memberId, groupInstanceId: null }), ErrorCode.NONE);
  }
  await h.advance(4_000);
  // b has been silent for 12 s > its 10 s session.
  assert.equal(h.coordinator.groupState('g'), 'PreparingRebalance');
  assert.equal(
    h.coordinator.heartbeat({ groupId: 'g', generationId: 1, memberId: a.memberId, groupInstanceId: null }),
    ErrorCode.REBALANCE_IN_PROGRESS,
  );
  assert.deepEqual(h.coordinator.groupSummary('g')?.memberIds, [a.memberId]);
  assert.equal(h.coordinator.heartbeat({ groupId: 'g', generationId: 1, memberId: b.memberId, groupInstanceId: null }), ErrorCode.UNKNOWN_MEMBER_ID);
  const ra = await h.coordinator.joinGroup(joinParams({ memberId: a.memberId }));
  assert.equal(ra.generationId, 2);
  assert.deepEqual(ra.members.map((m) => m.memberId), [a.memberId]);
});

test('leader election: when the leader does not rejoin in time, a rejoined member leads and the leader is dropped', async () => {
  const h = await startHarness();
  const [a, b, c] = await formGroup(h, 3);
  assert.ok(a !== undefined && b !== undefined && c !== undefined);
  await syncAll(h, [a, b, c]);
  const rc = track(h.coordinator.joinGroup(joinParams({ memberId: c.memberId, protocols: protocols('range') })));
  await settle();
  const rb = track(h.coordinator.joinGroup(joinParams({ memberId: b.memberId, protocols: protocols('range') })));
  // Heartbeats of a (the leader) keep its session alive, but it never rejoins.
  for (let t = 0; t < 3; t++) {
    await h.advance(9_000);
    assert.equal(
      h.coordinator.heartbeat({ groupId: 'g', generationId: 1, memberId: a.memberId, groupInstanceId: null }),
      ErrorCode.REBALANCE_IN_PROGRESS,
    );
  }
  assert.equal(rc.settled, false);
  await h.advance(3_000); // the rebalance timeout (30 s) since the rebalance started
  assert.equal(rc.value.errorCode, ErrorCode.NONE);
  assert.equal(rc.value.generationId, 2);
  assert.notEqual(rc.value.leader, a.memberId);
  assert.ok([b.memberId, c.memberId].includes(rc.value.leader));
  assert.equal(rb.value.leader, rc.value.leader);
  assert.deepEqual(new Set(h.coordinator.groupSummary('g')?.memberIds), new Set([b.memberId, c.memberId]));
  assert.equal(h.coordinator.heartbeat({ groupId: 'g', generationId: 1, memberId: a.memberId, groupInstanceId: null }), ErrorCode.UNKNOWN_MEMBER_ID);
});

test('members that never sync within the rebalance timeout are removed and the group rebalances', async () => {
  const h = await startHarness();
  const [a, b] = await formGroup(h, 2);
  assert.ok(a !== undefined && b !== undefined);
  const leaderSync = track(h.coordinator.syncGroup(syncParams(a.memberId, 1, [{ memberId: a.memberId, assignment: Buffer.from('A') }])));
  await settle();
  assert.equal(leaderSync.value.errorCode, ErrorCode.NONE);
  assert.equal(h.coordinator.groupState('g'), 'Stable');
  for (let t = 0; t < 3; t++) {
    await h.advance(9_000);
    h.coordinator.heartbeat({ groupId: 'g', generationId: 1, memberId: a.memberId, groupInstanceId: null });
    h.coordinator.heartbeat({ groupId: 'g', generationId: 1, memberId: b.memberId, groupInstanceId: null });
  }
  await h.advance(4_000); // 31 s after the join completed
  assert.equal(h.coordinator.groupState('g'), 'PreparingRebalance');
  assert.deepEqual(h.coordinator.groupSummary('g')?.memberIds, [a.memberId]);
});

test('a rebalance while members wait in SyncGroup answers them REBALANCE_IN_PROGRESS', async () => {
  const h = await startHarness();
  const [a, b] = await formGroup(h, 2);
  assert.ok(a !== undefined && b !== undefined);
  const followerSync = track(h.coordinator.syncGroup(syncParams(b.memberId, 1)));
  await settle();
  await startJoin(h, { clientId: 'late' });
  assert.equal(followerSync.value.errorCode, ErrorCode.REBALANCE_IN_PROGRESS);
  assert.equal((await h.coordinator.syncGroup(syncParams(a.memberId, 1))).errorCode, ErrorCode.REBALANCE_IN_PROGRESS);
});

test('SyncGroup and Heartbeat check generation and protocol', async () => {
  const h = await startHarness();
  const [a] = await formGroup(h, 1);
  assert.ok(a !== undefined);
  assert.equal((await h.coordinator.syncGroup(syncParams(a.memberId, 7))).errorCode, ErrorCode.ILLEGAL_GENERATION);
  const wrongProtocol = await h.coordinator.syncGroup({ ...syncParams(a.memberId, 1), protocolName: 'roundrobin' });
  assert.equal(wrongProtocol.errorCode, ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
  assert.equal(h.coordinator.heartbeat({ groupId: 'g', generationId: 0, memberId: a.memberId, groupInstanceId: null }), ErrorCode.ILLEGAL_GENERATION);
  assert.equal(h.coordinator.heartbeat({ groupId: 'g', generationId: 1, memberId: 'ghost', groupInstanceId: null }), ErrorCode.UNKNOWN_MEMBER_ID);
});

test('a pending member (MEMBER_ID_REQUIRED but never back) expires after its session timeout', async () => {
  const h = await startHarness();
  const [a] = await formGroup(h, 1);
  assert.ok(a !== undefined);
  await syncAll(h, [a]);
  const pending = await requestMemberId(h);
  await h.advance(10_000);
  assert.equal((await h.coordinator.joinGroup(joinParams({ memberId: pending }))).errorCode, ErrorCode.UNKNOWN_MEMBER_ID);
});

test('LeaveGroup: batched members, unknown members, and the last leaving empties the group', async () => {
  const h = await startHarness();
  const [a, b] = await formGroup(h, 2);
  assert.ok(a !== undefined && b !== undefined);
  await syncAll(h, [a, b]);
  const res = await h.coordinator.leaveGroup('g', [
    { memberId: a.memberId, groupInstanceId: null },
    { memberId: 'ghost', groupInstanceId: null },
  ]);
  assert.equal(res.errorCode, ErrorCode.NONE);
  assert.deepEqual(res.members.map((m) => m.errorCode), [ErrorCode.NONE, ErrorCode.UNKNOWN_MEMBER_ID]);
  assert.equal(h.coordinator.groupState('g'), 'PreparingRebalance');
  const rb = await h.coordinator.joinGroup(joinParams({ memberId: b.memberId }));
  assert.equal(rb.leader, b.memberId);
  await syncAll(h, [rb]);
  await h.coordinator.leaveGroup('g', [{ memberId: b.memberId, groupInstanceId: null }]);
  assert.equal(h.coordinator.groupState('g'), 'Empty');
  assert.equal(h.coordinator.groupSummary('g')?.generationId, 3);
  assert.equal((await h.coordinator.leaveGroup('nope', [{ memberId: 'x', groupInstanceId: null }])).errorCode, ErrorCode.UNKNOWN_MEMBER_ID);
});

test('a member leaving during the join phase lets the others complete it', async () => {
  const h = await startHarness();
  const [a, b] = await formGroup(h, 2);
  assert.ok(a !== undefined && b !== undefined);
  await syncAll(h, [a, b]);
  const ra = track(h.coordinator.joinGroup(joinParams({ memberId: a.memberId, protocols: protocols('range') })));
  await settle();
  assert.equal(ra.settled, false);
  await h.coordinator.leaveGroup('g', [{ memberId: b.memberId, groupInstanceId: null }]);
  await settle();
  assert.equal(ra.value.generationId, 2);
  assert.deepEqual(ra.value.members.map((m) => m.memberId), [a.memberId]);
});

test('group.max.size refuses members beyond the limit', async () => {
  const h = await startHarness({ config: { groupMaxSize: 2 } });
  await startJoin(h);
  await startJoin(h);
  const third = await h.coordinator.joinGroup(joinParams({ requireKnownMemberId: false }));
  assert.equal(third.errorCode, ErrorCode.GROUP_MAX_SIZE_REACHED);
});
