import { test } from 'node:test';
import assert from 'node:assert/strict';
import { xxh3 } from '../../../broker/common/xxh3.js';

// hash4j 0.22.0 (the library Kafka 4.3.1's group coordinator hashes with):
// Hashing.xxh3_64().hashBytesToLong(b) for b[i] = (byte) (i * 31 + 7), one length
// in each of XXH3's input classes and around its stripe (64) and block (1024) edges.
const hash4j: readonly (readonly [number, bigint])[] = [
  [0, 3244421341483603138n], [1, 5502495245947142431n], [2, -6349423698422726873n], [3, 1582743943441612892n],
  [4, -2549016526957988167n], [5, -5579736752565435579n], [8, -2394039629164210130n], [9, -3754995788605292611n],
  [16, 9099606716676871632n], [17, 2345212530088924167n], [32, 278953543771952198n], [33, 1844846513307983686n],
  [64, -2508381663727503547n], [65, -381843323958800864n], [96, -3295001992457868926n], [97, 6981672134384256435n],
  [128, -492175581222641016n], [129, -506823097681485574n], [200, 1368452603177808973n], [240, -3690920546649497853n],
  [241, 809349449570470400n], [255, -8533440102264939110n], [256, -1403514104434996620n], [1023, -1093476622474739461n],
  [1024, 2575082683865311686n], [1025, -4566685497618039422n], [2048, 1870957339171033971n], [3000, 7977200675703330694n],
];

test('xxh3 (seed 0) equals hash4j at every input length class', () => {
  for (const [n, expected] of hash4j) {
    const b = Buffer.alloc(n);
    for (let i = 0; i < n; i++) b[i] = (i * 31 + 7) & 0xff;
    assert.equal(BigInt.asIntN(64, xxh3(b)), expected, `length ${n}`);
  }
});
