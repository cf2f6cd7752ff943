// The group metadata hash of KIP-1101 (Kafka 4.1+), computed as Kafka's group
// coordinator does (Utils.computeTopicHash / computeGroupHash): XXH3-64 over
// hash4j's little-endian encoding of, per topic, a magic byte 0, the topic
// id's two longs, the name, the partition count and, for every partition, its
// index and the sorted racks of its replicas (each rack length-prefixed); the
// group's hash is XXH3-64 over the topic hashes in topic-name order, 0 for
// none. A change of any of it (a partition added, a replica moved to another
// rack, a topic re-created) starts a new group epoch. Pure.
import { xxh3 } from '../../common/xxh3.js';

/** hash4j's HashStream encoding: little-endian numbers, strings as UTF-16LE chars then their length. */
class HashBytes {
  private readonly parts: Buffer[] = [];

  byte(v: number): this {
    this.parts.push(Buffer.of(v & 0xff));
    return this;
  }

  int(v: number): this {
    const b = Buffer.alloc(4);
    b.writeInt32LE(v);
    this.parts.push(b);
    return this;
  }

  long(v: bigint): this {
    const b = Buffer.alloc(8);
    b.writeBigInt64LE(BigInt.asIntN(64, v));
    this.parts.push(b);
    return this;
  }

  string(s: string): this {
    this.parts.push(Buffer.from(s, 'utf16le'));
    return this.int(s.length);
  }

  hash(): bigint {
    return BigInt.asIntN(64, xxh3(Buffer.concat(this.parts)));
  }
}

const TOPIC_HASH_MAGIC_BYTE = 0;

/** Java's String order (UTF-16 code units), which is also JavaScript's. */
const byCodeUnits = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

export interface HashedTopic {
  readonly name: string;
  /** Kafka's Uuid in its base64url string form. */
  readonly topicId: string;
  readonly partitionCount: number;
  /** The racks of a partition's replicas (those whose broker has one; repeats kept). */
  readonly partitionRacks: (partition: number) => readonly string[];
}

export function topicHash(t: HashedTopic): bigint {
  const id = Buffer.from(t.topicId, 'base64url');
  const h = new HashBytes().byte(TOPIC_HASH_MAGIC_BYTE).long(id.readBigInt64BE(0)).long(id.readBigInt64BE(8)).string(t.name).int(t.partitionCount);
  for (let p = 0; p < t.partitionCount; p++) {
    h.int(p);
    for (const rack of [...t.partitionRacks(p)].sort(byCodeUnits)) h.int(rack.length).string(rack);
  }
  return h.hash();
}

/** topic name -> topic hash, for the subscribed topics that exist. */
export function groupHash(topicHashes: ReadonlyMap<string, bigint>): bigint {
  if (topicHashes.size === 0) return 0n;
  const h = new HashBytes();
  for (const [, v] of [...topicHashes].sort((a, b) => byCodeUnits(a[0], b[0]))) h.long(v);
  return h.hash();
}

/**
 * Topic hashes by everything they cover (name, id, partition count, each
 * partition's racks), so a heartbeat rehashes only topics whose metadata
 * changed, as Kafka's topic hash cache does; the least recently used entries
 * go beyond `maxEntries`.
 */
export class TopicHashCache {
  private readonly entries = new Map<string, bigint>();

  constructor(private readonly maxEntries = 10_000) {}

  get size(): number {
    return this.entries.size;
  }

  hash(t: HashedTopic): bigint {
    const racks: string[] = [];
    for (let p = 0; p < t.partitionCount; p++) racks.push(t.partitionRacks(p).join('\u0001'));
    const key = `${t.name}\u0000${t.topicId}\u0000${t.partitionCount}\u0000${racks.join('\u0002')}`;
    const cached = this.entries.get(key);
    if (cached !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, cached);
      return cached;
    }
    const h = topicHash(t);
    this.entries.set(key, h);
    if (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (oldest.done !== true) this.entries.delete(oldest.value);
    }
    return h;
  }
}
