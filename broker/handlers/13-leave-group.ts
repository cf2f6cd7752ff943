// LeaveGroup (key 13), versions 0-5.
// v0-2 remove one member (by member id) and answer a single error code (the
// group's error, else the member's, as Kafka does); v3+ remove a batch, each
// by member id or, with an empty member id, by group.instance.id (admin
// removal of static members), and answer per member. Leaving triggers a
// rebalance of the rest; the last member leaving empties the group. In a
// KIP-848 consumer group only classic members may leave this way (the others
// get UNKNOWN_MEMBER_ID); their partitions go to the server-side assignor.
import type { ApiHandler } from './api-handler.js';
import type { GroupHandlerContext } from '../group/handler-context.js';
import type { LeaveGroupRequest, LeaveGroupResponse } from '../protocol/messages/leave-group.js';
import { ErrorCode } from '../protocol/errors.js';

export const handler: ApiHandler<LeaveGroupRequest, LeaveGroupResponse, GroupHandlerContext> = {
  apiKey: 13,
  minVersion: 0,
  maxVersion: 5,
  async handle(broker, req, ctx) {
    const v = ctx.apiVersion;
    const leaving =
      v >= 3
        ? req.members.map((m) => ({ memberId: m.memberId, groupInstanceId: m.groupInstanceId, reason: v >= 5 ? m.reason : null }))
        : [{ memberId: req.memberId, groupInstanceId: null }];
    const result = await broker.groups.leaveGroup(req.groupId, leaving);
    if (v >= 3) return { throttleTimeMs: 0, errorCode: result.errorCode, members: result.members };
    const memberError = result.members.find((m) => m.errorCode !== ErrorCode.NONE)?.errorCode ?? ErrorCode.NONE;
    return {
      throttleTimeMs: 0,
      errorCode: result.errorCode !== ErrorCode.NONE ? result.errorCode : memberError,
      members: [],
    };
  },
  errorResponse(_req, errorCode) {
    return { throttleTimeMs: 0, errorCode, members: [] };
  },
};
