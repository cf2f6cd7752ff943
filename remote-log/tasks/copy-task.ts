// The copy task of one partition (Kafka's RLMCopyTask): closed segments whose
// records are all below the last stable offset and above the highest offset
// already remote are copied oldest first. Each attempt gets a fresh segment id:
//   COPY_SEGMENT_STARTED -> upload data and indexes (manifest last)
//   -> COPY_SEGMENT_FINISHED, which moves the highest remote offset.
// A failed attempt deletes what it wrote (DELETE_SEGMENT_STARTED/FINISHED) and
// stops the run so order is kept; the next run starts over with a new id.
//
// Only the partition's leader copies. Where to start comes from the leader's
// own epoch history (Kafka's findHighestRemoteOffset): walking its epochs from
// the latest down, the first one with remote data gives the highest remote
// offset of this log's lineage, capped at the end of that epoch in this log.
// A new leader so continues exactly where the remote tier's copy of its
// history ends: what an earlier leader uploaded of the same epochs is not
// uploaded again, and remote data of an epoch this log does not have (a
// diverged one) is not counted, so its offsets are uploaded from this log and
// the diverged segments drop out of the epoch-indexed reads. A copy that
// outlives its leadership (the term's signal) stops before recording
// COPY_SEGMENT_FINISHED.
import type { RemoteLogSegmentMetadata, SegmentLeaderEpoch, TopicIdPartition } from '../../metadata/remote-log-metadata/types.js';
import type { RemoteLogMetadataManager } from '../../metadata/remote-log-metadata/remote-log-metadata-manager.js';
import { randomUuid } from '../../metadata/uuid.js';
import type { LeaderEpochEntry as EpochEntry, LocalSegment } from '../local-log.js';
import type { PartitionState, RlmContext } from '../partition-state.js';
import { refOf, segmentFields, tieringConfig } from '../partition-state.js';
import type { SegmentFiles } from '../remote-storage.js';
import { deleteRemoteSegment } from './segment-deletion.js';

export interface CopyOptions {
  /** Scan each segment's batch headers and declare it uncompressed when it is (lets the store zstd it). */
  readonly detectUncompressedBatches: boolean;
}

export interface CopyResultSummary {
  readonly copiedSegments: number;
  readonly copiedBytes: number;
}

/**
 * The highest offset of this log's history that is remote (-1 when none):
 * Kafka's RemoteLogManager.findHighestRemoteOffset over `entries` (the log's
 * leader-epoch history, oldest first) and `logEndOffset`. A log with no
 * history wrote everything in epoch 0 (segmentLeaderEpochs says so). When no
 * epoch of the history has remote data but older remote data exists (the
 * history's start was truncated with the local segments), that data counts up
 * to just below the history's first offset.
 */
export function findHighestRemoteOffset(
  metadata: Pick<RemoteLogMetadataManager, 'highestOffsetForEpoch' | 'highestRemoteOffset'>,
  tp: TopicIdPartition,
  entries: readonly EpochEntry[],
  logEndOffset: bigint,
): bigint {
  if (entries.length === 0) return metadata.highestOffsetForEpoch(tp, 0) ?? -1n;
  for (let i = entries.length - 1; i >= 0; i--) {
    const entry = entries[i] as EpochEntry;
    const highest = metadata.highestOffsetForEpoch(tp, entry.epoch);
    if (highest === undefined) continue;
    const end = i + 1 < entries.length ? (entries[i + 1] as EpochEntry).startOffset : logEndOffset;
    // The remote tier holds more of this epoch than this log does: only what this log has counts.
    return end <= highest ? end - 1n : highest;
  }
  const older = metadata.highestRemoteOffset(tp);
  if (older === undefined) return -1n;
  const firstStart = (entries[0] as EpochEntry).startOffset;
  return older < firstStart ? older : firstStart - 1n;
}

/** The closed segments the next copy run would upload, oldest first. */
export function copyCandidates(ctx: RlmContext, state: PartitionState): LocalSegment[] {
  const log = state.log;
  const highest = findHighestRemoteOffset(ctx.metadata, state.tp, log.leaderEpochEntries(), log.logEndOffset);
  const lastStable = log.lastStableOffset;
  const out: LocalSegment[] = [];
  for (const segment of log.closedSegments()) {
    if (segment.isEmpty || segment.nextOffset - 1n <= highest) continue;
    // A segment holding an offset at or above the LSO (an open transaction) waits, and so do all after it.
    if (segment.nextOffset > lastStable) break;
    out.push(segment);
  }
  return out;
}

/** Copies every candidate in order; throws the first failure (after cleaning up its attempt). */
export async function copyLogSegments(ctx: RlmContext, state: PartitionState, options: CopyOptions): Promise<CopyResultSummary> {
  const config = tieringConfig(state.log);
  if (config.remoteStorageEnable !== true || config.remoteLogCopyDisable === true) return { copiedSegments: 0, copiedBytes: 0 };
  let copiedSegments = 0;
  let copiedBytes = 0;
  for (const segment of copyCandidates(ctx, state)) {
    if (state.removed || state.leaderSignal().aborted) break;
    await copySegment(ctx, state, segment, options);
    copiedSegments++;
    copiedBytes += segment.size;
  }
  return { copiedSegments, copiedBytes };
}

async function copySegment(ctx: RlmContext, state: PartitionState, segment: LocalSegment, options: CopyOptions): Promise<void> {
  const signal = state.leaderSignal();
  await ctx.copyThrottle.acquire(segment.size, signal);
  const log = state.log;
  const epochs = log.leaderEpochEntries();
  const endOffset = segment.nextOffset - 1n;
  const started: RemoteLogSegmentMetadata = {
    remoteLogSegmentId: { topicIdPartition: state.tp, id: randomUuid() },
    startOffset: segment.baseOffset,
    endOffset,
    brokerId: ctx.brokerId,
    maxTimestampMs: await segment.largestTimestamp(),
    eventTimestampMs: ctx.clock.now(),
    segmentLeaderEpochs: segmentLeaderEpochs(epochs, segment.baseOffset, endOffset),
    segmentSizeInBytes: segment.size,
    state: 'COPY_SEGMENT_STARTED',
    txnIndexEmpty: segment.txnIndexEmpty,
  };
  const id = started.remoteLogSegmentId.id;
  const fields = segmentFields(started);
  state.copying.add(id);
  state.counters.copyRequests++;
  let recorded = false;
  try {
    await ctx.metadata.addRemoteLogSegmentMetadata(started);
    recorded = true;
    ctx.logger.info(fields, 'remote segment copy started');
    const files = await segmentFiles(state, segment, epochs, options);
    const result = await ctx.copier.copySegment(refOf(started), files, signal);
    // Leadership ended during the upload: the new leader decides about this range (its cleanup deletes this copy).
    signal.throwIfAborted();
    await ctx.metadata.updateRemoteLogSegmentMetadata({
      remoteLogSegmentId: started.remoteLogSegmentId,
      brokerId: ctx.brokerId,
      eventTimestampMs: ctx.clock.now(),
      customMetadata: result.customMetadata,
      state: 'COPY_SEGMENT_FINISHED',
    });
    if (!result.batchesVerified) {
      const problem = result.batchProblem;
      ctx.logger.warn(
        { ...fields, position: problem?.position, problem: problem?.reason },
        'remote segment uploaded with a batch that fails verification: reads check every batch CRC and refuse it',
      );
    }
    state.epochs.add(started.segmentLeaderEpochs);
    state.counters.copyBytes += segment.size;
    ctx.logger.info({ ...fields, storedBytes: result.storedDataSize, compression: result.compression }, 'remote segment copy finished');
  } catch (err) {
    state.counters.copyErrors++;
    ctx.logger.warn({ ...fields, err }, 'remote segment copy failed');
    if (recorded) {
      const current = ctx.metadata.isReady(state.tp) ? ctx.metadata.remoteLogSegment(state.tp, id) : undefined;
      // If this fails too (or the partition is going away), the segment stays STARTED and the next run's cleanup deletes it.
      if (current !== undefined && current.state !== 'COPY_SEGMENT_FINISHED' && !signal.aborted) {
        await deleteRemoteSegment(ctx, current, 'copy-failed', state.counters, signal).catch(() => undefined);
      }
    }
    throw err;
  } finally {
    state.copying.delete(id);
  }
}

/** What goes up for a segment: the local log's LogSegmentData, plus what the store may assume. */
async function segmentFiles(
  state: PartitionState,
  segment: LocalSegment,
  epochs: readonly EpochEntry[],
  options: CopyOptions,
): Promise<SegmentFiles> {
  const data = await state.log.segmentData(segment, epochs);
  const files: SegmentFiles = {
    data: data.logSegment,
    offsetIndex: data.offsetIndex,
    timeIndex: data.timeIndex,
    ...(data.transactionIndex === undefined ? {} : { txnIndex: data.transactionIndex }),
    producerSnapshot: data.producerSnapshot,
    leaderEpochCheckpoint: data.leaderEpochIndex,
    ...(options.detectUncompressedBatches && (await state.log.batchesUncompressed(segment)) ? { batchesUncompressed: true } : {}),
    // Each attempt copies under a new random segment id.
    freshSegmentId: true,
  };
  return files;
}

/**
 * The leader epochs of [baseOffset, endOffset] from the partition's epoch
 * history: the epoch in force at the base (starting there), then every epoch
 * that starts inside. A log with no history (no epoch ever assigned) gets epoch 0.
 */
export function segmentLeaderEpochs(entries: readonly EpochEntry[], baseOffset: bigint, endOffset: bigint): SegmentLeaderEpoch[] {
  let floor: EpochEntry | undefined;
  const inside: SegmentLeaderEpoch[] = [];
  for (const e of entries) {
    if (e.startOffset <= baseOffset) floor = e;
    else if (e.startOffset <= endOffset) inside.push({ leaderEpoch: e.epoch, startOffset: e.startOffset });
  }
  if (floor !== undefined) return [{ leaderEpoch: floor.epoch, startOffset: baseOffset }, ...inside];
  const first = inside[0];
  if (first === undefined) return [{ leaderEpoch: 0, startOffset: baseOffset }];
  // The history starts inside the segment (its start was truncated): its first epoch covers the base.
  return [{ leaderEpoch: first.leaderEpoch, startOffset: baseOffset }, ...inside.slice(1)];
}
