import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  VarintError,
  cursor,
  readVarint,
  readVarlong,
  sizeOfVarint,
  sizeOfVarlong,
  skipVarint,
  writeVarint,
  writeVarlong,
} from '../../../broker/protocol/varint.js';

const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ''), 'hex');

test('varint known answers match Kafka ByteUtils (zig-zag)', () => {
  const cases: Array<[number, string]> = [
    [0, '00'],
    [-1, '01'],
    [1, '02'],
    [-64, '7f'],
    [64, '8001'],
    [300, 'd804'],
    [2147483647, 'feffffff0f'],
    [-2147483648, 'ffffffff0f'],
  ];
  for (const [n, h] of cases) {
    const buf = Buffer.alloc(5);
    const end = writeVarint(buf, 0, n);
    assert.equal(buf.subarray(0, end).toString('hex'), h, `encode ${n}`);
    assert.equal(sizeOfVarint(n), end);
    assert.equal(readVarint(cursor(hex(h))), n, `decode ${h}`);
  }
});

test('varlong known answers cover the full int64 range', () => {
  const cases: Array<[bigint, string]> = [
    [0n, '00'],
    [-1n, '01'],
    [1700000000000n, '80a0abfef962'],
    [9223372036854775807n, 'feffffffffffffffff01'],
    [-9223372036854775808n, 'ffffffffffffffffff01'],
  ];
  for (const [n, h] of cases) {
    const buf = Buffer.alloc(10);
    const end = writeVarlong(buf, 0, n);
    assert.equal(buf.subarray(0, end).toString('hex'), h, `encode ${n}`);
    assert.equal(sizeOfVarlong(n), end);
    assert.equal(readVarlong(cursor(hex(h))), n, `decode ${h}`);
  }
});

test('varint round-trips any int32 and advances exactly its size', () => {
  fc.assert(
    fc.property(fc.integer({ min: -2147483648, max: 2147483647 }), (n) => {
      const buf = Buffer.alloc(6, 0xaa);
      const end = writeVarint(buf, 0, n);
      const c = cursor(buf);
      assert.equal(readVarint(c), n);
      assert.equal(c.pos, end);
      assert.equal(sizeOfVarint(n), end);
      const s = cursor(buf);
      skipVarint(s, 5);
      assert.equal(s.pos, end);
    }),
    { numRuns: 2000 },
  );
});

test('varlong round-trips any int64', () => {
  fc.assert(
    fc.property(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), (n) => {
      const buf = Buffer.alloc(11, 0xaa);
      const end = writeVarlong(buf, 0, n);
      const c = cursor(buf);
      assert.equal(readVarlong(c), n);
      assert.equal(c.pos, end);
      assert.equal(sizeOfVarlong(n), end);
    }),
    { numRuns: 2000 },
  );
});

test('overlong and truncated varints are rejected without moving the cursor past the end', () => {
  assert.throws(() => readVarint(cursor(hex('ffffffffff01'))), VarintError);
  assert.throws(() => readVarlong(cursor(hex('ffffffffffffffffffff01'))), VarintError);
  assert.throws(() => readVarint(cursor(hex('8080'))), VarintError);
  assert.throws(() => readVarlong(cursor(hex('80808080'))), VarintError);
  // `end` bounds the read even when the buffer continues.
  assert.throws(() => readVarint(cursor(hex('8001'), 0, 1)), VarintError);
});
