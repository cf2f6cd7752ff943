import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ErrorCode, KafkaError } from '../../../broker/protocol/errors.js';
import {
  BATCH_HEADER_SIZE,
  COMPRESSION_TYPES,
  CorruptBatchError,
  OFFSET_ATTRIBUTES,
  OFFSET_CRC,
  assignBaseOffset,
  assignPartitionLeaderEpoch,
  batchCrcValid,
  buildEndTxnMarkerBatch,
  buildRecordBatch,
  decodeRecordBatch,
  decodeRecordBatches,
  isControl,
  isLogAppendTime,
  isTransactional,
  iterateBatches,
  readBatchHeader,
  stampLogAppendTime,
} from '../../../broker/protocol/record-batch.js';
import { decodeControlRecordKey, decodeEndTxnMarkerValue, type RecordInput } from '../../../broker/protocol/records.js';

const codeOf = (code: number) => (err: unknown): boolean => err instanceof KafkaError && err.code === code;

const arbInput: fc.Arbitrary<RecordInput> = fc.record({
  key: fc.option(fc.uint8Array({ maxLength: 32 }).map((a) => Buffer.from(a)), { nil: null }),
  value: fc.option(fc.uint8Array({ maxLength: 400 }).map((a) => Buffer.from(a)), { nil: null }),
  headers: fc.array(
    fc.record({
      key: fc.string({ maxLength: 10 }),
      value: fc.option(fc.uint8Array({ maxLength: 20 }).map((a) => Buffer.from(a)), { nil: null }),
    }),
    { maxLength: 3 },
  ),
  timestamp: fc.bigInt({ min: 0n, max: 4_000_000_000_000n }),
});

test('buildRecordBatch writes the v2 header Kafka expects (known answer)', () => {
  const buf = buildRecordBatch({
    baseOffset: 42n,
    partitionLeaderEpoch: 3,
    records: [{ key: 'k', value: 'v', timestamp: 1000 }, { value: 'w', timestamp: 1005 }],
    producerId: 9n,
    producerEpoch: 2,
    baseSequence: 17,
    transactional: true,
  });
  const h = readBatchHeader(buf);
  assert.equal(h.baseOffset, 42n);
  assert.equal(h.batchLength, buf.length - 12);
  assert.equal(h.partitionLeaderEpoch, 3);
  assert.equal(h.magic, 2);
  assert.equal(h.attributes, 0x10);
  assert.equal(h.lastOffsetDelta, 1);
  assert.equal(h.baseTimestamp, 1000n);
  assert.equal(h.maxTimestamp, 1005n);
  assert.equal(h.producerId, 9n);
  assert.equal(h.producerEpoch, 2);
  assert.equal(h.baseSequence, 17);
  assert.equal(h.recordsCount, 2);
  assert.ok(batchCrcValid(buf, 0, h));
  // len attr tsΔ offΔ key       value     headers
  const record1 = '10 00 00 00 02 6b 02 76 00';
  const record2 = '0e 00 0a 02 01 02 77 00';
  assert.equal(buf.subarray(BATCH_HEADER_SIZE).toString('hex'), (record1 + record2).replace(/ /g, ''));
});

for (const compression of COMPRESSION_TYPES) {
  test(`${compression}: build -> decode round-trips records, offsets and timestamps (property)`, () => {
    fc.assert(
      fc.property(
        fc.array(arbInput, { minLength: 1, maxLength: 12 }),
        fc.bigInt({ min: 0n, max: 2n ** 62n }),
        (records, baseOffset) => {
          const buf = buildRecordBatch({ baseOffset, records, compression });
          const d = decodeRecordBatch(buf);
          assert.equal(d.compression, compression);
          assert.equal(d.records.length, records.length);
          const tss = records.map((r) => BigInt(r.timestamp ?? 0));
          assert.equal(d.header.maxTimestamp, tss.reduce((a, b) => (b > a ? b : a)));
          d.records.forEach((r, i) => {
            const input = records[i] as RecordInput;
            assert.equal(r.offset, baseOffset + BigInt(i));
            assert.equal(r.timestamp, tss[i]);
            assert.deepEqual(r.key === null ? null : Buffer.from(r.key), input.key);
            assert.deepEqual(r.value === null ? null : Buffer.from(r.value), input.value);
            assert.deepEqual(
              r.headers.map((h) => [h.key, h.value === null ? null : Buffer.from(h.value)]),
              (input.headers ?? []).map((h) => [h.key, h.value]),
            );
          });
        },
      ),
      { numRuns: compression === 'none' ? 200 : 60 },
    );
  });
}

test('any single-bit flip in the CRC-covered area (attributes..end) is detected', () => {
  for (const compression of COMPRESSION_TYPES) {
    const buf = buildRecordBatch({
      records: [{ key: 'key', value: 'value-'.repeat(10), headers: [{ key: 'h', value: 'x' }], timestamp: 5 }, { value: null }],
      compression,
      producerId: 1n,
      producerEpoch: 0,
      baseSequence: 0,
    });
    for (let byte = OFFSET_ATTRIBUTES; byte < buf.length; byte++) {
      for (let bit = 0; bit < 8; bit++) {
        const copy = Buffer.from(buf);
        copy[byte] = (copy[byte] as number) ^ (1 << bit);
        assert.equal(batchCrcValid(copy, 0, readBatchHeader(copy)), false, `${compression} byte ${byte} bit ${bit}`);
      }
    }
    // The stored CRC itself: any flip there mismatches too.
    for (let bit = 0; bit < 32; bit++) {
      const copy = Buffer.from(buf);
      copy.writeUInt32BE((copy.readUInt32BE(OFFSET_CRC) ^ (1 << bit)) >>> 0, OFFSET_CRC);
      assert.equal(batchCrcValid(copy, 0, readBatchHeader(copy)), false);
    }
  }
});

test('offset assignment and leader epoch rewrite leave the CRC valid; LogAppendTime restamps it', () => {
  const buf = buildRecordBatch({ records: [{ value: 'a', timestamp: 10 }, { value: 'b', timestamp: 20 }] });
  assignBaseOffset(buf, 0, 1000n);
  assignPartitionLeaderEpoch(buf, 0, 12);
  assert.equal(readBatchHeader(buf).partitionLeaderEpoch, 12);
  assert.ok(batchCrcValid(buf, 0, readBatchHeader(buf)));
  stampLogAppendTime(buf, 0, buf.length, 99n);
  const d = decodeRecordBatch(buf);
  assert.ok(isLogAppendTime(d.header.attributes));
  assert.deepEqual(d.records.map((r) => [r.offset, r.timestamp]), [[1000n, 99n], [1001n, 99n]]);
});

test('end-transaction marker batches are control + transactional with one control record', () => {
  const buf = buildEndTxnMarkerBatch({ type: 'COMMIT', coordinatorEpoch: 5, producerId: 77n, producerEpoch: 3, timestamp: 1234 });
  const d = decodeRecordBatch(buf);
  assert.ok(isControl(d.header.attributes) && isTransactional(d.header.attributes));
  assert.equal(d.header.producerId, 77n);
  assert.equal(d.header.baseSequence, -1);
  assert.equal(d.records.length, 1);
  const r = d.records[0];
  assert.ok(r !== undefined);
  assert.deepEqual(decodeControlRecordKey(r.key), { version: 0, type: 1 });
  assert.deepEqual(decodeEndTxnMarkerValue(r.value), { version: 0, coordinatorEpoch: 5 });
  assert.equal(r.timestamp, 1234n);
});

test('records without timestamps get NO_TIMESTAMP; explicit base timestamp and deltas are honoured', () => {
  const none = decodeRecordBatch(buildRecordBatch({ records: [{ value: 'x' }] }));
  assert.equal(none.header.baseTimestamp, -1n);
  assert.equal(none.records[0]?.timestamp, -1n);
  const deltas = decodeRecordBatch(buildRecordBatch({ timestamp: 100, records: [{ timestampDelta: 0 }, { timestampDelta: 7 }] }));
  assert.deepEqual(deltas.records.map((r) => r.timestamp), [100n, 107n]);
  assert.equal(deltas.header.maxTimestamp, 107n);
});

test('iterateBatches walks headers only and reports a truncated tail at every cut point', () => {
  const batches = [0n, 3n, 10n].map((baseOffset, i) =>
    buildRecordBatch({ baseOffset, records: Array.from({ length: i + 1 }, (_, j) => ({ value: `v${j}` })), compression: i === 1 ? 'zstd' : 'none' }),
  );
  const all = Buffer.concat(batches);
  const seen = [...iterateBatches(all)];
  assert.deepEqual(seen.map((b) => [b.position, b.size, b.header.baseOffset]), [
    [0, batches[0]?.length, 0n],
    [batches[0]?.length, batches[1]?.length, 3n],
    [(batches[0]?.length ?? 0) + (batches[1]?.length ?? 0), batches[2]?.length, 10n],
  ]);
  const whole = iterateBatches(all);
  assert.equal([...whole].length, 3);
  assert.equal(whole.truncated, undefined);
  assert.equal(whole.validEnd, all.length);

  const firstTwo = (batches[0]?.length ?? 0) + (batches[1]?.length ?? 0);
  for (let cut = firstTwo + 1; cut < all.length; cut++) {
    const scan = iterateBatches(all.subarray(0, cut));
    assert.equal([...scan].length, 2, `cut ${cut}`);
    assert.equal(scan.validEnd, firstTwo);
    assert.deepEqual(scan.truncated, {
      position: firstTwo,
      available: cut - firstTwo,
      needed: cut - firstTwo >= 12 ? batches[2]?.length : undefined,
    });
  }
  // A window inside a larger buffer.
  const inner = iterateBatches(all, batches[0]?.length, firstTwo);
  assert.deepEqual([...inner].map((b) => b.header.baseOffset), [3n]);
  assert.equal(decodeRecordBatches(all).length, 3);
});

test('iterateBatches throws CorruptBatchError on impossible framing, keeping the good prefix', () => {
  const a = buildRecordBatch({ records: [{ value: 'a' }] });
  const b = buildRecordBatch({ baseOffset: 1n, records: [{ value: 'b' }] });
  const small = Buffer.concat([a, b]);
  small.writeInt32BE(20, a.length + 8);
  const scan = iterateBatches(small);
  assert.throws(() => [...scan], (e: unknown) => e instanceof CorruptBatchError && e.position === a.length && e.code === ErrorCode.CORRUPT_MESSAGE);
  assert.equal(scan.validEnd, a.length);
  const magic = Buffer.concat([a, b]);
  magic.writeInt8(1, a.length + 16);
  assert.throws(() => [...iterateBatches(magic)], CorruptBatchError);
  assert.throws(() => [...iterateBatches(Buffer.concat([a, b]), 0, undefined, a.length - 1)], CorruptBatchError);
});

test('decodeRecordBatch rejects a bad CRC, a truncated batch and a lying record count', () => {
  const buf = buildRecordBatch({ records: [{ value: 'a' }, { value: 'b' }], compression: 'gzip' });
  const flipped = Buffer.from(buf);
  flipped[buf.length - 1] = (flipped[buf.length - 1] as number) ^ 1;
  assert.throws(() => decodeRecordBatch(flipped), codeOf(ErrorCode.CORRUPT_MESSAGE));
  assert.throws(() => decodeRecordBatch(buf.subarray(0, buf.length - 1)), codeOf(ErrorCode.CORRUPT_MESSAGE));
  const lying = Buffer.from(buf);
  lying.writeInt32BE(3, 57);
  assert.throws(() => decodeRecordBatch(lying, 0, { verifyCrc: false }), codeOf(ErrorCode.INVALID_RECORD));
});

test('mutated batches decode or fail with a KafkaError, never a raw exception (property)', () => {
  const seeds = COMPRESSION_TYPES.map((compression) =>
    buildRecordBatch({ compression, records: [{ key: 'k', value: 'v'.repeat(50), headers: [{ key: 'h', value: 'x' }] }, { value: 'w' }] }),
  );
  fc.assert(
    fc.property(
      fc.constantFrom(...seeds),
      fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 4 }),
      fc.nat(),
      (seed, edits, cut) => {
        const buf = Buffer.from(seed);
        for (const [at, byte] of edits) buf[BATCH_HEADER_SIZE - 4 + (at % (buf.length - BATCH_HEADER_SIZE + 4))] = byte;
        const sliced = buf.subarray(0, buf.length - (cut % 3));
        try {
          decodeRecordBatch(sliced, 0, { verifyCrc: false, maxDecompressedBytes: 1 << 20 });
        } catch (err) {
          assert.ok(err instanceof KafkaError, String(err));
        }
      },
    ),
    { numRuns: 2000 },
  );
});
