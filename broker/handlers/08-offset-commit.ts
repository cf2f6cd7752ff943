// OffsetCommit (key 8), versions 2-10.
// Commits are validated against the group (ILLEGAL_GENERATION,
// UNKNOWN_MEMBER_ID, REBALANCE_IN_PROGRESS, FENCED_INSTANCE_ID v7+) and
// acknowledged once written to __consumer_offsets. Generation -1 with an
// empty member id (kcat, admin tools, assign()) is accepted on Empty groups
// and creates a "simple" group when there is none. Partitions that do not
// exist get UNKNOWN_TOPIC_OR_PARTITION. v2-4 retention times expire offsets
// at commit time + retention; later versions use offsets.retention.minutes.
// v9+: a commit with a generation to an unknown group is GROUP_ID_NOT_FOUND
// (ILLEGAL_GENERATION before). Metadata longer than offset.metadata.max.bytes
// gets OFFSET_METADATA_TOO_LARGE. A KIP-848 consumer group checks the member
// id and epoch instead (UNKNOWN_MEMBER_ID, STALE_MEMBER_EPOCH; its members
// must use v9+, else UNSUPPORTED_VERSION). v10 names topics by id (KIP-848):
// an id this broker does not know (or the zero id) answers UNKNOWN_TOPIC_ID
// for all its partitions, and the response echoes the ids, as Kafka's does.
import type { ApiHandler } from './api-handler.js';
import { topicNameOfId, type OffsetCommitHandlerContext } from '../group/handler-context.js';
import type { OffsetCommitPartitionParams } from '../group/types.js';
import type { OffsetCommitRequest, OffsetCommitResponse } from '../protocol/messages/offset-commit.js';
import { ErrorCode } from '../protocol/errors.js';

const key = (topic: string, partition: number): string => `${topic}\u0000${partition}`;

/** The first version that names topics by id. */
const TOPIC_IDS_VERSION = 10;

export const handler: ApiHandler<OffsetCommitRequest, OffsetCommitResponse, OffsetCommitHandlerContext> = {
  apiKey: 8,
  minVersion: 2,
  maxVersion: 10,
  async handle(broker, req, ctx) {
    const v = ctx.apiVersion;
    const byId = v >= TOPIC_IDS_VERSION;
    const names = req.topics.map((t) => (byId ? topicNameOfId(broker.topics.store, t.topicId) : t.name));
    const errors = new Map<string, number>();
    const known: { name: string; partitions: OffsetCommitPartitionParams[] }[] = [];
    for (const [i, t] of req.topics.entries()) {
      const name = names[i];
      if (name === undefined) continue;
      const partitions: OffsetCommitPartitionParams[] = [];
      for (const p of t.partitions) {
        const stored = broker.topics.store?.get(name);
        const exists = stored !== undefined ? p.partitionIndex >= 0 && p.partitionIndex < stored.partitionCount : broker.topics.partition(name, p.partitionIndex) !== undefined;
        if (!exists) {
          errors.set(key(name, p.partitionIndex), ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
          continue;
        }
        partitions.push({
          partitionIndex: p.partitionIndex,
          committedOffset: p.committedOffset,
          committedLeaderEpoch: v >= 6 ? p.committedLeaderEpoch : -1,
          committedMetadata: p.committedMetadata,
        });
      }
      if (partitions.length > 0) known.push({ name, partitions });
    }
    if (known.length > 0) {
      const result = await broker.groups.commitOffsets({
        groupId: req.groupId,
        generationId: req.generationIdOrMemberEpoch,
        memberId: req.memberId,
        groupInstanceId: v >= 7 ? req.groupInstanceId : null,
        retentionTimeMs: v <= 4 ? Number(req.retentionTimeMs) : -1,
        topics: known,
        groupIdNotFoundSupported: v >= 9,
        apiVersion: v,
      });
      for (const t of result.topics) {
        for (const p of t.partitions) errors.set(key(t.name, p.partitionIndex), p.errorCode);
      }
    }
    return {
      throttleTimeMs: 0,
      topics: req.topics.map((t, i) => {
        const name = names[i];
        return {
          name: t.name,
          topicId: t.topicId,
          partitions: t.partitions.map((p) => ({
            partitionIndex: p.partitionIndex,
            errorCode: name === undefined ? ErrorCode.UNKNOWN_TOPIC_ID : (errors.get(key(name, p.partitionIndex)) ?? ErrorCode.UNKNOWN_SERVER_ERROR),
          })),
        };
      }),
    };
  },
  errorResponse(req, errorCode) {
    return {
      throttleTimeMs: 0,
      topics: req.topics.map((t) => ({
        name: t.name,
        topicId: t.topicId,
        partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode })),
      })),
    };
  },
};
