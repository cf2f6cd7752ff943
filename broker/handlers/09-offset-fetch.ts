// OffsetFetch (key 9), versions 1-10.
// Committed offsets of a group (v8+: of several groups); topics null (v2+)
// means every committed offset of the group. A group or partition without a
// commit answers offset -1, leader epoch -1, metadata "" and no error (kcat,
// kafkajs and the CLI rely on it). Group-level errors (loading, invalid group
// id) are per partition in v1, top-level in v2-7 and per group in v8+.
// requireStable (v7+): a partition with an offset pending in an open
// transaction (TxnOffsetCommit) answers UNSTABLE_OFFSET_COMMIT, which clients
// retry. v9+: a KIP-848 consumer group checks the member id and epoch
// (UNKNOWN_MEMBER_ID, STALE_MEMBER_EPOCH); classic groups ignore them.
// v10 names topics by id (KIP-848), as Kafka's KafkaApis does: requested ids
// are resolved to names, an unknown (or zero) id answers UNKNOWN_TOPIC_ID on
// each of its partitions (offset -1) when the group itself has no error, and
// every answered topic carries the id its name has now (the zero id for a
// committed topic that no longer exists).
import type { ApiHandler } from './api-handler.js';
import { topicNameOfId, type OffsetCommitHandlerContext, type TopicIdStore } from '../group/handler-context.js';
import type { OffsetFetchGroupParams, OffsetFetchGroupResult } from '../group/types.js';
import type { OffsetFetchRequest, OffsetFetchResponse } from '../protocol/messages/offset-fetch.js';
import { ErrorCode } from '../protocol/errors.js';
import { ZERO_UUID } from '../protocol/reader.js';

/** The first version that names topics by id. */
const TOPIC_IDS_VERSION = 10;

function topicsOf(g: OffsetFetchGroupResult, store?: TopicIdStore): OffsetFetchResponse['groups'][number]['topics'] {
  return g.topics.map((t) => ({
    name: t.name,
    topicId: store?.get(t.name)?.topicId ?? ZERO_UUID,
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
function markUnstable(broker: OffsetCommitHandlerContext, results: OffsetFetchGroupResult[]): OffsetFetchGroupResult[] {
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

type RequestGroup = OffsetFetchRequest['groups'][number];
type ResponseTopic = OffsetFetchResponse['groups'][number]['topics'][number];

/** A v8+ group's topics by name; at v10 its ids resolved, the unknown ones apart. */
function resolveTopics(g: RequestGroup, v: number, store: TopicIdStore | undefined): { topics: OffsetFetchGroupParams['topics']; unknownIds: ResponseTopic[] } {
  if (g.topics === null || v < TOPIC_IDS_VERSION) return { topics: g.topics, unknownIds: [] };
  const topics: { name: string; partitionIndexes: number[] }[] = [];
  const unknownIds: ResponseTopic[] = [];
  for (const t of g.topics) {
    const name = topicNameOfId(store, t.topicId);
    if (name !== undefined) {
      topics.push({ name, partitionIndexes: t.partitionIndexes });
      continue;
    }
    unknownIds.push({
      name: '',
      topicId: t.topicId,
      partitions: t.partitionIndexes.map((partitionIndex) => ({ partitionIndex, committedOffset: -1n, committedLeaderEpoch: -1, metadata: '', errorCode: ErrorCode.UNKNOWN_TOPIC_ID })),
    });
  }
  return { topics, unknownIds };
}

export const handler: ApiHandler<OffsetFetchRequest, OffsetFetchResponse, OffsetCommitHandlerContext> = {
  apiKey: 9,
  minVersion: 1,
  maxVersion: 10,
  handle(broker, req, ctx) {
    const v = ctx.apiVersion;
    if (v >= 8) {
      const store = v >= TOPIC_IDS_VERSION ? broker.topics.store : undefined;
      const resolved = req.groups.map((g) => resolveTopics(g, v, store));
      const fetched = broker.groups.fetchOffsets(
        req.groups.map((g, i) => ({ groupId: g.groupId, topics: resolved[i]?.topics ?? g.topics, memberId: v >= 9 ? g.memberId : null, memberEpoch: v >= 9 ? g.memberEpoch : -1 })),
      );
      const results = req.requireStable ? markUnstable(broker, fetched) : fetched;
      return {
        throttleTimeMs: 0,
        errorCode: ErrorCode.NONE,
        topics: [],
        groups: results.map((g, i) => ({
          groupId: g.groupId,
          errorCode: g.errorCode,
          topics: g.errorCode === ErrorCode.NONE ? [...topicsOf(g, store), ...(resolved[i]?.unknownIds ?? [])] : topicsOf(g, store),
        })),
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
