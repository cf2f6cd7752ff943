// Transaction metadata of one transactional id and its state machine, after
// Kafka's TransactionMetadata / TransactionState (TV1 protocol). Pure data: the
// coordinator persists every state it reaches to `__transaction_state`.
import { ErrorCode, KafkaError } from '../protocol/errors.js';

export type TxnState =
  | 'Empty'
  | 'Ongoing'
  | 'PrepareCommit'
  | 'PrepareAbort'
  | 'CompleteCommit'
  | 'CompleteAbort'
  | 'Dead'
  | 'PrepareEpochFence';

/** The TransactionStatus ids Kafka writes in TransactionLogValue. */
export const TXN_STATE_IDS: Readonly<Record<TxnState, number>> = {
  Empty: 0,
  Ongoing: 1,
  PrepareCommit: 2,
  PrepareAbort: 3,
  CompleteCommit: 4,
  CompleteAbort: 5,
  Dead: 6,
  PrepareEpochFence: 7,
};

export function txnStateFromId(id: number): TxnState {
  for (const [name, value] of Object.entries(TXN_STATE_IDS)) if (value === id) return name as TxnState;
  throw new KafkaError(ErrorCode.CORRUPT_MESSAGE, `unknown transaction state id ${id}`);
}

/** Kafka's TransactionState.validPreviousStates, read as "may be entered from". */
const VALID_PREVIOUS: Readonly<Record<TxnState, readonly TxnState[]>> = {
  Empty: ['Empty', 'CompleteCommit', 'CompleteAbort'],
  Ongoing: ['Ongoing', 'Empty', 'CompleteCommit', 'CompleteAbort'],
  PrepareCommit: ['Ongoing'],
  PrepareAbort: ['Ongoing', 'PrepareEpochFence', 'Empty', 'CompleteCommit', 'CompleteAbort'],
  CompleteCommit: ['PrepareCommit'],
  CompleteAbort: ['PrepareAbort'],
  Dead: ['Empty', 'CompleteCommit', 'CompleteAbort'],
  PrepareEpochFence: ['Ongoing'],
};

export function canTransition(from: TxnState, to: TxnState): boolean {
  return VALID_PREVIOUS[to].includes(from);
}

export const NO_PRODUCER_ID = -1n;
export const NO_PRODUCER_EPOCH = -1;
/** Kafka bumps to a new producer id once the epoch would reach Short.MAX_VALUE. */
export const MAX_PRODUCER_EPOCH = 32767;

export interface TopicPartition {
  readonly topic: string;
  readonly partition: number;
}

export const tpKey = (topic: string, partition: number): string => `${topic}\u0000${partition}`;

/** One transactional id's state as persisted (TransactionLogValue) and held in memory. */
export interface TxnMetadata {
  readonly transactionalId: string;
  readonly producerId: bigint;
  /** The producer id before the last id change (an exhausted epoch), or -1. */
  readonly lastProducerId: bigint;
  readonly producerEpoch: number;
  /** The epoch before the last bump, for retried InitProducerId (KIP-360), or -1. */
  readonly lastProducerEpoch: number;
  readonly txnTimeoutMs: number;
  readonly state: TxnState;
  /** Partitions of the ongoing transaction, by tpKey. */
  readonly partitions: ReadonlyMap<string, TopicPartition>;
  readonly txnStartTimestampMs: number;
  readonly txnLastUpdateTimestampMs: number;
}

export type TxnUpdate = Partial<Omit<TxnMetadata, 'transactionalId' | 'state'>>;

/**
 * The single transition function: the metadata in `to` with `changes` applied,
 * or INVALID_TXN_STATE when Kafka would refuse the transition. Entering a
 * Complete or Empty state clears the partitions.
 */
export function transition(m: TxnMetadata, to: TxnState, changes: TxnUpdate = {}): TxnMetadata {
  if (!canTransition(m.state, to)) {
    throw new KafkaError(ErrorCode.INVALID_TXN_STATE, `transactional id ${m.transactionalId}: illegal transition ${m.state} -> ${to}`);
  }
  const next: TxnMetadata = { ...m, ...changes, state: to };
  if (to === 'Empty' || to === 'CompleteCommit' || to === 'CompleteAbort' || to === 'Dead') {
    return { ...next, partitions: new Map() };
  }
  return next;
}

export function newTxnMetadata(transactionalId: string, producerId: bigint, txnTimeoutMs: number, now: number): TxnMetadata {
  return {
    transactionalId,
    producerId,
    lastProducerId: NO_PRODUCER_ID,
    producerEpoch: NO_PRODUCER_EPOCH,
    lastProducerEpoch: NO_PRODUCER_EPOCH,
    txnTimeoutMs,
    state: 'Empty',
    partitions: new Map(),
    txnStartTimestampMs: -1,
    txnLastUpdateTimestampMs: now,
  };
}

export function withPartitions(m: TxnMetadata, added: readonly TopicPartition[]): Map<string, TopicPartition> {
  const out = new Map(m.partitions);
  for (const tp of added) out.set(tpKey(tp.topic, tp.partition), tp);
  return out;
}

/** The epoch after a bump, or null when it is exhausted (a new producer id is needed). */
export function bumpedEpoch(epoch: number): number | null {
  const next = epoch + 1;
  return next >= MAX_PRODUCER_EPOCH ? null : next;
}
