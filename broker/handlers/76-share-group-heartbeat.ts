// ShareGroupHeartbeat (key 76), version 1 (KIP-932).
// Joins (MemberEpoch 0 with SubscribedTopicNames), heartbeats (the epoch last
// given) and leaves (-1) a share group; the answer carries the member epoch,
// the heartbeat interval (share.heartbeat.interval.ms) and the assignment when
// it changed (the simple assignor: every member gets partitions, which several
// members may share). Errors: INVALID_REQUEST (empty group or member id, no
// subscription on join), UNKNOWN_MEMBER_ID, FENCED_MEMBER_EPOCH,
// GROUP_MAX_SIZE_REACHED, GROUP_ID_NOT_FOUND for an id a classic or consumer
// group uses, NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS when the group's
// __consumer_offsets partition is not served (or not loaded yet) here.
// broker/share/share-group-coordinator.ts holds the semantics.
// Not implemented: authorization. RackId is kept; as in Kafka 4.3.1 the
// simple assignor does not use racks (KAFKA-16694).
import type { ApiHandler } from './api-handler.js';
import type { BrokerContext } from '../broker-context.js';
import type { ShareGroupHeartbeatRequest, ShareGroupHeartbeatResponse } from '../protocol/messages/share-group-heartbeat.js';
import { kafkaClientHost } from '../group/handler-context.js';
import { KafkaError } from '../protocol/errors.js';
import { SHARE_GROUPS_OFF } from './share-answers.js';

function failed(errorCode: number, errorMessage: string | null): ShareGroupHeartbeatResponse {
  return { throttleTimeMs: 0, errorCode, errorMessage, memberId: null, memberEpoch: 0, heartbeatIntervalMs: 0, assignment: null };
}

export const handler: ApiHandler<ShareGroupHeartbeatRequest, ShareGroupHeartbeatResponse, BrokerContext> = {
  apiKey: 76,
  minVersion: 1,
  maxVersion: 1,
  handle(broker, req, ctx) {
    const share = broker.shareGroups;
    if (share === undefined || share === null) return failed(SHARE_GROUPS_OFF.errorCode, SHARE_GROUPS_OFF.errorMessage);
    try {
      const r = share.coordinator.heartbeat({
        groupId: req.groupId,
        memberId: req.memberId,
        memberEpoch: req.memberEpoch,
        rackId: req.rackId,
        subscribedTopicNames: req.subscribedTopicNames,
        clientId: ctx.clientId ?? '',
        clientHost: kafkaClientHost(ctx.clientHost),
      });
      return {
        throttleTimeMs: 0,
        errorCode: 0,
        errorMessage: null,
        memberId: r.memberId,
        memberEpoch: r.memberEpoch,
        heartbeatIntervalMs: r.heartbeatIntervalMs,
        assignment: r.assignment === null ? null : { topicPartitions: r.assignment },
      };
    } catch (err) {
      if (err instanceof KafkaError) return failed(err.code, err.message);
      throw err;
    }
  },
  errorResponse(_req, errorCode) {
    return failed(errorCode, null);
  },
};
