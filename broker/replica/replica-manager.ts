// The replication role of every replicated partition (replicas > 1) this
// broker holds, taken from the cluster image (Kafka's ReplicaManager
// becomeLeaderOrFollower, driven by metadata deltas as in KRaft):
// - leader (the image's leader is this broker): a LeaderState tracks the
//   followers; the high watermark advances to min LEO over the ISR; acks=all
//   produces wait for it; the ISR grows and shrinks by compare-and-swap on the
//   partition state in the store (AlterPartition), a refused change takes the
//   store's state and is decided again;
// - follower: the partition is fetched by the ReplicaFetcher of its leader
//   (one per leader and fetcher index, num.replica.fetchers);
// - offline (no leader): neither.
// A partition with one replica is left as it is (its HW is its log end), and a
// single broker builds none of this. Events (role, HW, ISR changes, follower
// lag, truncation) are published for metrics.
import type { Logger } from 'pino';
import type { MetadataImage } from '../../metadata/cluster/image.js';
import type { PartitionState } from '../../metadata/cluster/records.js';
import type { ClusterMetadataStore } from '../../metadata/cluster/store.js';
import { StalePartitionUpdateError } from '../../metadata/cluster/errors.js';
import type { Clock } from '../common/clock.js';
import type { Scheduler, TimerHandle } from '../common/scheduler.js';
import { ErrorCode } from '../protocol/errors.js';
import type { PartitionLog } from '../log/partition-log.js';
import { LeaderState } from './leader-state.js';
import { ReplicaFetcher, type FetchConnection, type FetcherEvent, type ReplicaFetchConfig } from './replica-fetcher.js';
import type { ReplicationQuota } from './replication-quota.js';
import type { ReplicationEvent } from './replication-events.js';
import type { ReplicaRemoteTier } from './tier-state.js';
import type { ConsumerFetchStanding } from './consumer-fetch.js';
import type { ReplicaView } from './replica-selector.js';

export interface ReplicaManagerConfig {
  readonly fetch: ReplicaFetchConfig;
  /** num.replica.fetchers */
  readonly numReplicaFetchers: number;
  /** replica.lag.time.max.ms */
  readonly replicaLagTimeMaxMs: number;
  /** follower.fetch.last.tiered.offset.enable (KIP-1023), read when a fetcher takes on a partition (dynamic); absent: false. */
  readonly fetchFromLastTieredOffset?: () => boolean;
}

export interface ReplicaManagerOptions {
  readonly nodeId: number;
  readonly brokerEpoch: () => bigint;
  readonly image: MetadataImage;
  readonly store: ClusterMetadataStore;
  /** The local log of a partition, if this broker has one. */
  readonly logOf: (topic: string, partition: number) => PartitionLog | undefined;
  /** min.insync.replicas of a topic. */
  readonly minInsyncReplicas: (topic: string) => number;
  /** Wakes long polls (consumer and replica fetches) of a partition. */
  readonly notify: (topic: string, partition: number) => void;
  /** A connection to a broker for replica fetches. */
  readonly connect: (host: string, port: number, clientId: string) => Promise<FetchConnection>;
  /** The listener name whose endpoint followers connect to. */
  readonly listenerName: string;
  readonly config: ReplicaManagerConfig;
  /** Where a replica's HW starts when this process first sees it (the replication-offset-checkpoint); its log start if undefined. */
  readonly initialHighWatermark?: (log: PartitionLog) => bigint | undefined;
  /** The follower-side replication throttle (replication-quota.ts); absent: none. */
  readonly followerQuota?: ReplicationQuota;
  /** True: take no role until sessionStarted() (a cluster broker leads and follows only while registered). */
  readonly awaitSession?: boolean;
  readonly clock: Clock;
  readonly scheduler: Scheduler;
  readonly log: Logger;
  /** The remote tier, once attached (followers below the leader's local log start build their state from it). */
  readonly remoteTier?: () => ReplicaRemoteTier | null;
}

interface AckWaiter {
  readonly requiredOffset: bigint;
  readonly resolve: (errorCode: number) => void;
}

/** A DeleteRecords answer: NONE with the low watermark reached, or an error (with the low watermark known when it began, -1 when none). */
export interface LowWatermarkResult {
  readonly errorCode: number;
  readonly lowWatermark: bigint;
}

/** A DeleteRecords waiting for the low watermark (Kafka's DelayedDeleteRecords). */
interface LowWatermarkWaiter {
  readonly requiredOffset: bigint;
  readonly resolve: (r: LowWatermarkResult) => void;
}

export type Role =
  | { readonly kind: 'leader'; readonly state: LeaderState }
  | { readonly kind: 'follower'; readonly leaderId: number; readonly leaderEpoch: number }
  | { readonly kind: 'offline'; readonly leaderEpoch: number };

export interface Replica {
  readonly topic: string;
  readonly topicId: string;
  readonly partition: number;
  readonly log: PartitionLog;
  role: Role;
  acks: AckWaiter[];
  deletes: LowWatermarkWaiter[];
}

const key = (topic: string, partition: number): string => `${topic}\u0000${partition}`;

/** Kafka's fetcher index: a stable hash of the partition over num.replica.fetchers. */
export function fetcherIndex(topic: string, partition: number, numFetchers: number): number {
  let h = 0;
  for (let i = 0; i < topic.length; i++) h = (Math.imul(31, h) + topic.charCodeAt(i)) | 0;
  return Math.abs((Math.imul(31, h) + partition) | 0) % Math.max(1, numFetchers);
}

export class ReplicaManager {
  private readonly replicas = new Map<string, Replica>();
  private readonly fetchers = new Map<string, ReplicaFetcher>();
  private readonly listeners: Array<(e: ReplicationEvent) => void> = [];
  private isrTimer: TimerHandle | null = null;
  /** Per led partition and follower out of its ISR, the last reason logged (noteOutOfIsr). */
  private readonly outOfIsr = new Map<string, string>();
  private stopped = false;
  /** False without a live cluster session: no role at all until the next one starts. */
  private live: boolean;

  constructor(private readonly o: ReplicaManagerOptions) {
    this.live = o.awaitSession !== true;
  }

  onEvent(listener: (e: ReplicationEvent) => void): void {
    this.listeners.push(listener);
  }

  private emit(e: ReplicationEvent): void {
    for (const l of this.listeners) l(e);
  }

  start(): void {
    this.scheduleIsrCheck();
    this.reconcile();
  }

  replica(topic: string, partition: number): Replica | undefined {
    return this.replicas.get(key(topic, partition));
  }

  /** Every replicated partition this broker holds, for the console and tests. */
  all(): readonly Replica[] {
    return [...this.replicas.values()];
  }

  /** Brings every partition's role in step with the image (after each image change and topic sync pass). */
  reconcile(): void {
    if (this.stopped || !this.live) return;
    const seen = new Set<string>();
    for (const t of this.o.image.topics()) {
      this.o.image.partitions(t.topicId).forEach((state, partition) => {
        if (state === undefined || state.replicas.length < 2 || !state.replicas.includes(this.o.nodeId)) return;
        const log = this.o.logOf(t.name, partition);
        if (log === undefined || log.topicId !== t.topicId) return;
        const k = key(t.name, partition);
        seen.add(k);
        let r = this.replicas.get(k);
        if (r === undefined || r.log !== log) {
          if (r !== undefined) this.leaveRole(r, ErrorCode.NOT_LEADER_OR_FOLLOWER);
          const initial = this.o.initialHighWatermark?.(log);
          log.enableReplicatedHighWatermark(initial === undefined || initial < log.logStartOffset ? log.logStartOffset : initial);
          r = { topic: t.name, topicId: t.topicId, partition, log, role: { kind: 'offline', leaderEpoch: -1 }, acks: [], deletes: [] };
          this.replicas.set(k, r);
        }
        this.applyState(r, state);
      });
    }
    for (const [k, r] of this.replicas) {
      if (seen.has(k)) continue;
      this.leaveRole(r, ErrorCode.NOT_LEADER_OR_FOLLOWER);
      this.replicas.delete(k);
      // Reassigned down to this broker alone: unreplicated again, its HW is its log end.
      const now = this.o.image.topic(r.topic);
      const state = now?.topicId === r.topicId ? this.o.image.partition(r.topicId, r.partition) : undefined;
      if (state !== undefined && state.replicas.length === 1 && state.replicas[0] === this.o.nodeId) r.log.disableReplicatedHighWatermark();
    }
    // A follower's broker that left the image no longer holds the low watermark back.
    for (const r of this.replicas.values()) this.completeDeletes(r);
  }

  private applyState(r: Replica, state: PartitionState): void {
    const role = r.role;
    if (state.leader === this.o.nodeId) {
      if (role.kind === 'leader' && role.state.leaderEpoch === state.leaderEpoch) {
        if (state.partitionEpoch > role.state.partitionEpoch) {
          role.state.committedIsr(state);
          this.checkMinIsr(r);
          this.maybeAdvanceHighWatermark(r);
        }
        return;
      }
      this.becomeLeader(r, state);
      return;
    }
    if (state.leader >= 0) {
      if (role.kind === 'follower' && role.leaderId === state.leader && role.leaderEpoch === state.leaderEpoch) {
        // Became follower while the leader had no registration in the image (it re-registered since, with the
        // same leadership): start fetching now, or this replica would wait out of the ISR for a leadership change.
        if (!this.fetching(r) && this.startFetching(r, state)) {
          this.o.log.info({ topic: r.topic, partition: r.partition, leader: state.leader, leaderEpoch: state.leaderEpoch }, 'the leader has an endpoint in the cluster metadata now: fetching');
        }
        return;
      }
      this.becomeFollower(r, state);
      return;
    }
    if (role.kind === 'offline' && role.leaderEpoch === state.leaderEpoch) return;
    this.leaveRole(r, ErrorCode.NOT_LEADER_OR_FOLLOWER);
    r.role = { kind: 'offline', leaderEpoch: state.leaderEpoch };
    this.emit({ type: 'role', topic: r.topic, partition: r.partition, role: 'offline', leaderEpoch: state.leaderEpoch });
  }

  private becomeLeader(r: Replica, state: PartitionState): void {
    this.leaveRole(r, ErrorCode.NOT_LEADER_OR_FOLLOWER);
    const now = this.o.clock.now();
    const epochStart = r.log.logEndOffset;
    r.role = {
      kind: 'leader',
      state: new LeaderState(this.o.nodeId, state.leaderEpoch, epochStart, state.replicas, state, now, this.o.config.replicaLagTimeMaxMs),
    };
    // The new epoch starts at the log end even before anything is appended in it (OffsetForLeaderEpoch, divergence checks).
    r.log.assignEpochStartOffset(state.leaderEpoch).catch((err: unknown) => this.o.log.error({ err, topic: r.topic, partition: r.partition }, 'could not record the new leader epoch'));
    this.o.log.info({ topic: r.topic, partition: r.partition, leaderEpoch: state.leaderEpoch, isr: state.isr, logEndOffset: String(epochStart), highWatermark: String(r.log.highWatermark) }, 'became leader');
    this.emit({ type: 'role', topic: r.topic, partition: r.partition, role: 'leader', leaderEpoch: state.leaderEpoch });
    this.maybeAdvanceHighWatermark(r);
  }

  private becomeFollower(r: Replica, state: PartitionState): void {
    this.leaveRole(r, ErrorCode.NOT_LEADER_OR_FOLLOWER);
    r.role = { kind: 'follower', leaderId: state.leader, leaderEpoch: state.leaderEpoch };
    if (!this.startFetching(r, state)) this.o.log.warn({ topic: r.topic, partition: r.partition, leader: state.leader }, 'the leader has no endpoint in the cluster metadata; not fetching until it registers');
    this.o.log.info({ topic: r.topic, partition: r.partition, leader: state.leader, leaderEpoch: state.leaderEpoch, logEndOffset: String(r.log.logEndOffset) }, 'became follower');
    this.emit({ type: 'role', topic: r.topic, partition: r.partition, role: 'follower', leaderEpoch: state.leaderEpoch });
  }

  /** Hands a follower's partition to the fetcher of its leader; false while the leader has no endpoint in the image. */
  private startFetching(r: Replica, state: PartitionState): boolean {
    const fetcher = this.fetcherFor(state.leader, fetcherIndex(r.topic, r.partition, this.o.config.numReplicaFetchers));
    if (fetcher === null) return false;
    fetcher.add({ topic: r.topic, topicId: r.topicId, partition: r.partition, log: r.log, leaderEpoch: state.leaderEpoch });
    return true;
  }

  /** Whether some fetcher has the partition. */
  private fetching(r: Replica): boolean {
    for (const f of this.fetchers.values()) if (f.has(r.topicId, r.partition)) return true;
    return false;
  }

  /** Stops whatever the partition did: fetching, or leading (waiting acks are answered `ackError`). */
  private leaveRole(r: Replica, ackError: number): void {
    for (const f of this.fetchers.values()) f.remove(r.topicId, r.partition);
    const waiting = r.acks;
    r.acks = [];
    for (const a of waiting) a.resolve(ackError);
    const deletes = r.deletes;
    r.deletes = [];
    for (const d of deletes) d.resolve({ errorCode: ackError, lowWatermark: -1n });
  }

  private fetcherFor(leaderId: number, fetcherId: number): ReplicaFetcher | null {
    const b = this.o.image.broker(leaderId);
    const e = b?.endpoints.find((x) => x.name === this.o.listenerName) ?? b?.endpoints[0];
    if (e === undefined) return null;
    const k = `${leaderId}:${fetcherId}:${e.host}:${e.port}`;
    let f = this.fetchers.get(k);
    if (f === undefined) {
      // A leader that re-registered on another endpoint gets a new fetcher; the old one empties.
      f = new ReplicaFetcher({
        nodeId: this.o.nodeId,
        brokerEpoch: this.o.brokerEpoch,
        leaderId,
        fetcherId,
        connect: () => this.o.connect(e.host, e.port, `broker-${this.o.nodeId}-fetcher-${fetcherId}`),
        config: this.o.config.fetch,
        clock: this.o.clock,
        scheduler: this.o.scheduler,
        log: this.o.log.child({ fetcher: `${leaderId}-${fetcherId}` }),
        onEvent: (ev) => this.onFetcherEvent(ev),
        ...(this.o.remoteTier === undefined ? {} : { remoteTier: this.o.remoteTier }),
        ...(this.o.followerQuota === undefined ? {} : { quota: this.o.followerQuota }),
        fetchFromLastTieredOffset: () => this.o.config.fetchFromLastTieredOffset?.() === true,
        inSync: (topic, partition) => {
          const t = this.o.image.topic(topic);
          return t !== undefined && (this.o.image.partition(t.topicId, partition)?.isr.includes(this.o.nodeId) ?? false);
        },
      });
      this.fetchers.set(k, f);
    }
    return f;
  }

  private onFetcherEvent(e: FetcherEvent): void {
    const p = e.partition;
    switch (e.type) {
      case 'fetched':
        this.emit({ type: 'follower-fetched', topic: p.topic, partition: p.partition, logEndOffset: p.log.logEndOffset, highWatermark: p.log.highWatermark, appendedBytes: e.appendedBytes });
        // Consumers fetching from this follower (KIP-392) wait for its HW, as Kafka's fetcher completes delayed fetches.
        if (e.highWatermarkMoved) this.o.notify(p.topic, p.partition);
        return;
      case 'truncated':
        this.emit({ type: 'truncated', topic: p.topic, partition: p.partition, from: e.from, to: e.to });
        return;
      case 'partition-error':
        return;
    }
  }

  // ---- consumer fetches (KIP-392) ----

  /**
   * What this broker is for a consumer fetch of a replicated partition it
   * holds: leader, follower, or neither (offline); undefined when it holds no
   * replicated partition by that name (one replica, or not a replica here).
   */
  consumerStanding(topic: string, partition: number): ConsumerFetchStanding | undefined {
    const r = this.replicas.get(key(topic, partition));
    if (r === undefined) return undefined;
    return r.role.kind === 'offline' ? 'not-replica' : r.role.kind;
  }

  /**
   * The leader's view of every replica of a partition it leads, for the
   * preferred read replica: itself, and each follower with the log start and
   * end offsets of its last fetch, in sync when it is in the committed ISR and
   * registered (Kafka also needs the follower's endpoint). Undefined unless
   * this broker leads the partition.
   */
  replicaViews(topic: string, partition: number): ReplicaView[] | undefined {
    const led = this.leaderState(topic, partition);
    if (led === undefined) return undefined;
    const { replica, state } = led;
    const rackOf = (id: number): string | null => this.o.image.broker(id)?.rack ?? null;
    const views: ReplicaView[] = [{ replicaId: this.o.nodeId, rack: rackOf(this.o.nodeId), logStartOffset: replica.log.logStartOffset, logEndOffset: replica.log.logEndOffset, inSync: true }];
    for (const f of state.allFollowers()) {
      const inSync = state.isr.includes(f.replicaId) && this.o.image.broker(f.replicaId) !== undefined;
      views.push({ replicaId: f.replicaId, rack: rackOf(f.replicaId), logStartOffset: f.logStartOffset, logEndOffset: f.logEndOffset, inSync });
    }
    return views;
  }

  // ---- leader side ----

  /** The leader state of a partition this broker leads, or undefined. */
  leaderState(topic: string, partition: number): { replica: Replica; state: LeaderState } | undefined {
    const r = this.replicas.get(key(topic, partition));
    if (r === undefined || r.role.kind !== 'leader') return undefined;
    return { replica: r, state: r.role.state };
  }

  /**
   * A follower fetched at `fetchOffset`: record it, then grow the ISR or move
   * the HW if that follows. False when `replicaId` is not a replica.
   */
  followerFetched(r: Replica, state: LeaderState, replicaId: number, fetchOffset: bigint, brokerEpoch: bigint, followerLogStartOffset = -1n): boolean {
    const leo = r.log.logEndOffset;
    if (!state.updateFollowerFetch(replicaId, fetchOffset, leo, brokerEpoch, this.o.clock.now(), followerLogStartOffset)) return false;
    this.emit({ type: 'follower-lag', topic: r.topic, partition: r.partition, replicaId, lag: leo > fetchOffset ? leo - fetchOffset : 0n });
    const grown = state.expansion(replicaId, r.log.highWatermark, (id) => this.o.image.broker(id)?.brokerEpoch);
    if (grown !== null) this.alterIsr(r, state, grown, 'expand', [replicaId]);
    this.maybeAdvanceHighWatermark(r);
    // The follower's log start may have moved: the low watermark with it.
    this.completeDeletes(r);
    return true;
  }

  // ---- DeleteRecords (Kafka's DelayedDeleteRecords) ----

  /**
   * Kafka's Partition.lowWatermarkIfLeader: the smallest log start offset over
   * this leader and every follower whose broker is registered (live), as each
   * follower last sent it with its fetch (-1 before its first fetch of this
   * leader term, which holds the low watermark at -1 until it fetches).
   * Undefined unless this broker leads the partition.
   */
  lowWatermark(topic: string, partition: number): bigint | undefined {
    const r = this.replicas.get(key(topic, partition));
    return r === undefined ? undefined : this.lowWatermarkOf(r);
  }

  private lowWatermarkOf(r: Replica): bigint | undefined {
    if (r.role.kind !== 'leader') return undefined;
    let low = r.log.logStartOffset;
    for (const f of r.role.state.allFollowers()) {
      if (this.o.image.broker(f.replicaId) !== undefined && f.logStartOffset < low) low = f.logStartOffset;
    }
    return low;
  }

  /**
   * DeleteRecords after the leader moved its log start to `requiredOffset`:
   * resolves NONE with the low watermark once it reaches the offset (every
   * live follower deleted up to it, learning the leader's log start from its
   * fetches), REQUEST_TIMED_OUT with the low watermark as it was now after
   * `timeoutMs`, NOT_LEADER_OR_FOLLOWER (-1) when leadership moves meanwhile.
   * Null for a partition that is not replicated (its log start is the answer).
   */
  awaitLowWatermark(topic: string, partition: number, requiredOffset: bigint, timeoutMs: number): Promise<LowWatermarkResult> | null {
    const r = this.replicas.get(key(topic, partition));
    if (r === undefined) return null;
    const initial = this.lowWatermarkOf(r);
    if (initial === undefined) return Promise.resolve({ errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, lowWatermark: -1n });
    if (initial >= requiredOffset) return Promise.resolve({ errorCode: ErrorCode.NONE, lowWatermark: initial });
    // Followers long-polling learn the new log start now, not at their next fetch's timeout (leader-fetch.ts answers them).
    this.o.notify(r.topic, r.partition);
    return new Promise((resolve) => {
      const timer = this.o.scheduler.setTimeout(() => {
        r.deletes = r.deletes.filter((d) => d !== waiter);
        resolve({ errorCode: ErrorCode.REQUEST_TIMED_OUT, lowWatermark: initial });
      }, Math.max(0, timeoutMs));
      const waiter: LowWatermarkWaiter = {
        requiredOffset,
        resolve: (result) => {
          this.o.scheduler.clearTimeout(timer);
          resolve(result);
        },
      };
      r.deletes.push(waiter);
    });
  }

  private completeDeletes(r: Replica): void {
    if (r.deletes.length === 0) return;
    const low = this.lowWatermarkOf(r);
    if (low === undefined) return;
    const done = r.deletes.filter((d) => low >= d.requiredOffset);
    if (done.length === 0) return;
    r.deletes = r.deletes.filter((d) => low < d.requiredOffset);
    for (const d of done) d.resolve({ errorCode: ErrorCode.NONE, lowWatermark: low });
  }

  /** After a leader append (produce, marker): with no follower in the ISR the HW moves at once. */
  appended(topic: string, partition: number): void {
    const r = this.replicas.get(key(topic, partition));
    if (r !== undefined) this.maybeAdvanceHighWatermark(r);
  }

  /** acks=all before the append: NOT_ENOUGH_REPLICAS when the ISR is below min.insync.replicas, else NONE. */
  checkEnoughReplicas(topic: string, partition: number): number {
    const l = this.leaderState(topic, partition);
    if (l === undefined) return ErrorCode.NONE;
    return l.state.isr.length < this.o.minInsyncReplicas(topic) ? ErrorCode.NOT_ENOUGH_REPLICAS : ErrorCode.NONE;
  }

  /**
   * acks=all after the append: resolves once the HW reaches `requiredOffset`
   * (NONE, or NOT_ENOUGH_REPLICAS_AFTER_APPEND when the ISR is then below
   * min.insync.replicas), with REQUEST_TIMED_OUT after `timeoutMs`, or
   * NOT_LEADER_OR_FOLLOWER when leadership moves meanwhile. Unreplicated
   * partitions answer NONE at once.
   */
  awaitReplication(topic: string, partition: number, requiredOffset: bigint, timeoutMs: number): Promise<number> {
    const r = this.replicas.get(key(topic, partition));
    if (r === undefined) return Promise.resolve(ErrorCode.NONE);
    if (r.role.kind !== 'leader') return Promise.resolve(ErrorCode.NOT_LEADER_OR_FOLLOWER);
    const done = this.ackResult(r, requiredOffset);
    if (done !== null) return Promise.resolve(done);
    return new Promise((resolve) => {
      const timer = this.o.scheduler.setTimeout(() => {
        r.acks = r.acks.filter((a) => a !== waiter);
        resolve(ErrorCode.REQUEST_TIMED_OUT);
      }, Math.max(0, timeoutMs));
      const waiter: AckWaiter = {
        requiredOffset,
        resolve: (code) => {
          this.o.scheduler.clearTimeout(timer);
          resolve(code);
        },
      };
      r.acks.push(waiter);
    });
  }

  /** Kafka's checkEnoughReplicasReachOffset: null while the HW is below the offset. */
  private ackResult(r: Replica, requiredOffset: bigint): number | null {
    if (r.role.kind !== 'leader') return ErrorCode.NOT_LEADER_OR_FOLLOWER;
    if (r.log.highWatermark < requiredOffset) return null;
    return r.role.state.isr.length < this.o.minInsyncReplicas(r.topic) ? ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND : ErrorCode.NONE;
  }

  private maybeAdvanceHighWatermark(r: Replica): void {
    if (r.role.kind !== 'leader') return;
    const candidate = r.role.state.highWatermarkCandidate(r.log.logEndOffset);
    if (candidate <= r.log.highWatermark) return;
    r.log.setHighWatermark(candidate);
    this.emit({ type: 'high-watermark', topic: r.topic, partition: r.partition, highWatermark: candidate });
    this.completeAcks(r);
    this.o.notify(r.topic, r.partition);
  }

  private completeAcks(r: Replica): void {
    if (r.acks.length === 0) return;
    const keep: AckWaiter[] = [];
    const done: Array<[AckWaiter, number]> = [];
    for (const a of r.acks) {
      const code = this.ackResult(r, a.requiredOffset);
      if (code === null) keep.push(a);
      else done.push([a, code]);
    }
    r.acks = keep;
    for (const [a, code] of done) a.resolve(code);
  }

  /** The ISR fell below min.insync.replicas while acks=all writes waited: they answer now (Kafka completes them on ISR change). */
  private checkMinIsr(r: Replica): void {
    this.completeAcks(r);
  }

  // ---- ISR changes ----

  private scheduleIsrCheck(): void {
    if (this.stopped) return;
    // Kafka's isr-expiration task runs every replica.lag.time.max.ms / 2.
    this.isrTimer = this.o.scheduler.setTimeout(() => {
      this.isrTimer = null;
      this.checkIsrs();
      this.scheduleIsrCheck();
    }, Math.max(1, Math.floor(this.o.config.replicaLagTimeMaxMs / 2)));
  }

  /** Shrinks the ISR of every led partition whose followers fell behind for replica.lag.time.max.ms. */
  checkIsrs(): void {
    const now = this.o.clock.now();
    for (const r of this.replicas.values()) {
      if (r.role.kind !== 'leader') continue;
      const state = r.role.state;
      const shrink = state.shrink(r.log.logEndOffset, now);
      if (shrink !== null) this.alterIsr(r, state, shrink.isr, 'shrink', shrink.removed);
      this.noteOutOfIsr(r, state, now);
    }
  }

  /** Logs, when it changes, why each replica outside a led partition's ISR has not joined it. */
  private noteOutOfIsr(r: Replica, state: LeaderState, now: number): void {
    for (const f of state.allFollowers()) {
      const k = `${key(r.topic, r.partition)}\u0000${f.replicaId}`;
      const reason = state.notJoiningReason(f.replicaId, r.log.highWatermark, this.o.image.broker(f.replicaId)?.brokerEpoch, now);
      const before = this.outOfIsr.get(k);
      if (reason === null) {
        this.outOfIsr.delete(k);
        continue;
      }
      // The time since the last fetch changes every check: compare the reason without it.
      const stable = reason.replace(/; last fetch .*$/, '');
      if (before === stable) continue;
      this.outOfIsr.set(k, stable);
      this.o.log.info({ topic: r.topic, partition: r.partition, replicaId: f.replicaId, isr: state.isr, leaderEpoch: state.leaderEpoch, reason }, 'replica out of the ISR');
    }
  }

  private alterIsr(r: Replica, state: LeaderState, isr: readonly number[], kind: 'expand' | 'shrink', changed: readonly number[]): void {
    const proposal = state.proposed(isr);
    const ref = { topicId: r.topicId, partition: r.partition };
    const expected = { leaderEpoch: state.leaderEpoch, partitionEpoch: state.partitionEpoch };
    this.o.log.info({ topic: r.topic, partition: r.partition, from: state.isr, to: isr, leaderEpoch: state.leaderEpoch, partitionEpoch: state.partitionEpoch }, kind === 'expand' ? 'expanding the ISR' : 'shrinking the ISR');
    this.o.store
      .alterPartition(ref, expected, { replicas: state.replicas, leader: this.o.nodeId, leaderEpoch: state.leaderEpoch, isr })
      .then((next) => {
        if (r.role.kind !== 'leader' || r.role.state !== state) return;
        state.committedIsr(next, proposal);
        this.emit({ type: kind === 'expand' ? 'isr-expand' : 'isr-shrink', topic: r.topic, partition: r.partition, isr: next.isr, changed, partitionEpoch: next.partitionEpoch });
        this.completeAcks(r);
        this.maybeAdvanceHighWatermark(r);
      })
      .catch((err: unknown) => {
        if (r.role.kind !== 'leader' || r.role.state !== state) return;
        if (err instanceof StalePartitionUpdateError && err.current.leader === this.o.nodeId && err.current.leaderEpoch === state.leaderEpoch) {
          // Fenced by a newer partition epoch (the controller changed the ISR): decide again from the store's state.
          state.committedIsr(err.current, proposal);
          this.o.log.info({ topic: r.topic, partition: r.partition, isr: err.current.isr, partitionEpoch: err.current.partitionEpoch }, 'ISR change refused on a stale partition epoch; retrying from the current state');
          this.completeAcks(r);
          return;
        }
        state.proposalFailed(proposal);
        this.o.log.warn({ topic: r.topic, partition: r.partition, err: err instanceof Error ? err.message : String(err) }, 'ISR change failed; retried on the next check');
      });
  }

  /**
   * This broker's session is gone: it leads nothing any more (waiting acks
   * fail), fetches nothing, and takes no role until sessionStarted().
   */
  sessionLost(): void {
    this.live = false;
    for (const r of this.replicas.values()) {
      this.leaveRole(r, ErrorCode.NOT_LEADER_OR_FOLLOWER);
      r.role = { kind: 'offline', leaderEpoch: r.role.kind === 'leader' ? r.role.state.leaderEpoch : r.role.leaderEpoch };
    }
  }

  /**
   * A session (a new registration, a new broker epoch) started: the roles
   * follow the image again. What this broker led before is led anew (a fresh
   * leader state, followers' progress unknown) only where the image still
   * names it; elsewhere it follows the current leader, truncating by
   * DivergingEpoch as any follower does, until the leader adds it to the ISR.
   */
  sessionStarted(): void {
    if (this.stopped) return;
    this.live = true;
    this.reconcile();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.isrTimer !== null) this.o.scheduler.clearTimeout(this.isrTimer);
    for (const r of this.replicas.values()) this.leaveRole(r, ErrorCode.NOT_LEADER_OR_FOLLOWER);
    await Promise.all([...this.fetchers.values()].map((f) => f.stop()));
    this.fetchers.clear();
  }
}
