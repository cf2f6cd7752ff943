// A follower's fetcher (Kafka's ReplicaFetcherThread): one per (leader broker,
// fetcher index), fetching every partition this broker follows on that leader
// with one Fetch at a time over one broker-to-broker connection. The request
// names this broker in ReplicaState (v15+: replica id and broker epoch), the
// follower's log end as fetch offset and its latest epoch as LastFetchedEpoch.
// An answer's batches are appended verbatim (PartitionLog.appendAsFollower);
// a diverging epoch truncates the log first (follower-truncation.ts); the
// follower's high watermark is min(leader's HW, own LEO). A failed connection
// or request backs off replica.fetch.backoff.ms; a partition answered with an
// error backs off alone and waits for the image to move it (a new leader).
// Follower replication throttle (replication-quota.ts): while the quota is
// exceeded, throttled partitions this broker is not in the ISR of are left out
// of the fetch; bytes appended for throttled partitions count toward it.
// Tiered partitions: a fetch answered OFFSET_MOVED_TO_TIERED_STORAGE builds the
// follower's state from the remote tier (tier-state.ts); with
// follower.fetch.last.tiered.offset.enable (KIP-1023, last-tiered-offset.ts) an
// empty follower starts at the leader's earliest offset not yet uploaded.
import type { Logger } from 'pino';
import type { Clock } from '../common/clock.js';
import type { Scheduler, TimerHandle } from '../common/scheduler.js';
import { ErrorCode, KafkaError, errorName } from '../protocol/errors.js';
import type { FetchRequest, FetchRequestFetchTopic, FetchResponse, FetchResponsePartitionData } from '../protocol/messages/fetch.js';
import { recordsBuffer } from '../protocol/record-parts.js';
import type { PartitionLog } from '../log/partition-log.js';
import { truncationOffset } from './follower-truncation.js';
import { buildRemoteLogAuxState, type LeaderLocalStart, type ReplicaRemoteTier } from './tier-state.js';
import { lastTieredStart, shouldFetchFromLastTieredOffset } from './last-tiered-offset.js';
import type { ReplicationQuota } from './replication-quota.js';

export interface ReplicaFetchConfig {
  /** replica.fetch.max.bytes */
  readonly fetchMaxBytes: number;
  /** replica.fetch.response.max.bytes */
  readonly responseMaxBytes: number;
  /** replica.fetch.wait.max.ms */
  readonly waitMaxMs: number;
  /** replica.fetch.min.bytes */
  readonly minBytes: number;
  /** replica.fetch.backoff.ms */
  readonly backoffMs: number;
}

/** The Fetch round trip, over whatever connection the fetcher was given. */
export interface FetchConnection {
  fetch(build: (version: number) => FetchRequest): Promise<FetchResponse>;
  /** ListOffsets -4 at the leader: its local log start (for OFFSET_MOVED_TO_TIERED_STORAGE); absent, the follower only backs off. */
  earliestLocalOffset?(topic: string, partition: number, currentLeaderEpoch: number): Promise<LeaderLocalStart>;
  /** ListOffsets at the leader for a special timestamp (-1 latest, -6 earliest pending upload); absent, KIP-1023 is not used. */
  listOffset?(topic: string, partition: number, currentLeaderEpoch: number, timestamp: bigint): Promise<LeaderLocalStart>;
  close(): void;
}

export interface FollowedPartition {
  readonly topic: string;
  readonly topicId: string;
  readonly partition: number;
  readonly log: PartitionLog;
  /** The leader epoch this broker follows at (the image's). */
  leaderEpoch: number;
}

export type FetcherEvent =
  | { readonly type: 'fetched'; readonly partition: FollowedPartition; readonly leaderHighWatermark: bigint; readonly appendedBytes: number; readonly highWatermarkMoved: boolean }
  | { readonly type: 'truncated'; readonly partition: FollowedPartition; readonly from: bigint; readonly to: bigint }
  | { readonly type: 'partition-error'; readonly partition: FollowedPartition; readonly errorCode: number };

export interface ReplicaFetcherOptions {
  readonly nodeId: number;
  readonly brokerEpoch: () => bigint;
  readonly leaderId: number;
  readonly fetcherId: number;
  readonly connect: () => Promise<FetchConnection>;
  readonly config: ReplicaFetchConfig;
  readonly clock: Clock;
  readonly scheduler: Scheduler;
  readonly log: Logger;
  readonly onEvent?: (e: FetcherEvent) => void;
  /** The remote tier, to build a follower's state from when its offset moved to tiered storage (null: none). */
  readonly remoteTier?: () => ReplicaRemoteTier | null;
  /** The follower-side replication throttle; absent: none. */
  readonly quota?: Pick<ReplicationQuota, 'isThrottled' | 'isQuotaExceeded' | 'record'>;
  /** Whether this broker is in the partition's ISR (the image's): in-sync replicas are never throttled. */
  readonly inSync?: (topic: string, partition: number) => boolean;
  /**
   * follower.fetch.last.tiered.offset.enable (KIP-1023), a dynamic config:
   * read when a partition is added and again when its start is decided, as
   * Kafka reads it in shouldFetchFromLastTieredOffset; absent: false.
   */
  readonly fetchFromLastTieredOffset?: () => boolean;
}

const LATEST_TIMESTAMP = -1n;
const EARLIEST_PENDING_UPLOAD_TIMESTAMP = -6n;

const key = (topicId: string, partition: number): string => `${topicId}:${partition}`;

export class ReplicaFetcher {
  private readonly partitions = new Map<string, FollowedPartition>();
  private readonly delayedUntil = new Map<string, number>();
  /** Per partition, the leader epoch and error of its last failed fetch (logged at info when it changes). */
  private readonly lastError = new Map<string, string>();
  /** Partitions added with an empty log whose start (KIP-1023) is not decided yet. */
  private readonly unplaced = new Set<string>();
  private conn: FetchConnection | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;
  private wakeUp: (() => void) | null = null;

  constructor(private readonly o: ReplicaFetcherOptions) {}

  get size(): number {
    return this.partitions.size;
  }

  has(topicId: string, partition: number): boolean {
    return this.partitions.has(key(topicId, partition));
  }

  add(p: FollowedPartition): void {
    const k = key(p.topicId, p.partition);
    const had = this.partitions.get(k);
    if (had !== undefined) {
      had.leaderEpoch = p.leaderEpoch;
    } else {
      this.partitions.set(k, p);
      if (this.lastTieredOffsetEnabled() && p.log.logEndOffset === 0n) this.unplaced.add(k);
    }
    this.delayedUntil.delete(k);
    this.ensureRunning();
    this.wake();
  }

  private ensureRunning(): void {
    if (this.running !== null || this.stopped) return;
    this.running = this.loop().finally(() => {
      this.running = null;
      // Nothing left to fetch (or stopped): the connection goes with the loop.
      this.conn?.close();
      this.conn = null;
      // A partition added after the loop saw none left, before this ran, still gets fetched.
      if (!this.stopped && this.partitions.size > 0) this.ensureRunning();
    });
  }

  remove(topicId: string, partition: number): void {
    const k = key(topicId, partition);
    this.partitions.delete(k);
    this.delayedUntil.delete(k);
    this.unplaced.delete(k);
    this.lastError.delete(k);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake();
    this.conn?.close();
    this.conn = null;
    await this.running;
  }

  private wake(): void {
    const w = this.wakeUp;
    this.wakeUp = null;
    w?.();
  }

  /** Resolves after `ms`, or at once on add/stop. */
  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      let timer: TimerHandle | null = null;
      this.wakeUp = () => {
        if (timer !== null) this.o.scheduler.clearTimeout(timer);
        resolve();
      };
      timer = this.o.scheduler.setTimeout(() => {
        this.wakeUp = null;
        resolve();
      }, ms);
    });
  }

  private async loop(): Promise<void> {
    while (!this.stopped && this.partitions.size > 0) {
      const now = this.o.clock.now();
      const due = [...this.partitions.entries()].filter(([k]) => (this.delayedUntil.get(k) ?? 0) <= now).map(([, p]) => p);
      const ready = due.filter((p) => !this.heldBack(p));
      if (ready.length === 0) {
        // All held back by the throttle: ask again after the backoff (Kafka's empty fetch request).
        const next = due.length > 0 ? now + this.o.config.backoffMs : Math.min(...[...this.delayedUntil.values()]);
        await this.pause(Math.max(1, next - now));
        continue;
      }
      try {
        const conn = (this.conn ??= await this.o.connect());
        const placed: FollowedPartition[] = [];
        for (const p of ready) if (await this.placeEmptyFollower(p, conn)) placed.push(p);
        if (this.stopped) return;
        if (placed.length === 0) continue;
        const sent = placed.map((p) => ({ p, epoch: p.leaderEpoch, fetchOffset: p.log.logEndOffset }));
        const res = await this.conn.fetch((version) => this.request(version, sent));
        if (this.stopped) return;
        if (res.errorCode !== ErrorCode.NONE) throw new KafkaError(res.errorCode, `fetch from leader ${this.o.leaderId} failed: ${errorName(res.errorCode)}`);
        for (const t of res.responses) {
          for (const d of t.partitions) {
            const s = sent.find((x) => x.p.topicId === t.topicId && x.p.partition === d.partitionIndex) ?? sent.find((x) => x.p.topic === t.topic && x.p.partition === d.partitionIndex);
            // Removed, or moved to another leader epoch, while the fetch was out: its answer is stale.
            if (s === undefined || this.partitions.get(key(s.p.topicId, s.p.partition)) !== s.p || s.p.leaderEpoch !== s.epoch) continue;
            if (s.p.log.logEndOffset !== s.fetchOffset) continue;
            await this.handle(s.p, d);
          }
        }
      } catch (err) {
        if (this.stopped) return;
        this.o.log.warn({ leader: this.o.leaderId, fetcherId: this.o.fetcherId, err: err instanceof Error ? err.message : String(err) }, 'replica fetch failed; backing off');
        this.conn?.close();
        this.conn = null;
        await this.pause(this.o.config.backoffMs);
      }
    }
  }

  /** Kafka's shouldFollowerThrottle: a throttled partition this broker is out of sync for, while the quota is exceeded. */
  private heldBack(p: FollowedPartition): boolean {
    const q = this.o.quota;
    return q !== undefined && q.isThrottled(p.topic, p.partition) && !(this.o.inSync?.(p.topic, p.partition) ?? false) && q.isQuotaExceeded();
  }

  private request(version: number, sent: readonly { p: FollowedPartition; epoch: number; fetchOffset: bigint }[]): FetchRequest {
    const topics = new Map<string, FetchRequestFetchTopic>();
    for (const { p, epoch, fetchOffset } of sent) {
      let t = topics.get(p.topicId);
      if (t === undefined) topics.set(p.topicId, (t = { topic: p.topic, topicId: p.topicId, partitions: [] }));
      t.partitions.push({
        partition: p.partition,
        currentLeaderEpoch: epoch,
        fetchOffset,
        lastFetchedEpoch: p.log.latestEpoch() ?? -1,
        logStartOffset: p.log.logStartOffset,
        partitionMaxBytes: this.o.config.fetchMaxBytes,
        ...(version >= 18 ? { highWatermark: p.log.highWatermark } : {}),
      });
    }
    return {
      replicaId: version <= 14 ? this.o.nodeId : -1,
      ...(version >= 15 ? { replicaState: { replicaId: this.o.nodeId, replicaEpoch: this.o.brokerEpoch() } } : {}),
      maxWaitMs: this.o.config.waitMaxMs,
      minBytes: this.o.config.minBytes,
      maxBytes: this.o.config.responseMaxBytes,
      isolationLevel: 0,
      sessionId: 0,
      sessionEpoch: -1,
      topics: [...topics.values()],
      forgottenTopicsData: [],
      rackId: '',
    };
  }

  private async handle(p: FollowedPartition, d: FetchResponsePartitionData): Promise<void> {
    const k = key(p.topicId, p.partition);
    const log = p.log;
    if (d.errorCode === ErrorCode.NONE) {
      const div = d.divergingEpoch;
      if (div !== undefined && (div.epoch >= 0 || div.endOffset >= 0n)) {
        const from = log.logEndOffset;
        const decision = truncationOffset(div, (e) => log.endOffsetForEpoch(e), from, log.highWatermark);
        const to = await log.truncateTo(decision.offset);
        this.o.log.info({ topic: p.topic, partition: p.partition, from: String(from), to: String(to), divergingEpoch: div.epoch, leaderEndOffset: String(div.endOffset) }, 'follower log diverged from the leader: truncated');
        this.o.onEvent?.({ type: 'truncated', partition: p, from, to });
        return;
      }
      const records = d.records === null ? null : recordsBuffer(d.records);
      const before = log.logEndOffset;
      if (records !== null && records.length > 0) {
        await log.appendAsFollower(records);
        if (this.o.quota?.isThrottled(p.topic, p.partition) === true) this.o.quota.record(records.length);
      }
      const leo = log.logEndOffset;
      const hwBefore = log.highWatermark;
      log.setHighWatermark(d.highWatermark < leo ? d.highWatermark : leo);
      // Kafka's follower maybeIncrementLogStartOffset: the leader's log start
      // (moved by DeleteRecords or retention) becomes ours, at most up to our
      // HW (the rest on a later fetch); segments wholly below it are deleted.
      const leaderStart = d.logStartOffset < log.highWatermark ? d.logStartOffset : log.highWatermark;
      if (leaderStart > log.logStartOffset) await log.deleteRecordsBefore(leaderStart);
      this.o.onEvent?.({ type: 'fetched', partition: p, leaderHighWatermark: d.highWatermark, appendedBytes: leo > before ? (records?.length ?? 0) : 0, highWatermarkMoved: log.highWatermark !== hwBefore });
      return;
    }
    if (d.errorCode === ErrorCode.OFFSET_OUT_OF_RANGE && d.logStartOffset > log.logEndOffset) {
      // Kafka's fetchOffsetAndTruncate: the leader's log starts past ours; start over there.
      this.o.log.warn({ topic: p.topic, partition: p.partition, logEndOffset: String(log.logEndOffset), leaderLogStartOffset: String(d.logStartOffset) }, 'follower is below the leader\'s log start: emptying the log to start there');
      await log.truncateFullyAndStartAt(d.logStartOffset);
      return;
    }
    const tier = this.o.remoteTier?.() ?? null;
    const conn = this.conn;
    if (d.errorCode === ErrorCode.OFFSET_MOVED_TO_TIERED_STORAGE && tier !== null && conn?.earliestLocalOffset !== undefined) {
      try {
        const local = await conn.earliestLocalOffset(p.topic, p.partition, p.leaderEpoch);
        // KIP-1023: an empty follower goes on to the leader's earliest pending upload offset when that is further.
        const pending = this.lastTieredOffsetApplies(p, d.highWatermark, tier) ? await this.pendingUploadOffset(p, conn) : null;
        const leader = (pending === null ? null : lastTieredStart(log.logEndOffset, pending, local)) ?? local;
        const from = log.logEndOffset;
        const to = await buildRemoteLogAuxState(log, leader, tier);
        this.o.log.info({ topic: p.topic, partition: p.partition, from: String(from), to: String(to), leaderLocalLogStartOffset: String(leader.offset) }, 'follower below the leader\'s local log start: built its state from the remote tier');
        this.o.onEvent?.({ type: 'truncated', partition: p, from, to });
        return;
      } catch (err) {
        this.o.log.warn({ topic: p.topic, partition: p.partition, err: err instanceof Error ? err.message : String(err) }, 'could not build the follower state from the remote tier yet; backing off');
      }
    }
    this.o.onEvent?.({ type: 'partition-error', partition: p, errorCode: d.errorCode });
    // Once per error and leader epoch at info (a follower kept out of the ISR says why), repeats at debug.
    const note = `${p.leaderEpoch}:${d.errorCode}`;
    const level = this.lastError.get(k) === note ? 'debug' : 'info';
    this.lastError.set(k, note);
    this.o.log[level]({ topic: p.topic, partition: p.partition, leader: this.o.leaderId, leaderEpoch: p.leaderEpoch, fetchOffset: String(log.logEndOffset), error: errorName(d.errorCode) }, 'replica fetch of a partition failed; backing off');
    this.delayedUntil.set(k, this.o.clock.now() + this.o.config.backoffMs);
  }

  private lastTieredOffsetEnabled(): boolean {
    return this.o.fetchFromLastTieredOffset?.() === true;
  }

  /** Kafka's shouldFetchFromLastTieredOffset over this partition's state. */
  private lastTieredOffsetApplies(p: FollowedPartition, leaderEndOffset: bigint, tier: ReplicaRemoteTier | null): boolean {
    const config = p.log.currentConfig;
    return shouldFetchFromLastTieredOffset({
      enabled: this.lastTieredOffsetEnabled(),
      remoteStorageEnabled: tier !== null && config.remoteStorageEnable === true,
      compacted: config.cleanupPolicy?.compact === true,
      replicaEndOffset: p.log.logEndOffset,
      leaderEndOffset,
    });
  }

  /** ListOffsets -6 at the leader; null when the connection cannot ask it. */
  private async pendingUploadOffset(p: FollowedPartition, conn: FetchConnection): Promise<LeaderLocalStart | null> {
    if (conn.listOffset === undefined) return null;
    return conn.listOffset(p.topic, p.partition, p.leaderEpoch, EARLIEST_PENDING_UPLOAD_TIMESTAMP);
  }

  /**
   * KIP-1023, before an empty follower's first fetch: when it applies, starts
   * the log at the leader's earliest pending upload offset from the remote
   * tier. True: fetch the partition now; false: it backs off (the remote
   * state could not be built yet, e.g. this broker's remote log metadata is
   * behind) and is placed again on its next turn.
   */
  private async placeEmptyFollower(p: FollowedPartition, conn: FetchConnection): Promise<boolean> {
    const k = key(p.topicId, p.partition);
    if (!this.unplaced.has(k)) return true;
    const tier = this.o.remoteTier?.() ?? null;
    const log = p.log;
    try {
      // The leader's end offset is asked only when the rest holds (-1 here stands for "not asked yet", not 0).
      if (conn.listOffset === undefined || tier === null || !this.lastTieredOffsetApplies(p, -1n, tier)) {
        this.unplaced.delete(k);
        return true;
      }
      const leaderEnd = await conn.listOffset(p.topic, p.partition, p.leaderEpoch, LATEST_TIMESTAMP);
      const pending = this.lastTieredOffsetApplies(p, leaderEnd.offset, tier) ? await this.pendingUploadOffset(p, conn) : null;
      const start = pending === null ? null : lastTieredStart(log.logEndOffset, pending, null);
      if (start === null) {
        this.unplaced.delete(k);
        return true;
      }
      const from = log.logEndOffset;
      const to = await buildRemoteLogAuxState(log, start, tier);
      this.unplaced.delete(k);
      this.o.log.info({ topic: p.topic, partition: p.partition, from: String(from), to: String(to), leaderPendingUploadOffset: String(start.offset) }, 'empty follower starts at the leader\'s last tiered offset (KIP-1023): built its state from the remote tier');
      this.o.onEvent?.({ type: 'truncated', partition: p, from, to });
      return true;
    } catch (err) {
      // The connection failed: the loop drops it and backs off; the partition is placed on its next turn.
      if (!(err instanceof KafkaError)) throw err;
      // Not retriable (the leader's answer): fetch from the log end as without KIP-1023.
      if (!err.retriable) this.unplaced.delete(k);
      this.o.log.warn({ topic: p.topic, partition: p.partition, err: err instanceof Error ? err.message : String(err) }, 'could not start the empty follower at the leader\'s last tiered offset yet; backing off');
      this.delayedUntil.set(k, this.o.clock.now() + this.o.config.backoffMs);
      return false;
    }
  }
}
