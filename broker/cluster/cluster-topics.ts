// The TopicService of a broker in a cluster: admin changes (CreateTopics,
// DeleteTopics, CreatePartitions, AlterConfigs) are validated with the local
// rules, written to the cluster metadata store by whichever broker received
// them, and answered once this broker's TopicSync has applied them, so the
// change is cluster-wide and read-your-writes for the client. Replicas of new
// topics and partitions are placed here with Kafka's placement over the live
// brokers of the image; the store's compare-and-swap (name free, partition
// count unchanged) keeps two brokers from creating the same thing twice.
// CreateTopics of an internal topic stays local; the cluster's
// __consumer_offsets and __transaction_state are created here on first need
// (createInternalTopic, as Kafka creates them on the first FindCoordinator).
import type { PartitionView, TopicService } from '../broker-context.js';
import type { MetadataImage } from '../../metadata/cluster/image.js';
import { initialProposals } from '../../metadata/cluster/leader-election.js';
import { assignReplicas, startIndexForNewPartitions, type PlacementBroker } from '../../metadata/cluster/replica-placement.js';
import type { ClusterMetadataStore } from '../../metadata/cluster/store.js';
import type { AlterConfigOp } from '../../metadata/config-alter.js';
import type { TopicStore } from '../../metadata/topic-store.js';
import type { CreateTopicRequest, MutationOptions, TopicRecord } from '../../metadata/topics.js';
import { randomUuid } from '../../metadata/uuid.js';
import { ErrorCode, KafkaError } from '../protocol/errors.js';
import type { BrokerTopics } from '../topic-service.js';
import type { TopicSync } from './topic-sync.js';

export interface ClusterTopicsOptions {
  readonly local: BrokerTopics;
  readonly store: ClusterMetadataStore;
  readonly image: MetadataImage;
  readonly sync: TopicSync;
  /** default.replication.factor */
  readonly defaultReplicationFactor: number;
  /** How long an accepted change may take to reach this broker's image and logs. */
  readonly visibleWithinMs: number;
}

export class ClusterTopics implements TopicService {
  constructor(private readonly o: ClusterTopicsOptions) {}

  get store(): TopicStore {
    return this.o.local.store;
  }

  partition(topic: string, partition: number): PartitionView | undefined {
    return this.o.local.partition(topic, partition);
  }

  isInternal(name: string): boolean {
    return this.o.local.isInternal(name);
  }

  async createTopic(request: CreateTopicRequest, options: MutationOptions = {}): Promise<TopicRecord> {
    const { local, image, store, sync } = this.o;
    if (local.isInternal(request.name)) return local.createTopic(request, options);
    if (image.topic(request.name) !== undefined) throw new KafkaError(ErrorCode.TOPIC_ALREADY_EXISTS, `Topic '${request.name}' already exists.`);
    const given = request.assignments ?? [];
    if (given.length > 0 && ((request.numPartitions ?? -1) !== -1 || (request.replicationFactor ?? -1) !== -1)) {
      throw new KafkaError(ErrorCode.INVALID_REQUEST, 'Both numPartitions or replicationFactor and replicasAssignments were set. Both cannot be used at the same time.');
    }
    const rf = request.replicationFactor ?? -1;
    if (rf === 0 || rf < -1) throw new KafkaError(ErrorCode.INVALID_REPLICATION_FACTOR, 'Replication factor must be larger than 0, or -1 to use the default value.');
    // Name, collisions, partition count and configs by the local rules; the id is new.
    const record = await local.store.create(
      { name: request.name, numPartitions: given.length > 0 ? given.length : (request.numPartitions ?? -1), ...(request.configs === undefined ? {} : { configs: request.configs }) },
      { validateOnly: true },
    );
    const assignment = given.length > 0 ? this.checkAssignment(given) : assignReplicas({
      brokers: this.liveBrokers(),
      partitions: record.partitionCount,
      replicationFactor: rf === -1 ? this.o.defaultReplicationFactor : rf,
      seed: record.name,
    });
    if (options.validateOnly) return record;
    await store.createTopic({ topicId: record.topicId, name: record.name, partitionCount: record.partitionCount, configs: { ...record.configs } }, initialProposals(assignment));
    await sync.waitFor(() => local.store.get(record.name)?.topicId === record.topicId, this.o.visibleWithinMs, `create topic ${record.name}`);
    return local.store.get(record.name) ?? record;
  }

  async deleteTopic(name: string): Promise<TopicRecord> {
    const { local, image, store, sync } = this.o;
    if (local.isInternal(name)) return local.deleteTopic(name);
    const t = image.topic(name);
    if (t === undefined) throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 'This server does not host this topic-partition.');
    const record = local.store.get(name) ?? { name, topicId: t.topicId, partitionCount: t.partitionCount, configs: t.configs };
    await store.deleteTopic(name, t.topicId);
    await sync.waitFor(() => local.store.get(name)?.topicId !== t.topicId, this.o.visibleWithinMs, `delete topic ${name}`);
    return record;
  }

  async createPartitions(name: string, totalCount: number, options: MutationOptions = {}): Promise<TopicRecord> {
    const { local, image, store, sync } = this.o;
    if (local.isInternal(name)) return local.createPartitions(name, totalCount, options);
    const t = image.topic(name);
    if (t === undefined) throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 'This server does not host this topic-partition.');
    const validated = await local.store.createPartitions(name, totalCount, null, { validateOnly: true });
    const first = image.partition(t.topicId, 0);
    const brokers = this.liveBrokers();
    const added = assignReplicas({
      brokers,
      partitions: totalCount - t.partitionCount,
      replicationFactor: first?.replicas.length ?? 1,
      startPartitionId: t.partitionCount,
      fixedStartIndex: first === undefined ? -1 : startIndexForNewPartitions(brokers, first.replicas),
      seed: name,
    });
    if (options.validateOnly) return validated;
    await store.createPartitions(name, t.topicId, t.partitionCount, initialProposals(added));
    await sync.waitFor(() => (local.store.get(name)?.partitionCount ?? 0) >= totalCount, this.o.visibleWithinMs, `create partitions of ${name}`);
    return local.store.get(name) ?? validated;
  }

  async alterConfigs(name: string, entries: readonly { name: string; value: string | null }[], options: MutationOptions = {}): Promise<TopicRecord> {
    if (this.o.local.isInternal(name)) return this.o.local.alterConfigs(name, entries, options);
    return this.writeConfigs(name, await this.o.local.store.alterConfigs(name, entries, { validateOnly: true }), options);
  }

  async incrementalAlterConfigs(name: string, ops: readonly AlterConfigOp[], options: MutationOptions = {}): Promise<TopicRecord> {
    if (this.o.local.isInternal(name)) return this.o.local.incrementalAlterConfigs(name, ops, options);
    return this.writeConfigs(name, await this.o.local.store.incrementalAlterConfigs(name, ops, { validateOnly: true }), options);
  }

  private async writeConfigs(name: string, validated: TopicRecord, options: MutationOptions): Promise<TopicRecord> {
    const { local, image, store, sync } = this.o;
    const t = image.topic(name);
    if (t === undefined) throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 'This server does not host this topic-partition.');
    if (options.validateOnly) return validated;
    const written = await store.alterTopicConfigs(name, t.topicId, { ...validated.configs });
    const same = (c: Readonly<Record<string, string>> | undefined): boolean =>
      c !== undefined && Object.keys(c).length === Object.keys(written.configs).length && Object.entries(written.configs).every(([k, v]) => c[k] === v);
    await sync.waitFor(() => same(local.store.get(name)?.configs), this.o.visibleWithinMs, `alter the configs of ${name}`);
    return local.store.get(name) ?? validated;
  }

  /**
   * Creates an internal topic of the cluster with its replicas placed over
   * the live brokers. INVALID_REPLICATION_FACTOR while fewer brokers are live
   * than `replicationFactor` (Kafka: "internal topic creation will fail until
   * the cluster size meets this replication factor requirement");
   * TOPIC_ALREADY_EXISTS when another broker created it first.
   */
  async createInternalTopic(spec: { readonly name: string; readonly numPartitions: number; readonly replicationFactor: number; readonly configs: Readonly<Record<string, string>> }): Promise<void> {
    const assignment = assignReplicas({ brokers: this.liveBrokers(), partitions: spec.numPartitions, replicationFactor: spec.replicationFactor, seed: spec.name });
    await this.o.store.createTopic({ topicId: randomUuid(), name: spec.name, partitionCount: spec.numPartitions, configs: { ...spec.configs } }, initialProposals(assignment));
  }

  private liveBrokers(): PlacementBroker[] {
    return this.o.image.brokers().map((b) => ({ nodeId: b.nodeId, rack: b.rack }));
  }

  /** Explicit assignments: partitions 0..n-1, each a non-empty list of distinct registered brokers. */
  private checkAssignment(given: readonly { partitionIndex: number; brokerIds: readonly number[] }[]): number[][] {
    const sorted = [...given].sort((a, b) => a.partitionIndex - b.partitionIndex);
    return sorted.map((a, i) => {
      if (a.partitionIndex !== i) {
        throw new KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, `Partitions should be numbered consecutively starting at 0; partition ${i} is missing or duplicated.`);
      }
      if (a.brokerIds.length === 0 || new Set(a.brokerIds).size !== a.brokerIds.length) {
        throw new KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, `Partition ${i}: the replica list [${a.brokerIds.join(',')}] is empty or has duplicates.`);
      }
      for (const b of a.brokerIds) {
        if (this.o.image.broker(b) === undefined) {
          throw new KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, `The manual partition assignment includes broker ${b}, but no such broker is registered.`);
        }
      }
      return [...a.brokerIds];
    });
  }
}
