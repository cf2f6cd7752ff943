// ListOffsets (key 2), versions 1-11.
// Special timestamps: -1 latest (the high watermark, or the last stable offset
// under read_committed), -2 earliest (the log start offset, remote tier
// included), -3 the offset of the largest timestamp (v7+), -4 the local log
// start offset (v8+), -5 the highest offset in remote storage, -1 when nothing
// is tiered (v9+), -6 the earliest offset not yet uploaded (v11+, KIP-1023): the
// one after the highest remote offset (at least the log start offset); the log
// start offset when tiering is on and nothing was uploaded from a log still
// whole locally; -1 otherwise (tiering off, or remote segments this broker
// does not know of yet). v10's timeout is for Kafka's asynchronous remote
// lookups; these answer within the request. Any other timestamp: the first offset whose timestamp is at
// or after it, searched through the time indexes of both tiers; none: -1/-1.
import type { ApiHandler } from './api-handler.js';
import type { BrokerContext, PartitionView } from '../broker-context.js';
import type {
  ListOffsetsRequest,
  ListOffsetsResponse,
  ListOffsetsResponseListOffsetsPartitionResponse,
} from '../protocol/messages/list-offsets.js';
import { ErrorCode } from '../protocol/errors.js';
import { eachPartition } from './per-partition.js';

const LATEST = -1n;
const EARLIEST = -2n;
const MAX_TIMESTAMP = -3n;
const EARLIEST_LOCAL = -4n;
const LATEST_TIERED = -5n;
const EARLIEST_PENDING_UPLOAD = -6n;
const READ_COMMITTED = 1;

function result(partitionIndex: number, errorCode: number, offset = -1n, timestamp = -1n, leaderEpoch = -1): ListOffsetsResponseListOffsetsPartitionResponse {
  return { partitionIndex, errorCode, timestamp, offset, leaderEpoch };
}

async function lookup(p: PartitionView, timestamp: bigint, isolationLevel: number, version: number): Promise<{ offset: bigint; timestamp: bigint; leaderEpoch: number } | number> {
  switch (timestamp) {
    case LATEST:
      return { offset: isolationLevel === READ_COMMITTED ? p.lastStableOffset : p.highWatermark, timestamp: -1n, leaderEpoch: p.leaderEpoch };
    case EARLIEST:
      return { offset: p.logStartOffset, timestamp: -1n, leaderEpoch: p.leaderEpoch };
    case MAX_TIMESTAMP:
      if (version < 7) return ErrorCode.UNSUPPORTED_VERSION;
      return (await p.maxTimestampOffset()) ?? { offset: -1n, timestamp: -1n, leaderEpoch: -1 };
    case EARLIEST_LOCAL:
      if (version < 8) return ErrorCode.UNSUPPORTED_VERSION;
      return { offset: p.localLogStartOffset, timestamp: -1n, leaderEpoch: p.leaderEpoch };
    case LATEST_TIERED: {
      if (version < 9) return ErrorCode.UNSUPPORTED_VERSION;
      const offset = p.highestRemoteOffset();
      return { offset, timestamp: -1n, leaderEpoch: offset < 0n ? -1 : p.leaderEpoch };
    }
    case EARLIEST_PENDING_UPLOAD: {
      if (version < 11) return ErrorCode.UNSUPPORTED_VERSION;
      const offset = p.earliestPendingUploadOffset();
      return { offset, timestamp: -1n, leaderEpoch: offset < 0n ? -1 : p.leaderEpoch };
    }
    default: {
      if (timestamp < 0n) return ErrorCode.INVALID_REQUEST;
      const found = await p.offsetForTimestamp(timestamp);
      if (found === null) return { offset: -1n, timestamp: -1n, leaderEpoch: -1 };
      // Only offsets a consumer may read are answered.
      const end = isolationLevel === READ_COMMITTED ? p.lastStableOffset : p.highWatermark;
      if (found.offset >= end) return { offset: -1n, timestamp: -1n, leaderEpoch: -1 };
      return found;
    }
  }
}

export const handler: ApiHandler<ListOffsetsRequest, ListOffsetsResponse, BrokerContext> = {
  apiKey: 2,
  minVersion: 1,
  maxVersion: 11,
  async handle(broker, req, ctx) {
    const topics = await eachPartition(
      broker,
      req.topics,
      'list offsets',
      async (p, rp) => {
        const r = await lookup(p, rp.timestamp, req.isolationLevel, ctx.apiVersion);
        return typeof r === 'number' ? result(rp.partitionIndex, r) : result(rp.partitionIndex, 0, r.offset, r.timestamp, r.leaderEpoch);
      },
      (rp, errorCode) => result(rp.partitionIndex, errorCode),
    );
    return { throttleTimeMs: 0, topics };
  },
  errorResponse(req, errorCode) {
    return { throttleTimeMs: 0, topics: req.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => result(p.partitionIndex, errorCode)) })) };
  },
};
