// Group, transaction and share coordination in a cluster follows the
// leadership of the internal topics' partitions, as in Kafka: the coordinator
// of a group is the leader of __consumer_offsets partition
// abs(hash(groupId)) % partitions (Java String.hashCode), of a transactional
// id the leader of its __transaction_state partition, of a share-partition
// "groupId:topicId:partition" the leader of its __share_group_state partition.
// This module answers FindCoordinator from the image, creates the topics on
// first need (with their configured replication factor capped to the
// registered brokers: offsets.topic.replication.factor,
// transaction.state.log.replication.factor and
// share.coordinator.state.topic.replication.factor, 3 by default), and tells this broker's
// coordinators to load the partitions it has come to lead (their state is in
// those partitions' logs) and to unload the ones it no longer leads. It reads
// leadership from the image only (leader == this node, at the image's leader
// epoch), never from the replication layer's state.
//
// Driven level-triggered: every image change, after the topic sync has opened
// the logs, recomputes the whole wanted set; a failed load is retried on the
// next change. A lost cluster session unloads everything at once: a broker
// that may have been replaced must stop coordinating, until its next session
// (it registered again) loads what it then leads.
import type { Logger } from 'pino';
import { partitionForGroup } from '../group/offsets-topic.js';
import { ErrorCode, KafkaError } from '../protocol/errors.js';
import type { ClusterTopics } from './cluster-topics.js';
import type { ClusterView, NodeEndpoint } from './cluster-view.js';

/** What a coordinator offers to the leadership driver (GroupCoordinator, TxnCoordinator and ShareCoordinator in partitioned mode). */
export interface PartitionedCoordinator {
  /** `leaderEpoch`: the partition's leader epoch, the coordinator epoch of what it writes (Kafka's). */
  loadPartition(partition: number, leaderEpoch: number): Promise<void>;
  unloadPartition(partition: number): void;
}

export interface InternalTopicSpec {
  readonly name: string;
  readonly numPartitions: number;
  /** offsets.topic.replication.factor / transaction.state.log.replication.factor */
  readonly replicationFactor: number;
  /** Create with at most as many replicas as there are registered brokers (the coordinator topics). */
  readonly capReplicationFactor?: boolean;
  readonly configs: Readonly<Record<string, string>>;
}

export type CoordinatorKind = 'group' | 'transaction' | 'share';

interface Coordinated {
  readonly spec: InternalTopicSpec;
  readonly coordinator: PartitionedCoordinator;
  /** Partition -> the leader epoch it was loaded at. */
  readonly loaded: Map<number, number>;
  creating: Promise<void> | null;
}

/** The spec with at most `brokers` replicas, and a min.insync.replicas no higher than them. */
export function cappedSpec(spec: InternalTopicSpec, brokers: number): InternalTopicSpec {
  const replicationFactor = Math.max(1, Math.min(spec.replicationFactor, brokers));
  const minIsr = spec.configs['min.insync.replicas'];
  const configs = minIsr !== undefined && Number(minIsr) > replicationFactor ? { ...spec.configs, 'min.insync.replicas': String(replicationFactor) } : spec.configs;
  return { ...spec, replicationFactor, configs };
}

export class ClusterCoordinators {
  private readonly kinds: Partial<Record<CoordinatorKind, Coordinated>>;
  /** False until this broker is registered, and again once its session is lost. */
  private live = false;

  constructor(
    private readonly o: {
      readonly nodeId: number;
      readonly view: ClusterView;
      readonly topics: Pick<ClusterTopics, 'createInternalTopic'>;
      /** Whether this broker has the partition's log open (the topic sync opens it before we load). */
      readonly hasLog: (topic: string, partition: number) => boolean;
      readonly groups: { readonly spec: InternalTopicSpec; readonly coordinator: PartitionedCoordinator };
      readonly transactions: { readonly spec: InternalTopicSpec; readonly coordinator: PartitionedCoordinator };
      /** The share coordinator (__share_group_state); absent: share-partition keys have no coordinator. */
      readonly shares?: { readonly spec: InternalTopicSpec; readonly coordinator: PartitionedCoordinator };
      readonly log: Logger;
    },
  ) {
    this.kinds = {
      group: { ...o.groups, loaded: new Map(), creating: null },
      transaction: { ...o.transactions, loaded: new Map(), creating: null },
      ...(o.shares === undefined ? {} : { share: { ...o.shares, loaded: new Map(), creating: null } }),
    };
  }

  /**
   * FindCoordinator: the leader of the key's partition, or null
   * (COORDINATOR_NOT_AVAILABLE, retriable) while it has none, or while the
   * topic does not exist yet, in which case its creation is started.
   */
  coordinatorFor(kind: CoordinatorKind, key: string): NodeEndpoint | null {
    const k = this.kinds[kind];
    if (k === undefined) return null;
    const count = this.o.view.partitionCount(k.spec.name);
    if (count === undefined) {
      this.create(k);
      return null;
    }
    const state = this.o.view.partition(k.spec.name, partitionForGroup(key, k.spec.numPartitions));
    if (state === undefined || state.leader < 0) return null;
    return this.o.view.endpoint(state.leader) ?? null;
  }

  /** The image changed (after the topic sync's pass): load what this broker now leads, unload what it does not. */
  changed(): void {
    for (const k of Object.values(this.kinds)) if (k !== undefined) this.reconcile(k);
  }

  /** This broker is registered: coordinate what it leads. */
  sessionStarted(): void {
    this.live = true;
    this.changed();
  }

  /** The cluster session was lost: stop coordinating everything until sessionStarted() (a new registration). */
  sessionLost(): void {
    this.live = false;
    for (const k of Object.values(this.kinds)) {
      if (k === undefined) continue;
      for (const p of k.loaded.keys()) k.coordinator.unloadPartition(p);
      k.loaded.clear();
    }
  }

  private reconcile(k: Coordinated): void {
    const name = k.spec.name;
    const wanted = new Map<number, number>();
    if (this.live) {
      for (let p = 0; p < k.spec.numPartitions; p++) {
        const state = this.o.view.partition(name, p);
        if (state?.leader === this.o.nodeId && this.o.hasLog(name, p)) wanted.set(p, state.leaderEpoch);
      }
    }
    for (const [p, epoch] of [...k.loaded]) {
      if (wanted.get(p) === epoch) continue;
      // Leadership went, or came back at another epoch (it may have been elsewhere meanwhile): drop, reload below.
      k.loaded.delete(p);
      k.coordinator.unloadPartition(p);
      this.o.log.info({ topic: name, partition: p, leaderEpoch: epoch }, 'no longer the coordinator of this partition');
    }
    for (const [p, epoch] of wanted) {
      if (k.loaded.has(p)) continue;
      k.loaded.set(p, epoch);
      this.o.log.info({ topic: name, partition: p, leaderEpoch: epoch }, 'leader of this partition: loading its coordinator state');
      k.coordinator.loadPartition(p, epoch).catch((err: unknown) => {
        // Retried on the next change (the coordinator already forgot it).
        if (k.loaded.get(p) === epoch) k.loaded.delete(p);
        this.o.log.warn({ err, topic: name, partition: p }, 'could not load coordinator state');
      });
    }
  }

  private create(k: Coordinated): void {
    if (k.creating !== null) return;
    const registered = this.o.view.brokers().length;
    const spec = k.spec.capReplicationFactor === true ? cappedSpec(k.spec, registered) : k.spec;
    this.o.log.info({ topic: spec.name, partitions: spec.numPartitions, replicationFactor: spec.replicationFactor }, 'creating the internal topic');
    k.creating = this.o.topics
      .createInternalTopic(spec)
      .catch((err: unknown) => {
        if (err instanceof KafkaError && err.code === ErrorCode.TOPIC_ALREADY_EXISTS) return;
        this.o.log.warn({ err, topic: spec.name }, 'could not create the internal topic yet; the next FindCoordinator tries again');
      })
      .finally(() => {
        k.creating = null;
      });
  }
}
