// InitProducerId (key 22), versions 0-4.
// Idempotent producers (no transactional id) get a fresh producer id with epoch
// 0, whatever id and epoch they pass (as Kafka: without a transactional id the
// request is accepted blindly and a new id is generated). Transactional ids
// get COORDINATOR_NOT_AVAILABLE until a transaction coordinator exists.
import type { ApiHandler } from './api-handler.js';
import type { BrokerContext } from '../broker-context.js';
import type { InitProducerIdRequest, InitProducerIdResponse } from '../protocol/messages/init-producer-id.js';
import { ErrorCode } from '../protocol/errors.js';

export const handler: ApiHandler<InitProducerIdRequest, InitProducerIdResponse, BrokerContext> = {
  apiKey: 22,
  minVersion: 0,
  maxVersion: 4,
  async handle(broker, req) {
    if (req.transactionalId !== null && req.transactionalId !== '') {
      return { throttleTimeMs: 0, errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE, producerId: -1n, producerEpoch: -1 };
    }
    const producerId = await broker.producerIds.nextProducerId();
    return { throttleTimeMs: 0, errorCode: 0, producerId, producerEpoch: 0 };
  },
  errorResponse(_req, errorCode) {
    return { throttleTimeMs: 0, errorCode, producerId: -1n, producerEpoch: -1 };
  },
};
