// Consumer groups in __consumer_offsets: rebuilt at start-up, offsets with
// member epochs, the group APIs (list, describe, delete) and conversions
// between empty classic and consumer groups.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCode, SimulatedMember, assertOneOwner, startConsumerHarness } from './consumer-harness.js';
import { decodeCoordinatorRecord } from '../../../../broker/group/group-records.js';
import { partitionForGroup } from '../../../../broker/group/offsets-topic.js';
import type { OffsetCommitParams } from '../../../../broker/group/types.js';

function commit(memberId: string, epoch: number, overrides: Partial<OffsetCommitParams> = {}): OffsetCommitParams {
  return {
    groupId: 'g',
    generationId: epoch,
    memberId,
    groupInstanceId: null,
    retentionTimeMs: -1,
    groupIdNotFoundSupported: true,
    apiVersion: 9,
    topics: [{ name: 't', partitions: [{ partitionIndex: 0, committedOffset: 42n, committedLeaderEpoch: 0, committedMetadata: null }] }],
    ...overrides,
  };
}

const codeOf = (r: { topics: { partitions: { errorCode: number }[] }[] }): number => r.topics[0]!.partitions[0]!.errorCode;

test('a restarted coordinator rebuilds members, epochs, targets and assignments from the records', async () => {
  const h = await startConsumerHarness();
  h.topics.add('t', 6);
  h.topics.add('r-1', 2);
  const a = new SimulatedMember(h, 'a', { instanceId: 'ia' });
  const b = new SimulatedMember(h, 'b', { subscribedTopicNames: ['t'], subscribedTopicRegex: 'r-.*' });
  const c = new SimulatedMember(h, 'c');
  for (let i = 0; i < 4; i++) for (const m of [a, b, c]) await m.heartbeat();
  c.holding = true;
  await c.leave();
  await a.heartbeat();
  const before = h.coordinator.consumerGroupDescribe(['g']);
  // The records are Kafka's: their key types are the consumer group record types.
  const types = new Set(h.log.records(partitionForGroup('g', 5)).map((r) => r.key.readInt16BE(0)));
  for (const t of [3, 5, 6, 7, 8, 16]) assert.ok(types.has(t), `record type ${t} written`);
  const h2 = await h.restart();
  assert.deepEqual(h2.coordinator.consumerGroupDescribe(['g']), before);
  // The members carry on with their epochs.
  const a2 = Object.assign(new SimulatedMember(h2, 'a', { instanceId: 'ia' }), { epoch: a.epoch, owned: a.owned });
  const b2 = Object.assign(new SimulatedMember(h2, 'b', { subscribedTopicNames: ['t'], subscribedTopicRegex: 'r-.*' }), { epoch: b.epoch, owned: b.owned });
  for (let i = 0; i < 3; i++) {
    for (const m of [a2, b2]) assert.equal((await m.heartbeat()).errorCode, ErrorCode.NONE);
    assertOneOwner([a2, b2]);
  }
  assert.equal(a2.ownedCount() + b2.ownedCount(), 8);
  assert.equal(h2.coordinator.consumerGroupDescribe(['g'])[0]!.groupState, 'Stable');
});

test('offset commits and fetches check the member id and epoch', async () => {
  const h = await startConsumerHarness();
  h.topics.add('t', 1);
  const a = new SimulatedMember(h, 'a');
  await a.heartbeat();
  const c = h.coordinator;
  assert.equal(codeOf(await c.commitOffsets(commit('a', a.epoch))), ErrorCode.NONE);
  assert.equal(codeOf(await c.commitOffsets(commit('a', a.epoch + 1))), ErrorCode.STALE_MEMBER_EPOCH);
  assert.equal(codeOf(await c.commitOffsets(commit('zz', a.epoch))), ErrorCode.UNKNOWN_MEMBER_ID);
  assert.equal(codeOf(await c.commitOffsets(commit('a', a.epoch, { apiVersion: 8 }))), ErrorCode.UNSUPPORTED_VERSION);
  // An admin commit (-1) needs an empty group.
  assert.equal(codeOf(await c.commitOffsets(commit('', -1))), ErrorCode.UNKNOWN_MEMBER_ID);
  const fetched = c.fetchOffsets([{ groupId: 'g', topics: null, memberId: 'a', memberEpoch: a.epoch }]);
  assert.equal(fetched[0]?.errorCode, ErrorCode.NONE);
  assert.equal(fetched[0]?.topics[0]?.partitions[0]?.committedOffset, 42n);
  assert.equal(c.fetchOffsets([{ groupId: 'g', topics: null, memberId: 'a', memberEpoch: a.epoch + 3 }])[0]?.errorCode, ErrorCode.STALE_MEMBER_EPOCH);
  assert.equal(c.fetchOffsets([{ groupId: 'g', topics: null, memberId: 'q', memberEpoch: 1 }])[0]?.errorCode, ErrorCode.UNKNOWN_MEMBER_ID);
  // Admin fetches (no member) are served.
  assert.equal(c.fetchOffsets([{ groupId: 'g', topics: null }])[0]?.topics[0]?.partitions[0]?.committedOffset, 42n);
  await a.leave();
  assert.equal(codeOf(await c.commitOffsets(commit('', -1, { topics: [{ name: 't', partitions: [{ partitionIndex: 0, committedOffset: 7n, committedLeaderEpoch: 0, committedMetadata: null }] }] }))), ErrorCode.NONE);
  // The offsets survive a restart with the group.
  const h2 = await h.restart();
  assert.equal(h2.coordinator.fetchOffsets([{ groupId: 'g', topics: null }])[0]?.topics[0]?.partitions[0]?.committedOffset, 7n);
  assert.equal(h2.coordinator.listGroups().groups.find((g) => g.groupId === 'g')?.groupType, 'consumer');
});

test('a lagging epoch commits only partitions the member held since then (KIP-1251)', async () => {
  const h = await startConsumerHarness();
  h.topics.add('t', 2);
  const a = new SimulatedMember(h, 'a');
  await a.heartbeat(); // epoch 1, both partitions
  const b = new SimulatedMember(h, 'b');
  await b.heartbeat();
  await a.heartbeat(); // a is asked to revoke one
  await a.heartbeat(); // a acknowledged: epoch 2, keeps one
  assert.equal(a.epoch, 2);
  const kept = [...a.owned.values()][0]!.values().next().value as number;
  const c = h.coordinator;
  const one = (p: number): OffsetCommitParams['topics'] => [{ name: 't', partitions: [{ partitionIndex: p, committedOffset: 1n, committedLeaderEpoch: 0, committedMetadata: null }] }];
  assert.equal(codeOf(await c.commitOffsets(commit('a', 1, { topics: one(kept) }))), ErrorCode.NONE);
  assert.equal(codeOf(await c.commitOffsets(commit('a', 1, { topics: one(1 - kept) }))), ErrorCode.STALE_MEMBER_EPOCH);
});

test('ListGroups types and states, DescribeGroups and DeleteGroups of a consumer group', async () => {
  const h = await startConsumerHarness();
  h.topics.add('t', 2);
  const c = h.coordinator;
  await c.commitOffsets({ ...commit('', -1), groupId: 'simple' });
  const a = new SimulatedMember(h, 'a');
  await a.heartbeat();
  await a.heartbeat();
  const all = c.listGroups().groups.map((g) => `${g.groupId}:${g.groupType}:${g.groupState}`).sort();
  assert.deepEqual(all, ['g:consumer:Stable', 'simple:classic:Empty']);
  assert.deepEqual(c.listGroups([], ['consumer']).groups.map((g) => g.groupId), ['g']);
  assert.deepEqual(c.listGroups([], ['Classic']).groups.map((g) => g.groupId), ['simple']);
  assert.deepEqual(c.listGroups(['stable']).groups.map((g) => g.groupId), ['g']);
  const [d] = c.describeGroups(['g']);
  assert.equal(d?.protocolType, 'consumer');
  assert.equal(d?.protocolData, 'uniform');
  assert.equal(d?.groupState, 'Stable');
  assert.equal(d?.members[0]?.memberId, 'a');
  assert.ok((d?.members[0]?.memberAssignment.length ?? 0) > 0);
  assert.equal(c.consumerGroupDescribe(['simple'])[0]?.errorCode, ErrorCode.GROUP_ID_NOT_FOUND);
  assert.equal(c.consumerGroupDescribe(['nope'])[0]?.errorCode, ErrorCode.GROUP_ID_NOT_FOUND);
  assert.deepEqual(await c.deleteGroups(['g']), [{ groupId: 'g', errorCode: ErrorCode.NON_EMPTY_GROUP }]);
  // OffsetDelete on a non-empty consumer group refuses subscribed topics.
  const od = await c.deleteOffsets({ groupId: 'g', topics: [{ name: 't', partitionIndexes: [0] }] });
  assert.equal(od.topics[0]?.partitions[0]?.errorCode, ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC);
  await a.leave();
  assert.deepEqual(await c.deleteGroups(['g']), [{ groupId: 'g', errorCode: ErrorCode.NONE }]);
  assert.equal(c.consumerGroupDescribe(['g'])[0]?.errorCode, ErrorCode.GROUP_ID_NOT_FOUND);
  const h2 = await h.restart();
  assert.deepEqual(h2.coordinator.listGroups().groups.map((g) => g.groupId), ['simple']);
});

test('an empty classic group becomes a consumer group and back, keeping its offsets', async () => {
  const h = await startConsumerHarness();
  h.topics.add('t', 1);
  const c = h.coordinator;
  await c.commitOffsets(commit('', -1));
  assert.equal(c.listGroups().groups[0]?.groupType, 'classic');
  const a = new SimulatedMember(h, 'a');
  assert.equal((await a.heartbeat()).errorCode, ErrorCode.NONE);
  assert.equal(c.listGroups().groups[0]?.groupType, 'consumer');
  assert.equal(c.fetchOffsets([{ groupId: 'g', topics: null }])[0]?.topics[0]?.partitions[0]?.committedOffset, 42n);
  // While the consumer group has members, a classic member of another protocol type cannot join it (classic members of type "consumer" can: migration.test.ts).
  const join = await c.joinGroup({
    groupId: 'g', memberId: '', groupInstanceId: null, protocolType: 'connect', protocols: [{ name: 'range', metadata: Buffer.alloc(0) }],
    sessionTimeoutMs: 10_000, rebalanceTimeoutMs: 10_000, clientId: 'c', clientHost: '/h', requireKnownMemberId: true, supportsSkipAssignment: true,
  });
  assert.equal(join.errorCode, ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
  await a.leave();
  const again = await c.joinGroup({
    groupId: 'g', memberId: '', groupInstanceId: null, protocolType: 'consumer', protocols: [{ name: 'range', metadata: Buffer.alloc(0) }],
    sessionTimeoutMs: 10_000, rebalanceTimeoutMs: 10_000, clientId: 'c', clientHost: '/h', requireKnownMemberId: true, supportsSkipAssignment: true,
  });
  assert.equal(again.errorCode, ErrorCode.MEMBER_ID_REQUIRED);
  assert.equal(c.consumerGroupDescribe(['g'])[0]?.errorCode, ErrorCode.GROUP_ID_NOT_FOUND);
  assert.equal(c.fetchOffsets([{ groupId: 'g', topics: null }])[0]?.topics[0]?.partitions[0]?.committedOffset, 42n);
  // After a restart the tombstones keep the consumer group gone.
  const h2 = await h.restart();
  assert.equal(h2.coordinator.consumerGroupDescribe(['g'])[0]?.errorCode, ErrorCode.GROUP_ID_NOT_FOUND);
  for (const r of h.log.records(partitionForGroup('g', 5))) {
    // Every record decodes (no undecodable bytes were written).
    if (r.key.readInt16BE(0) <= 2) decodeCoordinatorRecord(r);
  }
});

test('consumer group offsets expire after offsets.retention.minutes unless subscribed; then an empty group goes', async () => {
  const h = await startConsumerHarness({ coordinator: { offsetsRetentionMs: 60_000, offsetsRetentionCheckIntervalMs: 3_600_000 } });
  h.topics.add('t', 1);
  h.topics.add('u', 1);
  const a = new SimulatedMember(h, 'a');
  await a.heartbeat();
  const both: OffsetCommitParams['topics'] = ['t', 'u'].map((name) => ({ name, partitions: [{ partitionIndex: 0, committedOffset: 5n, committedLeaderEpoch: 0, committedMetadata: null }] }));
  assert.equal(codeOf(await h.coordinator.commitOffsets(commit('a', a.epoch, { topics: both }))), ErrorCode.NONE);
  // Past the retention, with the member (subscribed to t only) heartbeating all along.
  for (let t = 0; t < 70_000; t += 5_000) {
    await h.advance(5_000);
    await a.heartbeat();
  }
  assert.equal(h.coordinator.consumerGroupDescribe(['g'])[0]?.members.length, 1);
  await h.coordinator.expireOffsets();
  assert.deepEqual(h.coordinator.fetchOffsets([{ groupId: 'g', topics: null }])[0]?.topics.map((t) => t.name), ['t']);
  await a.leave();
  await h.coordinator.expireOffsets();
  assert.equal(h.coordinator.consumerGroupDescribe(['g'])[0]?.errorCode, ErrorCode.GROUP_ID_NOT_FOUND);
  assert.deepEqual(h.coordinator.fetchOffsets([{ groupId: 'g', topics: null }])[0]?.topics, []);
  const h2 = await h.restart();
  assert.equal(h2.coordinator.listGroups().groups.length, 0);
});
