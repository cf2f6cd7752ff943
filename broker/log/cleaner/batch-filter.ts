// Rewriting one stored record batch for the cleaner (Kafka's
// MemoryRecords.filterTo for a single batch). Pure: bytes in, bytes out.
//
// A batch whose records all stay is copied as it is. Otherwise the retained
// records are re-encoded into a batch with the same base offset, last offset
// delta (so the producer's last sequence survives), record offset deltas,
// producer id/epoch/base sequence, leader epoch, timestamp type, transactional
// and control flags, and compression codec (recompressed), with a fresh CRC.
// A batch left without records is dropped, or kept as a bare 61-byte header
// when the cleaner must preserve it (producer state, segment end).
//
// Delete horizon (KIP-534): the first time a batch holding a tombstone (or a
// removable transaction marker) is cleaned, its base timestamp becomes
// `now + delete.retention.ms` and attribute bit 6 says so; record timestamps are
// re-expressed relative to it, so their absolute values do not change. Later
// rounds drop the tombstone once that horizon has passed.
import {
  ATTR_CONTROL,
  ATTR_TIMESTAMP_TYPE,
  ATTR_TRANSACTIONAL,
  OFFSET_ATTRIBUTES,
  type BatchHeader,
  type CompressionType,
  type DecodedRecord,
  buildRecordBatch,
  decodeRecordBatch,
  rewriteBatchCrc,
} from '../../protocol/record-batch.js';
import type { RecordInput } from '../../protocol/records.js';

/** Attribute bit 6: the base timestamp holds the delete horizon (Kafka's DELETE_HORIZON_FLAG_MASK). */
export const ATTR_DELETE_HORIZON = 0x40;

export const hasDeleteHorizon = (attributes: number): boolean => (attributes & ATTR_DELETE_HORIZON) !== 0;

/** The batch's delete horizon (ms), or null when none was set. */
export function deleteHorizonOf(header: BatchHeader): bigint | null {
  return hasDeleteHorizon(header.attributes) ? header.baseTimestamp : null;
}

/**
 * What to do with a batch before looking at its records (Kafka's BatchRetention):
 * drop it whole, keep it even if no record stays, or keep it only if some record stays.
 */
export type BatchRetention = 'delete' | 'retainEmpty' | 'deleteEmpty';

export interface BatchFilter {
  retention: BatchRetention;
  /** A control batch whose transaction left no data: gets a delete horizon like a tombstone. */
  markerForEmptyTxn: boolean;
  keepRecord(record: DecodedRecord): boolean;
  /** now + delete.retention.ms, stamped on batches that first get a horizon. */
  newDeleteHorizonMs: bigint;
}

export type FilterKind = 'original' | 'rewritten' | 'empty' | 'dropped';

export interface FilterOutcome {
  kind: FilterKind;
  /** Bytes to write in place of the batch; null when dropped. */
  output: Buffer | null;
  recordsRead: number;
  recordsRetained: number;
  /** The horizon carried by the output batch, or null. */
  deleteHorizonMs: bigint | null;
  /** Whether the output keeps a tombstone or marker that a later round may remove. */
  holdsRemovable: boolean;
}

/** Decodes `batch` (CRC checked: corruption is never re-sealed with a fresh CRC) and applies `filter`. */
export function filterBatch(batch: Buffer, filter: BatchFilter): FilterOutcome {
  const decoded = decodeRecordBatch(batch, 0);
  return filterDecodedBatch(batch, decoded.header, decoded.records, decoded.compression, filter);
}

export function filterDecodedBatch(
  batch: Buffer,
  header: BatchHeader,
  records: readonly DecodedRecord[],
  compression: CompressionType,
  filter: BatchFilter,
): FilterOutcome {
  const recordsRead = records.length;
  if (filter.retention === 'delete') {
    return { kind: 'dropped', output: null, recordsRead, recordsRetained: 0, deleteHorizonMs: null, holdsRemovable: false };
  }
  const retained: DecodedRecord[] = [];
  let containsTombstones = false;
  for (const r of records) {
    if (!filter.keepRecord(r)) continue;
    retained.push(r);
    if (r.value === null) containsTombstones = true;
  }
  const isControl = (header.attributes & ATTR_CONTROL) !== 0;
  const existingHorizon = deleteHorizonOf(header);
  if (retained.length > 0) {
    const holdsRemovable = containsTombstones || (isControl && filter.markerForEmptyTxn);
    const needHorizon = holdsRemovable && existingHorizon === null;
    if (retained.length === records.length && !needHorizon) {
      return { kind: 'original', output: batch, recordsRead, recordsRetained: retained.length, deleteHorizonMs: existingHorizon, holdsRemovable };
    }
    const horizon = needHorizon ? filter.newDeleteHorizonMs : existingHorizon;
    const output = rebuildBatch(header, retained, compression, horizon);
    return { kind: 'rewritten', output, recordsRead, recordsRetained: retained.length, deleteHorizonMs: horizon, holdsRemovable };
  }
  if (filter.retention === 'retainEmpty') {
    return { kind: 'empty', output: emptyBatchHeader(header), recordsRead, recordsRetained: 0, deleteHorizonMs: null, holdsRemovable: false };
  }
  return { kind: 'dropped', output: null, recordsRead, recordsRetained: 0, deleteHorizonMs: null, holdsRemovable: false };
}

function batchFlags(header: BatchHeader): { transactional: boolean; control: boolean; logAppendTime: boolean } {
  return {
    transactional: (header.attributes & ATTR_TRANSACTIONAL) !== 0,
    control: (header.attributes & ATTR_CONTROL) !== 0,
    logAppendTime: (header.attributes & ATTR_TIMESTAMP_TYPE) !== 0,
  };
}

/** The retained records in a batch shaped like the original (see the file comment). */
export function rebuildBatch(
  header: BatchHeader,
  retained: readonly DecodedRecord[],
  compression: CompressionType,
  deleteHorizonMs: bigint | null,
): Buffer {
  const flags = batchFlags(header);
  const base = deleteHorizonMs ?? header.baseTimestamp;
  let maxTimestamp = -1n;
  const records: RecordInput[] = retained.map((r) => {
    // The record's own (CreateTime) timestamp, whatever the batch's base was.
    const absolute = header.baseTimestamp + r.timestampDelta;
    if (absolute > maxTimestamp) maxTimestamp = absolute;
    return { key: r.key, value: r.value, headers: r.headers, offsetDelta: r.offsetDelta, timestampDelta: absolute - base, attributes: r.attributes };
  });
  const out = buildRecordBatch({
    records,
    baseOffset: header.baseOffset,
    partitionLeaderEpoch: header.partitionLeaderEpoch,
    compression,
    producerId: header.producerId,
    producerEpoch: header.producerEpoch,
    baseSequence: header.baseSequence,
    transactional: flags.transactional,
    control: flags.control,
    logAppendTime: flags.logAppendTime,
    timestamp: base,
    // LogAppendTime batches carry the append time in maxTimestamp; CreateTime ones the largest retained record time.
    maxTimestamp: flags.logAppendTime ? header.maxTimestamp : maxTimestamp,
    lastOffsetDelta: header.lastOffsetDelta,
  });
  if (deleteHorizonMs !== null) {
    out.writeInt16BE(out.readInt16BE(OFFSET_ATTRIBUTES) | ATTR_DELETE_HORIZON, OFFSET_ATTRIBUTES);
    rewriteBatchCrc(out, 0, out.length);
  }
  return out;
}

/**
 * A batch with no records that keeps the original's offsets, producer fields and
 * flags (Kafka's writeEmptyHeader): uncompressed, both timestamps = maxTimestamp.
 */
export function emptyBatchHeader(header: BatchHeader): Buffer {
  const flags = batchFlags(header);
  return buildRecordBatch({
    records: [],
    baseOffset: header.baseOffset,
    partitionLeaderEpoch: header.partitionLeaderEpoch,
    producerId: header.producerId,
    producerEpoch: header.producerEpoch,
    baseSequence: header.baseSequence,
    transactional: flags.transactional,
    control: flags.control,
    logAppendTime: flags.logAppendTime,
    timestamp: header.maxTimestamp,
    maxTimestamp: header.maxTimestamp,
    lastOffsetDelta: header.lastOffsetDelta,
  });
}
