// One cleaning round of one log (Kafka's Cleaner.doClean): map the dirty range
// key -> latest offset, then rewrite every closed segment from the start of the
// log up to the end of what the map covered, group by group, each group into
// one cleaned segment swapped in under the log's lock. Offsets never change;
// retained batches keep their order. Returns the new first dirty offset for the
// cleaner checkpoint.
import type { Logger } from 'pino';
import type { PartitionLog } from '../partition-log.js';
import type { LogSegment } from '../log-segment.js';
import { type CompactionConfig, compactionConfigOf, groupSegmentsBySize, segmentsOverlapping } from './cleanable.js';
import { CleanedSegmentWriter } from './cleaned-segment-writer.js';
import { CleanedTxnState } from './cleaned-txn-state.js';
import type { OffsetMap } from './offset-map.js';
import { type CleanerCounters, type ProducerLastRecord, cleanGroupInto, mapDirtySegments, newCounters } from './segment-rewriter.js';
import { type SwapStepHook, swapCleanedSegment } from './segment-swap.js';

/** The round was stopped (cleaner stopping, log gone or changed); nothing was left half done. */
export class CleaningAbortedError extends Error {
  override name = 'CleaningAbortedError';
}

export interface CleanRange {
  firstDirtyOffset: bigint;
  /** Segment-aligned bound: only segments below it are mapped. */
  firstUncleanableOffset: bigint;
}

export interface CleanerStats extends CleanerCounters {
  /** The first offset not covered by this round: the next round's first dirty offset. */
  endOffset: bigint;
  /** Segments rewritten, and the cleaned segments they became. */
  segmentsCleaned: number;
  groups: number;
  /** Bytes of the log before and after the round. */
  sizeBefore: number;
  sizeAfter: number;
  mapEntries: number;
  mapUtilization: number;
  /** The map filled before the dirty range was done (the next round continues). */
  mapFull: boolean;
}

export interface CleanerRoundOptions {
  map: OffsetMap;
  /** Fill the map up to slots x this (log.cleaner.io.buffer.load.factor, 0.9). */
  loadFactor: number;
  now: number;
  /** Bytes read from a segment at a time. */
  chunkBytes: number;
  /** Throws CleaningAbortedError to stop the round between batches. */
  checkDone: () => void;
  afterSwapStep?: SwapStepHook;
  logger?: Logger;
}

function lastRecordsOfActiveProducers(log: PartitionLog): Map<bigint, ProducerLastRecord> {
  const out = new Map<bigint, ProducerLastRecord>();
  for (const [pid, entry] of log.producerStateManager().activeProducers()) {
    const last = entry.lastDataOffset;
    out.set(pid, { lastDataOffset: last >= 0n ? last : null, producerEpoch: entry.producerEpoch });
  }
  return out;
}

export async function cleanLog(log: PartitionLog, range: CleanRange, opts: CleanerRoundOptions): Promise<CleanerStats> {
  const config: CompactionConfig = compactionConfigOf(log.currentConfig);
  const counters = newCounters();
  const sizeBefore = log.size;
  const closed = [...log.closedSegments()];
  const { map } = opts;

  // Pass 1: the dirty segments (all closed: the bound is at most the active segment's base).
  map.clear();
  // Offsets below the dirty range are covered: clean records are judged against the map, not kept blindly.
  map.updateLatestOffset(range.firstDirtyOffset - 1n);
  const dirty = segmentsOverlapping(closed, range.firstDirtyOffset, range.firstUncleanableOffset);
  const mapTxn = new CleanedTxnState();
  mapTxn.addAbortedTransactions(log.collectAbortedTransactions(range.firstDirtyOffset, range.firstUncleanableOffset));
  const mapFull = await mapDirtySegments(dirty, range.firstUncleanableOffset, {
    map,
    txn: mapTxn,
    start: range.firstDirtyOffset,
    maxEntries: Math.max(1, Math.floor(map.slots * opts.loadFactor)),
    chunkBytes: opts.chunkBytes,
    checkDone: opts.checkDone,
    counters,
  });
  const endOffset = map.latestOffset + 1n;
  if (mapFull && endOffset <= range.firstDirtyOffset) {
    throw new Error(`log.cleaner.dedupe.buffer.size (${map.slots} keys) cannot hold the keys of a single batch of ${log.topic}-${log.partition}`);
  }

  // Pass 2: every closed segment holding offsets below endOffset, clean part included.
  const toClean: LogSegment[] = closed.filter((s) => s.baseOffset < endOffset);
  const groups = groupSegmentsBySize(toClean, config.segmentBytes, config.segmentIndexBytes, range.firstUncleanableOffset);
  const txn = new CleanedTxnState();
  const lastRecords = lastRecordsOfActiveProducers(log);
  let segmentsCleaned = 0;
  let groupsDone = 0;
  for (const group of groups) {
    opts.checkDone();
    const first = group[0] as LogSegment;
    const writer = await CleanedSegmentWriter.create(log.dir, first.baseOffset, {
      indexIntervalBytes: config.indexIntervalBytes,
      maxIndexBytes: config.segmentIndexBytes,
    });
    let renamed = false;
    try {
      txn.onRetainedAbort = (t) => writer.appendAbortedTxn(t);
      await cleanGroupInto(group, writer, {
        map,
        txn,
        now: opts.now,
        deleteRetentionMs: config.deleteRetentionMs,
        lastRecordsOfActiveProducers: lastRecords,
        collectAbortedTransactions: (start, upper) => log.collectAbortedTransactions(start, upper),
        chunkBytes: opts.chunkBytes,
        checkDone: opts.checkDone,
        counters,
      });
      if (writer.batchCount === 0) {
        await writer.abort();
        continue;
      }
      await writer.finish();
      opts.checkDone();
      renamed = true;
      const swapped = await log.replaceSegments((segments, segmentOptions) =>
        swapCleanedSegment({
          dir: log.dir,
          oldSegments: group,
          segments,
          segmentOptions,
          now: opts.now,
          ...(opts.afterSwapStep === undefined ? {} : { afterStep: opts.afterSwapStep }),
          ...(opts.logger === undefined ? {} : { logger: opts.logger }),
        }),
      );
      if (swapped === null) {
        renamed = false;
        throw new CleaningAbortedError(`segments of ${log.topic}-${log.partition} changed while they were cleaned`);
      }
      segmentsCleaned += group.length;
      groupsDone++;
    } catch (e) {
      // Once renames began, what is on disk belongs to the swap (the next load finishes or undoes it).
      if (!renamed) await writer.abort();
      throw e;
    } finally {
      txn.onRetainedAbort = null;
    }
  }
  return {
    ...counters,
    endOffset,
    segmentsCleaned,
    groups: groupsDone,
    sizeBefore,
    sizeAfter: log.size,
    mapEntries: map.size,
    mapUtilization: map.utilization,
    mapFull,
  };
}
