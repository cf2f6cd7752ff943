// ConsumerGroupDescribe (key 69), versions 0-1 (KIP-848).
// Each consumer group's state (Empty, Assigning, Reconciling, Stable), group
// and assignment epochs, assignor, and members with their epochs,
// subscriptions, current and target assignments. An unknown or classic group
// answers GROUP_ID_NOT_FOUND (the admin client then uses DescribeGroups).
// Authorized operations (when asked): all group operations, since there is
// no authorizer. v1's member type is 0 for a classic-protocol member (one
// that joined through JoinGroup during an online migration), 1 for a
// consumer-protocol member.
import type { ApiHandler } from './api-handler.js';
import type { GroupHandlerContext } from '../group/handler-context.js';
import { AUTHORIZED_OPERATIONS_OMITTED, GROUP_AUTHORIZED_OPERATIONS } from './authorized-operations.js';
import type { ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse } from '../protocol/messages/consumer-group-describe.js';

export const handler: ApiHandler<ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse, GroupHandlerContext> = {
  apiKey: 69,
  minVersion: 0,
  maxVersion: 1,
  handle(broker, req) {
    const authorizedOperations = req.includeAuthorizedOperations ? GROUP_AUTHORIZED_OPERATIONS : AUTHORIZED_OPERATIONS_OMITTED;
    return {
      throttleTimeMs: 0,
      groups: broker.groups.consumerGroupDescribe(req.groupIds).map((g) => ({
        errorCode: g.errorCode,
        errorMessage: g.errorMessage,
        groupId: g.groupId,
        groupState: g.groupState,
        groupEpoch: g.groupEpoch,
        assignmentEpoch: g.assignmentEpoch,
        assignorName: g.assignorName,
        authorizedOperations,
        members: g.members.map((m) => ({
          memberId: m.memberId,
          instanceId: m.instanceId,
          rackId: m.rackId,
          memberEpoch: m.memberEpoch,
          clientId: m.clientId,
          clientHost: m.clientHost,
          subscribedTopicNames: m.subscribedTopicNames,
          subscribedTopicRegex: m.subscribedTopicRegex,
          assignment: { topicPartitions: m.assignment.map((t) => ({ ...t })) },
          targetAssignment: { topicPartitions: m.targetAssignment.map((t) => ({ ...t })) },
          memberType: m.memberType,
        })),
      })),
    };
  },
  errorResponse(req, errorCode) {
    return {
      throttleTimeMs: 0,
      groups: req.groupIds.map((groupId) => ({
        errorCode,
        errorMessage: null,
        groupId,
        groupState: '',
        groupEpoch: 0,
        assignmentEpoch: 0,
        assignorName: '',
        members: [],
        authorizedOperations: AUTHORIZED_OPERATIONS_OMITTED,
      })),
    };
  },
};
