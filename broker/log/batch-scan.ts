// Walking record batches stored in a segment file without decoding records:
// header scans (offset translation, time search, tail loading) and the full CRC
// validation used by recovery. Reads go through SegmentFile in chunks.
import {
  BATCH_HEADER_SIZE,
  LOG_OVERHEAD,
  MAGIC_V2,
  OFFSET_BATCH_LENGTH,
  OFFSET_MAGIC,
  type BatchHeader,
  batchCrcValid,
  readBatchHeader,
} from '../protocol/record-batch.js';
import type { SegmentFile } from './segment-file.js';

export interface FileBatch {
  header: BatchHeader;
  position: number;
  size: number;
  lastOffset: bigint;
}

const HEADER_CHUNK = 64 * 1024;

/**
 * Yields the batches of `file[start, end)` from their headers. Stops quietly at a
 * partial or malformed header: recovery has already cut such tails from
 * anything below the log end, so a scan only meets one past a concurrent read.
 */
export async function* scanBatchHeaders(file: SegmentFile, start: number, end: number): AsyncGenerator<FileBatch> {
  let chunk: Buffer = Buffer.alloc(0);
  let chunkStart = start;
  let pos = start;
  while (pos + BATCH_HEADER_SIZE <= end) {
    if (pos < chunkStart || pos + BATCH_HEADER_SIZE > chunkStart + chunk.length) {
      chunkStart = pos;
      chunk = await file.read(pos, Math.min(HEADER_CHUNK, end - pos));
      if (chunk.length < BATCH_HEADER_SIZE) return;
    }
    const at = pos - chunkStart;
    if (chunk.readInt8(at + OFFSET_MAGIC) !== MAGIC_V2) return;
    const header = readBatchHeader(chunk, at);
    const size = header.batchLength + LOG_OVERHEAD;
    if (size < BATCH_HEADER_SIZE || pos + size > end) return;
    yield { header, position: pos, size, lastOffset: header.baseOffset + BigInt(header.lastOffsetDelta) };
    pos += size;
  }
}

export interface ValidBatchVisitor {
  (header: BatchHeader, buf: Buffer, at: number, position: number, size: number): void;
}

export interface ValidationResult {
  /** Bytes from `start` forming whole, CRC-valid, ordered batches. */
  validBytes: number;
  /** Why the walk stopped before the end, if it did. */
  stopReason: string | null;
}

const VALIDATE_CHUNK = 4 * 1024 * 1024;

/**
 * Recovery's walk: each batch must be whole, magic 2, CRC-valid, with offsets
 * increasing from `minNextOffset` and fitting `maxLastOffset`. Stops at the
 * first violation; everything from there on is a torn or corrupt tail.
 */
export async function validateBatches(
  file: SegmentFile,
  start: number,
  end: number,
  bounds: { minNextOffset: bigint; maxLastOffset: bigint },
  visit: ValidBatchVisitor,
): Promise<ValidationResult> {
  let pos = start;
  let nextOffset = bounds.minNextOffset;
  while (pos < end) {
    if (end - pos < LOG_OVERHEAD) return { validBytes: pos - start, stopReason: `partial batch header at ${pos}` };
    let chunk = await file.read(pos, Math.min(VALIDATE_CHUNK, end - pos));
    if (chunk.length < LOG_OVERHEAD) return { validBytes: pos - start, stopReason: `partial batch header at ${pos}` };
    let at = 0;
    const firstSize = chunk.readInt32BE(OFFSET_BATCH_LENGTH) + LOG_OVERHEAD;
    if (firstSize > chunk.length && firstSize >= BATCH_HEADER_SIZE && pos + firstSize <= end) {
      // A batch larger than the chunk: read exactly it.
      chunk = await file.read(pos, firstSize);
    }
    while (at + LOG_OVERHEAD <= chunk.length) {
      const size = chunk.readInt32BE(at + OFFSET_BATCH_LENGTH) + LOG_OVERHEAD;
      if (size < BATCH_HEADER_SIZE) return { validBytes: pos + at - start, stopReason: `batch size ${size} at ${pos + at}` };
      if (at + size > chunk.length) {
        if (pos + at + size > end) return { validBytes: pos + at - start, stopReason: `batch at ${pos + at} runs past the end` };
        break; // whole batch continues in the next chunk
      }
      const magic = chunk.readInt8(at + OFFSET_MAGIC);
      if (magic !== MAGIC_V2) return { validBytes: pos + at - start, stopReason: `magic ${magic} at ${pos + at}` };
      const header = readBatchHeader(chunk, at);
      if (!batchCrcValid(chunk, at, header)) return { validBytes: pos + at - start, stopReason: `CRC mismatch at ${pos + at}` };
      const last = header.baseOffset + BigInt(header.lastOffsetDelta);
      if (header.lastOffsetDelta < 0 || header.baseOffset < nextOffset || last > bounds.maxLastOffset) {
        return { validBytes: pos + at - start, stopReason: `offsets ${header.baseOffset}..${last} out of order at ${pos + at}` };
      }
      visit(header, chunk, at, pos + at, size);
      nextOffset = last + 1n;
      at += size;
    }
    if (at === 0) return { validBytes: pos - start, stopReason: `unreadable batch at ${pos}` };
    pos += at;
  }
  return { validBytes: pos - start, stopReason: null };
}
