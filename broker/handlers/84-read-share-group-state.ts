// ReadShareGroupState (key 84), version 0 (KIP-932). Inter-broker: a
// share-partition leader reads the state it initialises the share-partition
// from (start offset -1 and no batches: never initialised). The leader epoch
// it sends is recorded; a lower one than recorded is FENCED_LEADER_EPOCH.
// Per partition also NOT_COORDINATOR and COORDINATOR_LOAD_IN_PROGRESS.
// Not implemented: CLUSTER_ACTION authorization (there are no ACLs).
import type { ApiHandler } from './api-handler.js';
import type { BrokerContext } from '../broker-context.js';
import { ErrorCode } from '../protocol/errors.js';
import type { ReadShareGroupStateRequest, ReadShareGroupStateResponse } from '../protocol/messages/read-share-group-state.js';

function errorResponse(req: ReadShareGroupStateRequest, errorCode: number): ReadShareGroupStateResponse {
  return { results: req.topics.map((t) => ({ topicId: t.topicId, partitions: t.partitions.map((p) => ({ partition: p.partition, errorCode, errorMessage: null, stateEpoch: 0, startOffset: -1n, stateBatches: [] })) })) };
}

export const handler: ApiHandler<ReadShareGroupStateRequest, ReadShareGroupStateResponse, BrokerContext> = {
  apiKey: 84,
  minVersion: 0,
  maxVersion: 0,
  async handle(broker, req) {
    const service = broker.shareState;
    if (service === undefined || service === null) return errorResponse(req, ErrorCode.COORDINATOR_NOT_AVAILABLE);
    return service.read(req);
  },
  errorResponse(req, errorCode) {
    return errorResponse(req, errorCode);
  },
};
