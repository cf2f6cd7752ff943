// WriteShareGroupState (key 85), versions 0-1 (KIP-932; v1 adds
// DeliveryCompleteCount, which the coordinator recomputes from the batches).
// Inter-broker: a share-partition leader writes the new start offset and
// in-flight state batches; the answer comes once the ShareSnapshot/ShareUpdate
// record is replicated. Per partition: NOT_COORDINATOR,
// COORDINATOR_LOAD_IN_PROGRESS, FENCED_LEADER_EPOCH (a newer leader read or
// wrote the key), FENCED_STATE_EPOCH, COORDINATOR_NOT_AVAILABLE.
// Not implemented: CLUSTER_ACTION authorization (there are no ACLs).
import type { ApiHandler } from './api-handler.js';
import type { BrokerContext } from '../broker-context.js';
import { ErrorCode } from '../protocol/errors.js';
import type { WriteShareGroupStateRequest, WriteShareGroupStateResponse } from '../protocol/messages/write-share-group-state.js';

function errorResponse(req: WriteShareGroupStateRequest, errorCode: number): WriteShareGroupStateResponse {
  return { results: req.topics.map((t) => ({ topicId: t.topicId, partitions: t.partitions.map((p) => ({ partition: p.partition, errorCode, errorMessage: null })) })) };
}

export const handler: ApiHandler<WriteShareGroupStateRequest, WriteShareGroupStateResponse, BrokerContext> = {
  apiKey: 85,
  minVersion: 0,
  maxVersion: 1,
  async handle(broker, req) {
    const service = broker.shareState;
    if (service === undefined || service === null) return errorResponse(req, ErrorCode.COORDINATOR_NOT_AVAILABLE);
    return service.write(req);
  },
  errorResponse(req, errorCode) {
    return errorResponse(req, errorCode);
  },
};
