// The segments of a partition ordered by base offset (Kafka's LogSegments).
// A sorted array: partitions hold tens of local segments, and lookups are a
// binary search for the floor of an offset.
import type { LogSegment } from './log-segment.js';

export class LogSegments {
  private list: LogSegment[] = [];

  get size(): number {
    return this.list.length;
  }

  isEmpty(): boolean {
    return this.list.length === 0;
  }

  all(): readonly LogSegment[] {
    return this.list;
  }

  first(): LogSegment | undefined {
    return this.list[0];
  }

  last(): LogSegment | undefined {
    return this.list[this.list.length - 1];
  }

  /** Index of the segment with the largest base offset <= `offset`, or -1. */
  private floorIndex(offset: bigint): number {
    let lo = 0;
    let hi = this.list.length - 1;
    let ans = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.list[mid] as LogSegment).baseOffset <= offset) {
        ans = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return ans;
  }

  /** The segment that would hold `offset`: largest base offset <= offset. */
  floorSegment(offset: bigint): LogSegment | undefined {
    const i = this.floorIndex(offset);
    return i < 0 ? undefined : this.list[i];
  }

  /** The segment after `segment`, if any. */
  higherSegment(baseOffset: bigint): LogSegment | undefined {
    const i = this.floorIndex(baseOffset);
    return this.list[i + 1];
  }

  get(baseOffset: bigint): LogSegment | undefined {
    const s = this.floorSegment(baseOffset);
    return s !== undefined && s.baseOffset === baseOffset ? s : undefined;
  }

  /** Adds or replaces the segment with the same base offset. */
  add(segment: LogSegment): void {
    const i = this.floorIndex(segment.baseOffset);
    const at = this.list[i];
    if (at !== undefined && at.baseOffset === segment.baseOffset) this.list[i] = segment;
    else this.list.splice(i + 1, 0, segment);
  }

  remove(baseOffset: bigint): LogSegment | undefined {
    const i = this.floorIndex(baseOffset);
    const at = this.list[i];
    if (at === undefined || at.baseOffset !== baseOffset) return undefined;
    this.list.splice(i, 1);
    return at;
  }

  /** Segments overlapping [from, to): those whose range may hold offsets in it. */
  range(from: bigint, to: bigint): LogSegment[] {
    const start = Math.max(0, this.floorIndex(from));
    const out: LogSegment[] = [];
    for (let i = start; i < this.list.length; i++) {
      const s = this.list[i] as LogSegment;
      if (s.baseOffset >= to) break;
      out.push(s);
    }
    return out;
  }

  /** Total bytes of all segments. */
  sizeInBytes(): number {
    let n = 0;
    for (const s of this.list) n += s.size;
    return n;
  }
}
