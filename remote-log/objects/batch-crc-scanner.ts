// Verifies every v2 record batch of a segment's data in the same pass that
// computes the CRC-32C of each upload chunk, reading each byte once. Pure; no I/O.
//
// A chunk is cut at batch boundaries and at each batch's CRC start (base + 21,
// `attributes`). The 21 bytes before a CRC start are read in JS anyway (length,
// magic, claimed CRC), and folded into the CRCs there. The rest is CRC'd natively:
// - A batch running over a chunk edge: each of its pieces gets one native
//   crc32c, which feeds both the chunk CRC and the batch's CRC (crc32cCombine).
// - The run of whole batches inside a chunk gets ONE native crc32c, continuing
//   the chunk CRC. What that CRC must be if every batch is valid follows from
//   the headers alone: fold each header's 21 bytes and each claimed batch CRC
//   with crc32cCombine. CRCs are affine, so actual XOR expected is the XOR of
//   each batch's (actual CRC XOR claimed CRC) shifted by the bytes after it; a
//   shift is invertible, so one bad batch always shows, exactly as its own
//   check would show it. (Several bad batches cancelling out is a 2^-32 chance,
//   like any CRC missing an error.) A mismatch, and only then, re-checks those
//   batches one by one to name the first bad one.
// A native call costs about as much as CRC'ing a few hundred bytes, so this
// keeps the per-batch cost in JS arithmetic instead of one call per batch.
//
// Across chunks the scanner keeps only the partial header (up to 21 bytes: the
// caller's chunk buffers are reused) and the running CRC of a spanning batch.
// Once the data stops parsing as batches, or a batch fails its CRC, the rest is
// only CRC'd: the verdict is already "not verified".
import { crc32c } from '@node-rs/crc32';
import { BATCH_HEADER_SIZE, LOG_OVERHEAD, MAGIC_V2, OFFSET_ATTRIBUTES, OFFSET_BATCH_LENGTH, OFFSET_CRC, OFFSET_MAGIC } from '../../broker/protocol/record-batch.js';
import { crc32cCombine } from './crc32c-combine.js';

/** Where and why the data stopped being a sequence of valid batches. */
export interface BatchProblem {
  /** Byte position of the offending batch in the segment data. */
  readonly position: number;
  readonly reason: string;
}

export type BatchVerdict = { readonly verified: true } | { readonly verified: false; readonly problem: BatchProblem };

/** Bytes of a batch before its CRC-covered part. */
const PREFIX = OFFSET_ATTRIBUTES;

/** Reflected Castagnoli tables for slicing by 4 (TABLES[256 * s + n]), for the short header prefixes. */
const TABLES = (() => {
  const t = new Int32Array(1024);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = (c & 1) !== 0 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
    t[n] = c;
  }
  for (let s = 1; s < 4; s++) {
    for (let n = 0; n < 256; n++) {
      const prev = t[256 * (s - 1) + n] as number;
      t[256 * s + n] = (prev >>> 8) ^ (t[prev & 0xff] as number);
    }
  }
  return t;
})();

/** crc32c(bytes[start, end), crc): continues `crc` over a few bytes. */
function crc32cSmall(bytes: Uint8Array, start: number, end: number, crc: number): number {
  let c = ~crc;
  let i = start;
  for (; i + 4 <= end; i += 4) {
    c ^= (bytes[i] as number) | ((bytes[i + 1] as number) << 8) | ((bytes[i + 2] as number) << 16) | ((bytes[i + 3] as number) << 24);
    c =
      (TABLES[768 + (c & 0xff)] as number) ^
      (TABLES[512 + ((c >>> 8) & 0xff)] as number) ^
      (TABLES[256 + ((c >>> 16) & 0xff)] as number) ^
      (TABLES[c >>> 24] as number);
  }
  for (; i < end; i++) c = (TABLES[(c ^ (bytes[i] as number)) & 0xff] as number) ^ (c >>> 8);
  return ~c >>> 0;
}

/** Big-endian int32 at `at` (Buffer's readers are not available on a plain Uint8Array). */
function int32At(bytes: Uint8Array, at: number): number {
  return ((bytes[at] as number) << 24) | ((bytes[at + 1] as number) << 16) | ((bytes[at + 2] as number) << 8) | (bytes[at + 3] as number);
}

/** A view of bytes[start, end) without Buffer.subarray's overhead. */
function view(bytes: Uint8Array, start: number, end: number): Uint8Array {
  return new Uint8Array(bytes.buffer, bytes.byteOffset + start, end - start);
}

/** The batch's size from the header prefix at `at`, or why it cannot be a batch. */
function frameSize(bytes: Uint8Array, at: number): number | string {
  const magic = ((bytes[at + OFFSET_MAGIC] as number) << 24) >> 24;
  if (magic !== MAGIC_V2) return `batch has magic ${magic}`;
  const length = int32At(bytes, at + OFFSET_BATCH_LENGTH);
  if (length + LOG_OVERHEAD < BATCH_HEADER_SIZE) return `batch declares an impossible length ${length}`;
  return length + LOG_OVERHEAD;
}

type Phase = 'header' | 'body' | 'done';

export class BatchCrcScanner {
  /** Absolute position of the chunk update() is working on. */
  private position = 0;
  private phase: Phase = 'header';
  private problem: BatchProblem | undefined;
  /** Start of the batch whose header (phase 'header') or body (phase 'body') comes next. */
  private batchStart = 0;
  /** Its header prefix, when it straddles chunks. */
  private readonly header = Buffer.alloc(PREFIX);
  private headerFill = 0;
  private batchEnd = 0;
  private claimedCrc = 0;
  /** CRC of the spanning batch's covered bytes seen so far, and how many. */
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
      if (this.phase === 'header' && this.headerFill === 0 && i + PREFIX <= len) {
        const before = i;
        ({ i, crc } = this.wholeBatches(chunk, i, crc));
        if (i > before || this.phase !== 'header') continue;
      }
      if (this.phase === 'header') {
        // A batch that runs past the chunk: collect its prefix, which may itself straddle.
        const take = Math.min(PREFIX - this.headerFill, len - i);
        crc = crc32cSmall(chunk, i, i + take, crc);
        this.header.set(chunk.subarray(i, i + take), this.headerFill);
        this.headerFill += take;
        i += take;
        if (this.headerFill === PREFIX) this.startBody();
        continue;
      }
      // A piece of a batch body that spans chunks.
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

  /**
   * The batches lying wholly in chunk[start, ...): one native CRC over them, continuing `crc`,
   * checked against what their headers claim. Stops at a batch that runs past the chunk.
   */
  private wholeBatches(chunk: Uint8Array, start: number, crc: number): { i: number; crc: number } {
    const len = chunk.length;
    let expected = crc;
    let at = start;
    let framing: string | undefined;
    while (at + PREFIX <= len) {
      const size = frameSize(chunk, at);
      if (typeof size === 'string') {
        framing = size;
        break;
      }
      if (at + size > len) break;
      expected = crc32cSmall(chunk, at, at + PREFIX, expected);
      expected = crc32cCombine(expected, int32At(chunk, at + OFFSET_CRC) >>> 0, size - PREFIX);
      at += size;
    }
    if (at > start) {
      const actual = crc32c(view(chunk, start, at), crc);
      if (actual !== expected) this.findBadBatch(chunk, start, at);
      crc = actual;
    }
    // A bad batch found above comes first; else the batch at `at` is next (and maybe not a batch).
    if (this.phase === 'header') {
      this.batchStart = this.position + at;
      if (framing !== undefined) this.fail(this.batchStart, framing);
    }
    return { i: at, crc };
  }

  /** Only after a mismatch: checks the whole batches in chunk[start, end) one by one. */
  private findBadBatch(chunk: Uint8Array, start: number, end: number): void {
    for (let at = start; at < end; ) {
      const size = frameSize(chunk, at) as number;
      const claimed = int32At(chunk, at + OFFSET_CRC) >>> 0;
      const actual = crc32c(view(chunk, at + PREFIX, at + size));
      if (actual !== claimed) return this.fail(this.position + at, mismatch(actual, claimed));
      at += size;
    }
    // Unreachable when the arithmetic is right: some batch must differ for the totals to.
    this.fail(this.position + start, 'the batches fail their CRCs together but none alone');
  }

  /** The header prefix is complete in `this.header`: check framing and expect the covered bytes. */
  private startBody(): void {
    const size = frameSize(this.header, 0);
    this.headerFill = 0;
    if (typeof size === 'string') return this.fail(this.batchStart, size);
    this.claimedCrc = int32At(this.header, OFFSET_CRC) >>> 0;
    this.batchEnd = this.batchStart + size;
    this.bodyCrc = 0;
    this.bodyLength = 0;
    this.phase = 'body';
  }

  private endBody(): void {
    if (this.bodyCrc !== this.claimedCrc) return this.fail(this.batchStart, mismatch(this.bodyCrc, this.claimedCrc));
    this.batchStart = this.batchEnd;
    this.phase = 'header';
  }

  private fail(position: number, reason: string): void {
    this.problem = { position, reason };
    this.phase = 'done';
  }
}

function mismatch(actual: number, claimed: number): string {
  return `batch crc32c ${actual.toString(16)} does not match its header (${claimed.toString(16)})`;
}
