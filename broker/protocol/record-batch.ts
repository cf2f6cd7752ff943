// Record batch v2: the 61-byte header every batch starts with, plus the batch
// builder, the full decoder, a header-only scanner and produce-path validation.
// Pure; no I/O. The batch body (records, possibly compressed) stays an opaque
// Buffer on hot paths: the broker assigns offsets by rewriting baseOffset in
// place, which the CRC does not cover (it starts at `attributes`).
//   hot path: iterateBatches (headers only), validateProduceRecords/validateBatchForAppend
//   cold path: buildRecordBatch (internal topics, markers, tests), decodeRecordBatch
import { crc32c } from '@node-rs/crc32';
import { COMPRESSION_TYPES, compress, decompress, type CompressionType } from './compression.js';
import { ErrorCode, KafkaError, recordValidationError, type RecordError } from './errors.js';
import {
  type KafkaRecord,
  type RecordInput,
  type ResolvedRecord,
  encodeRecords,
  endTxnMarkerRecord,
  readRecords,
  resolveRecord,
  scanRecord,
} from './records.js';
import type { Cursor } from './varint.js';

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

export { COMPRESSION_TYPES, type CompressionType } from './compression.js';

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

/** Rewrites the CRC field of the batch at `pos` from its current bytes. */
export function rewriteBatchCrc(buf: Buffer, pos: number, size: number): void {
  buf.writeUInt32BE(computeBatchCrc(buf, pos, size), pos + OFFSET_CRC);
}

// ---- Building batches (internal topics, control markers, tests) ----

export const MAGIC_V2 = 2;
export const NO_TIMESTAMP = -1n;
export const NO_PARTITION_LEADER_EPOCH = -1;

export interface BuildRecordBatchOptions {
  records: readonly RecordInput[];
  baseOffset?: bigint;
  partitionLeaderEpoch?: number;
  compression?: CompressionType;
  compressionLevel?: number;
  producerId?: bigint;
  producerEpoch?: number;
  baseSequence?: number;
  transactional?: boolean;
  control?: boolean;
  /** Sets the LogAppendTime attribute; maxTimestamp then defaults to `timestamp`. */
  logAppendTime?: boolean;
  /**
   * Base timestamp (ms). Defaults to the first record's absolute `timestamp`,
   * else -1 (NO_TIMESTAMP). Records without `timestamp` use base + timestampDelta.
   */
  timestamp?: bigint | number;
  /** Overrides the computed maxTimestamp (the largest record timestamp). */
  maxTimestamp?: bigint | number;
  /** Overrides lastOffsetDelta (default: the last record's offsetDelta, 0 if none). */
  lastOffsetDelta?: number;
}

const big = (v: bigint | number): bigint => (typeof v === 'bigint' ? v : BigInt(v));

/** Encodes a complete record batch v2 with a valid CRC-32C. */
export function buildRecordBatch(opts: BuildRecordBatchOptions): Buffer {
  const compression = opts.compression ?? 'none';
  const firstTs = opts.records.find((r) => r.timestamp !== undefined)?.timestamp;
  const baseTimestamp = opts.timestamp !== undefined ? big(opts.timestamp) : firstTs !== undefined ? big(firstTs) : NO_TIMESTAMP;
  let maxTs = NO_TIMESTAMP;
  const resolved: ResolvedRecord[] = opts.records.map((r, i) => {
    const ts = r.timestamp !== undefined ? big(r.timestamp) : baseTimestamp + big(r.timestampDelta ?? 0);
    if (ts > maxTs) maxTs = ts;
    return resolveRecord(r, i, ts - baseTimestamp);
  });
  if (opts.logAppendTime === true) maxTs = baseTimestamp;
  const maxTimestamp = opts.maxTimestamp !== undefined ? big(opts.maxTimestamp) : maxTs;
  const lastOffsetDelta = opts.lastOffsetDelta ?? resolved[resolved.length - 1]?.offsetDelta ?? 0;

  const plain = encodeRecords(resolved);
  const body = compression === 'none' ? plain : compress(compression, plain, opts.compressionLevel === undefined ? {} : { level: opts.compressionLevel });
  const size = BATCH_HEADER_SIZE + body.length;
  const buf = Buffer.allocUnsafe(size);
  let attributes = COMPRESSION_TYPES.indexOf(compression);
  if (opts.logAppendTime === true) attributes |= ATTR_TIMESTAMP_TYPE;
  if (opts.transactional === true) attributes |= ATTR_TRANSACTIONAL;
  if (opts.control === true) attributes |= ATTR_CONTROL;

  buf.writeBigInt64BE(opts.baseOffset ?? 0n, OFFSET_BASE_OFFSET);
  buf.writeInt32BE(size - LOG_OVERHEAD, OFFSET_BATCH_LENGTH);
  buf.writeInt32BE(opts.partitionLeaderEpoch ?? NO_PARTITION_LEADER_EPOCH, OFFSET_PARTITION_LEADER_EPOCH);
  buf.writeInt8(MAGIC_V2, OFFSET_MAGIC);
  buf.writeInt16BE(attributes, OFFSET_ATTRIBUTES);
  buf.writeInt32BE(lastOffsetDelta, OFFSET_LAST_OFFSET_DELTA);
  buf.writeBigInt64BE(baseTimestamp, OFFSET_BASE_TIMESTAMP);
  buf.writeBigInt64BE(maxTimestamp, OFFSET_MAX_TIMESTAMP);
  buf.writeBigInt64BE(opts.producerId ?? NO_PRODUCER_ID, OFFSET_PRODUCER_ID);
  buf.writeInt16BE(opts.producerEpoch ?? -1, OFFSET_PRODUCER_EPOCH);
  buf.writeInt32BE(opts.baseSequence ?? NO_SEQUENCE, OFFSET_BASE_SEQUENCE);
  buf.writeInt32BE(resolved.length, OFFSET_RECORDS_COUNT);
  body.copy(buf, BATCH_HEADER_SIZE);
  rewriteBatchCrc(buf, 0, size);
  return buf;
}

/** A COMMIT/ABORT marker batch as the transaction coordinator writes it. */
export function buildEndTxnMarkerBatch(opts: {
  type: 'ABORT' | 'COMMIT';
  coordinatorEpoch: number;
  producerId: bigint;
  producerEpoch: number;
  timestamp: bigint | number;
  baseOffset?: bigint;
  partitionLeaderEpoch?: number;
}): Buffer {
  return buildRecordBatch({
    records: [endTxnMarkerRecord(opts.type, opts.coordinatorEpoch)],
    baseOffset: opts.baseOffset ?? 0n,
    partitionLeaderEpoch: opts.partitionLeaderEpoch ?? NO_PARTITION_LEADER_EPOCH,
    producerId: opts.producerId,
    producerEpoch: opts.producerEpoch,
    transactional: true,
    control: true,
    timestamp: opts.timestamp,
  });
}

// ---- Decoding whole batches (tests, internal topics, tooling; not the hot path) ----

export interface DecodedRecord extends KafkaRecord {
  /** baseOffset + offsetDelta. */
  offset: bigint;
  /** baseTimestamp + timestampDelta, or maxTimestamp for LogAppendTime batches. */
  timestamp: bigint;
}

export interface DecodedBatch {
  header: BatchHeader;
  compression: CompressionType;
  records: DecodedRecord[];
}

export interface DecodeBatchOptions {
  /** Verify the CRC-32C first (default true). */
  verifyCrc?: boolean;
  maxDecompressedBytes?: number;
}

function corruptBatch(message: string, cause?: unknown): KafkaError {
  return new KafkaError(ErrorCode.CORRUPT_MESSAGE, message, cause === undefined ? undefined : { cause });
}

/** Reads and checks the framing of the batch at `pos` (complete, magic 2, sane length). */
function frameAt(buf: Buffer, pos: number): { header: BatchHeader; size: number } {
  if (buf.length - pos < BATCH_HEADER_SIZE) throw corruptBatch(`batch at ${pos} is truncated (${buf.length - pos} bytes)`);
  const magic = buf.readInt8(pos + OFFSET_MAGIC);
  if (magic !== MAGIC_V2) throw corruptBatch(`batch at ${pos} has magic ${magic}, expected 2`);
  const header = readBatchHeader(buf, pos);
  const size = batchSize(header);
  if (size < BATCH_HEADER_SIZE) throw corruptBatch(`batch at ${pos} declares length ${header.batchLength}, below the header size`);
  if (size > buf.length - pos) throw corruptBatch(`batch at ${pos} is truncated: ${buf.length - pos} of ${size} bytes`);
  return { header, size };
}

/** Decodes the batch at `pos`: header plus every record, decompressing as needed. */
export function decodeRecordBatch(buf: Buffer, pos = 0, options: DecodeBatchOptions = {}): DecodedBatch {
  const { header, size } = frameAt(buf, pos);
  if (options.verifyCrc !== false && !batchCrcValid(buf, pos, header)) {
    throw corruptBatch(`batch at ${pos} fails its CRC check (stored ${header.crc})`);
  }
  const compression = codecOf(header.attributes);
  const body = decompress(compression, buf.subarray(pos + BATCH_HEADER_SIZE, pos + size), options.maxDecompressedBytes);
  const raw = readRecords(body, header.recordsCount);
  const logAppend = isLogAppendTime(header.attributes);
  const records = raw.map((r): DecodedRecord => ({
    ...r,
    offset: header.baseOffset + BigInt(r.offsetDelta),
    timestamp: logAppend ? header.maxTimestamp : header.baseTimestamp + r.timestampDelta,
  }));
  return { header, compression, records };
}

/** Decodes every complete batch of `buf` (a trailing partial batch is ignored). */
export function decodeRecordBatches(buf: Buffer, options: DecodeBatchOptions = {}): DecodedBatch[] {
  const out: DecodedBatch[] = [];
  for (const b of iterateBatches(buf)) out.push(decodeRecordBatch(buf, b.position, options));
  return out;
}

function codecOf(attributes: number): CompressionType {
  const t = COMPRESSION_TYPES[attributes & ATTR_COMPRESSION_MASK];
  if (t === undefined) throw corruptBatch(`unknown compression codec id ${attributes & ATTR_COMPRESSION_MASK}`);
  return t;
}

// ---- Walking the batches of a buffer without decoding records (hot path) ----

export interface BatchPosition {
  header: BatchHeader;
  /** Byte offset of the batch in the scanned buffer. */
  position: number;
  /** Whole batch size, LOG_OVERHEAD included. */
  size: number;
}

/** Bytes after the last complete batch that do not form a whole batch. */
export interface TruncatedTail {
  position: number;
  available: number;
  /** Declared size of the cut batch, when at least its length field is present. */
  needed: number | undefined;
}

/** Framing that cannot be a v2 batch (length below the header, wrong magic, over the size cap). */
export class CorruptBatchError extends KafkaError {
  constructor(
    readonly position: number,
    message: string,
  ) {
    super(ErrorCode.CORRUPT_MESSAGE, message);
    this.name = 'CorruptBatchError';
  }
}

/**
 * Iterates the batches of `buf[start, end)` reading only their 61-byte headers.
 * A partial final batch (a fetch cut at max bytes, a torn write) ends the walk
 * and is reported in `truncated`; bad framing throws CorruptBatchError, after
 * which `validEnd` still tells where the good prefix ends.
 */
export class BatchScanner implements Iterable<BatchPosition> {
  validEnd: number;
  truncated: TruncatedTail | undefined;

  constructor(
    readonly buf: Buffer,
    readonly start = 0,
    readonly end = buf.length,
    readonly maxBatchSize = Number.MAX_SAFE_INTEGER,
  ) {
    this.validEnd = start;
  }

  *[Symbol.iterator](): Iterator<BatchPosition> {
    const { buf, end } = this;
    let pos = this.start;
    this.validEnd = pos;
    this.truncated = undefined;
    while (pos < end) {
      const available = end - pos;
      if (available < LOG_OVERHEAD) {
        this.truncated = { position: pos, available, needed: undefined };
        return;
      }
      const size = buf.readInt32BE(pos + OFFSET_BATCH_LENGTH) + LOG_OVERHEAD;
      if (size < BATCH_HEADER_SIZE) {
        throw new CorruptBatchError(pos, `batch at ${pos} declares size ${size}, below the ${BATCH_HEADER_SIZE}-byte header`);
      }
      if (size > this.maxBatchSize) {
        throw new CorruptBatchError(pos, `batch at ${pos} declares size ${size}, above the limit ${this.maxBatchSize}`);
      }
      if (available > OFFSET_MAGIC) {
        const magic = buf.readInt8(pos + OFFSET_MAGIC);
        if (magic !== MAGIC_V2) throw new CorruptBatchError(pos, `batch at ${pos} has magic ${magic}, expected 2`);
      }
      if (available < size) {
        this.truncated = { position: pos, available, needed: size };
        return;
      }
      const header = readBatchHeader(buf, pos);
      yield { header, position: pos, size };
      pos += size;
      this.validEnd = pos;
    }
  }
}

export function iterateBatches(buf: Buffer, start = 0, end = buf.length, maxBatchSize?: number): BatchScanner {
  return new BatchScanner(buf, start, end, maxBatchSize);
}

// ---- Produce-path validation (Kafka's ProduceRequest.validateRecords, UnifiedLog
// ---- analyzeAndValidateRecords and LogValidator.validateBatch/validateRecord) ----

/**
 * How far into a batch the append path looks:
 * - 'header': framing, size, CRC, header consistency.
 * - 'records' (default): also walks the records of uncompressed batches (cheap:
 *   varints only, no copy); compressed bodies are trusted to the CRC.
 * - 'deep': also decompresses compressed batches and walks their records, as
 *   Kafka's LogValidator always does. Forced by `compacted`.
 */
export type ValidationLevel = 'header' | 'records' | 'deep';

export interface AppendValidationOptions {
  /** 'client' (default) applies the producer-only rules; 'internal' is the broker's own writes. */
  origin?: 'client' | 'internal';
  level?: ValidationLevel;
  /** cleanup.policy=compact: every record needs a key (INVALID_RECORD otherwise). */
  compacted?: boolean;
  maxDecompressedBytes?: number;
  /**
   * message.timestamp.type=CreateTime bounds (message.timestamp.before/after.max.ms).
   * Checked per record when records are walked, else on baseTimestamp and maxTimestamp.
   * Omit for LogAppendTime topics.
   */
  createTime?: { now: bigint | number; beforeMaxMs: bigint | number; afterMaxMs: bigint | number };
  /**
   * message.timestamp.type=LogAppendTime: a client batch that already claims
   * LogAppendTime is INVALID_TIMESTAMP (Kafka's validateTimestamp). The broker
   * stamps the time afterwards with stampLogAppendTime.
   */
  logAppendTimeTopic?: boolean;
  /** "topic-partition", as Kafka's record error messages name it. */
  topicPartition?: string;
}

export interface ValidatedBatch extends BatchPosition {
  compression: CompressionType;
  /**
   * A compressed batch whose records' offset deltas are not 0, 1, 2...: Kafka's
   * LogValidator rebuilds such a batch (older clients wrote them) instead of
   * refusing it; the append path rebuilds it too.
   */
  rebuild?: boolean;
}

function invalidRecord(message: string): KafkaError {
  return new KafkaError(ErrorCode.INVALID_RECORD, message);
}

/**
 * Validates the single batch at `pos` for appending. Throws KafkaError with
 * CORRUPT_MESSAGE (framing, CRC, unreadable body), INVALID_RECORD (wrong
 * magic, inconsistent counts/offsets, control batch from a client, bad record
 * structure), MESSAGE_TOO_LARGE (size over `maxMessageBytes`) or
 * INVALID_TIMESTAMP. Where Kafka's LogValidator judges single records (a
 * missing key on a compacted topic, a timestamp out of range, LogAppendTime
 * set by a producer) the error is a RecordValidationError naming every bad
 * record, when the records are walked.
 */
export function validateBatchForAppend(
  buf: Buffer,
  pos: number,
  maxMessageBytes: number,
  options: AppendValidationOptions = {},
): ValidatedBatch {
  const available = buf.length - pos;
  if (available < LOG_OVERHEAD) throw corruptBatch(`batch at ${pos} is truncated (${available} bytes)`);
  const size = buf.readInt32BE(pos + OFFSET_BATCH_LENGTH) + LOG_OVERHEAD;
  if (size < BATCH_HEADER_SIZE) throw corruptBatch(`batch size ${size} is below the ${BATCH_HEADER_SIZE}-byte header`);
  if (available <= OFFSET_MAGIC) throw corruptBatch(`batch at ${pos} is truncated (${available} bytes)`);
  const magic = buf.readInt8(pos + OFFSET_MAGIC);
  if (magic < 0 || magic > MAGIC_V2) throw corruptBatch(`invalid magic ${magic}`);
  if (magic !== MAGIC_V2) throw invalidRecord(`record batches must have magic version 2, got ${magic}`);
  if (available < size) throw corruptBatch(`batch at ${pos} is truncated: ${available} of ${size} bytes`);
  const header = readBatchHeader(buf, pos);
  const fromClient = (options.origin ?? 'client') === 'client';
  if (fromClient && header.baseOffset !== 0n) throw invalidRecord(`batch baseOffset should be 0, but it is ${header.baseOffset}`);
  if (size > maxMessageBytes) {
    throw new KafkaError(ErrorCode.MESSAGE_TOO_LARGE, `batch of ${size} bytes exceeds max.message.bytes ${maxMessageBytes}`);
  }
  if (!batchCrcValid(buf, pos, header)) {
    throw corruptBatch(`batch is corrupt (stored crc = ${header.crc}, computed = ${computeBatchCrc(buf, pos, size)})`);
  }
  const compression = codecOf(header.attributes);
  if (fromClient) {
    if (header.lastOffsetDelta < 0) throw invalidRecord(`batch has an invalid offset range: lastOffsetDelta ${header.lastOffsetDelta}`);
    if (header.recordsCount <= 0) throw invalidRecord(`invalid reported count for record batch: ${header.recordsCount}`);
    if (header.lastOffsetDelta + 1 !== header.recordsCount) {
      throw invalidRecord(`inconsistent batch offset range [0, ${header.lastOffsetDelta}] and count of records ${header.recordsCount}`);
    }
    if (isControl(header.attributes)) throw invalidRecord('clients are not allowed to write control records');
    if (header.producerId >= 0n && header.baseSequence < 0) {
      throw invalidRecord(`invalid sequence number ${header.baseSequence} for producerId ${header.producerId}`);
    }
  }
  const ts = options.createTime;
  const batchLogAppend = isLogAppendTime(header.attributes);
  const level = options.compacted === true ? 'deep' : (options.level ?? 'records');
  const walk = level === 'deep' || (level === 'records' && compression === 'none');
  if (walk) {
    const consecutive = walkRecordsForAppend(buf, pos, size, header, compression, { ...options, logAppendTimeTopic: options.logAppendTimeTopic === true && fromClient });
    return consecutive ? { header, position: pos, size, compression } : { header, position: pos, size, compression, rebuild: true };
  }
  if (options.logAppendTimeTopic === true && fromClient && batchLogAppend) {
    throw new KafkaError(ErrorCode.INVALID_TIMESTAMP, 'producers must not set the LogAppendTime timestamp type');
  }
  if (ts !== undefined) {
    if (!batchLogAppend) checkTimestamp(header.baseTimestamp, ts);
    checkTimestamp(header.maxTimestamp, ts);
  }
  return { header, position: pos, size, compression };
}

/** Batch-level timestamp check, for batches whose records are not walked. */
function checkTimestamp(t: bigint, bounds: NonNullable<AppendValidationOptions['createTime']>): void {
  if (t === NO_TIMESTAMP || !timestampOutOfRange(t, bounds)) return;
  const now = big(bounds.now);
  throw new KafkaError(ErrorCode.INVALID_TIMESTAMP, `timestamp ${t} is out of range [${now - big(bounds.beforeMaxMs)}, ${now + big(bounds.afterMaxMs)}]`);
}

/** Whether a record timestamp lies outside message.timestamp.before/after.max.ms of now. */
function timestampOutOfRange(t: bigint, bounds: NonNullable<AppendValidationOptions['createTime']>): boolean {
  const now = big(bounds.now);
  return now - t > big(bounds.beforeMaxMs) || t - now > big(bounds.afterMaxMs);
}

/**
 * Walks every record (decompressing if need be). Structure errors throw at
 * once; record errors (Kafka's validateKey and validateTimestamp, with their
 * messages) are collected over the whole batch and thrown together, as
 * LogValidator.processRecordErrors does. Returns whether the offset deltas are
 * consecutive; only a compressed batch may have them otherwise (see
 * ValidatedBatch.rebuild).
 */
function walkRecordsForAppend(
  buf: Buffer,
  pos: number,
  size: number,
  header: BatchHeader,
  compression: CompressionType,
  options: AppendValidationOptions,
): boolean {
  const raw = buf.subarray(pos + BATCH_HEADER_SIZE, pos + size);
  const body = compression === 'none' ? raw : decompress(compression, raw, options.maxDecompressedBytes);
  const count = header.recordsCount;
  if (count < 0 || count > body.length) throw invalidRecord(`invalid record count ${count} for ${body.length} bytes`);
  const c: Cursor = { buf: body, pos: 0, end: body.length };
  const batchLogAppend = isLogAppendTime(header.attributes);
  const where = options.topicPartition ?? 'unknown';
  const errors: { code: number; error: RecordError }[] = [];
  let consecutive = true;
  for (let i = 0; i < count; i++) {
    if (c.pos >= c.end) throw invalidRecord(`batch declares ${count} records but holds ${i}`);
    const r = scanRecord(c);
    if (r.offsetDelta !== i) {
      // Kafka does not look at the inner offsets of an uncompressed batch; Sediment refuses them: stricter than Kafka, and kept so that stored batches number their records 0, 1, 2...
      if (compression === 'none') throw invalidRecord(`record ${i} has offsetDelta ${r.offsetDelta}, expected ${i}`);
      consecutive = false;
    }
    // A LogAppendTime batch's records all read as its maxTimestamp.
    const t = batchLogAppend ? header.maxTimestamp : header.baseTimestamp + r.timestampDelta;
    // The client's baseOffset is 0, so a record's offset is its delta (what Kafka's messages print).
    const offset = BigInt(r.offsetDelta);
    if (options.compacted === true && !r.hasKey) {
      errors.push({ code: ErrorCode.INVALID_RECORD, error: { batchIndex: i, message: `Compacted topic cannot accept message without key in topic partition ${where}` } });
    } else if (options.createTime !== undefined && t !== NO_TIMESTAMP) {
      if (timestampOutOfRange(t, options.createTime)) {
        const now = big(options.createTime.now);
        errors.push({
          code: ErrorCode.INVALID_TIMESTAMP,
          error: {
            batchIndex: i,
            message: `Timestamp ${t} of message with offset ${offset} is out of range. The timestamp should be within [${now - big(options.createTime.beforeMaxMs)}, ${now + big(options.createTime.afterMaxMs)}]`,
          },
        });
      }
    } else if (options.logAppendTimeTopic === true && batchLogAppend) {
      const record = `DefaultRecord(offset=${offset}, timestamp=${t}, key=${Math.max(0, r.keySize)} bytes, value=${Math.max(0, r.valueSize)} bytes)`;
      errors.push({ code: ErrorCode.INVALID_TIMESTAMP, error: { batchIndex: i, message: `Invalid timestamp type in message ${record}. Producer should not set timestamp type to LogAppendTime.` } });
    }
  }
  if (c.pos !== c.end) throw invalidRecord(`batch holds ${c.end - c.pos} bytes after its ${count} declared records`);
  if (errors.length > 0) throw recordValidationError(errors);
  return consecutive;
}

/**
 * Produce v3+ rules for one partition's records: exactly one complete batch
 * (INVALID_RECORD otherwise), then validateBatchForAppend. Bytes after the
 * batch that do not form a second whole batch are ignored, as Kafka does.
 */
export function validateProduceRecords(
  buf: Buffer,
  maxMessageBytes: number,
  options: AppendValidationOptions = {},
): ValidatedBatch {
  if (buf.length < LOG_OVERHEAD) throw invalidRecord('produce requests must have at least one record batch per partition');
  const size = buf.readInt32BE(OFFSET_BATCH_LENGTH) + LOG_OVERHEAD;
  if (size >= BATCH_HEADER_SIZE && buf.length < size) {
    throw invalidRecord('produce requests must have at least one record batch per partition');
  }
  const batch = validateBatchForAppend(buf, 0, maxMessageBytes, options);
  const rest = buf.length - batch.size;
  if (rest >= LOG_OVERHEAD) {
    const next = buf.readInt32BE(batch.size + OFFSET_BATCH_LENGTH) + LOG_OVERHEAD;
    if (next >= BATCH_HEADER_SIZE && rest >= next) {
      throw invalidRecord('produce requests must contain exactly one record batch per partition');
    }
  }
  return batch;
}
