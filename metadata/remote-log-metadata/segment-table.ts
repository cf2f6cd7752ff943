// Columnar storage for the remote segments of one partition: each segment is a
// slot number indexing typed arrays, plus an open-addressing hash table from the
// 16 id bytes to the slot. About 100 bytes a segment instead of a few objects,
// strings and Map entries each (see the memory test). Pure.
import type { RemoteLogSegmentState, SegmentLeaderEpoch } from './types.js';
import { REMOTE_LOG_SEGMENT_STATES, segmentStateId } from './types.js';
import { uuidFromString, uuidToString } from '../uuid.js';

const FREE = 0xff;
const FLAG_TXN_INDEX_EMPTY = 1;

/** The per-segment fields a slot holds (the partition is held once by the owner). */
export interface SegmentFields {
  readonly id: string;
  readonly startOffset: bigint;
  readonly endOffset: bigint;
  readonly brokerId: number;
  readonly maxTimestampMs: number;
  readonly eventTimestampMs: number;
  readonly segmentLeaderEpochs: readonly SegmentLeaderEpoch[];
  readonly segmentSizeInBytes: number;
  readonly customMetadata?: Buffer;
  readonly state: RemoteLogSegmentState;
  readonly txnIndexEmpty: boolean;
}

export class SegmentTable {
  private capacity = 0;
  private ids = new Uint8Array(0);
  private startOffsets = new BigInt64Array(0);
  private endOffsets = new BigInt64Array(0);
  private maxTimestamps = new Float64Array(0);
  private eventTimestamps = new Float64Array(0);
  private brokerIds = new Int32Array(0);
  private sizes = new Int32Array(0);
  private states = new Uint8Array(0);
  private flags = new Uint8Array(0);
  private firstEpochs = new Int32Array(0);
  private firstEpochOffsets = new BigInt64Array(0);
  /** Only segments spanning several leader epochs (rare) have an entry. */
  private readonly multiEpochs = new Map<number, readonly SegmentLeaderEpoch[]>();
  private readonly customMetadata = new Map<number, Buffer>();
  private freeSlots: number[] = [];
  private used = 0;
  /** Slots ever handed out: the next fresh slot. */
  private highWater = 0;
  private readonly scratch = new Uint8Array(16);
  /** Linear probing; holds slot + 1, 0 marks an empty bucket. */
  private buckets = new Int32Array(16);

  get count(): number {
    return this.used;
  }

  /** Stores a new segment and returns its slot. The id must not be present. */
  add(fields: SegmentFields): number {
    const idBytes = this.scratch;
    if (!decodeUuidInto(fields.id, idBytes)) {
      uuidFromString(fields.id); // throws with Kafka's message
      throw new TypeError(`not a Kafka Uuid: ${fields.id}`);
    }
    if (this.findBytes(idBytes) >= 0) throw new Error(`segment ${fields.id} already present`);
    if (fields.segmentLeaderEpochs.length === 0) throw new Error(`segment ${fields.id} has no leader epochs`);
    const slot = this.allocate();
    this.ids.set(idBytes, slot * 16);
    this.startOffsets[slot] = fields.startOffset;
    this.endOffsets[slot] = fields.endOffset;
    this.maxTimestamps[slot] = fields.maxTimestampMs;
    this.eventTimestamps[slot] = fields.eventTimestampMs;
    this.brokerIds[slot] = fields.brokerId;
    this.sizes[slot] = fields.segmentSizeInBytes;
    this.states[slot] = segmentStateId(fields.state);
    this.flags[slot] = fields.txnIndexEmpty ? FLAG_TXN_INDEX_EMPTY : 0;
    const first = fields.segmentLeaderEpochs[0] as SegmentLeaderEpoch;
    this.firstEpochs[slot] = first.leaderEpoch;
    this.firstEpochOffsets[slot] = first.startOffset;
    if (fields.segmentLeaderEpochs.length > 1) {
      this.multiEpochs.set(slot, Object.freeze(fields.segmentLeaderEpochs.map((e) => Object.freeze({ ...e }))));
    }
    if (fields.customMetadata !== undefined) this.customMetadata.set(slot, fields.customMetadata);
    this.insertBucket(slot);
    return slot;
  }

  /** The slot of segment `id`, or -1 (also for a string that is not a canonical Uuid). */
  find(id: string): number {
    return decodeUuidInto(id, this.scratch) ? this.findBytes(this.scratch) : -1;
  }

  remove(slot: number): void {
    this.checkSlot(slot);
    this.removeBucket(slot);
    this.states[slot] = FREE;
    this.multiEpochs.delete(slot);
    this.customMetadata.delete(slot);
    this.freeSlots.push(slot);
    this.used--;
  }

  /** Applies the fields an update event carries. */
  update(
    slot: number,
    state: RemoteLogSegmentState,
    brokerId: number,
    eventTimestampMs: number,
    customMetadata: Buffer | undefined,
  ): void {
    this.checkSlot(slot);
    this.states[slot] = segmentStateId(state);
    this.brokerIds[slot] = brokerId;
    this.eventTimestamps[slot] = eventTimestampMs;
    if (customMetadata === undefined) this.customMetadata.delete(slot);
    else this.customMetadata.set(slot, customMetadata);
  }

  id(slot: number): string {
    return uuidToString(this.ids.subarray(slot * 16, slot * 16 + 16));
  }
  state(slot: number): RemoteLogSegmentState {
    return REMOTE_LOG_SEGMENT_STATES[this.states[slot] as number] as RemoteLogSegmentState;
  }
  startOffset(slot: number): bigint {
    return this.startOffsets[slot] as bigint;
  }
  endOffset(slot: number): bigint {
    return this.endOffsets[slot] as bigint;
  }
  sizeInBytes(slot: number): number {
    return this.sizes[slot] as number;
  }

  leaderEpochs(slot: number): readonly SegmentLeaderEpoch[] {
    return (
      this.multiEpochs.get(slot) ?? [
        { leaderEpoch: this.firstEpochs[slot] as number, startOffset: this.firstEpochOffsets[slot] as bigint },
      ]
    );
  }

  /**
   * Calls `fn` for each leader epoch of the segment with the epoch's first and
   * last offsets within it (the last is the next epoch's start - 1, or the end offset).
   */
  forEachEpoch(slot: number, fn: (leaderEpoch: number, startOffset: bigint, endOffset: bigint) => void): void {
    const many = this.multiEpochs.get(slot);
    if (many === undefined) {
      fn(this.firstEpochs[slot] as number, this.firstEpochOffsets[slot] as bigint, this.endOffsets[slot] as bigint);
      return;
    }
    for (let i = 0; i < many.length; i++) {
      const e = many[i] as SegmentLeaderEpoch;
      const next = many[i + 1];
      fn(e.leaderEpoch, e.startOffset, next === undefined ? (this.endOffsets[slot] as bigint) : next.startOffset - 1n);
    }
  }

  /** Last offset of `leaderEpoch` within the segment, or undefined if the segment has no such epoch. */
  epochEndOffset(slot: number, leaderEpoch: number): bigint | undefined {
    const many = this.multiEpochs.get(slot);
    if (many === undefined) {
      return this.firstEpochs[slot] === leaderEpoch ? (this.endOffsets[slot] as bigint) : undefined;
    }
    for (let i = 0; i < many.length; i++) {
      if ((many[i] as SegmentLeaderEpoch).leaderEpoch !== leaderEpoch) continue;
      const next = many[i + 1];
      return next === undefined ? (this.endOffsets[slot] as bigint) : next.startOffset - 1n;
    }
    return undefined;
  }

  fields(slot: number): SegmentFields {
    this.checkSlot(slot);
    const custom = this.customMetadata.get(slot);
    return {
      id: this.id(slot),
      startOffset: this.startOffsets[slot] as bigint,
      endOffset: this.endOffsets[slot] as bigint,
      brokerId: this.brokerIds[slot] as number,
      maxTimestampMs: this.maxTimestamps[slot] as number,
      eventTimestampMs: this.eventTimestamps[slot] as number,
      segmentLeaderEpochs: this.leaderEpochs(slot),
      segmentSizeInBytes: this.sizes[slot] as number,
      ...(custom === undefined ? {} : { customMetadata: custom }),
      state: this.state(slot),
      txnIndexEmpty: ((this.flags[slot] as number) & FLAG_TXN_INDEX_EMPTY) !== 0,
    };
  }

  /** Bytes held by the typed arrays (Maps of rare entries not counted). */
  get byteLength(): number {
    return (
      this.ids.byteLength +
      this.startOffsets.byteLength +
      this.endOffsets.byteLength +
      this.maxTimestamps.byteLength +
      this.eventTimestamps.byteLength +
      this.brokerIds.byteLength +
      this.sizes.byteLength +
      this.states.byteLength +
      this.flags.byteLength +
      this.firstEpochs.byteLength +
      this.firstEpochOffsets.byteLength +
      this.buckets.byteLength
    );
  }

  private checkSlot(slot: number): void {
    if (!(slot >= 0 && slot < this.capacity) || this.states[slot] === FREE) throw new Error(`no segment in slot ${slot}`);
  }

  private allocate(): number {
    const reused = this.freeSlots.pop();
    this.used++;
    if (this.used * 2 > this.buckets.length) this.rehash(this.buckets.length * 2);
    if (reused !== undefined) return reused;
    const slot = this.highWater++;
    if (slot >= this.capacity) this.grow(Math.max(16, this.capacity * 2));
    return slot;
  }

  private grow(capacity: number): void {
    const ids = new Uint8Array(capacity * 16);
    ids.set(this.ids);
    this.ids = ids;
    this.startOffsets = growBigInt(this.startOffsets, capacity);
    this.endOffsets = growBigInt(this.endOffsets, capacity);
    this.firstEpochOffsets = growBigInt(this.firstEpochOffsets, capacity);
    this.maxTimestamps = growFloat(this.maxTimestamps, capacity);
    this.eventTimestamps = growFloat(this.eventTimestamps, capacity);
    this.brokerIds = growInt(this.brokerIds, capacity);
    this.sizes = growInt(this.sizes, capacity);
    this.firstEpochs = growInt(this.firstEpochs, capacity);
    const states = new Uint8Array(capacity).fill(FREE);
    states.set(this.states);
    this.states = states;
    const flags = new Uint8Array(capacity);
    flags.set(this.flags);
    this.flags = flags;
    this.capacity = capacity;
  }

  private hashAt(bytes: Uint8Array, offset: number): number {
    // Segment ids are random, but mix anyway so that crafted ids cannot cluster.
    let h = 0x9747b28c;
    for (let i = 0; i < 16; i += 4) {
      const k =
        (bytes[offset + i] as number) |
        ((bytes[offset + i + 1] as number) << 8) |
        ((bytes[offset + i + 2] as number) << 16) |
        ((bytes[offset + i + 3] as number) << 24);
      h = Math.imul(h ^ Math.imul(k, 0x5bd1e995), 0x5bd1e995);
      h ^= h >>> 15;
    }
    return h >>> 0;
  }

  private findBytes(idBytes: Uint8Array): number {
    const mask = this.buckets.length - 1;
    for (let b = this.hashAt(idBytes, 0) & mask; ; b = (b + 1) & mask) {
      const entry = this.buckets[b] as number;
      if (entry === 0) return -1;
      const slot = entry - 1;
      if (this.idEquals(slot, idBytes)) return slot;
    }
  }

  private idEquals(slot: number, idBytes: Uint8Array): boolean {
    const base = slot * 16;
    for (let i = 0; i < 16; i++) if (this.ids[base + i] !== idBytes[i]) return false;
    return true;
  }

  private insertBucket(slot: number): void {
    const mask = this.buckets.length - 1;
    let b = this.hashAt(this.ids, slot * 16) & mask;
    while (this.buckets[b] !== 0) b = (b + 1) & mask;
    this.buckets[b] = slot + 1;
  }

  /** Backward-shift deletion keeps probe sequences intact without tombstones. */
  private removeBucket(slot: number): void {
    const mask = this.buckets.length - 1;
    let hole = this.hashAt(this.ids, slot * 16) & mask;
    while (this.buckets[hole] !== slot + 1) hole = (hole + 1) & mask;
    for (let b = (hole + 1) & mask; this.buckets[b] !== 0; b = (b + 1) & mask) {
      const home = this.hashAt(this.ids, ((this.buckets[b] as number) - 1) * 16) & mask;
      // Move the entry into the hole unless its home lies cyclically in (hole, b].
      const homeInRange = hole <= b ? home > hole && home <= b : home > hole || home <= b;
      if (!homeInRange) {
        this.buckets[hole] = this.buckets[b] as number;
        hole = b;
      }
    }
    this.buckets[hole] = 0;
  }

  private rehash(size: number): void {
    const old = this.buckets;
    this.buckets = new Int32Array(size);
    for (const entry of old) if (entry !== 0) this.insertBucket(entry - 1);
  }
}

const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const SEXTET = new Int8Array(128).fill(-1);
for (let i = 0; i < 64; i++) SEXTET[BASE64URL.charCodeAt(i)] = i;

/**
 * Decodes a canonical 22-char Uuid string into `out` without allocating; false
 * for anything else. Lookups run once per replayed record, so this stays cheap.
 */
function decodeUuidInto(s: string, out: Uint8Array): boolean {
  if (s.length !== 22) return false;
  let acc = 0;
  let bits = 0;
  let j = 0;
  for (let i = 0; i < 22; i++) {
    const c = s.charCodeAt(i);
    const v = c < 128 ? (SEXTET[c] as number) : -1;
    if (v < 0) return false;
    acc = ((acc << 6) | v) & 0xffffff;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      if (j < 16) out[j++] = (acc >>> bits) & 0xff;
    }
  }
  // 22 sextets carry 132 bits: the 4 left over must be zero in the canonical form.
  return (acc & ((1 << bits) - 1)) === 0;
}

function growBigInt(a: BigInt64Array, capacity: number): BigInt64Array<ArrayBuffer> {
  const b = new BigInt64Array(capacity);
  b.set(a);
  return b;
}
function growFloat(a: Float64Array, capacity: number): Float64Array<ArrayBuffer> {
  const b = new Float64Array(capacity);
  b.set(a);
  return b;
}
function growInt(a: Int32Array, capacity: number): Int32Array<ArrayBuffer> {
  const b = new Int32Array(capacity);
  b.set(a);
  return b;
}
