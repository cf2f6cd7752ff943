// ReadShareGroupStateSummary (key 87), versions 0-1 (KIP-932; v1 adds
// DeliveryCompleteCount). Inter-broker: the start offset, state and leader
// epochs of share-partitions without their batches (DescribeShareGroupOffsets,
// and finding which share-partitions of a group have state). Per partition:
// NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS, FENCED_LEADER_EPOCH.
// Not implemented: CLUSTER_ACTION authorization (there are no ACLs).
import type { ApiHandler } from './api-handler.js';
import type { BrokerContext } from '../broker-context.js';
import { ErrorCode } from '../protocol/errors.js';
import type { ReadShareGroupStateSummaryRequest, ReadShareGroupStateSummaryResponse } from '../protocol/messages/read-share-group-state-summary.js';

function errorResponse(req: ReadShareGroupStateSummaryRequest, errorCode: number): ReadShareGroupStateSummaryResponse {
  return { results: req.topics.map((t) => ({ topicId: t.topicId, partitions: t.partitions.map((p) => ({ partition: p.partition, errorCode, errorMessage: null, stateEpoch: 0, leaderEpoch: -1, startOffset: -1n, deliveryCompleteCount: 0 })) })) };
}

export const handler: ApiHandler<ReadShareGroupStateSummaryRequest, ReadShareGroupStateSummaryResponse, BrokerContext> = {
  apiKey: 87,
  minVersion: 0,
  maxVersion: 1,
  async handle(broker, req) {
    const service = broker.shareState;
    if (service === undefined || service === null) return errorResponse(req, ErrorCode.COORDINATOR_NOT_AVAILABLE);
    return service.summary(req);
  },
  errorResponse(req, errorCode) {
    return errorResponse(req, errorCode);
  },
};
