import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { crc32c } from '@node-rs/crc32';
import fc from 'fast-check';
import { ByteParts } from '../../../remote-log/read/byte-parts.js';

/** `whole` cut at the given positions. */
function cut(whole: Buffer, cuts: number[]): Buffer[] {
  const at = [...new Set(cuts.map((c) => c % (whole.length + 1)))].sort((a, b) => a - b);
  const out: Buffer[] = [];
  let prev = 0;
  for (const c of [...at, whole.length]) {
    out.push(whole.subarray(prev, c));
    prev = c;
  }
  return out;
}

describe('ByteParts', () => {
  it('reads, slices and CRCs across parts exactly as over the joined bytes', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 0, maxLength: 300 }),
        fc.array(fc.nat(), { maxLength: 8 }),
        fc.nat(),
        fc.nat(),
        (bytes, cuts, a, b) => {
          const whole = Buffer.from(bytes);
          const parts = new ByteParts(cut(whole, cuts));
          assert.equal(parts.length, whole.length);
          const start = a % (whole.length + 1);
          const end = start + (b % (whole.length - start + 1));
          assert.deepEqual(parts.bytes(start, end - start), whole.subarray(start, end));
          assert.deepEqual(Buffer.concat(parts.slice(start, end)), whole.subarray(start, end));
          assert.equal(parts.crc32c(start, end), crc32c(whole.subarray(start, end)) >>> 0);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('returns views, not copies, when one part holds the bytes', () => {
    const a = Buffer.from('hello ');
    const b = Buffer.from('world');
    const parts = new ByteParts([a, Buffer.alloc(0), b]);
    assert.equal(parts.bytes(6, 3).buffer, b.buffer);
    assert.equal(parts.slice(2, 8)[0]!.buffer, a.buffer);
    assert.deepEqual(parts.bytes(4, 4), Buffer.from('o wo'));
  });

  it('refuses ranges outside its bytes', () => {
    const parts = new ByteParts([Buffer.from('abc')]);
    assert.throws(() => parts.bytes(2, 2), RangeError);
    assert.throws(() => parts.slice(-1, 2), RangeError);
    assert.throws(() => parts.crc32c(2, 1), RangeError);
  });
});
