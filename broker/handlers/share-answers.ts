// Shared by ShareFetch (78) and ShareAcknowledge (79): per-partition results
// grouped by topic in request order, and the endpoints of the leaders named in
// NOT_LEADER_OR_FOLLOWER answers (KIP-951).
import type { BrokerContext } from '../broker-context.js';
import { ErrorCode } from '../protocol/errors.js';
import type { SharePartitionResult } from '../share/share-groups.js';
import { leaderEndpoints, type LeaderEndpoint } from './leader-endpoints.js';

export function byTopic<T>(results: readonly SharePartitionResult[], partition: (r: SharePartitionResult) => T): { topicId: string; partitions: T[] }[] {
  const topics = new Map<string, T[]>();
  for (const r of results) {
    let list = topics.get(r.topicId);
    if (list === undefined) topics.set(r.topicId, (list = []));
    list.push(partition(r));
  }
  return [...topics].map(([topicId, partitions]) => ({ topicId, partitions }));
}

export function shareLeaderEndpoints(broker: BrokerContext, results: readonly SharePartitionResult[]): LeaderEndpoint[] {
  return leaderEndpoints(broker, results.filter((r) => r.errorCode === ErrorCode.NOT_LEADER_OR_FOLLOWER || r.acknowledgeErrorCode === ErrorCode.NOT_LEADER_OR_FOLLOWER).map((r) => r.leaderId));
}

/**
 * A partition's CurrentLeader, as Kafka's KafkaApis fills it: the leader (id and
 * epoch) when the partition is answered NOT_LEADER_OR_FOLLOWER or
 * FENCED_LEADER_EPOCH, the struct's zeros otherwise (Kafka 4.3.1's captured answers,
 * test/golden/kafka-responses: {0, 0} for a partition served without error).
 */
export function shareCurrentLeader(r: SharePartitionResult, errorCode: number): { leaderId: number; leaderEpoch: number } {
  const leaderError = errorCode === ErrorCode.NOT_LEADER_OR_FOLLOWER || errorCode === ErrorCode.FENCED_LEADER_EPOCH;
  return leaderError ? { leaderId: r.leaderId, leaderEpoch: r.leaderEpoch } : { leaderId: 0, leaderEpoch: 0 };
}

/** SHARE groups are off when the broker was built without them (tests with a small context). */
export const SHARE_GROUPS_OFF = { errorCode: ErrorCode.UNSUPPORTED_VERSION, errorMessage: 'share groups are not enabled on this broker' } as const;
