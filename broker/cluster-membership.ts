// A broker's membership of an etcd cluster (etcd.connect set): the metadata
// store, this broker's registration and lease, and the image kept current from
// etcd. Without etcd.connect there is none and the broker is the single broker
// it always was. Start-up: connect() before the log dirs are formatted (the
// store decides the cluster id), register() once the listeners are bound (the
// registration carries their ports).
//
// A lost session is not the end: like a Kafka broker that is fenced and keeps
// heartbeating, this one registers again (re-registration below) and rejoins
// the cluster under a new broker epoch. Listeners hear every loss and every
// new session, so leadership, coordination and the controller stop at a loss
// and start again with the next session.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import type { BrokerConfig, ListenerConfig } from './config.js';
import type { Clock } from './common/clock.js';
import { ErrorCode, KafkaError } from './protocol/errors.js';
import { DuplicateBrokerRegistrationError } from '../metadata/cluster/errors.js';
import { systemScheduler, type Scheduler, type TimerHandle } from './common/scheduler.js';
import { EtcdClusterMetadataStore } from '../metadata/cluster/etcd-store.js';
import { etcdSettingsFrom, type EtcdClusterSettings } from '../metadata/cluster/etcd-config.js';
import { MetadataImageFollower } from '../metadata/cluster/image-follower.js';
import type { MetadataImage } from '../metadata/cluster/image.js';
import type { BrokerEndpoint, BrokerRegistration } from '../metadata/cluster/records.js';
import { retryUnavailable, type StartupOptions } from '../metadata/cluster/startup.js';
import type { BrokerSession, ClusterMetadataStore } from '../metadata/cluster/store.js';
import { decodeMetaProperties, META_PROPERTIES_FILE } from '../metadata/meta-properties.js';
import { randomUuid } from '../metadata/uuid.js';

/** Re-registration's backoff: Kafka's BrokerLifecycleManager resends its registration after 100 ms, doubling up to broker.session.timeout.ms. */
export const REREGISTER_INITIAL_BACKOFF_MS = 100;

export interface MembershipOptions {
  readonly log: Logger;
  readonly clock: Clock;
  readonly scheduler: Scheduler;
  /** The store to use instead of the etcd one etcd.connect names (the in-memory twin in tests); closed by stop(). */
  readonly store?: ClusterMetadataStore;
}

export class ClusterMembership {
  private sessionHandle: BrokerSession | undefined;
  private readonly lostListeners: Array<(reason: string) => void> = [];
  private readonly startedListeners: Array<(session: BrokerSession) => void> = [];
  /** Kafka's incarnation id: one per process, so a re-registration is told from another process holding the node id. */
  readonly incarnationId = randomUuid();
  private registration: BrokerRegistration | undefined;
  private rejoining: Promise<void> | null = null;
  private wakeRejoin: (() => void) | null = null;
  private stopped = false;
  private readonly stopping: Promise<false>;
  private signalStop: () => void = () => undefined;

  private constructor(
    private readonly changeListeners: Array<() => void>,
    readonly store: ClusterMetadataStore,
    readonly clusterId: string,
    private readonly follower: MetadataImageFollower,
    private readonly settings: EtcdClusterSettings,
    private readonly startup: StartupOptions,
    /** The broker's own scheduler (unref'd timers): re-registration retries must not keep a stopping process alive. */
    private readonly scheduler: Scheduler,
    private readonly log: Logger,
  ) {
    this.stopping = new Promise<false>((resolve) => (this.signalStop = () => resolve(false)));
  }

  /**
   * Null without etcd.connect. Otherwise reaches etcd (retrying for
   * etcd.connection.timeout.ms), checks the layout and the cluster id against
   * the log dirs' meta.properties, and loads the image.
   */
  static async connect(config: BrokerConfig, options: MembershipOptions): Promise<ClusterMembership | null> {
    const settings = etcdSettingsFrom(config);
    if (settings === null) return null;
    const log = options.log.child({ component: 'cluster-metadata' });
    const store = options.store ?? new EtcdClusterMetadataStore({ ...settings.store, clock: options.clock, scheduler: options.scheduler });
    const startup: StartupOptions = {
      clock: options.clock,
      // The system scheduler's timers are unref'd; during start-up nothing else
      // keeps the process alive between attempts, so these must hold it.
      scheduler: options.scheduler === systemScheduler ? keepAliveScheduler : options.scheduler,
      connectionTimeoutMs: settings.connectionTimeoutMs,
      onRetry: (message) => log.warn(message),
    };
    try {
      const known = config.clusterId ?? storedClusterId(config.logDirs);
      const clusterId = await retryUnavailable(store, 'read the cluster metadata', () =>
        store.initialize({ proposedClusterId: known ?? randomUuid(), ...(known === null ? {} : { expectedClusterId: known }) }),
        startup,
      );
      const changeListeners: Array<() => void> = [];
      const follower = new MetadataImageFollower(store, {
        scheduler: options.scheduler,
        onChange: () => {
          for (const l of [...changeListeners]) l();
        },
        onReload: (reason) => {
          log.warn({ reason }, 'cluster metadata image reloaded');
          for (const l of [...changeListeners]) l();
        },
        onProblem: (problem) => log.warn(problem),
        onConnectionChange: (connected) => (connected ? log.info(`watching ${store.description} again`) : log.warn(`lost the watch connection to ${store.description}`)),
      });
      await retryUnavailable(store, 'load the cluster metadata', () => follower.start(), startup);
      log.info({ store: store.description, clusterId, revision: String(follower.image.revision) }, 'cluster metadata loaded');
      return new ClusterMembership(changeListeners, store, clusterId, follower, settings, startup, options.scheduler, log);
    } catch (e) {
      await store.close();
      throw e;
    }
  }

  get image(): MetadataImage {
    return this.follower.image;
  }

  /** The current session: the live one, or the last one lost while this broker registers again. */
  /** Resolves once the image shows `revision` (a write's), or after `timeoutMs` (the write stands; the watch is late). */
  waitForRevision(revision: bigint, timeoutMs: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = this.startup.scheduler.setTimeout(resolve, timeoutMs);
      void this.follower.waitForRevision(revision).then(() => {
        this.startup.scheduler.clearTimeout(timer);
        resolve();
      });
    });
  }

  get session(): BrokerSession | undefined {
    return this.sessionHandle;
  }

  /** Called after every change the image applies (the controller and the topic sync react to them). */
  onImageChange(listener: () => void): void {
    this.changeListeners.push(listener);
  }

  /** Called when a session is lost (each time): this broker must stop acting as leader, coordinator or controller. */
  onSessionLost(listener: (reason: string) => void): void {
    this.lostListeners.push(listener);
  }

  /**
   * Called with each new session, the first registration's included, once
   * the image has caught up with the registration (it reflects every change
   * made before it): this broker may lead, coordinate and campaign again.
   */
  onSessionStarted(listener: (session: BrokerSession) => void): void {
    this.startedListeners.push(listener);
  }

  /**
   * Registers this broker. A registration of the node id still in the store
   * may be this broker's previous run (killed, its lease not yet expired):
   * as Kafka lets a restarted broker re-register once its old registration is
   * gone, this waits, logging why, until the key goes, for at most the lease's
   * time to live (broker.session.timeout.ms, rounded up to whole seconds as
   * etcd does, plus a heartbeat). A registration still there after that is
   * kept alive by a running broker: refused (DuplicateBrokerRegistrationError).
   */
  async register(nodeId: number, rack: string | null, listeners: readonly ListenerConfig[]): Promise<BrokerSession> {
    const endpoints: BrokerEndpoint[] = listeners.map((l) => ({ name: l.name, host: l.host, port: l.port, securityProtocol: l.securityProtocol }));
    const registration: BrokerRegistration = { nodeId, incarnationId: this.incarnationId, rack, endpoints };
    this.registration = registration;
    const { sessionTimeoutMs, heartbeatIntervalMs } = this.settings.session;
    const waitMs = Math.ceil(sessionTimeoutMs / 1000) * 1000 + heartbeatIntervalMs;
    const clock = this.startup.clock;
    const deadline = clock.now() + waitMs;
    let session: BrokerSession;
    for (let logged = false; ; ) {
      try {
        session = await retryUnavailable(this.store, `register node ${nodeId}`, () => this.store.registerBroker(registration, this.settings.session), this.startup);
        break;
      } catch (e) {
        if (!(e instanceof KafkaError && e.code === ErrorCode.DUPLICATE_BROKER_REGISTRATION) || clock.now() >= deadline) throw e;
        if (!logged) {
          logged = true;
          this.log.warn({ nodeId, waitMs, holder: e.message }, `node.id ${nodeId} is still registered: waiting up to ${waitMs} ms for that registration's lease to expire, as it does when its broker is no longer running`);
        }
        await this.imageChangeOrTimeout(Math.min(500, Math.max(0, deadline - clock.now())), this.startup.scheduler);
      }
    }
    if (!(await this.caughtUp(session))) {
      throw new KafkaError(ErrorCode.REQUEST_TIMED_OUT, `the session of node ${nodeId} ended before the cluster metadata reached its registration (revision ${session.brokerEpoch})`);
    }
    this.adopt(session);
    this.log.info({ nodeId, brokerEpoch: String(session.brokerEpoch), incarnationId: this.incarnationId, endpoints: endpoints.map((e) => `${e.name}://${e.host}:${e.port}`) }, 'registered in the cluster');
    return session;
  }

  /** Resolves once a re-registration in progress has ended (registered, or stopped); for tests and shutdown. */
  async rejoined(): Promise<void> {
    await this.rejoining;
  }

  /**
   * The image reflects the registration's revision (its broker epoch), so
   * every leadership change made before it is known: a broker acting on an
   * older image could lead a partition at an epoch another broker has since
   * been given. False when the session ended or the membership stopped first.
   */
  private async caughtUp(session: BrokerSession): Promise<boolean> {
    const lost = new Promise<false>((resolve) => session.onLost(() => resolve(false)));
    const reached = this.follower.waitForRevision(session.brokerEpoch).then(() => true);
    return (await Promise.race([reached, lost, this.stopping])) && session.state === 'live' && !this.stopped;
  }

  /** Makes `session` the current one and tells the listeners; its loss starts a re-registration. */
  private adopt(session: BrokerSession): void {
    this.sessionHandle = session;
    session.onLost((reason) => {
      this.log.error({ nodeId: session.nodeId, brokerEpoch: String(session.brokerEpoch), reason }, 'lost the cluster session: no longer acting as leader, coordinator or controller; registering again');
      for (const l of [...this.lostListeners]) l(reason);
      this.startRejoin(session);
    });
    for (const l of [...this.startedListeners]) l(session);
  }

  private startRejoin(lost: BrokerSession): void {
    if (this.stopped || this.rejoining !== null) return;
    this.rejoining = this.rejoin(lost)
      .catch((err: unknown) => this.log.error({ err }, 'registering again failed unexpectedly; this broker stays out of the cluster until restarted'))
      .finally(() => {
        this.rejoining = null;
      });
  }

  /**
   * Kafka's broker, fenced, keeps sending its registration until it is taken:
   * so does this loop, with a backoff of 100 ms doubling up to
   * broker.session.timeout.ms, whatever the error. First it revokes the lost
   * lease (best effort: this process has stopped acting on it, and the
   * controller then moves its leadership without waiting for the expiry);
   * DUPLICATE_BROKER_REGISTRATION is expected while that lease still lives
   * (etcd could not be told), and is retried as soon as the image shows the
   * old registration gone. The new session starts once the image has caught
   * up with it; the broker epoch is the new registration's revision, larger
   * than any earlier one.
   */
  private async rejoin(lost: BrokerSession): Promise<void> {
    const registration = this.registration;
    if (registration === undefined) return;
    const clock = this.startup.clock;
    const since = clock.now();
    const maxBackoffMs = Math.max(REREGISTER_INITIAL_BACKOFF_MS, this.settings.session.sessionTimeoutMs);
    const revoke = (): Promise<boolean> =>
      lost.close().then(
        () => true,
        (err: unknown) => {
          this.log.info({ err: message(err) }, 'the lost session could not be revoked (its lease may have expired already); trying again while it blocks the registration');
          return false;
        },
      );
    let revoked = await revoke();
    for (let attempt = 1; !this.stopped; attempt++) {
      const backoffMs = Math.min(maxBackoffMs, REREGISTER_INITIAL_BACKOFF_MS * 2 ** Math.min(attempt - 1, 20));
      let session: BrokerSession;
      try {
        session = await this.store.registerBroker(registration, this.settings.session);
      } catch (e) {
        if (this.stopped) return;
        const duplicate = e instanceof DuplicateBrokerRegistrationError;
        const ours = duplicate && e.holder.incarnationId === registration.incarnationId;
        const detail = { nodeId: registration.nodeId, attempt, retryInMs: backoffMs, error: message(e) };
        if (duplicate && !ours) this.log.error(detail, 'cannot register again: another broker process holds this node.id; retrying');
        else if (ours) this.log.warn(detail, "cannot register again yet: this broker's lost registration has not expired; retrying");
        // etcd restarted renews every lease's time to live: revoking is then much quicker than waiting it out.
        if (ours && !revoked) revoked = await revoke();
        else this.log.warn(detail, 'cannot register again yet; retrying');
        await this.imageChangeOrTimeout(backoffMs, this.scheduler, duplicate);
        continue;
      }
      if (this.stopped) {
        await session.close().catch(() => undefined);
        return;
      }
      if (!(await this.caughtUp(session))) {
        if (this.stopped) await session.close().catch(() => undefined);
        continue; // lost again before it could be used: register once more
      }
      this.adopt(session);
      this.log.info(
        { nodeId: registration.nodeId, brokerEpoch: String(session.brokerEpoch), previousBrokerEpoch: String(lost.brokerEpoch), attempts: attempt, outOfClusterMs: clock.now() - since },
        'registered in the cluster again',
      );
      return;
    }
  }

  /**
   * Resolves after `ms`, on stop(), or (`onImageChange`) on the next image
   * change: the old registration's deletion arrives so.
   */
  private imageChangeOrTimeout(ms: number, scheduler: Scheduler, onImageChange = true): Promise<void> {
    return new Promise((resolve) => {
      let done = false;
      const finish = (): void => {
        if (done) return;
        done = true;
        scheduler.clearTimeout(timer);
        if (this.wakeRejoin === finish) this.wakeRejoin = null;
        const i = this.changeListeners.indexOf(finish);
        if (i >= 0) this.changeListeners.splice(i, 1);
        resolve();
      };
      const timer = scheduler.setTimeout(finish, ms);
      this.wakeRejoin = finish;
      if (onImageChange) this.changeListeners.push(finish);
    });
  }

  /** Deregisters (revokes the lease), ends a re-registration in progress, and stops following. Idempotent. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.signalStop();
    this.wakeRejoin?.();
    await this.rejoining;
    try {
      await this.sessionHandle?.close();
    } catch (e) {
      this.log.warn({ err: e }, 'could not revoke the cluster session; it ends when its lease expires');
    }
    await this.follower.close();
    await this.store.close();
  }
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** The cluster id the first existing meta.properties names, before anything is formatted. */
function storedClusterId(logDirs: readonly string[]): string | null {
  for (const dir of logDirs) {
    const file = path.join(dir, META_PROPERTIES_FILE);
    if (existsSync(file)) return decodeMetaProperties(readFileSync(file, 'utf8'), file).clusterId;
  }
  return null;
}

/** setTimeout that keeps the process alive (start-up retries). */
const keepAliveScheduler: Scheduler = (() => {
  const timers = new Map<number, NodeJS.Timeout>();
  let next = 1;
  return {
    setTimeout(fn: () => void, ms: number): TimerHandle {
      const id = next++;
      timers.set(id, setTimeout(() => {
        timers.delete(id);
        fn();
      }, Math.max(0, ms)));
      return { id };
    },
    clearTimeout(handle: TimerHandle): void {
      clearTimeout(timers.get(handle.id));
      timers.delete(handle.id);
    },
  };
})();
