// OffsetFetch (key 9), versions 1-9.
// Committed offsets of a group (v8+: of several groups); topics null (v2+)
// means every committed offset of the group. A group or partition without a
// commit answers offset -1, leader epoch -1, metadata "" and no error (kcat,
// kafkajs and the CLI rely on it). Group-level errors (loading, invalid group
// id) are per partition in v1, top-level in v2-7 and per group in v8+.
// requireStable (v7+): a partition with an offset pending in an open
// transaction (TxnOffsetCommit) answers UNSTABLE_OFFSET_COMMIT, which clients
// retry. v9+: a KIP-848 consumer group checks the member id and epoch
// (UNKNOWN_MEMBER_ID, STALE_MEMBER_EPOCH); classic groups ignore them.
import type { ApiHandler } from './api-handler.js';
import type { GroupHandlerContext } from '../group/handler-context.js';
import type { OffsetFetchGroupResult } from '../group/types.js';
import type { OffsetFetchRequest, OffsetFetchResponse } from '../protocol/messages/offset-fetch.js';
import { ErrorCode } from '../protocol/errors.js';
import { ZERO_UUID } from '../protocol/reader.js';

function topicsOf(g: OffsetFetchGroupResult): OffsetFetchResponse['groups'][number]['topics'] {
  return g.topics.map((t) => ({
    name: t.name,
    topicId: ZERO_UUID,
    partitions: t.partitions.map((p) => ({
      partitionIndex: p.partitionIndex,
      committedOffset: p.committedOffset,
      committedLeaderEpoch: p.committedLeaderEpoch,
      metadata: p.metadata,
      errorCode: p.errorCode,
    })),
  }));
}

/** A v1-7 answer: the group's error goes on every requested partition (v1) or at the top (v2-7). */
function singleGroupResponse(req: OffsetFetchRequest, g: OffsetFetchGroupResult, version: number): OffsetFetchResponse {
  const base = { throttleTimeMs: 0, groups: [] };
  if (g.errorCode === ErrorCode.NONE) return { ...base, errorCode: ErrorCode.NONE, topics: topicsOf(g) };
  if (version >= 2) return { ...base, errorCode: g.errorCode, topics: [] };
  return {
    ...base,
    errorCode: ErrorCode.NONE,
    topics: (req.topics ?? []).map((t) => ({
      name: t.name,
      topicId: ZERO_UUID,
      partitions: t.partitionIndexes.map((partitionIndex) => ({
        partitionIndex,
        committedOffset: -1n,
        committedLeaderEpoch: -1,
        metadata: '',
        errorCode: g.errorCode,
      })),
    })),
  };
}

/** requireStable: partitions whose offset an open transaction holds get UNSTABLE_OFFSET_COMMIT. */
function markUnstable(broker: GroupHandlerContext, results: OffsetFetchGroupResult[]): OffsetFetchGroupResult[] {
  return results.map((g) => ({
    ...g,
    topics: g.topics.map((t) => ({
      ...t,
      partitions: t.partitions.map((p) =>
        p.errorCode === ErrorCode.NONE && broker.groups.hasPendingTxnOffset(g.groupId, t.name, p.partitionIndex)
          ? { ...p, committedOffset: -1n, committedLeaderEpoch: -1, errorCode: ErrorCode.UNSTABLE_OFFSET_COMMIT }
          : p,
      ),
    })),
  }));
}

export const handler: ApiHandler<OffsetFetchRequest, OffsetFetchResponse, GroupHandlerContext> = {
  apiKey: 9,
  minVersion: 1,
  maxVersion: 9,
  handle(broker, req, ctx) {
    const v = ctx.apiVersion;
    if (v >= 8) {
      const fetched = broker.groups.fetchOffsets(req.groups.map((g) => ({ groupId: g.groupId, topics: g.topics, memberId: v >= 9 ? g.memberId : null, memberEpoch: v >= 9 ? g.memberEpoch : -1 })));
      const results = req.requireStable ? markUnstable(broker, fetched) : fetched;
      return {
        throttleTimeMs: 0,
        errorCode: ErrorCode.NONE,
        topics: [],
        groups: results.map((g) => ({ groupId: g.groupId, errorCode: g.errorCode, topics: topicsOf(g) })),
      };
    }
    const fetched = broker.groups.fetchOffsets([{ groupId: req.groupId, topics: v >= 2 ? req.topics : (req.topics ?? []) }]);
    const [result] = v >= 7 && req.requireStable ? markUnstable(broker, fetched) : fetched;
    if (result === undefined) throw new Error('fetchOffsets answered no group');
    return singleGroupResponse(req, result, v);
  },
  errorResponse(req, errorCode, ctx) {
    if (ctx.apiVersion >= 8) {
      return {
        throttleTimeMs: 0,
        errorCode: ErrorCode.NONE,
        topics: [],
        groups: req.groups.map((g) => ({ groupId: g.groupId, errorCode, topics: [] })),
      };
    }
    return singleGroupResponse(req, { groupId: req.groupId, errorCode, topics: [] }, ctx.apiVersion);
  },
};
