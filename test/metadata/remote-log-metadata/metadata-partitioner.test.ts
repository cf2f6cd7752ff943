import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { metadataPartition, murmur2, toPositive } from '../../../metadata/remote-log-metadata/metadata-partitioner.js';
import { uuidFromBigints } from '../../../metadata/uuid.js';

/** Java's Objects.hash(long lsb, long msb, int partition), computed independently with BigInt. */
function javaObjectsHash(msb: bigint, lsb: bigint, partition: number): number {
  const longHash = (v: bigint): bigint => BigInt.asIntN(32, BigInt.asUintN(64, v) ^ (BigInt.asUintN(64, v) >> 32n));
  let h = 1n;
  for (const e of [longHash(lsb), longHash(msb), BigInt(partition)]) h = BigInt.asIntN(32, 31n * h + e);
  return Number(h);
}

describe('metadata partitioner', () => {
  it("murmur2 matches Kafka's UtilsTest vectors", () => {
    const vectors: Array<[string, number]> = [
      ['21', -973932308],
      ['foobar', -790332482],
      ['a-little-bit-long-string', -985981536],
      ['a-little-bit-longer-string', -1486304829],
      ['lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8', -58897971],
      ['abc', 479470107],
    ];
    for (const [input, expected] of vectors) assert.equal(murmur2(Buffer.from(input)), expected, input);
  });

  it('hashes Objects.hash(lsb, msb, partition) as 4 big-endian bytes, like RemoteLogMetadataTopicPartitioner', () => {
    const ids: Array<[bigint, bigint]> = [
      [0x0123456789abcdefn, -0x0fedcba987654321n],
      [-1n, 1n],
      [0x7fffffffffffffffn, -0x8000000000000000n],
      [0x4000000000000000n, 0x8000000000000000n - 1n],
    ];
    for (const [msb, lsb] of ids) {
      const topicId = uuidFromBigints(msb, lsb);
      for (const partition of [0, 1, 7, 1000]) {
        const bytes = Buffer.alloc(4);
        bytes.writeInt32BE(javaObjectsHash(msb, lsb, partition));
        const expected = toPositive(murmur2(bytes)) % 50;
        assert.equal(metadataPartition({ topicId, topic: 't', partition }, 50), expected);
        assert.ok(expected >= 0 && expected < 50);
      }
    }
  });

  it('ignores the topic name and spreads partitions over the metadata partitions', () => {
    const topicId = uuidFromBigints(0x1111222233334444n, 0x5555666677778888n);
    assert.equal(metadataPartition({ topicId, topic: 'a', partition: 3 }, 50), metadataPartition({ topicId, topic: 'b', partition: 3 }, 50));
    const used = new Set<number>();
    for (let p = 0; p < 500; p++) used.add(metadataPartition({ topicId, topic: 'a', partition: p }, 50));
    assert.ok(used.size > 40, `500 partitions used only ${used.size} of 50 metadata partitions`);
    assert.throws(() => metadataPartition({ topicId, topic: 'a', partition: 0 }, 0), RangeError);
  });
});
