// Deleting one remote segment, the way every path does it (expiration, a failed
// or abandoned copy, a deleted partition):
//   DELETE_SEGMENT_STARTED (from then on it is never served) -> delete objects
//   -> DELETE_SEGMENT_FINISHED.
// A failure leaves the segment in DELETE_SEGMENT_STARTED; `cleanupPendingSegments`
// retries it on the partition's next run, so nothing is forgotten.
import type { RemoteLogSegmentMetadata, TopicIdPartition } from '../../metadata/remote-log-metadata/types.js';
import type { PartitionCounters, RlmContext } from '../partition-state.js';
import { refOf, segmentFields } from '../partition-state.js';

export type DeletionCause =
  | 'retention-bytes'
  | 'retention-ms'
  | 'log-start-offset'
  | 'copy-failed'
  | 'copy-abandoned'
  | 'delete-retried'
  | 'partition-deleted'
  | 'tiering-disabled';

export async function deleteRemoteSegment(
  ctx: RlmContext,
  metadata: RemoteLogSegmentMetadata,
  cause: DeletionCause,
  counters?: PartitionCounters,
  signal?: AbortSignal,
): Promise<void> {
  const ref = refOf(metadata);
  const fields = { ...segmentFields(metadata), cause };
  if (counters !== undefined) counters.deleteRequests++;
  try {
    if (metadata.state !== 'DELETE_SEGMENT_STARTED') {
      await ctx.metadata.updateRemoteLogSegmentMetadata({
        remoteLogSegmentId: metadata.remoteLogSegmentId,
        brokerId: ctx.brokerId,
        eventTimestampMs: ctx.clock.now(),
        ...(metadata.customMetadata === undefined ? {} : { customMetadata: metadata.customMetadata }),
        state: 'DELETE_SEGMENT_STARTED',
      });
      ctx.logger.info(fields, 'remote segment delete started');
    }
    ctx.chunkCache.invalidate(ref);
    ctx.indexCache.invalidate(ref);
    await ctx.storage.deleteSegment(ref, signal);
    // A read in flight when the delete started may have cached pieces since.
    ctx.chunkCache.invalidate(ref);
    ctx.indexCache.invalidate(ref);
    await ctx.metadata.updateRemoteLogSegmentMetadata({
      remoteLogSegmentId: metadata.remoteLogSegmentId,
      brokerId: ctx.brokerId,
      eventTimestampMs: ctx.clock.now(),
      ...(metadata.customMetadata === undefined ? {} : { customMetadata: metadata.customMetadata }),
      state: 'DELETE_SEGMENT_FINISHED',
    });
    ctx.logger.info(fields, 'remote segment deleted');
  } catch (err) {
    if (counters !== undefined) counters.deleteErrors++;
    ctx.logger.warn({ ...fields, err }, 'remote segment delete failed; retried on the next run');
    throw err;
  }
}

/**
 * Finishes what an earlier run or process left half done: copies STARTED but not
 * running in this process (a crash or a failed cleanup) are deleted, and
 * deletions stuck in DELETE_SEGMENT_STARTED are retried. Returns how many
 * segments it deleted; the first failure is rethrown after the others ran.
 */
export async function cleanupPendingSegments(
  ctx: RlmContext,
  tp: TopicIdPartition,
  copying: ReadonlySet<string>,
  counters?: PartitionCounters,
  signal?: AbortSignal,
): Promise<number> {
  let deleted = 0;
  let failure: { error: unknown } | undefined;
  for (const segment of ctx.metadata.listRemoteLogSegments(tp)) {
    const abandoned = segment.state === 'COPY_SEGMENT_STARTED' && !copying.has(segment.remoteLogSegmentId.id);
    if (!abandoned && segment.state !== 'DELETE_SEGMENT_STARTED') continue;
    try {
      await deleteRemoteSegment(ctx, segment, abandoned ? 'copy-abandoned' : 'delete-retried', counters, signal);
      deleted++;
    } catch (error) {
      failure ??= { error };
    }
  }
  if (failure !== undefined) throw failure.error;
  return deleted;
}
