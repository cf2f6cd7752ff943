// Chunked layout of segment data: the original bytes cut into fixed-size
// chunks, each stored raw or as an independent zstd frame, with a CRC-32C per
// stored chunk. Independent frames are what keep ranged reads possible on
// compressed data: a read fetches and decodes only the chunks it covers.
// No I/O here; the caller moves the bytes.
import { crc32c } from '@node-rs/crc32';
import { compress, decompress } from 'zstd-napi';
import type { BatchVerdict } from './batch-crc-scanner.js';
import { BatchCrcScanner } from './batch-crc-scanner.js';
import { crc32cCombine, crc32cShift } from './crc32c-combine.js';
import type { DataLayout } from './manifest.js';
import { chunkCount, originalChunkLength, storedChunkRange } from './manifest.js';
import type { DataCompression } from '../remote-storage.js';
import { RemoteCorruptionError } from '../remote-storage.js';

export const DEFAULT_CHUNK_SIZE = 1024 * 1024;
export const DEFAULT_ZSTD_LEVEL = 3;

/**
 * Turns original chunks into stored chunks and records the layout as it goes.
 * The data is a log segment's: in the same pass it verifies every record
 * batch's CRC (batchVerdict()), so reads can trust batches the chunk CRCs vouch for.
 */
export class ChunkedDataWriter {
  private readonly batches = new BatchCrcScanner();
  private size = 0;
  private storedSize = 0;
  private objectCrc = 0;
  private lastChunkShort = false;
  private readonly chunkCrcs: number[] = [];
  /** crc32cShift of the most recent stored chunk length (uncompressed chunks all share one). */
  private shift = { length: -1, op: 0 };
  private readonly compressedOffsets: number[] = [0];

  constructor(
    readonly chunkSize: number,
    readonly compression: DataCompression,
    private readonly zstdLevel = DEFAULT_ZSTD_LEVEL,
  ) {
    if (!Number.isSafeInteger(chunkSize) || chunkSize <= 0) throw new RangeError(`chunk size must be positive: ${chunkSize}`);
  }

  /** Takes the next original chunk (chunkSize bytes; only the last may be shorter) and returns what to store. */
  add(chunk: Buffer): Buffer {
    if (this.lastChunkShort) throw new RangeError('a short chunk must be the last one');
    if (chunk.length === 0) return chunk;
    if (chunk.length > this.chunkSize) throw new RangeError(`chunk of ${chunk.length} bytes exceeds chunk size ${this.chunkSize}`);
    this.lastChunkShort = chunk.length < this.chunkSize;
    const originalCrc = this.batches.update(chunk);
    // Uncompressed, the stored chunk is the original and the batch pass gave its CRC. A zstd chunk's CRC
    // covers the compressed frame, so there the batch pass over the original bytes is one extra CRC pass.
    const stored = this.compression === 'zstd-chunked' ? compress(chunk, { compressionLevel: this.zstdLevel }) : chunk;
    const crc = this.compression === 'zstd-chunked' ? crc32c(stored) : originalCrc;
    this.chunkCrcs.push(crc);
    // One pass over the bytes: the object CRC is combined from the chunk CRCs.
    if (this.shift.length !== stored.length) this.shift = { length: stored.length, op: crc32cShift(stored.length) };
    this.objectCrc = crc32cCombine(this.objectCrc, crc, stored.length, this.shift.op);
    this.size += chunk.length;
    this.storedSize += stored.length;
    if (this.compression === 'zstd-chunked') this.compressedOffsets.push(this.storedSize);
    return stored;
  }

  /** CRC-32C of the stored chunk add() returned last. */
  get lastChunkCrc32c(): number {
    return this.chunkCrcs.at(-1) ?? 0;
  }

  /** CRC-32C of the whole stored object. */
  get storedCrc32c(): number {
    return this.objectCrc;
  }

  /** Whether every byte added so far forms whole record batches that pass their CRC. Call after the last add(). */
  batchVerdict(): BatchVerdict {
    return this.batches.finish();
  }

  get storedBytes(): number {
    return this.storedSize;
  }

  layout(): DataLayout {
    const base = { size: this.size, chunkSize: this.chunkSize, chunkCrcs: [...this.chunkCrcs] };
    return this.compression === 'zstd-chunked'
      ? { compression: 'zstd-chunked', ...base, compressedOffsets: [...this.compressedOffsets] }
      : { compression: 'none', ...base };
  }
}

/** The chunks [first, last] covering original bytes [start, endInclusive], and their stored byte range. */
export function chunksCovering(
  layout: DataLayout,
  start: number,
  endInclusive: number,
): { first: number; last: number; storedStart: number; storedEnd: number } {
  const first = Math.floor(start / layout.chunkSize);
  const last = Math.min(Math.floor(endInclusive / layout.chunkSize), chunkCount(layout.size, layout.chunkSize) - 1);
  return { first, last, storedStart: storedChunkRange(layout, first).start, storedEnd: storedChunkRange(layout, last).end };
}

/** Checks stored chunk i against the manifest's CRC and returns its original bytes (decompressed when zstd). */
export function decodeStoredChunk(layout: DataLayout, i: number, piece: Buffer, what: string): Buffer {
  const r = storedChunkRange(layout, i);
  if (piece.length !== r.end - r.start) {
    throw new RemoteCorruptionError(`${what}: got ${piece.length} bytes for chunk ${i}, want ${r.end - r.start}`);
  }
  const crc = crc32c(piece);
  if (crc !== layout.chunkCrcs[i]) {
    throw new RemoteCorruptionError(
      `${what}: chunk ${i} crc32c ${crc.toString(16)} does not match the manifest (${(layout.chunkCrcs[i] ?? 0).toString(16)})`,
    );
  }
  if (layout.compression === 'none') return piece;
  let plain: Buffer;
  try {
    plain = decompress(piece);
  } catch (e) {
    throw new RemoteCorruptionError(`${what}: chunk ${i} is not a valid zstd frame`, { cause: e });
  }
  const want = originalChunkLength(layout, i);
  if (plain.length !== want) {
    throw new RemoteCorruptionError(`${what}: chunk ${i} decompressed to ${plain.length} bytes, want ${want}`);
  }
  return ownedBytes(plain);
}

/** `buf` itself when it is the whole of its memory, else a copy that is (small buffers come from a shared pool). */
export function ownedBytes(buf: Buffer): Buffer {
  if (buf.byteOffset === 0 && buf.length === buf.buffer.byteLength) return buf;
  const own = Buffer.allocUnsafeSlow(buf.length);
  buf.copy(own);
  return own;
}

/**
 * Verifies and decodes stored chunks [first, last] held contiguously in
 * `stored`, returning the original bytes of each (views into `stored` when
 * uncompressed). Any CRC, length or zstd failure is a RemoteCorruptionError
 * naming `what`.
 */
export function decodeChunkList(layout: DataLayout, first: number, last: number, stored: Buffer, what: string): Buffer[] {
  const base = storedChunkRange(layout, first).start;
  const expected = storedChunkRange(layout, last).end - base;
  if (stored.length !== expected) {
    throw new RemoteCorruptionError(`${what}: got ${stored.length} bytes for chunks ${first}..${last}, want ${expected}`);
  }
  const out: Buffer[] = [];
  for (let i = first; i <= last; i++) {
    const r = storedChunkRange(layout, i);
    out.push(decodeStoredChunk(layout, i, stored.subarray(r.start - base, r.end - base), what));
  }
  return out;
}

/** decodeChunkList joined into one buffer (`stored` itself when uncompressed). */
export function decodeChunks(layout: DataLayout, first: number, last: number, stored: Buffer, what: string): Buffer {
  const out = decodeChunkList(layout, first, last, stored, what);
  if (layout.compression === 'none') return stored;
  return out.length === 1 ? (out[0] as Buffer) : Buffer.concat(out);
}
