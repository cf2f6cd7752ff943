// The port through which the remote log metadata store reads and writes the
// `__remote_log_metadata` topic. The broker implements it over its own partition
// logs (each value written as a record of a record batch); MemoryMetadataTopicLog
// is the in-memory implementation for tests.

/** The topic's name (Kafka's TopicBasedRemoteLogMetadataManagerConfig.REMOTE_LOG_METADATA_TOPIC_NAME). */
export const REMOTE_LOG_METADATA_TOPIC = '__remote_log_metadata';

export interface MetadataTopicRecord {
  readonly offset: bigint;
  readonly key: Buffer | null;
  readonly value: Buffer;
}

export interface MetadataTopicLog {
  /** Number of partitions of the metadata topic; fixed for the life of the store. */
  readonly partitionCount: number;
  /**
   * Appends one record and resolves with its offset once it is durable (written
   * and, where the broker replicates, committed). Rejects if it is not.
   */
  append(partition: number, key: Buffer | null, value: Buffer): Promise<bigint>;
  /**
   * The records of `partition` from `fromOffset` (inclusive) up to the end of the
   * log as it is when iteration starts, in offset order. Offsets may have gaps.
   */
  read(partition: number, fromOffset: bigint): AsyncIterable<MetadataTopicRecord>;
}

export class MemoryMetadataTopicLog implements MetadataTopicLog {
  private readonly partitions: MetadataTopicRecord[][];
  /** When set, the next append to any partition rejects with it (once). */
  failNextAppend: Error | undefined;

  constructor(readonly partitionCount: number) {
    this.partitions = Array.from({ length: partitionCount }, () => []);
  }

  async append(partition: number, key: Buffer | null, value: Buffer): Promise<bigint> {
    const records = this.partition(partition);
    const failure = this.failNextAppend;
    if (failure !== undefined) {
      this.failNextAppend = undefined;
      throw failure;
    }
    const offset = BigInt(records.length);
    records.push({ offset, key, value });
    return offset;
  }

  async *read(partition: number, fromOffset: bigint): AsyncIterable<MetadataTopicRecord> {
    const records = this.partition(partition);
    const end = records.length;
    for (let i = Number(fromOffset < 0n ? 0n : fromOffset); i < end; i++) yield records[i] as MetadataTopicRecord;
  }

  /** Records of one partition, for assertions. */
  records(partition: number): readonly MetadataTopicRecord[] {
    return this.partition(partition);
  }

  /** Total records over all partitions. */
  get size(): number {
    let n = 0;
    for (const p of this.partitions) n += p.length;
    return n;
  }

  private partition(partition: number): MetadataTopicRecord[] {
    const records = this.partitions[partition];
    if (records === undefined) throw new RangeError(`no metadata topic partition ${partition}`);
    return records;
  }
}
