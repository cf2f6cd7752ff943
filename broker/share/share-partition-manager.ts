// The share-partitions this broker leads (Kafka's SharePartitionManager): one
// SharePartition per (group, topic id, partition), created on the first
// ShareFetch from the persisted state, or else at share.auto.offset.reset
// (latest by default, earliest, or by_duration:<ISO-8601 duration>). It reads
// the log for fetches (local or remote tier, through the same partition view as
// Fetch), turns the batches read into acquisitions, applies acknowledgements,
// runs the acquisition-lock timers, and writes every change of state through
// the persister before an acknowledgement is answered.
import type { Logger } from 'pino';
import type { Clock } from '../common/clock.js';
import type { Scheduler, TimerHandle } from '../common/scheduler.js';
import type { ShareLogView } from './share-ports.js';
import { ErrorCode, KafkaError } from '../protocol/errors.js';
import { BatchScanner, isControl, isTransactional, lastOffset } from '../protocol/record-batch.js';
import { recordsBuffer } from '../protocol/record-parts.js';
import { abortedOffsetRanges, SharePartition, type AcknowledgementBatch, type AcquireMode, type AcquiredRange, type BatchInfo, type PersistedShareState, type SharePartitionConfig } from './share-partition.js';
import { parseIsoDurationMs, type ShareGroupConfigs } from './share-group-configs.js';

/** Where share-partition state is kept (the share coordinator, or memory in tests). */
export interface ShareStatePersister {
  /**
   * null: never initialised. `leaderEpoch`: the share-partition leader's epoch
   * (-1: not given); a coordinator fences later writes of older leaders.
   */
  read(groupId: string, topicId: string, partition: number, leaderEpoch?: number): Promise<PersistedShareState | null>;
  /**
   * The read a share-partition leader loads from: the state and the state
   * epoch it is at (0 when never initialised). The leader keeps the epoch and
   * writes with it, so an InitializeShareGroupState at a higher epoch (an
   * offsets reset) fences its later writes (Kafka's SharePartition.stateEpoch).
   */
  readWithStateEpoch(groupId: string, topicId: string, partition: number, leaderEpoch?: number): Promise<{ state: PersistedShareState | null; stateEpoch: number }>;
  /** `stateEpoch`: the epoch the writer read (-1: not given, never fenced); FENCED_STATE_EPOCH below the stored one. */
  write(groupId: string, topicId: string, partition: number, state: PersistedShareState, leaderEpoch?: number, stateEpoch?: number): Promise<void>;
  delete(groupId: string, topicId: string, partition: number): Promise<void>;
  /**
   * InitializeShareGroupState: a state with no in-flight batches at `startOffset`
   * (-1: resolved by share.auto.offset.reset when the share-partition loads) and
   * `stateEpoch` (the group epoch); FENCED_STATE_EPOCH below the stored one.
   */
  initialize(groupId: string, topicId: string, partition: number, stateEpoch: number, startOffset: bigint): Promise<void>;
  /** The share-partitions that have state for a group. */
  partitionsOf(groupId: string): Promise<{ topicId: string; partition: number }[]>;
}

export class MemoryShareStatePersister implements ShareStatePersister {
  readonly states = new Map<string, PersistedShareState>();
  /** The state epoch of each key, as the share coordinator keeps it (the highest initialised or written). */
  readonly stateEpochs = new Map<string, number>();
  /** Every InitializeShareGroupState, in order. */
  readonly initializations: { groupId: string; topicId: string; partition: number; stateEpoch: number; startOffset: bigint }[] = [];
  /** Initialised at start offset -1: no state to read yet, but the key exists. */
  private readonly uninitialized = new Set<string>();
  private static key(g: string, t: string, p: number): string {
    return `${g}\u0000${t}\u0000${p}`;
  }
  private fence(k: string, stateEpoch: number, what: string): void {
    const stored = this.stateEpochs.get(k);
    if (stateEpoch !== -1 && stored !== undefined && stored > stateEpoch) throw new KafkaError(ErrorCode.FENCED_STATE_EPOCH, `${what}: state epoch ${stateEpoch} is below the stored one (${stored})`);
  }
  async read(g: string, t: string, p: number): Promise<PersistedShareState | null> {
    return this.states.get(MemoryShareStatePersister.key(g, t, p)) ?? null;
  }
  async readWithStateEpoch(g: string, t: string, p: number): Promise<{ state: PersistedShareState | null; stateEpoch: number }> {
    const k = MemoryShareStatePersister.key(g, t, p);
    return { state: this.states.get(k) ?? null, stateEpoch: this.stateEpochs.get(k) ?? 0 };
  }
  async write(g: string, t: string, p: number, state: PersistedShareState, _leaderEpoch = -1, stateEpoch = -1): Promise<void> {
    const k = MemoryShareStatePersister.key(g, t, p);
    this.fence(k, stateEpoch, 'WriteShareGroupState');
    this.states.set(k, state);
    this.stateEpochs.set(k, Math.max(this.stateEpochs.get(k) ?? 0, stateEpoch));
    this.uninitialized.delete(k);
  }
  async delete(g: string, t: string, p: number): Promise<void> {
    const k = MemoryShareStatePersister.key(g, t, p);
    this.states.delete(k);
    this.stateEpochs.delete(k);
    this.uninitialized.delete(k);
  }
  async initialize(g: string, t: string, p: number, stateEpoch: number, startOffset: bigint): Promise<void> {
    const k = MemoryShareStatePersister.key(g, t, p);
    this.fence(k, stateEpoch, 'InitializeShareGroupState');
    this.initializations.push({ groupId: g, topicId: t, partition: p, stateEpoch, startOffset });
    this.stateEpochs.set(k, stateEpoch);
    if (startOffset >= 0n) this.states.set(k, { startOffset, stateBatches: [] });
    else if (this.states.has(k)) this.states.set(k, { startOffset: this.states.get(k)!.startOffset, stateBatches: [] });
    else this.uninitialized.add(k);
  }
  async partitionsOf(g: string): Promise<{ topicId: string; partition: number }[]> {
    return [...this.states.keys(), ...this.uninitialized].map((k) => k.split('\u0000')).filter((k) => k[0] === g).map((k) => ({ topicId: k[1]!, partition: Number(k[2]) }));
  }
}

export interface SharePartitionManagerOptions {
  readonly clock: Clock;
  readonly scheduler: Scheduler;
  readonly log: Logger;
  readonly persister: ShareStatePersister;
  readonly groupConfigs: ShareGroupConfigs;
  /** The partition's log, by topic id. */
  readonly partition: (topicId: string, partition: number) => ShareLogView | undefined;
  /** Records became available again (released, lock expired): long polls on the partition may wake. */
  readonly onAvailable: (topicId: string, partition: number) => void;
}

export interface ShareFetchAnswer {
  readonly records: Buffer;
  readonly acquired: AcquiredRange[];
}

interface Entry {
  readonly sp: SharePartition;
  /** The partition's leader epoch when the share-partition was loaded: a new leadership loads it again. */
  readonly leaderEpoch: number;
  /** The state epoch read at load: every write carries it, so a reset of the state (a higher epoch) fences this copy. */
  readonly stateEpoch: number;
  /** Members that fetched from this copy: a member new to it has its state epoch checked first (an offsets reset needs an empty group, so whoever fetches after one is new here). */
  readonly members: Set<string>;
  timer: TimerHandle | null;
  timerAt: number;
  written: number;
  persisting: Promise<void>;
}

const key = (g: string, t: string, p: number): string => `${g}\u0000${t}\u0000${p}`;
const EMPTY = Buffer.alloc(0);

/** The header facts acquisition needs, and where each batch lies in `buf`. */
export function scanBatches(buf: Buffer): { info: BatchInfo; position: number; size: number }[] {
  const out: { info: BatchInfo; position: number; size: number }[] = [];
  for (const b of new BatchScanner(buf)) {
    const h = b.header;
    out.push({ info: { baseOffset: h.baseOffset, lastOffset: lastOffset(h), isControl: isControl(h.attributes), isTransactional: isTransactional(h.attributes), producerId: h.producerId }, position: b.position, size: b.size });
  }
  return out;
}

export class SharePartitionManager {
  private readonly entries = new Map<string, Entry>();
  private readonly loading = new Map<string, Promise<Entry>>();

  constructor(private readonly o: SharePartitionManagerOptions) {}

  /** The share-partition if it is loaded (describe, lag). */
  loaded(groupId: string, topicId: string, partition: number): SharePartition | undefined {
    return this.entries.get(key(groupId, topicId, partition))?.sp;
  }

  loadedOfGroup(groupId: string): SharePartition[] {
    return [...this.entries.values()].filter((e) => e.sp.groupId === groupId).map((e) => e.sp);
  }

  private partitionConfig(groupId: string): SharePartitionConfig {
    const c = this.o.groupConfigs;
    return {
      get recordLockDurationMs() { return c.recordLockDurationMs(groupId); },
      get deliveryCountLimit() { return c.deliveryCountLimit(groupId); },
      get maxInFlightRecords() { return c.maxRecordLocks(groupId); },
    };
  }

  private async entry(groupId: string, topicId: string, partition: number, view: ShareLogView): Promise<Entry> {
    const k = key(groupId, topicId, partition);
    const have = this.entries.get(k);
    if (have !== undefined && have.leaderEpoch === view.leaderEpoch) return have;
    let pending = this.loading.get(k);
    if (pending === undefined) {
      // Leadership moved (and maybe came back): what this broker held is stale; the coordinator has the state.
      const stale = have === undefined ? Promise.resolve() : this.drop(k, have);
      pending = stale.then(() => this.load(groupId, topicId, partition, view)).finally(() => this.loading.delete(k));
      this.loading.set(k, pending);
    }
    return pending;
  }

  private async load(groupId: string, topicId: string, partition: number, view: ShareLogView): Promise<Entry> {
    const leaderEpoch = view.leaderEpoch;
    const read = await this.o.persister.readWithStateEpoch(groupId, topicId, partition, leaderEpoch);
    let state = read.state;
    const fresh = state === null;
    if (state === null) state = { startOffset: await this.resetOffset(groupId, view), stateBatches: [] };
    const sp = new SharePartition(groupId, topicId, partition, this.partitionConfig(groupId), this.o.clock, state);
    sp.updateLogStartOffset(view.logStartOffset);
    const e: Entry = { sp, leaderEpoch, stateEpoch: read.stateEpoch, members: new Set(), timer: null, timerAt: 0, written: fresh ? -1 : sp.stateVersion, persisting: Promise.resolve() };
    this.entries.set(key(groupId, topicId, partition), e);
    // Kafka initialises the state with the coordinator before the first fetch.
    if (fresh) await this.persist(e);
    return e;
  }

  /** share.auto.offset.reset for a share-partition with no state. */
  private async resetOffset(groupId: string, view: ShareLogView): Promise<bigint> {
    const reset = this.o.groupConfigs.autoOffsetReset(groupId);
    const latest = this.o.groupConfigs.readCommitted(groupId) ? view.lastStableOffset : view.highWatermark;
    if (reset === 'earliest') return view.logStartOffset;
    if (reset.startsWith('by_duration:')) {
      const at = this.o.clock.now() - parseIsoDurationMs(reset.slice('by_duration:'.length));
      const found = await view.offsetForTimestamp(BigInt(at));
      return found === null ? latest : found.offset;
    }
    return latest;
  }

  /** Reads from the next fetch offset and acquires what it read for the member. */
  async fetch(groupId: string, memberId: string, topicId: string, partition: number, view: ShareLogView, opts: { maxRecords: number; maxBytes: number; mode: AcquireMode; signal?: AbortSignal }): Promise<ShareFetchAnswer> {
    const e = await this.current(groupId, memberId, topicId, partition, view);
    const sp = e.sp;
    sp.updateLogStartOffset(view.logStartOffset);
    if (opts.maxRecords <= 0 || !sp.canAcquire()) return { records: EMPTY, acquired: [] };
    const readCommitted = this.o.groupConfigs.readCommitted(groupId);
    const maxOffset = readCommitted ? view.lastStableOffset : view.highWatermark;
    const from = sp.nextFetchOffset();
    if (from >= maxOffset) return { records: EMPTY, acquired: [] };
    const r = await view.read(from, Math.max(1, opts.maxBytes), { maxOffset, minOneBatch: true, ...(opts.signal === undefined ? {} : { signal: opts.signal }) });
    if (r.records === null) return { records: EMPTY, acquired: [] };
    const buf = recordsBuffer(r.records);
    const batches = scanBatches(buf).filter((b) => b.info.baseOffset < maxOffset);
    const aborted = readCommitted ? abortedOffsetRanges(batches.map((b) => b.info), r.abortedTransactions) : [];
    const acquired = sp.acquire(memberId, batches.map((b) => b.info), opts.maxRecords, opts.mode, aborted);
    this.armTimer(e);
    if (sp.stateVersion !== e.written) void this.persist(e).catch(() => undefined);
    if (acquired.length === 0) return { records: EMPTY, acquired };
    // Only the batches holding acquired records go back: the client skips the rest anyway.
    const keep = batches.filter((b) => acquired.some((a) => a.firstOffset <= b.info.lastOffset && a.lastOffset >= b.info.baseOffset));
    const parts = keep.map((b) => buf.subarray(b.position, b.position + b.size));
    return { records: parts.length === 1 ? parts[0]! : Buffer.concat(parts), acquired };
  }

  /**
   * The share-partition for a member's fetch. A member this copy has not
   * served yet may come after an AlterShareGroupOffsets / DeleteShareGroupOffsets
   * run on another broker (those need an empty group): the state epoch is read
   * again first, and a copy below it is dropped and loaded again, so no fetch
   * is served from the old start offset (the write fence would only catch it
   * after the records went out).
   */
  private async current(groupId: string, memberId: string, topicId: string, partition: number, view: ShareLogView): Promise<Entry> {
    const k = key(groupId, topicId, partition);
    let e = await this.entry(groupId, topicId, partition, view);
    if (e.members.has(memberId)) return e;
    let now: { state: unknown; stateEpoch: number };
    try {
      now = await this.o.persister.readWithStateEpoch(groupId, topicId, partition, e.leaderEpoch);
    } catch (err) {
      if (!(err instanceof KafkaError) || err.code !== ErrorCode.FENCED_LEADER_EPOCH) throw err;
      // A newer leader read the state: this copy is stale, as a fenced write would show.
      if (this.entries.get(k) === e) await this.drop(k, e);
      throw new KafkaError(ErrorCode.NOT_LEADER_OR_FOLLOWER, err.message, { cause: err });
    }
    // A higher epoch: re-initialised; no state where this copy had written some: deleted.
    if (now.stateEpoch > e.stateEpoch || (now.state === null && e.written !== -1)) {
      this.o.log.info({ groupId, topicId, partition, stateEpoch: e.stateEpoch, stored: now.stateEpoch }, 'share-partition state was reset elsewhere; loading it again');
      if (this.entries.get(k) === e) await this.drop(k, e);
      e = await this.entry(groupId, topicId, partition, view);
    }
    e.members.add(memberId);
    return e;
  }

  /** Applies acknowledgements and waits until the new state is written. */
  async acknowledge(groupId: string, memberId: string, topicId: string, partition: number, view: ShareLogView, batches: readonly AcknowledgementBatch[]): Promise<void> {
    const e = await this.entry(groupId, topicId, partition, view);
    const releasedBefore = e.sp.nextFetchOffset();
    e.sp.acknowledge(memberId, batches);
    this.armTimer(e);
    if (e.sp.nextFetchOffset() < releasedBefore || batches.some((b) => b.acknowledgeTypes.includes(2))) this.o.onAvailable(topicId, partition);
    await this.persist(e);
  }

  /** Releases what a member holds on the given share-partitions (or all of the group's). */
  async releaseMember(groupId: string, memberId: string, partitions?: readonly { topicId: string; partition: number }[]): Promise<void> {
    const targets = partitions === undefined
      ? [...this.entries.values()].filter((e) => e.sp.groupId === groupId)
      : partitions.map((p) => this.entries.get(key(groupId, p.topicId, p.partition))).filter((e): e is Entry => e !== undefined);
    await Promise.all(targets.map(async (e) => {
      // Forgotten with what it held (the set stays bounded): if it comes back, its first fetch checks the state epoch again.
      e.members.delete(memberId);
      if (e.sp.releaseMember(memberId) === 0) return;
      this.armTimer(e);
      this.o.onAvailable(e.sp.topicId, e.sp.partition);
      await this.persist(e);
    }));
  }

  /**
   * AlterShareGroupOffsets: InitializeShareGroupState at a new start offset
   * (no in-flight records); a copy loaded here is dropped once its pending
   * write is done, so the next fetch loads the new state.
   */
  async initialize(groupId: string, topicId: string, partition: number, stateEpoch: number, startOffset: bigint): Promise<void> {
    const k = key(groupId, topicId, partition);
    const e = this.entries.get(k);
    if (e !== undefined) await this.drop(k, e);
    await this.o.persister.initialize(groupId, topicId, partition, stateEpoch, startOffset);
  }

  /** DeleteShareGroupOffsets / DeleteGroups: the share-partition's state goes. */
  async forget(groupId: string, topicId: string, partition: number): Promise<void> {
    const k = key(groupId, topicId, partition);
    const e = this.entries.get(k);
    if (e !== undefined) {
      if (e.timer !== null) this.o.scheduler.clearTimeout(e.timer);
      await e.persisting.catch(() => undefined);
      this.entries.delete(k);
    }
    await this.o.persister.delete(groupId, topicId, partition);
  }

  /** Forgets a share-partition this broker no longer leads at that epoch, once its pending write is done. */
  private async drop(k: string, e: Entry): Promise<void> {
    if (this.entries.get(k) === e) this.entries.delete(k);
    if (e.timer !== null) this.o.scheduler.clearTimeout(e.timer);
    e.timer = null;
    await e.persisting.catch(() => undefined);
  }

  close(): void {
    for (const e of this.entries.values()) if (e.timer !== null) this.o.scheduler.clearTimeout(e.timer);
  }

  /** Keeps one timer per share-partition at its earliest lock end. */
  private armTimer(e: Entry): void {
    const at = e.sp.nextLockExpiry();
    if (e.timer !== null && at === e.timerAt) return;
    if (e.timer !== null) this.o.scheduler.clearTimeout(e.timer);
    e.timer = null;
    if (at === null) return;
    e.timerAt = at;
    e.timer = this.o.scheduler.setTimeout(() => {
      e.timer = null;
      if (e.sp.expireLocks() > 0) {
        this.o.onAvailable(e.sp.topicId, e.sp.partition);
        void this.persist(e).catch(() => undefined);
      }
      this.armTimer(e);
    }, Math.max(0, at - this.o.clock.now()));
  }

  /** Writes the state if it changed since the last write; writes of one share-partition run in order. */
  private persist(e: Entry): Promise<void> {
    const run = e.persisting.catch(() => undefined).then(async () => {
      const version = e.sp.stateVersion;
      if (version === e.written) return;
      try {
        await this.o.persister.write(e.sp.groupId, e.sp.topicId, e.sp.partition, e.sp.persistedState(), e.leaderEpoch, e.stateEpoch);
        e.written = version;
      } catch (err) {
        const code = err instanceof KafkaError ? err.code : ErrorCode.UNKNOWN_SERVER_ERROR;
        if (code === ErrorCode.FENCED_LEADER_EPOCH || code === ErrorCode.FENCED_STATE_EPOCH) {
          // A newer leader (or an offsets reset) owns the state now: this copy goes, as Kafka drops a fenced SharePartition.
          const k = key(e.sp.groupId, e.sp.topicId, e.sp.partition);
          if (this.entries.get(k) === e) this.entries.delete(k);
          if (e.timer !== null) this.o.scheduler.clearTimeout(e.timer);
          e.timer = null;
          this.o.log.warn({ groupId: e.sp.groupId, topicId: e.sp.topicId, partition: e.sp.partition, error: (err as Error).message }, 'share-partition fenced by its share coordinator');
          throw new KafkaError(code === ErrorCode.FENCED_LEADER_EPOCH ? ErrorCode.NOT_LEADER_OR_FOLLOWER : code, (err as Error).message, { cause: err });
        }
        this.o.log.error({ err, groupId: e.sp.groupId, topicId: e.sp.topicId, partition: e.sp.partition }, 'share-partition state write failed');
        throw new KafkaError(ErrorCode.COORDINATOR_NOT_AVAILABLE, 'the share coordinator could not write the state', { cause: err });
      }
    });
    e.persisting = run;
    return run;
  }
}
