import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeTxnRecord, encodeTxnRecord, encodeTxnTombstone } from '../../../broker/txn/txn-records.js';
import { newTxnMetadata, transition, withPartitions } from '../../../broker/txn/txn-state.js';

test('TransactionLogKey/Value round trip in Kafka’s byte layout', () => {
  const base = { ...newTxnMetadata('my-txn', 1234n, 60_000, 1_700_000_000_000), producerEpoch: 3 };
  const m = transition(base, 'Ongoing', { partitions: withPartitions(base, [{ topic: 'a', partition: 0 }, { topic: 'a', partition: 2 }, { topic: 'b', partition: 1 }]), txnStartTimestampMs: 1_700_000_000_500 });
  const r = encodeTxnRecord(m);
  // Key: int16 version 0, then int16-length string.
  assert.deepEqual(r.key, Buffer.concat([Buffer.from([0, 0, 0, 6]), Buffer.from('my-txn')]));
  // Value: int16 version 0, int64 producerId, int16 epoch, int32 timeout, int8 status 1 (Ongoing).
  assert.equal(r.value!.readInt16BE(0), 0);
  assert.equal(r.value!.readBigInt64BE(2), 1234n);
  assert.equal(r.value!.readInt16BE(10), 3);
  assert.equal(r.value!.readInt32BE(12), 60_000);
  assert.equal(r.value!.readInt8(16), 1);
  const back = decodeTxnRecord(r);
  assert.equal(back.transactionalId, 'my-txn');
  assert.deepEqual(back.metadata, { ...m, lastProducerEpoch: -1 });
  const tomb = decodeTxnRecord(encodeTxnTombstone('my-txn'));
  assert.deepEqual(tomb, { transactionalId: 'my-txn', metadata: null });
});
