// DeleteGroups (key 42), versions 0-2.
// Deletes Empty groups with their committed offsets (tombstones in
// __consumer_offsets). Per group: NON_EMPTY_GROUP while members are active,
// GROUP_ID_NOT_FOUND for unknown groups, INVALID_GROUP_ID for "".
import type { ApiHandler } from './api-handler.js';
import type { GroupHandlerContext } from '../group/handler-context.js';
import type { DeleteGroupsRequest, DeleteGroupsResponse } from '../protocol/messages/delete-groups.js';

export const handler: ApiHandler<DeleteGroupsRequest, DeleteGroupsResponse, GroupHandlerContext> = {
  apiKey: 42,
  minVersion: 0,
  maxVersion: 2,
  async handle(broker, req) {
    const unique = [...new Set(req.groupsNames)];
    return { throttleTimeMs: 0, results: await broker.groups.deleteGroups(unique) };
  },
  errorResponse(req, errorCode) {
    return { throttleTimeMs: 0, results: [...new Set(req.groupsNames)].map((groupId) => ({ groupId, errorCode })) };
  },
};
