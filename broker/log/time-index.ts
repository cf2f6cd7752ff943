// The sparse time index of a segment, Kafka's `.timeindex` format: entries of
// timestamp (int64) + relative offset (int32), 12 bytes each. Timestamps
// strictly increase: an entry (t, o) says t is the largest timestamp so far and
// the batch ending at offset o is the first to reach it, so a search for t can
// start at o's batch. Pure.
import { AbstractIndex, CorruptIndexError, IndexOffsetOverflowError, relativeOffset } from './abstract-index.js';

export const TIME_INDEX_ENTRY_SIZE = 12;
/** RecordBatch.NO_TIMESTAMP */
export const NO_TIMESTAMP = -1n;

export interface TimestampOffset {
  timestamp: bigint;
  offset: bigint;
}

export class TimeIndex extends AbstractIndex {
  constructor(baseOffset: bigint, maxEntries: number, initial?: Buffer) {
    super(baseOffset, maxEntries, TIME_INDEX_ENTRY_SIZE, initial);
  }

  entry(n: number): TimestampOffset {
    this.checkSlot(n, 'time index');
    const at = n * TIME_INDEX_ENTRY_SIZE;
    return { timestamp: this.buf.readBigInt64BE(at), offset: this.baseOffset + BigInt(this.buf.readInt32BE(at + 8)) };
  }

  /** The last entry, or (NO_TIMESTAMP, baseOffset) when empty. */
  lastEntry(): TimestampOffset {
    return this.entries === 0 ? { timestamp: NO_TIMESTAMP, offset: this.baseOffset } : this.entry(this.entries - 1);
  }

  /** The entry with the largest timestamp <= target, or (NO_TIMESTAMP, baseOffset). */
  lookup(target: bigint): TimestampOffset {
    const slot = this.lastSlotWhere((s) => this.buf.readBigInt64BE(s * TIME_INDEX_ENTRY_SIZE) <= target);
    return slot < 0 ? { timestamp: NO_TIMESTAMP, offset: this.baseOffset } : this.entry(slot);
  }

  /**
   * Adds (timestamp, offset) when the timestamp is above the last entry's; returns
   * the 12 encoded bytes, or null when nothing was added. `skipFullCheck` lets the
   * final max-timestamp entry of a closing segment in even when the index is full.
   */
  maybeAppend(timestamp: bigint, offset: bigint, skipFullCheck = false): Buffer | null {
    if (!skipFullCheck && this.isFull) throw new RangeError(`time index for base ${this.baseOffset} is full`);
    const rel = relativeOffset(this.baseOffset, offset);
    if (rel === null) throw new IndexOffsetOverflowError(`offset ${offset} does not fit the time index of base ${this.baseOffset}`);
    if (this.entries > 0) {
      const last = this.lastEntry();
      if (offset < last.offset) {
        throw new RangeError(`time index offsets must not decrease: ${offset} after ${last.offset}`);
      }
      if (timestamp <= last.timestamp) return null;
    }
    return this.appendEntry((buf, at) => {
      buf.writeBigInt64BE(timestamp, at);
      buf.writeInt32BE(rel, at + 8);
    });
  }

  /** Removes entries with offset >= `offset`; returns the number kept. */
  truncateTo(offset: bigint): number {
    let keep = this.entries;
    while (keep > 0 && this.entry(keep - 1).offset >= offset) keep--;
    return this.keepEntries(keep);
  }

  /** Whole entries; timestamps strictly increasing; offsets non-decreasing and below `nextOffset` when known. */
  sanityCheck(nextOffset?: bigint): void {
    this.checkWholeEntries('time index');
    let prevTs: bigint | null = null;
    let prevRel = 0;
    for (let i = 0; i < this.entries; i++) {
      const at = i * TIME_INDEX_ENTRY_SIZE;
      const ts = this.buf.readBigInt64BE(at);
      const rel = this.buf.readInt32BE(at + 8);
      if (rel < prevRel) throw new CorruptIndexError(`time index of base ${this.baseOffset}: offsets decrease at entry ${i}`);
      if (prevTs !== null && ts <= prevTs) throw new CorruptIndexError(`time index of base ${this.baseOffset}: timestamps not increasing at entry ${i}`);
      if (nextOffset !== undefined && this.baseOffset + BigInt(rel) >= nextOffset && nextOffset > this.baseOffset) {
        throw new CorruptIndexError(`time index of base ${this.baseOffset}: entry ${i} points past the log end ${nextOffset}`);
      }
      prevTs = ts;
      prevRel = rel;
    }
  }
}
