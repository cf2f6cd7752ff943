import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ErrorCode, KafkaError } from '../../../broker/protocol/errors.js';
import {
  ControlRecordType,
  type KafkaRecord,
  type ResolvedRecord,
  decodeControlRecordKey,
  decodeEndTxnMarkerValue,
  encodeControlRecordKey,
  encodeEndTxnMarkerValue,
  encodeRecords,
  readRecord,
  readRecords,
  resolveRecord,
  scanRecord,
  sizeOfRecord,
  writeRecord,
} from '../../../broker/protocol/records.js';
import { cursor } from '../../../broker/protocol/varint.js';

const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ''), 'hex');

const isInvalidRecord = (err: unknown): boolean => err instanceof KafkaError && err.code === ErrorCode.INVALID_RECORD;

export const arbRecord: fc.Arbitrary<ResolvedRecord> = fc.record({
  attributes: fc.constant(0),
  timestampDelta: fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
  offsetDelta: fc.integer({ min: 0, max: 2147483647 }),
  key: fc.option(fc.uint8Array({ maxLength: 64 }).map((a) => Buffer.from(a)), { nil: null }),
  value: fc.option(fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a)), { nil: null }),
  headers: fc.array(
    fc.record({
      key: fc.string({ maxLength: 20, unit: 'grapheme' }),
      value: fc.option(fc.uint8Array({ maxLength: 40 }).map((a) => Buffer.from(a)), { nil: null }),
    }),
    { maxLength: 4 },
  ),
});

function plain(r: KafkaRecord): unknown {
  return {
    ...r,
    key: r.key === null ? null : Buffer.from(r.key),
    value: r.value === null ? null : Buffer.from(r.value),
    headers: r.headers.map((h) => ({ key: h.key, value: h.value === null ? null : Buffer.from(h.value) })),
  };
}

test('a record encodes to the bytes Kafka DefaultRecord writes (known answer)', () => {
  // key "k", value "v", one header ("h" -> null), timestampDelta 5, offsetDelta 1
  const r = resolveRecord({ key: 'k', value: 'v', headers: [{ key: 'h', value: null }], offsetDelta: 1 }, 0, 5n);
  const bytes = encodeRecords([r]);
  //          len attr tsΔ  offΔ klen k   vlen v   hcnt hklen h  hvlen
  assert.equal(bytes.toString('hex'), ['16', '00', '0a', '02', '02', '6b', '02', '76', '02', '02', '68', '01'].join(''));
  assert.equal(sizeOfRecord(r), bytes.length);
});

test('records round-trip through encode/decode (property)', () => {
  fc.assert(
    fc.property(fc.array(arbRecord, { maxLength: 8 }), (records) => {
      const buf = encodeRecords(records);
      const decoded = readRecords(buf, records.length);
      assert.deepEqual(decoded.map(plain), records.map((r) => plain(r)));
    }),
    { numRuns: 500 },
  );
});

test('writeRecord at an offset returns the end position; readRecord advances to it', () => {
  fc.assert(
    fc.property(arbRecord, fc.integer({ min: 0, max: 16 }), (r, at) => {
      const buf = Buffer.alloc(at + sizeOfRecord(r) + 3, 0xee);
      const end = writeRecord(buf, at, r);
      assert.equal(end, at + sizeOfRecord(r));
      const c = cursor(buf, at, end);
      readRecord(c);
      assert.equal(c.pos, end);
      const s = cursor(buf, at, end);
      const summary = scanRecord(s);
      assert.equal(s.pos, end);
      assert.equal(summary.offsetDelta, r.offsetDelta);
      assert.equal(summary.hasKey, r.key !== null);
      assert.equal(summary.keySize, r.key === null ? -1 : r.key.length);
      assert.equal(summary.valueSize, r.value === null ? -1 : r.value.length);
    }),
    { numRuns: 300 },
  );
});

test('decoding arbitrary bytes either succeeds or raises INVALID_RECORD, never anything else', () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 64 }), fc.integer({ min: 0, max: 4 }), (bytes, count) => {
      try {
        readRecords(Buffer.from(bytes), count);
      } catch (err) {
        assert.ok(isInvalidRecord(err), String(err));
      }
    }),
    { numRuns: 3000 },
  );
});

test('truncating or padding an encoded record is detected', () => {
  fc.assert(
    fc.property(arbRecord, (r) => {
      const buf = encodeRecords([r]);
      for (let cut = 0; cut < buf.length; cut++) {
        assert.throws(() => readRecords(buf.subarray(0, cut), 1), isInvalidRecord);
      }
      assert.throws(() => readRecords(Buffer.concat([buf, Buffer.from([0])]), 1), isInvalidRecord);
    }),
    { numRuns: 100 },
  );
});

test('structural errors Kafka rejects are INVALID_RECORD', () => {
  // declared length 3 but the fields need more
  assert.throws(() => readRecords(hex('06 00 00 00'), 1), isInvalidRecord);
  // negative record length, and one larger than the batch body
  assert.throws(() => readRecords(hex('7f 00'), 1), isInvalidRecord);
  assert.throws(() => readRecords(hex('7e 00'), 1), isInvalidRecord);
  // negative header count
  assert.throws(() => readRecords(hex('0c 00 00 00 01 01 01'), 1), isInvalidRecord);
  // null header key (length -1)
  assert.throws(() => readRecords(hex('10 00 00 00 01 01 02 01 01'), 1), isInvalidRecord);
  // key length -2
  assert.throws(() => readRecords(hex('0c 00 00 00 03 01 00'), 1), isInvalidRecord);
  // a record length field longer than 5 bytes
  assert.throws(() => readRecords(hex('ffffffffff01'), 1), isInvalidRecord);
  // fewer records than declared, and a count no buffer could hold
  const one = encodeRecords([resolveRecord({ value: 'x' }, 0, 0n)]);
  assert.throws(() => readRecords(one, 2), isInvalidRecord);
  assert.throws(() => readRecords(one, 1_000_000), isInvalidRecord);
  assert.throws(() => readRecords(one, -1), isInvalidRecord);
});

test('control record key and end-transaction marker value (known answers)', () => {
  assert.equal(encodeControlRecordKey(ControlRecordType.COMMIT).toString('hex'), '00000001');
  assert.equal(encodeControlRecordKey(ControlRecordType.ABORT).toString('hex'), '00000000');
  assert.equal(encodeEndTxnMarkerValue(7).toString('hex'), '000000000007');
  assert.deepEqual(decodeControlRecordKey(hex('00000001')), { version: 0, type: 1 });
  assert.deepEqual(decodeEndTxnMarkerValue(hex('0000 7fffffff')), { version: 0, coordinatorEpoch: 2147483647 });
  // Newer versions carry trailing fields; the known prefix still parses.
  assert.deepEqual(decodeEndTxnMarkerValue(hex('0001 00000003 ff')), { version: 1, coordinatorEpoch: 3 });
  assert.throws(() => decodeControlRecordKey(hex('0000')), isInvalidRecord);
  assert.throws(() => decodeControlRecordKey(null), isInvalidRecord);
  assert.throws(() => decodeControlRecordKey(hex('ffff0000')), isInvalidRecord);
  assert.throws(() => decodeEndTxnMarkerValue(hex('000000')), isInvalidRecord);
});

test('scanRecord accepts and rejects exactly what readRecord does (property)', () => {
  const mutated = fc
    .tuple(arbRecord, fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 3 }))
    .map(([r, edits]) => {
      const buf = Buffer.from(encodeRecords([r]));
      for (const [at, byte] of edits) if (buf.length > 0) buf[at % buf.length] = byte;
      return buf;
    });
  fc.assert(
    fc.property(fc.oneof(mutated, fc.uint8Array({ maxLength: 40 }).map((a) => Buffer.from(a))), (buf) => {
      const a = cursor(buf);
      const b = cursor(buf);
      let readErr: unknown;
      let scanErr: unknown;
      let read: KafkaRecord | undefined;
      try {
        read = readRecord(a);
      } catch (err) {
        readErr = err;
      }
      try {
        const s = scanRecord(b);
        assert.ok(read !== undefined);
        assert.equal(s.offsetDelta, read.offsetDelta);
        assert.equal(s.timestampDelta, read.timestampDelta);
        assert.equal(s.hasKey, read.key !== null);
      } catch (err) {
        scanErr = err;
      }
      assert.equal(scanErr === undefined, readErr === undefined, `read: ${String(readErr)} scan: ${String(scanErr)}`);
      if (scanErr !== undefined) assert.ok(isInvalidRecord(scanErr), String(scanErr));
      assert.equal(a.pos, b.pos);
      assert.equal(a.end, b.end);
    }),
    { numRuns: 3000 },
  );
});
