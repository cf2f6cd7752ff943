// ShareFetch (key 78), versions 1-2 (KIP-932; v2: ShareAcquireMode and renew, KIP-1206/1222).
// Acknowledges what the request carries, then acquires records for the member
// from the share session's partitions: the batches from each share-partition's
// next fetch offset (local or remote tier, as Fetch reads them), with the
// acquired offset ranges and their delivery counts. MaxRecords is soft in
// batch-optimized mode (whole batches) and exact in record-limit mode; MaxBytes
// bounds the total beyond the first partition's batches. Long-poll: until
// MinBytes or MaxWaitMs, woken by appends and by records becoming available
// again (released, lock expired). Share session epochs as in
// broker/share/share-session-cache.ts; a renewing request (IsRenewAck) only
// acknowledges. Per-partition errors: UNKNOWN_TOPIC_ID, UNKNOWN_TOPIC_OR_PARTITION,
// NOT_LEADER_OR_FOLLOWER (with the leader and its endpoint; CurrentLeader is
// zeros on other partitions, as Kafka's); per-partition
// acknowledgement errors: INVALID_RECORD_STATE, INVALID_REQUEST.
// A partition with nothing acquired, no error and no acknowledgement is left out
// of the answer, as Kafka leaves it out (even on a session's first fetch).
// Not implemented: authorization; BatchSize does not reshape the acquired ranges.
import type { ApiHandler } from './api-handler.js';
import type { BrokerContext } from '../broker-context.js';
import type { ShareFetchRequest, ShareFetchResponse } from '../protocol/messages/share-fetch.js';
import { byTopic, shareCurrentLeader, shareLeaderEndpoints, SHARE_GROUPS_OFF } from './share-answers.js';

const RECORD_LIMIT = 1;

export const handler: ApiHandler<ShareFetchRequest, ShareFetchResponse, BrokerContext> = {
  apiKey: 78,
  minVersion: 1,
  maxVersion: 2,
  async handle(broker, req, ctx) {
    const share = broker.shareGroups;
    if (share === undefined || share === null) return { throttleTimeMs: 0, ...SHARE_GROUPS_OFF, acquisitionLockTimeoutMs: 0, responses: [], nodeEndpoints: [] };
    const v2 = ctx.apiVersion >= 2;
    const r = await share.fetch({
      groupId: req.groupId,
      memberId: req.memberId,
      shareSessionEpoch: req.shareSessionEpoch,
      maxWaitMs: Math.max(0, req.maxWaitMs),
      minBytes: req.minBytes,
      maxBytes: req.maxBytes <= 0 ? 0x7fffffff : req.maxBytes,
      maxRecords: req.maxRecords <= 0 ? 500 : req.maxRecords,
      acquireMode: v2 && req.shareAcquireMode === RECORD_LIMIT ? 'record_limit' : 'batch_optimized',
      isRenewAck: v2 && req.isRenewAck,
      renewAllowed: v2,
      topics: req.topics,
      forgotten: req.forgottenTopicsData,
      connectionId: ctx.connectionId,
      signal: ctx.signal,
    });
    return {
      throttleTimeMs: 0,
      errorCode: r.errorCode,
      errorMessage: r.errorMessage,
      acquisitionLockTimeoutMs: req.groupId === null ? 0 : share.configs.recordLockDurationMs(req.groupId),
      responses: byTopic(r.partitions, (p) => ({
        partitionIndex: p.partition,
        errorCode: p.errorCode,
        errorMessage: p.errorMessage,
        acknowledgeErrorCode: p.acknowledgeErrorCode,
        acknowledgeErrorMessage: p.acknowledgeErrorMessage,
        currentLeader: shareCurrentLeader(p, p.errorCode !== 0 ? p.errorCode : p.acknowledgeErrorCode),
        records: p.records,
        acquiredRecords: p.acquired.map((a) => ({ firstOffset: a.firstOffset, lastOffset: a.lastOffset, deliveryCount: a.deliveryCount })),
      })),
      nodeEndpoints: shareLeaderEndpoints(broker, r.partitions),
    };
  },
  errorResponse(req, errorCode) {
    return {
      throttleTimeMs: 0,
      errorCode,
      errorMessage: null,
      acquisitionLockTimeoutMs: 0,
      responses: [],
      nodeEndpoints: [],
    };
  },
};
