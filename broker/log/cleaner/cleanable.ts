// Which part of a compacted log may be cleaned, and how urgently (Kafka's
// LogCleanerManager.cleanableOffsets / maxCompactionDelay, LogToClean, and
// Cleaner.groupSegmentsBySize). Works on a plain view of the log so it can be
// tested without a partition.
//
//   [logStart ........ firstDirty ............ firstUncleanable ...... logEnd)
//    clean (compacted before)  dirty, cleanable     not yet: active segment,
//                                                   open transactions (LSO),
//                                                   min.compaction.lag.ms
import { BATCH_HEADER_SIZE, readBatchHeader } from '../../protocol/record-batch.js';
import { INT32_MAX } from '../abstract-index.js';
import type { LogConfig } from '../../../metadata/log-config.js';
import type { LogSegment } from '../log-segment.js';

/** The compaction settings of a topic, Kafka's defaults filled in. */
export interface CompactionConfig {
  compact: boolean;
  /** min.cleanable.dirty.ratio */
  minCleanableDirtyRatio: number;
  /** min.compaction.lag.ms */
  minCompactionLagMs: number;
  /** max.compaction.lag.ms */
  maxCompactionLagMs: number;
  /** delete.retention.ms */
  deleteRetentionMs: number;
  segmentBytes: number;
  segmentIndexBytes: number;
  indexIntervalBytes: number;
}

export function compactionConfigOf(config: LogConfig): CompactionConfig {
  return {
    compact: config.cleanupPolicy?.compact ?? false,
    minCleanableDirtyRatio: config.minCleanableDirtyRatio ?? 0.5,
    minCompactionLagMs: config.minCompactionLagMs ?? 0,
    maxCompactionLagMs: config.maxCompactionLagMs ?? Number.MAX_SAFE_INTEGER,
    deleteRetentionMs: config.deleteRetentionMs ?? 86_400_000,
    segmentBytes: config.segmentBytes,
    segmentIndexBytes: config.segmentIndexBytes,
    indexIntervalBytes: config.indexIntervalBytes,
  };
}

export interface CleanableLogView {
  /** Every local segment, oldest first; the last one is the active segment. */
  segments: readonly LogSegment[];
  logStartOffset: bigint;
  logEndOffset: bigint;
  lastStableOffset: bigint;
  config: CompactionConfig;
}

export interface OffsetsToClean {
  firstDirtyOffset: bigint;
  /** Cleaning stops before this offset (>= firstDirtyOffset). */
  firstUncleanableDirtyOffset: bigint;
  /** The checkpointed offset was outside the log and was reset. */
  forceUpdateCheckpoint: boolean;
}

const active = (view: CleanableLogView): LogSegment => view.segments[view.segments.length - 1] as LogSegment;

/** Closed segments that may hold offsets in [from, active base) (Kafka's nonActiveLogSegmentsFrom). */
export function nonActiveSegmentsFrom(view: CleanableLogView, from: bigint): LogSegment[] {
  const act = active(view);
  if (from > act.baseOffset) return [];
  return segmentsOverlapping(view.segments, from, act.baseOffset);
}

export async function cleanableOffsets(view: CleanableLogView, lastCleanOffset: bigint | undefined, now: number): Promise<OffsetsToClean> {
  const checkpoint = lastCleanOffset ?? view.logStartOffset;
  let firstDirtyOffset = checkpoint;
  let forceUpdateCheckpoint = false;
  // A checkpoint below the log start (retention, DeleteRecords) or past the end (a truncated log) is reset.
  if (checkpoint < view.logStartOffset || checkpoint > view.logEndOffset) {
    firstDirtyOffset = view.logStartOffset;
    forceUpdateCheckpoint = true;
  }
  let uncleanable = view.lastStableOffset;
  const act = active(view);
  if (act.baseOffset < uncleanable) uncleanable = act.baseOffset;
  const minLag = Math.max(view.config.minCompactionLagMs, 0);
  if (minLag > 0) {
    for (const seg of nonActiveSegmentsFrom(view, firstDirtyOffset)) {
      if ((await seg.largestTimestamp()) > now - minLag) {
        if (seg.baseOffset < uncleanable) uncleanable = seg.baseOffset;
        break;
      }
    }
  }
  return {
    firstDirtyOffset,
    firstUncleanableDirtyOffset: uncleanable > firstDirtyOffset ? uncleanable : firstDirtyOffset,
    forceUpdateCheckpoint,
  };
}

/** maxTimestamp of a segment's first batch (Kafka's getFirstBatchTimestamp), -1 when empty. */
export async function firstBatchTimestamp(seg: LogSegment): Promise<bigint> {
  if (seg.size < BATCH_HEADER_SIZE) return -1n;
  const head = await seg.log.read(0, BATCH_HEADER_SIZE);
  return head.length < BATCH_HEADER_SIZE ? -1n : readBatchHeader(head, 0).maxTimestamp;
}

/**
 * How long past max.compaction.lag.ms the oldest dirty closed segment is (0 when
 * it is not): a positive delay makes the log cleanable whatever its dirty ratio.
 */
export async function maxCompactionDelay(view: CleanableLogView, firstDirtyOffset: bigint, now: number): Promise<number> {
  let earliest = Number.MAX_SAFE_INTEGER;
  for (const seg of nonActiveSegmentsFrom(view, firstDirtyOffset)) {
    const ts = Number(await firstBatchTimestamp(seg));
    if (ts > 0 && ts < earliest) earliest = ts;
  }
  const cleanUntil = now - Math.max(view.config.maxCompactionLagMs, 0);
  return earliest < cleanUntil ? cleanUntil - earliest : 0;
}

export interface LogToClean {
  firstDirtyOffset: bigint;
  /** Segment-aligned: the base of the first segment that may not be cleaned. */
  firstUncleanableOffset: bigint;
  cleanBytes: number;
  cleanableBytes: number;
  totalBytes: number;
  /** cleanableBytes / totalBytes: min.cleanable.dirty.ratio is compared against it. */
  cleanableRatio: number;
  needCompactionNow: boolean;
}

export function logToClean(view: CleanableLogView, offsets: OffsetsToClean, needCompactionNow: boolean): LogToClean {
  const { firstDirtyOffset } = offsets;
  let cleanBytes = 0;
  for (const s of view.segments) if (s.baseOffset < firstDirtyOffset) cleanBytes += s.size;
  const firstUncleanableSegment = nonActiveSegmentsFrom(view, offsets.firstUncleanableDirtyOffset)[0] ?? active(view);
  const firstUncleanableOffset = firstUncleanableSegment.baseOffset;
  const from = firstDirtyOffset < firstUncleanableOffset ? firstDirtyOffset : firstUncleanableOffset;
  let cleanableBytes = 0;
  for (const s of segmentsOverlapping(view.segments, from, firstUncleanableOffset)) cleanableBytes += s.size;
  const totalBytes = cleanBytes + cleanableBytes;
  return {
    firstDirtyOffset,
    firstUncleanableOffset,
    cleanBytes,
    cleanableBytes,
    totalBytes,
    cleanableRatio: totalBytes === 0 ? 0 : cleanableBytes / totalBytes,
    needCompactionNow,
  };
}

/** Segments that may hold offsets in [from, to): from the one holding `from`, base below `to`. */
export function segmentsOverlapping(segments: readonly LogSegment[], from: bigint, to: bigint): LogSegment[] {
  if (from >= to) return [];
  let start = 0;
  for (let i = 0; i < segments.length; i++) if ((segments[i] as LogSegment).baseOffset <= from) start = i;
  const out: LogSegment[] = [];
  for (let i = start; i < segments.length; i++) {
    const s = segments[i] as LogSegment;
    if (s.baseOffset >= to) break;
    out.push(s);
  }
  return out;
}

/**
 * Consecutive segments merged into one cleaned segment: the group's log bytes
 * stay within segment.bytes and each index within segment.index.bytes (sizes
 * before cleaning), and its offsets fit the int32 relative offsets of one
 * segment. Cleaned segments shrink, so later rounds merge them.
 */
export function groupSegmentsBySize(
  segments: readonly LogSegment[],
  maxSize: number,
  maxIndexSize: number,
  firstUncleanableOffset: bigint,
): LogSegment[][] {
  const groups: LogSegment[][] = [];
  let i = 0;
  while (i < segments.length) {
    const first = segments[i] as LogSegment;
    const group = [first];
    let logSize = first.size;
    let indexSize = first.offsetIndex.sizeInBytes;
    let timeIndexSize = first.timeIndex.sizeInBytes;
    i++;
    while (i < segments.length) {
      const next = segments[i] as LogSegment;
      // Upper bound of next's offsets: the following segment's base, or the cleaning bound.
      const following = segments[i + 1];
      const lastOffsetBound = (following === undefined ? firstUncleanableOffset : following.baseOffset) - 1n;
      const fits =
        logSize + next.size <= maxSize &&
        indexSize + next.offsetIndex.sizeInBytes <= maxIndexSize &&
        timeIndexSize + next.timeIndex.sizeInBytes <= maxIndexSize &&
        (next.size === 0 || lastOffsetBound - first.baseOffset <= BigInt(INT32_MAX));
      if (!fits) break;
      group.push(next);
      logSize += next.size;
      indexSize += next.offsetIndex.sizeInBytes;
      timeIndexSize += next.timeIndex.sizeInBytes;
      i++;
    }
    groups.push(group);
  }
  return groups;
}
