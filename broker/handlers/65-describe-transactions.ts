// DescribeTransactions (key 65), version 0.
// Per transactional id, as Kafka's TransactionCoordinator.handleDescribeTransactions:
// its state, timeout, start time (-1 when no transaction was started),
// producer id and epoch, and the partitions of its transaction grouped by
// topic. TRANSACTIONAL_ID_NOT_FOUND for an id the coordinator does not hold
// or one in state Dead (being expired); INVALID_REQUEST for the empty id;
// COORDINATOR_LOAD_IN_PROGRESS while the coordinator loads and
// COORDINATOR_NOT_AVAILABLE once it is shut down. Error entries carry only
// the id and the code.
import type { ApiHandler } from './api-handler.js';
import type { BrokerContext } from '../broker-context.js';
import type { DescribeTransactionsResponse, DescribeTransactionsResponseTransactionState, DescribeTransactionsRequest } from '../protocol/messages/describe-transactions.js';
import { ErrorCode } from '../protocol/errors.js';
import type { TxnCoordinator } from '../txn/txn-coordinator.js';
import { txnAdminAvailability } from './66-list-transactions.js';

function errorState(transactionalId: string, errorCode: number): DescribeTransactionsResponseTransactionState {
  return { errorCode, transactionalId, transactionState: '', transactionTimeoutMs: 0, transactionStartTimeMs: 0n, producerId: 0n, producerEpoch: 0, topics: [] };
}

export function describeTransaction(txns: TxnCoordinator, transactionalId: string): DescribeTransactionsResponseTransactionState {
  const unavailable = txnAdminAvailability(txns);
  if (unavailable !== ErrorCode.NONE) return errorState(transactionalId, unavailable);
  if (transactionalId === '') return errorState(transactionalId, ErrorCode.INVALID_REQUEST);
  const m = txns.describe(transactionalId);
  if (m === undefined || m.state === 'Dead') return errorState(transactionalId, ErrorCode.TRANSACTIONAL_ID_NOT_FOUND);
  const byTopic = new Map<string, number[]>();
  for (const tp of m.partitions.values()) {
    const list = byTopic.get(tp.topic);
    if (list === undefined) byTopic.set(tp.topic, [tp.partition]);
    else list.push(tp.partition);
  }
  return {
    errorCode: ErrorCode.NONE,
    transactionalId,
    transactionState: m.state,
    transactionTimeoutMs: m.txnTimeoutMs,
    transactionStartTimeMs: BigInt(m.txnStartTimestampMs),
    producerId: m.producerId,
    producerEpoch: m.producerEpoch,
    topics: [...byTopic].map(([topic, partitions]) => ({ topic, partitions })),
  };
}

export const handler: ApiHandler<DescribeTransactionsRequest, DescribeTransactionsResponse, BrokerContext> = {
  apiKey: 65,
  minVersion: 0,
  maxVersion: 0,
  handle(broker, req) {
    return { throttleTimeMs: 0, transactionStates: req.transactionalIds.map((id) => describeTransaction(broker.txns, id)) };
  },
  errorResponse(req, errorCode) {
    return { throttleTimeMs: 0, transactionStates: req.transactionalIds.map((id) => errorState(id, errorCode)) };
  },
};
