// The cleaner's key -> latest offset map (Kafka's SkimpyOffsetMap): open
// addressing over one Buffer allocated once, each slot holding the MD5 digest
// of a key and an int64 offset. Memory never grows with the number of keys
// (log.cleaner.dedupe.buffer.size bounds it); when the map reaches its load
// factor the cleaning round stops there and the rest of the dirty log waits for
// the next round. Two keys with the same digest would share a slot: the chance
// is that of an MD5 collision, which Kafka accepts as well. Pure (no I/O).
import { hash } from 'node:crypto';

const HASH_SIZE = 16;
const OFFSET_FIELD = HASH_SIZE;
/** Digest + int64 offset. */
export const OFFSET_MAP_SLOT_SIZE = HASH_SIZE + 8;
/** An empty slot holds offset -1 (all bits set); real offsets are >= 0. */
const EMPTY = -1n;

export class OffsetMap {
  private readonly bytes: Buffer;
  /** Number of slots (memory / 24). */
  readonly slots: number;
  private entries = 0;
  private latest = -1n;
  private lookups = 0;
  private probes = 0;

  constructor(memory: number) {
    this.slots = Math.floor(memory / OFFSET_MAP_SLOT_SIZE);
    if (this.slots < 1) throw new RangeError(`an offset map of ${memory} bytes holds no entry (${OFFSET_MAP_SLOT_SIZE} bytes each)`);
    this.bytes = Buffer.allocUnsafe(this.slots * OFFSET_MAP_SLOT_SIZE);
    this.clear();
  }

  /** Keys stored. */
  get size(): number {
    return this.entries;
  }

  /** Fraction of the slots in use. */
  get utilization(): number {
    return this.entries / this.slots;
  }

  /** Average slots visited per put/get since the last clear (1 = no collisions). */
  get collisionRate(): number {
    return this.lookups === 0 ? 1 : this.probes / this.lookups;
  }

  /** The largest offset the map has covered (records above it were not looked at), -1 when none. */
  get latestOffset(): bigint {
    return this.latest;
  }

  /** Marks offsets up to `offset` as covered (batches without keys, gaps, segment ends). */
  updateLatestOffset(offset: bigint): void {
    if (offset > this.latest) this.latest = offset;
  }

  clear(): void {
    this.bytes.fill(0xff);
    this.entries = 0;
    this.latest = -1n;
    this.lookups = 0;
    this.probes = 0;
  }

  /** Records `offset` as the latest offset of `key` (offsets of a round only grow). */
  put(key: Buffer, offset: bigint): void {
    if (offset < 0n) throw new RangeError(`offset ${offset} cannot be stored`);
    const digest = hash('md5', key, 'buffer');
    const at = this.find(digest);
    if (this.bytes.readBigInt64BE(at + OFFSET_FIELD) === EMPTY) {
      digest.copy(this.bytes, at);
      this.entries++;
    }
    this.bytes.writeBigInt64BE(offset, at + OFFSET_FIELD);
    this.updateLatestOffset(offset);
  }

  /** The latest offset stored for `key`, or -1. */
  get(key: Buffer): bigint {
    return this.bytes.readBigInt64BE(this.find(hash('md5', key, 'buffer')) + OFFSET_FIELD);
  }

  /**
   * The slot holding `digest`, or the empty slot where it would go (linear
   * probing from the digest's first four bytes). The cleaner stops filling at
   * its load factor, so a probe always meets an empty slot; a completely full
   * table throws.
   */
  private find(digest: Buffer): number {
    this.lookups++;
    let slot = digest.readUInt32BE(0) % this.slots;
    for (let visited = 0; visited < this.slots; visited++) {
      this.probes++;
      const at = slot * OFFSET_MAP_SLOT_SIZE;
      if (this.bytes.readBigInt64BE(at + OFFSET_FIELD) === EMPTY) return at;
      if (digest.compare(this.bytes, at, at + HASH_SIZE) === 0) return at;
      slot = slot + 1 === this.slots ? 0 : slot + 1;
    }
    throw new RangeError(`offset map is full (${this.slots} slots)`);
  }
}
