import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { crc32c } from '@node-rs/crc32';
import { crc32cCombine, crc32cShift } from '../../remote-log/crc32c-combine.js';

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
