// The per-batch rewrite of the cleaner, on bytes.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  ATTR_DELETE_HORIZON,
  type BatchFilter,
  deleteHorizonOf,
  filterBatch,
} from '../../../../broker/log/cleaner/batch-filter.js';
import {
  COMPRESSION_TYPES,
  type DecodedRecord,
  buildEndTxnMarkerBatch,
  buildRecordBatch,
  decodeRecordBatch,
} from '../../../../broker/protocol/record-batch.js';

const TS = 1_700_000_000_000;

function sample(compression: (typeof COMPRESSION_TYPES)[number] = 'none', extra: Partial<Parameters<typeof buildRecordBatch>[0]> = {}): Buffer {
  return buildRecordBatch({
    records: [
      { key: 'a', value: 'a1', timestamp: TS, headers: [{ key: 'h', value: 'x' }] },
      { key: 'b', value: 'b1', timestamp: TS + 5 },
      { key: 'a', value: 'a2', timestamp: TS + 9 },
      { key: 'c', value: null, timestamp: TS + 12 },
    ],
    baseOffset: 1000n,
    partitionLeaderEpoch: 7,
    producerId: 42n,
    producerEpoch: 3,
    baseSequence: 17,
    compression,
    ...extra,
  });
}

function filter(keep: (r: DecodedRecord) => boolean, over: Partial<BatchFilter> = {}): BatchFilter {
  return { retention: 'deleteEmpty', markerForEmptyTxn: false, newDeleteHorizonMs: BigInt(TS + 86_400_000), keepRecord: keep, ...over };
}

describe('filterBatch', () => {
  it('returns the very same bytes when every record stays and there is no tombstone', () => {
    const b = buildRecordBatch({ records: [{ key: 'a', value: '1' }, { key: 'b', value: '2' }], baseOffset: 5n });
    const out = filterBatch(b, filter(() => true));
    assert.equal(out.kind, 'original');
    assert.equal(out.output, b);
  });

  for (const codec of COMPRESSION_TYPES) {
    it(`re-encodes the retained records keeping offsets, producer fields, timestamps and the ${codec} codec`, () => {
      const b = sample(codec);
      const before = decodeRecordBatch(b);
      const out = filterBatch(b, filter((r) => r.offset === 1001n || r.offset === 1002n));
      assert.equal(out.kind, 'rewritten');
      assert.equal(out.recordsRead, 4);
      assert.equal(out.recordsRetained, 2);
      const after = decodeRecordBatch(out.output as Buffer); // verifies the CRC
      assert.equal(after.compression, codec);
      assert.equal(after.header.baseOffset, 1000n);
      assert.equal(after.header.lastOffsetDelta, 3, 'the last offset (and so the last sequence) is kept');
      assert.equal(after.header.partitionLeaderEpoch, 7);
      assert.equal(after.header.producerId, 42n);
      assert.equal(after.header.producerEpoch, 3);
      assert.equal(after.header.baseSequence, 17);
      assert.equal(after.header.baseTimestamp, before.header.baseTimestamp);
      assert.equal(after.header.maxTimestamp, BigInt(TS + 9));
      assert.deepEqual(
        after.records.map((r) => [r.offset, r.offsetDelta, r.timestamp, r.key?.toString(), r.value?.toString()]),
        [
          [1001n, 1, BigInt(TS + 5), 'b', 'b1'],
          [1002n, 2, BigInt(TS + 9), 'a', 'a2'],
        ],
      );
    });
  }

  it('stamps a delete horizon on a batch keeping a tombstone, record timestamps unchanged', () => {
    const b = sample('lz4');
    const out = filterBatch(b, filter((r) => r.offset >= 1002n));
    assert.equal(out.kind, 'rewritten');
    assert.equal(out.holdsRemovable, true);
    const after = decodeRecordBatch(out.output as Buffer);
    assert.ok((after.header.attributes & ATTR_DELETE_HORIZON) !== 0);
    assert.equal(deleteHorizonOf(after.header), BigInt(TS + 86_400_000));
    assert.equal(out.deleteHorizonMs, BigInt(TS + 86_400_000));
    assert.deepEqual(
      after.records.map((r) => [r.offset, r.timestamp, r.value?.toString() ?? null]),
      [
        [1002n, BigInt(TS + 9), 'a2'],
        [1003n, BigInt(TS + 12), null],
      ],
    );
  });

  it('rewrites a batch whose records all stay when a tombstone first needs its horizon, and keeps an existing horizon', () => {
    const b = buildRecordBatch({ records: [{ key: 'x', value: null, timestamp: TS }], baseOffset: 9n });
    const first = filterBatch(b, filter(() => true));
    assert.equal(first.kind, 'rewritten');
    const stamped = first.output as Buffer;
    const again = filterBatch(stamped, filter(() => true, { newDeleteHorizonMs: BigInt(TS + 999_999_999) }));
    assert.equal(again.kind, 'original');
    assert.equal(deleteHorizonOf(decodeRecordBatch(again.output as Buffer).header), BigInt(TS + 86_400_000));
  });

  it('drops an emptied batch, or keeps a bare header with its offsets and producer fields', () => {
    const b = sample('zstd', { transactional: true });
    assert.equal(filterBatch(b, filter(() => false)).kind, 'dropped');
    assert.equal(filterBatch(b, filter(() => true, { retention: 'delete' })).output, null);
    const kept = filterBatch(b, filter(() => false, { retention: 'retainEmpty' }));
    assert.equal(kept.kind, 'empty');
    assert.equal((kept.output as Buffer).length, 61);
    const h = decodeRecordBatch(kept.output as Buffer).header;
    assert.equal(h.recordsCount, 0);
    assert.equal(h.baseOffset, 1000n);
    assert.equal(h.lastOffsetDelta, 3);
    assert.equal(h.producerId, 42n);
    assert.equal(h.baseSequence, 17);
    assert.equal(h.attributes & 0x10, 0x10, 'still transactional');
    assert.equal(h.attributes & 0x07, 0, 'an empty batch is uncompressed');
  });

  it('keeps the append time of a LogAppendTime batch', () => {
    const b = buildRecordBatch({
      records: [{ key: 'a', value: '1' }, { key: 'a', value: '2' }],
      baseOffset: 0n,
      logAppendTime: true,
      timestamp: TS + 500,
    });
    const out = filterBatch(b, filter((r) => r.offset === 1n));
    const h = decodeRecordBatch(out.output as Buffer).header;
    assert.equal(h.attributes & 0x08, 0x08);
    assert.equal(h.maxTimestamp, BigInt(TS + 500));
  });

  it('gives a retained marker of an emptied transaction a horizon', () => {
    const m = buildEndTxnMarkerBatch({ type: 'COMMIT', coordinatorEpoch: 0, producerId: 5n, producerEpoch: 0, timestamp: TS, baseOffset: 30n });
    const out = filterBatch(m, filter(() => true, { markerForEmptyTxn: true }));
    assert.equal(out.kind, 'rewritten');
    const h = decodeRecordBatch(out.output as Buffer).header;
    assert.equal(h.attributes & 0x20, 0x20);
    assert.equal(deleteHorizonOf(h), BigInt(TS + 86_400_000));
    assert.equal(filterBatch(m, filter(() => true)).kind, 'original');
  });
});
