// AlterShareGroupOffsets (key 91), version 0 (KIP-932).
// Sets the start offset of share-partitions of a share group with no members
// (kafka-share-groups.sh --reset-offsets); the group is created if it does
// not exist. As Kafka's: the partitions are recorded initializing, the share
// coordinator initialises their state (InitializeShareGroupState at the group
// epoch and the new start, no in-flight records), then they are recorded
// initialized. A start below the log start moves up to it. Errors:
// NON_EMPTY_GROUP (members remain), GROUP_ID_NOT_FOUND (a classic or consumer
// group has the id), NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS, per
// partition UNKNOWN_TOPIC_OR_PARTITION or the share coordinator's error.
import type { ApiHandler } from './api-handler.js';
import type { BrokerContext } from '../broker-context.js';
import type { AlterShareGroupOffsetsRequest, AlterShareGroupOffsetsResponse } from '../protocol/messages/alter-share-group-offsets.js';
import { toErrorPair } from './admin-errors.js';
import { SHARE_GROUPS_OFF } from './share-answers.js';

export const handler: ApiHandler<AlterShareGroupOffsetsRequest, AlterShareGroupOffsetsResponse, BrokerContext> = {
  apiKey: 91,
  minVersion: 0,
  maxVersion: 0,
  async handle(broker, req, ctx) {
    const share = broker.shareGroups;
    if (share === undefined || share === null) return { throttleTimeMs: 0, ...SHARE_GROUPS_OFF, responses: [] };
    try {
      const responses = await share.admin.alterOffsets(req.groupId, req.topics);
      return { throttleTimeMs: 0, errorCode: 0, errorMessage: null, responses };
    } catch (err) {
      return { throttleTimeMs: 0, ...toErrorPair(err, ctx.log), responses: [] };
    }
  },
  errorResponse(_req, errorCode) {
    return { throttleTimeMs: 0, errorCode, errorMessage: null, responses: [] };
  },
};
