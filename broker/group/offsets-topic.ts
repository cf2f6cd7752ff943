// The port through which the coordinator persists to `__consumer_offsets`,
// its in-memory implementation, the group -> partition mapping, and a writer
// that keeps appends to one partition in call order.
import { ErrorCode, KafkaError } from '../protocol/errors.js';

export interface OffsetsTopicRecord {
  readonly key: Buffer;
  /** null is a tombstone. */
  readonly value: Buffer | null;
  /** Read back only: the producer of a transactional record (TxnOffsetCommit), decided by a later marker. */
  readonly producerId?: bigint;
  /** Read back only: a COMMIT/ABORT marker of `producerId`'s transaction (key and value are the control record's). */
  readonly marker?: 'COMMIT' | 'ABORT';
}

export interface TxnProducer {
  readonly producerId: bigint;
  readonly producerEpoch: number;
}

/**
 * The broker implements this over its own `__consumer_offsets` partition logs
 * (a compacted topic). `append` resolves once the records are durable in the
 * log (or rejects); `readAll` replays a partition from its start.
 */
export interface OffsetsTopicLog {
  append(partition: number, records: readonly OffsetsTopicRecord[]): Promise<void>;
  /** Appends one transactional batch of `producer` (TxnOffsetCommit); the transaction's marker decides it. */
  appendTransactional?(partition: number, records: readonly OffsetsTopicRecord[], producer: TxnProducer): Promise<void>;
  readAll(partition: number): AsyncIterable<OffsetsTopicRecord>;
}

/** Java's String.hashCode over UTF-16 code units, as a signed 32-bit int. */
export function javaStringHashCode(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(h, 31) + s.charCodeAt(i)) | 0;
  return h;
}

/** Kafka's Utils.abs(groupId.hashCode) % offsets.topic.num.partitions. */
export function partitionForGroup(groupId: string, numPartitions: number): number {
  const h = javaStringHashCode(groupId);
  const abs = h === -2147483648 ? 0 : Math.abs(h);
  return abs % numPartitions;
}

export class MemoryOffsetsTopicLog implements OffsetsTopicLog {
  private readonly partitions = new Map<number, OffsetsTopicRecord[]>();

  async append(partition: number, records: readonly OffsetsTopicRecord[]): Promise<void> {
    let log = this.partitions.get(partition);
    if (log === undefined) {
      log = [];
      this.partitions.set(partition, log);
    }
    log.push(...records);
  }

  async appendTransactional(partition: number, records: readonly OffsetsTopicRecord[], producer: TxnProducer): Promise<void> {
    await this.append(partition, records.map((r) => ({ ...r, producerId: producer.producerId })));
  }

  /** What the transaction coordinator's marker adds to a partition. */
  appendMarker(partition: number, producerId: bigint, marker: 'COMMIT' | 'ABORT'): void {
    void this.append(partition, [{ key: Buffer.alloc(0), value: null, producerId, marker }]);
  }

  async *readAll(partition: number): AsyncIterable<OffsetsTopicRecord> {
    for (const r of [...(this.partitions.get(partition) ?? [])]) yield r;
  }

  /** Every record of a partition, oldest first (for tests and tools). */
  records(partition: number): readonly OffsetsTopicRecord[] {
    return this.partitions.get(partition) ?? [];
  }

  get totalRecords(): number {
    let n = 0;
    for (const p of this.partitions.values()) n += p.length;
    return n;
  }
}

/**
 * Serializes appends per partition: an append starts only after the previous
 * one to the same partition settled, so records of one group land in the
 * order the coordinator produced them whatever the log implementation does.
 */
export class OffsetsTopicWriter {
  private readonly tails = new Map<number, Promise<void>>();

  constructor(private readonly log: OffsetsTopicLog) {}

  append(partition: number, records: readonly OffsetsTopicRecord[]): Promise<void> {
    return this.enqueue(partition, () => this.log.append(partition, records));
  }

  private enqueue(partition: number, write: () => Promise<void>): Promise<void> {
    const previous = this.tails.get(partition) ?? Promise.resolve();
    const done = previous.then(write);
    const tail = done.catch(() => undefined);
    this.tails.set(partition, tail);
    void tail.then(() => {
      if (this.tails.get(partition) === tail) this.tails.delete(partition);
    });
    return done;
  }

  appendTransactional(partition: number, records: readonly OffsetsTopicRecord[], producer: TxnProducer): Promise<void> {
    return this.enqueue(partition, () => {
      if (this.log.appendTransactional === undefined) throw new KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, 'this offsets log takes no transactional writes');
      return this.log.appendTransactional(partition, records, producer);
    });
  }

  /** Resolves when every append issued so far to the partition has settled. */
  async barrier(partition: number): Promise<void> {
    await (this.tails.get(partition) ?? Promise.resolve());
  }
}

/**
 * The code a client sees when an append to __consumer_offsets failed (Kafka's
 * appendGroupMetadataErrorToResponseError): retriable coordinator errors where
 * the failure is about the log's availability.
 */
export function appendErrorCode(err: unknown): number {
  if (!(err instanceof KafkaError)) return ErrorCode.UNKNOWN_SERVER_ERROR;
  switch (err.code) {
    case ErrorCode.UNKNOWN_TOPIC_OR_PARTITION:
    case ErrorCode.NOT_ENOUGH_REPLICAS:
    case ErrorCode.REQUEST_TIMED_OUT:
      return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    case ErrorCode.NOT_LEADER_OR_FOLLOWER:
    case ErrorCode.KAFKA_STORAGE_ERROR:
      return ErrorCode.NOT_COORDINATOR;
    case ErrorCode.MESSAGE_TOO_LARGE:
    case ErrorCode.RECORD_LIST_TOO_LARGE:
    case ErrorCode.INVALID_FETCH_SIZE:
      return ErrorCode.UNKNOWN_SERVER_ERROR;
    default:
      return err.code;
  }
}
