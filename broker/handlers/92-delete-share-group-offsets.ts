// DeleteShareGroupOffsets (key 92), version 0 (KIP-932).
// Deletes the share-partition state of the named topics for a share group with
// no members (kafka-share-groups.sh --delete-offsets): the next member starts
// at share.auto.offset.reset again. As Kafka's: the topics are recorded
// deleting, the share coordinator deletes their state (DeleteShareGroupState),
// then they leave the group's metadata. Errors: GROUP_ID_NOT_FOUND,
// NON_EMPTY_GROUP, NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS, per topic
// UNKNOWN_TOPIC_OR_PARTITION (unknown topic, or "There is no offset
// information to delete.": no initialised state) or the share coordinator's error.
import type { ApiHandler } from './api-handler.js';
import type { BrokerContext } from '../broker-context.js';
import type { DeleteShareGroupOffsetsRequest, DeleteShareGroupOffsetsResponse } from '../protocol/messages/delete-share-group-offsets.js';
import { toErrorPair } from './admin-errors.js';
import { SHARE_GROUPS_OFF } from './share-answers.js';

export const handler: ApiHandler<DeleteShareGroupOffsetsRequest, DeleteShareGroupOffsetsResponse, BrokerContext> = {
  apiKey: 92,
  minVersion: 0,
  maxVersion: 0,
  async handle(broker, req, ctx) {
    const share = broker.shareGroups;
    if (share === undefined || share === null) return { throttleTimeMs: 0, ...SHARE_GROUPS_OFF, responses: [] };
    try {
      const responses = await share.admin.deleteOffsets(req.groupId, req.topics.map((t) => t.topicName));
      return { throttleTimeMs: 0, errorCode: 0, errorMessage: null, responses };
    } catch (err) {
      return { throttleTimeMs: 0, ...toErrorPair(err, ctx.log), responses: [] };
    }
  },
  errorResponse(_req, errorCode) {
    return { throttleTimeMs: 0, errorCode, errorMessage: null, responses: [] };
  },
};
