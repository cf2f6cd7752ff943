// A broker's membership of an etcd cluster (etcd.connect set): the metadata
// store, this broker's registration and lease, and the image kept current from
// etcd. Without etcd.connect there is none and the broker is the single broker
// it always was. Start-up: connect() before the log dirs are formatted (the
// store decides the cluster id), register() once the listeners are bound (the
// registration carries their ports).
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import type { BrokerConfig, ListenerConfig } from './config.js';
import type { Clock } from './common/clock.js';
import { ErrorCode, KafkaError } from './protocol/errors.js';
import { systemScheduler, type Scheduler, type TimerHandle } from './common/scheduler.js';
import { EtcdClusterMetadataStore } from '../metadata/cluster/etcd-store.js';
import { etcdSettingsFrom, type EtcdClusterSettings } from '../metadata/cluster/etcd-config.js';
import { MetadataImageFollower } from '../metadata/cluster/image-follower.js';
import type { MetadataImage } from '../metadata/cluster/image.js';
import type { BrokerEndpoint } from '../metadata/cluster/records.js';
import { retryUnavailable, type StartupOptions } from '../metadata/cluster/startup.js';
import type { BrokerSession, ClusterMetadataStore } from '../metadata/cluster/store.js';
import { decodeMetaProperties, META_PROPERTIES_FILE } from '../metadata/meta-properties.js';
import { randomUuid } from '../metadata/uuid.js';

/** Wait between attempts to register again after a lost session. */
const REJOIN_BACKOFF_MS = 1000;

export class ClusterMembership {
  private sessionHandle: BrokerSession | undefined;
  private readonly lostListeners: Array<(reason: string) => void> = [];
  private readonly sessionListeners: Array<(session: BrokerSession) => void> = [];
  private registration: { readonly nodeId: number; readonly rack: string | null; readonly listeners: readonly ListenerConfig[]; readonly incarnationId: string } | undefined;
  private stopped = false;

  private constructor(
    private readonly changeListeners: Array<() => void>,
    readonly store: ClusterMetadataStore,
    readonly clusterId: string,
    private readonly follower: MetadataImageFollower,
    private readonly settings: EtcdClusterSettings,
    private readonly startup: StartupOptions,
    private readonly log: Logger,
  ) {}

  /**
   * Null without etcd.connect. Otherwise reaches etcd (retrying for
   * etcd.connection.timeout.ms), checks the layout and the cluster id against
   * the log dirs' meta.properties, and loads the image.
   */
  static async connect(config: BrokerConfig, options: { log: Logger; clock: Clock; scheduler: Scheduler }): Promise<ClusterMembership | null> {
    const settings = etcdSettingsFrom(config);
    if (settings === null) return null;
    const log = options.log.child({ component: 'cluster-metadata' });
    const store = new EtcdClusterMetadataStore({ ...settings.store, clock: options.clock, scheduler: options.scheduler });
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
          for (const l of changeListeners) l();
        },
        onReload: (reason) => {
          log.warn({ reason }, 'cluster metadata image reloaded');
          for (const l of changeListeners) l();
        },
        onProblem: (problem) => log.warn(problem),
        onConnectionChange: (connected) => (connected ? log.info(`watching ${store.description} again`) : log.warn(`lost the watch connection to ${store.description}`)),
      });
      await retryUnavailable(store, 'load the cluster metadata', () => follower.start(), startup);
      log.info({ store: store.description, clusterId, revision: String(follower.image.revision) }, 'cluster metadata loaded');
      return new ClusterMembership(changeListeners, store, clusterId, follower, settings, startup, log);
    } catch (e) {
      await store.close();
      throw e;
    }
  }

  get image(): MetadataImage {
    return this.follower.image;
  }

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

  /** Called each time this broker's session is lost: it must stop acting as leader or coordinator. */
  onSessionLost(listener: (reason: string) => void): void {
    this.lostListeners.push(listener);
  }

  /** Called after each registration, the first one and those after a lost session (a new broker epoch each time). */
  onSessionStarted(listener: (session: BrokerSession) => void): void {
    this.sessionListeners.push(listener);
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
    // One incarnation id per process, as Kafka's: a registration after a lost session keeps it.
    const incarnationId = this.registration?.incarnationId ?? randomUuid();
    this.registration = { nodeId, rack, listeners, incarnationId };
    const endpoints: BrokerEndpoint[] = listeners.map((l) => ({ name: l.name, host: l.host, port: l.port, securityProtocol: l.securityProtocol }));
    const registration = { nodeId, incarnationId, rack, endpoints };
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
        await this.imageChangeOrTimeout(Math.min(500, Math.max(0, deadline - clock.now())));
      }
    }
    if (this.stopped) {
      await session.close().catch(() => undefined);
      return session;
    }
    this.sessionHandle = session;
    session.onLost((reason) => {
      this.log.error({ nodeId, brokerEpoch: String(session.brokerEpoch), reason }, 'lost the cluster session: no longer acting as leader or coordinator');
      for (const l of this.lostListeners) l(reason);
      void this.rejoin(session);
    });
    this.log.info({ nodeId, brokerEpoch: String(session.brokerEpoch), endpoints: endpoints.map((e) => `${e.name}://${e.host}:${e.port}`) }, 'registered in the cluster');
    for (const l of this.sessionListeners) l(session);
    return session;
  }

  /**
   * After a lost session, as Kafka's broker after it is fenced: revoke the old
   * lease if etcd can be reached (its registration goes now, not at expiry),
   * then register again, with a new broker epoch, retrying until it works or
   * the broker stops. Leadership comes back through the controller, at a new
   * leader epoch, as for a restarted broker.
   */
  private async rejoin(lost: BrokerSession): Promise<void> {
    const reg = this.registration;
    if (reg === undefined) return;
    const clock = this.startup.clock;
    // Past the lease's time to live (rounded up as etcd does, plus a heartbeat) the old registration is gone anyway.
    const { sessionTimeoutMs, heartbeatIntervalMs } = this.settings.session;
    const revokeUntil = clock.now() + Math.ceil(sessionTimeoutMs / 1000) * 1000 + heartbeatIntervalMs;
    let revoked = false;
    for (let attempt = 1; !this.stopped; attempt++) {
      if (!revoked && clock.now() < revokeUntil) {
        revoked = await lost.close().then(() => true, () => false);
        if (!revoked) {
          await new Promise<void>((resolve) => this.startup.scheduler.setTimeout(resolve, REJOIN_BACKOFF_MS));
          continue;
        }
      }
      try {
        this.log.info({ nodeId: reg.nodeId, attempt }, 'registering again after the lost session');
        await this.register(reg.nodeId, reg.rack, reg.listeners);
        return;
      } catch (e) {
        this.log.warn({ nodeId: reg.nodeId, attempt, err: e instanceof Error ? e.message : String(e) }, 'could not register again yet; retrying');
        await new Promise<void>((resolve) => this.startup.scheduler.setTimeout(resolve, REJOIN_BACKOFF_MS));
      }
    }
  }

  /** Resolves on the next image change (the old registration's deletion arrives so) or after `ms`. */
  private imageChangeOrTimeout(ms: number): Promise<void> {
    return new Promise((resolve) => {
      let done = false;
      const finish = (): void => {
        if (done) return;
        done = true;
        this.startup.scheduler.clearTimeout(timer);
        const i = this.changeListeners.indexOf(finish);
        if (i >= 0) this.changeListeners.splice(i, 1);
        resolve();
      };
      const timer = this.startup.scheduler.setTimeout(finish, ms);
      this.changeListeners.push(finish);
    });
  }

  /** Deregisters (revokes the lease) and stops following. Idempotent. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    try {
      await this.sessionHandle?.close();
    } catch (e) {
      this.log.warn({ err: e }, 'could not revoke the cluster session; it ends when its lease expires');
    }
    await this.follower.close();
    await this.store.close();
  }
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
