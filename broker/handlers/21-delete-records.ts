// DeleteRecords (key 21), versions 0-2.
// Advances a partition's log start offset to the given offset (-1 means the
// high watermark); whole segments below it are deleted, in both tiers, by
// retention. OFFSET_OUT_OF_RANGE below 0 or above the high watermark.
// Unreplicated, the low watermark answered is the new log start offset. A
// replicated partition answers as Kafka's DelayedDeleteRecords: once every
// partition's low watermark (the smallest log start over the leader and its
// live followers, which take the leader's from their fetches) reaches the
// offset, with it; a partition still short of it after timeout_ms answers
// REQUEST_TIMED_OUT with the low watermark as it was when the wait began;
// NOT_LEADER_OR_FOLLOWER if leadership moved meanwhile.
import type { ApiHandler } from './api-handler.js';
import type { BrokerContext } from '../broker-context.js';
import type { DeleteRecordsRequest, DeleteRecordsResponse } from '../protocol/messages/delete-records.js';
import { ErrorCode, KafkaError } from '../protocol/errors.js';
import { eachPartition } from './per-partition.js';

type PartitionResult = DeleteRecordsResponse['topics'][number]['partitions'][number];

export const handler: ApiHandler<DeleteRecordsRequest, DeleteRecordsResponse, BrokerContext> = {
  apiKey: 21,
  minVersion: 0,
  maxVersion: 2,
  async handle(broker, req, ctx) {
    // Every partition's log start moves first; then all wait together, each up to timeout_ms (as one delayed operation).
    const started = await eachPartition(
      broker,
      req.topics,
      'delete records',
      async (p, rp, topic): Promise<{ answer: Promise<PartitionResult> }> => {
        const target = rp.offset === -1n ? p.highWatermark : rp.offset;
        if (target < 0n || target > p.highWatermark) throw new KafkaError(ErrorCode.OFFSET_OUT_OF_RANGE, `offset ${rp.offset} is above the high watermark ${p.highWatermark}`);
        const logStart = await p.deleteRecordsBefore(target);
        ctx.log.info({ topic, partition: rp.partitionIndex, logStartOffset: logStart }, 'deleted records');
        const waiting = broker.replication?.awaitLowWatermark(topic, rp.partitionIndex, target, req.timeoutMs) ?? null;
        if (waiting === null) return { answer: Promise.resolve({ partitionIndex: rp.partitionIndex, lowWatermark: logStart, errorCode: ErrorCode.NONE }) };
        return { answer: waiting.then((r) => ({ partitionIndex: rp.partitionIndex, lowWatermark: r.lowWatermark, errorCode: r.errorCode })) };
      },
      (rp, errorCode) => ({ answer: Promise.resolve({ partitionIndex: rp.partitionIndex, lowWatermark: -1n, errorCode }) }),
    );
    const topics = await Promise.all(started.map(async (t) => ({ name: t.name, partitions: await Promise.all(t.partitions.map((x) => x.answer)) })));
    return { throttleTimeMs: 0, topics };
  },
  errorResponse(req, errorCode) {
    return { throttleTimeMs: 0, topics: req.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, lowWatermark: -1n, errorCode })) })) };
  },
};
