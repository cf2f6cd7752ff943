// ListTransactions (key 66), versions 0-1.
// Every transactional id the coordinator holds, with its producer id and
// state (named as Kafka prints it: Empty, Ongoing, PrepareCommit, ...), as
// Kafka's TransactionStateManager.listTransactionStates filters them:
// - StateFilters: exact state names; names Kafka does not know come back in
//   UnknownStateFilters (the known ones still filter);
// - ProducerIdFilters: the current producer id of the id;
// - DurationFilter (v1; -1 = none): only transactions whose start time is more
//   than that many ms ago (an id that never started one has start time -1,
//   so it passes, as in Kafka);
// - Dead ids (being expired) are never listed.
// COORDINATOR_LOAD_IN_PROGRESS while the coordinator replays its log,
// COORDINATOR_NOT_AVAILABLE once it is shut down.
import type { ApiHandler } from './api-handler.js';
import type { BrokerContext } from '../broker-context.js';
import type { ListTransactionsRequest, ListTransactionsResponse } from '../protocol/messages/list-transactions.js';
import { ErrorCode } from '../protocol/errors.js';
import { TXN_STATE_IDS, type TxnState } from '../txn/txn-state.js';
import type { TxnCoordinator } from '../txn/txn-coordinator.js';

/** The coordinator's availability as the transaction admin APIs report it. */
export function txnAdminAvailability(txns: TxnCoordinator): number {
  switch (txns.status) {
    case 'loading':
      return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS;
    case 'closed':
      return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    default:
      return ErrorCode.NONE;
  }
}

const isTxnState = (name: string): name is TxnState => Object.hasOwn(TXN_STATE_IDS, name);

export function listTransactions(txns: TxnCoordinator, req: ListTransactionsRequest, now: number): ListTransactionsResponse {
  const unavailable = txnAdminAvailability(txns);
  if (unavailable !== ErrorCode.NONE) return { throttleTimeMs: 0, errorCode: unavailable, unknownStateFilters: [], transactionStates: [] };
  const states = new Set<TxnState>();
  const unknownStateFilters: string[] = [];
  for (const name of req.stateFilters) {
    if (isTxnState(name)) states.add(name);
    else unknownStateFilters.push(name);
  }
  const producerIds = new Set(req.producerIdFilters);
  const duration = req.durationFilter;
  const transactionStates = [];
  for (const m of txns.allTransactions()) {
    if (m.state === 'Dead') continue;
    if (producerIds.size > 0 && !producerIds.has(m.producerId)) continue;
    if (states.size > 0 && !states.has(m.state)) continue;
    if (duration >= 0n && BigInt(now - m.txnStartTimestampMs) <= duration) continue;
    transactionStates.push({ transactionalId: m.transactionalId, producerId: m.producerId, transactionState: m.state });
  }
  return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, unknownStateFilters, transactionStates };
}

export const handler: ApiHandler<ListTransactionsRequest, ListTransactionsResponse, BrokerContext> = {
  apiKey: 66,
  minVersion: 0,
  maxVersion: 1,
  handle(broker, req, ctx) {
    // v0 has no duration filter (the decoder leaves it at -1).
    return listTransactions(broker.txns, ctx.apiVersion >= 1 ? req : { ...req, durationFilter: -1n }, broker.clock.now());
  },
  errorResponse(_req, errorCode) {
    return { throttleTimeMs: 0, errorCode, unknownStateFilters: [], transactionStates: [] };
  },
};
