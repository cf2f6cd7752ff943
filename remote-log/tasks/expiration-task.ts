// Total retention across both tiers (Kafka's RLMExpirationTask), and the
// deletion of a partition's whole remote log.
//
// retention.bytes counts the finished remote bytes plus the local segments not
// yet remote; retention.ms compares a segment's max timestamp with now. Remote
// segments expire oldest first, each DELETE_SEGMENT_STARTED -> objects deleted
// -> DELETE_SEGMENT_FINISHED, stopping at the first one that must stay. The log
// start offset then moves past them: the remote tier's start is its first
// finished segment, and a local log still holding expired offsets drops them.
import { partitionPrefix } from '../objects/object-keys.js';
import type { PartitionState, RlmContext } from '../partition-state.js';
import { tieringConfig } from '../partition-state.js';
import type { DeletionCause } from './segment-deletion.js';
import { deleteRemoteSegment } from './segment-deletion.js';
import type { RemoteLogSegmentMetadata, TopicIdPartition } from '../../metadata/remote-log-metadata/types.js';

export interface ExpirationResult {
  readonly deletedSegments: number;
  readonly deletedBytes: number;
  /** The first offset still held remotely after the run (undefined: nothing remote). */
  readonly remoteLogStartOffset: bigint | undefined;
}

export interface ExpirationCandidate {
  readonly segment: RemoteLogSegmentMetadata;
  readonly cause: DeletionCause;
}

/** Bytes of the local segments not (wholly) remote: what retention.bytes adds to the remote size. */
export function onlyLocalLogSegmentsSize(state: PartitionState, highestRemoteOffset: bigint): number {
  let bytes = 0;
  const segments = [...state.log.closedSegments(), state.log.activeSegment()];
  for (const s of segments) if (s.baseOffset > highestRemoteOffset) bytes += s.size;
  return bytes;
}

/** The finished remote segments total retention expires now, oldest first, each with its cause. */
export function expirationCandidates(ctx: RlmContext, state: PartitionState): ExpirationCandidate[] {
  const tp = state.tp;
  const config = tieringConfig(state.log);
  const finished = ctx.metadata.listRemoteLogSegments(tp).filter((s) => s.state === 'COPY_SEGMENT_FINISHED');
  const doomed: ExpirationCandidate[] = [];
  if (finished.length === 0) return doomed;
  if (config.remoteStorageEnable !== true) {
    // Tiering turned off: with remote.log.delete.on.disable the remote log goes (Kafka refuses turning it off otherwise).
    if (config.remoteLogDeleteOnDisable !== true) return doomed;
    for (const segment of finished) doomed.push({ segment, cause: 'tiering-disabled' });
    return doomed;
  }
  const highest = ctx.metadata.highestRemoteOffset(tp) ?? -1n;
  const total = ctx.metadata.remoteLogSizeBytes(tp) + onlyLocalLogSegmentsSize(state, highest);
  let breachedBytes = config.retentionBytes >= 0 && total > config.retentionBytes ? total - config.retentionBytes : 0;
  const cleanupUntilMs = config.retentionMs >= 0 ? ctx.clock.now() - config.retentionMs : Number.NEGATIVE_INFINITY;
  const floor = state.logStartFloor;
  for (const s of finished) {
    let cause: DeletionCause | undefined;
    if (breachedBytes > 0 && breachedBytes - s.segmentSizeInBytes >= 0) {
      breachedBytes -= s.segmentSizeInBytes;
      cause = 'retention-bytes';
    } else if (s.maxTimestampMs <= cleanupUntilMs) {
      breachedBytes = Math.max(0, breachedBytes - s.segmentSizeInBytes);
      cause = 'retention-ms';
    } else if (floor !== undefined && s.endOffset < floor) {
      cause = 'log-start-offset';
    }
    if (cause === undefined) break;
    doomed.push({ segment: s, cause });
  }
  return doomed;
}

export async function expireRemoteSegments(ctx: RlmContext, state: PartitionState): Promise<ExpirationResult> {
  const tp = state.tp;
  const config = tieringConfig(state.log);
  const doomed = expirationCandidates(ctx, state);
  if (doomed.length === 0) return { deletedSegments: 0, deletedBytes: 0, remoteLogStartOffset: ctx.metadata.earliestRemoteOffset(tp) };

  let deletedSegments = 0;
  let deletedBytes = 0;
  let newStart: bigint | undefined;
  try {
    const signal = state.leaderSignal();
    for (const { segment: s, cause } of doomed) {
      if (state.removed || signal.aborted) break;
      await deleteRemoteSegment(ctx, s, cause, state.counters, signal);
      deletedSegments++;
      deletedBytes += s.segmentSizeInBytes;
      newStart = s.endOffset + 1n;
    }
  } finally {
    // Turning tiering off drops the remote copy only; the local log keeps its start.
    if (newStart !== undefined && config.remoteStorageEnable === true) await advanceLocalLogStart(ctx, state, newStart);
  }
  const remoteLogStartOffset = ctx.metadata.earliestRemoteOffset(tp);
  ctx.logger.info(
    {
      topic: tp.topic,
      partition: tp.partition,
      deletedSegments,
      deletedBytes,
      logStartOffset: (remoteLogStartOffset ?? state.log.logStartOffset).toString(),
    },
    'remote log start offset advanced',
  );
  return { deletedSegments, deletedBytes, remoteLogStartOffset };
}

/** Offsets below `offset` expired remotely: a local log still holding some drops them too. */
async function advanceLocalLogStart(ctx: RlmContext, state: PartitionState, offset: bigint): Promise<void> {
  const log = state.log;
  if (state.removed || log.logStartOffset >= offset || offset > log.highWatermark) return;
  try {
    await log.deleteRecordsBefore(offset);
  } catch (err) {
    ctx.logger.warn({ topic: log.topic, partition: log.partition, offset: offset.toString(), err }, 'moving the local log start offset failed');
  }
}

/**
 * Deletes every remote segment of a partition and records the partition delete
 * (DELETE_PARTITION_STARTED ... DELETE_PARTITION_FINISHED), then removes any
 * object left under the partition's prefix. Idempotent: a retry after a failure
 * (or a restart) resumes where it stopped.
 */
export async function deleteRemotePartition(ctx: RlmContext, tp: TopicIdPartition): Promise<number> {
  await ctx.metadata.whenReady(tp);
  const deleteState = ctx.metadata.remotePartitionDeleteState(tp);
  if (deleteState === 'DELETE_PARTITION_FINISHED') return 0;
  const where = { topic: tp.topic, partition: tp.partition, topicId: tp.topicId };
  if (deleteState !== 'DELETE_PARTITION_STARTED') {
    await ctx.metadata.putRemotePartitionDeleteMetadata({
      topicIdPartition: tp,
      state: 'DELETE_PARTITION_STARTED',
      brokerId: ctx.brokerId,
      eventTimestampMs: ctx.clock.now(),
    });
    ctx.logger.info(where, 'remote partition delete started');
  }
  let deleted = 0;
  for (const segment of ctx.metadata.listRemoteLogSegments(tp)) {
    await deleteRemoteSegment(ctx, segment, 'partition-deleted');
    deleted++;
  }
  // Objects no record points at (an interrupted copy whose STARTED record was lost).
  const leftovers = await ctx.storage.listSegments(partitionPrefix('', tp.topic, tp.topicId, tp.partition));
  for (const listing of leftovers) {
    await ctx.storage.deleteSegment(listing.ref);
    ctx.chunkCache.invalidate(listing.ref);
    ctx.indexCache.invalidate(listing.ref);
  }
  await ctx.metadata.putRemotePartitionDeleteMetadata({
    topicIdPartition: tp,
    state: 'DELETE_PARTITION_FINISHED',
    brokerId: ctx.brokerId,
    eventTimestampMs: ctx.clock.now(),
  });
  ctx.logger.info({ ...where, deletedSegments: deleted, leftoverSegments: leftovers.length }, 'remote partition deleted');
  return deleted + leftovers.length;
}
