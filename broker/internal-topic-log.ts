// The broker's own records in its internal topics (`__consumer_offsets`,
// `__remote_log_metadata`, `__transaction_state`), written and read through
// the same partition logs clients use. Appends are broker writes (no sequence
// checks); `read` decodes the batches and skips control records. Transactional
// offset commits are appended as a transactional batch of their producer, and
// `readAll` reports the producer of such records and the COMMIT/ABORT markers
// that decide them, for the group coordinator's replay.
import type { Clock } from './common/clock.js';
import type { PartitionLog } from './log/partition-log.js';
import { buildRecordBatch, decodeRecordBatch, iterateBatches, isControl, isTransactional } from './protocol/record-batch.js';
import { decodeControlRecordKey } from './protocol/records.js';
import { ErrorCode, KafkaError } from './protocol/errors.js';
import type { OffsetsTopicLog, OffsetsTopicRecord, TxnProducer } from './group/offsets-topic.js';
import type { MetadataTopicLog, MetadataTopicRecord } from '../metadata/remote-log-metadata/metadata-topic-log.js';

const READ_CHUNK_BYTES = 1 << 20;

export class InternalTopicLog implements OffsetsTopicLog, MetadataTopicLog {
  constructor(
    private readonly topic: string,
    readonly partitionCount: number,
    private readonly logFor: (partition: number) => PartitionLog | undefined,
    private readonly clock: Clock,
    /** In a cluster: the partition's leader epoch in the image, stamped on this broker's appends as on a client's. */
    private readonly leaderEpochOf: (partition: number) => number = () => 0,
  ) {}

  private require(partition: number): PartitionLog {
    const log = this.logFor(partition);
    if (log === undefined) throw new KafkaError(ErrorCode.NOT_LEADER_OR_FOLLOWER, `${this.topic}-${partition} is not open on this broker`);
    return log;
  }

  /** Appends one batch; resolves with the offset of its last record. */
  async appendRecords(partition: number, records: readonly { key: Buffer | null; value: Buffer | null }[], producer?: TxnProducer): Promise<bigint> {
    const log = this.require(partition);
    const now = this.clock.now();
    const batch = buildRecordBatch({
      records: records.map((r) => ({ key: r.key, value: r.value, timestamp: now })),
      ...(producer === undefined ? {} : { producerId: producer.producerId, producerEpoch: producer.producerEpoch, baseSequence: 0, transactional: true }),
    });
    const r = await log.append(batch, { leaderEpoch: this.leaderEpochOf(partition), isFromClient: false });
    return r.lastOffset;
  }

  // OffsetsTopicLog
  async append(partition: number, records: readonly OffsetsTopicRecord[]): Promise<void>;
  // MetadataTopicLog
  async append(partition: number, key: Buffer | null, value: Buffer): Promise<bigint>;
  async append(partition: number, a: readonly OffsetsTopicRecord[] | Buffer | null, value?: Buffer): Promise<void | bigint> {
    if (Array.isArray(a)) {
      if (a.length > 0) await this.appendRecords(partition, a as readonly OffsetsTopicRecord[]);
      return;
    }
    return this.appendRecords(partition, [{ key: a as Buffer | null, value: value ?? null }]);
  }

  async appendTransactional(partition: number, records: readonly OffsetsTopicRecord[], producer: TxnProducer): Promise<void> {
    if (records.length > 0) await this.appendRecords(partition, records, producer);
  }

  /** Every keyed record from the log start, with the producer of transactional ones, and the transaction markers. */
  async *readAll(partition: number): AsyncIterable<OffsetsTopicRecord> {
    const log = this.require(partition);
    for await (const { attributes, producerId: pid, record: rec } of recordsFrom(log, log.logStartOffset)) {
      if (rec.key === null) continue;
      const producerId = isTransactional(attributes) ? pid : undefined;
      if (isControl(attributes)) {
        if (producerId === undefined) continue;
        const type = decodeControlRecordKey(rec.key).type;
        if (type === 0 || type === 1) yield { key: rec.key, value: rec.value, producerId, marker: type === 1 ? 'COMMIT' : 'ABORT' };
        continue;
      }
      yield producerId === undefined ? { key: rec.key, value: rec.value } : { key: rec.key, value: rec.value, producerId };
    }
  }

  /** Records from `fromOffset` up to the log end as it is now, control records skipped. */
  async *read(partition: number, fromOffset: bigint): AsyncIterable<MetadataTopicRecord & { value: Buffer | null }> {
    const log = this.require(partition);
    const from = fromOffset < log.logStartOffset ? log.logStartOffset : fromOffset;
    for await (const { attributes, record: rec } of recordsFrom(log, from)) {
      if (isControl(attributes)) continue;
      yield { offset: rec.offset, key: rec.key, value: rec.value } as MetadataTopicRecord & { value: Buffer | null };
    }
  }
}

/** Every record at or after `fromOffset` up to the log end as it is when called, with its batch's attributes and producer id. */
async function* recordsFrom(
  log: PartitionLog,
  fromOffset: bigint,
): AsyncGenerator<{ attributes: number; producerId: bigint; record: ReturnType<typeof decodeRecordBatch>['records'][number] }> {
  const end = log.logEndOffset;
  let offset = fromOffset;
  while (offset < end) {
    const r = await log.read(offset, READ_CHUNK_BYTES, { maxOffset: end, minOneBatch: true });
    if (r.records.length === 0) break;
    let next = offset;
    for (const chunk of r.records) {
      for (const b of iterateBatches(chunk)) {
        next = b.header.baseOffset + BigInt(b.header.lastOffsetDelta) + 1n;
        const attributes = b.header.attributes;
        const batch = decodeRecordBatch(chunk, b.position);
        for (const record of batch.records) {
          if (record.offset >= offset) yield { attributes, producerId: b.header.producerId, record };
        }
      }
    }
    if (next <= offset) break;
    offset = next;
  }
}
