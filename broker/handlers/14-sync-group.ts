// SyncGroup (key 14), versions 0-5.
// The leader sends the assignment it computed; every member's answer waits
// until it is written to __consumer_offsets and then carries that member's
// opaque assignment bytes. v3+: group.instance.id is checked (FENCED_INSTANCE_ID);
// v5+: protocol type and name are checked against the group's
// (INCONSISTENT_GROUP_PROTOCOL) and echoed back. A classic member of a KIP-848
// consumer group gets its server-side assignment at once, as a
// ConsumerProtocol Assignment (the leader's assignments are ignored).
import type { ApiHandler } from './api-handler.js';
import type { GroupHandlerContext } from '../group/handler-context.js';
import type { SyncGroupRequest, SyncGroupResponse } from '../protocol/messages/sync-group.js';

export const handler: ApiHandler<SyncGroupRequest, SyncGroupResponse, GroupHandlerContext> = {
  apiKey: 14,
  minVersion: 0,
  maxVersion: 5,
  async handle(broker, req, ctx) {
    const v = ctx.apiVersion;
    const result = await broker.groups.syncGroup({
      groupId: req.groupId,
      generationId: req.generationId,
      memberId: req.memberId,
      groupInstanceId: v >= 3 ? req.groupInstanceId : null,
      protocolType: v >= 5 ? req.protocolType : null,
      protocolName: v >= 5 ? req.protocolName : null,
      // Copies: assignments outlive the request frame.
      assignments: req.assignments.map((a) => ({ memberId: a.memberId, assignment: Buffer.from(a.assignment) })),
    });
    return { throttleTimeMs: 0, ...result };
  },
  errorResponse(_req, errorCode) {
    return { throttleTimeMs: 0, errorCode, protocolType: null, protocolName: null, assignment: Buffer.alloc(0) };
  },
};
