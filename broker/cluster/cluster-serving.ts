// What a broker of an etcd cluster runs on top of its ClusterMembership: the
// topic sync (local topics and logs follow the image), the ClusterView the
// handlers read, the TopicService that writes admin changes to the store, the
// partition reassignments (AlterPartitionReassignments writes, the controller completes), and
// the controller (every broker runs one; the elected one acts), and the
// replication of partitions with several replicas (broker/replica/). Built only
// with etcd.connect; the single broker has none of it.
//
// The session drives them all: at each new session (the first registration,
// and every re-registration after a loss) this broker may lead, follow,
// coordinate, and run a controller bound to that session; at a loss all of
// it stops at once, and the controller of the lost session is dropped.
import type { Logger } from 'pino';
import { ClusterController } from '../../metadata/cluster/controller.js';
import type { BrokerConfig } from '../config.js';
import type { ClusterMembership } from '../cluster-membership.js';
import type { BrokerSession } from '../../metadata/cluster/store.js';
import type { Clock } from '../common/clock.js';
import type { Scheduler } from '../common/scheduler.js';
import type { BrokerTopics } from '../topic-service.js';
import type { PartitionWaiters } from '../partition-waiters.js';
import { Replication } from '../replica/replication.js';
import type { ReplicationPart } from '../metrics/replication-view.js';
import { ClusterReassignments } from './cluster-reassignments.js';
import { ClusterDynamicBrokerConfigs } from './dynamic-broker-configs.js';
import { ClusterTopics } from './cluster-topics.js';
import { ClusterCoordinators, type CoordinatorKind, type InternalTopicSpec, type PartitionedCoordinator } from './coordinators.js';
import type { NodeEndpoint } from './cluster-view.js';
import { replicationPart } from './replication-part.js';
import { ClusterView } from './cluster-view.js';
import { TopicSync } from './topic-sync.js';
import { clusterGroupConfigs } from './cluster-group-configs.js';
import type { GroupConfigSource } from '../share/share-group-configs.js';

export class ClusterServing {
  private controller: ClusterController | null = null;
  private stopped = false;
  private coordinators: ClusterCoordinators | null = null;
  private replicationService: Replication | null = null;

  private constructor(
    private readonly membership: ClusterMembership,
    readonly view: ClusterView,
    readonly topics: ClusterTopics,
    private readonly sync: TopicSync,
    private readonly config: BrokerConfig,
    private readonly scheduler: Scheduler,
    private readonly log: Logger,
    private readonly local: BrokerTopics,
    private readonly listenerName: string,
    readonly reassignments: ClusterReassignments,
    readonly brokerConfigs: ClusterDynamicBrokerConfigs,
  ) {}

  /**
   * Starts replication: roles follow the image, after every image change and
   * topic sync pass. `currentConfig`: the broker config in force now (dynamic
   * layers included), for the dynamic keys replication reads at each use.
   */
  async startReplication(waiters: PartitionWaiters, clock: Clock, currentConfig?: () => BrokerConfig): Promise<Replication> {
    if (this.replicationService !== null) return this.replicationService;
    const membership = this.membership;
    const replication = await Replication.start({
      nodeId: this.config.nodeId,
      brokerEpoch: () => membership.session?.brokerEpoch ?? -1n,
      image: membership.image,
      store: membership.store,
      logOf: (topic, partition) => this.local.partitionLog(topic, partition),
      minInsyncReplicas: (topic) => this.local.store.logConfig(topic).minInSyncReplicas,
      topicNameById: (topicId) => this.local.store.getById(topicId)?.name,
      waiters,
      listenerName: this.listenerName,
      config: this.config,
      ...(currentConfig === undefined ? {} : { currentConfig }),
      awaitSession: true,
      clock,
      scheduler: this.scheduler,
      log: this.log.child({ component: 'replication' }),
    });
    this.replicationService = replication;
    // A reconcile walks every partition of the image, and a burst of changes (a broker
    // back into 3,000 partitions) arrives as thousands of watch events: one reconcile
    // per event loop turn, after every change that arrived in it, not one per event.
    // The session's loss and start reach the manager through sessionLost/sessionStarted.
    const reconcile = coalescedPerTurn(() => replication.manager.reconcile());
    membership.onImageChange(reconcile);
    this.sync.onPass(reconcile);
    // A replica moved away stops fetching or leading before its log is deleted (at once, not coalesced).
    this.sync.beforeReplicaRemoved(() => replication.manager.reconcile());
    if (membership.session?.state === 'live') replication.manager.sessionStarted();
    return replication;
  }

  /** Called after every topic sync pass (the logs of the image's partitions are open), with the topics it brought in step. */
  onTopicsSynced(listener: (topics: ReadonlySet<string>) => void): void {
    this.sync.onPass(listener);
  }

  get replication(): Replication | null {
    return this.replicationService;
  }

  /** The replication picture for the metrics and the console; null until replication started. */
  replicationPart(): ReplicationPart | null {
    const r = this.replicationService;
    if (r === null) return null;
    return replicationPart({ nodeId: this.config.nodeId, image: this.membership.image, manager: r.manager, local: this.local, defaultMinIsr: this.config.getInt('min.insync.replicas') });
  }

  /** Brings the local topics in step with the image (before the listeners open) and starts following it. */
  static async start(options: {
    membership: ClusterMembership;
    local: BrokerTopics;
    config: BrokerConfig;
    scheduler: Scheduler;
    log: Logger;
    listenerName: string;
  }): Promise<ClusterServing> {
    const { membership, local, config, scheduler } = options;
    const log = options.log.child({ component: 'cluster' });
    const view = new ClusterView(membership.image, config.nodeId, options.listenerName);
    local.setLeaderEpochSource((topic, partition) => view.leaderEpoch(topic, partition));
    const sync = new TopicSync(local, membership.image, config.nodeId, scheduler, log);
    membership.onImageChange(() => sync.changed());
    await sync.syncNow();
    const topics = new ClusterTopics({
      local,
      store: membership.store,
      image: membership.image,
      sync,
      defaultReplicationFactor: config.getInt('default.replication.factor'),
      // An accepted change reaches this broker's image through the watch: a few etcd round trips.
      visibleWithinMs: 3 * config.getInt('etcd.request.timeout.ms'),
    });
    const reassignments = new ClusterReassignments({
      store: membership.store,
      image: membership.image,
      sync,
      uncleanLeaderElectionEnable: config.getBoolean('unclean.leader.election.enable'),
      visibleWithinMs: 3 * config.getInt('etcd.request.timeout.ms'),
    });
    const brokerConfigs = new ClusterDynamicBrokerConfigs({ store: membership.store, image: membership.image, sync, visibleWithinMs: 3 * config.getInt('etcd.request.timeout.ms') });
    const serving = new ClusterServing(membership, view, topics, sync, config, scheduler, log, local, options.listenerName, reassignments, brokerConfigs);
    membership.onSessionStarted((session) => serving.sessionStarted(session));
    membership.onSessionLost((reason) => serving.sessionLost(reason));
    membership.onImageChange(() => serving.controller?.imageChanged());
    return serving;
  }

  /**
   * Lets this broker's group, transaction and share coordinators (partitioned mode)
   * follow the leadership of the internal topics' partitions.
   */
  attachCoordinators(options: {
    readonly groups: { readonly spec: InternalTopicSpec; readonly coordinator: PartitionedCoordinator };
    readonly transactions: { readonly spec: InternalTopicSpec; readonly coordinator: PartitionedCoordinator };
    readonly shares?: { readonly spec: InternalTopicSpec; readonly coordinator: PartitionedCoordinator };
    readonly hasLog: (topic: string, partition: number) => boolean;
  }): void {
    const coordinators = new ClusterCoordinators({ nodeId: this.config.nodeId, view: this.view, topics: this.topics, ...options, log: this.log.child({ component: 'coordinators' }) });
    this.coordinators = coordinators;
    this.sync.onPass(() => coordinators.changed());
    if (this.membership.session?.state === 'live') coordinators.sessionStarted();
  }

  /** Share group configs in the cluster metadata (one copy for every broker). */
  groupConfigs(): GroupConfigSource {
    const visibleWithinMs = 3 * this.config.getInt('etcd.request.timeout.ms');
    return clusterGroupConfigs({ image: this.membership.image, store: this.membership.store, waitFor: (done, what) => this.sync.waitFor(done, visibleWithinMs, what) });
  }

  /** FindCoordinator's answer in a cluster (null: COORDINATOR_NOT_AVAILABLE). */
  coordinatorFor(kind: CoordinatorKind, key: string): NodeEndpoint | null {
    return this.coordinators?.coordinatorFor(kind, key) ?? null;
  }

  /**
   * A session started (registered, the image caught up with it): this broker
   * may lead and coordinate until that session is lost, and a controller
   * bound to it campaigns.
   */
  private sessionStarted(session: BrokerSession): void {
    if (this.stopped || session.state !== 'live') return;
    this.view.liveWhile(session);
    this.replicationService?.manager.sessionStarted();
    this.coordinators?.sessionStarted();
    this.startController(session);
  }

  /** The session was lost: nothing here may act on it any more; its controller is dropped. */
  private sessionLost(reason: string): void {
    this.view.setLive(false);
    this.replicationService?.manager.sessionLost();
    this.coordinators?.sessionLost();
    const old = this.controller;
    this.controller = null;
    void old?.stop(`the broker's session was lost (${reason})`);
  }

  /** A controller for this session (an election is bound to one session's lease). */
  private startController(session: BrokerSession): void {
    const previous = this.controller;
    this.controller = null;
    void previous?.stop();
    const controller = new ClusterController({
      store: this.membership.store,
      image: this.membership.image,
      session,
      scheduler: this.scheduler,
      config: {
        uncleanLeaderElectionEnable: this.config.getBoolean('unclean.leader.election.enable'),
        autoLeaderRebalanceEnable: this.config.getBoolean('auto.leader.rebalance.enable'),
        leaderImbalanceCheckIntervalMs: this.config.getLong('leader.imbalance.check.interval.seconds') * 1000,
        retryBackoffMs: 100,
      },
      onEvent: (e) => {
        switch (e.type) {
          case 'elected':
            this.log.info({ nodeId: e.controller.nodeId, brokerEpoch: String(e.controller.brokerEpoch), controllerEpoch: String(e.controller.controllerEpoch) }, 'this broker is now the controller');
            return;
          case 'resigned':
            this.log.warn({ reason: e.reason }, 'this broker is no longer the controller');
            return;
          case 'partition-changed':
            this.log.info({ topic: e.change.topic, partition: e.change.ref.partition, reason: e.change.reason, leader: e.change.proposal.leader, leaderEpoch: e.change.proposal.leaderEpoch, isr: e.change.proposal.isr }, 'partition leadership changed');
            return;
          case 'write-failed':
            this.log.warn({ topic: e.change?.topic, partition: e.change?.ref.partition, error: e.error }, 'controller write failed; retrying');
            return;
        }
      },
    });
    this.controller = controller;
    controller.start();
  }

  /**
   * Kafka's controlled shutdown (controlled.shutdown.enable): marks this
   * broker's registration as shutting down, then waits, at most
   * controlled.shutdown.max.retries times controlled.shutdown.retry.backoff.ms,
   * until it leads no partition that has another live in-sync replica to take
   * over (the controller, maybe this broker, moves them and takes it out of
   * ISRs). With RF=1 there is nothing to move and it returns at once. Returns
   * how many partitions it still leads that could have moved (0: clean).
   */
  async controlledShutdown(): Promise<number> {
    const session = this.membership.session;
    if (!this.config.getBoolean('controlled.shutdown.enable') || session === undefined || session.state !== 'live') return 0;
    const retries = this.config.getInt('controlled.shutdown.max.retries');
    const backoffMs = this.config.getLong('controlled.shutdown.retry.backoff.ms');
    const image = this.membership.image;
    const nodeId = this.config.nodeId;
    const movable = (): number => {
      const live = new Set(image.brokers().filter((b) => b.inControlledShutdown !== true).map((b) => b.nodeId));
      let n = 0;
      for (const ref of image.partitionsLedBy(nodeId)) {
        const s = image.partition(ref.topicId, ref.partition);
        if (s !== undefined && s.isr.some((r) => r !== nodeId && live.has(r))) n++;
      }
      return n;
    };
    const marked = (): boolean => image.broker(nodeId)?.inControlledShutdown === true;
    for (let attempt = 1; attempt <= retries; attempt++) {
      try {
        await this.membership.store.requestControlledShutdown(session);
        await this.sync.waitFor(() => marked() && movable() === 0, backoffMs, 'controlled shutdown');
        this.log.info({ attempt }, 'controlled shutdown: this broker leads no partition another in-sync replica could take');
        return 0;
      } catch (err) {
        this.log.warn({ attempt, retries, remaining: movable(), err: err instanceof Error ? err.message : String(err) }, 'controlled shutdown not complete yet');
      }
    }
    const remaining = movable();
    this.log.warn({ remaining }, 'controlled shutdown: stopping anyway after controlled.shutdown.max.retries attempts');
    return remaining;
  }

  get isController(): boolean {
    return this.controller?.isActive ?? false;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.sync.stop();
    await this.replicationService?.stop();
    await this.controller?.stop();
  }
}

/** `run` once in the next event loop turn (setImmediate), however many times the result is called before it. */
export function coalescedPerTurn(run: () => void): () => void {
  let pending = false;
  return () => {
    if (pending) return;
    pending = true;
    setImmediate(() => {
      pending = false;
      run();
    });
  };
}

/** `run` once in the next event loop turn with every key added before it (a Set), however many were. */
export function collectedPerTurn<K>(run: (keys: ReadonlySet<K>) => void): (key: K) => void {
  let pending: Set<K> | null = null;
  return (key) => {
    if (pending !== null) {
      pending.add(key);
      return;
    }
    const keys = new Set<K>([key]);
    pending = keys;
    setImmediate(() => {
      pending = null;
      run(keys);
    });
  };
}
