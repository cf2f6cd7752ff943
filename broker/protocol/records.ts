// Records inside a record batch v2 (Kafka's DefaultRecord) and control records.
//
//   length varint | attributes int8 | timestampDelta varlong | offsetDelta varint
//   | keyLength varint (-1 = null) | key | valueLength varint (-1 = null) | value
//   | headerCount varint | headers: keyLength varint, key utf8, valueLength varint (-1 = null), value
//
// Decoded keys, values and header values are views into the source buffer (no
// copy); copy them if the source is reused. Structure errors raise
// KafkaError(INVALID_RECORD), as Kafka's InvalidRecordException does.
import { ErrorCode, KafkaError } from './errors.js';
import {
  type Cursor,
  VarintError,
  readVarint,
  readVarlong,
  sizeOfVarint,
  sizeOfVarlong,
  writeVarint,
  writeVarlong,
} from './varint.js';

export interface RecordHeader {
  key: string;
  value: Buffer | null;
}

export interface KafkaRecord {
  attributes: number;
  timestampDelta: bigint;
  offsetDelta: number;
  key: Buffer | null;
  value: Buffer | null;
  headers: RecordHeader[];
}

/** A record as handed to the encoder; strings are UTF-8 encoded. */
export interface RecordInput {
  key?: Buffer | string | null;
  value?: Buffer | string | null;
  headers?: ReadonlyArray<{ key: string; value: Buffer | string | null }>;
  /** Absolute timestamp (ms). Used by the batch builder to derive timestampDelta. */
  timestamp?: bigint | number;
  timestampDelta?: bigint | number;
  /** Defaults to the record's index in the batch. */
  offsetDelta?: number;
  /** Record-level attributes; unused by Kafka (always 0). */
  attributes?: number;
}

/** What `encodeRecordBody` needs: everything resolved. */
export interface ResolvedRecord {
  attributes: number;
  timestampDelta: bigint;
  offsetDelta: number;
  key: Buffer | null;
  value: Buffer | null;
  headers: RecordHeader[];
}

function invalid(message: string, cause?: unknown): KafkaError {
  return new KafkaError(ErrorCode.INVALID_RECORD, message, cause === undefined ? undefined : { cause });
}

export function toBytes(v: Buffer | string | null | undefined): Buffer | null {
  if (v === null || v === undefined) return null;
  return typeof v === 'string' ? Buffer.from(v, 'utf8') : v;
}

export function resolveRecord(r: RecordInput, index: number, timestampDelta: bigint): ResolvedRecord {
  return {
    attributes: r.attributes ?? 0,
    timestampDelta,
    offsetDelta: r.offsetDelta ?? index,
    key: toBytes(r.key),
    value: toBytes(r.value),
    headers: (r.headers ?? []).map((h) => ({ key: h.key, value: toBytes(h.value) })),
  };
}

function sizeOfBytes(b: Buffer | null): number {
  return b === null ? sizeOfVarint(-1) : sizeOfVarint(b.length) + b.length;
}

/** Size of the record body (everything after the length varint). */
export function sizeOfRecordBody(r: ResolvedRecord): number {
  let size = 1 + sizeOfVarlong(r.timestampDelta) + sizeOfVarint(r.offsetDelta);
  size += sizeOfBytes(r.key) + sizeOfBytes(r.value);
  size += sizeOfVarint(r.headers.length);
  for (const h of r.headers) {
    const k = Buffer.byteLength(h.key, 'utf8');
    size += sizeOfVarint(k) + k + sizeOfBytes(h.value);
  }
  return size;
}

/** Full encoded size, length prefix included. */
export function sizeOfRecord(r: ResolvedRecord): number {
  const body = sizeOfRecordBody(r);
  return sizeOfVarint(body) + body;
}

function writeBytes(buf: Buffer, pos: number, b: Buffer | null): number {
  if (b === null) return writeVarint(buf, pos, -1);
  pos = writeVarint(buf, pos, b.length);
  return pos + b.copy(buf, pos);
}

/** Writes one record (length prefix included) at `pos`; returns the position after it. */
export function writeRecord(buf: Buffer, pos: number, r: ResolvedRecord, bodySize = sizeOfRecordBody(r)): number {
  pos = writeVarint(buf, pos, bodySize);
  buf.writeInt8(r.attributes, pos++);
  pos = writeVarlong(buf, pos, r.timestampDelta);
  pos = writeVarint(buf, pos, r.offsetDelta);
  pos = writeBytes(buf, pos, r.key);
  pos = writeBytes(buf, pos, r.value);
  pos = writeVarint(buf, pos, r.headers.length);
  for (const h of r.headers) {
    const k = Buffer.byteLength(h.key, 'utf8');
    pos = writeVarint(buf, pos, k);
    pos += buf.write(h.key, pos, k, 'utf8');
    pos = writeBytes(buf, pos, h.value);
  }
  return pos;
}

/** Encodes records back to back, as they sit (uncompressed) in a batch body. */
export function encodeRecords(records: readonly ResolvedRecord[]): Buffer {
  const bodies = records.map(sizeOfRecordBody);
  let total = 0;
  for (const b of bodies) total += sizeOfVarint(b) + b;
  const buf = Buffer.allocUnsafe(total);
  let pos = 0;
  records.forEach((r, i) => {
    pos = writeRecord(buf, pos, r, bodies[i]);
  });
  return buf;
}

function readLength(c: Cursor, what: string): number {
  const n = readVarint(c);
  if (n < -1) throw invalid(`invalid ${what} length ${n}`);
  if (n > c.end - c.pos) throw invalid(`${what} of ${n} bytes overruns its record`);
  return n;
}

function readNullableBytes(c: Cursor, what: string): Buffer | null {
  const n = readLength(c, what);
  if (n === -1) return null;
  const b = c.buf.subarray(c.pos, c.pos + n);
  c.pos += n;
  return b;
}

/**
 * Reads one record at `c.pos` (bounded by `c.end`) and advances past it. The
 * record must fill exactly its declared length.
 */
export function readRecord(c: Cursor): KafkaRecord {
  const start = c.pos;
  try {
    const length = readVarint(c);
    if (length < 0 || length > c.end - c.pos) throw invalid(`invalid record length ${length}`);
    const outerEnd = c.end;
    const recordEnd = c.pos + length;
    c.end = recordEnd;
    try {
      if (c.pos >= recordEnd) throw invalid('record is empty');
      const attributes = c.buf.readInt8(c.pos++);
      const timestampDelta = readVarlong(c);
      const offsetDelta = readVarint(c);
      const key = readNullableBytes(c, 'key');
      const value = readNullableBytes(c, 'value');
      const headerCount = readVarint(c);
      if (headerCount < 0) throw invalid(`invalid header count ${headerCount}`);
      // Each header takes at least 2 bytes; reject absurd counts before allocating.
      if (headerCount * 2 > recordEnd - c.pos) throw invalid(`header count ${headerCount} overruns its record`);
      const headers: RecordHeader[] = [];
      for (let i = 0; i < headerCount; i++) {
        const k = readLength(c, 'header key');
        if (k < 0) throw invalid('header key is null');
        const hk = c.buf.toString('utf8', c.pos, c.pos + k);
        c.pos += k;
        headers.push({ key: hk, value: readNullableBytes(c, 'header value') });
      }
      if (c.pos !== recordEnd) {
        throw invalid(`record declared ${length} bytes but its fields took ${c.pos - (recordEnd - length)}`);
      }
      return { attributes, timestampDelta, offsetDelta, key, value, headers };
    } finally {
      c.end = outerEnd;
    }
  } catch (err) {
    c.pos = start;
    if (err instanceof VarintError) throw invalid(`malformed record at byte ${start}: ${err.message}`, err);
    throw err;
  }
}

/** What the append path needs from a record without materialising it. */
export interface RecordSummary {
  timestampDelta: bigint;
  offsetDelta: number;
  hasKey: boolean;
  /** Key and value lengths, -1 for null (error messages name them as Kafka's Record.toString does). */
  keySize: number;
  valueSize: number;
}

function skipNullableBytes(c: Cursor, what: string): number {
  const n = readLength(c, what);
  if (n > 0) c.pos += n;
  return n;
}

/**
 * Checks one record's structure exactly as readRecord does and advances past
 * it, without materialising key, value or headers (the append path's walk).
 */
export function scanRecord(c: Cursor): RecordSummary {
  const start = c.pos;
  const outerEnd = c.end;
  try {
    const length = readVarint(c);
    if (length < 0 || length > c.end - c.pos) throw invalid(`invalid record length ${length}`);
    const recordEnd = c.pos + length;
    c.end = recordEnd;
    if (c.pos >= recordEnd) throw invalid('record is empty');
    c.pos++; // attributes
    const timestampDelta = readVarlong(c);
    const offsetDelta = readVarint(c);
    const keySize = skipNullableBytes(c, 'key');
    const valueSize = skipNullableBytes(c, 'value');
    const headerCount = readVarint(c);
    if (headerCount < 0) throw invalid(`invalid header count ${headerCount}`);
    if (headerCount * 2 > recordEnd - c.pos) throw invalid(`header count ${headerCount} overruns its record`);
    for (let i = 0; i < headerCount; i++) {
      if (skipNullableBytes(c, 'header key') < 0) throw invalid('header key is null');
      skipNullableBytes(c, 'header value');
    }
    if (c.pos !== recordEnd) throw invalid(`record declared ${length} bytes but its fields took ${c.pos - (recordEnd - length)}`);
    return { timestampDelta, offsetDelta, hasKey: keySize >= 0, keySize, valueSize };
  } catch (err) {
    c.pos = start;
    if (err instanceof VarintError) throw invalid(`malformed record at byte ${start}: ${err.message}`, err);
    throw err;
  } finally {
    c.end = outerEnd;
  }
}

/** Reads exactly `count` records filling `buf[start, end)`. */
export function readRecords(buf: Buffer, count: number, start = 0, end = buf.length): KafkaRecord[] {
  const c: Cursor = { buf, pos: start, end };
  if (count < 0) throw invalid(`invalid record count ${count}`);
  // Each record is at least 7 bytes; a lying count must not drive allocation.
  if (count > (end - start) / 7 + 1) throw invalid(`record count ${count} cannot fit in ${end - start} bytes`);
  const records: KafkaRecord[] = [];
  for (let i = 0; i < count; i++) {
    if (c.pos >= end) throw invalid(`batch declares ${count} records but holds ${i}`);
    records.push(readRecord(c));
  }
  if (c.pos !== end) throw invalid(`batch holds ${end - c.pos} bytes after its ${count} declared records`);
  return records;
}

// ---- Control records (transaction markers and KRaft records) ----

export const ControlRecordType = {
  ABORT: 0,
  COMMIT: 1,
  LEADER_CHANGE: 2,
  SNAPSHOT_HEADER: 3,
  SNAPSHOT_FOOTER: 4,
  KRAFT_VERSION: 5,
  KRAFT_VOTERS: 6,
} as const;
export type ControlRecordTypeName = keyof typeof ControlRecordType;

export const CONTROL_RECORD_KEY_SIZE = 4;
export const END_TXN_MARKER_VALUE_SIZE = 6;

export interface ControlRecordKey {
  version: number;
  type: number;
}

export function encodeControlRecordKey(type: number, version = 0): Buffer {
  const b = Buffer.allocUnsafe(CONTROL_RECORD_KEY_SIZE);
  b.writeInt16BE(version, 0);
  b.writeInt16BE(type, 2);
  return b;
}

export function decodeControlRecordKey(key: Buffer | null): ControlRecordKey {
  if (key === null || key.length < CONTROL_RECORD_KEY_SIZE) {
    throw invalid(`control record key of ${key === null ? 'null' : key.length} bytes is too short`);
  }
  const version = key.readInt16BE(0);
  if (version < 0) throw invalid(`invalid control record key version ${version}`);
  return { version, type: key.readInt16BE(2) };
}

export interface EndTxnMarker {
  version: number;
  coordinatorEpoch: number;
}

export function encodeEndTxnMarkerValue(coordinatorEpoch: number, version = 0): Buffer {
  const b = Buffer.allocUnsafe(END_TXN_MARKER_VALUE_SIZE);
  b.writeInt16BE(version, 0);
  b.writeInt32BE(coordinatorEpoch, 2);
  return b;
}

export function decodeEndTxnMarkerValue(value: Buffer | null): EndTxnMarker {
  if (value === null || value.length < END_TXN_MARKER_VALUE_SIZE) {
    throw invalid(`end transaction marker value of ${value === null ? 'null' : value.length} bytes is too short`);
  }
  const version = value.readInt16BE(0);
  if (version < 0) throw invalid(`invalid end transaction marker version ${version}`);
  return { version, coordinatorEpoch: value.readInt32BE(2) };
}

/** The single record of a COMMIT/ABORT marker batch (build it with control + transactional). */
export function endTxnMarkerRecord(type: 'ABORT' | 'COMMIT', coordinatorEpoch: number): RecordInput {
  return {
    key: encodeControlRecordKey(ControlRecordType[type]),
    value: encodeEndTxnMarkerValue(coordinatorEpoch),
  };
}
