// InitializeShareGroupState (key 83), version 0 (KIP-932). Inter-broker: sent
// to a share-partition's share coordinator (the leader of its
// __share_group_state partition) to start its state at a start offset (-1:
// not set) and state epoch, a snapshot with no batches, as when a share
// group's offsets are reset. Per partition: NOT_COORDINATOR (not this
// broker's key), COORDINATOR_LOAD_IN_PROGRESS, FENCED_STATE_EPOCH (a newer
// state epoch is stored), COORDINATOR_NOT_AVAILABLE (not replicated).
// Not implemented: CLUSTER_ACTION authorization (there are no ACLs).
import type { ApiHandler } from './api-handler.js';
import type { BrokerContext } from '../broker-context.js';
import { ErrorCode } from '../protocol/errors.js';
import type { InitializeShareGroupStateRequest, InitializeShareGroupStateResponse } from '../protocol/messages/initialize-share-group-state.js';

function errorResponse(req: InitializeShareGroupStateRequest, errorCode: number): InitializeShareGroupStateResponse {
  return { results: req.topics.map((t) => ({ topicId: t.topicId, partitions: t.partitions.map((p) => ({ partition: p.partition, errorCode, errorMessage: null })) })) };
}

export const handler: ApiHandler<InitializeShareGroupStateRequest, InitializeShareGroupStateResponse, BrokerContext> = {
  apiKey: 83,
  minVersion: 0,
  maxVersion: 0,
  async handle(broker, req) {
    const service = broker.shareState;
    if (service === undefined || service === null) return errorResponse(req, ErrorCode.COORDINATOR_NOT_AVAILABLE);
    return service.initialize(req);
  },
  errorResponse(req, errorCode) {
    return errorResponse(req, errorCode);
  },
};
