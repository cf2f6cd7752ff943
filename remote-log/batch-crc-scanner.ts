// Verifies every v2 record batch of a segment's data in the same pass that
// computes the CRC-32C of each upload chunk, reading each byte once. Pure; no I/O.
//
// Each chunk is cut at batch boundaries and at each batch's CRC start (base +
// 21, `attributes`). The 21 header bytes before the CRC start are folded into
// the chunk CRC in JS (too short to be worth a native call, and their fields
// are read anyway); each CRC-covered piece gets one native crc32c. The piece
// CRC then feeds both the chunk CRC (crc32cCombine) and its batch's CRC (the
// piece itself when the batch lies inside one chunk, combined when it spans
// chunks). Across chunks the scanner keeps only the partial header (up to 21
// bytes, since the caller's chunk buffers are reused) and the running batch CRC.
//
// Once the data stops parsing as batches, or a batch fails its CRC, the rest is
// CRC'd per chunk only: the verdict is already "not verified".
import { crc32c } from '@node-rs/crc32';
import { BATCH_HEADER_SIZE, LOG_OVERHEAD, MAGIC_V2, OFFSET_ATTRIBUTES, OFFSET_BATCH_LENGTH, OFFSET_CRC, OFFSET_MAGIC } from '../broker/protocol/record-batch.js';
import { crc32cCombine } from './crc32c-combine.js';

/** Where and why the data stopped being a sequence of valid batches. */
export interface BatchProblem {
  /** Byte position of the offending batch in the segment data. */
  readonly position: number;
  readonly reason: string;
}

export type BatchVerdict = { readonly verified: true } | { readonly verified: false; readonly problem: BatchProblem };

/** Reflected Castagnoli table for the short header pieces. */
const TABLE = (() => {
  const t = new Int32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = (c & 1) !== 0 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
    t[n] = c;
  }
  return t;
})();

/** crc32c(bytes[start, end), crc): continues `crc` over a few bytes. */
function crc32cSmall(bytes: Uint8Array, start: number, end: number, crc: number): number {
  let c = ~crc;
  for (let i = start; i < end; i++) c = (TABLE[(c ^ (bytes[i] as number)) & 0xff] as number) ^ (c >>> 8);
  return ~c >>> 0;
}

type Phase = 'header' | 'body' | 'done';

export class BatchCrcScanner {
  /** Absolute position of the next byte update() will see. */
  private position = 0;
  private phase: Phase = 'header';
  private problem: BatchProblem | undefined;
  /** The current batch's first OFFSET_ATTRIBUTES bytes, when they straddle chunks. */
  private readonly header = Buffer.alloc(OFFSET_ATTRIBUTES);
  private headerFill = 0;
  private batchStart = 0;
  private batchEnd = 0;
  private expectedCrc = 0;
  /** CRC of the current batch's covered bytes seen so far, and how many. */
  private bodyCrc = 0;
  private bodyLength = 0;

  /** Scans the next chunk of the data (contiguous with the previous one) and returns crc32c(chunk). */
  update(chunk: Uint8Array): number {
    const len = chunk.length;
    let crc = 0;
    let i = 0;
    while (i < len) {
      if (this.phase === 'done') {
        crc = crc32c(view(chunk, i, len), crc);
        break;
      }
      if (this.phase === 'header') {
        const take = Math.min(OFFSET_ATTRIBUTES - this.headerFill, len - i);
        crc = crc32cSmall(chunk, i, i + take, crc);
        if (this.headerFill === 0 && take === OFFSET_ATTRIBUTES) {
          this.startBody(chunk, i);
        } else {
          this.header.set(chunk.subarray(i, i + take), this.headerFill);
          this.headerFill += take;
          if (this.headerFill === OFFSET_ATTRIBUTES) this.startBody(this.header, 0);
        }
        i += take;
        continue;
      }
      const take = Math.min(this.batchEnd - (this.position + i), len - i);
      const piece = crc32c(view(chunk, i, i + take));
      crc = crc32cCombine(crc, piece, take);
      this.bodyCrc = this.bodyLength === 0 ? piece : crc32cCombine(this.bodyCrc, piece, take);
      this.bodyLength += take;
      i += take;
      if (this.position + i === this.batchEnd) this.endBody();
    }
    this.position += len;
    return crc;
  }

  /** The verdict once every chunk went through update(). */
  finish(): BatchVerdict {
    if (this.problem === undefined && (this.phase === 'body' || this.headerFill > 0)) {
      this.fail(this.batchStart, `data ends at ${this.position} inside the batch starting at ${this.batchStart}`);
    }
    return this.problem === undefined ? { verified: true } : { verified: false, problem: this.problem };
  }

  /** The header's fields up to the CRC are in `bytes` at `at`: check framing and expect the batch's covered bytes. */
  private startBody(bytes: Uint8Array, at: number): void {
    const start = this.batchStart;
    const magic = ((bytes[at + OFFSET_MAGIC] as number) << 24) >> 24;
    const size = int32At(bytes, at + OFFSET_BATCH_LENGTH) + LOG_OVERHEAD;
    this.headerFill = 0;
    if (magic !== MAGIC_V2) return this.fail(start, `batch has magic ${magic}`);
    if (size < BATCH_HEADER_SIZE) return this.fail(start, `batch declares an impossible length ${size - LOG_OVERHEAD}`);
    this.expectedCrc = int32At(bytes, at + OFFSET_CRC) >>> 0;
    this.batchEnd = start + size;
    this.bodyCrc = 0;
    this.bodyLength = 0;
    this.phase = 'body';
  }

  private endBody(): void {
    if (this.bodyCrc !== this.expectedCrc) {
      return this.fail(
        this.batchStart,
        `batch crc32c ${this.bodyCrc.toString(16)} does not match its header (${this.expectedCrc.toString(16)})`,
      );
    }
    this.batchStart = this.batchEnd;
    this.phase = 'header';
  }

  private fail(position: number, reason: string): void {
    this.problem = { position, reason };
    this.phase = 'done';
  }
}

/** Big-endian int32 at `at` (Buffer's readers are not available on a plain Uint8Array). */
function int32At(bytes: Uint8Array, at: number): number {
  return (
    ((bytes[at] as number) << 24) | ((bytes[at + 1] as number) << 16) | ((bytes[at + 2] as number) << 8) | (bytes[at + 3] as number)
  );
}

/** A view of bytes[start, end) without Buffer.subarray's allocation overhead. */
function view(bytes: Uint8Array, start: number, end: number): Uint8Array {
  return new Uint8Array(bytes.buffer, bytes.byteOffset + start, end - start);
}
