// Primitive codecs: known answers, property round-trips, hostile input.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { ErrorCode, KafkaError, ProtocolDecodeError } from '../../../broker/protocol/errors.js';
import { Reader, ZERO_UUID } from '../../../broker/protocol/reader.js';
import { RAW_REF_MIN_BYTES, Writer, sizeOfUVarint } from '../../../broker/protocol/writer.js';

function bytes(fn: (w: Writer) => void): Buffer {
  const w = new Writer(16);
  fn(w);
  return w.toBuffer();
}

const hex = (b: Buffer): string => b.toString('hex');

test('varints: known answers', () => {
  assert.equal(hex(bytes((w) => w.writeUVarint(0))), '00');
  assert.equal(hex(bytes((w) => w.writeUVarint(300))), 'ac02');
  assert.equal(hex(bytes((w) => w.writeUVarint(0xffffffff))), 'ffffffff0f');
  assert.equal(hex(bytes((w) => w.writeVarint(-1))), '01');
  assert.equal(hex(bytes((w) => w.writeVarint(1))), '02');
  assert.equal(hex(bytes((w) => w.writeVarint(-2147483648))), 'ffffffff0f');
  assert.equal(hex(bytes((w) => w.writeVarlong(-1n))), '01');
  assert.equal(hex(bytes((w) => w.writeVarlong(9223372036854775807n))), 'feffffffffffffffff01');
  assert.equal(hex(bytes((w) => w.writeVarlong(-9223372036854775808n))), 'ffffffffffffffffff01');
  assert.equal(new Reader(Buffer.from('ffffffff0f', 'hex')).readUVarint(), 0xffffffff);
  assert.equal(new Reader(Buffer.from('ffffffffffffffffff01', 'hex')).readVarlong(), -9223372036854775808n);
  for (const n of [0, 127, 128, 16383, 16384, 2097151, 2097152, 268435455, 268435456, 0xffffffff]) {
    assert.equal(sizeOfUVarint(n), bytes((w) => w.writeUVarint(n)).length, `size of ${n}`);
  }
});

test('varints: property round-trips', () => {
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 0xffffffff }), (n) => {
      assert.equal(new Reader(bytes((w) => w.writeUVarint(n))).readUVarint(), n);
    }),
  );
  fc.assert(
    fc.property(fc.integer({ min: -2147483648, max: 2147483647 }), (n) => {
      assert.equal(new Reader(bytes((w) => w.writeVarint(n))).readVarint(), n);
    }),
  );
  fc.assert(
    fc.property(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), (n) => {
      const r = new Reader(bytes((w) => w.writeVarlong(n)));
      assert.equal(r.readVarlong(), n);
      assert.equal(r.remaining, 0);
    }),
  );
});

test('varints: too long or truncated is a decode error', () => {
  assert.throws(() => new Reader(Buffer.from('ffffffff1f', 'hex')).readUVarint(), ProtocolDecodeError);
  assert.throws(() => new Reader(Buffer.from('ffffffffff01', 'hex')).readUVarint(), ProtocolDecodeError);
  assert.throws(() => new Reader(Buffer.from('8080', 'hex')).readUVarint(), ProtocolDecodeError);
  assert.throws(() => new Reader(Buffer.from('ffffffffffffffffffff01', 'hex')).readVarlong(), ProtocolDecodeError);
  assert.throws(() => new Reader(Buffer.from('ff', 'hex')).readVarlong(), ProtocolDecodeError);
});

test('fixed-width integers, floats and bools', () => {
  const b = bytes((w) => {
    w.writeInt8(-2);
    w.writeInt16(-3);
    w.writeUInt16(65535);
    w.writeInt32(-4);
    w.writeUInt32(0xfffffffe);
    w.writeInt64(-5n);
    w.writeFloat64(1.5);
    w.writeBool(true);
    w.writeBool(false);
  });
  assert.equal(hex(b), 'fe' + 'fffd' + 'ffff' + 'fffffffc' + 'fffffffe' + 'fffffffffffffffb' + '3ff8000000000000' + '0100');
  const r = new Reader(b);
  assert.deepEqual(
    [r.readInt8(), r.readInt16(), r.readUInt16(), r.readInt32(), r.readUInt32(), r.readInt64(), r.readFloat64(), r.readBool(), r.readBool()],
    [-2, -3, 65535, -4, 0xfffffffe, -5n, 1.5, true, false],
  );
  assert.equal(r.remaining, 0);
});

test('strings: classic and compact, nullable, UTF-8', () => {
  assert.equal(hex(bytes((w) => w.writeNullableString(null))), 'ffff');
  assert.equal(hex(bytes((w) => w.writeString(''))), '0000');
  assert.equal(hex(bytes((w) => w.writeString('ab'))), '00026162');
  assert.equal(hex(bytes((w) => w.writeCompactNullableString(null))), '00');
  assert.equal(hex(bytes((w) => w.writeCompactString(''))), '01');
  assert.equal(hex(bytes((w) => w.writeCompactString('abc'))), '04616263');
  assert.equal(hex(bytes((w) => w.writeCompactString('é'))), '03c3a9');
  assert.equal(new Reader(Buffer.from('00', 'hex')).readCompactNullableString(), null);
  assert.equal(new Reader(Buffer.from('ffff', 'hex')).readNullableString(), null);
  assert.throws(() => new Reader(Buffer.from('00', 'hex')).readCompactString(), ProtocolDecodeError);
  assert.throws(() => new Reader(Buffer.from('ffff', 'hex')).readString(), ProtocolDecodeError);
  // Kafka's generated readers take any negative length of a nullable field as null.
  assert.equal(new Reader(Buffer.from('fffe', 'hex')).readNullableString(), null);
  assert.equal(new Reader(Buffer.from('8000', 'hex')).readNullableString(), null);
  assert.throws(() => new Reader(Buffer.from('fffe', 'hex')).readString(), ProtocolDecodeError);
  assert.throws(() => new Reader(Buffer.from('0005616263', 'hex')).readString(), /Truncated/);
  fc.assert(
    fc.property(fc.string({ unit: 'grapheme', maxLength: 40 }), (s) => {
      const b = bytes((w) => {
        w.writeString(s);
        w.writeCompactString(s);
      });
      const r = new Reader(b);
      assert.equal(r.readString(), s);
      assert.equal(r.readCompactString(), s);
    }),
  );
  assert.throws(() => bytes((w) => w.writeString('x'.repeat(32768))), KafkaError);
});

test('bytes are views into the input, not copies', () => {
  const input = Buffer.from('0000000301020304' + '05' + '0a0b0c0d', 'hex');
  const r = new Reader(input);
  const a = r.readBytes();
  assert.deepEqual([...a], [1, 2, 3]);
  assert.equal(a.buffer, input.buffer);
  assert.equal(a.byteOffset, input.byteOffset + 4);
  assert.equal(r.readInt8(), 4);
  const c = r.readCompactBytes();
  assert.deepEqual([...c], [10, 11, 12, 13]);
  assert.equal(c.buffer, input.buffer);
  assert.equal(new Reader(Buffer.from('ffffffff', 'hex')).readNullableBytes(), null);
  assert.equal(new Reader(Buffer.from('00', 'hex')).readCompactNullableBytes(), null);
  assert.equal(new Reader(Buffer.from('fffffffe', 'hex')).readNullableBytes(), null);
  assert.throws(() => new Reader(Buffer.from('fffffffe', 'hex')).readBytes(), ProtocolDecodeError);
  assert.throws(() => new Reader(Buffer.from('7fffffff00', 'hex')).readBytes(), ProtocolDecodeError);
  assert.throws(() => new Reader(Buffer.from('ffffffff0f', 'hex')).readCompactBytes(), ProtocolDecodeError);
});

test('uuids use Kafka base64url form', () => {
  const raw = Buffer.from('000102030405060708090a0b0c0d0e0f', 'hex');
  const s = new Reader(raw).readUuid();
  assert.equal(s, 'AAECAwQFBgcICQoLDA0ODw');
  assert.ok(bytes((w) => w.writeUuid(s)).equals(raw));
  assert.equal(new Reader(Buffer.alloc(16)).readUuid(), ZERO_UUID);
  assert.throws(() => bytes((w) => w.writeUuid('short')), KafkaError);
  assert.throws(() => new Reader(Buffer.alloc(15)).readUuid(), ProtocolDecodeError);
});

test('array lengths are checked against the remaining bytes before allocating', () => {
  const huge = Buffer.from('7fffffff', 'hex');
  assert.throws(() => new Reader(huge).readArray((r) => r.readInt8()), /cannot fit/);
  assert.equal(new Reader(Buffer.from('fffffffe', 'hex')).readNullableArray((r) => r.readInt8()), null);
  assert.throws(() => new Reader(Buffer.from('80000000', 'hex')).readArray((r) => r.readInt8()), ProtocolDecodeError);
  assert.equal(new Reader(Buffer.from('ffffffff', 'hex')).readNullableArray((r) => r.readInt8()), null);
  assert.equal(new Reader(Buffer.from('00', 'hex')).readCompactNullableArray((r) => r.readInt8()), null);
  assert.throws(() => new Reader(Buffer.from('00', 'hex')).readCompactArray((r) => r.readInt8()), ProtocolDecodeError);
  assert.throws(() => new Reader(Buffer.from('ffffffff0f', 'hex')).readCompactArray((r) => r.readInt8()), /cannot fit/);
  assert.deepEqual(new Reader(Buffer.from('04010203', 'hex')).readCompactArray((r) => r.readInt8()), [1, 2, 3]);
});

test('decode errors carry CORRUPT_MESSAGE', () => {
  try {
    new Reader(Buffer.alloc(1)).readInt32();
    assert.fail('expected a throw');
  } catch (e) {
    assert.ok(e instanceof ProtocolDecodeError);
    assert.ok(e instanceof KafkaError);
    assert.equal(e.code, ErrorCode.CORRUPT_MESSAGE);
  }
});

test('sub-readers are bounded and advance the parent', () => {
  const r = new Reader(Buffer.from('0102030405', 'hex'), 1);
  const s = r.sub(2);
  assert.equal(s.readInt16(), 0x0203);
  assert.throws(() => s.readInt8(), ProtocolDecodeError);
  assert.equal(r.readInt8(), 4);
  assert.throws(() => r.sub(5), ProtocolDecodeError);
});

test('writer grows without losing bytes and matches a flat encoding', () => {
  const w = new Writer(16);
  const expected = Buffer.alloc(4 * 100000);
  for (let i = 0; i < 100000; i++) {
    w.writeInt32(i * 7919);
    expected.writeInt32BE(i * 7919, i * 4);
  }
  assert.equal(w.length, expected.length);
  assert.ok(w.toBuffer().equals(expected));
  assert.ok(Buffer.concat(w.toChunks()).equals(expected));
});

test('writeRawRef appends large buffers by reference; small ones are copied', () => {
  const big = Buffer.alloc(4096, 7);
  const small = Buffer.alloc(RAW_REF_MIN_BYTES - 1, 9);
  const w = new Writer(256);
  w.writeInt32(0);
  w.writeRawRef(big);
  w.writeInt16(5);
  w.writeRawRef(small);
  w.patchInt32(0, w.length - 4);
  const chunks = w.toChunks();
  assert.equal(chunks.length, 3);
  assert.equal(chunks[1], big, 'the very same Buffer object');
  assert.ok(!chunks.includes(small));
  const flat = w.toBuffer();
  assert.equal(flat.readInt32BE(0), 4 + 4096 + 2 + small.length - 4);
  assert.equal(flat.length, w.length);
  assert.ok(flat.subarray(4, 4100).equals(big));
  assert.throws(() => w.patchInt32(10, 1), RangeError, 'never patches a referenced buffer');
});

test('patchInt32 finds positions in sealed chunks after growth', () => {
  const w = new Writer(16);
  w.writeInt32(0);
  for (let i = 0; i < 1000; i++) w.writeInt8(1);
  w.patchInt32(0, 1234);
  assert.equal(w.toBuffer().readInt32BE(0), 1234);
  assert.ok(w.toChunks().length > 1);
});
