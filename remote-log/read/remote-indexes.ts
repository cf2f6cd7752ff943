// Lookups in a remote segment's offset and time indexes, straight on the bytes
// the IndexCache holds (Kafka's formats, as broker/log writes them), without
// copying them into index objects. Pure.
import { RemoteCorruptionError } from '../remote-storage.js';

const OFFSET_ENTRY = 8;
const TIME_ENTRY = 12;

export interface IndexPosition {
  readonly offset: bigint;
  readonly position: number;
}

/** Offset index (relative offset int32, position int32): the entry with the largest offset <= target, else (base, 0). */
export function lookupOffsetIndex(index: Buffer, baseOffset: bigint, target: bigint, what: string): IndexPosition {
  if (index.length % OFFSET_ENTRY !== 0) throw new RemoteCorruptionError(`${what}: offset index of ${index.length} bytes has a partial entry`);
  const n = index.length / OFFSET_ENTRY;
  if (n === 0 || target < baseOffset) return { offset: baseOffset, position: 0 };
  const rel = target - baseOffset;
  const relTarget = rel > 0x7fffffffn ? 0x7fffffff : Number(rel);
  if (index.readInt32BE(0) > relTarget) return { offset: baseOffset, position: 0 };
  let lo = 0;
  let hi = n - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if (index.readInt32BE(mid * OFFSET_ENTRY) <= relTarget) lo = mid;
    else hi = mid - 1;
  }
  const position = index.readInt32BE(lo * OFFSET_ENTRY + 4);
  if (position < 0) throw new RemoteCorruptionError(`${what}: negative position in the offset index`);
  return { offset: baseOffset + BigInt(index.readInt32BE(lo * OFFSET_ENTRY)), position };
}

/**
 * Time index (timestamp int64, relative offset int32): the offset of the entry
 * with the largest timestamp <= target, where a search for target may start;
 * the base offset when there is none.
 */
export function lookupTimeIndex(index: Buffer, baseOffset: bigint, target: bigint, what: string): bigint {
  if (index.length % TIME_ENTRY !== 0) throw new RemoteCorruptionError(`${what}: time index of ${index.length} bytes has a partial entry`);
  const n = index.length / TIME_ENTRY;
  if (n === 0 || index.readBigInt64BE(0) > target) return baseOffset;
  let lo = 0;
  let hi = n - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if (index.readBigInt64BE(mid * TIME_ENTRY) <= target) lo = mid;
    else hi = mid - 1;
  }
  return baseOffset + BigInt(index.readInt32BE(lo * TIME_ENTRY + 8));
}
