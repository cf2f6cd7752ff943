// The incremental fetch session cache (KIP-227), after Kafka's FetchSession and
// FetchSessionCacheShard. A session remembers, per partition, what the client
// last asked for (fetch offset, byte limit, epochs) and what it was last told
// (high watermark, last stable offset, log start offset), so that an
// incremental fetch names only the partitions whose request changed and its
// response carries only the partitions with something new.
//
// Slots: at most `maxSlots` sessions (max.incremental.fetch.session.cache.slots).
// With the cache full, a new session may evict (Kafka's rules without the
// follower "privileged" class, since Sediment serves consumer fetches only):
//   1. the least recently used session, if unused for more than evictionMs;
//   2. otherwise the smallest session (fewest partitions, then lowest id) among
//      those created more than evictionMs ago, if the new session has strictly
//      more partitions.
// Kafka decides rule 2's "created long ago" when a session is last touched;
// here it is decided at eviction time (the same rule, evaluated later).
//
// Pure data structure: time comes from the injected clock, ids from the
// injected random source; no I/O, no timers.
import type { Clock } from '../common/clock.js';
import type { FetchRequestFetchPartition } from '../protocol/messages/fetch.js';

/** SessionId 0: no session. */
export const INVALID_SESSION_ID = 0;
/** Epoch 0: a full fetch that asks for a new session. */
export const INITIAL_EPOCH = 0;
/** Epoch -1: a full fetch without a session (closing the one named, if any). */
export const FINAL_EPOCH = -1;
/** Kafka's KafkaBroker.MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS. */
export const DEFAULT_EVICTION_MS = 120_000;
const INT32_MAX = 2_147_483_647;

/** The epoch the next request of a session must carry (Kafka's FetchMetadata.nextEpoch). */
export function nextEpoch(epoch: number): number {
  if (epoch < 0) return FINAL_EPOCH;
  if (epoch === INT32_MAX) return 1;
  return epoch + 1;
}

/** What a session's client was last told about a partition; -1 when never. */
export interface AnsweredState {
  highWatermark: bigint;
  lastStableOffset: bigint;
  logStartOffset: bigint;
}

export interface CachedPartition {
  /** The topic name (empty when only the id is known). */
  readonly topic: string;
  /** The topic id (the zero uuid before fetch v13). */
  readonly topicId: string;
  readonly partition: number;
  /** The request parameters last sent for the partition; incremental fetches reuse them. */
  request: FetchRequestFetchPartition;
  answered: AnsweredState;
}

/** The key of a partition within a session: the topic id from fetch v13, the name before. */
export function partitionKey(usesTopicIds: boolean, topic: string, topicId: string, partition: number): string {
  return `${usesTopicIds ? topicId : topic}\u0000${partition}`;
}

export const NEVER_ANSWERED: Readonly<AnsweredState> = Object.freeze({ highWatermark: -1n, lastStableOffset: -1n, logStartOffset: -1n });

export class FetchSession {
  /** Partitions in fetch order (Map insertion order); a partition that returned data moves to the end. */
  readonly partitions = new Map<string, CachedPartition>();
  lastUsedMs: number;
  /** The epoch the next incremental request must carry. */
  epoch = nextEpoch(INITIAL_EPOCH);

  constructor(
    readonly id: number,
    readonly usesTopicIds: boolean,
    readonly creationMs: number,
  ) {
    this.lastUsedMs = creationMs;
  }

  get size(): number {
    return this.partitions.size;
  }

  keyOf(topic: string, topicId: string, partition: number): string {
    return partitionKey(this.usesTopicIds, topic, topicId, partition);
  }

  /** Adds or updates the partitions an incremental request names, then drops the forgotten ones. */
  update(
    named: readonly { topic: string; topicId: string; request: FetchRequestFetchPartition }[],
    forgotten: readonly { topic: string; topicId: string; partition: number }[],
  ): { added: number; updated: number; removed: number } {
    let added = 0;
    let updated = 0;
    let removed = 0;
    for (const n of named) {
      const key = this.keyOf(n.topic, n.topicId, n.request.partition);
      const cached = this.partitions.get(key);
      if (cached === undefined) {
        this.partitions.set(key, { topic: n.topic, topicId: n.topicId, partition: n.request.partition, request: n.request, answered: { ...NEVER_ANSWERED } });
        added++;
      } else {
        cached.request = n.request;
        updated++;
      }
    }
    for (const f of forgotten) {
      if (this.partitions.delete(this.keyOf(f.topic, f.topicId, f.partition))) removed++;
    }
    return { added, updated, removed };
  }

  /** Kafka's fairness rule: a partition that returned records is fetched last next time. */
  moveToEnd(key: string): void {
    const cached = this.partitions.get(key);
    if (cached === undefined) return;
    this.partitions.delete(key);
    this.partitions.set(key, cached);
  }
}

export interface FetchSessionCacheOptions {
  /** max.incremental.fetch.session.cache.slots; 0 creates no session at all. */
  readonly maxSlots: number;
  readonly clock: Clock;
  readonly evictionMs?: number;
  /** A float in [0, 1), for session ids; Math.random by default. */
  readonly random?: () => number;
}

export class FetchSessionCache {
  /** Sessions by id, in least-recently-used-first order (a touch re-inserts). */
  private readonly sessions = new Map<number, FetchSession>();
  private evictionCount = 0;
  private incrementalCount = 0;
  readonly maxSlots: number;
  readonly evictionMs: number;
  private readonly clock: Clock;
  private readonly random: () => number;

  constructor(options: FetchSessionCacheOptions) {
    this.maxSlots = options.maxSlots;
    this.evictionMs = options.evictionMs ?? DEFAULT_EVICTION_MS;
    this.clock = options.clock;
    this.random = options.random ?? Math.random;
  }

  get size(): number {
    return this.sessions.size;
  }

  /** Partitions held by all sessions (Kafka's NumIncrementalFetchPartitionsCached). */
  get totalPartitions(): number {
    let n = 0;
    for (const s of this.sessions.values()) n += s.size;
    return n;
  }

  /** Sessions evicted to make room for new ones since the start. */
  get evictions(): number {
    return this.evictionCount;
  }

  /** Incremental fetches served in a session since the start (each touches its session once). */
  get incrementalFetches(): number {
    return this.incrementalCount;
  }

  get(id: number): FetchSession | undefined {
    return this.sessions.get(id);
  }

  remove(id: number): boolean {
    return this.sessions.delete(id);
  }

  /** An incremental fetch uses the session now: it becomes the most recently used. */
  touch(session: FetchSession): void {
    if (!this.sessions.has(session.id)) return;
    this.incrementalCount++;
    session.lastUsedMs = this.clock.now();
    this.sessions.delete(session.id);
    this.sessions.set(session.id, session);
  }

  /**
   * A new session holding `partitions` (in fetch order), or undefined when
   * there is no slot and nothing may be evicted for one of this size.
   */
  maybeCreate(usesTopicIds: boolean, partitions: readonly CachedPartition[]): FetchSession | undefined {
    if (this.maxSlots <= 0) return undefined;
    const now = this.clock.now();
    if (this.sessions.size >= this.maxSlots && !this.tryEvict(partitions.length, now)) return undefined;
    const session = new FetchSession(this.newSessionId(), usesTopicIds, now);
    for (const p of partitions) session.partitions.set(session.keyOf(p.topic, p.topicId, p.partition), p);
    this.sessions.set(session.id, session);
    return session;
  }

  private tryEvict(newSize: number, now: number): boolean {
    let victim: FetchSession | undefined;
    const lru = this.sessions.values().next();
    if (!lru.done && now - lru.value.lastUsedMs > this.evictionMs) {
      victim = lru.value;
    } else {
      for (const s of this.sessions.values()) {
        if (now - s.creationMs <= this.evictionMs) continue;
        if (victim === undefined || s.size < victim.size || (s.size === victim.size && s.id < victim.id)) victim = s;
      }
      if (victim !== undefined && newSize <= victim.size) victim = undefined;
    }
    if (victim === undefined) return false;
    this.sessions.delete(victim.id);
    this.evictionCount++;
    return true;
  }

  private newSessionId(): number {
    for (;;) {
      // 1..INT32_MAX: positive and never INVALID_SESSION_ID.
      const id = 1 + Math.floor(this.random() * INT32_MAX);
      if (id <= INT32_MAX && !this.sessions.has(id)) return id;
    }
  }
}
