// The cluster metadata store in etcd, through the `etcd3` client (gRPC). Keys
// are `${prefix}/${key of layout.ts}`. Every call carries a deadline, so an
// unreachable etcd is a MetadataStoreUnavailableError (retriable), never a hang.
// Watches are etcd3's resilient watchers, but this module decides where they
// resume: etcd3 would restart from the revision of the watch's creation
// response, which can skip events that were not yet delivered; we restart
// after the last revision actually handed to the listener, and when etcd says
// that revision is compacted, the listener reloads.
import { ExponentialBackoff, handleWhen, noop, retry } from 'cockatiel';
import { Etcd3, isRecoverableError, type IKeyValue, type IOptions, type IWatchResponse, type Watcher } from 'etcd3';
import { systemClock, type Clock } from '../../broker/common/clock.js';
import { ErrorCode, KafkaError } from '../../broker/protocol/errors.js';
import { systemScheduler, type Scheduler } from '../../broker/common/scheduler.js';
import { DuplicateBrokerRegistrationError, MetadataStoreUnavailableError } from './errors.js';
import { describeEtcdConnect, type EtcdConnect } from './etcd-connect.js';
import { KeySpaceStore, type KeySpace, type KvEntry, type KvEvent, type KvGuard, type KvOp, type LeaseId } from './key-space-store.js';
import { LAYOUT_KEY } from './layout.js';
import { LeaseKeeper } from './lease-keeper.js';
import type { BrokerRegistration } from './records.js';
import type { BrokerSession, MetadataWatch, SessionOptions, WatchListener } from './store.js';

export interface EtcdStoreOptions {
  readonly connect: EtcdConnect;
  /** PEM: CA certificates to trust; with privateKey and certChain, a client certificate too. Turns on https. */
  readonly tls?: { readonly rootCertificate: Buffer; readonly privateKey?: Buffer; readonly certChain?: Buffer };
  readonly auth?: { readonly username: string; readonly password: string };
  /** Deadline of each call (etcd.request.timeout.ms). */
  readonly requestTimeoutMs?: number;
  readonly clock?: Clock;
  readonly scheduler?: Scheduler;
}

const DEFAULT_REQUEST_TIMEOUT_MS = 5000;
/**
 * Longest wait between attempts to re-open the watch stream. etcd3's default
 * (cockatiel's, up to 30 s with jitter) left a broker's image stale for
 * seconds after etcd came back from a 3 s outage (measured: 3.1 s); capped,
 * the watch is back within about this long of etcd answering again.
 */
const WATCH_RECONNECT_MAX_DELAY_MS = 1000;

export class EtcdClusterMetadataStore extends KeySpaceStore {
  readonly description: string;
  private readonly client: Etcd3;
  private readonly prefix: string;
  private readonly clock: Clock;
  private readonly scheduler: Scheduler;
  private readonly sessions = new Set<LeaseKeeper>();
  private readonly leases = new WeakMap<BrokerSession, string>();
  private readonly watches = new Set<EtcdWatch>();
  private readonly space: KeySpace;

  constructor(options: EtcdStoreOptions) {
    super();
    this.description = `etcd ${describeEtcdConnect(options.connect)}`;
    this.prefix = `${options.connect.prefix}/`;
    this.clock = options.clock ?? systemClock;
    this.scheduler = options.scheduler ?? systemScheduler;
    const timeout = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    const scheme = options.tls === undefined ? 'http' : 'https';
    const clientOptions: IOptions = {
      hosts: options.connect.endpoints.map((e) => `${scheme}://${e}`),
      dialTimeout: timeout,
      // Streams (watch, lease keepalive) live on; unary calls get a deadline.
      defaultCallOptions: (ctx) => (ctx.isStream ? {} : { deadline: Date.now() + timeout }),
      // etcd3's default per-host circuit breaker blocks every call for 5 s after
      // 3 failures: keepalives would then stay blocked after etcd is back, and a
      // session could be lost to the breaker alone. Instead: each call tries one
      // host, a recoverable failure is retried once per other endpoint, and the
      // callers (start-up, LeaseKeeper, the controller) own the retrying.
      faultHandling: {
        host: () => noop,
        global: retry(handleWhen((e) => isRecoverableError(e)), { maxAttempts: options.connect.endpoints.length - 1 }),
        // etcd3 calls next() on it for the first delay, as on a backoff factory; its type says IBackoff.
        watchBackoff: new ExponentialBackoff({ initialDelay: 100, maxDelay: WATCH_RECONNECT_MAX_DELAY_MS }) as unknown as NonNullable<NonNullable<IOptions['faultHandling']>['watchBackoff']>,
      },
      ...(options.tls === undefined ? {} : { credentials: { ...options.tls } }),
      ...(options.auth === undefined ? {} : { auth: { ...options.auth, callOptions: { deadline: Date.now() + timeout } } }),
    };
    this.client = new Etcd3(clientOptions);
    this.space = this.makeKeySpace();
  }

  protected keySpace(): KeySpace {
    return this.space;
  }

  async registerBroker(registration: BrokerRegistration, options: SessionOptions): Promise<BrokerSession> {
    const key = this.full(this.brokerKeyOf(registration.nodeId));
    const ttlSeconds = Math.max(1, Math.ceil(options.sessionTimeoutMs / 1000));
    const lease = this.client.lease(ttlSeconds, { autoKeepAlive: false });
    lease.on('lost', () => undefined); // decided by the LeaseKeeper, not etcd3's loop
    const grantSentAt = this.clock.now();
    const leaseId = await this.call('grant a lease', () => lease.grant());
    const txn = await this.call('register the broker', () =>
      this.client.if(key, 'Create', '==', 0).then(this.client.put(key).value(this.encodeRegistration(registration)).lease(leaseId)).else(this.client.get(key)).commit(),
    );
    if (!txn.succeeded) {
      await lease.revoke().catch(() => undefined);
      const kv = txn.responses[0]?.response_range?.kvs[0];
      if (kv === undefined) throw new MetadataStoreUnavailableError(`registration of node ${registration.nodeId} raced with its expiry; retry`);
      throw new DuplicateBrokerRegistrationError(this.registeredFrom(this.entry(kv)));
    }
    const session = new LeaseKeeper(registration.nodeId, BigInt(txn.header.revision), {
      clock: this.clock,
      scheduler: this.scheduler,
      ttlMs: options.sessionTimeoutMs,
      heartbeatIntervalMs: options.heartbeatIntervalMs,
      grantSentAt,
      keepAlive: async () => {
        const res = await this.call('keep the lease alive', () => lease.keepaliveOnce({ deadline: Date.now() + options.heartbeatIntervalMs }));
        return Number(res.TTL) * 1000;
      },
      revoke: () => this.call('revoke the lease', () => lease.revoke()),
    });
    this.sessions.add(session);
    this.leases.set(session, leaseId);
    return session;
  }

  protected leaseOf(session: BrokerSession): LeaseId | undefined {
    return this.leases.get(session);
  }

  watch(afterRevision: bigint, listener: WatchListener): MetadataWatch {
    const w = new EtcdWatch(
      this.client,
      this.prefix,
      afterRevision,
      listener,
      (rev, events) => this.deliver(rev, events, listener),
      () => this.watches.delete(w),
    );
    this.watches.add(w);
    return w;
  }

  async close(): Promise<void> {
    for (const s of this.sessions) s.abandon();
    for (const w of [...this.watches]) await w.close();
    this.client.close();
  }

  /** Compacts etcd's history up to `revision` (for tests of the reload path and for operators' tooling). */
  async compact(revision: bigint): Promise<void> {
    await this.call('compact', () => this.client.kv.compact({ revision: revision.toString(), physical: true }));
  }

  private full(key: string): string {
    return `${this.prefix}${key}`;
  }

  private entry(kv: IKeyValue): KvEntry {
    return {
      key: kv.key.toString('utf8').slice(this.prefix.length),
      value: kv.value.toString('utf8'),
      createRevision: BigInt(kv.create_revision),
      modRevision: BigInt(kv.mod_revision),
    };
  }

  private makeKeySpace(): KeySpace {
    return {
      get: async (key) => {
        const res = await this.call('read', () => this.client.get(this.full(key)).exec());
        const kv = res.kvs[0];
        return kv === undefined ? undefined : this.entry(kv);
      },
      range: async (prefix) => {
        const res = await this.call('read', () => this.client.getAll().prefix(this.full(prefix)).exec());
        return { revision: BigInt(res.header.revision), entries: res.kvs.map((kv) => this.entry(kv)) };
      },
      commitIf: async (guards: readonly KvGuard[], ops: readonly KvOp[]) => {
        // etcd3 builds a transaction from its first compare; with no guard, one that always holds.
        const first = guards[0] ?? { key: LAYOUT_KEY, modRevision: -1n };
        let txn = guards[0] === undefined
          ? this.client.if(this.full(first.key), 'Mod', '>', -1)
          : this.client.if(this.full(first.key), 'Mod', '==', first.modRevision.toString());
        for (const g of guards.slice(1)) txn = txn.and(this.full(g.key), 'Mod', '==', g.modRevision.toString());
        txn = txn.then(
          ...ops.map((op) =>
            op.type === 'put'
              ? op.lease === undefined
                ? this.client.put(this.full(op.key)).value(op.value)
                : this.client.put(this.full(op.key)).value(op.value).lease(String(op.lease))
              : op.prefix === true
                ? this.client.delete().prefix(this.full(op.key))
                : this.client.delete().key(this.full(op.key)),
          ),
        );
        const res = await this.call('write', () => txn.commit());
        return res.succeeded ? BigInt(res.header.revision) : undefined;
      },
    };
  }

  private async call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      throw mapEtcdError(`${this.description}: could not ${what}`, e);
    }
  }
}

/** Authentication and permission failures are not retriable; everything else (unavailable, deadline, reset) is. */
export function mapEtcdError(context: string, e: unknown): KafkaError {
  if (e instanceof KafkaError) return e;
  const name = e instanceof Error ? e.constructor.name : '';
  const message = e instanceof Error ? e.message : String(e);
  if (/Authentication|InvalidAuthToken|Unauthenticated/.test(name)) {
    return new KafkaError(ErrorCode.SASL_AUTHENTICATION_FAILED, `${context}: etcd authentication failed: ${message}`, { cause: e });
  }
  if (/PermissionDenied/.test(name)) {
    return new KafkaError(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, `${context}: etcd denied permission: ${message}`, { cause: e });
  }
  return new MetadataStoreUnavailableError(`${context}: ${message}`, { cause: e });
}

/** One prefix watch; see the module comment for where it resumes. */
class EtcdWatch implements MetadataWatch {
  private delivered: bigint;
  private watcher: Watcher | undefined;
  private closed = false;
  private connected = true;

  constructor(
    private readonly client: Etcd3,
    private readonly prefix: string,
    afterRevision: bigint,
    private readonly listener: WatchListener,
    private readonly deliver: (revision: bigint, events: readonly KvEvent[]) => void,
    private readonly onClose: () => void,
  ) {
    this.delivered = afterRevision;
    this.start();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.onClose();
    const w = this.watcher;
    this.watcher = undefined;
    if (w !== undefined) await w.cancel().catch(() => undefined);
  }

  private start(): void {
    const watcher = this.client.watch().prefix(this.prefix).startRevision((this.delivered + 1n).toString()).watcher();
    this.watcher = watcher;
    watcher.on('data', (res: IWatchResponse) => this.onData(res));
    watcher.on('disconnected', () => {
      // etcd3 re-creates the watch from watcher.request on reconnect: make it resume after what we delivered.
      watcher.request.start_revision = (this.delivered + 1n).toString();
      if (this.connected) {
        this.connected = false;
        this.listener.onConnectionChange?.(false);
      }
    });
    watcher.on('connected', () => {
      watcher.request.start_revision = (this.delivered + 1n).toString();
      if (!this.connected) {
        this.connected = true;
        this.listener.onConnectionChange?.(true);
      }
    });
    // A watch etcd cancels is one whose start revision was compacted (the only
    // cancellation of a prefix watch we do not ask for): the reader reloads.
    watcher.on('error', (e: unknown) => {
      if (this.closed) return;
      void this.close();
      const m = /compact(?:ed)?[^0-9]*([0-9]+)/i.exec(e instanceof Error ? e.message : String(e));
      this.listener.onCompacted(m?.[1] === undefined ? -1n : BigInt(m[1]));
    });
  }

  private onData(res: IWatchResponse): void {
    if (this.closed) return;
    const events: KvEvent[] = res.events.map((ev) => ({
      key: ev.kv.key.toString('utf8').slice(this.prefix.length),
      value: ev.type === 'Delete' ? null : ev.kv.value.toString('utf8'),
      createRevision: BigInt(ev.kv.create_revision),
      modRevision: BigInt(ev.kv.mod_revision),
    }));
    let i = 0;
    while (i < events.length && !this.closed) {
      const rev = events[i]!.modRevision;
      let j = i;
      while (j < events.length && events[j]!.modRevision === rev) j++;
      // A resumed watch can repeat a revision already delivered: each once.
      if (rev > this.delivered) {
        this.delivered = rev;
        this.deliver(rev, events.slice(i, j));
      }
      i = j;
    }
  }
}
