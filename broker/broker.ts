// The composition root: config -> parts -> listeners. Start-up order: identity
// (meta.properties), topic store, partition logs (recovering after an unclean
// stop), internal topics, then the network. Shutdown reverses it and leaves
// checkpoints and the clean-shutdown marker.
import { sendfileSupport } from './common/sendfile.js';
import type { Logger } from 'pino';
import type { BrokerConfig } from './config.js';
import type { BrokerContext } from './broker-context.js';
import { systemClock, type Clock } from './common/clock.js';
import { systemScheduler, type Scheduler } from './common/scheduler.js';
import { PartitionWaiters } from './partition-waiters.js';
import { FetchSessionCache } from './fetch/fetch-session-cache.js';
import { PRODUCER_ID_BLOCK_SIZE, ProducerIdManager } from './producer-ids.js';
import { BrokerTopics } from './topic-service.js';
import { LogManager } from './log/log-manager.js';
import { Dispatcher } from './server/dispatcher.js';
import { KafkaListener } from './server/listener.js';
import { allHandlers } from './handlers/index.js';
import { InternalTopicLog } from './internal-topic-log.js';
import { GroupCoordinator } from './group/group-coordinator.js';
import { TxnCoordinator, type TxnMarker } from './txn/txn-coordinator.js';
import { localMarkerWriter } from './txn/local-marker-writer.js';
import { coordinatorReplicationWait, type CoordinatorReplicationDeps } from './replica/coordinator-replication.js';
import { ChunkCache } from '../remote-log/read/chunk-cache.js';
import { RemoteLogManager, remoteLogManagerConfig } from '../remote-log/remote-log-manager.js';
import { StorageWorkerPool, shareableStorageUrl, type StorageWorkerPoolOptions } from '../remote-log/workers/storage-worker-pool.js';
import { createRemoteStorage, parseRsmConfig, RSM_CONFIG_PREFIX } from '../remote-log/storage-url.js';
import { RemoteLogMetadataManager } from '../metadata/remote-log-metadata/index.js';
import { REMOTE_LOG_METADATA_TOPIC } from '../metadata/remote-log-metadata/metadata-topic-log.js';
import { BrokerMetrics } from './metrics/broker-metrics.js';
import { startHttpServer, type HttpServerHandle } from './http/http-server.js';
import { LogCleaner, logCleanerConfigFrom } from './log/cleaner/log-cleaner.js';
import { createLiveCostRoute, liveTopicsFrom } from './cost/live-cost.js';
import { TopicStore } from '../metadata/topic-store.js';
import { ensureMetaProperties } from '../metadata/meta-properties.js';
import { ClusterMembership } from './cluster-membership.js';
import type { ClusterMetadataStore } from '../metadata/cluster/store.js';
import { ClusterServing, coalescedPerTurn, collectedPerTurn } from './cluster/cluster-serving.js';
import { ClusterBrokerConfigs, layersFrom } from './cluster/cluster-broker-configs.js';
import { DynamicBrokerConfig } from './dynamic-broker-config.js';
import { SingleBrokerReassignments } from './cluster/cluster-reassignments.js';
import { cappedSpec, type InternalTopicSpec } from './cluster/coordinators.js';
import { TxnMarkerRouter } from './cluster/txn-markers.js';
import { ClusterMetadataTopicLog } from './cluster/remote-metadata-topic.js';
import { tieringLeadership } from './cluster/tiering-leadership.js';
import { SHARE_GROUP_STATE_TOPIC } from './share/share-coordinator.js';
import { buildShareCoordinator, startShareGroups } from './share/share-wiring.js';
import { shareStateService } from './share/share-state-service.js';
import { RoutedStatePersister } from './share/share-persister.js';
import { ShareStateRouting } from './cluster/share-state-routing.js';
import type { ShareGroups } from './share/share-groups.js';
import { consumerTopicsView } from './group/consumer/types.js';
import { TopicHashCache } from './group/consumer/metadata-hash.js';

export const CONSUMER_OFFSETS_TOPIC = '__consumer_offsets';
export { REMOTE_LOG_METADATA_TOPIC };
export const TRANSACTION_STATE_TOPIC = '__transaction_state';
export const INTERNAL_TOPICS: ReadonlySet<string> = new Set([CONSUMER_OFFSETS_TOPIC, REMOTE_LOG_METADATA_TOPIC, TRANSACTION_STATE_TOPIC, SHARE_GROUP_STATE_TOPIC]);

/** Bound of one inter-broker call (WriteTxnMarkers); the transaction coordinator retries after it. */
const INTER_BROKER_REQUEST_TIMEOUT_MS = 10_000;
/** How long a share-partition's state read or write keeps looking for its share coordinator (a failover takes broker.session.timeout.ms). */
const SHARE_PERSISTER_TIMEOUT_MS = 25_000;

export interface BrokerOptions {
  log: Logger;
  clock?: Clock;
  scheduler?: Scheduler;
  /** With etcd.connect: the cluster metadata store to use instead of etcd (the in-memory twin in tests). */
  metadataStore?: ClusterMetadataStore;
}

export class Broker {
  private listeners: KafkaListener[] = [];
  private stopped = false;

  private constructor(
    readonly config: BrokerConfig,
    readonly context: BrokerContext,
    readonly topics: BrokerTopics,
    private readonly logs: LogManager,
    private readonly groups: GroupCoordinator,
    private readonly txns: TxnCoordinator,
    readonly remoteLogManager: RemoteLogManager | null,
    readonly cleaner: LogCleaner,
    private readonly log: Logger,
  ) {}

  /** The port of the first listener (the bound one when configured as 0). */
  port = 0;
  /** The HTTP listener (metrics, JSON API, console); its port is `http.port`. */
  http: HttpServerHandle | null = null;
  /** Membership of an etcd cluster (etcd.connect), null for the single-broker default. */
  membership: ClusterMembership | null = null;
  /** Topic sync, cluster view and controller of a cluster member; null for the single broker. */
  cluster: ClusterServing | null = null;
  private markers: TxnMarkerRouter | null = null;
  private remoteMetadataLog: ClusterMetadataTopicLog | null = null;
  /** Share groups (KIP-932). */
  shareGroups: ShareGroups | null = null;
  shareRouting: ShareStateRouting | null = null;

  static async start(config: BrokerConfig, options: BrokerOptions): Promise<Broker> {
    // With etcd.connect, the cluster metadata store decides the cluster id before the log dirs are formatted.
    const membership = await ClusterMembership.connect(config, {
      log: options.log,
      clock: options.clock ?? systemClock,
      scheduler: options.scheduler ?? systemScheduler,
      ...(options.metadataStore === undefined ? {} : { store: options.metadataStore }),
    });
    try {
      return await Broker.build(config, options, membership);
    } catch (err) {
      // Its etcd client and watch would keep a failed start-up's process alive.
      await membership?.stop();
      throw err;
    }
  }

  private static async build(config: BrokerConfig, options: BrokerOptions, membership: ClusterMembership | null): Promise<Broker> {
    const log = options.log;
    const clock = options.clock ?? systemClock;
    const scheduler = options.scheduler ?? systemScheduler;
    const identity = await ensureMetaProperties(config.logDirs, { nodeId: config.nodeId, clusterId: membership?.clusterId ?? config.clusterId });
    const metaDir = config.logDirs[0]!;
    // Dynamic broker configs (a cluster): the image's layers are in force before any log opens.
    const dynamicConfig = new DynamicBrokerConfig(config);
    if (membership !== null) {
      try {
        dynamicConfig.apply(layersFrom(membership.image, config.nodeId));
      } catch (err) {
        log.error({ err: err instanceof Error ? err.message : String(err) }, 'dynamic broker configs in the cluster metadata do not validate; starting with the static configs');
      }
    }
    const store = await TopicStore.open(metaDir, dynamicConfig);
    // Tiered storage is built first (it only needs the config) so the log
    // manager can ask it before deleting a local segment.
    let rlm: RemoteLogManager | null = null;
    let tieringMetadataLog: ClusterMetadataTopicLog | null = null;
    const rsmConfig = Object.fromEntries(Object.entries(config.rsmConfig).map(([k, v]) => [RSM_CONFIG_PREFIX + k, v]));
    const storage = config.remoteLogStorageSystemEnable ? createRemoteStorage(config.remoteLogStorageUrl, rsmConfig) : null;
    const rsm = parseRsmConfig(rsmConfig);
    const logs = await LogManager.startup({
      logDirs: config.logDirs,
      clock,
      scheduler,
      logger: log.child({ component: 'log-manager' }),
      configFor: (topic) => store.logConfig(topic),
      retentionCheckIntervalMs: config.getLong('log.retention.check.interval.ms'),
      flushCheckIntervalMs: Math.min(config.getLong('log.flush.scheduler.interval.ms'), 1000),
      canDeleteSegment: (partitionLog, segment) => rlm === null || rlm.canDeleteLocalSegment(partitionLog, segment),
      shouldLoad: (topic, _partition, topicId) => {
        const t = store.get(topic);
        return t !== undefined && (topicId === null || topicId === t.topicId);
      },
      topicIdOf: (topic) => store.get(topic)?.topicId,
    });
    const topics = new BrokerTopics(store, logs, INTERNAL_TOPICS, log.child({ component: 'topics' }));
    // In a cluster every topic (the internal ones too, __remote_log_metadata included) comes from the image.
    await topics.ensureLogs(membership === null ? undefined : () => false);
    await ensureInternalTopics(config, topics, membership === null);
    const first = config.listeners[0]!;
    const advertisedConf = config.advertisedListeners[0] ?? first;
    const ownRack = config.getString('broker.rack');
    const ownRacks: readonly string[] = ownRack === null || ownRack === '' ? [] : [ownRack];
    const topicHashes = new TopicHashCache();
    const cluster = membership === null ? null : await ClusterServing.start({ membership, local: topics, config, scheduler, log, listenerName: advertisedConf.name });
    const brokerConfigs =
      membership === null
        ? null
        : new ClusterBrokerConfigs({
            store: membership.store,
            image: membership.image,
            dynamic: dynamicConfig,
            nodeId: config.nodeId,
            waitForRevision: (revision) => membership.waitForRevision(revision, 3 * config.getInt('etcd.request.timeout.ms')),
            onApplied: () => topics.reapplyConfigs(),
            log: log.child({ component: 'broker-configs' }),
          });
    if (brokerConfigs !== null) membership?.onImageChange(() => brokerConfigs.imageChanged());
    // In a cluster producer id blocks come from the cluster-wide counter in the metadata store.
    const producerIds =
      membership === null
        ? await ProducerIdManager.open(metaDir)
        : await ProducerIdManager.shared(metaDir, (atLeast) => membership.store.allocateProducerIds(config.nodeId, PRODUCER_ID_BLOCK_SIZE, atLeast));
    // In a cluster the coordinators serve the internal partitions this broker leads (ClusterCoordinators).
    const partitioned = cluster !== null;
    const epochOf = (topic: string) => (p: number) => cluster?.view.leaderEpoch(topic, p) ?? 0;
    const waiters = new PartitionWaiters(scheduler);
    // Set once replication starts (after the group coordinator, before any partition is loaded).
    const replicationRef: { current: Awaited<ReturnType<NonNullable<typeof cluster>['startReplication']>> | null } = { current: null };
    // A coordinator's record is answered once the ISR has it (Kafka's coordinator runtime waits for the high watermark).
    const internalReplication: CoordinatorReplicationDeps = {
      replication: () => replicationRef.current,
      logEndOffset: (topic, p) => logs.getLog(topic, p)?.logEndOffset,
      notify: (topic, p) => waiters.notify(topic, p),
    };
    const awaitInternalReplication = (topic: string, timeoutMs: () => number = () => INTER_BROKER_REQUEST_TIMEOUT_MS) => coordinatorReplicationWait(internalReplication, topic, timeoutMs);
    const offsetsLog = new InternalTopicLog(CONSUMER_OFFSETS_TOPIC, config.offsetsTopicNumPartitions, (p) => logs.getLog(CONSUMER_OFFSETS_TOPIC, p), clock, epochOf(CONSUMER_OFFSETS_TOPIC));
    const groups = new GroupCoordinator({
      log: offsetsLog,
      partitioned,
      ...(partitioned ? { committed: awaitInternalReplication(CONSUMER_OFFSETS_TOPIC, () => config.offsetCommitTimeoutMs) } : {}),
      clock,
      scheduler,
      logger: log.child({ component: 'group-coordinator' }),
      config: {
        offsetsTopicNumPartitions: config.offsetsTopicNumPartitions,
        groupMinSessionTimeoutMs: config.groupMinSessionTimeoutMs,
        groupMaxSessionTimeoutMs: config.groupMaxSessionTimeoutMs,
        groupInitialRebalanceDelayMs: config.groupInitialRebalanceDelayMs,
        groupMaxSize: config.groupMaxSize,
        offsetsRetentionMs: config.offsetsRetentionMs,
        offsetsRetentionCheckIntervalMs: config.offsetsRetentionCheckIntervalMs,
      },
      consumerConfig: config.consumerGroupConfig,
      // A local topic's one replica is this broker (as Metadata answers).
      topics: () => consumerTopicsView(store, (name) => topics.isInternal(name), (name, p) => cluster?.view.replicaRacks(name, p) ?? ownRacks, topicHashes),
    });
    await groups.start();
    const replication = cluster === null ? null : await cluster.startReplication(waiters, clock, () => dynamicConfig.current);
    replicationRef.current = replication;
    const writeLocalTxnMarker = localMarkerWriter({
      log: (topic, partition) => logs.getLog(topic, partition),
      leaderEpoch: (topic, partition) => cluster?.view.leaderEpoch(topic, partition) ?? 0,
      replication,
      notify: (topic, partition) => waiters.notify(topic, partition),
      now: () => clock.now(),
      timeoutMs: INTER_BROKER_REQUEST_TIMEOUT_MS,
    });
    // In a cluster a marker for a partition another broker leads goes there (WriteTxnMarkers).
    const markers = new TxnMarkerRouter({ view: cluster?.view ?? null, local: writeLocalTxnMarker, requestTimeoutMs: INTER_BROKER_REQUEST_TIMEOUT_MS, log: log.child({ component: 'txn-markers' }) });
    const txnPartitions = store.get(TRANSACTION_STATE_TOPIC)?.partitionCount ?? config.getInt('transaction.state.log.num.partitions');
    const txns = new TxnCoordinator({
      log: new InternalTopicLog(TRANSACTION_STATE_TOPIC, txnPartitions, (p) => logs.getLog(TRANSACTION_STATE_TOPIC, p), clock, epochOf(TRANSACTION_STATE_TOPIC)),
      partitioned,
      ...(partitioned ? { committed: awaitInternalReplication(TRANSACTION_STATE_TOPIC) } : {}),
      producerIds,
      writeMarker: (tp, marker) => markers.write(tp, marker),
      offsetsPartitionFor: (groupId) => groups.partitionFor(groupId),
      onTxnCompleted: (producerId, committed) => groups.completeTxnOffsets(producerId, committed),
      clock,
      scheduler,
      logger: log.child({ component: 'transaction-coordinator' }),
      config: {
        numPartitions: txnPartitions,
        maxTimeoutMs: config.getInt('transaction.max.timeout.ms'),
        abortTimedOutIntervalMs: config.getInt('transaction.abort.timed.out.transaction.cleanup.interval.ms'),
        idExpirationMs: config.getInt('transactional.id.expiration.ms'),
        removeExpiredIntervalMs: config.getInt('transaction.remove.expired.transaction.cleanup.interval.ms'),
      },
    });
    await txns.start();
    const shareCoordinator = buildShareCoordinator({
      config,
      clock,
      partitioned,
      stateLog: new InternalTopicLog(SHARE_GROUP_STATE_TOPIC, config.getInt('share.coordinator.state.topic.num.partitions'), (p) => logs.getLog(SHARE_GROUP_STATE_TOPIC, p), clock, epochOf(SHARE_GROUP_STATE_TOPIC)),
      // Alone: created on the first share-partition state written, as Kafka creates it when first needed.
      ...(partitioned
        ? { committed: awaitInternalReplication(SHARE_GROUP_STATE_TOPIC) }
        : {
            ensureStateTopic: async () => {
              if (topics.store.has(SHARE_GROUP_STATE_TOPIC)) return;
              const spec = shareStateTopicSpec(config);
              await topics.createTopic({ name: spec.name, numPartitions: spec.numPartitions, configs: { ...spec.configs } });
            },
          }),
    });
    cluster?.attachCoordinators({
      groups: { spec: offsetsTopicSpec(config), coordinator: groups },
      transactions: { spec: transactionTopicSpec(config), coordinator: txns },
      shares: { spec: shareStateTopicSpec(config), coordinator: shareCoordinator },
      hasLog: (topic, p) => logs.getLog(topic, p) !== undefined,
    });
    if (storage !== null) {
      // Alone, the broker's own __remote_log_metadata; in a cluster the cluster's, read and written at its partitions' leaders.
      const clusterMetadataLog =
        cluster === null
          ? null
          : new ClusterMetadataTopicLog({
              view: cluster.view,
              spec: remoteLogMetadataTopicSpec(config),
              createTopic: (spec) => cluster.topics.createInternalTopic(spec),
              requestTimeoutMs: INTER_BROKER_REQUEST_TIMEOUT_MS,
              log: log.child({ component: 'remote-log-metadata' }),
            });
      const metadataLog =
        clusterMetadataLog ?? new InternalTopicLog(REMOTE_LOG_METADATA_TOPIC, store.get(REMOTE_LOG_METADATA_TOPIC)!.partitionCount, (p) => logs.getLog(REMOTE_LOG_METADATA_TOPIC, p), clock);
      const metadata = new RemoteLogMetadataManager({ log: metadataLog });
      const workers = (threads: number, component: string, more: Partial<StorageWorkerPoolOptions>): StorageWorkerPool | undefined =>
        threads > 0 && shareableStorageUrl(config.remoteLogStorageUrl)
          ? new StorageWorkerPool({ url: config.remoteLogStorageUrl, rsmConfig, threads, logger: log.child({ component }), ...more })
          : undefined;
      // Fetch workers are sent each segment's manifest as this broker's storage has it (no second GET).
      const chunkSource = workers(rsm.fetchWorkerThreads, 'remote-fetch-workers', { nice: rsm.fetchWorkerNice, manifests: storage });
      const copier = workers(rsm.copyWorkerThreads, 'remote-copy-workers', { nice: rsm.copyWorkerNice });
      chunkSource?.warm();
      copier?.warm();
      rlm = RemoteLogManager.create({
        storage,
        ...(chunkSource === undefined ? {} : { chunkSource }),
        ...(copier === undefined ? {} : { copier }),
        metadata,
        clock,
        scheduler,
        logger: log.child({ component: 'remote-log-manager' }),
        brokerId: config.nodeId,
        config: remoteLogManagerConfig(config, rsm),
        // In a cluster only a partition's leader tiers it (KIP-405); the brokers share the bucket.
        ...(cluster === null ? {} : { leadership: tieringLeadership(config.nodeId, cluster.view, replication?.manager ?? null), replayAllOnStart: false, sweepUnmanagedPartitions: false }),
      });
      topics.attachTiering(rlm, rlm);
      await rlm.start();
      if (cluster !== null) {
        const tiering = rlm;
        // Only the topics whose leadership may have changed: a full walk per event was seconds of a
        // 10,000-partition broker's start-up (thousands of role events and sync passes).
        cluster.onTopicsSynced((topics) => {
          if (topics.size > 0) tiering.refreshLeadership(topics);
        });
        const roleChanged = collectedPerTurn<string>((topics) => tiering.refreshLeadership(topics));
        replication?.manager.onEvent((e) => {
          if (e.type === 'role') roleChanged(e.topic);
        });
        // A session's start or loss changes who may lead every partition (the view's liveness), not one topic.
        const refreshAll = coalescedPerTurn(() => tiering.refreshLeadership());
        membership?.onSessionLost(refreshAll);
        membership?.onSessionStarted(refreshAll);
        // Followers below the leader's local log start build their state from the remote tier.
        replication?.attachRemoteTier({
          remoteAuxState: (l, leaderLocalLogStartOffset, leaderEpoch) => tiering.remoteAuxState(l, leaderLocalLogStartOffset, leaderEpoch),
          logStartOffset: (l) => {
            try {
              return tiering.logStartOffset(l);
            } catch {
              // Its metadata not loaded yet: the local log start answers until it is.
              return null;
            }
          },
        });
        tieringMetadataLog = clusterMetadataLog;
      }
      log.info({ url: config.remoteLogStorageUrl, fetchWorkerThreads: chunkSource?.threads ?? 0, copyWorkerThreads: copier?.threads ?? 0 }, 'tiered storage started');
    }

    let dispatcher: Dispatcher<BrokerContext> | null = null;
    const advertised = { host: advertisedConf.host === '' ? '127.0.0.1' : advertisedConf.host, port: advertisedConf.port };
    const fetchSessions = new FetchSessionCache({ maxSlots: config.maxIncrementalFetchSessionCacheSlots, clock });
    const servedTopics = cluster?.topics ?? topics;
    const shareState = shareStateService(shareCoordinator);
    // In a cluster a share-partition's state is at its share coordinator, found as FindCoordinator key type 2 finds it.
    const shareRouting =
      cluster === null
        ? null
        : new ShareStateRouting({
            nodeId: config.nodeId,
            coordinatorFor: (key) => cluster.coordinatorFor('share', key),
            endpoint: (nodeId) => cluster.view.endpoint(nodeId),
            local: shareState,
            candidates: () => servedTopics.store.list().filter((t) => !topics.isInternal(t.name)).map((t) => ({ topicId: t.topicId, partitionCount: t.partitionCount })),
            requestTimeoutMs: INTER_BROKER_REQUEST_TIMEOUT_MS,
            log: log.child({ component: 'share-persister' }),
          });
    const sharePersister =
      shareRouting === null
        ? shareCoordinator
        : new RoutedStatePersister({ routing: shareRouting, clock, scheduler, log: log.child({ component: 'share-persister' }), timeoutMs: SHARE_PERSISTER_TIMEOUT_MS, backoffMs: 100, maxBackoffMs: 1000 });
    const { shareGroups } = await startShareGroups({
      config,
      clock,
      scheduler,
      log: log.child({ component: 'share-groups' }),
      metaDir,
      coordinator: shareCoordinator,
      persister: sharePersister,
      stateTopicExists: () => topics.store.has(SHARE_GROUP_STATE_TOPIC),
      store: servedTopics.store,
      partition: (t, p) => servedTopics.partition(t, p),
      cluster: cluster?.view ?? null,
      waiters,
      otherGroupExists: (groupId) => groups.groupState(groupId) !== null || groups.consumer.groups.has(groupId),
      groupConfigSource: cluster?.groupConfigs() ?? null,
      groups,
      onTopicDeleted: (listener) => topics.whenTopicDeleted((r) => listener(r.topicId)),
    });
    const context: BrokerContext = {
      config,
      dynamicConfig: brokerConfigs,
      nodeId: config.nodeId,
      clusterId: identity.clusterId,
      advertised,
      clock,
      log,
      topics: servedTopics,
      cluster: cluster?.view ?? null,
      reassignments: cluster?.reassignments ?? new SingleBrokerReassignments(config.nodeId, (t) => topics.store.get(t)?.partitionCount),
      brokerConfigs: cluster?.brokerConfigs ?? null,
      shareGroups,
      shareState,
      replication,
      waiters,
      producerIds,
      groups,
      txns,
      fetchSessions,
      coordinatorNode: (keyType, key) =>
        cluster === null ? { nodeId: config.nodeId, host: advertised.host, port: advertised.port } : cluster.coordinatorFor(keyType === 1 ? 'transaction' : keyType === 2 ? 'share' : 'group', key),
      supportedApiVersions: () => dispatcher?.supportedVersions() ?? [],
      writeLocalTxnMarker,
    };
    const replicationView = cluster?.replicationPart() ?? undefined;
    const parts = { topics, groups, remoteLogManager: rlm, fetchSessions, ...(replicationView === undefined ? {} : { replication: replicationView }) };
    const metrics = new BrokerMetrics(parts);
    dispatcher = new Dispatcher<BrokerContext>(metrics.instrument(allHandlers), context, metrics.requestObserver);
    const cleaner = LogCleaner.start({ logManager: logs, clock, scheduler, config: logCleanerConfigFrom(config), logger: log.child({ component: 'log-cleaner' }) });
    const broker = new Broker(config, context, topics, logs, groups, txns, rlm, cleaner, log);
    broker.remoteMetadataLog = tieringMetadataLog;
    broker.membership = membership;
    broker.cluster = cluster;
    broker.markers = markers;
    broker.shareGroups = shareGroups;
    broker.shareRouting = shareRouting;
    try {
      const costRoute = createLiveCostRoute({
        metricsText: () => metrics.registry.metrics(),
        topics: () => liveTopicsFrom(store.list(), (n) => store.logConfig(n), (n) => topics.isInternal(n)),
        rsm: {
          chunkSizeBytes: rsm.chunkSizeBytes,
          chunksPerGet: ChunkCache.sequentialChunksPerGet(rsm.chunkCachePrefetchChunks, rsm.chunkCacheFetchChunks),
          multipartThresholdBytes: rsm.s3.multipartThresholdBytes,
          partSizeBytes: rsm.s3.partSizeBytes,
        },
        clock,
      });
      broker.http = await startHttpServer({ ...parts, listeners: config.httpListeners, logger: log.child({ component: 'http' }), metrics, routes: { '/v1/cost': costRoute } });
    } catch (err) {
      // e.g. the HTTP port in use: stop what already runs so no timer keeps the process alive.
      await broker.stop();
      throw err;
    }
    for (const l of config.listeners) {
      const listener = new KafkaListener({ name: l.name, host: l.host, port: l.port }, dispatcher, config.getInt('socket.request.max.bytes'), log);
      const port = await listener.start();
      broker.listeners.push(listener);
      if (l === first) {
        broker.port = port;
        if (advertisedConf.port === 0 || config.advertisedListeners === config.listeners) advertised.port = port;
      }
    }
    if (membership !== null) {
      const bound = config.advertisedListeners.map((l, i) => (i === 0 ? { ...l, host: advertised.host, port: advertised.port } : l));
      try {
        // Its session-started event lets the cluster parts lead, coordinate and campaign (ClusterServing).
        await membership.register(config.nodeId, config.getString('broker.rack'), bound);
      } catch (err) {
        await broker.stop();
        throw err;
      }
    }
    log.info({ listeners: config.listeners.map((l) => `${l.name}://${l.host}:${l.port}`), port: broker.port, httpPort: broker.http.port, clusterId: identity.clusterId, nodeId: config.nodeId, logDirs: config.logDirs, sendfile: sendfileSupport !== null }, 'sediment broker started');
    return broker;
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    // Hand leadership over (controlled shutdown), then resign and deregister, so the cluster stops routing here while the rest closes.
    await this.cluster?.controlledShutdown();
    await this.cluster?.stop();
    await this.membership?.stop();
    for (const l of this.listeners) await l.stop();
    await this.http?.stop();
    await this.cleaner.stop();
    this.shareGroups?.close();
    this.shareRouting?.close();
    await this.txns.close();
    this.markers?.close();
    await this.groups.close();
    await this.remoteLogManager?.stop();
    this.remoteMetadataLog?.close();
    await this.logs.shutdown();
    await this.topics.store.flush();
  }
}

/** __consumer_offsets as Kafka creates it (offsets.topic.*); in a cluster with at most as many replicas as brokers. */
function offsetsTopicSpec(config: BrokerConfig): InternalTopicSpec {
  return {
    name: CONSUMER_OFFSETS_TOPIC,
    numPartitions: config.getInt('offsets.topic.num.partitions'),
    replicationFactor: config.getInt('offsets.topic.replication.factor'),
    capReplicationFactor: true,
    configs: { 'cleanup.policy': 'compact', 'compression.type': 'producer', 'segment.bytes': String(config.getInt('offsets.topic.segment.bytes')) },
  };
}

/** __transaction_state as Kafka creates it (transaction.state.log.*); in a cluster with at most as many replicas as brokers. */
function transactionTopicSpec(config: BrokerConfig): InternalTopicSpec {
  return {
    name: TRANSACTION_STATE_TOPIC,
    numPartitions: config.getInt('transaction.state.log.num.partitions'),
    replicationFactor: config.getInt('transaction.state.log.replication.factor'),
    capReplicationFactor: true,
    configs: {
      'cleanup.policy': 'compact',
      'compression.type': 'producer',
      'segment.bytes': String(config.getInt('transaction.state.log.segment.bytes')),
      'min.insync.replicas': String(config.getInt('transaction.state.log.min.isr')),
    },
  };
}

/** __share_group_state as Kafka creates it (share.coordinator.state.topic.*); in a cluster with at most as many replicas as brokers. */
function shareStateTopicSpec(config: BrokerConfig): InternalTopicSpec {
  return {
    name: SHARE_GROUP_STATE_TOPIC,
    numPartitions: config.getInt('share.coordinator.state.topic.num.partitions'),
    replicationFactor: config.getInt('share.coordinator.state.topic.replication.factor'),
    capReplicationFactor: true,
    configs: {
      'cleanup.policy': 'compact',
      'compression.type': 'producer',
      'segment.bytes': String(config.getInt('share.coordinator.state.topic.segment.bytes')),
      'min.insync.replicas': String(config.getInt('share.coordinator.state.topic.min.isr')),
    },
  };
}

/** __remote_log_metadata as Kafka's TopicBasedRemoteLogMetadataManager creates it (remote.log.metadata.topic.*). */
function remoteLogMetadataTopicSpec(config: BrokerConfig): InternalTopicSpec {
  return {
    name: REMOTE_LOG_METADATA_TOPIC,
    numPartitions: config.getInt('remote.log.metadata.topic.num.partitions'),
    replicationFactor: config.getInt('remote.log.metadata.topic.replication.factor'),
    configs: { 'cleanup.policy': 'delete', 'retention.ms': String(config.getLong('remote.log.metadata.topic.retention.ms')), 'remote.storage.enable': 'false' },
  };
}

/**
 * Alone, the broker creates its internal topics at start; in a cluster they
 * are the cluster's: the coordinator topics are created on first need
 * (ClusterCoordinators), __remote_log_metadata on the first remote segment
 * (ClusterMetadataTopicLog).
 */
async function ensureInternalTopics(config: BrokerConfig, topics: BrokerTopics, alone: boolean): Promise<void> {
  if (!alone) return;
  // One broker: one replica, and no min.insync.replicas above it.
  for (const spec of [offsetsTopicSpec(config), transactionTopicSpec(config)].map((s) => cappedSpec(s, 1))) {
    if (!topics.store.has(spec.name)) await topics.createTopic({ name: spec.name, numPartitions: spec.numPartitions, configs: { ...spec.configs } });
  }
  if (config.getBoolean('remote.log.storage.system.enable') && !topics.store.has(REMOTE_LOG_METADATA_TOPIC)) {
    const spec = remoteLogMetadataTopicSpec(config);
    await topics.createTopic({ name: spec.name, numPartitions: spec.numPartitions, configs: { ...spec.configs } });
  }
}
