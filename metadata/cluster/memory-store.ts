// The in-memory twin of the etcd store, for fast unit tests of everything built
// on the port. MemoryMetadataServer plays etcd (a revisioned key space with
// leases, a history for watches, compaction); each MemoryClusterMetadataStore
// is one broker's client of it, with a fault switch (setReachable) that makes
// its calls fail, its keepalives go unanswered and its watches pause and resume
// as a cut-off etcd client's would. Time is the injected Clock and Scheduler,
// so lease expiry is driven by a ManualClock in tests.
import type { Clock } from '../../broker/common/clock.js';
import { ErrorCode, KafkaError } from '../../broker/protocol/errors.js';
import type { Scheduler, TimerHandle } from '../../broker/common/scheduler.js';
import { DuplicateBrokerRegistrationError, MetadataStoreUnavailableError } from './errors.js';
import { KeySpaceStore, type KeySpace, type KvEntry, type KvEvent, type KvOp, type LeaseId } from './key-space-store.js';
import { LeaseKeeper } from './lease-keeper.js';
import type { BrokerRegistration } from './records.js';
import type { BrokerSession, MetadataWatch, SessionOptions, WatchListener } from './store.js';

interface Lease {
  readonly ttlMs: number;
  expiresAt: number;
  timer: TimerHandle | undefined;
}

/** The shared state: what etcd would hold. */
export class MemoryMetadataServer {
  private revisionNow = 1n;
  private compacted = 0n;
  private readonly kv = new Map<string, KvEntry & { lease: number | null }>();
  private readonly history: KvEvent[] = [];
  private readonly leases = new Map<number, Lease>();
  private nextLeaseId = 1;
  private readonly subscribers = new Set<() => void>();

  constructor(
    readonly clock: Clock,
    readonly scheduler: Scheduler,
  ) {}

  get revision(): bigint {
    return this.revisionNow;
  }

  get(key: string): KvEntry | undefined {
    return this.kv.get(key);
  }

  range(prefix: string): KvEntry[] {
    return [...this.kv.values()].filter((e) => e.key.startsWith(prefix)).sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  /** Applies ops atomically at one new revision (none: no revision). */
  commit(ops: readonly KvOp[]): bigint {
    const events: KvEvent[] = [];
    const rev = this.revisionNow + 1n;
    for (const op of ops) {
      if (op.type === 'put') {
        if (op.lease !== undefined && !this.leases.has(Number(op.lease))) throw new KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, `lease ${op.lease} not found`);
        const prev = this.kv.get(op.key);
        const createRevision = prev?.createRevision ?? rev;
        this.kv.set(op.key, { key: op.key, value: op.value, createRevision, modRevision: rev, lease: op.lease === undefined ? null : Number(op.lease) });
        events.push({ key: op.key, value: op.value, createRevision, modRevision: rev });
      } else {
        const keys = op.prefix ? [...this.kv.keys()].filter((k) => k.startsWith(op.key)) : this.kv.has(op.key) ? [op.key] : [];
        for (const k of keys) {
          this.kv.delete(k);
          events.push({ key: k, value: null, createRevision: 0n, modRevision: rev });
        }
      }
    }
    if (events.length === 0) return this.revisionNow;
    this.revisionNow = rev;
    this.history.push(...events);
    for (const s of this.subscribers) s();
    return rev;
  }

  /** Events after `revision`, or 'compacted' when some of them are gone. */
  eventsAfter(revision: bigint): KvEvent[] | 'compacted' {
    if (revision < this.compacted) return 'compacted';
    return this.history.filter((e) => e.modRevision > revision);
  }

  get compactRevision(): bigint {
    return this.compacted;
  }

  /** Drops history up to `revision` (etcd's compaction): watches resuming below it must reload. */
  compact(revision: bigint = this.revisionNow): void {
    this.compacted = revision;
    const keep = this.history.filter((e) => e.modRevision > revision);
    this.history.splice(0, this.history.length, ...keep);
  }

  subscribe(fn: () => void): () => void {
    this.subscribers.add(fn);
    return () => this.subscribers.delete(fn);
  }

  grant(ttlMs: number): number {
    const id = this.nextLeaseId++;
    const lease: Lease = { ttlMs, expiresAt: this.clock.now() + ttlMs, timer: undefined };
    this.leases.set(id, lease);
    this.armExpiry(id, lease);
    return id;
  }

  /** Remaining TTL in ms after the keepalive; 0 when the lease is gone. */
  keepAlive(id: number): number {
    const lease = this.leases.get(id);
    if (lease === undefined) return 0;
    lease.expiresAt = this.clock.now() + lease.ttlMs;
    this.armExpiry(id, lease);
    return lease.ttlMs;
  }

  revoke(id: number): void {
    const lease = this.leases.get(id);
    if (lease === undefined) return;
    if (lease.timer !== undefined) this.scheduler.clearTimeout(lease.timer);
    this.leases.delete(id);
    const keys = [...this.kv.values()].filter((e) => e.lease === id).map((e) => e.key);
    this.commit(keys.map((key) => ({ type: 'delete', key })));
  }

  private armExpiry(id: number, lease: Lease): void {
    if (lease.timer !== undefined) this.scheduler.clearTimeout(lease.timer);
    lease.timer = this.scheduler.setTimeout(() => {
      lease.timer = undefined;
      if (this.clock.now() >= lease.expiresAt) this.revoke(id);
    }, lease.expiresAt - this.clock.now());
  }
}

/** One broker's client of a MemoryMetadataServer. */
export class MemoryClusterMetadataStore extends KeySpaceStore {
  readonly description = 'memory';
  private reachable = true;
  private readonly sessions = new Set<LeaseKeeper>();
  private readonly leases = new WeakMap<BrokerSession, number>();
  private readonly watches = new Set<MemoryWatch>();

  constructor(readonly server: MemoryMetadataServer) {
    super();
  }

  /** Fault switch: unreachable, calls reject with MetadataStoreUnavailableError and watches pause; reachable again, watches resume. */
  setReachable(reachable: boolean): void {
    this.reachable = reachable;
    for (const w of this.watches) w.connectionChanged(reachable);
  }

  protected keySpace(): KeySpace {
    this.checkReachable();
    const server = this.server;
    return {
      get: async (key) => {
        this.checkReachable();
        return server.get(key);
      },
      range: async (prefix) => {
        this.checkReachable();
        return { revision: server.revision, entries: server.range(prefix) };
      },
      // Synchronous in memory, so the guard and the write are one atomic step.
      commitIf: async (guards, ops) => {
        this.checkReachable();
        for (const g of guards) {
          if ((server.get(g.key)?.modRevision ?? 0n) !== g.modRevision) return undefined;
        }
        return server.commit(ops);
      },
    };
  }

  async registerBroker(registration: BrokerRegistration, options: SessionOptions): Promise<BrokerSession> {
    this.checkReachable();
    const key = this.brokerKeyOf(registration.nodeId);
    const holder = this.server.get(key);
    if (holder !== undefined) throw new DuplicateBrokerRegistrationError(this.registeredFrom(holder));
    const grantSentAt = this.server.clock.now();
    const leaseId = this.server.grant(options.sessionTimeoutMs);
    const revision = this.server.commit([{ type: 'put', key, value: this.encodeRegistration(registration), lease: leaseId }]);
    const session = new LeaseKeeper(registration.nodeId, revision, {
      clock: this.server.clock,
      scheduler: this.server.scheduler,
      ttlMs: options.sessionTimeoutMs,
      heartbeatIntervalMs: options.heartbeatIntervalMs,
      grantSentAt,
      keepAlive: async () => {
        this.checkReachable();
        return this.server.keepAlive(leaseId);
      },
      revoke: async () => {
        this.checkReachable();
        this.server.revoke(leaseId);
      },
    });
    this.sessions.add(session);
    this.leases.set(session, leaseId);
    return session;
  }

  protected leaseOf(session: BrokerSession): LeaseId | undefined {
    return this.leases.get(session);
  }

  watch(afterRevision: bigint, listener: WatchListener): MetadataWatch {
    const w = new MemoryWatch(this.server, afterRevision, listener, this.reachable, (rev, events, l) => this.deliver(rev, events, l), () => this.watches.delete(w));
    this.watches.add(w);
    return w;
  }

  async close(): Promise<void> {
    for (const s of this.sessions) s.abandon();
    for (const w of [...this.watches]) await w.close();
  }

  private checkReachable(): void {
    if (!this.reachable) throw new MetadataStoreUnavailableError('the metadata store (memory) is unreachable');
  }
}

/** A watch over the server's history: delivers each revision once, resumes after a cut, reports compaction. */
class MemoryWatch implements MetadataWatch {
  private delivered: bigint;
  private closed = false;
  private scheduled = false;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly server: MemoryMetadataServer,
    afterRevision: bigint,
    private readonly listener: WatchListener,
    private connected: boolean,
    private readonly deliver: (revision: bigint, events: readonly KvEvent[], listener: WatchListener) => void,
    private readonly onClose: () => void,
  ) {
    this.delivered = afterRevision;
    this.unsubscribe = server.subscribe(() => this.schedule());
    this.schedule();
  }

  connectionChanged(connected: boolean): void {
    if (connected === this.connected) return;
    this.connected = connected;
    this.listener.onConnectionChange?.(connected);
    if (connected) this.schedule();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.unsubscribe();
    this.onClose();
  }

  // Delivered later, never inside the writer's commit, as a real watch would.
  private schedule(): void {
    if (this.scheduled || this.closed) return;
    this.scheduled = true;
    queueMicrotask(() => {
      this.scheduled = false;
      this.pump();
    });
  }

  private pump(): void {
    if (this.closed || !this.connected) return;
    const events = this.server.eventsAfter(this.delivered);
    if (events === 'compacted') {
      void this.close();
      this.listener.onCompacted(this.server.compactRevision);
      return;
    }
    let i = 0;
    while (i < events.length && !this.closed) {
      const rev = events[i]!.modRevision;
      let j = i;
      while (j < events.length && events[j]!.modRevision === rev) j++;
      this.delivered = rev;
      this.deliver(rev, events.slice(i, j), this.listener);
      i = j;
    }
  }
}
