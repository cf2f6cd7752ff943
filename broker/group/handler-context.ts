// What the group API handlers need from the broker. BrokerContext provides it
// by adding `groups` and `coordinatorNode()` next to its `topics`.
import type { GroupCoordinator } from './group-coordinator.js';

export interface GroupHandlerContext {
  readonly groups: GroupCoordinator;
  /** This broker's advertised endpoint: the coordinator of every group and transactional id. */
  coordinatorNode(): { readonly nodeId: number; readonly host: string; readonly port: number };
}

export interface OffsetCommitHandlerContext extends GroupHandlerContext {
  /** OffsetCommit refuses partitions that do not exist (UNKNOWN_TOPIC_OR_PARTITION), as Kafka does. */
  readonly topics: { partition(topic: string, partition: number): unknown };
}

/** Kafka reports a member's host as InetAddress.toString() of the connection: "/127.0.0.1". */
export function kafkaClientHost(remoteAddress: string): string {
  const host = remoteAddress.startsWith('::ffff:') ? remoteAddress.slice('::ffff:'.length) : remoteAddress;
  return host.startsWith('/') ? host : `/${host}`;
}

