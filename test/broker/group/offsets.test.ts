import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCode, FlakyLog, commitParams, joinParams, settle, startHarness, startJoin, subscription, syncAll, track, type Harness } from './harness.js';
import type { OffsetCommitParams } from '../../../broker/group/types.js';
import { GroupCoordinator } from '../../../broker/group/group-coordinator.js';
import { ManualClock } from '../../../broker/common/clock.js';
import { ManualScheduler } from '../../../broker/common/scheduler.js';

function commit(overrides: Partial<OffsetCommitParams> = {}, offset = 42n, metadata: string | null = 'meta'): OffsetCommitParams {
  return commitParams(offset, overrides, { committedLeaderEpoch: 3, committedMetadata: metadata });
}

function errorOf(res: Awaited<ReturnType<GroupCoordinator['commitOffsets']>>): number | undefined {
  return res.topics[0]?.partitions[0]?.errorCode;
}

function fetchOne(h: Harness, groupId = 'g', topic = 't', partition = 0) {
  const [g] = h.coordinator.fetchOffsets([{ groupId, topics: [{ name: topic, partitionIndexes: [partition] }] }]);
  return { group: g, partition: g?.topics[0]?.partitions[0] };
}

/** A Stable group of one dynamic member at generation 1 subscribed to t. */
async function stableGroup(h: Harness): Promise<string> {
  const { join } = await startJoin(h, { protocols: [{ name: 'range', metadata: subscription(['t']) }] });
  await h.advance(3_000);
  await syncAll(h, [join.value]);
  return join.value.memberId;
}

test('OffsetFetch of an unknown group answers -1 without error; a simple commit creates the group', async () => {
  const h = await startHarness();
  const before = fetchOne(h, 'nobody');
  assert.equal(before.group?.errorCode, ErrorCode.NONE);
  assert.deepEqual(before.partition, { partitionIndex: 0, committedOffset: -1n, committedLeaderEpoch: -1, metadata: '', errorCode: 0 });
  assert.deepEqual(h.coordinator.fetchOffsets([{ groupId: 'nobody', topics: null }])[0]?.topics, []);

  assert.equal(errorOf(await h.coordinator.commitOffsets(commit())), ErrorCode.NONE);
  assert.equal(h.coordinator.groupState('g'), 'Empty');
  const after = fetchOne(h);
  assert.equal(after.partition?.committedOffset, 42n);
  assert.equal(after.partition?.committedLeaderEpoch, 3);
  assert.equal(after.partition?.metadata, 'meta', 'commit metadata round-trips');
  const all = h.coordinator.fetchOffsets([{ groupId: 'g', topics: null }])[0];
  assert.deepEqual(all?.topics.map((t) => [t.name, t.partitions.map((p) => p.committedOffset)]), [['t', [42n]]]);
});

test('null commit metadata is stored as the empty string; oversized metadata is refused per partition', async () => {
  const h = await startHarness({ config: { offsetMetadataMaxBytes: 10 } });
  await h.coordinator.commitOffsets(commit({}, 1n, null));
  assert.equal(fetchOne(h).partition?.metadata, '');
  const res = await h.coordinator.commitOffsets({
    ...commit(),
    topics: [
      {
        name: 't',
        partitions: [
          { partitionIndex: 0, committedOffset: 2n, committedLeaderEpoch: -1, committedMetadata: 'x'.repeat(11) },
          { partitionIndex: 1, committedOffset: 3n, committedLeaderEpoch: -1, committedMetadata: 'ok' },
        ],
      },
    ],
  });
  assert.deepEqual(res.topics[0]?.partitions.map((p) => p.errorCode), [ErrorCode.OFFSET_METADATA_TOO_LARGE, ErrorCode.NONE]);
  assert.equal(fetchOne(h).partition?.committedOffset, 1n);
  assert.equal(fetchOne(h, 'g', 't', 1).partition?.committedOffset, 3n);
});

test('commit validation matrix', async () => {
  const h = await startHarness();
  const c = h.coordinator;
  // Unknown group with a generation: GROUP_ID_NOT_FOUND from v9, ILLEGAL_GENERATION before.
  assert.equal(errorOf(await c.commitOffsets(commit({ groupId: 'x', generationId: 1, memberId: 'm' }))), ErrorCode.GROUP_ID_NOT_FOUND);
  assert.equal(
    errorOf(await c.commitOffsets(commit({ groupId: 'x', generationId: 1, memberId: 'm', groupIdNotFoundSupported: false }))),
    ErrorCode.ILLEGAL_GENERATION,
  );
  assert.equal(c.groupState('x'), null, 'a refused commit creates no group');
  assert.equal(errorOf(await c.commitOffsets(commit({ groupId: '' }))), ErrorCode.INVALID_GROUP_ID);

  const member = await stableGroup(h);
  const cases: [string, Partial<OffsetCommitParams>, number][] = [
    ['member of the current generation', { generationId: 1, memberId: member }, ErrorCode.NONE],
    ['old generation', { generationId: 0, memberId: member }, ErrorCode.ILLEGAL_GENERATION],
    ['future generation', { generationId: 2, memberId: member }, ErrorCode.ILLEGAL_GENERATION],
    ['unknown member', { generationId: 1, memberId: 'ghost' }, ErrorCode.UNKNOWN_MEMBER_ID],
    ['generation -1 on a non-empty group', { generationId: -1, memberId: '' }, ErrorCode.UNKNOWN_MEMBER_ID],
    ['unknown instance id', { generationId: 1, memberId: member, groupInstanceId: 'nope' }, ErrorCode.UNKNOWN_MEMBER_ID],
  ];
  for (const [name, params, expected] of cases) {
    assert.equal(errorOf(await c.commitOffsets(commit(params))), expected, name);
  }

  // CompletingRebalance: REBALANCE_IN_PROGRESS for the current generation.
  const rejoin = track(c.joinGroup(joinParams({ memberId: member })));
  await settle();
  assert.equal(c.groupState('g'), 'CompletingRebalance');
  assert.equal(rejoin.value.generationId, 2);
  assert.equal(errorOf(await c.commitOffsets(commit({ generationId: 2, memberId: member }))), ErrorCode.REBALANCE_IN_PROGRESS);
  assert.equal(errorOf(await c.commitOffsets(commit({ generationId: 1, memberId: member }))), ErrorCode.ILLEGAL_GENERATION);

  // PreparingRebalance: commits of the current generation are still accepted.
  await startJoin(h, { clientId: 'second' });
  assert.equal(c.groupState('g'), 'PreparingRebalance');
  assert.equal(errorOf(await c.commitOffsets(commit({ generationId: 2, memberId: member }))), ErrorCode.NONE);

  // Once everybody left, generation -1 commits (kcat, CLI) are accepted again.
  await c.leaveGroup('g', [{ memberId: member, groupInstanceId: null }]);
  const second = h.coordinator.groupSummary('g')?.memberIds ?? [];
  await c.leaveGroup('g', [...second.map((m) => ({ memberId: m, groupInstanceId: null }))]);
  await h.advance(3_000);
  assert.equal(c.groupState('g'), 'Empty');
  assert.equal(errorOf(await c.commitOffsets(commit({}, 99n))), ErrorCode.NONE);
  assert.equal(fetchOne(h).partition?.committedOffset, 99n);
});

test('a commit keeps the member session alive', async () => {
  const h = await startHarness();
  const member = await stableGroup(h);
  for (let t = 0; t < 4; t++) {
    await h.advance(8_000);
    assert.equal(errorOf(await h.coordinator.commitOffsets(commit({ generationId: 1, memberId: member }))), ErrorCode.NONE);
  }
  assert.equal(h.coordinator.groupState('g'), 'Stable');
});

test('a commit is acknowledged only once written; a failed write is reported and not applied', async () => {
  const flaky = new FlakyLog();
  const clock = new ManualClock();
  const coordinator = new GroupCoordinator({ log: flaky, clock, scheduler: new ManualScheduler(clock), config: { offsetsTopicNumPartitions: 3 } });
  await coordinator.start();
  assert.equal(errorOf(await coordinator.commitOffsets(commit({}, 1n))), ErrorCode.NONE);
  flaky.failing = true;
  assert.equal(errorOf(await coordinator.commitOffsets(commit({}, 2n))), ErrorCode.UNKNOWN_SERVER_ERROR);
  assert.equal(errorOf(await coordinator.commitOffsets(commit({ groupId: 'fresh' }, 2n))), ErrorCode.UNKNOWN_SERVER_ERROR);
  assert.equal(coordinator.groupState('fresh'), null, 'the simple group of a failed first commit is dropped');
  flaky.failing = false;
  const [g] = coordinator.fetchOffsets([{ groupId: 'g', topics: [{ name: 't', partitionIndexes: [0] }] }]);
  assert.equal(g?.topics[0]?.partitions[0]?.committedOffset, 1n);
});

test('concurrent commits to one partition land in order', async () => {
  const h = await startHarness();
  const results = await Promise.all([1n, 2n, 3n, 4n, 5n].map((o) => h.coordinator.commitOffsets(commit({}, o))));
  assert.ok(results.every((r) => errorOf(r) === ErrorCode.NONE));
  assert.equal(fetchOne(h).partition?.committedOffset, 5n);
});

test('OffsetDelete: NON_EMPTY_GROUP for active non-consumer groups, GROUP_SUBSCRIBED_TO_TOPIC for subscribed topics', async () => {
  const h = await startHarness();
  const c = h.coordinator;
  assert.equal((await c.deleteOffsets({ groupId: 'nobody', topics: [] })).errorCode, ErrorCode.GROUP_ID_NOT_FOUND);
  const member = await stableGroup(h);
  await c.commitOffsets({
    ...commit({ generationId: 1, memberId: member }),
    topics: [
      { name: 't', partitions: [{ partitionIndex: 0, committedOffset: 1n, committedLeaderEpoch: -1, committedMetadata: null }] },
      { name: 'old', partitions: [{ partitionIndex: 0, committedOffset: 7n, committedLeaderEpoch: -1, committedMetadata: null }] },
    ],
  });
  const res = await c.deleteOffsets({
    groupId: 'g',
    topics: [
      { name: 't', partitionIndexes: [0] },
      { name: 'old', partitionIndexes: [0, 1] },
    ],
  });
  assert.equal(res.errorCode, ErrorCode.NONE);
  assert.deepEqual(res.topics.map((t) => t.partitions.map((p) => p.errorCode)), [[ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC], [0, 0]]);
  assert.equal(fetchOne(h, 'g', 'old').partition?.committedOffset, -1n);
  assert.equal(fetchOne(h, 'g', 't').partition?.committedOffset, 1n);

  // A non-"consumer" protocol (e.g. connect) is refused while members are active.
  const { join } = await startJoin(h, { groupId: 'connect', protocolType: 'connect', protocols: [{ name: 'v1', metadata: Buffer.from('x') }] });
  await h.advance(3_000);
  await syncAll(h, [join.value], undefined, 'connect');
  assert.equal((await c.deleteOffsets({ groupId: 'connect', topics: [] })).errorCode, ErrorCode.NON_EMPTY_GROUP);
});

test('DeleteGroups: Empty groups only; offsets go with the group', async () => {
  const h = await startHarness();
  const c = h.coordinator;
  await c.commitOffsets(commit({ groupId: 'simple' }));
  await stableGroup(h);
  const res = await c.deleteGroups(['simple', 'g', 'nobody', '']);
  assert.deepEqual(res.map((r) => r.errorCode), [ErrorCode.NONE, ErrorCode.NON_EMPTY_GROUP, ErrorCode.GROUP_ID_NOT_FOUND, ErrorCode.INVALID_GROUP_ID]);
  assert.equal(c.groupState('simple'), null);
  assert.equal(fetchOne(h, 'simple').partition?.committedOffset, -1n);
  assert.ok(!c.listGroups().groups.some((g) => g.groupId === 'simple'));
});

test('DescribeGroups and ListGroups', async () => {
  const h = await startHarness();
  const c = h.coordinator;
  const member = await stableGroup(h);
  await c.commitOffsets(commit({ groupId: 'simple' }));
  const [g, missing] = c.describeGroups(['g', 'missing']);
  assert.equal(g?.groupState, 'Stable');
  assert.equal(g?.protocolType, 'consumer');
  assert.equal(g?.protocolData, 'range');
  assert.equal(g?.members[0]?.memberId, member);
  assert.equal(g?.members[0]?.clientHost, '/127.0.0.1');
  assert.deepEqual(g?.members[0]?.memberMetadata, subscription(['t']));
  assert.equal(g?.members[0]?.memberAssignment.toString(), `assignment-of-${member}`);
  assert.deepEqual(missing, { errorCode: 0, groupId: 'missing', groupState: 'Dead', protocolType: '', protocolData: '', members: [] });

  const listed = c.listGroups();
  assert.deepEqual(
    listed.groups.map((x) => [x.groupId, x.groupState, x.protocolType, x.groupType]).sort(),
    [
      ['g', 'Stable', 'consumer', 'classic'],
      ['simple', 'Empty', '', 'classic'],
    ],
  );
  assert.deepEqual(c.listGroups(['empty']).groups.map((x) => x.groupId), ['simple']);
  assert.deepEqual(c.listGroups(['STABLE', 'PreparingRebalance']).groups.map((x) => x.groupId), ['g']);
  assert.deepEqual(c.listGroups([], ['consumer']).groups, []);
  assert.equal(c.listGroups([], ['Classic']).groups.length, 2);
});

test('offsets.retention.minutes expires the offsets of an Empty group, then the group', async () => {
  const retentionMs = 60_000;
  const h = await startHarness({ config: { offsetsRetentionMs: retentionMs, offsetsRetentionCheckIntervalMs: 10_000 } });
  const c = h.coordinator;
  const member = await stableGroup(h);
  await c.commitOffsets(commit({ generationId: 1, memberId: member }));
  await c.commitOffsets(commit({ groupId: 'simple' }));
  // Active groups keep their (subscribed) offsets however old.
  for (let t = 0; t < (2 * retentionMs) / 5_000; t++) {
    await h.advance(5_000);
    assert.equal(c.heartbeat({ groupId: 'g', generationId: 1, memberId: member, groupInstanceId: null }), ErrorCode.NONE);
  }
  assert.equal(fetchOne(h).partition?.committedOffset, 42n);
  assert.equal(c.groupState('simple'), null, 'simple group offsets expire from the commit time');

  await c.leaveGroup('g', [{ memberId: member, groupInstanceId: null }]);
  assert.equal(c.groupState('g'), 'Empty');
  await h.advance(retentionMs - 10_000);
  assert.equal(fetchOne(h).partition?.committedOffset, 42n, 'retention counts from when the group became Empty');
  await h.advance(20_000);
  assert.equal(fetchOne(h).partition?.committedOffset, -1n);
  assert.equal(c.groupState('g'), null);
});

test('explicit retention (OffsetCommit v2-4) expires at commit time + retention', async () => {
  const h = await startHarness({ config: { offsetsRetentionMs: 1_000_000, offsetsRetentionCheckIntervalMs: 1_000 } });
  await h.coordinator.commitOffsets(commit({ retentionTimeMs: 5_000 }));
  await h.advance(4_000);
  assert.equal(fetchOne(h).partition?.committedOffset, 42n);
  await h.advance(2_000);
  assert.equal(fetchOne(h).partition?.committedOffset, -1n);
});

test('every call answers COORDINATOR_LOAD_IN_PROGRESS until loading is done, NOT_COORDINATOR after close', async () => {
  const clock = new ManualClock();
  let release: () => void = () => undefined;
  const gate = new Promise<void>((r) => (release = r));
  const log = {
    append: async () => undefined,
    async *readAll() {
      await gate;
    },
  };
  const c = new GroupCoordinator({ log, clock, scheduler: new ManualScheduler(clock), config: { offsetsTopicNumPartitions: 2 } });
  const started = c.start();
  const L = ErrorCode.COORDINATOR_LOAD_IN_PROGRESS;
  assert.equal((await c.joinGroup(joinParams())).errorCode, L);
  assert.equal((await c.syncGroup({ groupId: 'g', generationId: 1, memberId: 'm', groupInstanceId: null, protocolType: null, protocolName: null, assignments: [] })).errorCode, L);
  assert.equal(c.heartbeat({ groupId: 'g', generationId: 1, memberId: 'm', groupInstanceId: null }), L);
  assert.equal((await c.leaveGroup('g', [])).errorCode, L);
  assert.equal(errorOf(await c.commitOffsets(commit())), L);
  assert.equal(c.fetchOffsets([{ groupId: 'g', topics: null }])[0]?.errorCode, L);
  assert.equal(c.describeGroups(['g'])[0]?.errorCode, L);
  assert.equal(c.listGroups().errorCode, L);
  assert.equal((await c.deleteGroups(['g']))[0]?.errorCode, L);
  assert.equal((await c.deleteOffsets({ groupId: 'g', topics: [] })).errorCode, L);
  release();
  await started;
  assert.equal(c.isLoaded, true);
  assert.equal(c.listGroups().errorCode, ErrorCode.NONE);
  await c.close();
  assert.equal(c.listGroups().errorCode, ErrorCode.NOT_COORDINATOR);
});
