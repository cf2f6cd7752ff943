// ShareGroupDescribe (key 77), version 1 (KIP-932).
// Per group id: state (Empty, Stable), group and assignment epochs, the
// assignor ("simple") and each member with its subscription and assignment
// (topic ids with their names). An id no share group has: GROUP_ID_NOT_FOUND
// (also for a classic or consumer group of that id, as Kafka answers);
// NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS when its __consumer_offsets
// partition is not served (or not loaded yet) here.
// Not implemented: authorization (authorizedOperations is the "not
// requested" value unless asked, then every group operation).
import type { ApiHandler } from './api-handler.js';
import type { BrokerContext } from '../broker-context.js';
import type { ShareGroupDescribeRequest, ShareGroupDescribeResponse, ShareGroupDescribeResponseDescribedGroup } from '../protocol/messages/share-group-describe.js';
import { ErrorCode, KafkaError } from '../protocol/errors.js';
import { SHARE_GROUPS_OFF } from './share-answers.js';

const NOT_REQUESTED = -2147483648;
// READ, DELETE, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS (Kafka's group operations as a bitfield).
const GROUP_OPERATIONS = (1 << 3) | (1 << 6) | (1 << 8) | (1 << 10) | (1 << 11);

function missing(groupId: string, errorCode: number, errorMessage: string | null): ShareGroupDescribeResponseDescribedGroup {
  return { errorCode, errorMessage, groupId, groupState: 'Dead', groupEpoch: -1, assignmentEpoch: -1, assignorName: '', members: [], authorizedOperations: NOT_REQUESTED };
}

export const handler: ApiHandler<ShareGroupDescribeRequest, ShareGroupDescribeResponse, BrokerContext> = {
  apiKey: 77,
  minVersion: 1,
  maxVersion: 1,
  handle(broker, req) {
    const share = broker.shareGroups;
    const groups = req.groupIds.map((groupId): ShareGroupDescribeResponseDescribedGroup => {
      if (share === undefined || share === null) return missing(groupId, SHARE_GROUPS_OFF.errorCode, SHARE_GROUPS_OFF.errorMessage);
      try {
        share.coordinator.requireAvailable(groupId);
      } catch (err) {
        if (err instanceof KafkaError) return missing(groupId, err.code, err.message);
        throw err;
      }
      const g = share.coordinator.group(groupId);
      if (g === undefined) return missing(groupId, ErrorCode.GROUP_ID_NOT_FOUND, `Group ${groupId} not found.`);
      return {
        errorCode: 0,
        errorMessage: null,
        groupId,
        groupState: g.state,
        groupEpoch: g.groupEpoch,
        assignmentEpoch: g.assignmentEpoch,
        assignorName: 'simple',
        members: [...g.members.values()].map((m) => ({
          memberId: m.memberId,
          rackId: m.rackId,
          memberEpoch: m.memberEpoch,
          clientId: m.clientId,
          clientHost: m.clientHost,
          subscribedTopicNames: [...m.subscribedTopicNames],
          assignment: {
            topicPartitions: [...m.assignment].map(([topicId, partitions]) => ({ topicId, topicName: broker.topics.store.getById(topicId)?.name ?? '', partitions: [...partitions] })),
          },
        })),
        authorizedOperations: req.includeAuthorizedOperations ? GROUP_OPERATIONS : NOT_REQUESTED,
      };
    });
    return { throttleTimeMs: 0, groups };
  },
  errorResponse(req, errorCode) {
    return { throttleTimeMs: 0, groups: req.groupIds.map((g) => missing(g, errorCode, null)) };
  },
};
