// The sparse offset index of a segment, Kafka's `.index` format: entries of
// relative offset (int32) + file position (int32), 8 bytes each, in increasing
// offset order. An entry (o, p) says the batch whose last offset is o starts at
// byte p. Pure: the entries live in a Buffer; IndexFile writes them to disk.
import { AbstractIndex, CorruptIndexError, IndexOffsetOverflowError, relativeOffset } from './abstract-index.js';

export const OFFSET_INDEX_ENTRY_SIZE = 8;

export interface OffsetPosition {
  offset: bigint;
  position: number;
}

export class OffsetIndex extends AbstractIndex {
  /**
   * @param maxEntries the index is full at this many entries (segment.index.bytes / 8); a full index rolls the segment.
   * @param initial existing entries (file contents); must be sanity-checked by the caller via `sanityCheck()`.
   */
  constructor(baseOffset: bigint, maxEntries: number, initial?: Buffer) {
    super(baseOffset, maxEntries, OFFSET_INDEX_ENTRY_SIZE, initial);
  }

  /** Offset of the last entry, or the base offset when empty. */
  get lastOffset(): bigint {
    return this.entries === 0 ? this.baseOffset : this.entry(this.entries - 1).offset;
  }

  entry(n: number): OffsetPosition {
    this.checkSlot(n, 'index');
    const at = n * OFFSET_INDEX_ENTRY_SIZE;
    return { offset: this.baseOffset + BigInt(this.buf.readInt32BE(at)), position: this.buf.readInt32BE(at + 4) };
  }

  private relAt(n: number): number {
    return this.buf.readInt32BE(n * OFFSET_INDEX_ENTRY_SIZE);
  }

  /** Index of the last entry whose offset <= target, or -1. Binary search over relative offsets. */
  private floorSlot(target: bigint): number {
    if (target < this.baseOffset) return -1;
    const rel = target - this.baseOffset;
    const relTarget = rel > 0x7fffffffn ? 0x7fffffff : Number(rel);
    return this.lastSlotWhere((slot) => this.relAt(slot) <= relTarget);
  }

  /** The entry with the largest offset <= target, or (baseOffset, 0) when there is none. */
  lookup(target: bigint): OffsetPosition {
    const slot = this.floorSlot(target);
    return slot < 0 ? { offset: this.baseOffset, position: 0 } : this.entry(slot);
  }

  /**
   * The entry with the largest position <= `position` among those whose offset
   * is <= `maxOffset`, or null when there is none. Entry positions are batch
   * starts, and every batch before an entry's position holds offsets below that
   * entry's offset: a fetch that stops at `position` and below `maxOffset` may
   * take whole batches up to the returned position without reading them.
   */
  floorByPosition(position: number, maxOffset: bigint): OffsetPosition | null {
    const byPosition = this.lastSlotWhere((slot) => this.buf.readInt32BE(slot * OFFSET_INDEX_ENTRY_SIZE + 4) <= position);
    const slot = Math.min(byPosition, this.floorSlot(maxOffset));
    return slot < 0 ? null : this.entry(slot);
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
    if (this.entries > 0 && rel <= this.relAt(this.entries - 1)) {
      throw new RangeError(`offset index entries must increase: ${offset} after ${this.lastOffset}`);
    }
    return this.appendEntry((buf, at) => {
      buf.writeInt32BE(rel, at);
      buf.writeInt32BE(position, at + 4);
    });
  }

  /** Removes entries with offset >= `offset`; returns the number of entries kept. */
  truncateTo(offset: bigint): number {
    const slot = this.floorSlot(offset);
    // Keep entries strictly below `offset`.
    let keep = slot + 1;
    if (slot >= 0 && this.entry(slot).offset === offset) keep = slot;
    return this.keepEntries(keep);
  }

  /**
   * Kafka's sanity check, stricter: whole entries only, relative offsets strictly
   * increasing and non-negative, positions non-decreasing and within the log.
   */
  sanityCheck(logSize: number): void {
    this.checkWholeEntries('offset index');
    let prevRel = -1;
    let prevPos = -1;
    for (let i = 0; i < this.entries; i++) {
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
