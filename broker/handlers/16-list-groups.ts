// ListGroups (key 16), versions 0-5.
// Every classic and KIP-848 consumer group this coordinator holds. v4+:
// filter by state (case-insensitive; classic: Empty, PreparingRebalance,
// CompletingRebalance, Stable; consumer: Empty, Assigning, Reconciling,
// Stable); v5+: filter by type ("classic", "consumer"), and GroupType in the
// answer. Dead groups are never listed.
import type { ApiHandler } from './api-handler.js';
import type { GroupHandlerContext } from '../group/handler-context.js';
import type { ListGroupsRequest, ListGroupsResponse } from '../protocol/messages/list-groups.js';

export const handler: ApiHandler<ListGroupsRequest, ListGroupsResponse, GroupHandlerContext> = {
  apiKey: 16,
  minVersion: 0,
  maxVersion: 5,
  handle(broker, req, ctx) {
    const v = ctx.apiVersion;
    const result = broker.groups.listGroups(v >= 4 ? req.statesFilter : [], v >= 5 ? req.typesFilter : []);
    return { throttleTimeMs: 0, errorCode: result.errorCode, groups: result.groups };
  },
  errorResponse(_req, errorCode) {
    return { throttleTimeMs: 0, errorCode, groups: [] };
  },
};
