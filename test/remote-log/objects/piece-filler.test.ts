import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { PieceFiller } from '../../../remote-log/objects/object-store.js';

describe('PieceFiller', () => {
  it('cuts any split of a body into fresh pieces of the asked lengths, telling each once, in order, when full', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 40 }), { minLength: 1, maxLength: 8 }),
        fc.array(fc.integer({ min: 1, max: 17 }), { minLength: 1, maxLength: 10 }),
        (lengths, splits) => {
          const total = lengths.reduce((a, b) => a + b, 0);
          const body = Buffer.from(Array.from({ length: total }, (_, i) => i & 0xff));
          const told: Array<[number, string]> = [];
          const filler = new PieceFiller(lengths, (k, piece) => told.push([k, piece.toString('hex')]));
          for (let at = 0, i = 0; at < body.length; i++) {
            const n = splits[i % splits.length] as number;
            filler.push(body.subarray(at, at + n));
            at += n;
          }
          const pieces = filler.finish();
          assert.equal(filler.total, total);
          assert.equal(Buffer.concat(pieces).toString('hex'), body.toString('hex'));
          let at = 0;
          for (const [k, n] of lengths.entries()) {
            if (n > 0 && pieces[k] !== undefined) assert.equal(pieces[k]?.buffer.byteLength, n, 'each piece owns its memory');
            at += n;
          }
          assert.deepEqual(
            told.map(([k]) => k),
            lengths.map((_, k) => k).filter((k) => k < pieces.length),
          );
          assert.equal(at, total);
        },
      ),
    );
  });

  it('never touches a piece again once told: a listener may transfer its memory away (fetch workers do)', () => {
    const body = Buffer.from('abcdefghij');
    const seen: string[] = [];
    const filler = new PieceFiller([4, 4, 2], (_k, piece) => {
      seen.push(piece.toString());
      // Transferring detaches the piece's ArrayBuffer, as postMessage with a transfer list does.
      structuredClone(piece.buffer, { transfer: [piece.buffer as ArrayBuffer] });
      assert.equal(piece.length, 0);
    });
    filler.push(body.subarray(0, 3));
    filler.push(body.subarray(3, 9));
    filler.push(body.subarray(9));
    assert.deepEqual(seen, ['abcd', 'efgh', 'ij']);
    assert.equal(filler.completed, 3);
  });

  it('keeps a partly filled last piece untold, cut to what arrived, and refuses bytes past the total', () => {
    const told: number[] = [];
    const filler = new PieceFiller([3, 3], (k) => told.push(k));
    filler.push(Buffer.from('abcde'));
    assert.equal(filler.completed, 1);
    assert.deepEqual(told, [0]);
    assert.deepEqual(filler.finish().map((p) => p.toString()), ['abc', 'de']);
    const full = new PieceFiller([2]);
    assert.throws(() => full.push(Buffer.from('xyz')), /longer than the 2 bytes/);
  });
});
