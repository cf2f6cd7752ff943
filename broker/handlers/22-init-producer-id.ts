// InitProducerId (key 22), versions 0-5.
// Idempotent producers (no transactional id) get a fresh producer id with epoch
// 0, whatever id and epoch they pass (as Kafka: without a transactional id the
// request is accepted blindly and a new id is generated). A transactional id
// goes to the transaction coordinator: the id's producer id with a bumped
// epoch (fencing the previous producer and aborting its open transaction).
// v0-2 clients know no PRODUCER_FENCED: they get INVALID_PRODUCER_EPOCH (KIP-588).
// v5 only lets the client accept TRANSACTION_ABORTABLE (KIP-890). v6 (KIP-939,
// two-phase commit) is not advertised: Sediment has no 2PC.
import type { ApiHandler } from './api-handler.js';
import type { BrokerContext } from '../broker-context.js';
import type { InitProducerIdRequest, InitProducerIdResponse } from '../protocol/messages/init-producer-id.js';
import { ErrorCode } from '../protocol/errors.js';
import { fencedForVersion } from './txn-errors.js';

/** v6's KIP-939 (2PC) prepared-transaction fields: none, as Sediment serves no 2PC. */
const NO_ONGOING_TXN = { ongoingTxnProducerId: -1n, ongoingTxnProducerEpoch: -1 };

export const handler: ApiHandler<InitProducerIdRequest, InitProducerIdResponse, BrokerContext> = {
  apiKey: 22,
  minVersion: 0,
  maxVersion: 5,
  async handle(broker, req, ctx) {
    if (req.transactionalId !== null && req.transactionalId !== '') {
      const expected = ctx.apiVersion >= 3 && req.producerId >= 0n ? { producerId: req.producerId, producerEpoch: req.producerEpoch } : null;
      const r = await broker.txns.initProducerId(req.transactionalId, req.transactionTimeoutMs, expected);
      return { throttleTimeMs: 0, errorCode: fencedForVersion(r.errorCode, ctx.apiVersion, 4), producerId: r.producerId, producerEpoch: r.producerEpoch, ...NO_ONGOING_TXN };
    }
    const producerId = await broker.producerIds.nextProducerId();
    return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, producerId, producerEpoch: 0, ...NO_ONGOING_TXN };
  },
  errorResponse(_req, errorCode) {
    return { throttleTimeMs: 0, errorCode, producerId: -1n, producerEpoch: -1, ...NO_ONGOING_TXN };
  },
};
