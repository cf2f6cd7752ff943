// JoinGroup (key 11), versions 0-9.
// Classic group membership through GroupCoordinator.joinGroup: the answer
// waits until the join phase completes (all members rejoined, the rebalance
// timeout, or group.initial.rebalance.delay.ms for a new group). v4+: a member
// without an id first gets MEMBER_ID_REQUIRED and its id (KIP-394); v5+:
// static membership (group.instance.id); v0 has no rebalance timeout (the
// session timeout stands in, as in Kafka); below v7 a null protocol name is
// sent as ""; v9+: a rejoining static leader may be told to skip assignment.
// The member's client host is reported as Kafka does ("/127.0.0.1").
// A join to a KIP-848 consumer group with members is answered by the consumer
// group at once, from the server-side assignment (online migration:
// broker/group/consumer/classic-members.ts); to an empty one, it turns the
// group id back into a classic group.
import type { ApiHandler } from './api-handler.js';
import { kafkaClientHost, type GroupHandlerContext } from '../group/handler-context.js';
import type { JoinGroupResult } from '../group/types.js';
import type { JoinGroupRequest, JoinGroupResponse } from '../protocol/messages/join-group.js';

function toResponse(r: JoinGroupResult, version: number): JoinGroupResponse {
  return {
    throttleTimeMs: 0,
    errorCode: r.errorCode,
    generationId: r.generationId,
    protocolType: r.protocolType,
    protocolName: version >= 7 ? r.protocolName : (r.protocolName ?? ''),
    leader: r.leader,
    skipAssignment: r.skipAssignment,
    memberId: r.memberId,
    members: r.members.map((m) => ({ memberId: m.memberId, groupInstanceId: m.groupInstanceId, metadata: m.metadata })),
  };
}

export const handler: ApiHandler<JoinGroupRequest, JoinGroupResponse, GroupHandlerContext> = {
  apiKey: 11,
  minVersion: 0,
  maxVersion: 9,
  async handle(broker, req, ctx) {
    const v = ctx.apiVersion;
    const result = await broker.groups.joinGroup({
      groupId: req.groupId,
      memberId: req.memberId,
      groupInstanceId: v >= 5 ? req.groupInstanceId : null,
      protocolType: req.protocolType,
      // Copies: the metadata outlives the request frame.
      protocols: req.protocols.map((p) => ({ name: p.name, metadata: Buffer.from(p.metadata) })),
      sessionTimeoutMs: req.sessionTimeoutMs,
      rebalanceTimeoutMs: v >= 1 ? req.rebalanceTimeoutMs : req.sessionTimeoutMs,
      clientId: ctx.clientId ?? '',
      clientHost: kafkaClientHost(ctx.clientHost),
      requireKnownMemberId: v >= 4,
      supportsSkipAssignment: v >= 9,
      reason: v >= 8 ? req.reason : null,
    });
    return toResponse(result, v);
  },
  errorResponse(_req, errorCode, ctx) {
    return toResponse(
      {
        errorCode,
        generationId: -1,
        protocolType: null,
        protocolName: null,
        leader: '',
        skipAssignment: false,
        memberId: '',
        members: [],
      },
      ctx.apiVersion,
    );
  },
};
