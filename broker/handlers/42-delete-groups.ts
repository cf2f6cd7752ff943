// DeleteGroups (key 42), versions 0-2.
// Deletes Empty groups with their committed offsets (tombstones in
// __consumer_offsets). Per group: NON_EMPTY_GROUP while members are active,
// GROUP_ID_NOT_FOUND for unknown groups, INVALID_GROUP_ID for "". Share
// groups are deleted by broker/share/ (their share-partition state too).
import type { ApiHandler } from './api-handler.js';
import type { GroupHandlerContext } from '../group/handler-context.js';
import type { ShareGroups } from '../share/share-groups.js';
import type { DeleteGroupsRequest, DeleteGroupsResponse } from '../protocol/messages/delete-groups.js';

export const handler: ApiHandler<DeleteGroupsRequest, DeleteGroupsResponse, GroupHandlerContext & { readonly shareGroups?: ShareGroups | null }> = {
  apiKey: 42,
  minVersion: 0,
  maxVersion: 2,
  async handle(broker, req) {
    const unique = [...new Set(req.groupsNames)];
    const share = broker.shareGroups?.admin;
    const shareIds = share === undefined ? [] : unique.filter((g) => share.isShareGroup(g));
    const classic = await broker.groups.deleteGroups(unique.filter((g) => !shareIds.includes(g)));
    const shared = await Promise.all(shareIds.map(async (groupId) => ({ groupId, errorCode: await share!.deleteGroup(groupId) })));
    return { throttleTimeMs: 0, results: unique.map((g) => classic.find((r) => r.groupId === g) ?? shared.find((r) => r.groupId === g)!) };
  },
  errorResponse(req, errorCode) {
    return { throttleTimeMs: 0, results: [...new Set(req.groupsNames)].map((groupId) => ({ groupId, errorCode })) };
  },
};
