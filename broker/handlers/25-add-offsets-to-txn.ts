// AddOffsetsToTxn (key 25), versions 0-4: adds the group's __consumer_offsets
// partition to the transaction, so its TxnOffsetCommits are decided by the
// transaction's end. v4 only lets the client accept TRANSACTION_ABORTABLE (KIP-890).
import type { ApiHandler } from './api-handler.js';
import type { BrokerContext } from '../broker-context.js';
import type { AddOffsetsToTxnRequest, AddOffsetsToTxnResponse } from '../protocol/messages/add-offsets-to-txn.js';
import { fencedForVersion } from './txn-errors.js';

export const handler: ApiHandler<AddOffsetsToTxnRequest, AddOffsetsToTxnResponse, BrokerContext> = {
  apiKey: 25,
  minVersion: 0,
  maxVersion: 4,
  async handle(broker, req, ctx) {
    const code = await broker.txns.addOffsets(req.transactionalId, req.producerId, req.producerEpoch, req.groupId);
    return { throttleTimeMs: 0, errorCode: fencedForVersion(code, ctx.apiVersion, 2) };
  },
  errorResponse(_req, errorCode) {
    return { throttleTimeMs: 0, errorCode };
  },
};
