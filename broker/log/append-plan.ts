// The in-memory half of an append, before any byte is written: validate the
// batches (Kafka's analyzeAndValidateRecords + LogValidator), check them against
// producer state (duplicates, sequences, epochs, transactions), then assign
// offsets, the leader epoch and LogAppendTime in place. Nothing here touches the
// log or commits producer state; PartitionLog does that once the write is done.
import { ErrorCode, KafkaError } from '../protocol/errors.js';
import {
  LOG_OVERHEAD,
  OFFSET_BATCH_LENGTH,
  type ValidatedBatch,
  assignBaseOffset,
  assignPartitionLeaderEpoch,
  readBatchHeader,
  stampLogAppendTime,
  validateBatchForAppend,
} from '../protocol/record-batch.js';
import { rebuildBatch, targetCodec } from '../protocol/recompress.js';
import type { LogConfig } from '../../metadata/log-config.js';
import { appendBatchToInfo } from './producer-replay.js';
import { type BatchMetadata, type CompletedTxn, type ProducerAppendInfo, type ProducerStateManager, incrementSequence } from './producer-state.js';

export interface AppendPlan {
  /** The records without any trailing partial batch. */
  valid: Buffer;
  batches: ValidatedBatch[];
  firstOffset: bigint;
  lastOffset: bigint;
  maxTimestamp: bigint;
  offsetOfMaxTimestamp: bigint;
  /** Records in the append (for flush.messages). */
  messages: number;
  /** Per-producer state after the append, to commit once written. */
  producerUpdates: ProducerAppendInfo[];
  /** Transactions the append's markers complete, in order. */
  completedTxns: CompletedTxn[];
}

export type AppendAnalysis = { kind: 'append'; plan: AppendPlan } | { kind: 'duplicate'; batch: BatchMetadata };

const LONG_MAX = Number.MAX_SAFE_INTEGER;

/**
 * Validates every batch of `records`. Bytes after the last whole batch are
 * dropped, as Kafka trims them; an empty buffer is INVALID_RECORD; a total above
 * segment.bytes is RECORD_LIST_TOO_LARGE. A batch whose codec is not the
 * topic's compression.type (or that Kafka would rebuild, see
 * ValidatedBatch.rebuild) is rebuilt in the topic's codec, and must then still
 * fit max.message.bytes; every other batch is kept byte for byte, and when none
 * is rebuilt `valid` is `records` itself (or a view of it).
 */
export function validateRecords(
  records: Buffer,
  config: LogConfig,
  isFromClient: boolean,
  now: number,
  topicPartition?: string,
): { batches: ValidatedBatch[]; valid: Buffer } {
  if (records.length === 0) throw new KafkaError(ErrorCode.INVALID_RECORD, 'an append needs at least one record batch');
  const before = config.messageTimestampBeforeMaxMs ?? LONG_MAX;
  const after = config.messageTimestampAfterMaxMs ?? LONG_MAX;
  const createTime =
    config.messageTimestampType === 'CreateTime' && (before < LONG_MAX || after < LONG_MAX)
      ? { now, beforeMaxMs: before, afterMaxMs: after }
      : undefined;
  const batches: ValidatedBatch[] = [];
  // Only filled once a batch is rebuilt: the output is then assembled from parts.
  let parts: Buffer[] | null = null;
  let outPos = 0;
  let pos = 0;
  while (pos < records.length) {
    const remaining = records.length - pos;
    if (batches.length > 0 && (remaining < LOG_OVERHEAD || remaining < records.readInt32BE(pos + OFFSET_BATCH_LENGTH) + LOG_OVERHEAD)) break;
    const b = validateBatchForAppend(records, pos, config.maxMessageBytes, {
      origin: isFromClient ? 'client' : 'internal',
      // Client batches are decompressed and every record walked, as Kafka's
      // LogValidator does: a compressed payload that does not parse (with a CRC
      // recomputed over it) would otherwise be stored and stall every consumer.
      level: config.validationLevel ?? (isFromClient ? 'deep' : 'records'),
      logAppendTimeTopic: config.messageTimestampType === 'LogAppendTime',
      // cleanup.policy=compact: a producer's record without a key is INVALID_RECORD, as in Kafka.
      ...(isFromClient && config.cleanupPolicy?.compact === true ? { compacted: true } : {}),
      ...(createTime === undefined ? {} : { createTime }),
      ...(topicPartition === undefined ? {} : { topicPartition }),
    });
    const codec = targetCodec(config.compression, { compression: b.compression, attributes: b.header.attributes, ...(b.rebuild === true ? { rebuild: true } : {}) });
    if (codec === null) {
      if (parts !== null) parts.push(records.subarray(b.position, b.position + b.size));
      batches.push(outPos === b.position ? b : { ...b, position: outPos });
      outPos += b.size;
    } else {
      parts ??= batches.length === 0 ? [] : [records.subarray(0, b.position)];
      const rebuilt = rebuildBatch(records, b.position, b.size, codec, config.compression);
      if (rebuilt.length > config.maxMessageBytes) {
        throw new KafkaError(
          ErrorCode.MESSAGE_TOO_LARGE,
          `Message batch size is ${rebuilt.length} bytes in append to partition ${topicPartition ?? 'unknown'} which exceeds the maximum configured size of ${config.maxMessageBytes}.`,
        );
      }
      parts.push(rebuilt);
      batches.push({ header: readBatchHeader(rebuilt, 0), position: outPos, size: rebuilt.length, compression: codec });
      outPos += rebuilt.length;
    }
    pos += b.size;
  }
  const valid = parts !== null ? Buffer.concat(parts, outPos) : pos === records.length ? records : records.subarray(0, pos);
  if (valid.length > config.segmentBytes) {
    throw new KafkaError(ErrorCode.RECORD_LIST_TOO_LARGE, `append of ${valid.length} bytes exceeds segment.bytes ${config.segmentBytes}`);
  }
  return { batches, valid };
}

/**
 * Checks the batches against producer state as if appended at `nextOffset`.
 * A client batch equal to one of its producer's last five is a duplicate: the
 * whole append is answered with that batch's offsets (Kafka does the same).
 */
export function analyzeAppend(
  valid: Buffer,
  batches: readonly ValidatedBatch[],
  producerState: ProducerStateManager,
  opts: { nextOffset: bigint; isFromClient: boolean; logAppendTime: bigint | null },
): AppendAnalysis {
  const infos = new Map<bigint, ProducerAppendInfo>();
  const completedTxns: CompletedTxn[] = [];
  const origin = opts.isFromClient ? 'client' : 'coordinator';
  let next = opts.nextOffset;
  let maxTimestamp = -1n;
  let offsetOfMaxTimestamp = -1n;
  let messages = 0;
  for (const b of batches) {
    const h = b.header;
    const base = next;
    const last = base + BigInt(h.lastOffsetDelta);
    const batchMaxTs = opts.logAppendTime ?? h.maxTimestamp;
    if (h.producerId >= 0n) {
      if (opts.isFromClient) {
        const entry = infos.get(h.producerId)?.updatedEntry ?? producerState.lastEntry(h.producerId);
        const dup = entry?.findDuplicateBatch(h.producerEpoch, h.baseSequence, incrementSequence(h.baseSequence, h.lastOffsetDelta)) ?? null;
        if (dup !== null) return { kind: 'duplicate', batch: dup };
      }
      let info = infos.get(h.producerId);
      if (info === undefined) {
        info = producerState.prepareUpdate(h.producerId, origin);
        infos.set(h.producerId, info);
      }
      const c = appendBatchToInfo(info, { ...h, baseOffset: base, maxTimestamp: batchMaxTs }, valid.subarray(b.position, b.position + b.size));
      if (c !== null) completedTxns.push(c);
    }
    if (batchMaxTs > maxTimestamp) {
      maxTimestamp = batchMaxTs;
      offsetOfMaxTimestamp = last;
    }
    messages += h.lastOffsetDelta + 1;
    next = last + 1n;
  }
  return {
    kind: 'append',
    plan: {
      valid,
      batches: [...batches],
      firstOffset: opts.nextOffset,
      lastOffset: next - 1n,
      maxTimestamp,
      offsetOfMaxTimestamp,
      messages,
      producerUpdates: [...infos.values()],
      completedTxns,
    },
  };
}

/** Rewrites base offsets and leader epochs (and LogAppendTime, re-CRCing) in place. */
export function assignOffsets(plan: AppendPlan, leaderEpoch: number, logAppendTime: bigint | null): void {
  let assign = plan.firstOffset;
  for (const b of plan.batches) {
    assignBaseOffset(plan.valid, b.position, assign);
    assignPartitionLeaderEpoch(plan.valid, b.position, leaderEpoch);
    if (logAppendTime !== null) stampLogAppendTime(plan.valid, b.position, b.size, logAppendTime);
    assign += BigInt(b.header.lastOffsetDelta) + 1n;
  }
}
