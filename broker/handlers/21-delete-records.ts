// DeleteRecords (key 21), versions 0-2.
// Advances a partition's log start offset to the given offset (-1 means the
// high watermark); whole segments below it are deleted, in both tiers, by
// retention. OFFSET_OUT_OF_RANGE above the high watermark. The response's low
// watermark is the new log start offset.
import type { ApiHandler } from './api-handler.js';
import type { BrokerContext } from '../broker-context.js';
import type { DeleteRecordsRequest, DeleteRecordsResponse } from '../protocol/messages/delete-records.js';
import { ErrorCode, KafkaError } from '../protocol/errors.js';
import { eachPartition } from './per-partition.js';

export const handler: ApiHandler<DeleteRecordsRequest, DeleteRecordsResponse, BrokerContext> = {
  apiKey: 21,
  minVersion: 0,
  maxVersion: 2,
  async handle(broker, req, ctx) {
    const topics = await eachPartition(
      broker,
      req.topics,
      'delete records',
      async (p, rp, topic) => {
        const target = rp.offset === -1n ? p.highWatermark : rp.offset;
        if (target < 0n || target > p.highWatermark) throw new KafkaError(ErrorCode.OFFSET_OUT_OF_RANGE, `offset ${rp.offset} is above the high watermark ${p.highWatermark}`);
        const lowWatermark = await p.deleteRecordsBefore(target);
        ctx.log.info({ topic, partition: rp.partitionIndex, logStartOffset: lowWatermark }, 'deleted records');
        return { partitionIndex: rp.partitionIndex, lowWatermark, errorCode: 0 };
      },
      (rp, errorCode) => ({ partitionIndex: rp.partitionIndex, lowWatermark: -1n, errorCode }),
    );
    return { throttleTimeMs: 0, topics };
  },
  errorResponse(req, errorCode) {
    return { throttleTimeMs: 0, topics: req.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, lowWatermark: -1n, errorCode })) })) };
  },
};
