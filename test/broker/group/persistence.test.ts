import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCode, joinParams, settle, startHarness, startJoin, subscription, syncAll, syncParams, track, type Harness } from './harness.js';
import { decodeCoordinatorRecord } from '../../../broker/group/group-records.js';
import { MemoryOffsetsTopicLog, partitionForGroup, type OffsetsTopicRecord } from '../../../broker/group/offsets-topic.js';
import { KafkaError } from '../../../broker/protocol/errors.js';
import { GroupCoordinator } from '../../../broker/group/group-coordinator.js';
import type { OffsetCommitParams } from '../../../broker/group/types.js';

function commitParams(groupId: string, topic: string, partition: number, offset: bigint, extra: Partial<OffsetCommitParams> = {}): OffsetCommitParams {
  return {
    groupId,
    generationId: -1,
    memberId: '',
    groupInstanceId: null,
    retentionTimeMs: -1,
    groupIdNotFoundSupported: true,
    topics: [{ name: topic, partitions: [{ partitionIndex: partition, committedOffset: offset, committedLeaderEpoch: 7, committedMetadata: `m${offset}` }] }],
    ...extra,
  };
}

/** Everything a client or the CLI can observe about the coordinator's state. */
function observe(c: GroupCoordinator, groupIds: string[]): unknown {
  return {
    list: c.listGroups().groups.sort((a, b) => a.groupId.localeCompare(b.groupId)),
    describe: c.describeGroups(groupIds),
    offsets: c.fetchOffsets(groupIds.map((groupId) => ({ groupId, topics: null }))),
    summaries: groupIds.map((g) => c.groupSummary(g)),
  };
}

async function buildState(h: Harness): Promise<{ dynamic: string; staticMember: string }> {
  const c = h.coordinator;
  const a = track(c.joinGroup(joinParams({ groupInstanceId: 'inst-1', clientId: 'static-client' })));
  const b = await startJoin(h, { clientId: 'dynamic-client' });
  await h.advance(6_000);
  await syncAll(h, [a.value, b.join.value]);
  await c.commitOffsets(commitParams('g', 't', 0, 10n, { generationId: 1, memberId: a.value.memberId, groupInstanceId: 'inst-1' }));
  await c.commitOffsets(commitParams('g', 't', 1, 11n, { generationId: 1, memberId: b.memberId }));
  await c.commitOffsets(commitParams('g', 't', 1, 12n, { generationId: 1, memberId: b.memberId }));
  await c.commitOffsets(commitParams('simple', 'u', 3, 30n));
  await c.commitOffsets(commitParams('gone', 'u', 0, 1n));
  assert.equal((await c.deleteGroups(['gone']))[0]?.errorCode, ErrorCode.NONE);
  await c.commitOffsets(commitParams('simple', 'v', 0, 5n));
  assert.equal((await c.deleteOffsets({ groupId: 'simple', topics: [{ name: 'v', partitionIndexes: [0] }] })).errorCode, ErrorCode.NONE);
  // A group whose only member left: Empty, with an offset.
  const e = await startJoin(h, { groupId: 'emptied' });
  await h.advance(3_000);
  await syncAll(h, [e.join.value], undefined, 'emptied');
  await c.commitOffsets(commitParams('emptied', 't', 0, 77n, { generationId: 1, memberId: e.memberId }));
  await c.leaveGroup('emptied', [{ memberId: e.memberId, groupInstanceId: null }]);
  await settle();
  return { dynamic: b.memberId, staticMember: a.value.memberId };
}

test('persistence round trip: a new coordinator over the same log has the same groups and offsets', async () => {
  const h = await startHarness();
  const { dynamic, staticMember } = await buildState(h);
  const ids = ['g', 'simple', 'gone', 'emptied'];
  const before = observe(h.coordinator, ids);
  await h.coordinator.close();

  const h2 = await startHarness({ log: h.log, clock: h.clock });
  assert.deepEqual(observe(h2.coordinator, ids), before);
  assert.equal(h2.coordinator.groupState('g'), 'Stable');
  assert.equal(h2.coordinator.groupState('emptied'), 'Empty');
  assert.equal(h2.coordinator.groupState('gone'), null);

  // Loaded members carry on without a rebalance...
  assert.equal(h2.coordinator.heartbeat({ groupId: 'g', generationId: 1, memberId: dynamic, groupInstanceId: null }), ErrorCode.NONE);
  const sync = await h2.coordinator.syncGroup({ groupId: 'g', generationId: 1, memberId: staticMember, groupInstanceId: 'inst-1', protocolType: 'consumer', protocolName: 'range', assignments: [] });
  assert.equal(sync.assignment.toString(), `assignment-of-${staticMember}`);
  // ...the static member restarting gets its assignment back...
  const rejoin = await h2.coordinator.joinGroup(joinParams({ groupInstanceId: 'inst-1' }));
  assert.equal(rejoin.generationId, 1);
  assert.equal(h2.coordinator.groupState('g'), 'Stable');
  // ...and members that are gone are evicted after their session timeout.
  await h2.advance(11_000);
  assert.equal(h2.coordinator.groupState('g'), 'Empty');
  assert.equal(h2.coordinator.groupSummary('g')?.generationId, 2);
  assert.equal(h2.coordinator.fetchOffsets([{ groupId: 'g', topics: [{ name: 't', partitionIndexes: [1] }] }])[0]?.topics[0]?.partitions[0]?.committedOffset, 12n);
});

test('records are written to the group partition, in Kafka formats, before commits are acknowledged', async () => {
  const h = await startHarness();
  await h.coordinator.commitOffsets(commitParams('grp', 'topic', 2, 99n));
  const p = partitionForGroup('grp', 5);
  const records = h.log.records(p).map(decodeCoordinatorRecord);
  assert.deepEqual(records, [
    {
      type: 'offsetCommit',
      groupId: 'grp',
      topic: 'topic',
      partition: 2,
      value: { committedOffset: 99n, leaderEpoch: 7, metadata: 'm99', commitTimestampMs: h.clock.now(), expireTimestampMs: null },
    },
  ]);
  for (let other = 0; other < 5; other++) if (other !== p) assert.equal(h.log.records(other).length, 0);

  // A group created by JoinGroup is written at once (empty), then with its assignment.
  const { join } = await startJoin(h, { groupId: 'joined' });
  await h.advance(3_000);
  await syncAll(h, [join.value], () => Buffer.from('A'), 'joined');
  const joined = h.log.records(partitionForGroup('joined', 5)).map(decodeCoordinatorRecord).filter((r) => r.type === 'groupMetadata');
  assert.equal(joined.length, 2);
  const last = joined[1];
  assert.ok(last?.type === 'groupMetadata' && last.value !== null);
  assert.equal(last.value.generationId, 1);
  assert.equal(last.value.protocolName, 'range');
  assert.equal(last.value.leaderId, join.value.memberId);
  assert.deepEqual(last.value.members.map((m) => [m.memberId, m.assignment.toString(), m.sessionTimeoutMs, m.rebalanceTimeoutMs]), [
    [join.value.memberId, 'A', 10_000, 30_000],
  ]);
  assert.deepEqual(last.value.members[0]?.subscription, subscription(['t']));
});

test('SyncGroup answers only once the assignment is durable; a failed write makes members rejoin', async () => {
  let hold = false;
  let failing = false;
  const held: (() => void)[] = [];
  const isAssignment = (r: OffsetsTopicRecord): boolean => {
    if (r.value === null) return false;
    const d = decodeCoordinatorRecord(r);
    return d.type === 'groupMetadata' && d.value !== null && d.value.members.length > 0;
  };
  const h = await startHarness({
    wrap: (inner) => ({
      async append(partition, records) {
        if (records.some(isAssignment)) {
          if (hold) await new Promise<void>((resolve) => held.push(resolve));
          if (failing) throw new KafkaError(ErrorCode.KAFKA_STORAGE_ERROR, 'log dir offline');
        }
        await inner.append(partition, records);
      },
      readAll: (partition) => inner.readAll(partition),
    }),
  });
  const c = h.coordinator;
  const a = await startJoin(h);
  const b = await startJoin(h);
  await h.advance(6_000);
  const [leader, follower] = [a.join.value, b.join.value];
  hold = true;
  const followerSync = track(c.syncGroup(syncParams(follower.memberId, 1)));
  const leaderSync = track(
    c.syncGroup(syncParams(leader.memberId, 1, [{ memberId: follower.memberId, assignment: Buffer.from('F') }])),
  );
  await settle();
  assert.equal(held.length, 1);
  assert.ok(!followerSync.settled && !leaderSync.settled, 'nobody is answered before the write');
  assert.equal(c.groupState('g'), 'CompletingRebalance');
  held.shift()?.();
  await settle();
  assert.equal(followerSync.value.assignment.toString(), 'F');
  assert.equal(c.groupState('g'), 'Stable');

  // Next generation: the write fails, members are told to rejoin (NOT_COORDINATOR, retriable).
  hold = false;
  failing = true;
  const ra = track(c.joinGroup(joinParams({ memberId: leader.memberId })));
  const rb = track(c.joinGroup(joinParams({ memberId: follower.memberId })));
  await settle();
  assert.equal(ra.value.generationId, 2);
  const f2 = track(c.syncGroup(syncParams(follower.memberId, 2)));
  const l2 = await c.syncGroup(syncParams(leader.memberId, 2, [{ memberId: follower.memberId, assignment: Buffer.from('F2') }]));
  await settle();
  assert.equal(l2.errorCode, ErrorCode.NOT_COORDINATOR);
  assert.equal(f2.value.errorCode, ErrorCode.NOT_COORDINATOR);
  assert.equal(rb.value.generationId, 2);
  assert.equal(c.groupState('g'), 'PreparingRebalance');
});

test('undecodable records are skipped at load; unknown record types (KIP-848 groups) are ignored', async () => {
  const log = new MemoryOffsetsTopicLog();
  await log.append(0, [{ key: Buffer.from([0x00]), value: null }]);
  await log.append(0, [{ key: Buffer.from([0x00, 0x05, 0x00, 0x01, 0x61]), value: Buffer.from([0x00, 0x00]) }]);
  const h = await startHarness({ log });
  assert.equal(h.coordinator.isLoaded, true);
  assert.deepEqual(h.coordinator.listGroups().groups, []);
});
