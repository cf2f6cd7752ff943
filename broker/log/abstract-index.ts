// What the offset and time indexes share (Kafka's AbstractIndex): fixed-size
// entries in one growable Buffer, the count of valid entries, the binary search
// over them, appends, truncation, and the bookkeeping of which bytes the index
// file still lacks. Pure: IndexFile writes what takeUnwritten() hands out.
// Also the errors the index structures raise; a corrupt index is never fatal:
// the loader rebuilds it from the log.

export class CorruptIndexError extends Error {
  override name = 'CorruptIndexError';
}

/** An offset that does not fit the int32 relative offset of a segment's indexes. */
export class IndexOffsetOverflowError extends RangeError {
  override name = 'IndexOffsetOverflowError';
}

export const INT32_MAX = 0x7fffffff;

/** Relative offset of `offset` from `baseOffset`, or null when it does not fit an int32. */
export function relativeOffset(baseOffset: bigint, offset: bigint): number | null {
  const rel = offset - baseOffset;
  if (rel < 0n || rel > BigInt(INT32_MAX)) return null;
  return Number(rel);
}

/** Grows `buf` (by doubling) so it holds at least `needed` bytes, copying the first `used`. */
export function ensureCapacity(buf: Buffer, used: number, needed: number): Buffer {
  if (buf.length >= needed) return buf;
  let cap = Math.max(64, buf.length);
  while (cap < needed) cap *= 2;
  const next = Buffer.allocUnsafe(cap);
  buf.copy(next, 0, 0, used);
  return next;
}

/**
 * What an index file lacks to equal the in-memory index: `bytes` go at `from`,
 * and the file ends at `size` (shorter than before when entries were truncated).
 */
export interface IndexTail {
  from: number;
  bytes: Buffer;
  size: number;
}

export abstract class AbstractIndex {
  protected buf: Buffer;
  private count: number;
  /**
   * First byte that may differ from what the last takeUnwritten() handed out
   * (what the file holds): the end of the entries then, or lower after a truncation.
   */
  private unwrittenFrom: number;
  /** File length the entries came from (to detect a partial trailing entry). */
  private readonly initialBytes: number;

  /**
   * @param maxEntries the index is full at this many entries (a full index rolls the segment).
   * @param initial existing entries (file contents); the caller sanity-checks them.
   */
  protected constructor(
    readonly baseOffset: bigint,
    readonly maxEntries: number,
    protected readonly entrySize: number,
    initial?: Buffer,
  ) {
    const n = initial === undefined ? 0 : Math.floor(initial.length / entrySize);
    this.buf = Buffer.allocUnsafe(Math.max(8 * entrySize, n * entrySize));
    if (initial !== undefined) initial.copy(this.buf, 0, 0, n * entrySize);
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
    return this.count * this.entrySize;
  }

  /** Throws unless `n` is the slot of a valid entry. */
  protected checkSlot(n: number, what: string): void {
    if (n < 0 || n >= this.count) throw new RangeError(`${what} entry ${n} out of range [0, ${this.count})`);
  }

  /**
   * The last slot for which `atMost` holds, or -1: a binary search, so `atMost`
   * must hold for a prefix of the entries (keys increase).
   */
  protected lastSlotWhere(atMost: (slot: number) => boolean): number {
    if (this.count === 0 || !atMost(0)) return -1;
    let lo = 0;
    let hi = this.count - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (atMost(mid)) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /** Appends one entry written by `write` at byte `at`; returns its encoded bytes (to be written at `sizeInBytes - entrySize`). */
  protected appendEntry(write: (buf: Buffer, at: number) => void): Buffer {
    const at = this.count * this.entrySize;
    this.buf = ensureCapacity(this.buf, at, at + this.entrySize);
    write(this.buf, at);
    this.count++;
    return this.buf.subarray(at, at + this.entrySize);
  }

  /** Keeps the first `n` entries; returns `n`. */
  protected keepEntries(n: number): number {
    this.count = Math.max(0, n);
    this.unwrittenFrom = Math.min(this.unwrittenFrom, this.sizeInBytes);
    return this.count;
  }

  /** Throws CorruptIndexError when the file the entries came from ends in a partial entry. */
  protected checkWholeEntries(what: string): void {
    if (this.initialBytes % this.entrySize !== 0) {
      throw new CorruptIndexError(`${what} of base ${this.baseOffset} has a partial entry (${this.initialBytes} bytes)`);
    }
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

  /**
   * What the file lacks since the last call: a copy of the bytes from the first
   * changed one (the index may change them before the write lands) and the size
   * the file must have. From then on those bytes count as written.
   */
  takeUnwritten(): IndexTail {
    const size = this.sizeInBytes;
    const from = Math.min(this.unwrittenFrom, size);
    this.unwrittenFrom = size;
    return { from, bytes: Buffer.from(this.buf.subarray(from, size)), size };
  }

  /** The file was replaced with bytes() (after a rebuild): nothing is unwritten. */
  markWritten(): void {
    this.unwrittenFrom = this.sizeInBytes;
  }
}
