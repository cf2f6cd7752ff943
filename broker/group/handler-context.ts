// What the group API handlers need from the broker. BrokerContext provides it
// by adding `groups` and `coordinatorNode()` next to its `topics`.
import type { GroupCoordinator } from './group-coordinator.js';

export interface GroupHandlerContext {
  readonly groups: GroupCoordinator;
  /**
   * The coordinator of a group (key type 0) or transactional id (1): this
   * broker alone; in a cluster the leader of the key's internal-topic
   * partition, null while there is none (COORDINATOR_NOT_AVAILABLE).
   */
  coordinatorNode(keyType: number, key: string): { readonly nodeId: number; readonly host: string; readonly port: number } | null;
}

export interface OffsetCommitHandlerContext extends GroupHandlerContext {
  /**
   * OffsetCommit refuses partitions that do not exist (UNKNOWN_TOPIC_OR_PARTITION), as Kafka does.
   * The store knows every topic of the cluster, also those whose partitions are on other brokers.
   */
  readonly topics: {
    partition(topic: string, partition: number): unknown;
    readonly store?: TopicIdStore;
  };
}

/** The topic store as OffsetCommit/OffsetFetch v10 use it: topics named by id (KIP-848). */
export interface TopicIdStore {
  get(name: string): { readonly partitionCount: number; readonly topicId: string } | undefined;
  getById(topicId: string): { readonly name: string } | undefined;
}

/** v10 names topics by id: the name of a known id, undefined for an unknown (or zero) one. */
export function topicNameOfId(store: TopicIdStore | undefined, topicId: string): string | undefined {
  return store?.getById(topicId)?.name;
}

/** Kafka reports a member's host as InetAddress.toString() of the connection: "/127.0.0.1". */
export function kafkaClientHost(remoteAddress: string): string {
  const host = remoteAddress.startsWith('::ffff:') ? remoteAddress.slice('::ffff:'.length) : remoteAddress;
  return host.startsWith('/') ? host : `/${host}`;
}

