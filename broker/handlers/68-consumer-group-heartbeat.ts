// ConsumerGroupHeartbeat (key 68), versions 0-1 (KIP-848).
// Joins (member epoch 0), heartbeats and leaves (-1; -2 for a static member
// that comes back) a consumer group; the answer carries the member's epoch,
// the heartbeat interval (group.consumer.heartbeat.interval.ms) and, when it
// changed, the partitions the member may own. Targets come from the
// server-side assignor (ServerAssignor, else group.consumer.assignors'
// first); v1 adds SubscribedTopicRegex (see broker/group/consumer/regex.ts
// for how RE2/J and JavaScript patterns differ) and requires client-chosen
// member ids. Errors are Kafka's: INVALID_REQUEST, UNSUPPORTED_ASSIGNOR,
// INVALID_REGULAR_EXPRESSION, FENCED_MEMBER_EPOCH, UNKNOWN_MEMBER_ID,
// UNRELEASED_INSTANCE_ID, FENCED_INSTANCE_ID, GROUP_ID_NOT_FOUND (a classic
// group with members that may not be upgraded: group.consumer.migration.policy,
// a protocol type other than "consumer", or a rejoin with an epoch > 0),
// GROUP_MAX_SIZE_REACHED, COORDINATOR_LOAD_IN_PROGRESS. A member joining a
// classic group with members upgrades it online (broker/group/migration.ts).
import type { ApiHandler } from './api-handler.js';
import type { GroupHandlerContext } from '../group/handler-context.js';
import type { ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse } from '../protocol/messages/consumer-group-heartbeat.js';

export const handler: ApiHandler<ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse, GroupHandlerContext> = {
  apiKey: 68,
  minVersion: 0,
  maxVersion: 1,
  async handle(broker, req, ctx) {
    const r = await broker.groups.consumerGroupHeartbeat({
      groupId: req.groupId,
      memberId: req.memberId,
      memberEpoch: req.memberEpoch,
      instanceId: req.instanceId,
      rackId: req.rackId,
      rebalanceTimeoutMs: req.rebalanceTimeoutMs,
      subscribedTopicNames: req.subscribedTopicNames,
      subscribedTopicRegex: ctx.apiVersion >= 1 ? req.subscribedTopicRegex : null,
      serverAssignor: req.serverAssignor,
      topicPartitions: req.topicPartitions,
      clientId: ctx.clientId ?? '',
      clientHost: ctx.clientHost,
      apiVersion: ctx.apiVersion,
    });
    return {
      throttleTimeMs: 0,
      errorCode: r.errorCode,
      errorMessage: r.errorMessage,
      memberId: r.memberId,
      memberEpoch: r.memberEpoch,
      heartbeatIntervalMs: r.heartbeatIntervalMs,
      assignment: r.assignment === null ? null : { topicPartitions: r.assignment.map((tp) => ({ topicId: tp.topicId, partitions: [...tp.partitions] })) },
    };
  },
  errorResponse(_req, errorCode) {
    return { throttleTimeMs: 0, errorCode, errorMessage: null, memberId: null, memberEpoch: 0, heartbeatIntervalMs: 0, assignment: null };
  },
};
