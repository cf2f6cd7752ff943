// The two passes of a cleaning round over stored segments (Kafka's
// Cleaner.buildOffsetMap and Cleaner.cleanInto):
//  1. mapDirtySegments: key -> latest offset over the dirty range, skipping
//     aborted transactional data and control batches; stops when the map
//     reaches its load factor.
//  2. cleanGroupInto: every batch of a group of segments, in order, filtered
//     into one CleanedSegmentWriter: a record stays when it is the latest for
//     its key (or beyond the map), unless it is a tombstone past its delete
//     horizon; aborted transactional data goes; markers stay until their
//     transaction's data is gone and their horizon has passed. A batch emptied
//     this way is still kept as a bare header when it holds an active
//     producer's last sequence (or epoch), and when it ends the group, so the
//     cleaned segment ends exactly where the old ones did.
import { type BatchHeader, ATTR_CONTROL, ATTR_TRANSACTIONAL, iterateBatches, decodeRecordBatch, type DecodedBatch, type DecodedRecord } from '../../protocol/record-batch.js';
import { decodeControlRecordKey } from '../../protocol/records.js';
import type { LogSegment } from '../log-segment.js';
import type { AbortedTxn } from '../txn-index.js';
import { type BatchRetention, deleteHorizonOf, filterDecodedBatch } from './batch-filter.js';
import type { CleanedSegmentWriter } from './cleaned-segment-writer.js';
import type { CleanedTxnState, ControlType, TxnBatchView } from './cleaned-txn-state.js';
import type { OffsetMap } from './offset-map.js';

export interface StoredBatch {
  header: BatchHeader;
  /** The whole batch (a view into a read chunk). */
  buf: Buffer;
  /** Byte position in the segment. */
  position: number;
  size: number;
}

/** The batches of `seg` from byte `start` to its committed size, read about `chunkBytes` at a time. */
export async function* readSegmentBatches(seg: LogSegment, start: number, chunkBytes: number): AsyncGenerator<StoredBatch> {
  const end = seg.size;
  let pos = start;
  while (pos < end) {
    const chunk = await seg.log.read(pos, Math.min(chunkBytes, end - pos));
    const scanner = iterateBatches(chunk);
    let consumed = 0;
    for (const b of scanner) {
      yield { header: b.header, buf: chunk.subarray(b.position, b.position + b.size), position: pos + b.position, size: b.size };
      consumed = b.position + b.size;
    }
    if (consumed === 0) {
      // One batch larger than the chunk: read exactly it.
      const needed = scanner.truncated?.needed;
      if (needed === undefined || pos + needed > end) throw new Error(`unreadable batch at ${pos} of ${seg.toString()}`);
      const whole = await seg.log.read(pos, needed);
      const [b] = [...iterateBatches(whole)];
      if (b === undefined) throw new Error(`unreadable batch at ${pos} of ${seg.toString()}`);
      yield { header: b.header, buf: whole, position: pos, size: b.size };
      consumed = b.size;
    }
    pos += consumed;
  }
}

const lastOffsetOf = (h: BatchHeader): bigint => h.baseOffset + BigInt(h.lastOffsetDelta);
const isControlBatch = (h: BatchHeader): boolean => (h.attributes & ATTR_CONTROL) !== 0;

function txnView(h: BatchHeader): TxnBatchView {
  return { producerId: h.producerId, lastOffset: lastOffsetOf(h), isTransactional: (h.attributes & ATTR_TRANSACTIONAL) !== 0 };
}

function controlTypeOf(decoded: DecodedBatch): ControlType {
  const first = decoded.records[0];
  return first === undefined ? null : decodeControlRecordKey(first.key).type;
}

export interface CleanerCounters {
  messagesRead: number;
  bytesRead: number;
  messagesRetained: number;
  bytesRetained: number;
  /** Records without a key in a compacted log: always dropped. */
  invalidMessages: number;
  /** The earliest delete horizon still carried by a retained tombstone or marker, or null. */
  nextDeleteHorizonMs: bigint | null;
}

export function newCounters(): CleanerCounters {
  return { messagesRead: 0, bytesRead: 0, messagesRetained: 0, bytesRetained: 0, invalidMessages: 0, nextDeleteHorizonMs: null };
}

export interface MapPassOptions {
  map: OffsetMap;
  txn: CleanedTxnState;
  /** First dirty offset: records below it are not mapped. */
  start: bigint;
  /** Stop filling at this many entries (slots x load factor). */
  maxEntries: number;
  chunkBytes: number;
  checkDone: () => void;
  counters: CleanerCounters;
}

/**
 * Maps the dirty segments (all closed, wholly below the cleaning bound `end`).
 * Returns true when the map filled up before the last of them was done.
 */
export async function mapDirtySegments(dirty: readonly LogSegment[], end: bigint, opts: MapPassOptions): Promise<boolean> {
  const { map, txn, start } = opts;
  for (let i = 0; i < dirty.length; i++) {
    const seg = dirty[i] as LogSegment;
    const nextStart = (dirty[i + 1] as LogSegment | undefined)?.baseOffset ?? end;
    for await (const b of readSegmentBatches(seg, seg.offsetIndex.lookup(start).position, opts.chunkBytes)) {
      opts.checkDone();
      const last = lastOffsetOf(b.header);
      if (isControlBatch(b.header)) {
        txn.onControlBatchRead(txnView(b.header), controlTypeOf(decodeRecordBatch(b.buf, 0)));
      } else if (!txn.onBatchRead(txnView(b.header))) {
        for (const r of decodeRecordBatch(b.buf, 0).records) {
          if (r.key === null || r.offset < start) continue;
          if (map.size >= opts.maxEntries) return true;
          map.put(r.key, r.offset);
        }
      }
      if (last >= start) map.updateLatestOffset(last);
    }
    // Offsets of the segment past its last batch (removed earlier) count as covered.
    map.updateLatestOffset(nextStart - 1n);
  }
  return false;
}

/** The last data offset (or, without data, the epoch) of each active producer, taken when the round starts. */
export interface ProducerLastRecord {
  lastDataOffset: bigint | null;
  producerEpoch: number;
}

export interface GroupPassOptions {
  map: OffsetMap;
  txn: CleanedTxnState;
  /** The round's clock reading (ms): tombstones and markers with a horizon at or before it go. */
  now: number;
  deleteRetentionMs: number;
  lastRecordsOfActiveProducers: ReadonlyMap<bigint, ProducerLastRecord>;
  /** The aborted transactions overlapping [start, upper), from the log's transaction indexes. */
  collectAbortedTransactions: (start: bigint, upper: bigint) => AbortedTxn[];
  chunkBytes: number;
  checkDone: () => void;
  counters: CleanerCounters;
}

/** Filters every batch of `group` into `writer`. */
export async function cleanGroupInto(group: readonly LogSegment[], writer: CleanedSegmentWriter, opts: GroupPassOptions): Promise<void> {
  const { map, txn, counters } = opts;
  const now = BigInt(opts.now);
  const newDeleteHorizonMs = now + BigInt(opts.deleteRetentionMs);

  const shouldRetainRecord = (r: DecodedRecord, horizon: bigint | null): boolean => {
    if (r.offset > map.latestOffset) return true;
    if (r.key === null) {
      counters.invalidMessages++;
      return false;
    }
    const latestForKey = r.offset >= map.get(r.key);
    const retainDeletes = horizon === null || now < horizon;
    return latestForKey && (r.value !== null || retainDeletes);
  };

  for (let i = 0; i < group.length; i++) {
    const seg = group[i] as LogSegment;
    const upper = (group[i + 1] as LogSegment | undefined)?.baseOffset ?? seg.nextOffset;
    txn.addAbortedTransactions(opts.collectAbortedTransactions(seg.baseOffset, upper));
    const isLastSegment = i === group.length - 1;
    for await (const b of readSegmentBatches(seg, 0, opts.chunkBytes)) {
      opts.checkDone();
      const h = b.header;
      const control = isControlBatch(h);
      const decoded = control ? decodeRecordBatch(b.buf, 0) : null;
      const canDiscard = decoded !== null ? txn.onControlBatchRead(txnView(h), controlTypeOf(decoded)) : txn.onBatchRead(txnView(h));
      const horizon = deleteHorizonOf(h);
      const discardRecords = control ? canDiscard && horizon !== null && horizon <= now : canDiscard;
      const producer = h.producerId >= 0n ? opts.lastRecordsOfActiveProducers.get(h.producerId) : undefined;
      const isLastOfProducer =
        producer !== undefined &&
        (producer.lastDataOffset !== null ? lastOffsetOf(h) === producer.lastDataOffset : control && h.producerEpoch === producer.producerEpoch);
      const endsGroup = isLastSegment && b.position + b.size >= seg.size;
      const retention: BatchRetention = isLastOfProducer || endsGroup ? 'retainEmpty' : discardRecords ? 'delete' : 'deleteEmpty';
      counters.bytesRead += b.size;
      const full = retention === 'delete' ? null : (decoded ?? decodeRecordBatch(b.buf, 0));
      if (full === null) {
        counters.messagesRead += h.recordsCount;
        continue;
      }
      const outcome = filterDecodedBatch(b.buf, h, full.records, full.compression, {
        retention,
        markerForEmptyTxn: canDiscard && control,
        newDeleteHorizonMs,
        keepRecord: (r) => (discardRecords ? false : control ? true : shouldRetainRecord(r, horizon)),
      });
      counters.messagesRead += outcome.recordsRead;
      counters.messagesRetained += outcome.recordsRetained;
      if (outcome.output === null) continue;
      counters.bytesRetained += outcome.output.length;
      if (outcome.holdsRemovable && outcome.deleteHorizonMs !== null) {
        const next = counters.nextDeleteHorizonMs;
        if (next === null || outcome.deleteHorizonMs < next) counters.nextDeleteHorizonMs = outcome.deleteHorizonMs;
      }
      await writer.append(outcome.output);
    }
  }
}
