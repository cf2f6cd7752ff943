// EndTxn (key 26), versions 0-4: commits or aborts the ongoing transaction.
// The answer comes once the markers are in every involved partition (a
// single broker writes them locally), so a read_committed consumer sees a
// committed transaction as soon as commitTransaction returns. v5 (TV2, epoch
// bump on every end) is not served; producerId/producerEpoch in the response
// are v5+ fields.
import type { ApiHandler } from './api-handler.js';
import type { BrokerContext } from '../broker-context.js';
import type { EndTxnRequest, EndTxnResponse } from '../protocol/messages/end-txn.js';
import { fencedForVersion } from './txn-errors.js';

export const handler: ApiHandler<EndTxnRequest, EndTxnResponse, BrokerContext> = {
  apiKey: 26,
  minVersion: 0,
  maxVersion: 4,
  async handle(broker, req, ctx) {
    const code = await broker.txns.endTxn(req.transactionalId, req.producerId, req.producerEpoch, req.committed);
    return { throttleTimeMs: 0, errorCode: fencedForVersion(code, ctx.apiVersion, 2), producerId: -1n, producerEpoch: -1 };
  },
  errorResponse(_req, errorCode) {
    return { throttleTimeMs: 0, errorCode, producerId: -1n, producerEpoch: -1 };
  },
};
