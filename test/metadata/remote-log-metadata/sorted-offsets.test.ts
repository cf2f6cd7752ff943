import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SortedOffsets } from '../../../metadata/remote-log-metadata/sorted-offsets.js';

describe('SortedOffsets', () => {
  it('matches a sorted reference list under random inserts and removals (mostly tail inserts, head removals)', () => {
    let seed = 7;
    const random = (n: number): number => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed % n;
    };
    const list = new SortedOffsets(2);
    const reference: Array<[bigint, number]> = [];
    let tail = 0;
    for (let step = 0; step < 20_000; step++) {
      const op = random(10);
      if (op < 5) {
        const key = BigInt(random(4) === 0 ? random(tail + 1) : (tail += random(3)));
        const value = step;
        list.insert(key, value);
        let at = reference.length;
        while (at > 0 && (reference[at - 1] as [bigint, number])[0] > key) at--;
        reference.splice(at, 0, [key, value]);
      } else if (op < 8 && reference.length > 0) {
        const i = random(3) === 0 ? random(reference.length) : 0;
        const [key, value] = reference[i] as [bigint, number];
        assert.equal(list.remove(key, value), true);
        reference.splice(i, 1);
      } else {
        const probe = BigInt(random(tail + 2));
        let expected = -1;
        reference.forEach(([k], i) => {
          if (k <= probe) expected = i;
        });
        assert.equal(list.floorIndex(probe), expected, `floor(${probe})`);
        assert.equal(list.remove(probe, -5), false);
      }
      assert.equal(list.size, reference.length);
    }
    reference.forEach(([k, v], i) => {
      assert.equal(list.keyAt(i), k);
      assert.equal(list.valueAt(i), v);
    });
  });
});
