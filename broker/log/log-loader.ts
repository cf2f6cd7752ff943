// Loading a partition directory at start-up (Kafka's LogLoader): clean away
// leftovers of interrupted operations, open the segments, recover what may be
// torn (everything from the recovery point on, unless the broker shut down
// cleanly), rebuild damaged indexes, then bring producer state and the leader
// epoch cache to the log end.
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import {
  DELETED_SUFFIX,
  INDEX_SUFFIX,
  LOG_SUFFIX,
  TIME_INDEX_SUFFIX,
  TMP_SUFFIX,
  TXN_INDEX_SUFFIX,
  offsetFromFileName,
} from './file-names.js';
import { unlinkIfExists } from '../common/file-io.js';
import { recoverInterruptedSwaps } from './cleaner/segment-swap.js';
import { LeaderEpochCache, LeaderEpochCheckpoint } from './leader-epoch-cache.js';
import { LogSegment, type SegmentOptions } from './log-segment.js';
import { LogSegments } from './log-segments.js';
import { replayBatch, replaySegments } from './producer-replay.js';
import { deleteSnapshot, listSnapshotOffsets, readSnapshot } from './producer-snapshots.js';
import { ProducerStateManager } from './producer-state.js';

export interface LoadOptions {
  dir: string;
  segmentOptions: SegmentOptions;
  now: number;
  producerIdExpirationMs: number;
  /** From recovery-point-offset-checkpoint; unknown means recover everything after an unclean stop. */
  recoveryPoint?: bigint;
  logStartOffset?: bigint;
  cleanShutdown: boolean;
  logger?: Logger;
}

export interface LoadedLog {
  segments: LogSegments;
  logStartOffset: bigint;
  recoveryPoint: bigint;
  logEndOffset: bigint;
  producerState: ProducerStateManager;
  leaderEpochCache: LeaderEpochCache;
  leaderEpochCheckpoint: LeaderEpochCheckpoint;
  /** Bytes cut from torn or corrupt tails, for logs and tests. */
  truncatedBytes: number;
  recoveredSegments: number;
}

const STRAY_SUFFIXES = [TMP_SUFFIX, DELETED_SUFFIX, '.cleaned', '.swap'];

/** Removes leftovers and returns the base offsets of the `.log` files, ascending. */
async function cleanDirectory(dir: string): Promise<bigint[]> {
  const names = await fsp.readdir(dir);
  const logs = new Set<bigint>();
  for (const n of names) {
    const o = offsetFromFileName(n, LOG_SUFFIX);
    if (o !== null) logs.add(o);
  }
  for (const n of names) {
    if (STRAY_SUFFIXES.some((s) => n.endsWith(s))) {
      await unlinkIfExists(path.join(dir, n));
      continue;
    }
    for (const suffix of [INDEX_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX]) {
      const o = offsetFromFileName(n, suffix);
      if (o !== null && !logs.has(o)) await unlinkIfExists(path.join(dir, n));
    }
  }
  return [...logs].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

export async function loadLog(opts: LoadOptions): Promise<LoadedLog> {
  const { dir, logger } = opts;
  await fsp.mkdir(dir, { recursive: true });
  const segOpts = opts.segmentOptions;
  // Before the leftovers go: a cleaner swap cut short is completed or undone first.
  await recoverInterruptedSwaps(dir, logger);
  const bases = await cleanDirectory(dir);

  const segments = new LogSegments();
  const badIndexes = new Set<bigint>();
  for (const base of bases) {
    const { segment, indexesValid } = await LogSegment.open(dir, base, segOpts, opts.now);
    segments.add(segment);
    if (!indexesValid) badIndexes.add(base);
  }
  if (segments.isEmpty()) {
    segments.add(await LogSegment.create(dir, opts.logStartOffset ?? 0n, segOpts, opts.now));
  }

  const all = segments.all();
  const first = all[0] as LogSegment;
  // Segments to re-validate: from the one holding the recovery point, after an unclean stop.
  let recoverFrom: bigint | null = null;
  if (!opts.cleanShutdown) {
    const rp = opts.recoveryPoint ?? first.baseOffset;
    recoverFrom = (segments.floorSegment(rp) ?? first).baseOffset;
  }

  const producerState = new ProducerStateManager(opts.producerIdExpirationMs);
  const epochCheckpoint = new LeaderEpochCheckpoint(dir);
  const epochCache = new LeaderEpochCache(await epochCheckpoint.read());
  let epochsChanged = false;

  // Producer state at the start of recovery (or of the log end, found below).
  const snapshotOffsets = await listSnapshotOffsets(dir);
  async function loadSnapshotAtOrBelow(limit: bigint): Promise<void> {
    for (let i = snapshotOffsets.length - 1; i >= 0; i--) {
      const off = snapshotOffsets[i] as bigint;
      if (off > limit) continue;
      const entries = await readSnapshot(dir, off);
      if (entries !== null) {
        producerState.loadEntries(entries, off);
        return;
      }
    }
    producerState.loadEntries([], first.baseOffset);
  }

  let truncatedBytes = 0;
  let recoveredSegments = 0;
  let prevNext = first.baseOffset;
  let psmReady = false;
  for (let i = 0; i < segments.size; i++) {
    const seg = segments.all()[i] as LogSegment;
    const next = segments.all()[i + 1];
    const inRecovery = recoverFrom !== null && seg.baseOffset >= recoverFrom;
    if (inRecovery) {
      if (!psmReady) {
        await loadSnapshotAtOrBelow(seg.baseOffset);
        await replaySegments(producerState, segments.all().slice(0, i), producerState.mapEndOffsetValue, seg.baseOffset);
        psmReady = true;
      }
      const cut = await seg.recover(prevNext, (header, batch) => {
        if (epochCache.assign(header.partitionLeaderEpoch, header.baseOffset)) epochsChanged = true;
        return replayBatch(producerState, header, batch);
      });
      recoveredSegments++;
      if (cut > 0) {
        truncatedBytes += cut;
        logger?.warn({ dir, segment: seg.baseOffset.toString(), truncatedBytes: cut }, 'truncated invalid bytes at the end of a segment');
      }
      // A torn or corrupt segment ends the log: later segments cannot follow it.
      if (cut > 0) {
        while (segments.size > i + 1) {
          const gone = segments.remove((segments.last() as LogSegment).baseOffset) as LogSegment;
          truncatedBytes += gone.size;
          logger?.warn({ dir, segment: gone.baseOffset.toString() }, 'deleting segment after a truncated one');
          await gone.delete();
        }
      }
      await seg.flush();
    } else if (badIndexes.has(seg.baseOffset)) {
      const cut = await seg.recover(prevNext);
      recoveredSegments++;
      truncatedBytes += cut;
      logger?.warn({ dir, segment: seg.baseOffset.toString() }, 'rebuilt missing or corrupt indexes');
    } else if (next === undefined || seg.timeIndex.entries === 0) {
      await seg.loadTail();
    }
    const following = segments.all()[i + 1];
    if (following !== undefined) {
      seg.setNextOffset(following.baseOffset);
      seg.markInactive();
    }
    prevNext = seg.nextOffset;
  }

  const active = segments.last() as LogSegment;
  const logEndOffset = active.nextOffset;

  if (!psmReady || producerState.mapEndOffsetValue < logEndOffset) {
    if (!psmReady) await loadSnapshotAtOrBelow(logEndOffset);
    const from = producerState.mapEndOffsetValue;
    if (from < logEndOffset) await replaySegments(producerState, segments.all(), from, logEndOffset);
  }
  const firstBase = (segments.first() as LogSegment).baseOffset;
  for (const off of snapshotOffsets) if (off > logEndOffset || off < firstBase) await deleteSnapshot(dir, off);

  const logStartOffset = (() => {
    let s = opts.logStartOffset ?? first.baseOffset;
    if (s < firstBase) s = firstBase;
    if (s > logEndOffset) s = logEndOffset;
    return s;
  })();
  if (epochCache.truncateFromEnd(logEndOffset)) epochsChanged = true;
  if (epochCache.truncateFromStart(logStartOffset)) epochsChanged = true;
  if (epochsChanged) await epochCheckpoint.write(epochCache.entries());

  let recoveryPoint = opts.recoveryPoint ?? logEndOffset;
  if (recoverFrom !== null) recoveryPoint = logEndOffset; // everything recovered was fsynced
  if (recoveryPoint > logEndOffset) recoveryPoint = logEndOffset;

  return {
    segments,
    logStartOffset,
    recoveryPoint,
    logEndOffset,
    producerState,
    leaderEpochCache: epochCache,
    leaderEpochCheckpoint: epochCheckpoint,
    truncatedBytes,
    recoveredSegments,
  };
}
