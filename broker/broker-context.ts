// What handlers reach: the broker's parts, by role. The composition root
// (broker.ts) builds the real ones; tests may build smaller ones.
import type { ReadLease } from './common/read-buffer-pool.js';
import type { SendfileBinding } from './common/sendfile.js';
import type { Logger } from 'pino';
import type { BrokerConfig } from './config.js';
import type { BrokerConfigAdmin } from './cluster/cluster-broker-configs.js';
import type { Clock } from './common/clock.js';
import type { Records } from './protocol/record-parts.js';
import type { PartitionWaiters } from './partition-waiters.js';
import type { ProducerIdManager } from './producer-ids.js';
import type { TopicRecord, CreateTopicRequest, MutationOptions } from '../metadata/topics.js';
import type { TopicStore } from '../metadata/topic-store.js';
import type { AlterConfigOp } from '../metadata/config-alter.js';
import type { GroupCoordinator } from './group/group-coordinator.js';
import type { TxnCoordinator, TxnMarker } from './txn/txn-coordinator.js';
import type { FetchSessionCache } from './fetch/fetch-session-cache.js';
import type { ClusterView } from './cluster/cluster-view.js';
import type { ShareGroups } from './share/share-groups.js';
import type { ShareStateChannel } from './share/share-state-service.js';
import type { FetchRequest, FetchResponse } from './protocol/messages/fetch.js';
import type { ConsumerFetchStanding } from './replica/consumer-fetch.js';
import type { LowWatermarkResult } from './replica/replica-manager.js';

/** One producer of a partition's producer state, as DescribeProducers reports it. */
export interface ActiveProducer {
  readonly producerId: bigint;
  readonly producerEpoch: number;
  readonly lastSequence: number;
  readonly lastTimestamp: bigint;
  readonly coordinatorEpoch: number;
  /** First offset of the producer's open transaction, or -1. */
  readonly currentTxnStartOffset: bigint;
}

/** The partition-log operations the request handlers use. */
export interface PartitionView {
  readonly topic: string;
  readonly partition: number;
  readonly logStartOffset: bigint;
  readonly localLogStartOffset: bigint;
  readonly logEndOffset: bigint;
  readonly highWatermark: bigint;
  readonly lastStableOffset: bigint;
  readonly leaderEpoch: number;
  append(records: Buffer): Promise<{ baseOffset: bigint; lastOffset: bigint; logAppendTime: bigint; logStartOffset: bigint; duplicate: boolean }>;
  /**
   * Whole batches from `fetchOffset` (local or remote tier), never past maxOffset; possibly as several parts (never joined).
   * With `sendfile`, bytes in the page cache may come as a file region (FileRecords) instead: only for a socket that takes one.
   */
  read(fetchOffset: bigint, maxBytes: number, opts: { maxOffset: bigint; minOneBatch: boolean; signal?: AbortSignal; lease?: ReadLease; sendfile?: SendfileBinding }): Promise<{ records: Records | null; abortedTransactions: { producerId: bigint; firstOffset: bigint }[] }>;
  offsetForTimestamp(timestamp: bigint): Promise<{ offset: bigint; timestamp: bigint; leaderEpoch: number } | null>;
  maxTimestampOffset(): Promise<{ offset: bigint; timestamp: bigint; leaderEpoch: number } | null>;
  /** -5: the highest offset copied to the remote tier, or -1 when nothing is. */
  highestRemoteOffset(): bigint;
  /** -6 (KIP-1023): the first offset not yet copied to the remote tier, or -1 (see ListOffsets). */
  earliestPendingUploadOffset(): bigint;
  deleteRecordsBefore(offset: bigint): Promise<bigint>;
  /** cleanup.policy includes delete (DeleteRecords is refused with POLICY_VIOLATION otherwise). */
  readonly cleanupPolicyDelete: boolean;
  /** OffsetForLeaderEpoch: the end offset of `epoch` (the first offset of the next epoch, or the log end). */
  endOffsetForEpoch(epoch: number): { epoch: number; endOffset: bigint };
  /** DescribeProducers: the producers the partition's producer state holds. */
  activeProducers(): ActiveProducer[];
  /** Bytes of the local segments, and the log directory holding them. */
  readonly localSizeBytes: number;
  readonly logDir: string;
}

export interface TopicService {
  readonly store: TopicStore;
  partition(topic: string, partition: number): PartitionView | undefined;
  createTopic(request: CreateTopicRequest, options?: MutationOptions): Promise<TopicRecord>;
  deleteTopic(name: string): Promise<TopicRecord>;
  createPartitions(name: string, totalCount: number, options?: MutationOptions): Promise<TopicRecord>;
  alterConfigs(name: string, entries: readonly { name: string; value: string | null }[], options?: MutationOptions): Promise<TopicRecord>;
  incrementalAlterConfigs(name: string, ops: readonly AlterConfigOp[], options?: MutationOptions): Promise<TopicRecord>;
  isInternal(name: string): boolean;
}

/** Replication of the partitions with several replicas (a cluster; broker/replica/). */
export interface ReplicationService {
  /** A follower's Fetch (replica id >= 0). */
  answerReplicaFetch(req: FetchRequest, apiVersion: number, signal: AbortSignal, lease?: ReadLease): Promise<FetchResponse>;
  /** acks=all before the append: NOT_ENOUGH_REPLICAS when the ISR is below min.insync.replicas, else NONE. */
  checkEnoughReplicas(topic: string, partition: number): number;
  /** acks=all after the append: the error code to answer once the HW reaches `requiredOffset` (or the timeout passes). */
  awaitReplication(topic: string, partition: number, requiredOffset: bigint, timeoutMs: number): Promise<number>;
  /** A leader append happened (the HW may move at once). */
  appended(topic: string, partition: number): void;
  /**
   * DeleteRecords, after the leader moved its log start to `requiredOffset`: the
   * answer once the low watermark (the smallest log start over the leader and its
   * live followers) reaches it, or REQUEST_TIMED_OUT after `timeoutMs`; null for
   * a partition that is not replicated.
   */
  awaitLowWatermark(topic: string, partition: number, requiredOffset: bigint, timeoutMs: number): Promise<LowWatermarkResult> | null;
  /**
   * KIP-392: what this broker is for a consumer fetch of a replicated
   * partition (leader, follower, or neither); undefined when it holds no
   * replicated partition by that name (the leader-only rules apply).
   */
  consumerStanding(topic: string, partition: number): ConsumerFetchStanding | undefined;
  /** The replica a consumer of a partition this broker leads should fetch from (replica.selector.class, the Fetch rack_id), -1 for this leader. */
  preferredReadReplica(topic: string, partition: number, clientRack: string, fetchOffset: bigint): number;
}

/** One partition's reassignment in progress, as ListPartitionReassignments answers it. */
export interface OngoingReassignment {
  readonly partitionIndex: number;
  readonly replicas: readonly number[];
  readonly addingReplicas: readonly number[];
  readonly removingReplicas: readonly number[];
}

/** What the handlers of AlterPartitionReassignments and ListPartitionReassignments reach. */
export interface PartitionReassignments {
  /** Starts, replaces (target) or cancels (null) one partition's reassignment; KafkaError when refused. */
  alter(topic: string, partition: number, target: readonly number[] | null, allowReplicationFactorChange: boolean): Promise<void>;
  /** Ongoing reassignments of the named partitions (null: of every topic), topics without any left out. */
  list(topics: ReadonlyArray<{ readonly name: string; readonly partitionIndexes: readonly number[] }> | null): Array<{ name: string; partitions: OngoingReassignment[] }>;
}

/** IncrementalAlterConfigs on BROKER resources (a broker id, or '' for the cluster default). */
export interface DynamicBrokerConfigs {
  alter(resourceName: string, ops: readonly AlterConfigOp[], validateOnly: boolean): Promise<void>;
  /**
   * The dynamic configs as DescribeConfigs shows them for a broker id (its
   * value, source 2, else the cluster default, 3, else the default, 5) or for
   * '' (the cluster defaults that are set, 3), most specific synonym first.
   */
  describe(resourceName: string): Array<{ name: string; value: string; source: number; synonyms: Array<{ name: string; value: string; source: number }> }>;
}

export interface BrokerContext {
  readonly config: BrokerConfig;
  /** Dynamic broker configs of the config table (a cluster: AlterConfigs on BROKER resources); absent or null: static only, refused. */
  readonly dynamicConfig?: BrokerConfigAdmin | null;
  readonly nodeId: number;
  readonly clusterId: string;
  readonly advertised: { readonly host: string; readonly port: number };
  readonly clock: Clock;
  readonly log: Logger;
  readonly topics: TopicService;
  readonly waiters: PartitionWaiters;
  readonly producerIds: ProducerIdManager;
  readonly groups: GroupCoordinator;
  readonly txns: TxnCoordinator;
  /** Incremental fetch sessions (KIP-227); with no slots every fetch is sessionless. */
  readonly fetchSessions: FetchSessionCache;
  /** The cluster as this broker's metadata image shows it (etcd.connect); absent or null: the single broker. */
  readonly cluster?: ClusterView | null;
  /** Partition reassignments (KIP-455): the cluster's, or the single broker's (nothing to move); absent: not served. */
  readonly reassignments?: PartitionReassignments | null;
  /** Dynamic broker configs (a cluster: the replication throttle rates); absent or null: broker configs are static. */
  readonly brokerConfigs?: DynamicBrokerConfigs | null;
  /** Share groups (KIP-932); absent or null: not served (small test contexts). */
  readonly shareGroups?: ShareGroups | null;
  /** This broker's share coordinator as the inter-broker share-state requests (83-87) reach it; absent or null: not served. */
  readonly shareState?: ShareStateChannel | null;
  /** Replication (a cluster); absent or null: the single broker, nothing is replicated. */
  readonly replication?: ReplicationService | null;
  /** The coordinator of a group (key type 0) or transactional id (1); null: COORDINATOR_NOT_AVAILABLE. See GroupHandlerContext. */
  coordinatorNode(keyType: number, key: string): { readonly nodeId: number; readonly host: string; readonly port: number } | null;
  supportedApiVersions(): { apiKey: number; minVersion: number; maxVersion: number }[];
  /** Appends a transaction marker to a partition of this broker (WriteTxnMarkers from a coordinator). */
  readonly writeLocalTxnMarker?: (tp: { readonly topic: string; readonly partition: number }, marker: TxnMarker) => Promise<void>;
}
