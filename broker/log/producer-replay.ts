// Applying stored batches to producer state: recovery, snapshot catch-up at
// load, and the append path share these. Only control batches are decoded (to
// read the COMMIT/ABORT marker); data batches need their header alone.
import { type BatchHeader, decodeRecordBatch, isControl, isTransactional } from '../protocol/record-batch.js';
import { ControlRecordType, decodeControlRecordKey, decodeEndTxnMarkerValue } from '../protocol/records.js';
import { scanBatchHeaders } from './batch-scan.js';
import type { LogSegment } from './log-segment.js';
import { type AppendOrigin, type CompletedTxn, type EndTxnMarker, type ProducerAppendInfo, type ProducerStateManager, incrementSequence } from './producer-state.js';
import type { AbortedTxn } from './txn-index.js';

/** The COMMIT/ABORT marker of a control batch, or null for other control records or an empty batch. */
export function endTxnMarkerOf(batch: Buffer): EndTxnMarker | null {
  const decoded = decodeRecordBatch(batch, 0, { verifyCrc: false });
  const first = decoded.records[0];
  if (first === undefined) return null;
  const key = decodeControlRecordKey(first.key);
  if (key.type !== ControlRecordType.ABORT && key.type !== ControlRecordType.COMMIT) return null;
  const value = decodeEndTxnMarkerValue(first.value);
  return { type: key.type === ControlRecordType.ABORT ? 'ABORT' : 'COMMIT', coordinatorEpoch: value.coordinatorEpoch };
}

/**
 * Adds one batch to `info` (validating per its origin). Returns the completed
 * transaction for a marker batch. Throws KafkaError on a rule violation.
 */
export function appendBatchToInfo(info: ProducerAppendInfo, header: BatchHeader, batch: Buffer | null): CompletedTxn | null {
  const lastOffset = header.baseOffset + BigInt(header.lastOffsetDelta);
  if (isControl(header.attributes)) {
    if (batch === null) throw new Error('control batch bytes are needed to read its marker');
    const marker = endTxnMarkerOf(batch);
    if (marker === null) return null;
    return info.appendEndTxnMarker(marker, header.producerEpoch, header.baseOffset, header.maxTimestamp);
  }
  info.appendDataBatch(
    header.producerEpoch,
    header.baseSequence,
    incrementSequence(header.baseSequence, header.lastOffsetDelta),
    header.maxTimestamp,
    header.baseOffset,
    lastOffset,
    isTransactional(header.attributes),
  );
  return null;
}

/**
 * Applies a stored batch as Kafka's replication origin does (no sequence checks).
 * Returns the aborted-transaction entry the segment's txn index needs, if any.
 * A batch the rules reject (possible only in a damaged log) leaves state as is.
 */
export function replayBatch(psm: ProducerStateManager, header: BatchHeader, batch: Buffer | null, origin: AppendOrigin = 'replication'): AbortedTxn | null {
  let aborted: AbortedTxn | null = null;
  if (header.producerId >= 0n) {
    const info = psm.prepareUpdate(header.producerId, origin);
    let completed: CompletedTxn | null = null;
    try {
      completed = appendBatchToInfo(info, header, batch);
    } catch {
      psm.updateMapEndOffset(header.baseOffset + BigInt(header.lastOffsetDelta) + 1n);
      return null;
    }
    psm.update(info);
    if (completed !== null) {
      const lso = psm.lastStableOffset(completed);
      if (completed.isAborted) {
        aborted = { producerId: completed.producerId, firstOffset: completed.firstOffset, lastOffset: completed.lastOffset, lastStableOffset: lso };
      }
      psm.completeTxn(completed);
    }
  }
  psm.updateMapEndOffset(header.baseOffset + BigInt(header.lastOffsetDelta) + 1n);
  return aborted;
}

/** Replays the batches of `segments` with offsets in [from, to) into `psm` (headers; markers decoded). */
export async function replaySegments(psm: ProducerStateManager, segments: readonly LogSegment[], from: bigint, to: bigint): Promise<void> {
  for (const seg of segments) {
    if (seg.nextOffset <= from || seg.baseOffset >= to) continue;
    const start = seg.offsetIndex.lookup(from).position;
    for await (const b of scanBatchHeaders(seg.log, start, seg.size)) {
      if (b.lastOffset < from) continue;
      if (b.header.baseOffset >= to) break;
      const needsBytes = b.header.producerId >= 0n && isControl(b.header.attributes);
      const bytes = needsBytes ? await seg.log.read(b.position, b.size) : null;
      replayBatch(psm, b.header, bytes);
    }
  }
  if (psm.mapEndOffsetValue < to) psm.updateMapEndOffset(to);
}
