// The sparse time index of a segment, Kafka's `.timeindex` format: entries of
// timestamp (int64) + relative offset (int32), 12 bytes each. Timestamps
// strictly increase: an entry (t, o) says t is the largest timestamp so far and
// the batch ending at offset o is the first to reach it, so a search for t can
// start at o's batch. Pure.
import { CorruptIndexError, type IndexTail, IndexOffsetOverflowError, ensureCapacity, relativeOffset, unwrittenTail } from './index-errors.js';

export const TIME_INDEX_ENTRY_SIZE = 12;
/** RecordBatch.NO_TIMESTAMP */
export const NO_TIMESTAMP = -1n;

export interface TimestampOffset {
  timestamp: bigint;
  offset: bigint;
}

export class TimeIndex {
  private buf: Buffer;
  private count: number;
  /**
   * First byte that may differ from what the last takeUnwritten() handed out
   * (what the file holds): the end of the entries then, or lower after a truncation.
   */
  private unwrittenFrom: number;
  private readonly initialBytes: number;

  constructor(
    readonly baseOffset: bigint,
    readonly maxEntries: number,
    initial?: Buffer,
  ) {
    const n = initial === undefined ? 0 : Math.floor(initial.length / TIME_INDEX_ENTRY_SIZE);
    this.buf = Buffer.allocUnsafe(Math.max(96, n * TIME_INDEX_ENTRY_SIZE));
    if (initial !== undefined) initial.copy(this.buf, 0, 0, n * TIME_INDEX_ENTRY_SIZE);
    this.count = n;
    this.initialBytes = initial?.length ?? 0;
    this.unwrittenFrom = this.sizeInBytes;
  }

  get entries(): number {
    return this.count;
  }

  get isFull(): boolean {
    return this.count >= this.maxEntries;
  }

  get sizeInBytes(): number {
    return this.count * TIME_INDEX_ENTRY_SIZE;
  }

  entry(n: number): TimestampOffset {
    if (n < 0 || n >= this.count) throw new RangeError(`time index entry ${n} out of range [0, ${this.count})`);
    const at = n * TIME_INDEX_ENTRY_SIZE;
    return { timestamp: this.buf.readBigInt64BE(at), offset: this.baseOffset + BigInt(this.buf.readInt32BE(at + 8)) };
  }

  /** The last entry, or (NO_TIMESTAMP, baseOffset) when empty. */
  lastEntry(): TimestampOffset {
    return this.count === 0 ? { timestamp: NO_TIMESTAMP, offset: this.baseOffset } : this.entry(this.count - 1);
  }

  /** The entry with the largest timestamp <= target, or (NO_TIMESTAMP, baseOffset). */
  lookup(target: bigint): TimestampOffset {
    if (this.count === 0 || this.buf.readBigInt64BE(0) > target) return { timestamp: NO_TIMESTAMP, offset: this.baseOffset };
    let lo = 0;
    let hi = this.count - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (this.buf.readBigInt64BE(mid * TIME_INDEX_ENTRY_SIZE) <= target) lo = mid;
      else hi = mid - 1;
    }
    return this.entry(lo);
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
    if (this.count > 0) {
      const last = this.lastEntry();
      if (offset < last.offset) {
        throw new RangeError(`time index offsets must not decrease: ${offset} after ${last.offset}`);
      }
      if (timestamp <= last.timestamp) return null;
    }
    const at = this.count * TIME_INDEX_ENTRY_SIZE;
    this.buf = ensureCapacity(this.buf, at, at + TIME_INDEX_ENTRY_SIZE);
    this.buf.writeBigInt64BE(timestamp, at);
    this.buf.writeInt32BE(rel, at + 8);
    this.count++;
    return this.buf.subarray(at, at + TIME_INDEX_ENTRY_SIZE);
  }

  /** Removes entries with offset >= `offset`; returns the number kept. */
  truncateTo(offset: bigint): number {
    let keep = this.count;
    while (keep > 0 && this.entry(keep - 1).offset >= offset) keep--;
    this.count = keep;
    this.unwrittenFrom = Math.min(this.unwrittenFrom, this.sizeInBytes);
    return keep;
  }

  reset(): void {
    this.count = 0;
    this.unwrittenFrom = 0;
  }

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

  /** Whole entries; timestamps strictly increasing; offsets non-decreasing and below `nextOffset` when known. */
  sanityCheck(nextOffset?: bigint): void {
    if (this.initialBytes % TIME_INDEX_ENTRY_SIZE !== 0) {
      throw new CorruptIndexError(`time index of base ${this.baseOffset} has a partial entry (${this.initialBytes} bytes)`);
    }
    let prevTs: bigint | null = null;
    let prevRel = 0;
    for (let i = 0; i < this.count; i++) {
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
