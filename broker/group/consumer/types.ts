// The KIP-848 consumer group API in plain data, independent of wire versions.
import type { MigrationPolicy } from './config.js';
import type { TopicHashCache } from './metadata-hash.js';

export interface TopicPartitionsParam {
  readonly topicId: string;
  readonly partitions: readonly number[];
}

export interface ConsumerHeartbeatParams {
  readonly groupId: string;
  readonly memberId: string;
  readonly memberEpoch: number;
  readonly instanceId: string | null;
  readonly rackId: string | null;
  readonly rebalanceTimeoutMs: number;
  readonly subscribedTopicNames: readonly string[] | null;
  readonly subscribedTopicRegex: string | null;
  readonly serverAssignor: string | null;
  readonly topicPartitions: readonly TopicPartitionsParam[] | null;
  readonly clientId: string;
  readonly clientHost: string;
  /** ConsumerGroupHeartbeat v0 lets the coordinator pick the member id; v1+ requires one. */
  readonly apiVersion: number;
}

export interface ConsumerHeartbeatResult {
  errorCode: number;
  errorMessage: string | null;
  memberId: string | null;
  memberEpoch: number;
  heartbeatIntervalMs: number;
  /** The partitions the member may own now; null when unchanged. */
  assignment: TopicPartitionsParam[] | null;
}

export interface DescribedTopicPartitions {
  readonly topicId: string;
  readonly topicName: string;
  readonly partitions: number[];
}

export interface DescribedConsumerMember {
  readonly memberId: string;
  readonly instanceId: string | null;
  readonly rackId: string | null;
  readonly memberEpoch: number;
  readonly clientId: string;
  readonly clientHost: string;
  readonly subscribedTopicNames: string[];
  readonly subscribedTopicRegex: string | null;
  readonly assignment: DescribedTopicPartitions[];
  readonly targetAssignment: DescribedTopicPartitions[];
  /** ConsumerGroupDescribe v1: 0 for a classic-protocol member, 1 for a consumer-protocol member. */
  readonly memberType: 0 | 1;
}

export interface DescribedConsumerGroup {
  readonly errorCode: number;
  readonly errorMessage: string | null;
  readonly groupId: string;
  readonly groupState: string;
  readonly groupEpoch: number;
  readonly assignmentEpoch: number;
  readonly assignorName: string;
  readonly members: DescribedConsumerMember[];
}

/** The topics as the coordinator sees them (the broker's topic store; in a cluster, the image's). */
export interface ConsumerTopicsView {
  byName(name: string): { readonly topicId: string; readonly partitionCount: number } | undefined;
  byId(topicId: string): { readonly name: string; readonly partitionCount: number } | undefined;
  /** Every topic a subscription regex may match (internal topics are not offered). */
  names(): Iterable<string>;
  /** The racks of a partition's replicas (brokers without a rack left out), for the metadata hash; none when absent. */
  partitionRacks?(name: string, partition: number): readonly string[];
  /** Topic hashes kept across views (the broker's one cache); each is computed afresh without. */
  readonly topicHashes?: TopicHashCache;
}

export const noTopics: ConsumerTopicsView = {
  byName: () => undefined,
  byId: () => undefined,
  names: () => [],
};

export type { MigrationPolicy };

interface TopicRecordLike {
  readonly name: string;
  readonly topicId: string;
  readonly partitionCount: number;
}

/** The view over a topic store (by shape, so this layer does not import metadata/). */
export function consumerTopicsView(
  store: { get(name: string): TopicRecordLike | undefined; getById(topicId: string): TopicRecordLike | undefined; list(): readonly TopicRecordLike[] },
  isInternal: (name: string) => boolean,
  partitionRacks?: (name: string, partition: number) => readonly string[],
  topicHashes?: TopicHashCache,
): ConsumerTopicsView {
  return {
    ...(partitionRacks === undefined ? {} : { partitionRacks }),
    ...(topicHashes === undefined ? {} : { topicHashes }),
    byName: (name) => {
      const t = store.get(name);
      return t === undefined ? undefined : { topicId: t.topicId, partitionCount: t.partitionCount };
    },
    byId: (topicId) => {
      const t = store.getById(topicId);
      return t === undefined ? undefined : { name: t.name, partitionCount: t.partitionCount };
    },
    names: () => store.list().filter((t) => !isInternal(t.name)).map((t) => t.name),
  };
}
