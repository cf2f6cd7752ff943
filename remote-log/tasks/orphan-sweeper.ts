// Objects in the store that no remote log metadata record accounts for
// (DESIGN behaviour 3), found with as few LISTs as correctness allows.
//
// The copy task records COPY_SEGMENT_STARTED before it uploads anything, so
// almost every leftover (a copy interrupted by a crash, a cleanup that failed)
// has a record, and cleanupPendingSegments deletes it through the metadata
// without listing anything. What remains are objects with no record at all: a
// STARTED record lost with the metadata log's tail in a crash, or a partition
// whose metadata was dropped when it was deleted. Those are deleted once older
// than the grace period, which leaves any copy in flight time to record itself.
//
// Incremental sweeps. Keys sort by base offset (object-keys.ts), and a new copy
// only ever writes above the highest finished segment H (its records start
// after the highest remote offset). So once a listing has seen every object
// based at or below H, and none of them was an unrecorded object too young to
// delete, nothing at or below H needs listing again in this process: the next
// sweep lists with StartAfter = after H. A young unrecorded object at base B
// holds the cursor below B until it is old enough to go. The cursor lives in
// memory only; the first sweep of a partition after start lists its whole
// prefix once, since the previous process may have left unrecorded objects
// anywhere (a lost STARTED record, then a re-copy of the same offsets).
//
// What Kafka-like correctness needs: Kafka never lists; its readers never
// serve a segment without a COPY_SEGMENT_FINISHED record, and neither do ours,
// whatever the sweep misses. The sweep only bounds what leftovers cost. So on
// top of the argument above (which a second writer to the same prefix would
// break) a full listing every `fullSweepIntervalMs` (a day by default) bounds
// any leak to that long.
//
// The bucket-wide sweep, for partitions this manager does not run, lists the
// whole bucket at start and every full interval; in between it looks only at
// partitions it knows need it: ones whose metadata was not ready, whose
// objects were too young, whose deletion failed, or that this broker stopped
// running (their dead copies are named by the metadata and deleted by ref).
import { afterBaseOffset, partitionPrefix } from '../objects/object-keys.js';
import { deleteRemotePartition } from './expiration-task.js';
import type { PartitionCounters, RlmContext, SweepCursor } from '../partition-state.js';
import type { RemoteSegmentListing } from '../remote-storage.js';
import { deleteRemoteSegment } from './segment-deletion.js';
import type { TopicIdPartition } from '../../metadata/remote-log-metadata/types.js';
import { topicIdPartitionKey } from '../../metadata/remote-log-metadata/types.js';

/** What one partition sweep did. */
export interface PartitionSweepResult {
  readonly deleted: number;
  /** The whole prefix was listed (first sweep, or the full interval passed). */
  readonly full: boolean;
  /** Nothing is left that a later look must check (no young unrecorded objects). */
  readonly settled: boolean;
}

/**
 * Deletes the unrecorded objects of `tp` older than the grace period, listing
 * only past the cursor (the whole prefix when the cursor is empty or a full
 * sweep is due), and moves the cursor.
 */
export async function sweepPartitionOrphans(
  ctx: RlmContext,
  tp: TopicIdPartition,
  cursor: SweepCursor,
  fullSweepIntervalMs: number,
  counters?: PartitionCounters,
  signal?: AbortSignal,
): Promise<PartitionSweepResult> {
  const now = ctx.clock.now();
  const full = cursor.after === undefined || now - cursor.lastFullMs >= fullSweepIntervalMs;
  const startAfter = full || cursor.after === undefined ? undefined : afterBaseOffset('', tp.topic, tp.topicId, tp.partition, cursor.after);
  const listings = await ctx.storage.listSegments(partitionPrefix('', tp.topic, tp.topicId, tp.partition), signal, startAfter);
  const { deleted, youngest } = await deleteUnrecorded(ctx, tp, listings, counters, signal);
  cursor.after = nextCursor(ctx, tp, youngest);
  if (full) cursor.lastFullMs = now;
  if (counters !== undefined) {
    counters.orphanSweeps++;
    if (full) counters.orphanFullSweeps++;
  }
  return { deleted, full, settled: youngest === undefined };
}

/** The bucket-wide sweep's memory between runs. */
export class BucketSweepState {
  lastFullMs = Number.NEGATIVE_INFINITY;
  /** Partitions nobody runs that the next sweep must look at again, by topicIdPartitionKey. */
  readonly pending = new Map<string, { tp: TopicIdPartition; cursor: SweepCursor }>();

  /** `tp` must be looked at by the next bucket-wide sweep (it left this manager, or its deletion failed). */
  watch(tp: TopicIdPartition, after?: bigint): void {
    const key = topicIdPartitionKey(tp);
    const known = this.pending.get(key);
    if (known !== undefined) return;
    this.pending.set(key, { tp, cursor: { after, lastFullMs: Number.NEGATIVE_INFINITY } });
  }
}

export interface BucketSweepResult {
  readonly deleted: number;
  /** The whole bucket was listed. */
  readonly full: boolean;
  /** LISTs of single partitions' prefixes (watched partitions). */
  readonly partitionListings: number;
}

/**
 * The bucket-wide sweep, for partitions this manager does not run: resumes
 * interrupted partition deletions, deletes copies nobody is running, and
 * deletes unrecorded objects past the grace period. Finished segments of an
 * unknown partition are kept (its log may not be loaded yet). Lists the whole
 * bucket when a full sweep is due, else only the watched partitions.
 */
export async function sweepUnknownPartitions(
  ctx: RlmContext,
  state: BucketSweepState,
  isManaged: (tp: TopicIdPartition) => boolean,
  fullSweepIntervalMs: number,
  signal?: AbortSignal,
): Promise<BucketSweepResult> {
  const now = ctx.clock.now();
  let deleted = 0;
  let failure: { error: unknown } | undefined;
  const visit = async (tp: TopicIdPartition, listings: readonly RemoteSegmentListing[], cursor: SweepCursor): Promise<void> => {
    const key = topicIdPartitionKey(tp);
    try {
      const r = await sweepUnmanaged(ctx, tp, listings, cursor, signal);
      deleted += r.deleted;
      if (r.settled) state.pending.delete(key);
      else state.pending.set(key, { tp, cursor });
    } catch (error) {
      failure ??= { error };
      state.pending.set(key, { tp, cursor });
      ctx.logger.warn({ topic: tp.topic, partition: tp.partition, err: error }, 'sweeping a partition nobody runs failed; retried on the next sweep');
    }
  };
  if (now - state.lastFullMs >= fullSweepIntervalMs) {
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
    // Watched partitions with no object left still need their metadata settled (a dead copy's record).
    for (const [key, p] of state.pending) if (!groups.has(key)) groups.set(key, { tp: p.tp, listings: [] });
    for (const [key, { tp, listings }] of groups) {
      if (isManaged(tp)) {
        state.pending.delete(key);
        continue;
      }
      await visit(tp, listings, { after: undefined, lastFullMs: now });
    }
    state.lastFullMs = now;
    if (failure !== undefined) throw failure.error;
    return { deleted, full: true, partitionListings: 0 };
  }
  let partitionListings = 0;
  for (const [key, { tp, cursor }] of [...state.pending]) {
    if (isManaged(tp)) {
      state.pending.delete(key);
      continue;
    }
    if (!ctx.metadata.isReady(tp)) continue;
    const startAfter = cursor.after === undefined ? undefined : afterBaseOffset('', tp.topic, tp.topicId, tp.partition, cursor.after);
    let listings: RemoteSegmentListing[];
    try {
      listings = await ctx.storage.listSegments(partitionPrefix('', tp.topic, tp.topicId, tp.partition), signal, startAfter);
    } catch (error) {
      failure ??= { error };
      continue;
    }
    partitionListings++;
    await visit(tp, listings, cursor);
  }
  if (failure !== undefined) throw failure.error;
  return { deleted, full: false, partitionListings };
}

/** One partition nobody runs, given what was listed of it. */
async function sweepUnmanaged(
  ctx: RlmContext,
  tp: TopicIdPartition,
  listings: readonly RemoteSegmentListing[],
  cursor: SweepCursor,
  signal?: AbortSignal,
): Promise<{ deleted: number; settled: boolean }> {
  if (!ctx.metadata.isReady(tp)) return { deleted: 0, settled: false };
  const deleteState = ctx.metadata.remotePartitionDeleteState(tp);
  if (deleteState === 'DELETE_PARTITION_MARKED' || deleteState === 'DELETE_PARTITION_STARTED') {
    return { deleted: await deleteRemotePartition(ctx, tp), settled: true };
  }
  // Unrecorded objects first: the listing predates the deletions below, whose objects it may show.
  const r = await deleteUnrecorded(ctx, tp, listings, undefined, signal);
  let deleted = r.deleted;
  // Nobody copies a partition this manager does not run: a copy still STARTED is dead.
  for (const record of ctx.metadata.listRemoteLogSegments(tp)) {
    if (record.state === 'COPY_SEGMENT_FINISHED') continue;
    await deleteRemoteSegment(ctx, record, record.state === 'COPY_SEGMENT_STARTED' ? 'copy-abandoned' : 'delete-retried');
    deleted++;
  }
  cursor.after = nextCursor(ctx, tp, r.youngest);
  return { deleted, settled: r.youngest === undefined };
}

/** Deletes the listed segments with no record that are past the grace period; the lowest base offset of those too young. */
async function deleteUnrecorded(
  ctx: RlmContext,
  tp: TopicIdPartition,
  listings: readonly RemoteSegmentListing[],
  counters: PartitionCounters | undefined,
  signal: AbortSignal | undefined,
): Promise<{ deleted: number; youngest: bigint | undefined }> {
  let deleted = 0;
  let youngest: bigint | undefined;
  for (const listing of listings) {
    if (listing.ref.topicId !== tp.topicId || listing.ref.partition !== tp.partition) continue;
    if (ctx.metadata.remoteLogSegment(tp, listing.ref.segmentId) !== undefined) continue;
    if (await deleteIfOld(ctx, listing, signal)) {
      deleted++;
      if (counters !== undefined) counters.orphansDeleted++;
    } else if (youngest === undefined || listing.ref.baseOffset < youngest) {
      youngest = listing.ref.baseOffset;
    }
  }
  return { deleted, youngest };
}

/**
 * Where the next listing may start: after the highest finished segment's base
 * offset, but below the lowest unrecorded object still too young to delete.
 * Undefined (list everything) while nothing is finished.
 */
function nextCursor(ctx: RlmContext, tp: TopicIdPartition, youngest: bigint | undefined): bigint | undefined {
  let highest: bigint | undefined;
  for (const s of ctx.metadata.listRemoteLogSegments(tp)) {
    if (s.state === 'COPY_SEGMENT_FINISHED' && (highest === undefined || s.startOffset > highest)) highest = s.startOffset;
  }
  if (highest === undefined) return undefined;
  if (youngest !== undefined && youngest <= highest) return youngest > 0n ? youngest - 1n : undefined;
  return highest;
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
