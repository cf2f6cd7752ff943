// OffsetDelete (key 47), version 0.
// Deletes committed offsets of a group: any partition of an Empty group; for
// an active "consumer" group only topics it is not subscribed to
// (GROUP_SUBSCRIBED_TO_TOPIC otherwise); other active groups: NON_EMPTY_GROUP.
// Unknown group: GROUP_ID_NOT_FOUND.
import type { ApiHandler } from './api-handler.js';
import type { GroupHandlerContext } from '../group/handler-context.js';
import type { OffsetDeleteRequest, OffsetDeleteResponse } from '../protocol/messages/offset-delete.js';

export const handler: ApiHandler<OffsetDeleteRequest, OffsetDeleteResponse, GroupHandlerContext> = {
  apiKey: 47,
  minVersion: 0,
  maxVersion: 0,
  async handle(broker, req) {
    const result = await broker.groups.deleteOffsets({
      groupId: req.groupId,
      topics: req.topics.map((t) => ({ name: t.name, partitionIndexes: t.partitions.map((p) => p.partitionIndex) })),
    });
    return { throttleTimeMs: 0, errorCode: result.errorCode, topics: result.topics };
  },
  errorResponse(_req, errorCode) {
    return { throttleTimeMs: 0, errorCode, topics: [] };
  },
};
