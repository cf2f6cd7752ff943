// What the request handlers reach of replication (BrokerContext.replication),
// and its wiring for a broker of a cluster: the ReplicaManager over the
// cluster image and store, broker-to-broker fetch connections built on the
// generated codecs (broker/cli/broker-connection.ts), configs by Kafka's names.
import type { ReadLease } from '../common/read-buffer-pool.js';
import type { Logger } from 'pino';
import type { MetadataImage } from '../../metadata/cluster/image.js';
import type { ClusterMetadataStore } from '../../metadata/cluster/store.js';
import type { ReplicationService } from '../broker-context.js';
import { BrokerConnection } from '../cli/broker-connection.js';
import type { Clock } from '../common/clock.js';
import type { Scheduler, TimerHandle } from '../common/scheduler.js';
import type { BrokerConfig } from '../config.js';
import type { PartitionLog } from '../log/partition-log.js';
import type { PartitionWaiters } from '../partition-waiters.js';
import type { FetchRequest, FetchResponse } from '../protocol/messages/fetch.js';
import { apis } from '../protocol/messages/index.js';
import { HighWatermarkCheckpoints } from './high-watermark-checkpoint.js';
import { answerReplicaFetch } from './leader-fetch.js';
import type { FetchConnection } from './replica-fetcher.js';
import { ReplicaManager, type LowWatermarkResult, type ReplicaManagerConfig } from './replica-manager.js';
import { logStartOverTiers, type LeaderLocalStart, type ReplicaRemoteTier } from './tier-state.js';
import { ErrorCode, KafkaError } from '../protocol/errors.js';
import { FOLLOWER_THROTTLED_RATE, FOLLOWER_THROTTLED_REPLICAS, LEADER_THROTTLED_RATE, LEADER_THROTTLED_REPLICAS, ReplicationQuota, parseRate, throttledOn } from './replication-quota.js';
import type { ConsumerFetchStanding } from './consumer-fetch.js';
import { preferredReadReplica, replicaSelectorKind, type ReplicaSelectorKind } from './replica-selector.js';

/**
 * The replication configs of a broker config (Kafka's names and defaults).
 * `current` is the config in force now (with the dynamic layers), for the keys
 * read at each use: follower.fetch.last.tiered.offset.enable.
 */
export function replicaManagerConfig(config: BrokerConfig, current: () => BrokerConfig = () => config): ReplicaManagerConfig & { socketTimeoutMs: number } {
  return {
    numReplicaFetchers: config.getInt('num.replica.fetchers'),
    replicaLagTimeMaxMs: config.getLong('replica.lag.time.max.ms'),
    fetchFromLastTieredOffset: () => current().getBoolean('follower.fetch.last.tiered.offset.enable'),
    socketTimeoutMs: config.getInt('replica.socket.timeout.ms'),
    fetch: {
      fetchMaxBytes: config.getInt('replica.fetch.max.bytes'),
      responseMaxBytes: config.getInt('replica.fetch.response.max.bytes'),
      waitMaxMs: config.getInt('replica.fetch.wait.max.ms'),
      minBytes: config.getInt('replica.fetch.min.bytes'),
      backoffMs: config.getInt('replica.fetch.backoff.ms'),
    },
  };
}

/** A Fetch connection to another broker (Fetch v12+: LastFetchedEpoch and DivergingEpoch are needed). */
export async function connectForReplicaFetch(host: string, port: number, clientId: string, timeoutMs: number): Promise<FetchConnection> {
  const conn = await BrokerConnection.connect(host, port, { clientId, timeoutMs });
  // -4 needs ListOffsets v8, -6 (KIP-1023) v11; Sediment's leaders serve both.
  const listOffset = async (topic: string, partition: number, currentLeaderEpoch: number, timestamp: bigint): Promise<LeaderLocalStart> => {
    const { body } = await conn.send(
      apis.ListOffsets,
      () => ({ replicaId: -1, isolationLevel: 0, topics: [{ name: topic, partitions: [{ partitionIndex: partition, currentLeaderEpoch, timestamp, maxNumOffsets: 1 }] }], timeoutMs: timeoutMs }),
      { min: timestamp === -6n ? 11 : timestamp === -4n ? 8 : 4 },
    );
    const p = body.topics[0]?.partitions[0];
    if (p === undefined || p.errorCode !== ErrorCode.NONE) throw new KafkaError(p?.errorCode ?? ErrorCode.UNKNOWN_SERVER_ERROR, `ListOffsets ${timestamp} of ${topic}-${partition} at the leader failed`);
    return { offset: p.offset, leaderEpoch: p.leaderEpoch };
  };
  return {
    fetch: async (build: (version: number) => FetchRequest): Promise<FetchResponse> => (await conn.send(apis.Fetch, build, { min: 12 })).body,
    earliestLocalOffset: (topic, partition, currentLeaderEpoch) => listOffset(topic, partition, currentLeaderEpoch, -4n),
    listOffset,
    close: () => conn.close(),
  };
}

export interface ReplicationOptions {
  readonly nodeId: number;
  readonly brokerEpoch: () => bigint;
  readonly image: MetadataImage;
  readonly store: ClusterMetadataStore;
  readonly logOf: (topic: string, partition: number) => PartitionLog | undefined;
  readonly minInsyncReplicas: (topic: string) => number;
  readonly topicNameById: (topicId: string) => string | undefined;
  readonly waiters: PartitionWaiters;
  readonly listenerName: string;
  readonly config: BrokerConfig;
  /** The config in force now (the static one with the dynamic layers over it); absent: `config`. */
  readonly currentConfig?: () => BrokerConfig;
  /** Roles wait for the cluster session (ReplicaManager.sessionStarted). */
  readonly awaitSession?: boolean;
  readonly clock: Clock;
  readonly scheduler: Scheduler;
  readonly log: Logger;
}

/**
 * The leader- or follower-side throttle of this broker: the rate from its
 * dynamic broker config (else the cluster-wide default), the throttled
 * replicas from each topic's config, both read from the image on every check.
 */
function quotaOf(image: MetadataImage, nodeId: number, clock: Clock, rateConfig: string, replicasConfig: string): ReplicationQuota {
  return new ReplicationQuota({
    clock,
    limit: () => parseRate(image.configs({ type: 'broker', nodeId }).get(rateConfig) ?? image.configs({ type: 'cluster' }).get(rateConfig)),
    throttled: (topic, partition) => throttledOn(image.topic(topic)?.configs[replicasConfig], partition, nodeId),
  });
}

export class Replication implements ReplicationService {
  readonly manager: ReplicaManager;
  /** leader.replication.throttled.rate over leader.replication.throttled.replicas. */
  readonly leaderQuota: ReplicationQuota;
  /** follower.replication.throttled.rate over follower.replication.throttled.replicas. */
  readonly followerQuota: ReplicationQuota;
  private readonly checkpoints = new HighWatermarkCheckpoints();
  private checkpointTimer: TimerHandle | null = null;
  private stopped = false;
  private remoteTier: ReplicaRemoteTier | null = null;

  /** Tiered storage, once the broker built it: the leader answers with the log start over both tiers, followers rebuild from it. */
  attachRemoteTier(tier: ReplicaRemoteTier): void {
    this.remoteTier = tier;
  }
  /** replica.selector.class (KIP-392). */
  readonly selector: ReplicaSelectorKind;

  /** Loads the HW checkpoints, then takes the roles of the image. */
  static async start(o: ReplicationOptions): Promise<Replication> {
    const r = new Replication(o);
    await r.checkpoints.load(o.config.logDirs);
    r.manager.start();
    r.scheduleCheckpoint();
    return r;
  }

  private scheduleCheckpoint(): void {
    if (this.stopped) return;
    this.checkpointTimer = this.o.scheduler.setTimeout(() => {
      this.checkpointTimer = null;
      this.checkpoints
        .write(this.manager.all().map((r) => r.log))
        .catch((err: unknown) => this.o.log.warn({ err }, 'could not write the replication-offset-checkpoint'))
        .finally(() => this.scheduleCheckpoint());
    }, this.o.config.getLong('replica.high.watermark.checkpoint.interval.ms'));
  }

  /** Stops fetching and leading, then checkpoints the HWs a last time. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.checkpointTimer !== null) this.o.scheduler.clearTimeout(this.checkpointTimer);
    const logs = this.manager.all().map((r) => r.log);
    await this.manager.stop();
    await this.checkpoints.write(logs).catch((err: unknown) => this.o.log.warn({ err }, 'could not write the replication-offset-checkpoint'));
  }

  private constructor(private readonly o: ReplicationOptions) {
    // The config's validator admits only the selectors replicaSelectorKind knows.
    this.selector = replicaSelectorKind(o.config.getString('replica.selector.class')) ?? 'none';
    const config = replicaManagerConfig(o.config, o.currentConfig);
    this.leaderQuota = quotaOf(o.image, o.nodeId, o.clock, LEADER_THROTTLED_RATE, LEADER_THROTTLED_REPLICAS);
    this.followerQuota = quotaOf(o.image, o.nodeId, o.clock, FOLLOWER_THROTTLED_RATE, FOLLOWER_THROTTLED_REPLICAS);
    this.manager = new ReplicaManager({
      nodeId: o.nodeId,
      brokerEpoch: o.brokerEpoch,
      image: o.image,
      store: o.store,
      logOf: o.logOf,
      minInsyncReplicas: o.minInsyncReplicas,
      notify: (topic, partition) => o.waiters.notify(topic, partition),
      connect: (host, port, clientId) => connectForReplicaFetch(host, port, clientId, config.socketTimeoutMs),
      listenerName: o.listenerName,
      config,
      initialHighWatermark: (log) => this.checkpoints.initial(log),
      remoteTier: () => this.remoteTier,
      followerQuota: this.followerQuota,
      ...(o.awaitSession === undefined ? {} : { awaitSession: o.awaitSession }),
      clock: o.clock,
      scheduler: o.scheduler,
      log: o.log,
    });
  }

  answerReplicaFetch(req: FetchRequest, apiVersion: number, signal: AbortSignal, lease?: ReadLease): Promise<FetchResponse> {
    return answerReplicaFetch(
      {
        replicas: this.manager,
        waiters: this.o.waiters,
        clock: this.o.clock,
        topicNameById: this.o.topicNameById,
        logStartOffset: (log) => logStartOverTiers(log, this.remoteTier),
        quota: this.leaderQuota,
        currentLeader: (topic, partition) => {
          const t = this.o.image.topic(topic);
          const s = t === undefined ? undefined : this.o.image.partition(t.topicId, partition);
          return s === undefined ? undefined : { leaderId: s.leader, leaderEpoch: s.leaderEpoch };
        },
      },
      req,
      apiVersion,
      signal,
      lease,
    );
  }

  checkEnoughReplicas(topic: string, partition: number): number {
    return this.manager.checkEnoughReplicas(topic, partition);
  }

  awaitReplication(topic: string, partition: number, requiredOffset: bigint, timeoutMs: number): Promise<number> {
    return this.manager.awaitReplication(topic, partition, requiredOffset, timeoutMs);
  }

  appended(topic: string, partition: number): void {
    this.manager.appended(topic, partition);
  }

  awaitLowWatermark(topic: string, partition: number, requiredOffset: bigint, timeoutMs: number): Promise<LowWatermarkResult> | null {
    return this.manager.awaitLowWatermark(topic, partition, requiredOffset, timeoutMs);
  }

  consumerStanding(topic: string, partition: number): ConsumerFetchStanding | undefined {
    return this.manager.consumerStanding(topic, partition);
  }

  preferredReadReplica(topic: string, partition: number, clientRack: string, fetchOffset: bigint): number {
    if (this.selector === 'none') return -1;
    const replicas = this.manager.replicaViews(topic, partition);
    if (replicas === undefined) return -1;
    return preferredReadReplica({ selector: this.selector, leaderId: this.o.nodeId, replicas, clientRack, fetchOffset });
  }
}
