// Heartbeat (key 12), versions 0-4.
// Keeps a classic group member's session alive. REBALANCE_IN_PROGRESS tells
// the member to rejoin; ILLEGAL_GENERATION / UNKNOWN_MEMBER_ID that it was
// dropped; FENCED_INSTANCE_ID (v3+, static members) that a newer instance
// with the same group.instance.id took over. A classic member of a KIP-848
// consumer group (online migration) is told REBALANCE_IN_PROGRESS whenever it
// must rejoin to move towards its target assignment.
import type { ApiHandler } from './api-handler.js';
import type { GroupHandlerContext } from '../group/handler-context.js';
import type { HeartbeatRequest, HeartbeatResponse } from '../protocol/messages/heartbeat.js';

export const handler: ApiHandler<HeartbeatRequest, HeartbeatResponse, GroupHandlerContext> = {
  apiKey: 12,
  minVersion: 0,
  maxVersion: 4,
  handle(broker, req, ctx) {
    const errorCode = broker.groups.heartbeat({
      groupId: req.groupId,
      generationId: req.generationId,
      memberId: req.memberId,
      groupInstanceId: ctx.apiVersion >= 3 ? req.groupInstanceId : null,
    });
    return { throttleTimeMs: 0, errorCode };
  },
  errorResponse(_req, errorCode) {
    return { throttleTimeMs: 0, errorCode };
  },
};
