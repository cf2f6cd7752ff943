// The port for cluster metadata: what a broker and the controller read and
// change in the shared store. Implementations: EtcdClusterMetadataStore (the
// real one, etcd-store.ts) and MemoryClusterMetadataStore (the twin,
// memory-store.ts); test/metadata/cluster/store.contract.ts holds them to the
// same behaviour. Request paths never call this: they read a MetadataImage that
// a MetadataImageFollower keeps current from load() and watch().
//
// Every change is a transaction guarded by what the writer last read, so a
// stale writer is refused instead of overwriting (fencing). Failures are
// KafkaErrors (errors.ts): an unreachable store is MetadataStoreUnavailableError
// (REQUEST_TIMED_OUT, retriable).
import type {
  BrokerRegistration,
  ConfigResource,
  ControllerRecord,
  MetadataChange,
  MetadataSnapshot,
  PartitionProposal,
  PartitionState,
  TopicPartitionRef,
  TopicRecord,
} from './records.js';

export interface InitializeOptions {
  /** Written as the cluster id when the store is empty. */
  readonly proposedClusterId: string;
  /** When set (meta.properties names a cluster), a store of another cluster is refused (InconsistentClusterIdError). */
  readonly expectedClusterId?: string;
}

export interface SessionOptions {
  /** broker.session.timeout.ms: the lease's time to live (etcd rounds it up to whole seconds). */
  readonly sessionTimeoutMs: number;
  /** broker.heartbeat.interval.ms: how often the lease is kept alive. */
  readonly heartbeatIntervalMs: number;
}

export type SessionState = 'live' | 'lost' | 'closed';

/**
 * A broker's registration and the lease it is bound to. The session counts as
 * lost as soon as this broker can no longer be sure the lease is alive at the
 * store: no keepalive acknowledged within sessionTimeoutMs of being sent, or
 * the store saying the lease is gone. That happens no later than the store
 * expires the lease, so a broker that acts on `onLost` (stops leading, stops
 * coordinating) has stopped before another broker can be given its partitions.
 * A lost session never comes back: register again (ClusterMembership does).
 */
export interface BrokerSession {
  readonly nodeId: number;
  /** Kafka's broker epoch: the store revision that created this registration. */
  readonly brokerEpoch: bigint;
  readonly state: SessionState;
  /** Called once, with the reason, when the session is lost (not on close()). Called at once if already lost. */
  onLost(listener: (reason: string) => void): void;
  /** Revokes the lease: the registration disappears now instead of at expiry. A lost session may be closed too (best effort: its lease may be gone). */
  close(): Promise<void>;
}

export interface WatchListener {
  /** The changes of one store revision, in revision order, each revision once. */
  onChanges(revision: bigint, changes: readonly MetadataChange[]): void;
  /**
   * The revision to resume from was compacted away: the watch has ended and
   * the reader must load() again and watch from the snapshot's revision.
   */
  onCompacted(compactRevision: bigint): void;
  /** A key/value that could not be decoded (skipped). */
  onInvalid?(problem: string): void;
  /** Lost and regained connection; after a reconnect the watch resumes after the last revision delivered. */
  onConnectionChange?(connected: boolean): void;
}

export interface MetadataWatch {
  close(): Promise<void>;
}

export interface ClusterMetadataStore {
  /** For log lines and errors: `etcd 127.0.0.1:2379/sediment`, `memory`. */
  readonly description: string;

  /**
   * Checks the layout version (IncompatibleLayoutError if another), writes the
   * layout and cluster id into an empty store, and returns the cluster id.
   */
  initialize(options: InitializeOptions): Promise<string>;

  /** Every record at one revision. */
  load(): Promise<MetadataSnapshot>;

  /** Delivers every change after `afterRevision` (a snapshot's revision), resuming itself across reconnects. */
  watch(afterRevision: bigint, listener: WatchListener): MetadataWatch;

  /**
   * Registers this broker under a new lease kept alive by the returned session.
   * DuplicateBrokerRegistrationError (naming the holder) when a live broker
   * holds the node id.
   */
  registerBroker(registration: BrokerRegistration, options: SessionOptions): Promise<BrokerSession>;

  /**
   * Creates a topic with its partitions (index = partition id, partitionEpoch 0).
   * TOPIC_ALREADY_EXISTS when the name is taken. Returns the revision of the commit.
   */
  createTopic(topic: TopicRecord, partitions: readonly PartitionProposal[]): Promise<bigint>;

  /** Deletes the topic and its partitions; UNKNOWN_TOPIC_ID when the name no longer holds this id. */
  deleteTopic(name: string, topicId: string): Promise<void>;

  /**
   * Adds partitions [topic.partitionCount, topic.partitionCount + added.length)
   * to a topic whose record still has `expectedCount` partitions
   * (INVALID_UPDATE_VERSION otherwise). Returns the new record.
   */
  createPartitions(name: string, topicId: string, expectedCount: number, added: readonly PartitionProposal[]): Promise<TopicRecord>;

  /** Replaces a topic's config overrides; UNKNOWN_TOPIC_ID when the name no longer holds this id. */
  alterTopicConfigs(name: string, topicId: string, configs: Readonly<Record<string, string>>): Promise<TopicRecord>;

  /**
   * Compare-and-swap of one partition, as Kafka's AlterPartition: the writer
   * names the leader epoch and partition epoch it based its proposal on.
   * FENCED_LEADER_EPOCH when the leader epoch is not the current one,
   * INVALID_UPDATE_VERSION when the partition epoch is not, INVALID_REQUEST
   * when the proposal moves the leader epoch backwards or changes the leader
   * without raising it, UNKNOWN_TOPIC_ID when there is no such partition.
   * Returns the new state (partitionEpoch + 1).
   */
  alterPartition(
    ref: TopicPartitionRef,
    expected: { readonly leaderEpoch: number; readonly partitionEpoch: number },
    proposal: PartitionProposal,
  ): Promise<PartitionState>;

  /**
   * Kafka's AllocateProducerIds: hands `nodeId` the next block of `blockSize`
   * producer ids, cluster-wide, by compare-and-swap on one key holding the
   * next block's start. No id is ever in two blocks. `atLeast` raises the
   * block's start (ids this broker handed out before it used the shared
   * counter). Returns the block's first id.
   */
  allocateProducerIds(nodeId: number, blockSize: number, atLeast?: bigint): Promise<bigint>;

  /**
   * Sets (string) or removes (null) dynamic configs of a broker or the cluster,
   * in one transaction. Returns the revision of the commit (for waitForRevision),
   * 0 when there was nothing to change.
   */
  alterConfigs(resource: ConfigResource, changes: Readonly<Record<string, string | null>>): Promise<bigint>;

  /**
   * Lease-bound controller election: puts the `controller` key under this
   * broker's session lease if no controller holds it. Returns the record when
   * this session holds it (just won, or already held), null when another
   * broker does. The key disappears with the session's lease, so a controller
   * whose broker's session ends is replaced by the next campaign; watchers see
   * the change as a 'controller' MetadataChange (the image's controller).
   * A session not created by this store, or no longer live, is refused.
   */
  campaignController(session: BrokerSession): Promise<ControllerRecord | null>;

  /**
   * Controlled shutdown: marks this session's registration inControlledShutdown
   * (same key, same lease), for the controller to move its leadership away.
   * NOT_CONTROLLER-free: any live session may; a session that is no longer
   * live, or whose registration is gone, is refused (STALE_BROKER_EPOCH).
   */
  requestControlledShutdown(session: BrokerSession): Promise<void>;

  /** Gives up the controller key if this session holds it (no-op otherwise). */
  resignController(session: BrokerSession): Promise<void>;

  /** Ends sessions' keepalives and watches; registrations stay until their leases expire unless closed first. */
  close(): Promise<void>;
}
