// OffsetForLeaderEpoch (key 23), versions 2-4 (Kafka 4's range: v0-1 went with
// KIP-896; v2 is the one librdkafka sends, v3 adds the replica id).
// Consumers validate their position after a leader change: for a leader epoch
// the answer is its end offset (the start of the next epoch, or the log end
// for the current one). One broker means one leader; epochs only grow across
// restarts of a partition's leadership. In a cluster, replicas (replica id
// >= 0) are answered like consumers, by the leader only (Kafka answers
// replicas from the leader alone); a single broker, which has no followers,
// refuses them. A v2 request carries no replica id (it reads as -2, Kafka's
// default): a consumer's, as Kafka answers it.
import type { ApiHandler } from './api-handler.js';
import type { BrokerContext } from '../broker-context.js';
import type { OffsetForLeaderEpochRequest, OffsetForLeaderEpochResponse } from '../protocol/messages/offset-for-leader-epoch.js';
import { ErrorCode, KafkaError } from '../protocol/errors.js';

export const handler: ApiHandler<OffsetForLeaderEpochRequest, OffsetForLeaderEpochResponse, BrokerContext> = {
  apiKey: 23,
  minVersion: 2,
  maxVersion: 4,
  handle(broker, req) {
    const topics = req.topics.map((t) => ({
      topic: t.topic,
      partitions: t.partitions.map((p) => {
        const fail = (errorCode: number) => ({ errorCode, partition: p.partition, leaderEpoch: -1, endOffset: -1n });
        if (req.replicaId >= 0 && (broker.cluster ?? null) === null) return fail(ErrorCode.NOT_LEADER_OR_FOLLOWER);
        const notLeader = broker.cluster?.notLeader(t.topic, p.partition) ?? null;
        if (notLeader !== null) return fail(notLeader.errorCode);
        const view = broker.topics.partition(t.topic, p.partition);
        if (view === undefined) return fail(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
        if (p.currentLeaderEpoch > view.leaderEpoch) return fail(ErrorCode.UNKNOWN_LEADER_EPOCH);
        if (p.currentLeaderEpoch >= 0 && p.currentLeaderEpoch < view.leaderEpoch) return fail(ErrorCode.FENCED_LEADER_EPOCH);
        try {
          const r = view.endOffsetForEpoch(p.leaderEpoch);
          return { errorCode: 0, partition: p.partition, leaderEpoch: r.epoch, endOffset: r.endOffset };
        } catch (err) {
          return fail(err instanceof KafkaError ? err.code : ErrorCode.KAFKA_STORAGE_ERROR);
        }
      }),
    }));
    return { throttleTimeMs: 0, topics };
  },
  errorResponse(req, errorCode) {
    return {
      throttleTimeMs: 0,
      topics: req.topics.map((t) => ({ topic: t.topic, partitions: t.partitions.map((p) => ({ errorCode, partition: p.partition, leaderEpoch: -1, endOffset: -1n })) })),
    };
  },
};
