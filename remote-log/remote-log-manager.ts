// The RemoteLogManager: tiered storage for the partitions of this broker.
//
// Every `taskIntervalMs` each partition runs, one step after the other (never
// two runs of a partition at once):
//   1. cleanup   copies left STARTED by a crash or a failed cleanup are deleted,
//                deletions stuck in DELETE_SEGMENT_STARTED are retried;
//   2. copy      closed segments below the last stable offset go up, in order;
//   3. expire    total retention (retention.ms / retention.bytes over both
//                tiers) deletes remote segments oldest first;
//   4. sweep     (every orphanSweepIntervalMs) unrecorded objects past the grace
//                period are deleted; the LIST starts after the highest finished
//                segment (orphan-sweeper.ts says why that is enough).
// Only the partition's leader runs those steps (KIP-405): `leadership` says
// who leads (the broker's replication roles; alone, this broker leads all).
// Every run, leader or follower, first catches the partition's metadata up
// with what other brokers wrote, so a follower knows which of its segments
// are remote (local retention waits for that) and a new leader continues
// from the highest remote offset of its own epoch history (copy-task.ts).
// Losing leadership aborts the copy and deletions in flight at once
// (onLeadershipChanged).
// A failing step (store down, metadata not ready) is logged and retried on the
// next run; nothing throws out of the scheduler. Local segments are deleted by
// the log's own retention, vetoed by canDeleteLocalSegment until they are remote.
//
// Reads below the local log start go through `read`, bounded by fetchMaxWaitMs:
// a slower read returns null (the partition answers empty) and its GETs are
// abandoned. All state comes from the remote log metadata, so a restart
// restores the highest remote offset, the log start offset and the sizes.
import { recordsOf, type Records } from '../broker/protocol/record-parts.js';
import type { Logger } from 'pino';
import type { Clock } from '../broker/common/clock.js';
import { silentLogger } from '../broker/common/logger.js';
import { ErrorCode, KafkaError } from '../broker/protocol/errors.js';
import type { Scheduler, TimerHandle } from '../broker/common/scheduler.js';
import type { RemoteLogMetadataManager } from '../metadata/remote-log-metadata/remote-log-metadata-manager.js';
import type { RemoteLogSegmentMetadata, TopicIdPartition } from '../metadata/remote-log-metadata/types.js';
import { topicIdPartitionKey } from '../metadata/remote-log-metadata/types.js';
import { REMOTE_LOG_METADATA_TOPIC } from '../metadata/remote-log-metadata/metadata-topic-log.js';
import { ChunkCache, type ChunkCacheStats, type ChunkLease } from './read/chunk-cache.js';
import { ChunkMemory } from './read/chunk-memory.js';
import { copyCandidates, copyLogSegments } from './tasks/copy-task.js';
import { deleteRemotePartition, expirationCandidates, expireRemoteSegments, onlyLocalLogSegmentsSize } from './tasks/expiration-task.js';
import { IndexCache, type IndexCacheStats } from './read/index-cache.js';
import type { LocalLog, LocalSegment } from './local-log.js';
import { BucketSweepState, sweepPartitionOrphans, sweepUnknownPartitions } from './tasks/orphan-sweeper.js';
import type { PartitionCounters, PartitionLeadership, RlmContext } from './partition-state.js';
import { PartitionState, RemoteEpochIndex, refOf, tieringConfig, topicIdPartitionOf } from './partition-state.js';
import { auxStateSegment, type RemoteAuxState } from './read/aux-state.js';
import { RemoteReader, type TimestampAndOffset } from './read/remote-reader.js';
import type { RemoteStorage } from './remote-storage.js';
import { RemoteTimeoutError, raceAbort } from './remote-storage.js';
import { cleanupPendingSegments } from './tasks/segment-deletion.js';
import { ByteRateThrottle } from './tasks/throttle.js';

export interface RemoteLogManagerConfig {
  /** remote.log.manager.task.interval.ms (Kafka 30000). */
  readonly taskIntervalMs: number;
  /** remote.log.manager.copy.max.bytes.per.second; absent, <= 0 or Long.MAX = unlimited. */
  readonly copyBytesPerSec?: number;
  /** remote.log.manager.fetch.max.bytes.per.second; absent, <= 0 or Long.MAX = unlimited. */
  readonly fetchBytesPerSec?: number;
  /** remote.fetch.max.wait.ms (Kafka 500): a slower remote read answers empty. */
  readonly fetchMaxWaitMs: number;
  /** remote.log.index.file.cache.total.size.bytes. */
  readonly indexCacheBytes: number;
  /** rsm.config.chunk.cache.size.bytes. */
  readonly chunkCacheBytes: number;
  /** rsm.config.chunk.size.bytes: the store's chunk size, so cache chunks align with stored ones. */
  readonly chunkSize: number;
  /** rsm.config.chunk.cache.prefetch.chunks (default 8). */
  readonly readAheadChunks?: number;
  /** rsm.config.chunk.cache.fetch.chunks (default 8). */
  readonly maxChunksPerRequest?: number;
  /** Unrecorded objects younger than this are left alone (default 10 minutes). */
  readonly orphanGraceMs?: number;
  /** How often each partition's new objects are listed for orphans (default 5 minutes). */
  readonly orphanSweepIntervalMs?: number;
  /** How often a sweep lists a partition's whole prefix, and the bucket-wide one the whole bucket, instead of what is new (default a day). */
  readonly orphanFullSweepIntervalMs?: number;
  /** Partitions run at once by a scheduled run (Kafka's copier pool, default 10). */
  readonly taskConcurrency?: number;
  /** Scan batch headers so the store may compress uncompressed segments (default: when the store compresses). */
  readonly detectUncompressedBatches?: boolean;
  /** Read chunks into reused memory slots rather than fresh buffers (ChunkMemory). Default false (docs/tiering-benchmarks.md says why). */
  readonly reuseChunkMemory?: boolean;
}

/** Chunk memory beyond the cache's limit: chunks in flight, and evicted ones a response still holds. */
const CHUNK_MEMORY_HEADROOM_BYTES = 64 * 1024 * 1024;

/** Where the chunk cache's data reads go when not to the storage itself (a StorageWorkerPool). */
export interface ChunkSource extends Pick<RemoteStorage, 'fetchChunks'> {
  close(): Promise<void>;
}

/** Where segment copies go when not to the storage itself (a StorageWorkerPool). */
export interface SegmentCopier extends Pick<RemoteStorage, 'copySegment'> {
  close(): Promise<void>;
}

export interface RemoteLogManagerOptions {
  readonly storage: RemoteStorage;
  /** Serves the chunk cache's data reads instead of `storage` (closed with the manager). */
  readonly chunkSource?: ChunkSource;
  /** Runs the copy task's segment uploads instead of `storage` (closed with the manager). */
  readonly copier?: SegmentCopier;
  readonly metadata: RemoteLogMetadataManager;
  readonly clock: Clock;
  readonly scheduler: Scheduler;
  readonly config: RemoteLogManagerConfig;
  readonly logger?: Logger;
  /** node.id, written into every metadata event (default 0). */
  readonly brokerId?: number;
  /** Whether this broker leads a partition now (default: it leads every partition, as a single broker does). */
  readonly leadership?: (log: LocalLog) => PartitionLeadership;
  /**
   * Replay every metadata partition at start (default true). In a cluster the
   * metadata topic is read over the network and only the partitions that map
   * to this broker's replicas are replayed, when their replicas are added.
   */
  readonly replayAllOnStart?: boolean;
  /**
   * Sweep the whole bucket for partitions this manager does not run (default
   * true). False when brokers share the bucket: another broker's partitions are
   * not leftovers. Failed partition deletions are then retried every run.
   */
  readonly sweepUnmanagedPartitions?: boolean;
}

const ALWAYS_LEADER: PartitionLeadership = { leader: true, leaderEpoch: 0 };

/** The broker settings the manager reads (BrokerConfig has them). */
export interface RemoteLogManagerBrokerSettings {
  readonly remoteLogManagerTaskIntervalMs: number;
  readonly remoteLogManagerCopyMaxBytesPerSecond: number;
  readonly remoteLogManagerFetchMaxBytesPerSecond: number;
  readonly remoteFetchMaxWaitMs: number;
  readonly remoteLogIndexFileCacheTotalSizeBytes: number;
}

/** The RemoteLogManager settings from broker settings plus the parsed rsm.config.* values. */
export function remoteLogManagerConfig(
  broker: RemoteLogManagerBrokerSettings,
  rsm: {
    readonly chunkSizeBytes: number;
    readonly chunkCacheSizeBytes: number;
    readonly chunkCachePrefetchChunks: number;
    readonly chunkCacheFetchChunks?: number;
    readonly orphanSweepIntervalMs?: number;
    readonly orphanFullSweepIntervalMs?: number;
    readonly chunkCacheReuseEnable?: boolean;
  },
): RemoteLogManagerConfig {
  return {
    taskIntervalMs: broker.remoteLogManagerTaskIntervalMs,
    copyBytesPerSec: broker.remoteLogManagerCopyMaxBytesPerSecond,
    fetchBytesPerSec: broker.remoteLogManagerFetchMaxBytesPerSecond,
    fetchMaxWaitMs: broker.remoteFetchMaxWaitMs,
    indexCacheBytes: broker.remoteLogIndexFileCacheTotalSizeBytes,
    chunkCacheBytes: rsm.chunkCacheSizeBytes,
    chunkSize: rsm.chunkSizeBytes,
    readAheadChunks: rsm.chunkCachePrefetchChunks,
    ...(rsm.chunkCacheFetchChunks === undefined ? {} : { maxChunksPerRequest: rsm.chunkCacheFetchChunks }),
    ...(rsm.orphanSweepIntervalMs === undefined ? {} : { orphanSweepIntervalMs: rsm.orphanSweepIntervalMs }),
    ...(rsm.orphanFullSweepIntervalMs === undefined ? {} : { orphanFullSweepIntervalMs: rsm.orphanFullSweepIntervalMs }),
    ...(rsm.chunkCacheReuseEnable === undefined ? {} : { reuseChunkMemory: rsm.chunkCacheReuseEnable }),
  };
}

export interface RemotePartitionStats extends PartitionCounters {
  readonly highestRemoteOffset: bigint;
  readonly remoteLogStartOffset: bigint | null;
  readonly remoteLogSizeBytes: number;
  readonly remoteSegmentCount: number;
  /** Closed local segments (and their bytes) waiting to be copied. */
  readonly copyLagSegments: number;
  readonly copyLagBytes: number;
  /** Bytes of local segments not yet remote, active segment included (retention.bytes counts them). */
  readonly onlyLocalBytes: number;
  /** Remote segments due for deletion (expired by total retention, or whose delete started) not yet deleted. */
  readonly deleteLagSegments: number;
  readonly deleteLagBytes: number;
}

const DEFAULT_ORPHAN_GRACE_MS = 10 * 60_000;
export const DEFAULT_SWEEP_INTERVAL_MS = 5 * 60_000;
export const DEFAULT_FULL_SWEEP_INTERVAL_MS = 24 * 3_600_000;

export class RemoteLogManager {
  private readonly ctx: RlmContext;
  private readonly reader: RemoteReader;
  private readonly partitions = new Map<string, PartitionState>();
  private readonly config: RemoteLogManagerConfig;
  private readonly detectUncompressed: boolean;
  private timer: TimerHandle | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private lastGlobalSweepMs = Number.NEGATIVE_INFINITY;
  private readonly bucketSweep = new BucketSweepState();
  private readonly deletions = new Map<string, Promise<void>>();
  /** Remote reads started and not yet answered (Kafka's reader task queue; here they run concurrently). */
  private readsInFlight = 0;
  private readonly chunkSource: ChunkSource | undefined;
  private readonly copier: SegmentCopier | undefined;
  private readonly leadershipOf: (log: LocalLog) => PartitionLeadership;
  private readonly replayAllOnStart: boolean;
  private readonly sweepUnmanaged: boolean;
  /** Partition deletions that failed, retried every run when the bucket-wide sweep is off. */
  private readonly failedDeletions = new Map<string, TopicIdPartition>();

  private constructor(options: RemoteLogManagerOptions) {
    const c = options.config;
    this.config = c;
    this.leadershipOf = options.leadership ?? (() => ALWAYS_LEADER);
    this.replayAllOnStart = options.replayAllOnStart ?? true;
    this.sweepUnmanaged = options.sweepUnmanagedPartitions ?? true;
    this.chunkSource = options.chunkSource;
    this.copier = options.copier;
    const logger = options.logger ?? silentLogger();
    this.ctx = {
      storage: options.storage,
      copier: options.copier ?? options.storage,
      metadata: options.metadata,
      clock: options.clock,
      scheduler: options.scheduler,
      logger,
      brokerId: options.brokerId ?? 0,
      copyThrottle: new ByteRateThrottle(c.copyBytesPerSec ?? 0, options.clock, options.scheduler),
      fetchThrottle: new ByteRateThrottle(c.fetchBytesPerSec ?? 0, options.clock, options.scheduler),
      chunkCache: new ChunkCache({
        source:
          options.chunkSource === undefined
            ? options.storage
            : { fetchData: options.storage.fetchData.bind(options.storage), fetchChunks: options.chunkSource.fetchChunks.bind(options.chunkSource) },
        chunkSize: c.chunkSize,
        maxBytes: c.chunkCacheBytes,
        ...(c.readAheadChunks === undefined ? {} : { readAheadChunks: c.readAheadChunks }),
        ...(c.maxChunksPerRequest === undefined ? {} : { maxChunksPerRequest: c.maxChunksPerRequest }),
        // Shared when worker threads fill the chunks (slower to copy into: ChunkMemory).
        ...(c.reuseChunkMemory !== true || c.chunkCacheBytes <= 0
          ? {}
          : { memory: new ChunkMemory(c.chunkSize, c.chunkCacheBytes + CHUNK_MEMORY_HEADROOM_BYTES, options.chunkSource !== undefined) }),
      }),
      indexCache: new IndexCache({ source: options.storage, maxBytes: c.indexCacheBytes }),
      orphanGraceMs: c.orphanGraceMs ?? DEFAULT_ORPHAN_GRACE_MS,
    };
    this.reader = new RemoteReader(this.ctx);
    this.detectUncompressed = c.detectUncompressedBatches ?? (options.storage as { compression?: unknown }).compression === true;
  }

  static create(options: RemoteLogManagerOptions): RemoteLogManager {
    if (!(options.config.taskIntervalMs > 0)) throw new RangeError(`taskIntervalMs must be positive: ${options.config.taskIntervalMs}`);
    if (!(options.config.fetchMaxWaitMs > 0)) throw new RangeError(`fetchMaxWaitMs must be positive: ${options.config.fetchMaxWaitMs}`);
    return new RemoteLogManager(options);
  }

  // ---- lifecycle ----

  /** Starts the metadata replay (if nobody did) and the periodic runs; resolves when the replay ends. */
  async start(): Promise<void> {
    this.stopped = false;
    this.arm();
    if (this.replayAllOnStart) await this.ctx.metadata.start();
  }

  /** Stops the periodic runs, aborts copies and reads in flight, waits for running tasks, empties the caches. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) this.ctx.scheduler.clearTimeout(this.timer);
    this.timer = undefined;
    for (const state of this.partitions.values()) state.abort.abort(new Error('remote log manager stopped'));
    await this.settled();
    await Promise.allSettled([...this.partitions.values()].map((s) => s.idle()));
    this.ctx.chunkCache.close();
    this.ctx.indexCache.close();
    await this.chunkSource?.close();
    await this.copier?.close();
  }

  /** Resolves once the scheduled run in progress (if any) has finished. */
  async settled(): Promise<void> {
    while (this.running !== undefined) await this.running;
  }

  private arm(): void {
    if (this.stopped || this.timer !== undefined) return;
    this.timer = this.ctx.scheduler.setTimeout(() => {
      this.timer = undefined;
      const run = this.runOnce()
        .catch((err: unknown) => this.ctx.logger.error({ err }, 'remote log manager run failed'))
        .finally(() => {
          if (this.running === run) this.running = undefined;
          this.arm();
        });
      this.running = run;
    }, this.config.taskIntervalMs);
  }

  // ---- partitions ----

  /** Starts tiering a partition (idempotent). Its metadata is caught up in the background. The metadata topic's own partitions are never tiered. */
  onPartitionAdded(log: LocalLog): void {
    if (isMetadataTopic(log)) return;
    const tp = topicIdPartitionOf(log);
    const key = topicIdPartitionKey(tp);
    const existing = this.partitions.get(key);
    if (existing !== undefined && existing.log === log && !existing.removed) return;
    if (existing !== undefined) existing.removed = true;
    const state = new PartitionState(log, tp);
    this.partitions.set(key, state);
    // Never chained to the partition's tasks: a replay that cannot finish must not stall them.
    this.ctx.metadata
      .onPartitionLeadershipChanges([tp], [])
      .catch((err: unknown) => this.ctx.logger.warn({ topic: tp.topic, partition: tp.partition, err }, 'loading remote log metadata failed'));
  }

  /** A config change (e.g. tiering turned off with remote.log.delete.on.disable): run the partition now. */
  onConfigChanged(log: LocalLog): Promise<void> {
    return this.runPartition(log);
  }

  /** Stops tiering a partition (its remote data stays): aborts its copy and waits for its tasks. */
  async onPartitionRemoved(log: LocalLog): Promise<void> {
    const key = topicIdPartitionKey(topicIdPartitionOf(log));
    const state = this.partitions.get(key);
    if (state === undefined || state.log !== log) return;
    this.partitions.delete(key);
    state.removed = true;
    state.abort.abort(new Error('partition removed'));
    await state.idle();
    // Its aborted copy, if any, is now the bucket-wide sweep's (which lists from where this one stopped).
    if (this.sweepUnmanaged) this.bucketSweep.watch(state.tp, state.sweepCursor.after);
  }

  /**
   * The partition's topic was deleted: stops its tasks, then deletes every remote
   * object and records the partition delete. Retried by the bucket-wide sweep
   * (at start and every orphan sweep interval) if it fails.
   */
  deletePartitionData(tp: TopicIdPartition): Promise<void> {
    const key = topicIdPartitionKey(tp);
    const pending = this.deletions.get(key);
    if (pending !== undefined) return pending;
    const run = (async () => {
      const state = this.partitions.get(key);
      if (state !== undefined) await this.onPartitionRemoved(state.log);
      await deleteRemotePartition(this.ctx, tp);
      this.failedDeletions.delete(key);
    })()
      .catch((err: unknown) => {
        if (this.sweepUnmanaged) this.bucketSweep.watch(tp);
        else this.failedDeletions.set(key, tp);
        throw err;
      })
      .finally(() => this.deletions.delete(key));
    this.deletions.set(key, run);
    return run;
  }

  /**
   * Every partition of a deleted topic stops tiering here; the remote data of
   * those `deletesRemote` names (default: all, as a single broker) is deleted
   * with deletePartitionData. In a cluster only the partition's leader
   * deletes it, as Kafka's ReplicaManager passes deleteRemoteLog only where
   * this broker led the partition in the image before the deletion: the other
   * replicas stop, so the objects are deleted and their metadata written once.
   */
  async onTopicDeleted(
    topic: { readonly name: string; readonly topicId: string; readonly partitionCount: number },
    _logs: readonly LocalLog[] = [],
    deletesRemote: (partition: number) => boolean = () => true,
  ): Promise<void> {
    const results = await Promise.allSettled(
      Array.from({ length: topic.partitionCount }, async (_, partition) => {
        const tp = { topic: topic.name, topicId: topic.topicId, partition };
        if (deletesRemote(partition)) return this.deletePartitionData(tp);
        const state = this.partitions.get(topicIdPartitionKey(tp));
        if (state !== undefined) await this.onPartitionRemoved(state.log);
      }),
    );
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed !== undefined) {
      this.ctx.logger.warn({ topic: topic.name, err: failed.reason }, 'deleting remote data of a deleted topic failed; the orphan sweep resumes it');
    }
  }

  // ---- runs ----

  /** One run of every partition (then the bucket-wide sweep when due); what the timer does. */
  async runOnce(): Promise<void> {
    const states = [...this.partitions.values()];
    const limit = Math.max(1, this.config.taskConcurrency ?? 10);
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < states.length) {
        const state = states[next++] as PartitionState;
        await this.runState(state);
      }
    };
    await Promise.all(Array.from({ length: Math.min(limit, states.length) }, worker));
    if (this.sweepUnmanaged) await this.maybeSweepUnknown();
    else await this.retryFailedDeletions();
  }

  private async retryFailedDeletions(): Promise<void> {
    for (const tp of [...this.failedDeletions.values()]) {
      await this.deletePartitionData(tp).catch((err: unknown) => this.ctx.logger.debug({ topic: tp.topic, partition: tp.partition, err }, 'retrying a remote partition delete failed'));
    }
  }

  /**
   * The partition's leadership may have changed (the broker's role events):
   * a lost leadership aborts the copy and deletions in flight now; then the
   * partition runs (a new leader copies what is due at once).
   */
  onLeadershipChanged(log: LocalLog): Promise<void> {
    const state = this.partitions.get(topicIdPartitionKey(topicIdPartitionOf(log)));
    if (state === undefined || state.log !== log || this.stopped) return Promise.resolve();
    const leadership = this.leadershipOf(log);
    const before = state.leadership;
    if (before !== undefined && before.leader === leadership.leader && before.leaderEpoch === leadership.leaderEpoch) return Promise.resolve();
    if (before?.leader === true) state.term.abort(new Error(`no longer the leader of epoch ${before.leaderEpoch}`));
    return this.runState(state);
  }

  /**
   * onLeadershipChanged for every partition, or those of `topics` (after role events and cluster
   * metadata changes); what changed runs in the background.
   */
  refreshLeadership(topics?: ReadonlySet<string>): void {
    for (const state of this.partitions.values()) {
      if (topics !== undefined && !topics.has(state.tp.topic)) continue;
      this.onLeadershipChanged(state.log).catch((err: unknown) => this.ctx.logger.warn({ topic: state.tp.topic, partition: state.tp.partition, err }, 'remote log run after a leadership change failed'));
    }
  }

  /** Runs one partition's tasks now (after any run already queued for it). */
  runPartition(log: LocalLog): Promise<void> {
    const state = this.partitions.get(topicIdPartitionKey(topicIdPartitionOf(log)));
    return state === undefined ? Promise.resolve() : this.runState(state);
  }

  /** Same as runPartition: copies what is eligible (and runs the other steps). */
  copyNow(log: LocalLog): Promise<void> {
    return this.runPartition(log);
  }

  private runState(state: PartitionState): Promise<void> {
    return state.serial(async () => {
      if (state.removed || this.stopped) return;
      const where = { topic: state.tp.topic, partition: state.tp.partition };
      if (!this.ctx.metadata.isReady(state.tp)) {
        // A replay that failed (the metadata topic's leader away) starts again; the partition runs once it is done.
        // Never awaited here: a replay that cannot finish must not stall the partition's tasks.
        this.ctx.metadata.whenReady(state.tp).then(
          () => this.runState(state).catch(() => undefined),
          (err: unknown) => this.ctx.logger.debug({ ...where, err }, 'remote log metadata not loaded yet'),
        );
        return;
      }
      const leadership = this.leadershipOf(state.log);
      const changed = state.changeLeadership(leadership);
      let failed: unknown;
      // An untiered partition with nothing remote has nothing to learn from the metadata (its replay said so).
      if (tieringConfig(state.log).remoteStorageEnable === true || this.ctx.metadata.segmentCount(state.tp) > 0) {
        try {
          // What other brokers wrote (a previous leader's copies and deletions).
          await this.ctx.metadata.catchUp(this.ctx.metadata.metadataPartition(state.tp));
        } catch (err) {
          failed = err;
          this.ctx.logger.debug({ ...where, err }, 'catching up the remote log metadata failed');
        }
      }
      if (changed) this.ctx.logger.info({ ...where, leader: leadership.leader, leaderEpoch: leadership.leaderEpoch }, leadership.leader ? 'tiering the partition as its leader' : 'following the partition\'s remote log metadata');
      if (!leadership.leader || changed) {
        // Followers learn remote segments from the metadata: their epoch index is rebuilt from it.
        state.epochs = new RemoteEpochIndex();
        state.epochsLoaded = false;
      }
      this.loadEpochs(state);
      if (!leadership.leader || failed !== undefined) {
        state.lastError = failed;
        return;
      }
      const step = async (name: string, fn: () => Promise<unknown>): Promise<void> => {
        try {
          await fn();
        } catch (err) {
          failed ??= err;
          this.ctx.logger.debug({ ...where, step: name, err }, 'remote log task step failed');
        }
      };
      await step('cleanup', () => cleanupPendingSegments(this.ctx, state.tp, state.copying, state.counters, state.leaderSignal()));
      await step('copy', () => copyLogSegments(this.ctx, state, { detectUncompressedBatches: this.detectUncompressed }));
      await step('expire', () => expireRemoteSegments(this.ctx, state));
      const now = this.ctx.clock.now();
      // A partition that is not tiered and has nothing remote can only have
      // leftovers the bucket-wide sweep finds; listing it every interval would
      // cost a LIST per partition (internal topics included) for nothing.
      const sweepable = tieringConfig(state.log).remoteStorageEnable === true || this.ctx.metadata.segmentCount(state.tp) > 0;
      if (sweepable && now - state.lastSweepMs >= (this.config.orphanSweepIntervalMs ?? DEFAULT_SWEEP_INTERVAL_MS)) {
        await step('sweep', async () => {
          await sweepPartitionOrphans(this.ctx, state.tp, state.sweepCursor, this.fullSweepIntervalMs, state.counters, state.leaderSignal());
          state.lastSweepMs = now;
        });
      }
      state.lastError = failed;
    });
  }

  private async maybeSweepUnknown(): Promise<void> {
    const now = this.ctx.clock.now();
    if (now - this.lastGlobalSweepMs < (this.config.orphanSweepIntervalMs ?? DEFAULT_SWEEP_INTERVAL_MS)) return;
    try {
      await sweepUnknownPartitions(
        this.ctx,
        this.bucketSweep,
        (tp) => this.partitions.has(topicIdPartitionKey(tp)) || this.deletions.has(topicIdPartitionKey(tp)),
        this.fullSweepIntervalMs,
      );
      this.lastGlobalSweepMs = now;
    } catch (err) {
      this.ctx.logger.debug({ err }, 'bucket-wide orphan sweep failed');
    }
  }

  private get fullSweepIntervalMs(): number {
    return this.config.orphanFullSweepIntervalMs ?? DEFAULT_FULL_SWEEP_INTERVAL_MS;
  }

  // ---- the remote tier's answers (what the partition view asks) ----

  /**
   * Whole batches from `fetchOffset` read from the remote tier (the offset must
   * be below the local log start): null when nothing fits, or when the read
   * takes longer than remote.fetch.max.wait.ms or `signal` fires (its GETs are
   * abandoned). Throws OFFSET_OUT_OF_RANGE, REPLICA_NOT_AVAILABLE (metadata not
   * loaded yet), KAFKA_STORAGE_ERROR (store failing) or CORRUPT_MESSAGE.
   */
  async read(log: LocalLog, fetchOffset: bigint, maxBytes: number, minOneBatch: boolean, signal?: AbortSignal, lease?: ChunkLease): Promise<Records | null> {
    const state = this.stateOf(log);
    state.counters.fetchRequests++;
    const controller = new AbortController();
    const abort = (reason: unknown): void => controller.abort(reason);
    const onCallerAbort = (): void => abort(signal?.reason);
    const onPartitionAbort = (): void => abort(state.abort.signal.reason);
    const callerAborted = (): boolean => signal?.aborted === true;
    if (callerAborted()) return null;
    signal?.addEventListener('abort', onCallerAbort, { once: true });
    state.abort.signal.addEventListener('abort', onPartitionAbort, { once: true });
    const deadline = { passed: false };
    const timer = this.ctx.scheduler.setTimeout(() => {
      deadline.passed = true;
      abort(new RemoteTimeoutError(`remote read of ${log.topic}-${log.partition} at ${fetchOffset} exceeded ${this.config.fetchMaxWaitMs} ms`));
    }, this.config.fetchMaxWaitMs);
    this.readsInFlight++;
    try {
      // Views into the cached chunks: the Fetch answer writes them without joining.
      // Under `lease` (the Fetch's), the chunks they view are not reused before the response is written.
      const parts = await raceAbort(this.reader.readParts(state, fetchOffset, maxBytes, minOneBatch, controller.signal, lease), controller.signal, 'remote read');
      return recordsOf(parts);
    } catch (err) {
      if (deadline.passed || callerAborted()) {
        this.ctx.logger.debug({ topic: log.topic, partition: log.partition, fetchOffset: fetchOffset.toString(), timedOut: deadline.passed }, 'remote read abandoned');
        return null;
      }
      state.counters.fetchErrors++;
      throw err;
    } finally {
      this.readsInFlight--;
      this.ctx.scheduler.clearTimeout(timer);
      signal?.removeEventListener('abort', onCallerAbort);
      state.abort.signal.removeEventListener('abort', onPartitionAbort);
    }
  }

  /**
   * ListOffsets by timestamp over the remote segments below the local log start
   * (the time index of each remote segment whose max timestamp reaches it);
   * null when the answer is not there (the local log then answers).
   */
  async offsetForTimestamp(log: LocalLog, timestamp: bigint, signal?: AbortSignal): Promise<TimestampAndOffset | null> {
    const start = this.logStartOffset(log);
    if (start === null) return null;
    const state = this.stateOf(log);
    return this.reader.offsetForTimestamp(state, timestamp, start, log.localLogStartOffset, signal);
  }

  /**
   * A follower below its leader's local log start (OFFSET_MOVED_TO_TIERED_STORAGE):
   * the remote state to start its log from (aux-state.ts), after catching the
   * partition's metadata up. Throws a retriable REPLICA_NOT_AVAILABLE while the
   * metadata has no segment ending below the leader's local log start.
   */
  async remoteAuxState(log: LocalLog, leaderLocalLogStartOffset: bigint, leaderEpoch: number): Promise<RemoteAuxState> {
    const tp = topicIdPartitionOf(log);
    await this.ctx.metadata.whenReady(tp);
    await this.ctx.metadata.catchUp(this.ctx.metadata.metadataPartition(tp));
    const segment = auxStateSegment(this.ctx.metadata.listRemoteLogSegments(tp), leaderLocalLogStartOffset, leaderEpoch);
    if (segment === undefined) {
      throw new KafkaError(ErrorCode.REPLICA_NOT_AVAILABLE, `no remote segment of ${log.topic}-${log.partition} holds offset ${leaderLocalLogStartOffset - 1n} (the leader's local log starts at ${leaderLocalLogStartOffset})`);
    }
    const ref = refOf(segment);
    const [leaderEpochCheckpoint, producerSnapshot] = await Promise.all([this.ctx.storage.fetchIndex(ref, 'leaderEpoch'), this.ctx.storage.fetchIndex(ref, 'producerSnapshot')]);
    return { nextOffset: segment.endOffset + 1n, leaderEpochCheckpoint, producerSnapshot };
  }

  /** ListOffsets -5: the highest offset copied to the remote tier, -1 when nothing was. */
  highestRemoteOffset(log: LocalLog): bigint {
    if (this.answersLocally(log)) return -1n;
    return this.ctx.metadata.highestRemoteOffset(topicIdPartitionOf(log)) ?? -1n;
  }

  /**
   * The first offset the remote tier holds (part of ListOffsets -2, the log start
   * offset), or null when it holds nothing. The partition's log start offset is
   * the smaller of this and the local log's.
   */
  logStartOffset(log: LocalLog): bigint | null {
    if (this.answersLocally(log)) return null;
    const tp = topicIdPartitionOf(log);
    const earliest = this.ctx.metadata.earliestRemoteOffset(tp);
    if (earliest === undefined) return null;
    const floor = this.partitions.get(topicIdPartitionKey(tp))?.logStartFloor;
    if (floor === undefined || floor <= earliest) return earliest;
    const highest = this.ctx.metadata.highestRemoteOffset(tp) ?? -1n;
    return floor <= highest ? floor : null;
  }

  /**
   * DeleteRecords on a tiered partition: remote segments wholly below `offset` are
   * expired on the partition's next run (and no longer served from now on), the
   * local log moves its start too. Returns the partition's new log start offset.
   */
  async deleteRecordsBefore(log: LocalLog, offset: bigint): Promise<bigint> {
    if (isMetadataTopic(log)) return log.deleteRecordsBefore(offset);
    const state = this.stateOf(log);
    if (offset > log.highWatermark) {
      throw new KafkaError(ErrorCode.OFFSET_OUT_OF_RANGE, `cannot delete records before ${offset}: above the high watermark ${log.highWatermark}`);
    }
    if (state.logStartFloor === undefined || offset > state.logStartFloor) state.logStartFloor = offset;
    const local = offset > log.logStartOffset ? await log.deleteRecordsBefore(offset) : log.logStartOffset;
    const remote = this.logStartOffset(log);
    return remote !== null && remote < local ? remote : local;
  }

  /**
   * The tiering veto on local retention: a segment of a tiered partition may go
   * only once it is wholly remote (nothing is lost while the store is down).
   * Untiered partitions, and tiered ones with remote.log.copy.disable, are not vetoed.
   */
  canDeleteLocalSegment(log: LocalLog, segment: Pick<LocalSegment, 'nextOffset'>): boolean {
    const config = tieringConfig(log);
    if (config.remoteStorageEnable !== true || config.remoteLogCopyDisable === true) return true;
    const tp = topicIdPartitionOf(log);
    if (!this.ctx.metadata.isReady(tp)) return false;
    const highest = this.ctx.metadata.highestRemoteOffset(tp);
    return highest !== undefined && segment.nextOffset - 1n <= highest;
  }

  // ---- observability ----

  partitionStats(log: LocalLog): RemotePartitionStats | undefined {
    const state = this.partitions.get(topicIdPartitionKey(topicIdPartitionOf(log)));
    if (state === undefined || !this.ctx.metadata.isReady(state.tp)) return undefined;
    const tp = state.tp;
    const highest = this.ctx.metadata.highestRemoteOffset(tp) ?? -1n;
    const pending = copyCandidates(this.ctx, state);
    const segments = this.ctx.metadata.listRemoteLogSegments(tp);
    const deleting = [...segments.filter((s) => s.state === 'DELETE_SEGMENT_STARTED'), ...expirationCandidates(this.ctx, state).map((c) => c.segment)];
    return {
      ...state.counters,
      highestRemoteOffset: highest,
      remoteLogStartOffset: this.logStartOffset(log),
      remoteLogSizeBytes: this.ctx.metadata.remoteLogSizeBytes(tp),
      remoteSegmentCount: segments.filter((s) => s.state === 'COPY_SEGMENT_FINISHED').length,
      copyLagSegments: pending.length,
      copyLagBytes: pending.reduce((n, s) => n + s.size, 0),
      onlyLocalBytes: onlyLocalLogSegmentsSize(state, highest),
      deleteLagSegments: deleting.length,
      deleteLagBytes: deleting.reduce((n, s) => n + s.segmentSizeInBytes, 0),
    };
  }

  cacheStats(): { readonly chunks: ChunkCacheStats; readonly indexes: IndexCacheStats } {
    return { chunks: this.ctx.chunkCache.stats(), indexes: this.ctx.indexCache.stats() };
  }

  /** The partition's remote segments in offset order (every state but DELETE_SEGMENT_FINISHED); empty until its metadata is loaded. */
  remoteSegments(log: LocalLog): readonly RemoteLogSegmentMetadata[] {
    const tp = topicIdPartitionOf(log);
    return this.ctx.metadata.isReady(tp) ? this.ctx.metadata.listRemoteLogSegments(tp) : [];
  }

  /** Remote reads in flight now (the reader queue depth). */
  readerStats(): { readonly inFlight: number } {
    return { inFlight: this.readsInFlight };
  }

  /** The last run's first failure for a partition (undefined after a clean run). */
  lastError(log: LocalLog): unknown {
    return this.partitions.get(topicIdPartitionKey(topicIdPartitionOf(log)))?.lastError;
  }

  /**
   * Whether the partition's log start and highest remote offset are its local
   * log's, without asking the remote log metadata: always for the metadata
   * topic itself (never tiered; if its Fetch waited for its own replay, brokers
   * replaying each other's metadata partitions would wait for each other
   * forever), and for an untiered partition until its metadata is loaded (an
   * internal topic must not wait for the metadata topic to be served).
   */
  private answersLocally(log: LocalLog): boolean {
    if (isMetadataTopic(log)) return true;
    return tieringConfig(log).remoteStorageEnable !== true && !this.ctx.metadata.isReady(topicIdPartitionOf(log));
  }

  private stateOf(log: LocalLog): PartitionState {
    const state = this.partitions.get(topicIdPartitionKey(topicIdPartitionOf(log)));
    if (state === undefined || state.removed) {
      throw new KafkaError(ErrorCode.NOT_LEADER_OR_FOLLOWER, `${log.topic}-${log.partition} is not tiered by this broker`);
    }
    if (this.ctx.metadata.isReady(state.tp)) this.loadEpochs(state);
    return state;
  }

  /** Once the metadata is replayed: the epochs of the segments already remote. */
  private loadEpochs(state: PartitionState): void {
    if (state.epochsLoaded) return;
    state.epochsLoaded = true;
    for (const s of this.ctx.metadata.listRemoteLogSegments(state.tp)) {
      if (s.state === 'COPY_SEGMENT_FINISHED') state.epochs.add(s.segmentLeaderEpochs);
    }
  }
}

function isMetadataTopic(log: LocalLog): boolean {
  return log.topic === REMOTE_LOG_METADATA_TOPIC;
}
