// The port through which the coordinator persists to `__consumer_offsets`,
// its in-memory implementation, the group -> partition mapping, and a writer
// that keeps appends to one partition in call order and group-commits them.
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

interface QueuedWrite {
  readonly records: readonly OffsetsTopicRecord[];
  /** Set for a transactional write, which goes out alone as a batch of its producer. */
  readonly producer?: TxnProducer;
  readonly resolve: () => void;
  readonly reject: (err: unknown) => void;
}

interface PartitionQueue {
  readonly waiting: QueuedWrite[];
  inFlight: boolean;
  /** Settles (never rejects) when the last write issued so far has settled. */
  tail: Promise<void>;
}

/** How much one group-committed append may carry (well under the 1 MiB default message.max.bytes). */
export interface OffsetsTopicWriterLimits {
  readonly maxRecordsPerAppend: number;
  readonly maxBytesPerAppend: number;
}

/**
 * Resolves once what was appended to the partition is replicated (in a
 * cluster: the high watermark covers it, as an acks=all produce); throws a
 * KafkaError (NOT_ENOUGH_REPLICAS, REQUEST_TIMED_OUT, ...) when it is not.
 */
export type CommittedWait = (partition: number) => Promise<void>;

export const defaultOffsetsTopicWriterLimits: OffsetsTopicWriterLimits = { maxRecordsPerAppend: 4096, maxBytesPerAppend: 512 * 1024 };

function recordBytes(records: readonly OffsetsTopicRecord[]): number {
  let n = 0;
  for (const r of records) n += r.key.length + (r.value?.length ?? 0);
  return n;
}

/**
 * Group commit per partition: one append to a partition is in flight at a
 * time; writes issued meanwhile queue, and when it settles the queued plain
 * writes go out together as one append (a transactional write goes alone).
 * Records land in call order, and every write settles with the outcome of the
 * append that carried it, in call order. With `committed` (a cluster) an append
 * settles only once it is replicated, as Kafka's coordinators write with acks=all.
 */
export class OffsetsTopicWriter {
  private readonly queues = new Map<number, PartitionQueue>();
  private readonly limits: OffsetsTopicWriterLimits;

  constructor(
    private readonly log: OffsetsTopicLog,
    limits: Partial<OffsetsTopicWriterLimits> = {},
    private readonly committed?: CommittedWait,
  ) {
    this.limits = { ...defaultOffsetsTopicWriterLimits, ...limits };
  }

  append(partition: number, records: readonly OffsetsTopicRecord[]): Promise<void> {
    return this.enqueue(partition, records, undefined);
  }

  appendTransactional(partition: number, records: readonly OffsetsTopicRecord[], producer: TxnProducer): Promise<void> {
    return this.enqueue(partition, records, producer);
  }

  /** Resolves when every append issued so far to the partition has settled. */
  async barrier(partition: number): Promise<void> {
    await (this.queues.get(partition)?.tail ?? Promise.resolve());
  }

  private enqueue(partition: number, records: readonly OffsetsTopicRecord[], producer: TxnProducer | undefined): Promise<void> {
    const queue = this.queues.get(partition) ?? { waiting: [], inFlight: false, tail: Promise.resolve() };
    this.queues.set(partition, queue);
    const done = new Promise<void>((resolve, reject) => {
      queue.waiting.push(producer === undefined ? { records, resolve, reject } : { records, producer, resolve, reject });
    });
    const tail = done.catch(() => undefined);
    queue.tail = tail;
    if (!queue.inFlight) {
      queue.inFlight = true;
      // Starts on the next microtask, so writes issued in the same tick share the first append.
      queueMicrotask(() => this.drain(partition, queue));
    }
    return done;
  }

  /** The writes at the head of the queue that go out as one append. */
  private takeRun(queue: PartitionQueue): QueuedWrite[] {
    const first = queue.waiting[0];
    if (first === undefined) return [];
    if (first.producer !== undefined) return queue.waiting.splice(0, 1);
    let count = 0;
    let records = 0;
    let bytes = 0;
    for (const w of queue.waiting) {
      if (w.producer !== undefined) break;
      const b = recordBytes(w.records);
      if (count > 0 && (records + w.records.length > this.limits.maxRecordsPerAppend || bytes + b > this.limits.maxBytesPerAppend)) break;
      count++;
      records += w.records.length;
      bytes += b;
    }
    return queue.waiting.splice(0, count);
  }

  private drain(partition: number, queue: PartitionQueue): void {
    const run = this.takeRun(queue);
    if (run.length === 0) {
      queue.inFlight = false;
      if (this.queues.get(partition) === queue) this.queues.delete(partition);
      return;
    }
    const settle = (err: unknown, failed: boolean): void => {
      for (const w of run) {
        if (failed) w.reject(err);
        else w.resolve();
      }
      this.drain(partition, queue);
    };
    this.write(partition, run).then(
      () => settle(undefined, false),
      (err: unknown) => settle(err, true),
    );
  }

  private async write(partition: number, run: readonly QueuedWrite[]): Promise<void> {
    const first = run[0];
    if (first?.producer !== undefined) {
      if (this.log.appendTransactional === undefined) throw new KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, 'this offsets log takes no transactional writes');
      await this.log.appendTransactional(partition, first.records, first.producer);
    } else {
      await this.log.append(partition, run.length === 1 ? (first?.records ?? []) : run.flatMap((w) => w.records));
    }
    await this.committed?.(partition);
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
    case ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND:
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
