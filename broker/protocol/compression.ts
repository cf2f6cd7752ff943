// The five record batch compression codecs (attributes bits 0-2): none, gzip,
// snappy, lz4 (frame format), zstd. All decode, all encode (the broker only
// encodes its own internal-topic batches and test fixtures).
//
// Every decoder is bounded by `maxOutputBytes`: a hostile batch of a few KB
// must not make the broker allocate gigabytes. Each codec learns (or bounds)
// the output size before allocating it, or streams with a running total.
// Failures surface as KafkaError(CORRUPT_MESSAGE), the code Kafka answers for a
// batch it cannot read.
import { gunzipSync, gzipSync } from 'node:zlib';
import { compressSync as snappyCompressRaw, uncompressSync as snappyUncompressRaw } from 'snappy';
import { compressFrameSync, decompressFrameSync } from 'lz4-napi';
import { compress as zstdCompress } from 'zstd-napi';
import zstdBinding from 'zstd-napi/binding.js';
import { ErrorCode, KafkaError } from './errors.js';
import { isXerialFramed, xerialFrame, xerialUnframe } from './snappy-xerial.js';

/** The codec a batch's attributes name. Defined here, re-exported by record-batch.ts, so the two modules do not import each other. */
export type CompressionType = 'none' | 'gzip' | 'snappy' | 'lz4' | 'zstd';
export const COMPRESSION_TYPES: readonly CompressionType[] = ['none', 'gzip', 'snappy', 'lz4', 'zstd'];

/**
 * Default cap on one batch's decompressed size. Kafka has none; 256 MiB is far
 * above any real batch (max.message.bytes defaults to ~1 MiB compressed and
 * realistic ratios stay under 50x) while keeping a bomb's damage bounded.
 */
export const DEFAULT_MAX_DECOMPRESSED_BYTES = 256 * 1024 * 1024;

export interface CompressOptions {
  /** Codec level; codec default when omitted. */
  level?: number;
  /** Snappy only: wrap raw blocks in xerial framing as Java producers do (default true). */
  snappyXerial?: boolean;
}

export function compress(type: CompressionType, data: Buffer, options: CompressOptions = {}): Buffer {
  switch (type) {
    case 'none':
      return data;
    case 'gzip':
      return gzipSync(data, options.level === undefined ? {} : { level: options.level });
    case 'snappy':
      return options.snappyXerial === false ? snappyCompressRaw(data) : xerialFrame(data, snappyCompressRaw);
    case 'lz4':
      return compressFrameSync(data);
    case 'zstd':
      return zstdCompress(data, options.level === undefined ? {} : { compressionLevel: options.level });
  }
}

export function decompress(
  type: CompressionType,
  data: Buffer,
  maxOutputBytes: number = DEFAULT_MAX_DECOMPRESSED_BYTES,
): Buffer {
  switch (type) {
    case 'none':
      return data;
    case 'gzip':
      return gunzip(data, maxOutputBytes);
    case 'snappy':
      return snappyDecompress(data, maxOutputBytes);
    case 'lz4':
      return lz4Decompress(data, maxOutputBytes);
    case 'zstd':
      return zstdDecompress(data, maxOutputBytes);
  }
}

function corrupt(codec: string, detail: string, cause?: unknown): KafkaError {
  return new KafkaError(
    ErrorCode.CORRUPT_MESSAGE,
    `cannot decompress ${codec} batch: ${detail}`,
    cause === undefined ? undefined : { cause },
  );
}

function tooLarge(codec: string, bound: number, max: number): KafkaError {
  return corrupt(codec, `output would exceed ${max} bytes (at least ${bound})`);
}

function gunzip(data: Buffer, max: number): Buffer {
  try {
    return gunzipSync(data, { maxOutputLength: max });
  } catch (err) {
    if ((err as { code?: unknown }).code === 'ERR_BUFFER_TOO_LARGE') throw tooLarge('gzip', max + 1, max);
    throw corrupt('gzip', (err as Error).message, err);
  }
}

// Snappy raw blocks begin with the uncompressed length as an unsigned varint.
function snappyRawLength(block: Buffer): number {
  let result = 0;
  for (let i = 0; i < 5 && i < block.length; i++) {
    const b = block[i] as number;
    result += (b & 0x7f) * 2 ** (7 * i);
    if ((b & 0x80) === 0) return result;
  }
  throw corrupt('snappy', 'bad uncompressed-length preamble');
}

function snappyBlock(block: Buffer, budget: number): Buffer {
  const len = snappyRawLength(block);
  if (len > budget) throw tooLarge('snappy', len, budget);
  try {
    const out = snappyUncompressRaw(block, { asBuffer: true });
    if (typeof out === 'string') throw corrupt('snappy', 'decoder returned a string');
    return out;
  } catch (err) {
    if (err instanceof KafkaError) throw err;
    throw corrupt('snappy', (err as Error).message, err);
  }
}

function snappyDecompress(data: Buffer, max: number): Buffer {
  if (!isXerialFramed(data)) return snappyBlock(data, max);
  let used = 0;
  const parts: Buffer[] = [];
  for (const block of xerialUnframe(data, (d) => corrupt('snappy', d))) {
    const out = snappyBlock(block, max - used);
    used += out.length;
    parts.push(out);
  }
  return parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts, used);
}

const LZ4_MAGIC = 0x184d2204;
const LZ4_BLOCK_MAX = [0, 0, 0, 0, 64 * 1024, 256 * 1024, 1024 * 1024, 4 * 1024 * 1024];

/**
 * Walks the LZ4 frame structure (no decoding) and returns an upper bound on its
 * output: every compressed block yields at most the frame's block maximum.
 */
export function lz4FrameOutputBound(data: Buffer): number {
  let pos = 0;
  let bound = 0;
  const need = (n: number): void => {
    if (pos + n > data.length) throw corrupt('lz4', 'frame is truncated');
  };
  while (pos < data.length) {
    need(4);
    const magic = data.readUInt32LE(pos);
    pos += 4;
    if ((magic & 0xfffffff0) === 0x184d2a50) {
      need(4);
      pos += 4 + data.readUInt32LE(pos);
      continue;
    }
    if (magic !== LZ4_MAGIC) throw corrupt('lz4', `bad frame magic 0x${magic.toString(16)}`);
    need(2);
    const flg = data[pos] as number;
    const bd = data[pos + 1] as number;
    pos += 2;
    if (flg >> 6 !== 1) throw corrupt('lz4', `unsupported frame version ${flg >> 6}`);
    const blockMax = LZ4_BLOCK_MAX[(bd >> 4) & 7] ?? 0;
    if (blockMax === 0) throw corrupt('lz4', `bad block max size id ${(bd >> 4) & 7}`);
    const blockChecksum = (flg & 0x10) !== 0;
    pos += ((flg & 0x08) !== 0 ? 8 : 0) + ((flg & 0x01) !== 0 ? 4 : 0) + 1;
    for (;;) {
      need(4);
      const word = data.readUInt32LE(pos);
      pos += 4;
      if (word === 0) break;
      const size = word & 0x7fffffff;
      const uncompressed = (word & 0x80000000) !== 0;
      if (size > blockMax) throw corrupt('lz4', `block of ${size} bytes exceeds the frame's ${blockMax}`);
      need(size + (blockChecksum ? 4 : 0));
      pos += size + (blockChecksum ? 4 : 0);
      bound += uncompressed ? size : blockMax;
    }
    if ((flg & 0x04) !== 0) {
      need(4);
      pos += 4;
    }
  }
  return bound;
}

function lz4Decompress(data: Buffer, max: number): Buffer {
  const bound = lz4FrameOutputBound(data);
  if (bound > max) throw tooLarge('lz4', bound, max);
  let out: Buffer;
  try {
    out = decompressFrameSync(data);
  } catch (err) {
    throw corrupt('lz4', (err as Error).message, err);
  }
  if (out.length > max) throw tooLarge('lz4', out.length, max);
  return out;
}

let zstdCtx: InstanceType<typeof zstdBinding.DCtx> | undefined;
const ZSTD_CHUNK = 128 * 1024;

function zstdDecompress(data: Buffer, max: number): Buffer {
  zstdCtx ??= new zstdBinding.DCtx();
  const dctx = zstdCtx;
  const parts: Buffer[] = [];
  let total = 0;
  let src = data;
  let lastRet = 0;
  try {
    dctx.reset(zstdBinding.ResetDirective.sessionOnly);
    while (src.length > 0 || lastRet !== 0) {
      const room = Math.min(ZSTD_CHUNK, max - total + 1);
      const chunk = Buffer.allocUnsafe(Math.max(room, 1));
      const [ret, produced, consumed] = dctx.decompressStream(chunk, src);
      lastRet = ret;
      src = src.subarray(consumed);
      if (produced > 0) {
        total += produced;
        if (total > max) throw tooLarge('zstd', total, max);
        parts.push(chunk.subarray(0, produced));
      } else if (consumed === 0) {
        // No progress with input left (or a frame left open at the end).
        throw corrupt('zstd', src.length === 0 ? 'frame is truncated' : 'decoder made no progress');
      }
    }
  } catch (err) {
    dctx.reset(zstdBinding.ResetDirective.sessionOnly);
    if (err instanceof KafkaError) throw err;
    throw corrupt('zstd', (err as Error).message, err);
  }
  return parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts, total);
}
