// Errors raised by the pure index structures, and the helpers they share. A
// corrupt index is never fatal: the loader rebuilds it from the log.

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

/**
 * The tail of an index held in `buf` (`size` valid bytes) that its file lacks
 * when everything from `unwrittenFrom` on changed since the last write: a copy
 * of those bytes (the index may change them before the write lands) and the
 * size the file must have. IndexFile is the one consumer.
 */
export function unwrittenTail(buf: Buffer, unwrittenFrom: number, size: number): IndexTail {
  const from = Math.min(unwrittenFrom, size);
  return { from, bytes: Buffer.from(buf.subarray(from, size)), size };
}
