// Which `__remote_log_metadata` partition holds a user partition's events, exactly
// as Kafka's RemoteLogMetadataTopicPartitioner picks it, so that the topic's layout
// matches what a Kafka broker would write:
//
//   hash  = java.util.Objects.hash(topicId.leastSignificantBits, topicId.mostSignificantBits, partition)
//         = ((31 + Long.hashCode(lsb)) * 31 + Long.hashCode(msb)) * 31 + partition   (int32 arithmetic)
//   Long.hashCode(v) = (int) (v ^ (v >>> 32))
//   metadataPartition = toPositive(murmur2(bigEndianBytes(hash))) % numMetadataTopicPartitions
//
// Pure.
import type { TopicIdPartition } from './types.js';
import { uuidFromString } from '../uuid.js';

/** Kafka's Utils.murmur2 (seed 0x9747b28c), as a signed int32. */
export function murmur2(data: Uint8Array): number {
  const length = data.length;
  const m = 0x5bd1e995;
  let h = 0x9747b28c ^ length;
  const length4 = length >>> 2;
  for (let i = 0; i < length4; i++) {
    const i4 = i * 4;
    let k =
      (data[i4] as number) |
      ((data[i4 + 1] as number) << 8) |
      ((data[i4 + 2] as number) << 16) |
      ((data[i4 + 3] as number) << 24);
    k = Math.imul(k, m);
    k ^= k >>> 24;
    k = Math.imul(k, m);
    h = Math.imul(h, m);
    h ^= k;
  }
  const tail = length & ~3;
  const rest = length & 3;
  if (rest > 0) {
    if (rest === 3) h ^= (data[tail + 2] as number) << 16;
    if (rest >= 2) h ^= (data[tail + 1] as number) << 8;
    h ^= data[tail] as number;
    h = Math.imul(h, m);
  }
  h ^= h >>> 13;
  h = Math.imul(h, m);
  h ^= h >>> 15;
  return h | 0;
}

/** Kafka's Utils.toPositive. */
export function toPositive(n: number): number {
  return n & 0x7fffffff;
}

export function metadataPartition(tp: TopicIdPartition, numMetadataTopicPartitions: number): number {
  if (!(Number.isInteger(numMetadataTopicPartitions) && numMetadataTopicPartitions > 0)) {
    throw new RangeError(`metadata topic partition count must be a positive integer, got ${numMetadataTopicPartitions}`);
  }
  const id = uuidFromString(tp.topicId);
  const msbHash = id.readInt32BE(0) ^ id.readInt32BE(4);
  const lsbHash = id.readInt32BE(8) ^ id.readInt32BE(12);
  let hash = 1;
  hash = (Math.imul(hash, 31) + lsbHash) | 0;
  hash = (Math.imul(hash, 31) + msbHash) | 0;
  hash = (Math.imul(hash, 31) + tp.partition) | 0;
  const bytes = Buffer.allocUnsafe(4);
  bytes.writeInt32BE(hash, 0);
  return toPositive(murmur2(bytes)) % numMetadataTopicPartitions;
}
