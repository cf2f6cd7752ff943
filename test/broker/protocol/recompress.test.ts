// Rebuilding batches in a topic's compression.type: records decode identically,
// producer state travels in the header, CRC valid; when to rebuild at all.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  COMPRESSION_TYPES,
  buildEndTxnMarkerBatch,
  buildRecordBatch,
  decodeRecordBatch,
  isTransactional,
  validateBatchForAppend,
  type CompressionType,
} from '../../../broker/protocol/record-batch.js';
import { rebuildBatch, targetCodec } from '../../../broker/protocol/recompress.js';

const MAX = 16 * 1024 * 1024;
const codec = fc.constantFrom<CompressionType>(...COMPRESSION_TYPES);
const bytes = (max: number) => fc.uint8Array({ maxLength: max }).map((a) => Buffer.from(a));
const recordArb = fc.record({
  key: fc.option(bytes(40), { nil: null }),
  value: fc.option(bytes(300), { nil: null }),
  headers: fc.array(fc.record({ key: fc.string({ maxLength: 12 }), value: fc.option(bytes(20), { nil: null }) }), { maxLength: 3 }),
  // Timestamps need not grow: a producer's records may go back in time within a batch.
  timestamp: fc.integer({ min: 1_600_000_000_000, max: 1_800_000_000_000 }),
});

test('a rebuilt batch decodes to the same records, keeps producer id, epoch, sequence, transactional flag (property)', () => {
  fc.assert(
    fc.property(
      fc.array(recordArb, { minLength: 1, maxLength: 40 }),
      codec,
      codec,
      fc.record({ producerId: fc.bigInt({ min: -1n, max: 1n << 40n }), producerEpoch: fc.integer({ min: 0, max: 32767 }), baseSequence: fc.integer({ min: 0, max: 1 << 30 }), transactional: fc.boolean() }),
      fc.integer({ min: -5, max: 22 }),
      (records, from, to, producer, zstdLevel) => {
        const source = buildRecordBatch({ records, compression: from, ...producer, baseOffset: 0n, partitionLeaderEpoch: 7 });
        const rebuilt = rebuildBatch(source, 0, source.length, to, { type: to, zstdLevel, gzipLevel: -1 });
        const before = decodeRecordBatch(source);
        const after = decodeRecordBatch(rebuilt); // checks the CRC
        assert.equal(after.compression, to);
        const h = after.header;
        assert.deepEqual(
          [h.producerId, h.producerEpoch, h.baseSequence, isTransactional(h.attributes), h.baseOffset, h.partitionLeaderEpoch, h.lastOffsetDelta, h.recordsCount],
          [before.header.producerId, before.header.producerEpoch, before.header.baseSequence, isTransactional(before.header.attributes), 0n, 7, records.length - 1, records.length],
        );
        // As Kafka's MemoryRecordsBuilder: base timestamp = the first record's, max = the largest.
        assert.equal(h.baseTimestamp, BigInt(records[0]!.timestamp));
        assert.equal(h.maxTimestamp, BigInt(Math.max(...records.map((r) => r.timestamp))));
        const view = (d: typeof before) => d.records.map((r) => ({ offset: r.offset, timestamp: r.timestamp, key: r.key, value: r.value, headers: r.headers }));
        assert.deepEqual(view(after), view(before));
        // A client batch as validated on append.
        assert.equal(validateBatchForAppend(rebuilt, 0, MAX, { level: 'deep' }).compression, to);
      },
    ),
    { numRuns: 150 },
  );
});

test('a compressed batch with non-consecutive offset deltas is flagged for a rebuild, which numbers them 0, 1, 2', () => {
  const skewed = buildRecordBatch({ records: [{ value: 'a', offsetDelta: 0 }, { value: 'b', offsetDelta: 5 }, { value: 'c', offsetDelta: 6 }], lastOffsetDelta: 2, compression: 'lz4' });
  const v = validateBatchForAppend(skewed, 0, MAX, { level: 'deep' });
  assert.equal(v.rebuild, true);
  assert.equal(targetCodec({ type: 'producer' }, { compression: v.compression, attributes: v.header.attributes, rebuild: true }), 'lz4');
  const fixed = rebuildBatch(skewed, 0, skewed.length, 'lz4');
  assert.deepEqual(decodeRecordBatch(fixed).records.map((r) => [r.offsetDelta, r.value?.toString()]), [[0, 'a'], [1, 'b'], [2, 'c']]);
  assert.equal(validateBatchForAppend(fixed, 0, MAX, { level: 'deep' }).rebuild, undefined);
});

test('targetCodec: rebuild only when the topic names another codec; producer keeps every batch; uncompressed markers stay', () => {
  const attrs = 0;
  for (const c of COMPRESSION_TYPES) {
    assert.equal(targetCodec(undefined, { compression: c, attributes: attrs }), null, `no config, ${c}`);
    assert.equal(targetCodec({ type: 'producer' }, { compression: c, attributes: attrs }), null, `producer, ${c}`);
    for (const t of COMPRESSION_TYPES) {
      assert.equal(targetCodec({ type: t }, { compression: c, attributes: attrs }), t === c ? null : t, `${t} topic, ${c} batch`);
    }
  }
  const marker = buildEndTxnMarkerBatch({ type: 'COMMIT', coordinatorEpoch: 0, producerId: 1n, producerEpoch: 0, timestamp: 1 });
  assert.equal(targetCodec({ type: 'zstd' }, { compression: 'none', attributes: marker.readInt16BE(21) }), null);
});

test('compression levels reach the codec: a zstd level 19 batch of repetitive data is no larger than level 1', () => {
  const records = Array.from({ length: 200 }, (_, i) => ({ key: `k${i % 7}`, value: `value ${i % 13} `.repeat(20), timestamp: 1_700_000_000_000 + i }));
  const source = buildRecordBatch({ records });
  const l1 = rebuildBatch(source, 0, source.length, 'zstd', { type: 'zstd', zstdLevel: 1 });
  const l19 = rebuildBatch(source, 0, source.length, 'zstd', { type: 'zstd', zstdLevel: 19 });
  assert.ok(l19.length <= l1.length, `${l19.length} <= ${l1.length}`);
  assert.ok(l1.length < source.length / 4, 'zstd shrinks repetitive records');
  const g9 = rebuildBatch(source, 0, source.length, 'gzip', { type: 'gzip', gzipLevel: 9 });
  const g1 = rebuildBatch(source, 0, source.length, 'gzip', { type: 'gzip', gzipLevel: 1 });
  assert.ok(g9.length <= g1.length, `${g9.length} <= ${g1.length}`);
});
