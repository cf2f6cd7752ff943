// DescribeGroups (key 15), versions 0-6.
// State, protocol and members of classic groups; member metadata and
// assignments only while the group is Stable (as Kafka). An unknown group is
// described as "Dead" without an error before v6, and from v6 (KIP-1043) with
// GROUP_ID_NOT_FOUND and a message.
// Authorized operations (v3+, when asked): all group operations, since there
// is no authorizer. A KIP-848 consumer group is described as Kafka does:
// protocol type "consumer", the assignor as protocol data, each member's
// subscription and assignment in the ConsumerProtocol encodings.
import type { ApiHandler } from './api-handler.js';
import type { GroupHandlerContext } from '../group/handler-context.js';
import { AUTHORIZED_OPERATIONS_OMITTED, GROUP_AUTHORIZED_OPERATIONS } from './authorized-operations.js';
import type { DescribeGroupsRequest, DescribeGroupsResponse } from '../protocol/messages/describe-groups.js';
import { ErrorCode } from '../protocol/errors.js';

const GROUP_ID_NOT_FOUND_VERSION = 6;

export const handler: ApiHandler<DescribeGroupsRequest, DescribeGroupsResponse, GroupHandlerContext> = {
  apiKey: 15,
  minVersion: 0,
  maxVersion: 6,
  handle(broker, req, ctx) {
    const authorizedOperations =
      ctx.apiVersion >= 3 && req.includeAuthorizedOperations ? GROUP_AUTHORIZED_OPERATIONS : AUTHORIZED_OPERATIONS_OMITTED;
    return {
      throttleTimeMs: 0,
      groups: broker.groups.describeGroups(req.groups).map((g) => {
        // The coordinator describes a group it does not hold as Dead, with no error and no members.
        const unknown = g.errorCode === ErrorCode.NONE && g.groupState === 'Dead' && g.members.length === 0;
        if (unknown && ctx.apiVersion >= GROUP_ID_NOT_FOUND_VERSION) {
          return { ...g, errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: `Group ${g.groupId} not found.`, authorizedOperations };
        }
        return { ...g, errorMessage: null, authorizedOperations };
      }),
    };
  },
  errorResponse(req, errorCode) {
    return {
      throttleTimeMs: 0,
      groups: req.groups.map((groupId) => ({
        errorCode,
        errorMessage: null,
        groupId,
        groupState: '',
        protocolType: '',
        protocolData: '',
        members: [],
        authorizedOperations: AUTHORIZED_OPERATIONS_OMITTED,
      })),
    };
  },
};
