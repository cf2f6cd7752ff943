// The log of one partition (Kafka's UnifiedLog + LocalLog, local tier only):
// the façade the request handlers call. Appends are serialized per partition;
// each one validates the batch headers, checks producer sequences, assigns
// offsets in place and writes the bytes verbatim with one write. Reads return
// whole stored batches as Buffers, never past the given max offset.
//
// Single broker, replication factor 1: the high watermark is the log end
// offset after each append; the last stable offset stops at the first open
// transaction. A replicated partition (broker/replica/) sets the high
// watermark itself (the leader from its ISR's log end offsets, a follower from
// its leader's fetch answers), appends as a follower what the leader sent, and
// truncates where its log diverged from the leader's.
import type { ReadLease } from '../common/read-buffer-pool.js';
import { promises as fsp } from 'node:fs';
import type { Logger } from 'pino';
import type { Clock } from '../common/clock.js';
import { ErrorCode, KafkaError } from '../protocol/errors.js';
import { BATCH_HEADER_SIZE, LOG_OVERHEAD, OFFSET_BATCH_LENGTH, OFFSET_LAST_OFFSET_DELTA, OFFSET_RECORDS_COUNT } from '../protocol/record-batch.js';
import { snapshotFile } from './file-names.js';
import type { HandleBudget } from './file-handles.js';
import { fileExists } from '../common/file-io.js';
import type { EpochEntry, LeaderEpochCache, LeaderEpochCheckpoint } from './leader-epoch-cache.js';
import type { LogConfig } from '../../metadata/log-config.js';
import type { LocalLog, LogSegmentData } from '../../remote-log/local-log.js';
import { followerBatches } from './follower-append.js';
import { loadLog } from './log-loader.js';
import { rebuildProducerState } from './log-truncation.js';
import { replayBatch } from './producer-replay.js';
import { LogSegment, type SegmentOptions, type TimestampAndOffset } from './log-segment.js';
import type { LogSegments } from './log-segments.js';
import { readPartitionMetadata, writePartitionMetadata } from './partition-metadata-file.js';
import { allBatchesUncompressed, logSegmentData } from './remote-segment-data.js';
import { type AppendAnalysis, type AppendPlan, analyzeAppend, assignOffsets, validateRecords } from './append-plan.js';
import { deleteSnapshotsBefore, writeSnapshot } from './producer-snapshots.js';
import { type ProducerStateEntry, type ProducerStateManager, firstOffsetOf } from './producer-state.js';
import {
  type DeletionReason,
  type SegmentPredicate,
  deletableSegments,
  localRetentionLimits,
  logStartOffsetBreached,
  retentionMsBreached,
  retentionSizeBreached,
} from './retention.js';
import { SegmentClosedError } from './segment-file.js';
import type { AbortedTxn } from './txn-index.js';
import type { SendfileBinding } from '../common/sendfile.js';
import type { FileRecords } from '../protocol/record-parts.js';

export interface PartitionLogOptions {
  dir: string;
  topic: string;
  partition: number;
  topicId: string;
  config: LogConfig;
  clock: Clock;
  logger?: Logger;
  /** From the log dir's recovery-point checkpoint. */
  recoveryPoint?: bigint;
  /** From the log dir's log-start-offset checkpoint. */
  logStartOffset?: bigint;
  /** The log dir was shut down cleanly: skip recovery (indexes are still sanity-checked). */
  cleanShutdown?: boolean;
  /** Tiered storage's veto on deleting a local segment (e.g. not yet remote). */
  canDeleteSegment?: (segment: LogSegment) => boolean;
  /** Bound on open files, shared by the broker's logs (LogManager passes one). */
  handleBudget?: HandleBudget;
}

export interface AppendOptions {
  leaderEpoch: number;
  /** Producer batches get the client rules (sequence checks, no control batches); broker writes do not. */
  isFromClient: boolean;
}

export interface AppendResult {
  baseOffset: bigint;
  lastOffset: bigint;
  /** The broker time stamped on the batches for LogAppendTime topics, else -1. */
  logAppendTime: bigint;
  logStartOffset: bigint;
  /** A retried batch already in the log: the original offsets, nothing appended. */
  duplicate: boolean;
}

export interface ReadOptions {
  /** Exclusive bound: the high watermark or the last stable offset. */
  maxOffset: bigint;
  /** Return the first batch even if it exceeds maxBytes. */
  minOneBatch: boolean;
  /**
   * Read into this request's pooled buffers: only for bytes that go to a socket
   * and are dropped once written (a Fetch response), never for bytes kept.
   */
  lease?: ReadLease;
  /**
   * Return bytes in the page cache as a file region (LogReadResult.file) for
   * sendfile(2): only for a Fetch answer written to a socket that can take one.
   */
  sendfile?: SendfileBinding;
}

export interface LogReadResult {
  /** Whole batches, in order; empty when nothing is readable below maxOffset or within maxBytes (or they are in `file`). */
  records: Buffer[];
  /** The batches as a region of a segment file instead, when ReadOptions.sendfile allowed it. */
  file?: FileRecords;
  /** Base offset of the first returned batch, or null when none. */
  firstOffset: bigint | null;
}

export interface RetentionResult {
  deletedSegments: number;
  deletedBytes: number;
  logStartOffset: bigint;
  reasons: DeletionReason[];
}

interface PendingAppend {
  records: Buffer;
  opts: AppendOptions;
  resolve: (r: AppendResult) => void;
  reject: (e: unknown) => void;
}

/** An append of a group, planned and waiting for the write; plan null for a duplicate. */
interface PlannedAppend {
  item: PendingAppend;
  plan: AppendPlan | null;
  aborted: AbortedTxn[];
  result: AppendResult;
}

/** The batches without records at the start of `records`: their bytes, the offset after them, the first kept base offset. */
function leadingEmptyBatches(records: Buffer): { bytes: number; nextOffset: bigint; firstKept: bigint | null } {
  let at = 0;
  let nextOffset = -1n;
  while (at + BATCH_HEADER_SIZE <= records.length) {
    if (records.readInt32BE(at + OFFSET_RECORDS_COUNT) !== 0) return { bytes: at, nextOffset, firstKept: records.readBigInt64BE(at) };
    nextOffset = records.readBigInt64BE(at) + BigInt(records.readInt32BE(at + OFFSET_LAST_OFFSET_DELTA)) + 1n;
    at += records.readInt32BE(at + OFFSET_BATCH_LENGTH) + LOG_OVERHEAD;
  }
  return { bytes: at, nextOffset, firstKept: null };
}

const storageError = (what: string, cause: unknown): KafkaError =>
  cause instanceof KafkaError ? cause : new KafkaError(ErrorCode.KAFKA_STORAGE_ERROR, `${what}: ${String(cause)}`, { cause });

/** Also remote-log's view of the local log (LocalLog): the segments it is handed back are always this log's LogSegments. */
export class PartitionLog implements LocalLog {
  private config: LogConfig;
  private readonly segmentOptions: SegmentOptions;
  private tail: Promise<void> = Promise.resolve();
  private pendingAppends: PendingAppend[] = [];
  private drainScheduled = false;
  private backgroundFlush: Promise<void> = Promise.resolve();
  private offlineError: KafkaError | null = null;
  private closed = false;
  private logEnd: bigint;
  private logStart: bigint;
  private recoveryPointOffset: bigint;
  private unflushedMessages = 0;
  /** Null: not replicated, the high watermark is the log end. */
  private replicatedHighWatermark: bigint | null = null;
  private lastFlush: number;
  private readonly logger: Logger | undefined;

  private constructor(
    private readonly opts: PartitionLogOptions,
    private readonly segments: LogSegments,
    private readonly producerState: ProducerStateManager,
    private readonly epochCache: LeaderEpochCache,
    private readonly epochCheckpoint: LeaderEpochCheckpoint,
    loaded: { logEndOffset: bigint; logStartOffset: bigint; recoveryPoint: bigint },
    segmentOptions: SegmentOptions,
  ) {
    this.config = opts.config;
    this.segmentOptions = segmentOptions;
    this.logEnd = loaded.logEndOffset;
    this.logStart = loaded.logStartOffset;
    this.recoveryPointOffset = loaded.recoveryPoint;
    this.lastFlush = opts.clock.now();
    this.logger = opts.logger;
  }

  static async open(opts: PartitionLogOptions): Promise<PartitionLog> {
    const segmentOptions: SegmentOptions = {
      indexIntervalBytes: opts.config.indexIntervalBytes,
      maxIndexBytes: opts.config.segmentIndexBytes,
      ...(opts.handleBudget === undefined ? {} : { handles: opts.handleBudget }),
    };
    await fsp.mkdir(opts.dir, { recursive: true });
    if ((await readPartitionMetadata(opts.dir))?.topicId !== opts.topicId) await writePartitionMetadata(opts.dir, opts.topicId);
    const loaded = await loadLog({
      dir: opts.dir,
      segmentOptions,
      now: opts.clock.now(),
      producerIdExpirationMs: opts.config.producerIdExpirationMs ?? 86_400_000,
      cleanShutdown: opts.cleanShutdown ?? false,
      ...(opts.recoveryPoint === undefined ? {} : { recoveryPoint: opts.recoveryPoint }),
      ...(opts.logStartOffset === undefined ? {} : { logStartOffset: opts.logStartOffset }),
      ...(opts.logger === undefined ? {} : { logger: opts.logger }),
    });
    if (loaded.recoveredSegments > 0) {
      opts.logger?.info(
        { topic: opts.topic, partition: opts.partition, recovered: loaded.recoveredSegments, truncatedBytes: loaded.truncatedBytes },
        'recovered log',
      );
    }
    return new PartitionLog(
      opts,
      loaded.segments,
      loaded.producerState,
      loaded.leaderEpochCache,
      loaded.leaderEpochCheckpoint,
      loaded,
      segmentOptions,
    );
  }

  get topic(): string {
    return this.opts.topic;
  }

  get partition(): number {
    return this.opts.partition;
  }

  get topicId(): string {
    return this.opts.topicId;
  }

  get dir(): string {
    return this.opts.dir;
  }

  get logStartOffset(): bigint {
    return this.logStart;
  }

  /** First offset held on local disk (equal to logStartOffset until tiering deletes local copies). */
  get localLogStartOffset(): bigint {
    const first = this.segments.first();
    const base = first === undefined ? this.logEnd : first.baseOffset;
    return base > this.logStart ? base : this.logStart;
  }

  get logEndOffset(): bigint {
    return this.logEnd;
  }

  get highWatermark(): bigint {
    const hw = this.replicatedHighWatermark;
    return hw === null || hw > this.logEnd ? this.logEnd : hw;
  }

  /**
   * The partition is replicated: from now on the high watermark is what
   * setHighWatermark says (never above the log end). It starts at `initial`
   * when not replicated before (there is no replication-offset-checkpoint yet:
   * a restarted replica starts from its log start and learns the rest).
   */
  enableReplicatedHighWatermark(initial: bigint = this.logStart): void {
    if (this.replicatedHighWatermark === null) this.replicatedHighWatermark = initial;
  }

  /** The partition is this broker's alone again (reassigned to one replica): the high watermark is the log end. */
  disableReplicatedHighWatermark(): void {
    this.replicatedHighWatermark = null;
  }

  get isReplicated(): boolean {
    return this.replicatedHighWatermark !== null;
  }

  /** Sets the high watermark of a replicated partition (capped at the log end when read). */
  setHighWatermark(offset: bigint): void {
    this.replicatedHighWatermark = offset;
  }

  /** First offset of the earliest open transaction, or null. */
  get firstUnstableOffset(): bigint | null {
    return this.producerState.firstUnstableOffset();
  }

  get lastStableOffset(): bigint {
    const fuo = this.producerState.firstUnstableOffset();
    return fuo !== null && fuo < this.highWatermark ? fuo : this.highWatermark;
  }

  get recoveryPoint(): bigint {
    return this.recoveryPointOffset;
  }

  /** Wall-clock time (clock ms) of the last fsync, for flush.ms. */
  get lastFlushTime(): number {
    return this.lastFlush;
  }

  get currentConfig(): LogConfig {
    return this.config;
  }

  /** Total bytes of the local segments. */
  get size(): number {
    return this.segments.sizeInBytes();
  }

  get isOffline(): boolean {
    return this.offlineError !== null;
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.tail.then(fn, fn);
    this.tail = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  private ensureUsable(): void {
    if (this.offlineError !== null) throw this.offlineError;
    if (this.closed) throw new KafkaError(ErrorCode.NOT_LEADER_OR_FOLLOWER, `log of ${this.opts.topic}-${this.opts.partition} is closed`);
  }

  private goOffline(what: string, cause: unknown): KafkaError {
    const err = storageError(what, cause);
    if (err.code === ErrorCode.KAFKA_STORAGE_ERROR && this.offlineError === null) {
      this.offlineError = err;
      this.logger?.error({ err: cause, topic: this.opts.topic, partition: this.opts.partition }, 'log is offline after an I/O error');
    }
    return err;
  }

  private get active(): LogSegment {
    return this.segments.last() as LogSegment;
  }

  // ---- append ----

  /**
   * Appends arriving while a write is in flight are grouped: each is validated
   * and checked against producer state in arrival order (seeing the ones before
   * it), then the group goes to the segment with one writev. Every append still
   * gets its own result or error; a roll splits the group.
   */
  append(records: Buffer, opts: AppendOptions): Promise<AppendResult> {
    return new Promise<AppendResult>((resolve, reject) => {
      this.pendingAppends.push({ records, opts, resolve, reject });
      if (!this.drainScheduled) {
        this.drainScheduled = true;
        void this.serial(() => this.drainAppends());
      }
    });
  }

  private async drainAppends(): Promise<void> {
    this.drainScheduled = false;
    const group = this.pendingAppends;
    this.pendingAppends = [];
    const run: PlannedAppend[] = [];
    const now = this.opts.clock.now();
    const appendTime = this.config.messageTimestampType === 'LogAppendTime' ? BigInt(now) : null;
    let virtualEnd = this.logEnd;
    let runBytes = 0;
    const endedInGroup = new Set<bigint>();
    for (const item of group) {
      let analysis: AppendAnalysis;
      try {
        this.ensureUsable();
        const { batches, valid } = validateRecords(item.records, this.config, item.opts.isFromClient, now, `${this.opts.topic}-${this.opts.partition}`);
        analysis = analyzeAppend(valid, batches, this.producerState, { nextOffset: virtualEnd, isFromClient: item.opts.isFromClient, logAppendTime: appendTime });
      } catch (e) {
        item.reject(e);
        continue;
      }
      if (analysis.kind === 'duplicate') {
        const dup = analysis.batch;
        run.push({
          item,
          plan: null,
          aborted: [],
          result: {
            baseOffset: firstOffsetOf(dup),
            lastOffset: dup.lastOffset,
            logAppendTime: appendTime === null ? -1n : dup.timestamp,
            logStartOffset: this.logStart,
            duplicate: true,
          },
        });
        continue;
      }
      const plan = analysis.plan;
      const rollParams = {
        segmentBytes: this.config.segmentBytes,
        segmentMs: this.config.segmentMs,
        messagesSize: runBytes + plan.valid.length,
        maxTimestampInMessages: plan.maxTimestamp,
        maxOffsetInMessages: plan.lastOffset,
        now,
      };
      if (this.active.shouldRoll(rollParams)) {
        // The snapshot taken at the roll must not see this append: write the run, then roll.
        await this.writeRun(run.splice(0));
        runBytes = 0;
        try {
          this.ensureUsable();
          await this.rollLocked(now);
        } catch (e) {
          item.reject(this.goOffline('roll failed', e));
          continue;
        }
      }
      // Committed in memory now so later appends of the group see this producer state;
      // should the write fail, the log goes offline and reloads state from disk.
      for (const info of plan.producerUpdates) this.producerState.update(info);
      // Completed transactions stay open for readers (the LSO) until the marker is written.
      const aborted: AbortedTxn[] = [];
      for (const c of plan.completedTxns) {
        const lastStableOffset = this.producerState.lastStableOffset(c, endedInGroup);
        if (c.isAborted) aborted.push({ producerId: c.producerId, firstOffset: c.firstOffset, lastOffset: c.lastOffset, lastStableOffset });
        endedInGroup.add(c.firstOffset);
      }
      assignOffsets(plan, item.opts.leaderEpoch, appendTime);
      run.push({
        item,
        plan,
        aborted,
        result: { baseOffset: plan.firstOffset, lastOffset: plan.lastOffset, logAppendTime: appendTime ?? -1n, logStartOffset: this.logStart, duplicate: false },
      });
      runBytes += plan.valid.length;
      virtualEnd = plan.lastOffset + 1n;
    }
    await this.writeRun(run);
  }

  /** Writes a run of planned appends to the active segment and settles each of them. */
  private async writeRun(run: PlannedAppend[]): Promise<void> {
    if (run.length === 0) return;
    try {
      this.ensureUsable();
      const segment = this.active;
      const parts = [];
      for (const r of run) if (r.plan !== null) parts.push({ records: r.plan.valid, meta: r.plan });
      if (parts.length > 0) {
        await segment.appendMany(parts, this.opts.clock.now());
        let epochsChanged = false;
        let messages = 0;
        for (const r of run) {
          if (r.plan === null) continue;
          for (const a of r.aborted) await segment.appendAbortedTxn(a);
          for (const c of r.plan.completedTxns) this.producerState.completeTxn(c);
          if (this.epochCache.assign(r.item.opts.leaderEpoch, r.plan.firstOffset)) epochsChanged = true;
          messages += r.plan.messages;
          this.logEnd = r.plan.lastOffset + 1n;
        }
        this.producerState.updateMapEndOffset(this.logEnd);
        if (epochsChanged) await this.epochCheckpoint.write(this.epochCache.entries());
        this.unflushedMessages += messages;
        if (this.unflushedMessages >= this.config.flushIntervalMessages) await this.flushTo(this.logEnd);
      }
    } catch (e) {
      const err = this.goOffline(`append to ${this.opts.topic}-${this.opts.partition} failed`, e);
      for (const r of run) r.item.reject(err);
      return;
    }
    for (const r of run) r.item.resolve({ ...r.result, logStartOffset: this.logStart });
  }

  // ---- replication (follower side) ----

  /**
   * Kafka's appendAsFollower: the leader's batches verbatim, offsets and
   * partitionLeaderEpoch kept. Producer state is rebuilt from them (origin
   * replication: no sequence checks), the leader-epoch cache learns every
   * epoch start, aborted transactions go to the txn index. Returns the new log
   * end offset (unchanged when no whole batch came).
   */
  appendAsFollower(records: Buffer): Promise<bigint> {
    return this.serial(async () => {
      this.ensureUsable();
      const where = `${this.opts.topic}-${this.opts.partition}`;
      const batches = followerBatches(records, this.logEnd, where);
      if (batches === null) return this.logEnd;
      const now = this.opts.clock.now();
      try {
        const roll = this.active.shouldRoll({
          segmentBytes: this.config.segmentBytes,
          segmentMs: this.config.segmentMs,
          messagesSize: batches.valid.length,
          maxTimestampInMessages: batches.meta.maxTimestamp,
          maxOffsetInMessages: batches.meta.lastOffset,
          now,
        });
        // A leader's batch may start past the log end (compacted away before it reached us): the segment starts there.
        if (roll || this.active.isEmpty) {
          if (batches.meta.firstOffset > this.logEnd && this.active.isEmpty) await this.restartEmptyActiveAt(batches.meta.firstOffset, now);
          else if (roll) await this.rollLocked(now);
        }
        const aborted: AbortedTxn[] = [];
        let pos = 0;
        for (const h of batches.headers) {
          const size = h.batchLength + LOG_OVERHEAD;
          const a = replayBatch(this.producerState, h, batches.valid.subarray(pos, pos + size));
          if (a !== null) aborted.push(a);
          pos += size;
        }
        const segment = this.active;
        await segment.appendMany([{ records: batches.valid, meta: batches.meta }], this.opts.clock.now());
        for (const a of aborted) await segment.appendAbortedTxn(a);
        let epochsChanged = false;
        for (const h of batches.headers) if (this.epochCache.assign(h.partitionLeaderEpoch, h.baseOffset)) epochsChanged = true;
        this.logEnd = batches.meta.lastOffset + 1n;
        this.producerState.updateMapEndOffset(this.logEnd);
        if (epochsChanged) await this.epochCheckpoint.write(this.epochCache.entries());
        this.unflushedMessages += batches.messages;
        if (this.unflushedMessages >= this.config.flushIntervalMessages) await this.flushTo(this.logEnd);
        return this.logEnd;
      } catch (e) {
        throw this.goOffline(`replicated append to ${where} failed`, e);
      }
    });
  }

  /** An empty active segment moved to `offset` (the log end jumps there). */
  private async restartEmptyActiveAt(offset: bigint, now: number): Promise<void> {
    const old = this.active;
    this.segments.remove(old.baseOffset);
    await old.delete();
    this.segments.add(await LogSegment.create(this.opts.dir, offset, this.segmentOptions, now));
    if (this.segments.size === 1) this.logStart = offset;
    this.logEnd = offset;
  }

  /**
   * Kafka's UnifiedLog.truncateTo: removes every batch holding an offset >=
   * `offset` (a batch straddling it goes whole), rebuilds producer state and
   * trims the leader-epoch cache. At or below the first segment's base the log
   * is emptied and starts at `offset`. At or past the log end nothing goes but
   * epochs starting at the log end. Returns the new log end offset.
   */
  truncateTo(offset: bigint): Promise<bigint> {
    return this.serial(async () => {
      this.ensureUsable();
      if (offset >= this.logEnd) {
        // As Kafka: the epoch cache is trimmed all the same. A broker that led and assigned its
        // epoch at the log end, then lost leadership before appending, holds an entry the new
        // leader never had; kept, it makes every fetch report the same divergence again.
        if (this.epochCache.truncateFromEnd(this.logEnd)) await this.epochCheckpoint.write(this.epochCache.entries());
        return this.logEnd;
      }
      try {
        const first = this.segments.first() as LogSegment;
        if (offset <= first.baseOffset || offset < this.logStart) {
          await this.truncateFullyLocked(offset);
          return this.logEnd;
        }
        await this.backgroundFlush;
        for (const seg of [...this.segments.all()].reverse()) {
          if (seg.baseOffset < offset) break;
          this.segments.remove(seg.baseOffset);
          await seg.delete();
        }
        const last = this.active;
        await last.truncateTo(offset);
        this.logEnd = last.nextOffset;
        await this.afterTruncation();
        return this.logEnd;
      } catch (e) {
        throw this.goOffline(`truncation of ${this.opts.topic}-${this.opts.partition} failed`, e);
      }
    });
  }

  /** Kafka's truncateFullyAndStartAt: every segment goes, the log starts empty at `offset`. */
  truncateFullyAndStartAt(offset: bigint): Promise<void> {
    return this.serial(async () => {
      this.ensureUsable();
      try {
        await this.truncateFullyLocked(offset);
      } catch (e) {
        throw this.goOffline(`truncation of ${this.opts.topic}-${this.opts.partition} failed`, e);
      }
    });
  }

  /**
   * Kafka's buildRemoteLogAuxState on the local side: every segment goes, the
   * log starts empty at `offset` (the end + 1 of the remote segment below the
   * leader's local log start) with the epoch history `epochs` and the producer
   * state `producers` as uploaded with that segment, so leader epochs and
   * idempotent producers carry on across the offsets only the remote tier holds.
   */
  startFromRemoteState(offset: bigint, epochs: readonly EpochEntry[], producers: readonly ProducerStateEntry[]): Promise<void> {
    return this.serial(async () => {
      this.ensureUsable();
      try {
        await this.backgroundFlush;
        for (const seg of [...this.segments.all()]) {
          this.segments.remove(seg.baseOffset);
          await seg.delete();
        }
        await deleteSnapshotsBefore(this.opts.dir, offset + 1n);
        this.segments.add(await LogSegment.create(this.opts.dir, offset, this.segmentOptions, this.opts.clock.now()));
        this.logStart = offset;
        this.logEnd = offset;
        // The snapshot at `offset` is what afterTruncation's rebuild loads.
        await writeSnapshot(this.opts.dir, offset, producers);
        this.epochCache.clear();
        for (const e of epochs) if (e.startOffset < offset) this.epochCache.assign(e.epoch, e.startOffset);
        await this.epochCheckpoint.write(this.epochCache.entries());
        await this.afterTruncation();
      } catch (e) {
        throw this.goOffline(`building ${this.opts.topic}-${this.opts.partition} from the remote tier failed`, e);
      }
    });
  }

  private async truncateFullyLocked(offset: bigint): Promise<void> {
    await this.backgroundFlush;
    for (const seg of [...this.segments.all()]) {
      this.segments.remove(seg.baseOffset);
      await seg.delete();
    }
    this.segments.add(await LogSegment.create(this.opts.dir, offset, this.segmentOptions, this.opts.clock.now()));
    this.logStart = offset;
    this.logEnd = offset;
    if (this.epochCache.clear()) await this.epochCheckpoint.write([]);
    await this.afterTruncation();
  }

  private async afterTruncation(): Promise<void> {
    await rebuildProducerState(this.opts.dir, this.producerState, this.segments.all(), this.logStart, this.logEnd);
    if (this.epochCache.truncateFromEnd(this.logEnd)) await this.epochCheckpoint.write(this.epochCache.entries());
    if (this.recoveryPointOffset > this.logEnd) this.recoveryPointOffset = this.logEnd;
    if (this.replicatedHighWatermark !== null && this.replicatedHighWatermark > this.logEnd) this.replicatedHighWatermark = this.logEnd;
    this.unflushedMessages = 0;
    this.logger?.info({ topic: this.opts.topic, partition: this.opts.partition, logEndOffset: this.logEnd.toString() }, 'truncated log');
  }

  /** A new leader's epoch starts at the log end (Kafka's assign on becoming leader), so OffsetForLeaderEpoch knows it before any append. */
  assignEpochStartOffset(epoch: number): Promise<void> {
    return this.serial(async () => {
      this.ensureUsable();
      if (this.epochCache.assign(epoch, this.logEnd)) await this.epochCheckpoint.write(this.epochCache.entries());
    });
  }

  // ---- read ----

  /**
   * Whole batches from the one containing `fetchOffset`, up to `maxBytes` (at least
   * one batch with minOneBatch), never reaching `maxOffset`. OFFSET_OUT_OF_RANGE
   * below the local log start or above the log end.
   */
  async read(fetchOffset: bigint, maxBytes: number, opts: ReadOptions): Promise<LogReadResult> {
    this.ensureUsable();
    for (let attempt = 0; ; attempt++) {
      const end = this.logEnd;
      if (fetchOffset < this.localLogStartOffset || fetchOffset > end) {
        throw new KafkaError(
          ErrorCode.OFFSET_OUT_OF_RANGE,
          `offset ${fetchOffset} is out of range [${this.localLogStartOffset}, ${end}] for ${this.opts.topic}-${this.opts.partition}`,
        );
      }
      if (fetchOffset >= end || fetchOffset >= opts.maxOffset) return { records: [], firstOffset: null };
      try {
        // Batches the log cleaner emptied (kept for producer state or a segment's end) are stepped
        // over: a fetch returning only those would stall consumers that advance on records (kafkajs).
        // They are returned only when nothing but them is left below maxOffset.
        let emptied: Buffer | null = null;
        let from = fetchOffset;
        let seg = this.segments.floorSegment(fetchOffset);
        while (seg !== undefined) {
          if (opts.sendfile !== undefined && emptied === null) {
            const f = await seg.readFile(from, maxBytes, seg.size, opts.minOneBatch, opts.maxOffset, opts.sendfile, this.opts.clock.now());
            if (f === null) {
              seg = this.segments.higherSegment(seg.baseOffset);
              continue;
            }
            if (f !== undefined) return f.file === null ? { records: [], firstOffset: null } : { records: [], file: f.file, firstOffset: f.firstOffset };
          }
          const r = await seg.read(from, maxBytes, seg.size, opts.minOneBatch, opts.maxOffset, opts.lease, this.opts.clock.now());
          if (r === null) {
            seg = this.segments.higherSegment(seg.baseOffset);
            continue;
          }
          if (r.records.length === 0) break;
          const lead = leadingEmptyBatches(r.records);
          if (lead.firstKept !== null) return { records: [r.records.subarray(lead.bytes)], firstOffset: lead.firstKept };
          emptied ??= r.records;
          from = lead.nextOffset;
          if (from >= seg.nextOffset) seg = this.segments.higherSegment(seg.baseOffset);
        }
        return emptied === null ? { records: [], firstOffset: null } : { records: [emptied], firstOffset: emptied.readBigInt64BE(0) };
      } catch (e) {
        // Retention removed the segment under the read: look the offset up again.
        if (e instanceof SegmentClosedError && attempt < 3) continue;
        throw storageError(`read of ${this.opts.topic}-${this.opts.partition} failed`, e);
      }
    }
  }

  /** Aborted transactions overlapping [startOffset, upperBoundOffset), for READ_COMMITTED fetches. */
  collectAbortedTransactions(startOffset: bigint, upperBoundOffset: bigint): AbortedTxn[] {
    const out: AbortedTxn[] = [];
    for (const seg of this.segments.range(startOffset, this.logEnd + 1n)) {
      const r = seg.txnIndex.collectAbortedTxns(startOffset, upperBoundOffset);
      out.push(...r.abortedTransactions);
      if (r.isComplete) break;
    }
    return out;
  }

  // ---- timestamps ----

  /** The first offset whose record timestamp is >= `timestamp` (ListOffsets), or null. */
  async offsetForTimestamp(timestamp: bigint): Promise<TimestampAndOffset | null> {
    this.ensureUsable();
    const start = this.localLogStartOffset;
    for (const seg of [...this.segments.all()]) {
      if (seg.maxTimestampSoFar < timestamp) continue;
      try {
        const r = await seg.findOffsetByTimestamp(timestamp, start);
        if (r !== null) return r;
      } catch (e) {
        if (e instanceof SegmentClosedError) continue;
        throw storageError('timestamp lookup failed', e);
      }
    }
    return null;
  }

  /**
   * The record with the largest timestamp (ListOffsets -3): the first record
   * carrying it in the segment with the largest max timestamp. (-1, -1) when no
   * record has a timestamp.
   */
  async maxTimestampOffset(): Promise<TimestampAndOffset> {
    this.ensureUsable();
    let best: LogSegment | null = null;
    for (const seg of this.segments.all()) if (best === null || seg.maxTimestampSoFar > best.maxTimestampSoFar) best = seg;
    if (best === null || best.maxTimestampSoFar < 0n) return { timestamp: -1n, offset: -1n, leaderEpoch: -1 };
    // From the segment's own base: the record carrying the largest timestamp may
    // sit below a log start offset DeleteRecords moved into this segment, and
    // Kafka still answers that record's offset.
    const found = await best.findOffsetByTimestamp(best.maxTimestampSoFar, best.baseOffset);
    return found ?? { timestamp: best.maxTimestampSoFar, offset: best.offsetOfMaxTimestampSoFar, leaderEpoch: this.epochCache.latestEpoch() ?? -1 };
  }

  // ---- log start offset and retention ----

  /**
   * DeleteRecords: moves the log start offset to `offset` (OFFSET_OUT_OF_RANGE
   * above the high watermark) and deletes segments now wholly below it.
   * Returns the new log start offset (the low watermark).
   */
  deleteRecordsBefore(offset: bigint): Promise<bigint> {
    return this.serial(async () => {
      this.ensureUsable();
      if (offset > this.highWatermark) {
        throw new KafkaError(
          ErrorCode.OFFSET_OUT_OF_RANGE,
          `cannot delete records before ${offset}: above the high watermark ${this.highWatermark} of ${this.opts.topic}-${this.opts.partition}`,
        );
      }
      if (offset > this.logStart) {
        this.logStart = offset;
        if (this.producerState.mapEndOffsetValue < offset) this.producerState.updateMapEndOffset(offset);
        if (this.epochCache.truncateFromStart(offset)) await this.epochCheckpoint.write(this.epochCache.entries());
        await this.deleteOldSegments(logStartOffsetBreached(this.logStart), 'log-start-offset');
      }
      return this.logStart;
    });
  }

  /** Deletes whole old segments by log start offset, retention.bytes and retention.ms (in Kafka's order). */
  applyRetention(now: number): Promise<RetentionResult> {
    return this.serial(async () => {
      this.ensureUsable();
      const result: RetentionResult = { deletedSegments: 0, deletedBytes: 0, logStartOffset: this.logStart, reasons: [] };
      const add = (r: { segments: number; bytes: number }, reason: DeletionReason): void => {
        if (r.segments === 0) return;
        result.deletedSegments += r.segments;
        result.deletedBytes += r.bytes;
        result.reasons.push(reason);
      };
      add(await this.deleteOldSegments(logStartOffsetBreached(this.logStart), 'log-start-offset'), 'log-start-offset');
      // cleanup.policy=compact alone: the cleaner bounds the log, retention.ms/bytes do not apply (as in Kafka).
      const deletes = this.config.cleanupPolicy?.delete ?? true;
      const bySize = deletes ? retentionSizeBreached(this.config, this.segments.sizeInBytes()) : null;
      if (bySize !== null) add(await this.deleteOldSegments(bySize, 'retention-bytes'), 'retention-bytes');
      if (deletes && localRetentionLimits(this.config).retentionMs >= 0) {
        const stamps = new Map<bigint, number>();
        for (const s of this.segments.all()) stamps.set(s.baseOffset, await s.largestTimestamp());
        const byTime = retentionMsBreached(this.config, now, stamps);
        if (byTime !== null) add(await this.deleteOldSegments(byTime, 'retention-ms'), 'retention-ms');
      }
      result.logStartOffset = this.logStart;
      return result;
    });
  }

  /** The one place local segments are deleted. */
  private async deleteOldSegments(predicate: SegmentPredicate, reason: DeletionReason): Promise<{ segments: number; bytes: number }> {
    const doomed = deletableSegments(
      { segments: this.segments.all(), logStartOffset: this.logStart, logEndOffset: this.logEnd, highWatermark: this.highWatermark },
      predicate,
      this.opts.canDeleteSegment,
    );
    if (doomed.length === 0) return { segments: 0, bytes: 0 };
    try {
      // Never leave a partition without segments: roll first when all would go.
      if (doomed.length === this.segments.size) await this.rollLocked(this.opts.clock.now(), true);
      let bytes = 0;
      for (const seg of doomed) {
        this.segments.remove(seg.baseOffset);
        bytes += seg.size;
      }
      const newFirst = this.segments.first() as LogSegment;
      if (newFirst.baseOffset > this.logStart) this.logStart = newFirst.baseOffset;
      if (this.epochCache.truncateFromStart(this.logStart)) await this.epochCheckpoint.write(this.epochCache.entries());
      for (const seg of doomed) {
        this.logger?.info({ topic: this.opts.topic, partition: this.opts.partition, segment: seg.baseOffset.toString(), reason }, 'deleting segment');
        await seg.delete();
      }
      // Snapshots inside the deleted range describe state no longer needed; the one
      // at the new first segment's base (the end of the last deleted one) stays.
      await deleteSnapshotsBefore(this.opts.dir, newFirst.baseOffset);
      return { segments: doomed.length, bytes };
    } catch (e) {
      throw this.goOffline('segment deletion failed', e);
    }
  }

  /**
   * The log cleaner's swap (broker/log/cleaner): runs `swap` under the log's lock,
   * so appends, rolls and retention wait while it replaces cleaned segments in the
   * list; reads go on. A failure mid-swap takes the log offline; the next load
   * completes or rolls back what the swap left on disk.
   */
  replaceSegments<T>(swap: (segments: LogSegments, segmentOptions: SegmentOptions) => Promise<T>): Promise<T> {
    return this.serial(async () => {
      this.ensureUsable();
      try {
        return await swap(this.segments, this.segmentOptions);
      } catch (e) {
        throw this.goOffline(`segment swap of ${this.opts.topic}-${this.opts.partition} failed`, e);
      }
    });
  }

  // ---- roll and flush ----

  /** Rolls the active segment when segment.ms has passed (idle partitions; called by the scheduler). */
  maybeRoll(now: number): Promise<boolean> {
    const due = (seg: LogSegment): boolean => !seg.isEmpty && seg.timeWaitedForRoll(now, BigInt(now)) > this.config.segmentMs;
    if (this.closed || !due(this.active)) return Promise.resolve(false);
    return this.serial(async () => {
      this.ensureUsable();
      const seg = this.active;
      if (seg.isEmpty || seg.timeWaitedForRoll(now, BigInt(now)) <= this.config.segmentMs) return false;
      await this.rollLocked(now);
      return true;
    });
  }

  roll(): Promise<LogSegment> {
    return this.serial(async () => {
      this.ensureUsable();
      return this.rollLocked(this.opts.clock.now());
    });
  }

  /**
   * Closes the active segment and opens one at the log end, writing the producer
   * snapshot named by the new base offset. The old segment is fsynced in the
   * background, then the recovery point advances.
   */
  private async rollLocked(now: number, evenIfEmpty = false): Promise<LogSegment> {
    const old = this.active;
    if (old.isEmpty && !evenIfEmpty) {
      old.resetCreated(now);
      return old;
    }
    if (old.isEmpty && old.baseOffset === this.logEnd) {
      old.resetCreated(now);
      return old;
    }
    const newBase = this.logEnd;
    await old.onBecomeInactive();
    this.producerState.updateMapEndOffset(newBase);
    await writeSnapshot(this.opts.dir, newBase, this.producerState.entries());
    const seg = await LogSegment.create(this.opts.dir, newBase, this.segmentOptions, now);
    this.segments.add(seg);
    old.setNextOffset(newBase);
    this.backgroundFlush = this.backgroundFlush
      .then(async () => {
        await old.flush();
        await old.releaseIndexHandles();
        if (newBase > this.recoveryPointOffset) this.recoveryPointOffset = newBase;
      })
      .catch((e: unknown) => {
        this.goOffline('flush after roll failed', e);
      });
    this.logger?.debug({ topic: this.opts.topic, partition: this.opts.partition, baseOffset: newBase.toString() }, 'rolled segment');
    return seg;
  }

  /** fsyncs everything written so far and advances the recovery point to the log end. */
  async flush(): Promise<void> {
    this.ensureUsable();
    try {
      await this.flushTo(this.logEnd);
    } catch (e) {
      throw this.goOffline('flush failed', e);
    }
  }

  private async flushTo(offset: bigint): Promise<void> {
    if (offset <= this.recoveryPointOffset && this.unflushedMessages === 0) return;
    const flushedMessages = this.unflushedMessages;
    await this.backgroundFlush;
    for (const seg of this.segments.range(this.recoveryPointOffset, offset)) await seg.flush();
    this.unflushedMessages = Math.max(0, this.unflushedMessages - flushedMessages);
    this.lastFlush = this.opts.clock.now();
    if (offset > this.recoveryPointOffset) this.recoveryPointOffset = offset;
  }

  // ---- tiering and epochs ----

  /** Closed (non-active) segments, oldest first: what the remote copy task may upload. */
  closedSegments(): readonly LogSegment[] {
    const all = this.segments.all();
    return all.slice(0, all.length - 1);
  }

  activeSegment(): LogSegment {
    return this.active;
  }

  /** The producer snapshot taken when `segment` closed (named by its end), or null if absent. */
  async producerSnapshotFor(segment: LogSegment): Promise<string | null> {
    const file = snapshotFile(this.opts.dir, segment.nextOffset);
    return (await fileExists(file)) ? file : null;
  }

  leaderEpochEntries(): readonly EpochEntry[] {
    return this.epochCache.entries();
  }

  /** What the remote copy uploads for `segment` (one of closedSegments()), its epoch checkpoint cut from `epochs`. */
  async segmentData(segment: LogSegment, epochs: readonly EpochEntry[]): Promise<LogSegmentData> {
    return logSegmentData(segment, epochs, await this.producerSnapshotFor(segment));
  }

  batchesUncompressed(segment: LogSegment): Promise<boolean> {
    return allBatchesUncompressed(segment);
  }

  /** OffsetForLeaderEpoch: the largest epoch <= `epoch` and where it ends. */
  endOffsetForEpoch(epoch: number): { epoch: number; endOffset: bigint } {
    return this.epochCache.endOffsetFor(epoch, this.logEnd);
  }

  latestEpoch(): number | null {
    return this.epochCache.latestEpoch();
  }

  producerStateManager(): ProducerStateManager {
    return this.producerState;
  }

  /** Drops idle producers past producer.id.expiration.ms. */
  removeExpiredProducers(now: number): number {
    return this.producerState.removeExpiredProducers(now);
  }

  updateConfig(config: LogConfig): void {
    this.config = config;
    this.segmentOptions.indexIntervalBytes = config.indexIntervalBytes;
    this.segmentOptions.maxIndexBytes = config.segmentIndexBytes;
  }

  // ---- lifecycle ----

  /** Flushes, snapshots producer state at the log end, closes every file. */
  close(): Promise<void> {
    return this.serial(async () => {
      if (this.closed) return;
      this.closed = true;
      if (this.offlineError === null) {
        await this.backgroundFlush;
        await this.active.onBecomeInactive();
        this.producerState.updateMapEndOffset(this.logEnd);
        await writeSnapshot(this.opts.dir, this.logEnd, this.producerState.entries());
        for (const seg of this.segments.range(this.recoveryPointOffset, this.logEnd + 1n)) await seg.flush();
        this.recoveryPointOffset = this.logEnd;
      }
      for (const seg of this.segments.all()) await seg.close().catch(() => undefined);
    });
  }

  /**
   * Releases file handles without flushing or snapshotting (Kafka's
   * closeHandlers): for a failed disk, and for tests that simulate a crash.
   */
  closeHandles(): Promise<void> {
    return this.serial(async () => {
      this.closed = true;
      await this.backgroundFlush;
      for (const seg of this.segments.all()) await seg.closeHandles().catch(() => undefined);
    });
  }

  /** Closes and removes the partition directory. */
  async delete(): Promise<void> {
    await this.serial(async () => {
      this.closed = true;
      for (const seg of this.segments.all()) await seg.close().catch(() => undefined);
      await fsp.rm(this.opts.dir, { recursive: true, force: true });
    });
  }
}
