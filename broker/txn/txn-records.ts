// The records of `__transaction_state` in Kafka's format: an int16 version
// prefixes the TransactionLogKey (v0) and TransactionLogValue (v0 for TV0/TV1
// transactions, as Kafka writes them; v1 is read too). A null value is a
// tombstone (an expired transactional id). Pure; no I/O.
import { decodeVersioned, encodeVersioned } from '../protocol/messages/records/frame.js';
import { decodeTransactionLogKey, encodeTransactionLogKey } from '../protocol/messages/records/transaction-log-key.js';
import { decodeTransactionLogValue, encodeTransactionLogValue } from '../protocol/messages/records/transaction-log-value.js';
import { ErrorCode, KafkaError } from '../protocol/errors.js';
import { TXN_STATE_IDS, txnStateFromId, tpKey, type TopicPartition, type TxnMetadata } from './txn-state.js';

const KEY_VERSION = 0;
const VALUE_VERSION = 0;

export interface TxnLogRecord {
  readonly key: Buffer;
  readonly value: Buffer | null;
}

export function encodeTxnKey(transactionalId: string): Buffer {
  return encodeVersioned(KEY_VERSION, (w) => encodeTransactionLogKey(w, KEY_VERSION, { transactionalId }));
}

export function encodeTxnRecord(m: TxnMetadata): TxnLogRecord {
  const byTopic = new Map<string, number[]>();
  for (const tp of m.partitions.values()) {
    const list = byTopic.get(tp.topic) ?? [];
    list.push(tp.partition);
    byTopic.set(tp.topic, list);
  }
  const value = encodeVersioned(VALUE_VERSION, (w) =>
    encodeTransactionLogValue(w, VALUE_VERSION, {
      producerId: m.producerId,
      producerEpoch: m.producerEpoch,
      transactionTimeoutMs: m.txnTimeoutMs,
      transactionStatus: TXN_STATE_IDS[m.state],
      transactionPartitions: [...byTopic].map(([topic, partitionIds]) => ({ topic, partitionIds })),
      transactionLastUpdateTimestampMs: BigInt(m.txnLastUpdateTimestampMs),
      transactionStartTimestampMs: BigInt(m.txnStartTimestampMs),
    }),
  );
  return { key: encodeTxnKey(m.transactionalId), value };
}

export function encodeTxnTombstone(transactionalId: string): TxnLogRecord {
  return { key: encodeTxnKey(transactionalId), value: null };
}

/** The transactional id and its metadata, or null metadata for a tombstone. */
export function decodeTxnRecord(record: TxnLogRecord): { transactionalId: string; metadata: TxnMetadata | null } {
  const k = decodeVersioned(record.key);
  if (k.version !== KEY_VERSION) throw new KafkaError(ErrorCode.CORRUPT_MESSAGE, `unknown TransactionLogKey version ${k.version}`);
  const { transactionalId } = decodeTransactionLogKey(k.body, k.version);
  if (record.value === null) return { transactionalId, metadata: null };
  const v = decodeVersioned(record.value);
  if (v.version < 0 || v.version > 1) throw new KafkaError(ErrorCode.CORRUPT_MESSAGE, `unknown TransactionLogValue version ${v.version}`);
  const d = decodeTransactionLogValue(v.body, v.version);
  const partitions = new Map<string, TopicPartition>();
  for (const t of d.transactionPartitions ?? []) for (const p of t.partitionIds) partitions.set(tpKey(t.topic, p), { topic: t.topic, partition: p });
  return {
    transactionalId,
    metadata: {
      transactionalId,
      producerId: d.producerId,
      lastProducerId: d.previousProducerId ?? -1n,
      producerEpoch: d.producerEpoch,
      lastProducerEpoch: -1,
      txnTimeoutMs: d.transactionTimeoutMs,
      state: txnStateFromId(d.transactionStatus),
      partitions,
      txnStartTimestampMs: Number(d.transactionStartTimestampMs),
      txnLastUpdateTimestampMs: Number(d.transactionLastUpdateTimestampMs),
    },
  };
}
