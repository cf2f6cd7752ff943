// The copy task of one partition (Kafka's RLMCopyTask): closed segments whose
// records are all below the last stable offset and above the highest offset
// already remote are copied oldest first. Each attempt gets a fresh segment id:
//   COPY_SEGMENT_STARTED -> upload data and indexes (manifest last)
//   -> COPY_SEGMENT_FINISHED, which moves the highest remote offset.
// A failed attempt deletes what it wrote (DELETE_SEGMENT_STARTED/FINISHED) and
// stops the run so order is kept; the next run starts over with a new id.
import { formatCheckpoint } from '../broker/log/checkpoint-file.js';
import { scanBatchHeaders } from '../broker/log/batch-scan.js';
import { type EpochEntry, formatEpochEntries } from '../broker/log/leader-epoch-cache.js';
import type { LogSegment } from '../broker/log/log-segment.js';
import { encodeProducerSnapshot } from '../broker/log/producer-snapshots.js';
import { ATTR_COMPRESSION_MASK } from '../broker/protocol/record-batch.js';
import type { RemoteLogSegmentMetadata, SegmentLeaderEpoch } from '../metadata/remote-log-metadata/types.js';
import { randomUuid } from '../metadata/uuid.js';
import type { PartitionState, RlmContext } from './partition-state.js';
import { refOf, segmentFields, tieringConfig } from './partition-state.js';
import type { SegmentFiles } from './remote-storage.js';
import { deleteRemoteSegment } from './segment-deletion.js';

export interface CopyOptions {
  /** Scan each segment's batch headers and declare it uncompressed when it is (lets the store zstd it). */
  readonly detectUncompressedBatches: boolean;
}

export interface CopyResultSummary {
  readonly copiedSegments: number;
  readonly copiedBytes: number;
}

/** The closed segments the next copy run would upload, oldest first. */
export function copyCandidates(ctx: RlmContext, state: PartitionState): LogSegment[] {
  const log = state.log;
  const highest = ctx.metadata.highestRemoteOffset(state.tp) ?? -1n;
  const lastStable = log.lastStableOffset;
  const out: LogSegment[] = [];
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
    if (state.removed) break;
    await copySegment(ctx, state, segment, options);
    copiedSegments++;
    copiedBytes += segment.size;
  }
  return { copiedSegments, copiedBytes };
}

async function copySegment(ctx: RlmContext, state: PartitionState, segment: LogSegment, options: CopyOptions): Promise<void> {
  const signal = state.abort.signal;
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
    txnIndexEmpty: segment.txnIndex.entries === 0,
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
    const result = await ctx.storage.copySegment(refOf(started), files, signal);
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

/** What goes up for a segment: data by path, indexes from memory (exactly their valid entries). */
async function segmentFiles(
  state: PartitionState,
  segment: LogSegment,
  epochs: readonly EpochEntry[],
  options: CopyOptions,
): Promise<SegmentFiles> {
  const snapshot = await state.log.producerSnapshotFor(segment);
  const checkpoint = formatCheckpoint(formatEpochEntries(epochs.filter((e) => e.startOffset < segment.nextOffset)));
  const files: SegmentFiles = {
    data: segment.files.log,
    offsetIndex: Buffer.from(segment.offsetIndex.bytes()),
    timeIndex: Buffer.from(segment.timeIndex.bytes()),
    ...(segment.txnIndex.entries === 0 ? {} : { txnIndex: Buffer.from(segment.txnIndex.bytes()) }),
    // A segment rolled before snapshots were kept has none: an empty snapshot says "no producer state".
    producerSnapshot: snapshot ?? encodeProducerSnapshot([]),
    leaderEpochCheckpoint: Buffer.from(checkpoint, 'utf8'),
    ...(options.detectUncompressedBatches && (await allBatchesUncompressed(segment)) ? { batchesUncompressed: true } : {}),
    // Each attempt copies under a new random segment id.
    freshSegmentId: true,
  };
  return files;
}

async function allBatchesUncompressed(segment: LogSegment): Promise<boolean> {
  for await (const b of scanBatchHeaders(segment.log, 0, segment.size)) {
    if ((b.header.attributes & ATTR_COMPRESSION_MASK) !== 0) return false;
  }
  return true;
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
