// A partition as the handlers see it: the local PartitionLog, and below its
// local log start the remote tier (when a RemoteTier is attached).
import type { ReadLease } from './common/read-buffer-pool.js';
import type { SendfileBinding } from './common/sendfile.js';
import path from 'node:path';
import type { ActiveProducer, PartitionView } from './broker-context.js';
import type { PartitionLog } from './log/partition-log.js';
import { recordsOf, type Records } from './protocol/record-parts.js';

/** The remote tier's answers for one partition (the RemoteLogManager implements it). */
export interface RemoteTier {
  /** The earliest offset still held remotely, or null when nothing is. */
  logStartOffset(log: PartitionLog): bigint | null;
  highestRemoteOffset(log: PartitionLog): bigint;
  /** Whole batches from `fetchOffset`; the bytes may come as several parts (sent one after another, never joined). */
  /** With `lease`, the bytes stay valid until it is released (the response written); without, for good. */
  read(log: PartitionLog, fetchOffset: bigint, maxBytes: number, minOneBatch: boolean, signal?: AbortSignal, lease?: ReadLease): Promise<Records | null>;
  offsetForTimestamp(log: PartitionLog, timestamp: bigint): Promise<{ offset: bigint; timestamp: bigint; leaderEpoch: number } | null>;
  /** DeleteRecords across both tiers. */
  deleteRecordsBefore(log: PartitionLog, offset: bigint): Promise<bigint>;
}

/** A single broker leads at epoch 0 forever; in a cluster the epoch is the image's. */
const SINGLE_BROKER_EPOCH = (): number => 0;

export class LocalPartitionView implements PartitionView {
  constructor(
    readonly log: PartitionLog,
    private readonly remote: RemoteTier | null,
    private readonly epochOf: () => number = SINGLE_BROKER_EPOCH,
  ) {}

  get topic(): string {
    return this.log.topic;
  }
  get partition(): number {
    return this.log.partition;
  }
  get logStartOffset(): bigint {
    const remoteStart = this.remote?.logStartOffset(this.log) ?? null;
    const local = this.log.logStartOffset;
    return remoteStart !== null && remoteStart < local ? remoteStart : local;
  }
  get localLogStartOffset(): bigint {
    return this.log.localLogStartOffset;
  }
  get logEndOffset(): bigint {
    return this.log.logEndOffset;
  }
  get highWatermark(): bigint {
    return this.log.highWatermark;
  }
  get lastStableOffset(): bigint {
    return this.log.lastStableOffset;
  }
  get leaderEpoch(): number {
    return this.epochOf();
  }

  async append(records: Buffer) {
    return this.log.append(records, { leaderEpoch: this.epochOf(), isFromClient: true });
  }

  async read(fetchOffset: bigint, maxBytes: number, opts: { maxOffset: bigint; minOneBatch: boolean; signal?: AbortSignal; lease?: ReadLease; sendfile?: SendfileBinding }) {
    if (this.remote !== null && fetchOffset < this.log.localLogStartOffset) {
      const records = await this.remote.read(this.log, fetchOffset, maxBytes, opts.minOneBatch, opts.signal, opts.lease);
      return { records, abortedTransactions: [] };
    }
    const r = await this.log.read(fetchOffset, maxBytes, {
      maxOffset: opts.maxOffset,
      minOneBatch: opts.minOneBatch,
      ...(opts.lease === undefined ? {} : { lease: opts.lease }),
      ...(opts.sendfile === undefined ? {} : { sendfile: opts.sendfile }),
    });
    const aborted = r.firstOffset === null ? [] : this.log.collectAbortedTransactions(r.firstOffset, opts.maxOffset);
    // One part per segment read: they go to the socket one after another, never joined.
    return { records: r.file ?? recordsOf(r.records), abortedTransactions: aborted.map((a) => ({ producerId: a.producerId, firstOffset: a.firstOffset })) };
  }

  activeProducers(): ActiveProducer[] {
    return [...this.log.producerStateManager().activeProducers().values()].map((e) => ({
      producerId: e.producerId,
      producerEpoch: e.producerEpoch,
      lastSequence: e.lastSeq,
      lastTimestamp: e.lastTimestamp,
      coordinatorEpoch: e.coordinatorEpoch,
      currentTxnStartOffset: e.currentTxnFirstOffset,
    }));
  }

  async offsetForTimestamp(timestamp: bigint) {
    if (this.remote !== null) {
      const remote = await this.remote.offsetForTimestamp(this.log, timestamp);
      if (remote !== null) return remote;
    }
    return this.log.offsetForTimestamp(timestamp);
  }

  async maxTimestampOffset() {
    const r = await this.log.maxTimestampOffset();
    return r.offset < 0n ? null : r;
  }

  endOffsetForEpoch(epoch: number): { epoch: number; endOffset: bigint } {
    return this.log.endOffsetForEpoch(epoch);
  }

  get localSizeBytes(): number {
    return this.log.size;
  }

  get logDir(): string {
    return path.dirname(this.log.dir);
  }

  highestRemoteOffset(): bigint {
    return this.remote?.highestRemoteOffset(this.log) ?? -1n;
  }

  earliestPendingUploadOffset(): bigint {
    // As Kafka's UnifiedLog: only a tiered partition has offsets pending upload.
    if (this.remote === null || this.log.currentConfig.remoteStorageEnable !== true) return -1n;
    const highest = this.highestRemoteOffset();
    const start = this.logStartOffset;
    if (highest >= 0n) return highest + 1n > start ? highest + 1n : start;
    // Nothing uploaded: every offset is pending when the local log still holds them all;
    // otherwise older segments are remote but not (yet) in this broker's metadata.
    return this.log.localLogStartOffset === start ? start : -1n;
  }

  get cleanupPolicyDelete(): boolean {
    return this.log.currentConfig.cleanupPolicy?.delete ?? true;
  }
  deleteRecordsBefore(offset: bigint): Promise<bigint> {
    if (this.remote !== null) return this.remote.deleteRecordsBefore(this.log, offset);
    return this.log.deleteRecordsBefore(offset);
  }
}
