// DeleteShareGroupState (key 86), version 0 (KIP-932). Inter-broker: the
// state of a share-partition goes (tombstones for its snapshot and update
// keys), as when a share group or its offsets are deleted. Per partition:
// NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE.
// Not implemented: CLUSTER_ACTION authorization (there are no ACLs).
import type { ApiHandler } from './api-handler.js';
import type { BrokerContext } from '../broker-context.js';
import { ErrorCode } from '../protocol/errors.js';
import type { DeleteShareGroupStateRequest, DeleteShareGroupStateResponse } from '../protocol/messages/delete-share-group-state.js';

function errorResponse(req: DeleteShareGroupStateRequest, errorCode: number): DeleteShareGroupStateResponse {
  return { results: req.topics.map((t) => ({ topicId: t.topicId, partitions: t.partitions.map((p) => ({ partition: p.partition, errorCode, errorMessage: null })) })) };
}

export const handler: ApiHandler<DeleteShareGroupStateRequest, DeleteShareGroupStateResponse, BrokerContext> = {
  apiKey: 86,
  minVersion: 0,
  maxVersion: 0,
  async handle(broker, req) {
    const service = broker.shareState;
    if (service === undefined || service === null) return errorResponse(req, ErrorCode.COORDINATOR_NOT_AVAILABLE);
    return service.delete(req);
  },
  errorResponse(req, errorCode) {
    return errorResponse(req, errorCode);
  },
};
