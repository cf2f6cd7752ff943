// Which bytes of a segment a fetch returns, found from batch headers alone, so
// the bytes themselves can go to the socket with sendfile(2) without being read
// (broker/common/sendfile.ts). The rules are LogSegment.read's: whole batches
// from the one holding `startOffset` (searched from `start`, an offset index
// position at or before it), at most `maxBytes` (at least the first batch with
// `minOneBatch`), below `maxPosition`, none holding an offset >= `maxOffset`.
// Headers are read through `read`, a small chunk at a time (one header when
// the batches are large). Pure apart from the reads it is given.
import { BATCH_HEADER_SIZE, LOG_OVERHEAD, OFFSET_BATCH_LENGTH, OFFSET_LAST_OFFSET_DELTA, OFFSET_RECORDS_COUNT } from '../protocol/record-batch.js';

/** Fills `into` from `position` of the file; returns the bytes read (fewer only at its end). */
export type SyncRead = (position: number, length: number, into: Buffer) => number;

export interface BatchSpan {
  /** File position of the first batch. */
  readonly position: number;
  /** Bytes of whole batches from there; 0 when none may be returned (the limits, or maxOffset). */
  readonly length: number;
  readonly firstOffset: bigint;
  /** Records in the first batch (0 for a batch the cleaner emptied). */
  readonly firstRecordCount: number;
}

/** Header bytes read at once while batches are small; one header when they are larger. */
const CHUNK = 4096;

class HeaderCursor {
  private readonly buf = Buffer.allocUnsafe(CHUNK);
  private start = 0;
  private filled = 0;
  /** Size of the last batch stepped over: when large, the next header is read alone. */
  lastSize = 0;

  constructor(
    private readonly read: SyncRead,
    private readonly end: number,
  ) {}

  /** The offset in `bytes` of a whole header at `position`, or -1 when the file has none there. */
  header(position: number): number {
    if (position >= this.start && position + BATCH_HEADER_SIZE <= this.start + this.filled) return position - this.start;
    const want = Math.min(this.lastSize > CHUNK ? BATCH_HEADER_SIZE : CHUNK, this.end - position);
    if (want < BATCH_HEADER_SIZE) return -1;
    this.start = position;
    this.filled = this.read(position, want, this.buf);
    return this.filled < BATCH_HEADER_SIZE ? -1 : 0;
  }

  get bytes(): Buffer {
    return this.buf;
  }
}

/**
 * A batch start at or below `end` such that every batch before it holds only
 * offsets below `maxOffset` (an offset index entry: OffsetIndex.floorByPosition),
 * or -1: the walk to the end of the span starts there instead of batch by batch.
 */
export type SkipTo = (end: number, maxOffset: bigint) => number;

/** The span to return, or null when no batch at or after `start` reaches `startOffset`. */
export function batchSpan(
  read: SyncRead,
  start: number,
  maxPosition: number,
  startOffset: bigint,
  maxBytes: number,
  minOneBatch: boolean,
  maxOffset: bigint,
  skipTo?: SkipTo,
): BatchSpan | null {
  const cursor = new HeaderCursor(read, maxPosition);
  let at = start;
  let first: { position: number; size: number; baseOffset: bigint; lastOffset: bigint; records: number } | null = null;
  while (first === null) {
    const h = cursor.header(at);
    if (h < 0) return null;
    const b = cursor.bytes;
    const size = b.readInt32BE(h + OFFSET_BATCH_LENGTH) + LOG_OVERHEAD;
    if (size < BATCH_HEADER_SIZE) return null;
    const base = b.readBigInt64BE(h);
    const last = base + BigInt(b.readInt32BE(h + OFFSET_LAST_OFFSET_DELTA));
    if (last >= startOffset) first = { position: at, size, baseOffset: base, lastOffset: last, records: b.readInt32BE(h + OFFSET_RECORDS_COUNT) };
    else at += size;
    cursor.lastSize = size;
  }
  const none = { position: first.position, length: 0, firstOffset: first.baseOffset, firstRecordCount: first.records };
  if (first.lastOffset >= maxOffset) return none;
  const limit = minOneBatch ? Math.max(maxBytes, first.size) : maxBytes;
  const end = Math.min(maxPosition, first.position + limit);
  if (end - first.position < first.size) return none;
  // The first batch is in; step over whole batches below maxOffset that end by `end`,
  // from the furthest batch start the index vouches for.
  at = first.position + first.size;
  const skip = skipTo === undefined ? -1 : skipTo(end, maxOffset);
  if (skip > at) at = skip;
  while (at + BATCH_HEADER_SIZE <= end) {
    const h = cursor.header(at);
    if (h < 0) break;
    const b = cursor.bytes;
    const size = b.readInt32BE(h + OFFSET_BATCH_LENGTH) + LOG_OVERHEAD;
    if (size < BATCH_HEADER_SIZE || at + size > end) break;
    const last = b.readBigInt64BE(h) + BigInt(b.readInt32BE(h + OFFSET_LAST_OFFSET_DELTA));
    if (last >= maxOffset) break;
    at += size;
    cursor.lastSize = size;
  }
  return { ...none, length: at - first.position };
}
