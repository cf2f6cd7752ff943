// Objects in the store that no COPY_SEGMENT_FINISHED record accounts for.
//
// The copy task records COPY_SEGMENT_STARTED before it uploads anything, so
// almost every leftover (a copy interrupted by a crash, a cleanup that failed)
// has a record, and cleanupPendingSegments deletes it through the metadata.
// What remains are objects with no record at all: a STARTED append that failed
// after all, or a partition whose metadata was dropped when it was deleted.
// Those are deleted once older than the grace period, which leaves any copy in
// flight time to record itself. The bucket-wide sweep also resumes partition
// deletions a restart interrupted.
import { partitionPrefix } from '../objects/object-keys.js';
import { deleteRemotePartition } from './expiration-task.js';
import type { PartitionCounters, RlmContext } from '../partition-state.js';
import type { RemoteSegmentListing } from '../remote-storage.js';
import { deleteRemoteSegment } from './segment-deletion.js';
import type { TopicIdPartition } from '../../metadata/remote-log-metadata/types.js';
import { topicIdPartitionKey } from '../../metadata/remote-log-metadata/types.js';

/** Deletes the objects of `tp` that have no metadata record and are older than the grace period. */
export async function sweepPartitionOrphans(
  ctx: RlmContext,
  tp: TopicIdPartition,
  counters?: PartitionCounters,
  signal?: AbortSignal,
): Promise<number> {
  const listings = await ctx.storage.listSegments(partitionPrefix('', tp.topic, tp.topicId, tp.partition), signal);
  let deleted = 0;
  for (const listing of listings) {
    if (listing.ref.topicId !== tp.topicId || listing.ref.partition !== tp.partition) continue;
    if (ctx.metadata.remoteLogSegment(tp, listing.ref.segmentId) !== undefined) continue;
    if (await deleteIfOld(ctx, listing, signal)) {
      deleted++;
      if (counters !== undefined) counters.orphansDeleted++;
    }
  }
  return deleted;
}

/**
 * The bucket-wide sweep, for partitions this manager does not run: resumes
 * interrupted partition deletions, cleans up copies nobody is running, and
 * deletes unrecorded objects past the grace period. Finished segments of an
 * unknown partition are kept (its log may not be loaded yet).
 */
export async function sweepUnknownPartitions(
  ctx: RlmContext,
  isManaged: (tp: TopicIdPartition) => boolean,
  signal?: AbortSignal,
): Promise<number> {
  const groups = new Map<string, { tp: TopicIdPartition; listings: RemoteSegmentListing[] }>();
  for (const listing of await ctx.storage.listSegments('', signal)) {
    const tp: TopicIdPartition = { topicId: listing.ref.topicId, topic: listing.ref.topic, partition: listing.ref.partition };
    const key = topicIdPartitionKey(tp);
    let g = groups.get(key);
    if (g === undefined) {
      g = { tp, listings: [] };
      groups.set(key, g);
    }
    g.listings.push(listing);
  }
  let deleted = 0;
  for (const { tp, listings } of groups.values()) {
    if (isManaged(tp) || !ctx.metadata.isReady(tp)) continue;
    const deleteState = ctx.metadata.remotePartitionDeleteState(tp);
    if (deleteState === 'DELETE_PARTITION_MARKED' || deleteState === 'DELETE_PARTITION_STARTED') {
      deleted += await deleteRemotePartition(ctx, tp);
      continue;
    }
    for (const listing of listings) {
      const record = ctx.metadata.remoteLogSegment(tp, listing.ref.segmentId);
      if (record === undefined) {
        if (await deleteIfOld(ctx, listing, signal)) deleted++;
      } else if (record.state !== 'COPY_SEGMENT_FINISHED') {
        // Nobody copies a partition this manager does not run: the copy is dead.
        await deleteRemoteSegment(ctx, record, record.state === 'COPY_SEGMENT_STARTED' ? 'copy-abandoned' : 'delete-retried');
        deleted++;
      }
    }
  }
  return deleted;
}

async function deleteIfOld(ctx: RlmContext, listing: RemoteSegmentListing, signal?: AbortSignal): Promise<boolean> {
  if (ctx.clock.now() - listing.lastModified < ctx.orphanGraceMs) return false;
  await ctx.storage.deleteSegment(listing.ref, signal);
  ctx.chunkCache.invalidate(listing.ref);
  ctx.indexCache.invalidate(listing.ref);
  ctx.logger.info(
    {
      topic: listing.ref.topic,
      partition: listing.ref.partition,
      segmentId: listing.ref.segmentId,
      baseOffset: listing.ref.baseOffset.toString(),
      objects: listing.objects.length,
      hasManifest: listing.hasManifest,
    },
    'orphaned remote segment objects deleted',
  );
  return true;
}
