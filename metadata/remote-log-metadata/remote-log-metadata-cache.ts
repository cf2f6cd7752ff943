// The in-memory index of one partition's remote segments, after Kafka's
// RemoteLogMetadataCache and RemoteLogLeaderEpochState. Pure.
//
// Which segments each query sees, by state (as in Kafka):
//   remoteLogSegmentMetadata(epoch, offset)  COPY_SEGMENT_FINISHED only
//   listRemoteLogSegments(), (epoch)         every state but DELETE_SEGMENT_FINISHED (dropped at once)
//   highestOffsetForEpoch, highestRemoteOffset   segments that reached COPY_SEGMENT_FINISHED, ever
//   remoteLogSizeBytes, earliestRemoteOffset COPY_SEGMENT_FINISHED only
//
// Per leader epoch, finished segments are indexed by the offset at which that epoch
// starts within them. When a new leader re-uploads a range an earlier upload already
// covers (a superset, or an overlap), the older segments drop out of the offset
// index into the epoch's "unreferenced" set: still listed so that retention can
// delete them, never served to reads.
import { InvalidRemoteLogMetadataError, RemoteResourceNotFoundError } from './errors.js';
import { SegmentTable } from './segment-table.js';
import { SortedOffsets } from './sorted-offsets.js';
import { transitionSegmentState } from './state-machine.js';
import type {
  RemoteLogSegmentMetadata,
  RemoteLogSegmentMetadataUpdate,
  RemoteLogSegmentState,
  TopicIdPartition,
} from './types.js';
import { formatTopicIdPartition } from './types.js';

class LeaderEpochState {
  /** Epoch start offset within a finished segment -> slot. Unique keys. */
  readonly offsetToSlot = new SortedOffsets(4);
  /** Slots not in offsetToSlot: copying, deleting, or superseded by a later upload. */
  readonly unreferenced = new Set<number>();
  highestLogOffset: bigint | undefined;

  onCopyFinished(epochStart: bigint, slot: number, epochEnd: bigint): void {
    const index = this.offsetToSlot;
    // Supersede uploads of the same epoch that start at or after this one, as long
    // as this upload reaches at least as far as everything indexed so far.
    while (
      index.size > 0 &&
      index.keyAt(index.size - 1) >= epochStart &&
      this.highestLogOffset !== undefined &&
      this.highestLogOffset <= epochEnd
    ) {
      this.unreferenced.add(index.valueAt(index.size - 1));
      index.removeAt(index.size - 1);
    }
    const floor = index.floorIndex(epochStart);
    if (floor >= 0 && index.keyAt(floor) === epochStart) {
      this.unreferenced.add(index.valueAt(floor));
      index.setValueAt(floor, slot);
    } else {
      index.insert(epochStart, slot);
    }
    this.unreferenced.delete(slot);
    if (this.highestLogOffset === undefined || epochEnd > this.highestLogOffset) this.highestLogOffset = epochEnd;
  }

  onDeleteStarted(epochStart: bigint, slot: number): void {
    this.offsetToSlot.remove(epochStart, slot);
    this.unreferenced.add(slot);
  }

  onDeleteFinished(slot: number): void {
    this.unreferenced.delete(slot);
  }

  slots(): number[] {
    const out: number[] = [];
    for (let i = 0; i < this.offsetToSlot.size; i++) out.push(this.offsetToSlot.valueAt(i));
    for (const slot of this.unreferenced) out.push(slot);
    return out;
  }
}

export class RemoteLogMetadataCache {
  private readonly table = new SegmentTable();
  private readonly epochs = new Map<number, LeaderEpochState>();
  /** Every tracked segment by start offset, for ordered listing without sorting. */
  private readonly byStartOffset = new SortedOffsets(16);
  private finishedBytes = 0;
  private highestOffset: bigint | undefined;

  constructor(readonly topicIdPartition: TopicIdPartition) {}

  /** Number of tracked segments (every state but DELETE_SEGMENT_FINISHED). */
  get segmentCount(): number {
    return this.table.count;
  }

  /** Bytes of the typed arrays behind the index (excludes the rare per-segment extras). */
  get indexByteLength(): number {
    let bytes = this.table.byteLength + this.byStartOffset.byteLength;
    for (const e of this.epochs.values()) bytes += e.offsetToSlot.byteLength;
    return bytes;
  }

  /** Adds a segment whose copy has started. Throws on a known id or inconsistent fields. */
  addCopyInProgressSegment(metadata: RemoteLogSegmentMetadata): void {
    const id = metadata.remoteLogSegmentId;
    this.checkPartition(id.topicIdPartition);
    const existing = this.table.find(id.id);
    transitionSegmentState(existing < 0 ? undefined : this.table.state(existing), metadata.state, describe(id.id));
    validateSegment(metadata);
    const slot = this.table.add({
      id: id.id,
      startOffset: metadata.startOffset,
      endOffset: metadata.endOffset,
      brokerId: metadata.brokerId,
      maxTimestampMs: metadata.maxTimestampMs,
      eventTimestampMs: metadata.eventTimestampMs,
      segmentLeaderEpochs: metadata.segmentLeaderEpochs,
      segmentSizeInBytes: metadata.segmentSizeInBytes,
      ...(metadata.customMetadata === undefined ? {} : { customMetadata: metadata.customMetadata }),
      state: metadata.state,
      txnIndexEmpty: metadata.txnIndexEmpty,
    });
    this.table.forEachEpoch(slot, (leaderEpoch) => this.epoch(leaderEpoch).unreferenced.add(slot));
    this.byStartOffset.insert(metadata.startOffset, slot);
  }

  /** Checks that `update` is a legal next event without applying it. */
  checkUpdate(update: RemoteLogSegmentMetadataUpdate): void {
    this.checkPartition(update.remoteLogSegmentId.topicIdPartition);
    const slot = this.slotOf(update.remoteLogSegmentId.id);
    transitionSegmentState(this.table.state(slot), update.state, describe(update.remoteLogSegmentId.id));
  }

  updateRemoteLogSegmentMetadata(update: RemoteLogSegmentMetadataUpdate): void {
    this.checkPartition(update.remoteLogSegmentId.topicIdPartition);
    const slot = this.slotOf(update.remoteLogSegmentId.id);
    const from = this.table.state(slot);
    const to = transitionSegmentState(from, update.state, describe(update.remoteLogSegmentId.id));
    switch (to) {
      case 'COPY_SEGMENT_STARTED':
        // Unreachable: the state machine only enters it from (none), i.e. by an add.
        throw new InvalidRemoteLogMetadataError('COPY_SEGMENT_STARTED is entered by adding a segment');
      case 'COPY_SEGMENT_FINISHED':
        this.table.forEachEpoch(slot, (leaderEpoch, start, end) => this.epoch(leaderEpoch).onCopyFinished(start, slot, end));
        this.finishedBytes += this.table.sizeInBytes(slot);
        {
          const end = this.table.endOffset(slot);
          if (this.highestOffset === undefined || end > this.highestOffset) this.highestOffset = end;
        }
        break;
      case 'DELETE_SEGMENT_STARTED':
        this.table.forEachEpoch(slot, (leaderEpoch, start) => this.epoch(leaderEpoch).onDeleteStarted(start, slot));
        if (from === 'COPY_SEGMENT_FINISHED') this.finishedBytes -= this.table.sizeInBytes(slot);
        break;
      case 'DELETE_SEGMENT_FINISHED':
        this.table.forEachEpoch(slot, (leaderEpoch) => this.epoch(leaderEpoch).onDeleteFinished(slot));
        this.byStartOffset.remove(this.table.startOffset(slot), slot);
        this.table.remove(slot);
        return;
    }
    this.table.update(slot, to, update.brokerId, update.eventTimestampMs, update.customMetadata);
  }

  /**
   * The finished segment holding `offset` written under `leaderEpoch`, or undefined.
   * The offset must lie within that epoch's range inside the segment.
   */
  remoteLogSegmentMetadata(leaderEpoch: number, offset: bigint): RemoteLogSegmentMetadata | undefined {
    const state = this.epochs.get(leaderEpoch);
    if (state === undefined) return undefined;
    const i = state.offsetToSlot.floorIndex(offset);
    if (i < 0) return undefined;
    const slot = state.offsetToSlot.valueAt(i);
    const epochEnd = this.table.epochEndOffset(slot, leaderEpoch);
    if (epochEnd === undefined || offset > epochEnd) return undefined;
    return this.metadataAt(slot);
  }

  /** Every tracked segment, sorted by start offset (ties in the order they were added). */
  listRemoteLogSegments(): RemoteLogSegmentMetadata[] {
    const out: RemoteLogSegmentMetadata[] = [];
    for (let i = 0; i < this.byStartOffset.size; i++) out.push(this.metadataAt(this.byStartOffset.valueAt(i)));
    return out;
  }

  /**
   * Tracked segments holding records of `leaderEpoch`, sorted by start offset; on
   * ties the served segment comes before superseded or in-flight ones (as in Kafka).
   */
  listRemoteLogSegmentsForEpoch(leaderEpoch: number): RemoteLogSegmentMetadata[] {
    const state = this.epochs.get(leaderEpoch);
    if (state === undefined) return [];
    const slots = state.slots();
    if (state.unreferenced.size > 0) {
      slots.sort((a, b) => {
        const d = this.table.startOffset(a) - this.table.startOffset(b);
        return d < 0n ? -1 : d > 0n ? 1 : 0;
      });
    }
    return slots.map((slot) => this.metadataAt(slot));
  }

  /** Highest offset of `leaderEpoch` that reached COPY_SEGMENT_FINISHED, or undefined. */
  highestOffsetForEpoch(leaderEpoch: number): bigint | undefined {
    return this.epochs.get(leaderEpoch)?.highestLogOffset;
  }

  /** Highest offset ever copied (COPY_SEGMENT_FINISHED); stays put when old segments expire. */
  highestRemoteOffset(): bigint | undefined {
    return this.highestOffset;
  }

  /** Sum of segmentSizeInBytes over COPY_SEGMENT_FINISHED segments (superseded ones included). */
  remoteLogSizeBytes(): number {
    return this.finishedBytes;
  }

  /** Start offset of the first COPY_SEGMENT_FINISHED segment, or undefined. */
  earliestRemoteOffset(): bigint | undefined {
    for (let i = 0; i < this.byStartOffset.size; i++) {
      const slot = this.byStartOffset.valueAt(i);
      if (this.table.state(slot) === 'COPY_SEGMENT_FINISHED') return this.table.startOffset(slot);
    }
    return undefined;
  }

  /** A tracked segment by id (any state but DELETE_SEGMENT_FINISHED), or undefined. */
  segment(segmentId: string): RemoteLogSegmentMetadata | undefined {
    const slot = this.table.find(segmentId);
    return slot < 0 ? undefined : this.metadataAt(slot);
  }

  /** State of a tracked segment, or undefined when unknown (never added, or fully deleted). */
  segmentState(segmentId: string): RemoteLogSegmentState | undefined {
    const slot = this.table.find(segmentId);
    return slot < 0 ? undefined : this.table.state(slot);
  }

  private metadataAt(slot: number): RemoteLogSegmentMetadata {
    const f = this.table.fields(slot);
    return {
      remoteLogSegmentId: { topicIdPartition: this.topicIdPartition, id: f.id },
      startOffset: f.startOffset,
      endOffset: f.endOffset,
      brokerId: f.brokerId,
      maxTimestampMs: f.maxTimestampMs,
      eventTimestampMs: f.eventTimestampMs,
      segmentLeaderEpochs: f.segmentLeaderEpochs,
      segmentSizeInBytes: f.segmentSizeInBytes,
      ...(f.customMetadata === undefined ? {} : { customMetadata: f.customMetadata }),
      state: f.state,
      txnIndexEmpty: f.txnIndexEmpty,
    };
  }

  private epoch(leaderEpoch: number): LeaderEpochState {
    let state = this.epochs.get(leaderEpoch);
    if (state === undefined) {
      state = new LeaderEpochState();
      this.epochs.set(leaderEpoch, state);
    }
    return state;
  }

  private slotOf(segmentId: string): number {
    const slot = this.table.find(segmentId);
    if (slot < 0) {
      throw new RemoteResourceNotFoundError(
        `no remote log segment ${segmentId} for ${formatTopicIdPartition(this.topicIdPartition)}`,
      );
    }
    return slot;
  }

  private checkPartition(tp: TopicIdPartition): void {
    if (tp.partition !== this.topicIdPartition.partition || tp.topicId !== this.topicIdPartition.topicId) {
      throw new InvalidRemoteLogMetadataError(
        `event for ${formatTopicIdPartition(tp)} applied to ${formatTopicIdPartition(this.topicIdPartition)}`,
      );
    }
  }
}

function describe(segmentId: string): string {
  return `remote log segment ${segmentId}`;
}

/** The invariants Kafka's RemoteLogSegmentMetadata constructor and the copy task rely on. */
export function validateSegment(m: RemoteLogSegmentMetadata): void {
  const where = `remote log segment ${m.remoteLogSegmentId.id}`;
  if (m.startOffset < 0n || m.endOffset < m.startOffset) {
    throw new InvalidRemoteLogMetadataError(`${where}: offsets [${m.startOffset}, ${m.endOffset}] are not a range`);
  }
  if (m.segmentLeaderEpochs.length === 0) throw new InvalidRemoteLogMetadataError(`${where}: no leader epochs`);
  let previous: { leaderEpoch: number; startOffset: bigint } | undefined;
  for (const e of m.segmentLeaderEpochs) {
    if (e.startOffset < m.startOffset || e.startOffset > m.endOffset) {
      throw new InvalidRemoteLogMetadataError(`${where}: epoch ${e.leaderEpoch} starts outside the segment`);
    }
    if (previous !== undefined && (e.leaderEpoch <= previous.leaderEpoch || e.startOffset < previous.startOffset)) {
      throw new InvalidRemoteLogMetadataError(`${where}: leader epochs not in ascending order`);
    }
    previous = e;
  }
  if (!Number.isInteger(m.segmentSizeInBytes) || m.segmentSizeInBytes < 0 || m.segmentSizeInBytes > 0x7fffffff) {
    throw new InvalidRemoteLogMetadataError(`${where}: segment size ${m.segmentSizeInBytes} is not an int32 >= 0`);
  }
}
