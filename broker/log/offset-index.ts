// The sparse offset index of a segment, Kafka's `.index` format: entries of
// relative offset (int32) + file position (int32), 8 bytes each, in increasing
// offset order. An entry (o, p) says the batch whose last offset is o starts at
// byte p. Pure: the entries live in a Buffer; IndexFile writes them to disk.
import { CorruptIndexError, type IndexTail, IndexOffsetOverflowError, ensureCapacity, relativeOffset, unwrittenTail } from './index-errors.js';

export const OFFSET_INDEX_ENTRY_SIZE = 8;

export interface OffsetPosition {
  offset: bigint;
  position: number;
}

export class OffsetIndex {
  private buf: Buffer;
  private count: number;
  /**
   * First byte that may differ from what the last takeUnwritten() handed out
   * (what the file holds): the end of the entries then, or lower after a truncation.
   */
  private unwrittenFrom: number;

  /**
   * @param maxEntries the index is full at this many entries (segment.index.bytes / 8); a full index rolls the segment.
   * @param initial existing entries (file contents); must be sanity-checked by the caller via `sanityCheck()`.
   */
  constructor(
    readonly baseOffset: bigint,
    readonly maxEntries: number,
    initial?: Buffer,
  ) {
    const n = initial === undefined ? 0 : Math.floor(initial.length / OFFSET_INDEX_ENTRY_SIZE);
    this.buf = Buffer.allocUnsafe(Math.max(64, n * OFFSET_INDEX_ENTRY_SIZE));
    if (initial !== undefined) initial.copy(this.buf, 0, 0, n * OFFSET_INDEX_ENTRY_SIZE);
    this.count = n;
    this.initialBytes = initial?.length ?? 0;
    this.unwrittenFrom = this.sizeInBytes;
  }

  /** File length the entries came from (to detect a partial trailing entry). */
  private readonly initialBytes: number;

  get entries(): number {
    return this.count;
  }

  get isFull(): boolean {
    return this.count >= this.maxEntries;
  }

  get sizeInBytes(): number {
    return this.count * OFFSET_INDEX_ENTRY_SIZE;
  }

  /** Offset of the last entry, or the base offset when empty. */
  get lastOffset(): bigint {
    return this.count === 0 ? this.baseOffset : this.entry(this.count - 1).offset;
  }

  entry(n: number): OffsetPosition {
    if (n < 0 || n >= this.count) throw new RangeError(`index entry ${n} out of range [0, ${this.count})`);
    const at = n * OFFSET_INDEX_ENTRY_SIZE;
    return { offset: this.baseOffset + BigInt(this.buf.readInt32BE(at)), position: this.buf.readInt32BE(at + 4) };
  }

  private relAt(n: number): number {
    return this.buf.readInt32BE(n * OFFSET_INDEX_ENTRY_SIZE);
  }

  /** Index of the last entry whose offset <= target, or -1. Binary search over relative offsets. */
  private floorSlot(target: bigint): number {
    if (this.count === 0 || target < this.baseOffset) return -1;
    const rel = target - this.baseOffset;
    const relTarget = rel > 0x7fffffffn ? 0x7fffffff : Number(rel);
    let lo = 0;
    let hi = this.count - 1;
    if (this.relAt(0) > relTarget) return -1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (this.relAt(mid) <= relTarget) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /** The entry with the largest offset <= target, or (baseOffset, 0) when there is none. */
  lookup(target: bigint): OffsetPosition {
    const slot = this.floorSlot(target);
    return slot < 0 ? { offset: this.baseOffset, position: 0 } : this.entry(slot);
  }

  /** Whether `offset` can be stored relative to this index's base offset. */
  canAppendOffset(offset: bigint): boolean {
    return relativeOffset(this.baseOffset, offset) !== null;
  }

  /**
   * Adds an entry and returns its 8 encoded bytes (to be written at `sizeInBytes - 8`).
   * Offsets must strictly increase.
   */
  append(offset: bigint, position: number): Buffer {
    if (this.isFull) throw new RangeError(`offset index for base ${this.baseOffset} is full (${this.maxEntries} entries)`);
    const rel = relativeOffset(this.baseOffset, offset);
    if (rel === null) throw new IndexOffsetOverflowError(`offset ${offset} does not fit the index of base ${this.baseOffset}`);
    if (this.count > 0 && rel <= this.relAt(this.count - 1)) {
      throw new RangeError(`offset index entries must increase: ${offset} after ${this.lastOffset}`);
    }
    const at = this.count * OFFSET_INDEX_ENTRY_SIZE;
    this.buf = ensureCapacity(this.buf, at, at + OFFSET_INDEX_ENTRY_SIZE);
    this.buf.writeInt32BE(rel, at);
    this.buf.writeInt32BE(position, at + 4);
    this.count++;
    return this.buf.subarray(at, at + OFFSET_INDEX_ENTRY_SIZE);
  }

  /** Removes entries with offset >= `offset`; returns the number of entries kept. */
  truncateTo(offset: bigint): number {
    const slot = this.floorSlot(offset);
    // Keep entries strictly below `offset`.
    let keep = slot + 1;
    if (slot >= 0 && this.entry(slot).offset === offset) keep = slot;
    this.count = Math.max(0, keep);
    this.unwrittenFrom = Math.min(this.unwrittenFrom, this.sizeInBytes);
    return this.count;
  }

  /** Removes every entry. */
  reset(): void {
    this.count = 0;
    this.unwrittenFrom = 0;
  }

  /** The valid entries, as they belong on disk. */
  bytes(): Buffer {
    return this.buf.subarray(0, this.sizeInBytes);
  }

  /** The change since the last call (see unwrittenTail); from then on those bytes count as written. */
  takeUnwritten(): IndexTail {
    const tail = unwrittenTail(this.buf, this.unwrittenFrom, this.sizeInBytes);
    this.unwrittenFrom = this.sizeInBytes;
    return tail;
  }

  /** The file was replaced with bytes() (after a rebuild): nothing is unwritten. */
  markWritten(): void {
    this.unwrittenFrom = this.sizeInBytes;
  }

  /**
   * Kafka's sanity check, stricter: whole entries only, relative offsets strictly
   * increasing and non-negative, positions non-decreasing and within the log.
   */
  sanityCheck(logSize: number): void {
    if (this.initialBytes % OFFSET_INDEX_ENTRY_SIZE !== 0) {
      throw new CorruptIndexError(`offset index of base ${this.baseOffset} has a partial entry (${this.initialBytes} bytes)`);
    }
    let prevRel = -1;
    let prevPos = -1;
    for (let i = 0; i < this.count; i++) {
      const rel = this.relAt(i);
      const pos = this.buf.readInt32BE(i * OFFSET_INDEX_ENTRY_SIZE + 4);
      if (rel <= prevRel || rel < 0) throw new CorruptIndexError(`offset index of base ${this.baseOffset}: offsets not increasing at entry ${i}`);
      if (pos < prevPos || pos < 0 || pos >= logSize) {
        throw new CorruptIndexError(`offset index of base ${this.baseOffset}: bad position ${pos} at entry ${i} (log size ${logSize})`);
      }
      prevRel = rel;
      prevPos = pos;
    }
  }
}
