// Record batch v2 header: the 61 bytes every batch starts with. Pure; no I/O.
// The batch body (records, possibly compressed) stays an opaque Buffer on hot
// paths: the broker assigns offsets by rewriting baseOffset in place, which the
// CRC does not cover (it starts at `attributes`).
import { crc32c } from '@node-rs/crc32';

export const BATCH_HEADER_SIZE = 61;
/** Bytes before `length` is known: baseOffset (8) + batchLength (4). */
export const LOG_OVERHEAD = 12;

export const OFFSET_BASE_OFFSET = 0;
export const OFFSET_BATCH_LENGTH = 8;
export const OFFSET_PARTITION_LEADER_EPOCH = 12;
export const OFFSET_MAGIC = 16;
export const OFFSET_CRC = 17;
export const OFFSET_ATTRIBUTES = 21;
export const OFFSET_LAST_OFFSET_DELTA = 23;
export const OFFSET_BASE_TIMESTAMP = 27;
export const OFFSET_MAX_TIMESTAMP = 35;
export const OFFSET_PRODUCER_ID = 43;
export const OFFSET_PRODUCER_EPOCH = 51;
export const OFFSET_BASE_SEQUENCE = 53;
export const OFFSET_RECORDS_COUNT = 57;

export const ATTR_COMPRESSION_MASK = 0x07;
export const ATTR_TIMESTAMP_TYPE = 0x08;
export const ATTR_TRANSACTIONAL = 0x10;
export const ATTR_CONTROL = 0x20;

export const NO_PRODUCER_ID = -1n;
export const NO_SEQUENCE = -1;

export type CompressionType = 'none' | 'gzip' | 'snappy' | 'lz4' | 'zstd';
export const COMPRESSION_TYPES: readonly CompressionType[] = ['none', 'gzip', 'snappy', 'lz4', 'zstd'];

export interface BatchHeader {
  baseOffset: bigint;
  /** Bytes after the length field: total batch size is batchLength + LOG_OVERHEAD. */
  batchLength: number;
  partitionLeaderEpoch: number;
  magic: number;
  crc: number;
  attributes: number;
  lastOffsetDelta: number;
  baseTimestamp: bigint;
  maxTimestamp: bigint;
  producerId: bigint;
  producerEpoch: number;
  baseSequence: number;
  recordsCount: number;
}

export function readBatchHeader(buf: Buffer, pos = 0): BatchHeader {
  return {
    baseOffset: buf.readBigInt64BE(pos + OFFSET_BASE_OFFSET),
    batchLength: buf.readInt32BE(pos + OFFSET_BATCH_LENGTH),
    partitionLeaderEpoch: buf.readInt32BE(pos + OFFSET_PARTITION_LEADER_EPOCH),
    magic: buf.readInt8(pos + OFFSET_MAGIC),
    crc: buf.readUInt32BE(pos + OFFSET_CRC),
    attributes: buf.readInt16BE(pos + OFFSET_ATTRIBUTES),
    lastOffsetDelta: buf.readInt32BE(pos + OFFSET_LAST_OFFSET_DELTA),
    baseTimestamp: buf.readBigInt64BE(pos + OFFSET_BASE_TIMESTAMP),
    maxTimestamp: buf.readBigInt64BE(pos + OFFSET_MAX_TIMESTAMP),
    producerId: buf.readBigInt64BE(pos + OFFSET_PRODUCER_ID),
    producerEpoch: buf.readInt16BE(pos + OFFSET_PRODUCER_EPOCH),
    baseSequence: buf.readInt32BE(pos + OFFSET_BASE_SEQUENCE),
    recordsCount: buf.readInt32BE(pos + OFFSET_RECORDS_COUNT),
  };
}

export function batchSize(h: Pick<BatchHeader, 'batchLength'>): number {
  return h.batchLength + LOG_OVERHEAD;
}

export function lastOffset(h: Pick<BatchHeader, 'baseOffset' | 'lastOffsetDelta'>): bigint {
  return h.baseOffset + BigInt(h.lastOffsetDelta);
}

export function compressionOf(attributes: number): CompressionType {
  const t = COMPRESSION_TYPES[attributes & ATTR_COMPRESSION_MASK];
  if (t === undefined) throw new RangeError(`unknown compression codec id ${attributes & ATTR_COMPRESSION_MASK}`);
  return t;
}

export const isTransactional = (attributes: number): boolean => (attributes & ATTR_TRANSACTIONAL) !== 0;
export const isControl = (attributes: number): boolean => (attributes & ATTR_CONTROL) !== 0;
export const isLogAppendTime = (attributes: number): boolean => (attributes & ATTR_TIMESTAMP_TYPE) !== 0;

/** CRC-32C over attributes..end of the batch starting at `pos`. */
export function computeBatchCrc(buf: Buffer, pos: number, size: number): number {
  return crc32c(buf.subarray(pos + OFFSET_ATTRIBUTES, pos + size)) >>> 0;
}

export function batchCrcValid(buf: Buffer, pos: number, h: BatchHeader): boolean {
  return computeBatchCrc(buf, pos, batchSize(h)) === h.crc;
}

/** Rewrites the offsets-related header fields in place (not covered by the CRC). */
export function assignBaseOffset(buf: Buffer, pos: number, baseOffset: bigint): void {
  buf.writeBigInt64BE(baseOffset, pos + OFFSET_BASE_OFFSET);
}

export function assignPartitionLeaderEpoch(buf: Buffer, pos: number, epoch: number): void {
  buf.writeInt32BE(epoch, pos + OFFSET_PARTITION_LEADER_EPOCH);
}

/**
 * Sets LogAppendTime: attribute bit 3 and maxTimestamp, both covered by the CRC,
 * so the CRC is recomputed. Only used for topics with
 * message.timestamp.type=LogAppendTime.
 */
export function stampLogAppendTime(buf: Buffer, pos: number, size: number, now: bigint): void {
  const attrs = buf.readInt16BE(pos + OFFSET_ATTRIBUTES);
  buf.writeInt16BE(attrs | ATTR_TIMESTAMP_TYPE, pos + OFFSET_ATTRIBUTES);
  buf.writeBigInt64BE(now, pos + OFFSET_MAX_TIMESTAMP);
  buf.writeUInt32BE(computeBatchCrc(buf, pos, size), pos + OFFSET_CRC);
}
