import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ErrorCode, KafkaError, RecordValidationError } from '../../../broker/protocol/errors.js';
import {
  COMPRESSION_TYPES,
  OFFSET_ATTRIBUTES,
  OFFSET_LAST_OFFSET_DELTA,
  OFFSET_MAGIC,
  OFFSET_RECORDS_COUNT,
  buildEndTxnMarkerBatch,
  buildRecordBatch,
  rewriteBatchCrc,
  validateBatchForAppend,
  validateProduceRecords,
  type BuildRecordBatchOptions,
} from '../../../broker/protocol/record-batch.js';
import { encodeRecords, resolveRecord } from '../../../broker/protocol/records.js';

const codeOf = (code: number) => (err: unknown): boolean => err instanceof KafkaError && err.code === code;
const CORRUPT = codeOf(ErrorCode.CORRUPT_MESSAGE);
const INVALID = codeOf(ErrorCode.INVALID_RECORD);
const MAX = 1024 * 1024;

function batch(extra: Partial<BuildRecordBatchOptions> = {}): Buffer {
  return buildRecordBatch({
    records: [{ key: 'a', value: '1', timestamp: 1000 }, { key: 'b', value: '2', timestamp: 1001 }, { key: null, value: '3', timestamp: 1002 }],
    producerId: 4n,
    producerEpoch: 0,
    baseSequence: 0,
    ...extra,
  });
}

/** Mutates header bytes then fixes the CRC, to test the rules behind the CRC check. */
function patched(buf: Buffer, patch: (b: Buffer) => void): Buffer {
  const copy = Buffer.from(buf);
  patch(copy);
  rewriteBatchCrc(copy, 0, copy.length);
  return copy;
}

test('valid client batches pass at every level and for every codec', () => {
  for (const compression of COMPRESSION_TYPES) {
    const buf = batch({ compression });
    for (const level of ['header', 'records', 'deep'] as const) {
      const v = validateProduceRecords(buf, MAX, { level });
      assert.equal(v.size, buf.length);
      assert.equal(v.position, 0);
      assert.equal(v.compression, compression);
      assert.equal(v.header.recordsCount, 3);
    }
  }
});

test('framing: truncated or undersized batches are CORRUPT_MESSAGE; no whole batch in a produce is INVALID_RECORD', () => {
  const buf = batch();
  assert.throws(() => validateBatchForAppend(buf.subarray(0, 40), 0, MAX), CORRUPT);
  assert.throws(() => validateBatchForAppend(buf.subarray(0, 8), 0, MAX), CORRUPT);
  const tiny = Buffer.from(buf);
  tiny.writeInt32BE(30, 8);
  assert.throws(() => validateBatchForAppend(tiny, 0, MAX), CORRUPT);
  assert.throws(() => validateProduceRecords(buf.subarray(0, buf.length - 1), MAX), INVALID);
  assert.throws(() => validateProduceRecords(Buffer.alloc(0), MAX), INVALID);
});

test('magic: 0 and 1 are INVALID_RECORD (produce v3+ is v2-only), anything else CORRUPT_MESSAGE', () => {
  const buf = batch();
  for (const [magic, check] of [[0, INVALID], [1, INVALID], [3, CORRUPT], [-1, CORRUPT]] as const) {
    const copy = Buffer.from(buf);
    copy.writeInt8(magic, OFFSET_MAGIC);
    assert.throws(() => validateBatchForAppend(copy, 0, MAX), check, `magic ${magic}`);
  }
});

test('size over max.message.bytes is MESSAGE_TOO_LARGE (checked before the CRC, as Kafka does)', () => {
  const buf = batch();
  assert.throws(() => validateBatchForAppend(buf, 0, buf.length - 1), codeOf(ErrorCode.MESSAGE_TOO_LARGE));
  assert.equal(validateBatchForAppend(buf, 0, buf.length).size, buf.length);
  const corrupt = Buffer.from(buf);
  corrupt[buf.length - 1] = (corrupt[buf.length - 1] as number) ^ 0x40;
  assert.throws(() => validateBatchForAppend(corrupt, 0, buf.length - 1), codeOf(ErrorCode.MESSAGE_TOO_LARGE));
});

test('any single-bit flip behind the CRC is CORRUPT_MESSAGE (property)', () => {
  const buf = batch({ compression: 'lz4' });
  fc.assert(
    fc.property(fc.integer({ min: OFFSET_ATTRIBUTES, max: buf.length - 1 }), fc.integer({ min: 0, max: 7 }), (byte, bit) => {
      const copy = Buffer.from(buf);
      copy[byte] = (copy[byte] as number) ^ (1 << bit);
      assert.throws(() => validateBatchForAppend(copy, 0, MAX, { level: 'deep' }), CORRUPT);
    }),
    { numRuns: 500 },
  );
});

test('client rules from LogValidator.validateBatch are INVALID_RECORD', () => {
  const buf = batch();
  // baseOffset must be 0 from a client; internal writes may carry any.
  const based = batch({ baseOffset: 5n });
  assert.throws(() => validateBatchForAppend(based, 0, MAX), INVALID);
  assert.equal(validateBatchForAppend(based, 0, MAX, { origin: 'internal' }).header.baseOffset, 5n);
  // lastOffsetDelta + 1 != recordsCount
  assert.throws(() => validateBatchForAppend(patched(buf, (b) => b.writeInt32BE(1, OFFSET_LAST_OFFSET_DELTA)), 0, MAX), INVALID);
  assert.throws(() => validateBatchForAppend(patched(buf, (b) => b.writeInt32BE(-1, OFFSET_LAST_OFFSET_DELTA)), 0, MAX), INVALID);
  // count <= 0
  const empty = buildRecordBatch({ records: [] });
  assert.throws(() => validateBatchForAppend(empty, 0, MAX), INVALID);
  // control batches only from the broker itself
  const marker = buildEndTxnMarkerBatch({ type: 'ABORT', coordinatorEpoch: 0, producerId: 1n, producerEpoch: 0, timestamp: 1 });
  assert.throws(() => validateBatchForAppend(marker, 0, MAX), INVALID);
  assert.equal(validateBatchForAppend(marker, 0, MAX, { origin: 'internal' }).header.recordsCount, 1);
  // idempotent batch without a sequence
  assert.throws(() => validateBatchForAppend(batch({ baseSequence: -1 }), 0, MAX), INVALID);
  assert.ok(validateBatchForAppend(batch({ producerId: -1n, baseSequence: -1 }), 0, MAX));
});

test('an unknown compression codec id is CORRUPT_MESSAGE', () => {
  const bad = patched(batch(), (b) => b.writeInt16BE(5, OFFSET_ATTRIBUTES));
  assert.throws(() => validateBatchForAppend(bad, 0, MAX, { level: 'header' }), CORRUPT);
});

test('record walk: uncompressed bodies are walked by default, compressed ones only when deep', () => {
  // A body whose declared count disagrees with its records (header kept consistent).
  const records = encodeRecords([resolveRecord({ value: 'x' }, 0, 0n), resolveRecord({ value: 'y' }, 1, 0n)]);
  const forge = (compression: 'none' | 'zstd'): Buffer => {
    const b = buildRecordBatch({ records: [{ value: 'x' }, { value: 'y' }, { value: 'z' }], compression });
    const body = compression === 'none' ? records : buildRecordBatch({ records: [{ value: 'x' }, { value: 'y' }], compression }).subarray(61);
    const out = Buffer.concat([b.subarray(0, 61), body]);
    out.writeInt32BE(out.length - 12, 8);
    rewriteBatchCrc(out, 0, out.length);
    return out;
  };
  const plain = forge('none');
  assert.throws(() => validateBatchForAppend(plain, 0, MAX), INVALID);
  assert.ok(validateBatchForAppend(plain, 0, MAX, { level: 'header' }));
  const zstd = forge('zstd');
  assert.ok(validateBatchForAppend(zstd, 0, MAX));
  assert.throws(() => validateBatchForAppend(zstd, 0, MAX, { level: 'deep' }), INVALID);
  // offsetDelta out of sequence
  const skewed = buildRecordBatch({ records: [{ value: 'a', offsetDelta: 0 }, { value: 'b', offsetDelta: 2 }], lastOffsetDelta: 1 });
  assert.throws(() => validateBatchForAppend(skewed, 0, MAX), INVALID);
  // An undecompressable body is CORRUPT_MESSAGE when deep.
  const garbage = buildRecordBatch({ records: [{ value: 'a' }], compression: 'gzip' });
  garbage.fill(0x55, 61 + 10);
  rewriteBatchCrc(garbage, 0, garbage.length);
  assert.throws(() => validateBatchForAppend(garbage, 0, MAX, { level: 'deep' }), CORRUPT);
  assert.throws(() => validateBatchForAppend(garbage, 0, MAX, { level: 'deep', maxDecompressedBytes: 10 }), CORRUPT);
});

test('compacted topics need a key on every record, compressed or not', () => {
  for (const compression of COMPRESSION_TYPES) {
    assert.throws(() => validateBatchForAppend(batch({ compression }), 0, MAX, { compacted: true }), INVALID, compression);
    const keyed = batch({ compression, records: [{ key: 'k', value: 'v' }] });
    assert.ok(validateBatchForAppend(keyed, 0, MAX, { compacted: true }));
  }
});

test('CreateTime bounds give INVALID_TIMESTAMP; a producer may not claim LogAppendTime on a LogAppendTime topic', () => {
  const INVALID_TS = codeOf(ErrorCode.INVALID_TIMESTAMP);
  const now = 1_000_000;
  const ok = { now, beforeMaxMs: 1000, afterMaxMs: 1000 };
  const recs = (ts: number[]) => ts.map((t, i) => ({ key: `${i}`, value: 'v', timestamp: t }));
  assert.ok(validateBatchForAppend(batch({ records: recs([now - 1000, now + 1000]) }), 0, MAX, { createTime: ok }));
  // The out-of-range record sits in the middle: only the per-record walk sees it.
  const middle = batch({ records: recs([now, now - 5000, now]) });
  assert.throws(() => validateBatchForAppend(middle, 0, MAX, { createTime: ok }), INVALID_TS);
  assert.throws(() => validateBatchForAppend(batch({ compression: 'gzip', records: recs([now, now - 5000, now]) }), 0, MAX, { createTime: ok, level: 'deep' }), INVALID_TS);
  // Header-only checks still catch base and max timestamps.
  assert.throws(() => validateBatchForAppend(batch({ compression: 'gzip', records: recs([now + 5000]) }), 0, MAX, { createTime: ok }), INVALID_TS);
  const lat = buildRecordBatch({ records: [{ value: 'v' }], logAppendTime: true, timestamp: now });
  assert.throws(() => validateBatchForAppend(lat, 0, MAX, { logAppendTimeTopic: true }), INVALID_TS);
  // On a CreateTime topic Kafka only range-checks it (its records read as maxTimestamp).
  assert.ok(validateBatchForAppend(lat, 0, MAX, { createTime: ok }));
  const lateLat = buildRecordBatch({ records: [{ value: 'v' }], logAppendTime: true, timestamp: now + 5000 });
  assert.throws(() => validateBatchForAppend(lateLat, 0, MAX, { createTime: ok }), INVALID_TS);
  // NO_TIMESTAMP (-1) is never out of range.
  assert.ok(validateBatchForAppend(buildRecordBatch({ records: [{ value: 'v' }] }), 0, MAX, { createTime: ok }));
});

test('produce records: exactly one whole batch; a partial trailing batch is ignored as Kafka does', () => {
  const a = batch();
  assert.throws(() => validateProduceRecords(Buffer.concat([a, a]), MAX), INVALID);
  const v = validateProduceRecords(Buffer.concat([a, a.subarray(0, 30)]), MAX);
  assert.equal(v.size, a.length);
});

test('arbitrary bytes never escape as anything but a KafkaError (property)', () => {
  const base = batch({ compression: 'snappy' });
  fc.assert(
    fc.property(fc.uint8Array({ minLength: 0, maxLength: 200 }), fc.boolean(), (bytes, keepHeader) => {
      let buf = Buffer.from(bytes);
      if (keepHeader) {
        buf = Buffer.concat([base.subarray(0, 61), buf]);
        buf.writeInt32BE(buf.length - 12, 8);
        buf.writeInt32BE(Math.max(1, bytes.length % 5), OFFSET_RECORDS_COUNT);
        buf.writeInt32BE(Math.max(1, bytes.length % 5) - 1, OFFSET_LAST_OFFSET_DELTA);
        rewriteBatchCrc(buf, 0, buf.length);
      }
      try {
        validateProduceRecords(buf, MAX, { level: 'deep' });
      } catch (err) {
        assert.ok(err instanceof KafkaError, String(err));
      }
    }),
    { numRuns: 1500 },
  );
});

test('record errors (KIP-467): every bad record listed with its batch index and Kafka\'s message', () => {
  const now = 1_000_000;
  const bounds = { now, beforeMaxMs: 1000, afterMaxMs: 1000 };
  const recs = (ts: number[]) => ts.map((t, i) => ({ key: `${i}`, value: 'v', timestamp: t }));
  const late = batch({ records: recs([now, now + 5000, now, now - 7000]) });
  assert.throws(() => validateBatchForAppend(late, 0, MAX, { createTime: bounds, topicPartition: 't-2' }), (e: unknown) => {
    assert.ok(e instanceof RecordValidationError);
    assert.equal(e.code, ErrorCode.INVALID_TIMESTAMP);
    assert.equal(e.message, 'One or more records have been rejected due to invalid timestamp');
    assert.deepEqual(e.recordErrors, [
      { batchIndex: 1, message: `Timestamp ${now + 5000} of message with offset 1 is out of range. The timestamp should be within [${now - 1000}, ${now + 1000}]` },
      { batchIndex: 3, message: `Timestamp ${now - 7000} of message with offset 3 is out of range. The timestamp should be within [${now - 1000}, ${now + 1000}]` },
    ]);
    return true;
  });
  // A missing key is reported before the timestamp of the same record, as Kafka's validateRecord.
  const both = batch({ records: [{ key: null, value: 'x', timestamp: now + 9000 }, { key: 'k', value: 'y', timestamp: now + 9000 }], compression: 'zstd' });
  assert.throws(() => validateBatchForAppend(both, 0, MAX, { createTime: bounds, compacted: true, topicPartition: 't-0' }), (e: unknown) => {
    assert.ok(e instanceof RecordValidationError);
    assert.equal(e.code, ErrorCode.INVALID_TIMESTAMP, 'any timestamp error makes the batch INVALID_TIMESTAMP');
    assert.deepEqual(e.recordErrors.map((r) => r.batchIndex), [0, 1]);
    assert.match(e.recordErrors[0]?.message ?? '', /^Compacted topic cannot accept message without key in topic partition t-0$/);
    return true;
  });
  // LogAppendTime claimed by a producer on a LogAppendTime topic: one error per record.
  const lat = buildRecordBatch({ records: [{ key: 'ab', value: 'v' }, { key: null, value: null }], logAppendTime: true, timestamp: now });
  assert.throws(() => validateBatchForAppend(lat, 0, MAX, { logAppendTimeTopic: true }), (e: unknown) => {
    assert.ok(e instanceof RecordValidationError);
    assert.deepEqual(e.recordErrors, [
      { batchIndex: 0, message: `Invalid timestamp type in message DefaultRecord(offset=0, timestamp=${now}, key=2 bytes, value=1 bytes). Producer should not set timestamp type to LogAppendTime.` },
      { batchIndex: 1, message: `Invalid timestamp type in message DefaultRecord(offset=1, timestamp=${now}, key=0 bytes, value=0 bytes). Producer should not set timestamp type to LogAppendTime.` },
    ]);
    return true;
  });
  // Only the first three appear in the message; all are listed.
  const keyless = batch({ records: Array.from({ length: 5 }, () => ({ key: null, value: 'v' })) });
  assert.throws(() => validateBatchForAppend(keyless, 0, MAX, { compacted: true, topicPartition: 'c-1' }), (e: unknown) => {
    assert.ok(e instanceof RecordValidationError);
    assert.equal(e.recordErrors.length, 5);
    assert.match(e.message, /^One or more records have been rejected due to 5 record errors in total, and only showing the first three errors at most: \[RecordError\(batchIndex=0, .*RecordError\(batchIndex=2, message='Compacted topic cannot accept message without key in topic partition c-1'\)\]$/);
    assert.doesNotMatch(e.message, /batchIndex=3/);
    return true;
  });
});
