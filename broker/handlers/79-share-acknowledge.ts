// ShareAcknowledge (key 79), versions 1-2 (KIP-932; v2: renew, KIP-1222).
// Applies a member's acknowledgements (accept, release, reject, gap; renew
// from v2) to the share-partitions named, within its share session: epoch 0
// is INVALID_SHARE_SESSION_EPOCH, -1 closes the session afterwards (its
// remaining acquired records are released), another epoch must match the
// session's. The answer comes once the new state is persisted. Per-partition
// errors: INVALID_RECORD_STATE (not acquired by this member, or its lock
// expired), INVALID_REQUEST, UNKNOWN_TOPIC_ID, NOT_LEADER_OR_FOLLOWER.
// Not implemented: authorization.
import type { ApiHandler } from './api-handler.js';
import type { BrokerContext } from '../broker-context.js';
import type { ShareAcknowledgeRequest, ShareAcknowledgeResponse } from '../protocol/messages/share-acknowledge.js';
import { byTopic, SHARE_GROUPS_OFF, shareCurrentLeader, shareLeaderEndpoints } from './share-answers.js';

export const handler: ApiHandler<ShareAcknowledgeRequest, ShareAcknowledgeResponse, BrokerContext> = {
  apiKey: 79,
  minVersion: 1,
  maxVersion: 2,
  async handle(broker, req, ctx) {
    const share = broker.shareGroups;
    if (share === undefined || share === null) return { throttleTimeMs: 0, ...SHARE_GROUPS_OFF, acquisitionLockTimeoutMs: 0, responses: [], nodeEndpoints: [] };
    const r = await share.acknowledge({
      groupId: req.groupId,
      memberId: req.memberId,
      shareSessionEpoch: req.shareSessionEpoch,
      topics: req.topics,
      connectionId: ctx.connectionId,
      renewAllowed: ctx.apiVersion >= 2,
    });
    return {
      throttleTimeMs: 0,
      errorCode: r.errorCode,
      errorMessage: r.errorMessage,
      acquisitionLockTimeoutMs: req.groupId === null ? 0 : share.configs.recordLockDurationMs(req.groupId),
      responses: byTopic(r.partitions, (p) => ({
        partitionIndex: p.partition,
        errorCode: p.acknowledgeErrorCode,
        errorMessage: p.acknowledgeErrorMessage,
        currentLeader: shareCurrentLeader(p, p.acknowledgeErrorCode),
      })),
      nodeEndpoints: shareLeaderEndpoints(broker, r.partitions),
    };
  },
  errorResponse(_req, errorCode) {
    return { throttleTimeMs: 0, errorCode, errorMessage: null, acquisitionLockTimeoutMs: 0, responses: [], nodeEndpoints: [] };
  },
};
