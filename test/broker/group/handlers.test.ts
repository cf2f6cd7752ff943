// The group API handlers at every version they advertise: requests go
// through the generated codecs (so fields a version lacks get their wire
// defaults) and every response must encode at that version.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCode, settle, startHarness, subscription, track, type Harness } from './harness.js';
import type { ApiHandler, RequestContext } from '../../../broker/handlers/api-handler.js';
import type { OffsetCommitHandlerContext } from '../../../broker/group/handler-context.js';
import { apis, type ApiDescriptor } from '../../../broker/protocol/messages/index.js';
import { Reader, ZERO_UUID } from '../../../broker/protocol/reader.js';
import { Writer } from '../../../broker/protocol/writer.js';
import { silentLogger } from '../../../broker/common/logger.js';
import { handler as offsetCommit } from '../../../broker/handlers/08-offset-commit.js';
import { handler as offsetFetch } from '../../../broker/handlers/09-offset-fetch.js';
import { handler as findCoordinator } from '../../../broker/handlers/10-find-coordinator.js';
import { handler as joinGroup } from '../../../broker/handlers/11-join-group.js';
import { handler as heartbeat } from '../../../broker/handlers/12-heartbeat.js';
import { handler as leaveGroup } from '../../../broker/handlers/13-leave-group.js';
import { handler as syncGroup } from '../../../broker/handlers/14-sync-group.js';
import { handler as describeGroups } from '../../../broker/handlers/15-describe-groups.js';
import { handler as listGroups } from '../../../broker/handlers/16-list-groups.js';
import { handler as deleteGroups } from '../../../broker/handlers/42-delete-groups.js';
import { handler as offsetDelete } from '../../../broker/handlers/47-offset-delete.js';
import type { JoinGroupRequest, JoinGroupResponse } from '../../../broker/protocol/messages/join-group.js';
import type { OffsetCommitRequest } from '../../../broker/protocol/messages/offset-commit.js';
import type { OffsetFetchRequest } from '../../../broker/protocol/messages/offset-fetch.js';

const log = silentLogger();

function requestContext(apiKey: number, apiVersion: number): RequestContext {
  return {
    apiKey,
    apiVersion,
    correlationId: 1,
    clientId: 'test-client',
    connectionId: 1,
    clientHost: '::ffff:127.0.0.1',
    log,
    signal: new AbortController().signal,
  };
}

/** Topic 't' (3 partitions) has this id; no other topic exists. */
const T_ID = 'dGVzdC10b3BpYy1pZC0wMA';
const UNKNOWN_ID = 'bm8tc3VjaC10b3BpYy1pZA';

function broker(h: Harness): OffsetCommitHandlerContext {
  const t = { name: 't', topicId: T_ID, partitionCount: 3 };
  return {
    groups: h.coordinator,
    coordinatorNode: () => ({ nodeId: 7, host: 'localhost', port: 19092 }),
    topics: {
      partition: (topic: string, partition: number) => (topic === 't' && partition < 3 ? {} : undefined),
      store: { get: (name: string) => (name === 't' ? t : undefined), getById: (id: string) => (id === T_ID ? t : undefined) },
    },
  };
}

/** Encodes at `version` and decodes back: what a client of that version would send. */
function onWire<Req, Res>(d: ApiDescriptor<Req, Res>, version: number, req: Req): Req {
  const w = new Writer(256);
  d.encodeRequest(w, version, req);
  return d.decodeRequest(new Reader(w.toBuffer()), version);
}

function encodable<Req, Res>(d: ApiDescriptor<Req, Res>, version: number, res: Res): Res {
  const w = new Writer(256);
  d.encodeResponse(w, version, res);
  return d.decodeResponse(new Reader(w.toBuffer()), version);
}

async function call<Req, Res>(
  h: Harness,
  d: ApiDescriptor<Req, Res>,
  handler: ApiHandler<Req, Res, OffsetCommitHandlerContext> | ApiHandler<Req, Res, never>,
  version: number,
  req: Req,
): Promise<Res> {
  const ctx = requestContext(handler.apiKey, version);
  const res = await (handler as ApiHandler<Req, Res, OffsetCommitHandlerContext>).handle(broker(h), onWire(d, version, req), ctx);
  assert.ok(res !== null);
  return encodable(d, version, res);
}

function joinRequest(overrides: Partial<JoinGroupRequest> = {}): JoinGroupRequest {
  return {
    groupId: 'g',
    sessionTimeoutMs: 10_000,
    rebalanceTimeoutMs: 30_000,
    memberId: '',
    groupInstanceId: null,
    protocolType: 'consumer',
    protocols: [{ name: 'range', metadata: subscription(['t']) }],
    reason: null,
    ...overrides,
  };
}

// PROTOCOL-COMPAT.md's ranges, raised where Kafka 4.3 adds versions whose meaning is served
// (docs/compatibility.md): FindCoordinator 5-6, DescribeGroups 6.
test('every handler advertises the ranges of PROTOCOL-COMPAT.md and the 4.3 additions', () => {
  const ranges = [offsetCommit, offsetFetch, findCoordinator, joinGroup, heartbeat, leaveGroup, syncGroup, describeGroups, listGroups, deleteGroups, offsetDelete].map(
    (x) => [x.apiKey, x.minVersion, x.maxVersion],
  );
  assert.deepEqual(ranges, [
    [8, 2, 10],
    [9, 1, 10],
    [10, 0, 6],
    [11, 0, 9],
    [12, 0, 4],
    [13, 0, 5],
    [14, 0, 5],
    [15, 0, 6],
    [16, 0, 5],
    [42, 0, 2],
    [47, 0, 0],
  ]);
});

test('FindCoordinator names this broker for groups and transactional ids, per key from v4', async () => {
  const h = await startHarness();
  for (const v of [0, 1, 2, 3]) {
    const res = await call(h, apis.FindCoordinator, findCoordinator, v, { key: 'g', keyType: v >= 1 ? 1 : 0, coordinatorKeys: [] });
    assert.deepEqual([res.errorCode, res.nodeId, res.host, res.port], [0, 7, 'localhost', 19092], `v${v}`);
  }
  const batched = await call(h, apis.FindCoordinator, findCoordinator, 4, { key: '', keyType: 0, coordinatorKeys: ['a', 'b'] });
  assert.deepEqual(batched.coordinators.map((c) => [c.key, c.nodeId, c.errorCode]), [
    ['a', 7, 0],
    ['b', 7, 0],
  ]);
  const share = await call(h, apis.FindCoordinator, findCoordinator, 3, { key: 'g', keyType: 2, coordinatorKeys: [] });
  assert.equal(share.errorCode, ErrorCode.INVALID_REQUEST);
  // v6 (what Java 4.3 sends) batches as v4; its share key type is refused per key: no share groups here.
  const v6 = await call(h, apis.FindCoordinator, findCoordinator, 6, { key: '', keyType: 0, coordinatorKeys: ['a'] });
  assert.deepEqual(v6.coordinators.map((c) => [c.key, c.nodeId, c.errorCode]), [['a', 7, 0]]);
  const v6share = await call(h, apis.FindCoordinator, findCoordinator, 6, { key: '', keyType: 2, coordinatorKeys: ['g:t:0'] });
  assert.deepEqual(v6share.coordinators.map((c) => c.errorCode), [ErrorCode.INVALID_REQUEST]);
});

test('JoinGroup v0: no member id round, the session timeout stands in for the rebalance timeout, "" protocol on errors', async () => {
  const h = await startHarness();
  const pending = track(call(h, apis.JoinGroup, joinGroup, 0, joinRequest({ rebalanceTimeoutMs: 999_999 })));
  await h.advance(3_000);
  const res: JoinGroupResponse = pending.value;
  assert.equal(res.errorCode, ErrorCode.NONE);
  assert.equal(res.leader, res.memberId);
  assert.equal(res.protocolName, 'range');
  const described = h.coordinator.describeGroups(['g'])[0];
  assert.equal(described?.members[0]?.clientHost, '/127.0.0.1');
  assert.equal(described?.members[0]?.clientId, 'test-client');
  const bad = await call(h, apis.JoinGroup, joinGroup, 0, joinRequest({ groupId: '' }));
  assert.equal(bad.errorCode, ErrorCode.INVALID_GROUP_ID);
  assert.equal(bad.protocolName, '');
  const v7 = await call(h, apis.JoinGroup, joinGroup, 7, joinRequest({ groupId: '' }));
  assert.equal(v7.protocolName, null);
});

test('a classic consumer through the handlers: JoinGroup v9 handshake, SyncGroup v5, Heartbeat v4, OffsetCommit v9, OffsetFetch v8, LeaveGroup v5', async () => {
  const h = await startHarness();
  const first = await call(h, apis.JoinGroup, joinGroup, 9, joinRequest());
  assert.equal(first.errorCode, ErrorCode.MEMBER_ID_REQUIRED);
  const join = track(call(h, apis.JoinGroup, joinGroup, 9, joinRequest({ memberId: first.memberId })));
  await h.advance(3_000);
  const joined = join.value;
  assert.equal(joined.generationId, 1);
  assert.equal(joined.members.length, 1);
  const sync = await call(h, apis.SyncGroup, syncGroup, 5, {
    groupId: 'g',
    generationId: 1,
    memberId: joined.memberId,
    groupInstanceId: null,
    protocolType: 'consumer',
    protocolName: 'range',
    assignments: [{ memberId: joined.memberId, assignment: Buffer.from('A') }],
  });
  assert.deepEqual([sync.errorCode, sync.protocolType, sync.protocolName, sync.assignment.toString()], [0, 'consumer', 'range', 'A']);
  const hb = await call(h, apis.Heartbeat, heartbeat, 4, { groupId: 'g', generationId: 1, memberId: joined.memberId, groupInstanceId: null });
  assert.equal(hb.errorCode, ErrorCode.NONE);
  const commitReq: OffsetCommitRequest = {
    groupId: 'g',
    generationIdOrMemberEpoch: 1,
    memberId: joined.memberId,
    groupInstanceId: null,
    retentionTimeMs: -1n,
    topics: [
      {
        name: 't',
        topicId: ZERO_UUID,
        partitions: [
          { partitionIndex: 0, committedOffset: 15n, committedLeaderEpoch: 4, committedMetadata: 'md' },
          { partitionIndex: 9, committedOffset: 1n, committedLeaderEpoch: -1, committedMetadata: null },
        ],
      },
      { name: 'missing', topicId: ZERO_UUID, partitions: [{ partitionIndex: 0, committedOffset: 1n, committedLeaderEpoch: -1, committedMetadata: null }] },
    ],
  };
  const committed = await call(h, apis.OffsetCommit, offsetCommit, 9, commitReq);
  assert.deepEqual(committed.topics.map((t) => [t.name, t.partitions.map((p) => p.errorCode)]), [
    ['t', [ErrorCode.NONE, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]],
    ['missing', [ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]],
  ]);
  const fetched = await call(h, apis.OffsetFetch, offsetFetch, 8, {
    groupId: '',
    topics: [],
    requireStable: true,
    groups: [
      { groupId: 'g', memberId: null, memberEpoch: -1, topics: null },
      { groupId: 'unknown', memberId: null, memberEpoch: -1, topics: [{ name: 't', topicId: ZERO_UUID, partitionIndexes: [0] }] },
    ],
  });
  assert.deepEqual(
    fetched.groups.map((g) => [g.groupId, g.errorCode, g.topics.map((t) => t.partitions.map((p) => [p.committedOffset, p.committedLeaderEpoch, p.metadata]))]),
    [
      ['g', 0, [[[15n, 4, 'md']]]],
      ['unknown', 0, [[[-1n, -1, '']]]],
    ],
  );
  const leave = await call(h, apis.LeaveGroup, leaveGroup, 5, {
    groupId: 'g',
    memberId: '',
    members: [{ memberId: joined.memberId, groupInstanceId: null, reason: 'shutting down' }],
  });
  assert.deepEqual(leave.members.map((m) => [m.memberId, m.errorCode]), [[joined.memberId, 0]]);
  await settle();
  assert.equal(h.coordinator.groupState('g'), 'Empty');
});

test('older versions: SyncGroup v0, Heartbeat v0, LeaveGroup v0 single member with its error at the top', async () => {
  const h = await startHarness();
  const join = track(call(h, apis.JoinGroup, joinGroup, 2, joinRequest()));
  await h.advance(3_000);
  const memberId = join.value.memberId;
  const sync = await call(h, apis.SyncGroup, syncGroup, 0, {
    groupId: 'g',
    generationId: 1,
    memberId,
    groupInstanceId: null,
    protocolType: null,
    protocolName: null,
    assignments: [{ memberId, assignment: Buffer.from('A0') }],
  });
  assert.equal(sync.assignment.toString(), 'A0');
  assert.equal((await call(h, apis.Heartbeat, heartbeat, 0, { groupId: 'g', generationId: 1, memberId, groupInstanceId: null })).errorCode, 0);
  const unknown = await call(h, apis.LeaveGroup, leaveGroup, 0, { groupId: 'g', memberId: 'ghost', members: [] });
  assert.equal(unknown.errorCode, ErrorCode.UNKNOWN_MEMBER_ID);
  const ok = await call(h, apis.LeaveGroup, leaveGroup, 1, { groupId: 'g', memberId, members: [] });
  assert.equal(ok.errorCode, ErrorCode.NONE);
});

test('OffsetCommit v2 retention and OffsetFetch v1/v2/v7 shapes', async () => {
  const h = await startHarness({ config: { offsetsRetentionCheckIntervalMs: 1_000 } });
  const commitReq: OffsetCommitRequest = {
    groupId: 'simple',
    generationIdOrMemberEpoch: -1,
    memberId: '',
    groupInstanceId: null,
    retentionTimeMs: 5_000n,
    topics: [{ name: 't', topicId: ZERO_UUID, partitions: [{ partitionIndex: 1, committedOffset: 8n, committedLeaderEpoch: -1, committedMetadata: '' }] }],
  };
  assert.equal((await call(h, apis.OffsetCommit, offsetCommit, 2, commitReq)).topics[0]?.partitions[0]?.errorCode, 0);
  const fetchReq = (topics: OffsetFetchRequest['topics']): OffsetFetchRequest => ({ groupId: 'simple', topics, groups: [], requireStable: false });
  const v1 = await call(h, apis.OffsetFetch, offsetFetch, 1, fetchReq([{ name: 't', partitionIndexes: [1] }]));
  assert.equal(v1.topics[0]?.partitions[0]?.committedOffset, 8n);
  const v2all = await call(h, apis.OffsetFetch, offsetFetch, 2, fetchReq(null));
  assert.deepEqual(v2all.topics.map((t) => [t.name, t.partitions.map((p) => p.committedOffset)]), [['t', [8n]]]);
  await h.advance(6_000);
  const expired = await call(h, apis.OffsetFetch, offsetFetch, 7, fetchReq([{ name: 't', partitionIndexes: [1] }]));
  assert.equal(expired.topics[0]?.partitions[0]?.committedOffset, -1n, 'v2 retention time honoured');
  const invalid = await call(h, apis.OffsetFetch, offsetFetch, 3, { ...fetchReq(null), groupId: '' });
  assert.equal(invalid.errorCode, ErrorCode.INVALID_GROUP_ID);
  const invalidV1 = await call(h, apis.OffsetFetch, offsetFetch, 1, { ...fetchReq([{ name: 't', partitionIndexes: [0, 1] }]), groupId: '' });
  assert.deepEqual(invalidV1.topics[0]?.partitions.map((p) => p.errorCode), [ErrorCode.INVALID_GROUP_ID, ErrorCode.INVALID_GROUP_ID]);
});

test('OffsetCommit v10 / OffsetFetch v10 name topics by id; unknown ids are UNKNOWN_TOPIC_ID', async () => {
  const h = await startHarness();
  const partition = (partitionIndex: number, committedOffset: bigint) => ({ partitionIndex, committedOffset, committedLeaderEpoch: 2, committedMetadata: 'm' });
  const commit = await call(h, apis.OffsetCommit, offsetCommit, 10, {
    groupId: 'simple',
    generationIdOrMemberEpoch: -1,
    memberId: '',
    groupInstanceId: null,
    retentionTimeMs: -1n,
    topics: [
      { name: '', topicId: T_ID, partitions: [partition(0, 5n), partition(7, 1n)] },
      { name: '', topicId: UNKNOWN_ID, partitions: [partition(0, 1n), partition(1, 1n)] },
      { name: '', topicId: ZERO_UUID, partitions: [partition(0, 1n)] },
    ],
  });
  assert.deepEqual(
    commit.topics.map((t) => [t.topicId, t.partitions.map((p) => [p.partitionIndex, p.errorCode])]),
    [
      [T_ID, [[0, ErrorCode.NONE], [7, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]]],
      [UNKNOWN_ID, [[0, ErrorCode.UNKNOWN_TOPIC_ID], [1, ErrorCode.UNKNOWN_TOPIC_ID]]],
      [ZERO_UUID, [[0, ErrorCode.UNKNOWN_TOPIC_ID]]],
    ],
  );
  // The commit by id is the commit by name: v9 reads it back under 't'.
  const byName = await call(h, apis.OffsetFetch, offsetFetch, 9, { groupId: '', topics: [], requireStable: false, groups: [{ groupId: 'simple', memberId: null, memberEpoch: -1, topics: [{ name: 't', topicId: ZERO_UUID, partitionIndexes: [0] }] }] });
  assert.deepEqual(byName.groups[0]?.topics.map((t) => [t.name, t.partitions.map((p) => p.committedOffset)]), [['t', [5n]]]);

  const fetch = (topics: OffsetFetchRequest['groups'][number]['topics'], groupId = 'simple') =>
    call(h, apis.OffsetFetch, offsetFetch, 10, { groupId: '', topics: [], requireStable: false, groups: [{ groupId, memberId: null, memberEpoch: -1, topics }] });
  const some = await fetch([
    { name: '', topicId: T_ID, partitionIndexes: [0, 1] },
    { name: '', topicId: UNKNOWN_ID, partitionIndexes: [2] },
  ]);
  assert.equal(some.groups[0]?.errorCode, ErrorCode.NONE);
  assert.deepEqual(
    some.groups[0]?.topics.map((t) => [t.topicId, t.partitions.map((p) => [p.partitionIndex, p.committedOffset, p.committedLeaderEpoch, p.metadata, p.errorCode])]),
    [
      [T_ID, [[0, 5n, 2, 'm', ErrorCode.NONE], [1, -1n, -1, '', ErrorCode.NONE]]],
      [UNKNOWN_ID, [[2, -1n, -1, '', ErrorCode.UNKNOWN_TOPIC_ID]]],
    ],
  );
  const all = await fetch(null);
  assert.deepEqual(all.groups[0]?.topics.map((t) => [t.topicId, t.partitions.map((p) => p.committedOffset)]), [[T_ID, [5n]]]);
  // A group-level error is the whole answer: no per-topic UNKNOWN_TOPIC_ID beside it.
  const invalid = await fetch([{ name: '', topicId: UNKNOWN_ID, partitionIndexes: [0] }], '');
  assert.deepEqual([invalid.groups[0]?.errorCode, invalid.groups[0]?.topics.length], [ErrorCode.INVALID_GROUP_ID, 0]);
});

test('DescribeGroups, ListGroups, DeleteGroups and OffsetDelete at their versions', async () => {
  const h = await startHarness();
  const join = track(call(h, apis.JoinGroup, joinGroup, 5, joinRequest({ groupInstanceId: 'i-1' })));
  await h.advance(3_000);
  await call(h, apis.SyncGroup, syncGroup, 3, {
    groupId: 'g',
    generationId: 1,
    memberId: join.value.memberId,
    groupInstanceId: 'i-1',
    protocolType: null,
    protocolName: null,
    assignments: [],
  });
  await h.coordinator.commitOffsets({
    groupId: 'simple',
    generationId: -1,
    memberId: '',
    groupInstanceId: null,
    retentionTimeMs: -1,
    groupIdNotFoundSupported: true,
    topics: [{ name: 't', partitions: [{ partitionIndex: 0, committedOffset: 1n, committedLeaderEpoch: -1, committedMetadata: null }] }],
  });
  for (let v = 0; v <= 6; v++) {
    const res = await call(h, apis.DescribeGroups, describeGroups, v, { groups: ['g', 'nope'], includeAuthorizedOperations: true });
    assert.equal(res.groups[0]?.groupState, 'Stable');
    assert.equal(res.groups[0]?.errorCode, ErrorCode.NONE);
    assert.equal(res.groups[0]?.members[0]?.groupInstanceId, v >= 4 ? 'i-1' : null);
    assert.equal(res.groups[0]?.authorizedOperations, v >= 3 ? 3400 : -2147483648);
    assert.equal(res.groups[1]?.groupState, 'Dead');
    // KIP-1043: from v6 an unknown group is an error, before it is a Dead group.
    assert.equal(res.groups[1]?.errorCode, v >= 6 ? ErrorCode.GROUP_ID_NOT_FOUND : ErrorCode.NONE, `v${v}`);
    assert.equal(res.groups[1]?.errorMessage, v >= 6 ? 'Group nope not found.' : null, `v${v}`);
  }
  for (let v = 0; v <= 5; v++) {
    const res = await call(h, apis.ListGroups, listGroups, v, { statesFilter: ['empty'], typesFilter: ['classic'] });
    assert.deepEqual(res.groups.map((g) => g.groupId).sort(), v >= 4 ? ['simple'] : ['g', 'simple']);
  }
  const deleted = await call(h, apis.DeleteGroups, deleteGroups, 2, { groupsNames: ['simple', 'g', 'simple'] });
  assert.deepEqual(deleted.results.map((r) => [r.groupId, r.errorCode]), [
    ['simple', 0],
    ['g', ErrorCode.NON_EMPTY_GROUP],
  ]);
  const offsetDeleted = await call(h, apis.OffsetDelete, offsetDelete, 0, { groupId: 'g', topics: [{ name: 't', partitions: [{ partitionIndex: 0 }] }] });
  assert.deepEqual(offsetDeleted.topics[0]?.partitions.map((p) => p.errorCode), [ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC]);
});

test('error responses encode at every advertised version', async () => {
  const samples: [ApiDescriptor<unknown, unknown>, ApiHandler<unknown, unknown, never>, unknown][] = [
    [apis.OffsetCommit, offsetCommit, { groupId: 'g', generationIdOrMemberEpoch: -1, memberId: '', groupInstanceId: null, retentionTimeMs: -1n, topics: [{ name: 't', topicId: T_ID, partitions: [{ partitionIndex: 0, committedOffset: 1n, committedLeaderEpoch: -1, committedMetadata: null }] }] }],
    [apis.OffsetFetch, offsetFetch, { groupId: 'g', topics: [{ name: 't', partitionIndexes: [0] }], groups: [{ groupId: 'g', memberId: null, memberEpoch: -1, topics: [{ name: 't', topicId: T_ID, partitionIndexes: [0] }] }], requireStable: false }],
    [apis.FindCoordinator, findCoordinator, { key: 'g', keyType: 0, coordinatorKeys: ['g'] }],
    [apis.JoinGroup, joinGroup, joinRequest()],
    [apis.Heartbeat, heartbeat, { groupId: 'g', generationId: 1, memberId: 'm', groupInstanceId: null }],
    [apis.LeaveGroup, leaveGroup, { groupId: 'g', memberId: 'm', members: [] }],
    [apis.SyncGroup, syncGroup, { groupId: 'g', generationId: 1, memberId: 'm', groupInstanceId: null, protocolType: null, protocolName: null, assignments: [] }],
    [apis.DescribeGroups, describeGroups, { groups: ['g'], includeAuthorizedOperations: false }],
    [apis.ListGroups, listGroups, { statesFilter: [], typesFilter: [] }],
    [apis.DeleteGroups, deleteGroups, { groupsNames: ['g'] }],
    [apis.OffsetDelete, offsetDelete, { groupId: 'g', topics: [] }],
  ];
  for (const [d, hnd, req] of samples) {
    for (let v = hnd.minVersion; v <= hnd.maxVersion; v++) {
      const ctx = requestContext(hnd.apiKey, v);
      const res = hnd.errorResponse(onWire(d, v, req), ErrorCode.COORDINATOR_NOT_AVAILABLE, ctx);
      assert.doesNotThrow(() => encodable(d, v, res), `${d.name} v${v}`);
    }
  }
});
