// What a follower appends (Kafka's UnifiedLog.appendAsFollower: origin
// REPLICATION, no offset assignment): the leader's batches as they came, with
// their offsets and partitionLeaderEpoch. Checked here only for what could
// break the local log: v2 framing, CRC, and offsets that continue the log end
// without gaps backwards. Pure: no I/O.
import { ErrorCode, KafkaError } from '../protocol/errors.js';
import { type BatchHeader, batchCrcValid, iterateBatches, lastOffset as lastOffsetOf } from '../protocol/record-batch.js';
import type { AppendMeta } from './log-segment.js';

export interface FollowerBatches {
  /** The whole batches of the input (a trailing partial batch, as a fetch cut at max bytes leaves, is dropped). */
  readonly valid: Buffer;
  readonly headers: readonly BatchHeader[];
  readonly meta: AppendMeta;
  readonly messages: number;
}

/**
 * The batches of `records`, which must start at or after `logEndOffset` (the
 * fetch offset) with ascending offsets. Null when no whole batch is there.
 * Throws CORRUPT_MESSAGE on a bad CRC or framing, and, as Kafka's
 * UnexpectedAppendOffsetException, OFFSET_OUT_OF_RANGE when a batch starts
 * below the log end (the leader answered another offset than asked).
 */
export function followerBatches(records: Buffer, logEndOffset: bigint, where: string): FollowerBatches | null {
  const headers: BatchHeader[] = [];
  let end = 0;
  let next = logEndOffset;
  let maxTimestamp = -1n;
  let offsetOfMaxTimestamp = -1n;
  let messages = 0;
  const scanner = iterateBatches(records);
  for (const b of scanner) {
    const h = b.header;
    if (!batchCrcValid(records, b.position, h)) throw new KafkaError(ErrorCode.CORRUPT_MESSAGE, `${where}: replicated batch at offset ${h.baseOffset} fails its CRC`);
    if (h.baseOffset < next) {
      throw new KafkaError(ErrorCode.OFFSET_OUT_OF_RANGE, `${where}: replicated batch starts at ${h.baseOffset}, below the expected offset ${next}`);
    }
    const last = lastOffsetOf(h);
    if (h.maxTimestamp > maxTimestamp) {
      maxTimestamp = h.maxTimestamp;
      offsetOfMaxTimestamp = last;
    }
    messages += h.lastOffsetDelta + 1;
    next = last + 1n;
    end = b.position + b.size;
    headers.push(h);
  }
  const first = headers[0];
  if (first === undefined) return null;
  return {
    valid: end === records.length ? records : records.subarray(0, end),
    headers,
    meta: { firstOffset: first.baseOffset, lastOffset: next - 1n, maxTimestamp, offsetOfMaxTimestamp },
    messages,
  };
}
