// Bytes held as consecutive buffers (views into cached chunks), read without
// joining them: a small copy where a value straddles two parts, CRC-32C
// continued across parts. Pure; no I/O.
import { crc32c } from '@node-rs/crc32';

export class ByteParts {
  readonly parts: readonly Buffer[];
  readonly length: number;
  /** starts[i] = position of parts[i]. */
  private readonly starts: number[];

  constructor(parts: readonly Buffer[]) {
    this.parts = parts.filter((p) => p.length > 0);
    this.starts = [];
    let n = 0;
    for (const p of this.parts) {
      this.starts.push(n);
      n += p.length;
    }
    this.length = n;
  }

  /** Bytes [start, start + length): a view when one part holds them, else a copy. */
  bytes(start: number, length: number): Buffer {
    this.check(start, start + length);
    if (length === 0) return Buffer.alloc(0);
    const i = this.partAt(start);
    const part = this.parts[i] as Buffer;
    const at = start - (this.starts[i] as number);
    if (at + length <= part.length) return part.subarray(at, at + length);
    return Buffer.concat(this.slice(start, start + length), length);
  }

  /** CRC-32C of bytes [start, end), continued across parts without copying. */
  crc32c(start: number, end: number): number {
    let crc = 0;
    for (const piece of this.views(start, end)) crc = crc32c(piece, crc);
    return crc >>> 0;
  }

  /** Bytes [start, end) as views into the parts. */
  slice(start: number, end: number): Buffer[] {
    return [...this.views(start, end)];
  }

  /** The views into the parts that make up bytes [start, end), in order. */
  private *views(start: number, end: number): Generator<Buffer> {
    this.check(start, end);
    for (let i = start < end ? this.partAt(start) : this.parts.length; i < this.parts.length; i++) {
      const base = this.starts[i] as number;
      if (base >= end) break;
      const part = this.parts[i] as Buffer;
      const from = Math.max(0, start - base);
      const to = Math.min(part.length, end - base);
      yield from === 0 && to === part.length ? part : part.subarray(from, to);
    }
  }

  private check(start: number, end: number): void {
    if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start < 0 || end < start || end > this.length) {
      throw new RangeError(`bytes [${start}, ${end}) outside ${this.length} bytes`);
    }
  }

  /** Index of the part holding position `pos` (< length). */
  private partAt(pos: number): number {
    let lo = 0;
    let hi = this.starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if ((this.starts[mid] as number) <= pos) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }
}
