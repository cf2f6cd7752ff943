// The part of @confluentinc/kafka-javascript's KafkaJS-compatible API that the matrix
// program calls, as structural types. The client is built into the compat cache by
// test/compat/install.sh (it compiles librdkafka), not installed in the repo, so its
// own declarations (types/kafkajs.d.ts, 1.10.1) are not visible to tsc; these follow
// them, narrowed to what compat.ts uses.

export type KjsHeaderValue = Buffer | string | null | undefined | Array<Buffer | string>;
export type KjsHeaders = Record<string, KjsHeaderValue>;

export interface KjsMessage {
  key?: Buffer | string | null;
  value: Buffer | string | null;
  partition?: number;
  headers?: Record<string, string>;
  /** Milliseconds as a decimal string. */
  timestamp?: string;
}

export interface KjsRecordMetadata {
  topicName: string;
  partition: number;
  errorCode: number;
  baseOffset?: string;
}

export interface KjsProducer {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  send(record: { topic: string; messages: KjsMessage[] }): Promise<KjsRecordMetadata[]>;
}

export interface KjsConsumedMessage {
  key: Buffer | null;
  value: Buffer | null;
  timestamp: string;
  offset: string;
  headers?: KjsHeaders;
}

export interface KjsBatch {
  topic: string;
  partition: number;
  highWatermark: string;
  messages: KjsConsumedMessage[];
}

export interface KjsConsumer {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  subscribe(subscription: { topics: Array<string | RegExp> }): Promise<void>;
  run(config: {
    eachBatch?: (payload: { batch: KjsBatch }) => Promise<void>;
    eachMessage?: (payload: { topic: string; partition: number; message: KjsConsumedMessage }) => Promise<void>;
  }): Promise<void>;
  commitOffsets(offsets: Array<{ topic: string; partition: number; offset: string }>): Promise<void>;
  assignment(): Array<{ topic: string; partition: number }>;
}

export interface KjsPartitionMetadata {
  partitionId: number;
  leader: number;
  replicas: number[];
  isr: number[];
}

export interface KjsTopicMetadata {
  name: string;
  /**
   * The client's Uuid object. rdkafka.d.ts names its text `base64str`; src/common.cc
   * (1.10.1) sets `base64`: both are read.
   */
  topicId?: { mostSignificantBits?: bigint; leastSignificantBits?: bigint; base64?: string; base64str?: string };
  isInternal?: boolean;
  partitions: KjsPartitionMetadata[];
}

export interface KjsLibrdKafkaError {
  message: string;
  code: number;
}

export interface KjsAdmin {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  createTopics(options: { timeout?: number; topics: Array<{ topic: string; numPartitions?: number; replicationFactor?: number }> }): Promise<boolean>;
  listTopics(options?: { timeout?: number }): Promise<string[]>;
  fetchTopicMetadata(options: { topics: string[]; timeout?: number }): Promise<KjsTopicMetadata[]>;
  fetchTopicOffsets(topic: string, options?: { timeout?: number }): Promise<Array<{ partition: number; offset: string; high: string; low: string }>>;
  fetchTopicOffsetsByTimestamp(topic: string, timestamp: number, options?: { timeout?: number }): Promise<Array<{ partition: number; offset: string }>>;
  fetchOffsets(options: { groupId: string; topics: string[]; timeout?: number }): Promise<Array<{ topic: string; partitions: Array<{ partition: number; offset: string; error?: KjsLibrdKafkaError | null }> }>>;
  describeGroups(groups: string[], options?: { timeout?: number }): Promise<{ groups: Array<{ groupId: string; state: number; members: unknown[]; error?: KjsLibrdKafkaError | null }> }>;
  listGroups(options?: { timeout?: number }): Promise<{ groups: Array<{ groupId: string; protocolType: string; state: number }>; errors: KjsLibrdKafkaError[] }>;
}

export interface KjsKafka {
  producer(config: Record<string, unknown> & { kafkaJS?: Record<string, unknown> }): KjsProducer;
  consumer(config: Record<string, unknown> & { kafkaJS: { groupId: string } & Record<string, unknown> }): KjsConsumer;
  admin(): KjsAdmin;
}

/** require('@confluentinc/kafka-javascript'). */
export interface KjsModule {
  readonly librdkafkaVersion: string;
  readonly features: readonly string[];
  readonly KafkaJS: {
    Kafka: new (config: { kafkaJS: { brokers: string[]; clientId?: string; logLevel?: number } }) => KjsKafka;
    logLevel: { NOTHING: number; ERROR: number; WARN: number; INFO: number; DEBUG: number };
  };
}
