import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { crc32c } from '@node-rs/crc32';
import { crc32cCombine, crc32cShift } from '../../../remote-log/objects/crc32c-combine.js';

test('combining the CRCs of two parts gives the CRC of their concatenation', () => {
  for (const [a, b] of [
    [0, 0],
    [0, 5],
    [7, 0],
    [1, 1],
    [100, 3],
    [4096, 1024 * 1024 + 17],
    [65537, 31],
  ] as const) {
    const x = randomBytes(a);
    const y = randomBytes(b);
    assert.equal(crc32cCombine(crc32c(x), crc32c(y), b), crc32c(Buffer.concat([x, y])), `${a} + ${b} bytes`);
  }
});

test('a reused shift operator folds many parts of one length', () => {
  const parts = Array.from({ length: 9 }, () => randomBytes(1000));
  const op = crc32cShift(1000);
  let crc = 0;
  for (const p of parts) crc = crc32cCombine(crc, crc32c(p), 1000, op);
  assert.equal(crc, crc32c(Buffer.concat(parts)));
});

test('a negative or fractional length is refused', () => {
  assert.throws(() => crc32cShift(-1), RangeError);
  assert.throws(() => crc32cShift(1.5), RangeError);
});

test('combining without an operator agrees with the reused operator for any length', () => {
  const lengths = [0, 1, 21, 1023, 1024, 1025, 65535, 1 << 20, (1 << 20) + 1, 2 ** 31 + 5, 2 ** 40 + 12345, Number.MAX_SAFE_INTEGER];
  for (let i = 0; i < 200; i++) lengths.push(Math.floor(Math.random() * 2 ** (1 + (i % 45))));
  for (const n of lengths) {
    const a = randomBytes(4).readUInt32BE(0);
    const b = randomBytes(4).readUInt32BE(0);
    assert.equal(crc32cCombine(a, b, n), crc32cCombine(a, b, n, crc32cShift(n)), `length ${n}`);
  }
});

test('shifts past 2^29 bytes compose: shifting twice by n is shifting once by 2n', () => {
  // Checked against real bytes up to 1 MiB above; doubling carries that up to 2^51 bytes.
  const c = 0x12345678;
  for (let n = 2 ** 20; n <= 2 ** 50; n *= 2) {
    assert.equal(crc32cCombine(crc32cCombine(c, 0, n), 0, n), crc32cCombine(c, 0, 2 * n), `2 x ${n}`);
    assert.equal(crc32cCombine(crc32cCombine(c, 0, n, crc32cShift(n)), 0, n + 3), crc32cCombine(c, 0, 2 * n + 3, crc32cShift(2 * n + 3)));
  }
});
