// The topic registry: names, topic ids, partition counts and config overrides,
// with Kafka's rules for CreateTopics, DeleteTopics, CreatePartitions,
// AlterConfigs and IncrementalAlterConfigs on a single broker. Pure: no I/O;
// metadata/topic-store.ts persists it. Every refusal is a KafkaError with
// Kafka's code and a message like Kafka's.
import type { LogConfig } from './log-config.js';
import { ErrorCode, KafkaError } from '../broker/protocol/errors.js';
import { incrementalAlterOverrides, replaceOverrides, type AlterConfigOp } from './config-alter.js';
import {
  effectiveTopicConfig,
  logConfigFor,
  validateTopicOverrides,
  type BrokerDefaults,
  type EffectiveTopicConfig,
  type TopicOverrides,
} from './topic-config.js';
import { isValidUuid, randomUuid, RESERVED_UUIDS, type RandomBytes } from './uuid.js';

export interface TopicRecord {
  readonly name: string;
  /** Kafka Uuid string (base64url, 22 chars). */
  readonly topicId: string;
  readonly partitionCount: number;
  /** Topic config overrides in Kafka's string forms. */
  readonly configs: TopicOverrides;
}

/** Broker settings topic creation needs (BrokerConfig satisfies it). */
export interface TopicBrokerSettings extends BrokerDefaults {
  readonly nodeId: number;
  readonly numPartitions: number;
}

export interface ReplicaAssignment {
  readonly partitionIndex: number;
  readonly brokerIds: readonly number[];
}

export interface CreateTopicRequest {
  readonly name: string;
  /** -1 (or omitted): num.partitions. */
  readonly numPartitions?: number;
  /** -1 (or omitted): default.replication.factor, which is 1 here. */
  readonly replicationFactor?: number;
  readonly assignments?: readonly ReplicaAssignment[];
  readonly configs?: Readonly<Record<string, string | null>>;
}

export interface MutationOptions {
  /** Run every check, change nothing (CreateTopics/AlterConfigs validateOnly). */
  readonly validateOnly?: boolean;
}

export const MAX_TOPIC_NAME_LENGTH = 249;
/** Sediment's guard against a request that would create an absurd number of partition directories. */
export const MAX_PARTITIONS_PER_TOPIC = 10_000;

/**
 * Kafka's Topic.INTERNAL_TOPICS: reported with isInternal=true in Metadata.
 * (__remote_log_metadata is not among them in Kafka either.)
 */
export const KAFKA_INTERNAL_TOPICS: ReadonlySet<string> = new Set(['__consumer_offsets', '__transaction_state', '__share_group_state']);

export function isKafkaInternalTopic(name: string): boolean {
  return KAFKA_INTERNAL_TOPICS.has(name);
}

/** Kafka's Topic.validate; throws INVALID_TOPIC_EXCEPTION (17). */
export function validateTopicName(name: string): void {
  const fail = (message: string): never => {
    throw new KafkaError(ErrorCode.INVALID_TOPIC_EXCEPTION, message);
  };
  if (name.length === 0) fail('Topic name is illegal, it can\'t be empty');
  if (name === '.' || name === '..') fail('Topic name cannot be "." or ".."');
  if (name.length > MAX_TOPIC_NAME_LENGTH) {
    fail(`Topic name is illegal, it can't be longer than ${MAX_TOPIC_NAME_LENGTH} characters, topic name: ${name}`);
  }
  if (!/^[a-zA-Z0-9._-]+$/.test(name)) {
    fail(`Topic name "${name}" is illegal, it contains a character other than ASCII alphanumerics, '.', '_' and '-'`);
  }
}

/** Kafka's Topic.hasCollision: '.' and '_' collide in metric names. */
export function topicNamesCollide(a: string, b: string): boolean {
  return a !== b && a.replaceAll('.', '_') === b.replaceAll('.', '_');
}

function unknownTopic(name: string): KafkaError {
  return new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `This server does not host this topic-partition: ${name}`);
}

export class TopicRegistry {
  private readonly byName = new Map<string, TopicRecord>();
  private readonly byId = new Map<string, TopicRecord>();

  constructor(
    private readonly broker: TopicBrokerSettings,
    topics: Iterable<TopicRecord> = [],
    private readonly random?: RandomBytes,
  ) {
    for (const t of topics) this.put(t);
  }

  get size(): number {
    return this.byName.size;
  }

  get(name: string): TopicRecord | undefined {
    return this.byName.get(name);
  }

  getById(topicId: string): TopicRecord | undefined {
    return this.byId.get(topicId);
  }

  has(name: string): boolean {
    return this.byName.has(name);
  }

  /** All topics, sorted by name. */
  list(): TopicRecord[] {
    return [...this.byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  effectiveConfig(name: string): EffectiveTopicConfig {
    const t = this.require(name);
    return effectiveTopicConfig(this.broker, t.configs, { topicName: name });
  }

  /** The log layer's view of the topic, broker-level producer id expiration included. */
  logConfig(name: string): LogConfig {
    const t = this.require(name);
    return logConfigFor(this.broker, t.configs, { topicName: name });
  }

  /**
   * CreateTopics for one topic. Errors: INVALID_TOPIC_EXCEPTION (17, bad or
   * colliding name), TOPIC_ALREADY_EXISTS (36), INVALID_PARTITIONS (37),
   * INVALID_REPLICATION_FACTOR (38), INVALID_REPLICA_ASSIGNMENT (39),
   * INVALID_REQUEST (42, counts given with assignments), INVALID_CONFIG (40).
   */
  create(request: CreateTopicRequest, options: MutationOptions = {}): TopicRecord {
    const { name } = request;
    validateTopicName(name);
    if (this.byName.has(name)) throw new KafkaError(ErrorCode.TOPIC_ALREADY_EXISTS, `Topic '${name}' already exists.`);
    for (const existing of this.byName.keys()) {
      if (topicNamesCollide(name, existing)) {
        throw new KafkaError(ErrorCode.INVALID_TOPIC_EXCEPTION, `Topic '${name}' collides with existing topic: ${existing}`);
      }
    }
    const partitionCount = this.partitionCountFor(request);
    const configs = validateTopicOverrides(this.broker, request.configs ?? {}, { topicName: name });
    const record: TopicRecord = { name, topicId: this.newTopicId(), partitionCount, configs };
    if (!options.validateOnly) this.put(record);
    return record;
  }

  private partitionCountFor(request: CreateTopicRequest): number {
    const numPartitions = request.numPartitions ?? -1;
    const replicationFactor = request.replicationFactor ?? -1;
    const assignments = request.assignments ?? [];
    if (assignments.length > 0) {
      if (numPartitions !== -1 || replicationFactor !== -1) {
        throw new KafkaError(ErrorCode.INVALID_REQUEST, 'Both numPartitions or replicationFactor and replicasAssignments were set. Both cannot be used at the same time.');
      }
      this.checkAssignments(assignments, 0);
      return this.checkPartitionCount(assignments.length);
    }
    if (numPartitions === 0 || numPartitions < -1) {
      throw new KafkaError(ErrorCode.INVALID_PARTITIONS, 'Number of partitions was set to an invalid non-positive value.');
    }
    if (replicationFactor === 0 || replicationFactor < -1) {
      throw new KafkaError(ErrorCode.INVALID_REPLICATION_FACTOR, 'Replication factor must be larger than 0, or -1 to use the default value.');
    }
    if (replicationFactor > 1) {
      throw new KafkaError(
        ErrorCode.INVALID_REPLICATION_FACTOR,
        `Unable to replicate the partition ${replicationFactor} time(s): The target replication factor of ${replicationFactor} cannot be reached because only 1 broker(s) are registered.`,
      );
    }
    return this.checkPartitionCount(numPartitions === -1 ? this.broker.numPartitions : numPartitions);
  }

  private checkPartitionCount(count: number): number {
    if (count > MAX_PARTITIONS_PER_TOPIC) {
      throw new KafkaError(ErrorCode.INVALID_PARTITIONS, `Sediment supports at most ${MAX_PARTITIONS_PER_TOPIC} partitions per topic, ${count} were requested.`);
    }
    return count;
  }

  /** Partition indexes must be consecutive from `first`; each replica list exactly [this node]. */
  private checkAssignments(assignments: readonly ReplicaAssignment[], first: number): void {
    const sorted = [...assignments].sort((a, b) => a.partitionIndex - b.partitionIndex);
    sorted.forEach((a, i) => {
      if (a.partitionIndex !== first + i) {
        throw new KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, `Partitions should be numbered consecutively starting at ${first}; partition ${first + i} is missing or duplicated.`);
      }
      if (a.brokerIds.length !== 1 || a.brokerIds[0] !== this.broker.nodeId) {
        throw new KafkaError(
          ErrorCode.INVALID_REPLICA_ASSIGNMENT,
          `The manual partition assignment [${a.brokerIds.join(', ')}] for partition ${a.partitionIndex} is invalid: this cluster has the single broker ${this.broker.nodeId}.`,
        );
      }
    });
  }

  /** DeleteTopics by name; UNKNOWN_TOPIC_OR_PARTITION (3) when absent. */
  delete(name: string): TopicRecord {
    const t = this.require(name);
    this.byName.delete(name);
    this.byId.delete(t.topicId);
    return t;
  }

  /** DeleteTopics by id; UNKNOWN_TOPIC_ID (100) when absent. */
  deleteById(topicId: string): TopicRecord {
    const t = this.byId.get(topicId);
    if (t === undefined) throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_ID, `Topic id ${topicId} not found.`);
    return this.delete(t.name);
  }

  /**
   * CreatePartitions: the new total count must be larger than the current one
   * (INVALID_PARTITIONS otherwise). Returns the updated record.
   */
  createPartitions(
    name: string,
    count: number,
    assignments: readonly (readonly number[])[] | null = null,
    options: MutationOptions = {},
  ): TopicRecord {
    const t = this.require(name);
    if (count === t.partitionCount) throw new KafkaError(ErrorCode.INVALID_PARTITIONS, `Topic already has ${t.partitionCount} partition(s).`);
    if (count < t.partitionCount) {
      throw new KafkaError(ErrorCode.INVALID_PARTITIONS, `The topic ${name} currently has ${t.partitionCount} partition(s); ${count} would not be an increase.`);
    }
    if (assignments !== null) {
      if (assignments.length !== count - t.partitionCount) {
        throw new KafkaError(
          ErrorCode.INVALID_REPLICA_ASSIGNMENT,
          `Attempted to add ${count - t.partitionCount} additional partition(s), but only ${assignments.length} assignment(s) were specified.`,
        );
      }
      this.checkAssignments(assignments.map((brokerIds, i) => ({ partitionIndex: t.partitionCount + i, brokerIds })), t.partitionCount);
    }
    const updated: TopicRecord = { ...t, partitionCount: this.checkPartitionCount(count) };
    if (!options.validateOnly) this.put(updated);
    return updated;
  }

  /** AlterConfigs: the entries replace all overrides. */
  alterConfigs(name: string, entries: readonly { name: string; value: string | null }[], options: MutationOptions = {}): TopicRecord {
    const t = this.require(name);
    return this.applyConfigs(t, replaceOverrides(entries), options);
  }

  /** IncrementalAlterConfigs: SET / DELETE / APPEND / SUBTRACT on the current overrides. */
  incrementalAlterConfigs(name: string, ops: readonly AlterConfigOp[], options: MutationOptions = {}): TopicRecord {
    const t = this.require(name);
    return this.applyConfigs(t, incrementalAlterOverrides(this.broker, t.configs, ops, { topicName: name }), options);
  }

  private applyConfigs(t: TopicRecord, next: Record<string, string | null>, options: MutationOptions): TopicRecord {
    const configs = validateTopicOverrides(this.broker, next, { topicName: t.name, previous: t.configs });
    const updated: TopicRecord = { ...t, configs };
    if (!options.validateOnly) this.put(updated);
    return updated;
  }

  private require(name: string): TopicRecord {
    const t = this.byName.get(name);
    if (t === undefined) throw unknownTopic(name);
    return t;
  }

  private put(t: TopicRecord): void {
    if (!isValidUuid(t.topicId) || RESERVED_UUIDS.has(t.topicId)) throw new Error(`invalid topic id ${t.topicId} for ${t.name}`);
    const clash = this.byId.get(t.topicId);
    if (clash !== undefined && clash.name !== t.name) throw new Error(`topic id ${t.topicId} used by ${clash.name} and ${t.name}`);
    this.byName.set(t.name, t);
    this.byId.set(t.topicId, t);
  }

  private newTopicId(): string {
    for (;;) {
      const id = randomUuid(this.random);
      if (!this.byId.has(id)) return id;
    }
  }
}
