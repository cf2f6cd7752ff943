// Reads below the local tier (Kafka's RemoteLogReader / RemoteLogManager.read):
// the finished remote segment holding the offset is found through the metadata
// index (by leader epoch and offset), positioned with its offset index (through
// the IndexCache) and read with ranged GETs through the ChunkCache. Whole
// batches come back, starting with the one holding the offset, at least one when
// minOneBatch, continuing into the next remote segment while room remains. Every
// returned batch passes its CRC-32C check (here, or at upload when the copy
// verified every batch and the chunk CRCs prove these are the uploaded bytes);
// a corrupted object is an error (CORRUPT_MESSAGE), never served.
import { ErrorCode, KafkaError } from '../../broker/protocol/errors.js';
import {
  BATCH_HEADER_SIZE,
  LOG_OVERHEAD,
  MAGIC_V2,
  OFFSET_ATTRIBUTES,
  OFFSET_CRC,
  OFFSET_MAGIC,
  decodeRecordBatch,
  readBatchHeader,
} from '../../broker/protocol/record-batch.js';
import type { RemoteLogSegmentMetadata } from '../../metadata/remote-log-metadata/types.js';
import { ByteParts } from './byte-parts.js';
import type { ChunkLease } from './chunk-cache.js';
import { batchesVerifiedAtUpload } from '../objects/copy-summary.js';
import type { PartitionState, RlmContext } from '../partition-state.js';
import { refOf } from '../partition-state.js';
import { lookupOffsetIndex, lookupTimeIndex } from './remote-indexes.js';
import type { RemoteSegmentRef } from '../remote-storage.js';
import { RemoteCorruptionError, throwIfAborted } from '../remote-storage.js';

export interface TimestampAndOffset {
  readonly timestamp: bigint;
  readonly offset: bigint;
  readonly leaderEpoch: number;
}

interface BatchFrame {
  readonly baseOffset: bigint;
  readonly lastOffset: bigint;
  readonly maxTimestamp: bigint;
  readonly leaderEpoch: number;
  readonly position: number;
  readonly size: number;
}

interface SegmentRead {
  /** Whole batches, as views into cached chunks. */
  readonly parts: readonly Buffer[];
  readonly length: number;
  /** The offset after the last returned batch (the fetch offset when none). */
  readonly nextOffset: bigint;
  /** Everything up to the segment's end was returned (or nothing was at or past the offset). */
  readonly reachedEnd: boolean;
}


function describe(ref: RemoteSegmentRef): string {
  return `remote segment ${ref.segmentId} of ${ref.topic}-${ref.partition} (base offset ${ref.baseOffset})`;
}

export class RemoteReader {
  constructor(private readonly ctx: RlmContext) {}

  /** The COPY_SEGMENT_FINISHED segment holding `offset`, or undefined. */
  findSegment(state: PartitionState, offset: bigint): RemoteLogSegmentMetadata | undefined {
    const epoch = state.epochs.epochFor(offset);
    if (epoch !== undefined) {
      const found = this.ctx.metadata.remoteLogSegmentMetadata(state.tp, epoch, offset);
      if (found !== undefined) return found;
    }
    // Epochs unknown to the index (e.g. segments another broker copied): search the finished segments.
    const earliest = this.ctx.metadata.earliestRemoteOffset(state.tp);
    if (earliest === undefined || offset < earliest) return undefined;
    for (const s of this.ctx.metadata.listRemoteLogSegments(state.tp)) {
      if (s.state === 'COPY_SEGMENT_FINISHED' && s.startOffset <= offset && offset <= s.endOffset) return s;
    }
    return undefined;
  }

  /**
   * Whole batches from the one holding `fetchOffset`, as views into the cached
   * chunks (nothing copied); none when no batch fits in maxBytes.
   */
  async readParts(
    state: PartitionState,
    fetchOffset: bigint,
    maxBytes: number,
    minOneBatch: boolean,
    signal?: AbortSignal,
    lease?: ChunkLease,
  ): Promise<Buffer[]> {
    const found = this.findSegment(state, fetchOffset);
    if (found === undefined) {
      const earliest = this.ctx.metadata.earliestRemoteOffset(state.tp);
      throw new KafkaError(
        ErrorCode.OFFSET_OUT_OF_RANGE,
        `offset ${fetchOffset} of ${state.tp.topic}-${state.tp.partition} is in no remote segment ` +
          `(remote log start ${earliest ?? 'none'}, local log start ${state.log.localLogStartOffset})`,
      );
    }
    await this.ctx.fetchThrottle.waitForCapacity(signal);
    let segment: RemoteLogSegmentMetadata = found;
    const parts: Buffer[] = [];
    let used = 0;
    let offset = fetchOffset;
    let needOne = minOneBatch;
    for (;;) {
      const r = await this.readSegment(segment, offset, maxBytes - used, needOne, signal, lease);
      if (r.length > 0) {
        parts.push(...r.parts);
        used += r.length;
        needOne = false;
      }
      if (!r.reachedEnd) break;
      // Into the next segment, while it is remote and not local (the local tier serves the rest).
      const nextOffset: bigint = segment.endOffset + 1n;
      const next: RemoteLogSegmentMetadata | undefined = nextOffset < state.log.localLogStartOffset ? this.findSegment(state, nextOffset) : undefined;
      if (next === undefined) break;
      if (used >= maxBytes && !needOne) {
        this.ctx.chunkCache.prefetch(refOf(next), 0, this.ctx.chunkCache.readAheadChunks, next.segmentSizeInBytes);
        break;
      }
      segment = next;
      offset = nextOffset;
    }
    this.ctx.fetchThrottle.record(used);
    state.counters.fetchBytes += used;
    return parts;
  }

  private async readSegment(
    segment: RemoteLogSegmentMetadata,
    offset: bigint,
    maxBytes: number,
    minOneBatch: boolean,
    signal?: AbortSignal,
    lease?: ChunkLease,
  ): Promise<SegmentRead> {
    const ref = refOf(segment);
    const size = segment.segmentSizeInBytes;
    const index = await this.ctx.indexCache.get(ref, 'offset', signal);
    let position = lookupOffsetIndex(index, segment.startOffset, offset, describe(ref)).position;
    let first: BatchFrame | undefined;
    while (position < size) {
      const frame = await this.frameAt(ref, size, position, signal);
      if (frame.lastOffset >= offset) {
        first = frame;
        break;
      }
      position += frame.size;
    }
    if (first === undefined) return { parts: [], length: 0, nextOffset: offset, reachedEnd: true };
    const limit = minOneBatch ? Math.max(maxBytes, first.size) : maxBytes;
    if (first.size > limit) return { parts: [], length: 0, nextOffset: offset, reachedEnd: false };
    const end = Math.min(size, position + limit);
    const bytes = new ByteParts(
      await this.ctx.chunkCache.readParts(ref, position, end - 1, {
        ...(signal === undefined ? {} : { signal }),
        ...(lease === undefined ? {} : { lease }),
        segmentSize: size,
      }),
    );
    if (bytes.length < end - position) {
      throw new RemoteCorruptionError(`${describe(ref)}: data ends at ${position + bytes.length}, metadata says ${size} bytes`);
    }
    let at = 0;
    let nextOffset = offset;
    const verifiedAtUpload = batchesVerifiedAtUpload(segment.customMetadata);
    while (at + BATCH_HEADER_SIZE <= bytes.length) {
      const head = bytes.bytes(at, BATCH_HEADER_SIZE);
      const frame = checkFrame(head, 0, ref, position + at, size);
      if (at + frame.size > bytes.length) break;
      // The chunk CRCs proved these are the uploaded bytes; batches verified at upload need no second check.
      if (!verifiedAtUpload && bytes.crc32c(at + OFFSET_ATTRIBUTES, at + frame.size) !== head.readUInt32BE(OFFSET_CRC)) {
        throw new RemoteCorruptionError(`${describe(ref)}: batch at position ${position + at} (offset ${frame.baseOffset}) fails its CRC check`);
      }
      at += frame.size;
      nextOffset = frame.lastOffset + 1n;
    }
    return { parts: bytes.slice(0, at), length: at, nextOffset, reachedEnd: position + at >= size };
  }

  /** The header of the batch at `position`, checked for framing. */
  private async frameAt(ref: RemoteSegmentRef, size: number, position: number, signal?: AbortSignal): Promise<BatchFrame> {
    if (position + BATCH_HEADER_SIZE > size) {
      throw new RemoteCorruptionError(`${describe(ref)}: a batch header at ${position} runs past the end (${size} bytes)`);
    }
    const head = await this.ctx.chunkCache.read(ref, position, position + BATCH_HEADER_SIZE - 1, {
      ...(signal === undefined ? {} : { signal }),
      segmentSize: size,
    });
    if (head.length < BATCH_HEADER_SIZE) throw new RemoteCorruptionError(`${describe(ref)}: data ends inside the batch header at ${position}`);
    return checkFrame(head, 0, ref, position, size);
  }

  /**
   * The first record with timestamp >= `timestamp` and offset >= `startingOffset`
   * in the finished remote segments below `belowOffset` (the local log start),
   * searching those whose max timestamp reaches the target, oldest first.
   */
  async offsetForTimestamp(
    state: PartitionState,
    timestamp: bigint,
    startingOffset: bigint,
    belowOffset: bigint,
    signal?: AbortSignal,
  ): Promise<TimestampAndOffset | null> {
    for (const segment of this.ctx.metadata.listRemoteLogSegments(state.tp)) {
      if (segment.state !== 'COPY_SEGMENT_FINISHED') continue;
      if (segment.startOffset >= belowOffset) break;
      if (segment.endOffset < startingOffset || BigInt(segment.maxTimestampMs) < timestamp) continue;
      throwIfAborted(signal, 'remote timestamp lookup');
      const found = await this.searchSegment(segment, timestamp, startingOffset, signal);
      if (found !== null) return found;
    }
    return null;
  }

  private async searchSegment(
    segment: RemoteLogSegmentMetadata,
    timestamp: bigint,
    startingOffset: bigint,
    signal?: AbortSignal,
  ): Promise<TimestampAndOffset | null> {
    const ref = refOf(segment);
    const size = segment.segmentSizeInBytes;
    const [timeIndex, offsetIndex] = await Promise.all([
      this.ctx.indexCache.get(ref, 'time', signal),
      this.ctx.indexCache.get(ref, 'offset', signal),
    ]);
    const fromTime = lookupTimeIndex(timeIndex, segment.startOffset, timestamp, describe(ref));
    const from = fromTime > startingOffset ? fromTime : startingOffset;
    let position = lookupOffsetIndex(offsetIndex, segment.startOffset, from, describe(ref)).position;
    while (position < size) {
      const frame = await this.frameAt(ref, size, position, signal);
      if (frame.maxTimestamp >= timestamp && frame.lastOffset >= startingOffset) {
        const batch = await this.ctx.chunkCache.read(ref, position, position + frame.size - 1, {
          ...(signal === undefined ? {} : { signal }),
          segmentSize: size,
        });
        let decoded;
        try {
          decoded = decodeRecordBatch(batch, 0);
        } catch (err) {
          throw new RemoteCorruptionError(`${describe(ref)}: batch at position ${position}: ${(err as Error).message}`, { cause: err });
        }
        for (const r of decoded.records) {
          if (r.timestamp >= timestamp && r.offset >= startingOffset) {
            return { timestamp: r.timestamp, offset: r.offset, leaderEpoch: frame.leaderEpoch };
          }
        }
      }
      position += frame.size;
    }
    return null;
  }
}

function checkFrame(buf: Buffer, at: number, ref: RemoteSegmentRef, position: number, segmentSize: number): BatchFrame {
  const magic = buf.readInt8(at + OFFSET_MAGIC);
  if (magic !== MAGIC_V2) throw new RemoteCorruptionError(`${describe(ref)}: batch at position ${position} has magic ${magic}`);
  const h = readBatchHeader(buf, at);
  const size = h.batchLength + LOG_OVERHEAD;
  if (size < BATCH_HEADER_SIZE || position + size > segmentSize) {
    throw new RemoteCorruptionError(`${describe(ref)}: batch at position ${position} declares an impossible length ${h.batchLength}`);
  }
  return {
    baseOffset: h.baseOffset,
    lastOffset: h.baseOffset + BigInt(h.lastOffsetDelta),
    maxTimestamp: h.maxTimestamp,
    leaderEpoch: h.partitionLeaderEpoch,
    position,
    size,
  };
}
