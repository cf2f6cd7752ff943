// The remote log metadata store (Kafka's TopicBasedRemoteLogMetadataManager): every
// state change of a remote segment is written as a record to `__remote_log_metadata`
// through the MetadataTopicLog port, and applied to the in-memory index only once
// the append is durable. At start-up every metadata partition is replayed from its
// first record; until a user partition's metadata partition is replayed, queries
// and writes for it fail with a retriable REPLICA_NOT_AVAILABLE (as Kafka's
// ReplicaNotAvailableException), never with partial answers.
//
// Writes are validated against the index before the append (an illegal transition
// writes nothing) and serialised per metadata partition, together with catch-up
// reads, so that the index applies each partition's records exactly once, in
// offset order. Replay tolerates what a crash or a retry can leave in the topic:
// duplicates, updates for segments or partitions already deleted, undecodable
// records; each is skipped and reported through `onSkippedRecord`.
import { ErrorCode, KafkaError } from '../../broker/protocol/errors.js';
import {
  IllegalStateTransitionError,
  InvalidRemoteLogMetadataError,
  RemoteLogMetadataNotReadyError,
  RemoteResourceNotFoundError,
} from './errors.js';
import { metadataPartition } from './metadata-partitioner.js';
import type { MetadataTopicLog, MetadataTopicRecord } from './metadata-topic-log.js';
import { RemoteLogMetadataCache, validateSegment } from './remote-log-metadata-cache.js';
import { deserializeRemoteLogMetadata, serializeRemoteLogMetadata } from './serde.js';
import { transitionPartitionDeleteState, transitionSegmentState } from './state-machine.js';
import type {
  RemoteLogMetadataEvent,
  RemoteLogSegmentMetadata,
  RemoteLogSegmentMetadataUpdate,
  RemotePartitionDeleteMetadata,
  RemotePartitionDeleteState,
  TopicIdPartition,
} from './types.js';
import { formatTopicIdPartition, topicIdPartitionKey } from './types.js';

/** Partitions whose metadata partition is remembered at once (a broker's partition count, with room). */
const PARTITION_OF_LIMIT = 200_000;

export interface SkippedRecord {
  readonly partition: number;
  readonly offset: bigint;
  readonly reason: string;
  readonly error?: unknown;
}

export interface RemoteLogMetadataManagerOptions {
  readonly log: MetadataTopicLog;
  /** Called for each record replay or catch-up skips (see the module comment). */
  readonly onSkippedRecord?: (skipped: SkippedRecord) => void;
}

export interface RemoteLogMetadataStats {
  recordsApplied: number;
  recordsSkipped: number;
}

export class RemoteLogMetadataManager {
  private readonly log: MetadataTopicLog;
  private readonly onSkippedRecord: ((skipped: SkippedRecord) => void) | undefined;
  private readonly caches = new Map<string, RemoteLogMetadataCache>();
  /** metadataPartition's answers by topicIdPartitionKey (cleared when it reaches PARTITION_OF_LIMIT). */
  private readonly partitionOf = new Map<string, number>();
  /** Deletion state per partition; FINISHED entries stay as tombstones so late events are dropped. */
  private readonly deleteStates = new Map<string, RemotePartitionDeleteState>();
  /** Per metadata partition: the next offset to apply. */
  private readonly nextOffsets: bigint[];
  private readonly ready: boolean[];
  /** Per metadata partition: its replay, once started; cleared when it fails so it can be retried. */
  private readonly replays: Array<Promise<void> | undefined>;
  /** Per metadata partition: the tail of the chain serialising replay, writes and catch-ups. */
  private readonly queues: Promise<unknown>[];
  readonly stats: RemoteLogMetadataStats = { recordsApplied: 0, recordsSkipped: 0 };

  constructor(options: RemoteLogMetadataManagerOptions) {
    this.log = options.log;
    this.onSkippedRecord = options.onSkippedRecord;
    const n = options.log.partitionCount;
    this.nextOffsets = Array.from({ length: n }, () => 0n);
    this.ready = Array.from({ length: n }, () => false);
    this.replays = Array.from({ length: n }, () => undefined);
    this.queues = Array.from({ length: n }, () => Promise.resolve());
  }

  /**
   * Replays every metadata partition from its first record. Each partition becomes
   * ready as soon as its own replay ends. Rejects (KAFKA_STORAGE_ERROR) if some
   * partition could not be read; the others are ready regardless, and calling
   * start() again retries the failed ones.
   */
  async start(): Promise<void> {
    const results = await Promise.allSettled(this.replays.map((_, p) => this.replay(p)));
    const failed = results.findIndex((r) => r.status === 'rejected');
    if (failed >= 0) {
      const reason = (results[failed] as PromiseRejectedResult).reason;
      throw new KafkaError(ErrorCode.KAFKA_STORAGE_ERROR, `replay of __remote_log_metadata partition ${failed} failed`, {
        cause: reason,
      });
    }
  }

  /**
   * The metadata partition holding `tp`'s events (Kafka's RemoteLogMetadataTopicPartitioner),
   * remembered: every Fetch asks it for every partition (through the log start
   * offset), and the hash parses the topic id and hashes the name each time.
   */
  metadataPartition(tp: TopicIdPartition): number {
    const key = topicIdPartitionKey(tp);
    let partition = this.partitionOf.get(key);
    if (partition === undefined) {
      if (this.partitionOf.size >= PARTITION_OF_LIMIT) this.partitionOf.clear();
      partition = metadataPartition(tp, this.log.partitionCount);
      this.partitionOf.set(key, partition);
    }
    return partition;
  }

  isReady(tp: TopicIdPartition): boolean {
    return this.ready[this.metadataPartition(tp)] === true;
  }

  /** Replays `tp`'s metadata partition unless done or under way; resolves once it is ready. */
  whenReady(tp: TopicIdPartition): Promise<void> {
    return this.replay(this.metadataPartition(tp));
  }

  /**
   * Records a segment whose copy starts. `metadata.state` must be COPY_SEGMENT_STARTED
   * and its id new; the partition must not be being deleted.
   */
  addRemoteLogSegmentMetadata(metadata: RemoteLogSegmentMetadata): Promise<void> {
    const tp = metadata.remoteLogSegmentId.topicIdPartition;
    return this.write(tp, { type: 'segment', metadata }, () => {
      const deleteState = this.deleteStates.get(topicIdPartitionKey(tp));
      if (deleteState !== undefined) {
        throw new InvalidRemoteLogMetadataError(`${formatTopicIdPartition(tp)} is being deleted (${deleteState})`);
      }
      const cache = this.caches.get(topicIdPartitionKey(tp));
      const id = metadata.remoteLogSegmentId.id;
      transitionSegmentState(cache?.segmentState(id), metadata.state, `remote log segment ${id}`);
      validateSegment(metadata);
    });
  }

  /** Records a later state of a known segment (COPY_SEGMENT_FINISHED, DELETE_SEGMENT_*). */
  updateRemoteLogSegmentMetadata(update: RemoteLogSegmentMetadataUpdate): Promise<void> {
    const tp = update.remoteLogSegmentId.topicIdPartition;
    return this.write(tp, { type: 'segmentUpdate', update }, () => {
      const cache = this.caches.get(topicIdPartitionKey(tp));
      if (cache === undefined) {
        throw new RemoteResourceNotFoundError(
          `no remote log segment ${update.remoteLogSegmentId.id} for ${formatTopicIdPartition(tp)}`,
        );
      }
      cache.checkUpdate(update);
    });
  }

  /** Records a step of a remote partition's deletion; FINISHED drops its index. */
  putRemotePartitionDeleteMetadata(metadata: RemotePartitionDeleteMetadata): Promise<void> {
    const tp = metadata.topicIdPartition;
    return this.write(tp, { type: 'partitionDelete', delete: metadata }, () => {
      transitionPartitionDeleteState(
        this.deleteStates.get(topicIdPartitionKey(tp)),
        metadata.state,
        formatTopicIdPartition(tp),
      );
    });
  }

  /** The COPY_SEGMENT_FINISHED segment holding `offset` of `leaderEpoch`, or undefined. */
  remoteLogSegmentMetadata(tp: TopicIdPartition, leaderEpoch: number, offset: bigint): RemoteLogSegmentMetadata | undefined {
    return this.readCache(tp)?.remoteLogSegmentMetadata(leaderEpoch, offset);
  }

  /**
   * Segments in every state but DELETE_SEGMENT_FINISHED, sorted by start offset; with
   * `leaderEpoch`, only those holding records of that epoch.
   */
  listRemoteLogSegments(tp: TopicIdPartition, leaderEpoch?: number): RemoteLogSegmentMetadata[] {
    const cache = this.readCache(tp);
    if (cache === undefined) return [];
    return leaderEpoch === undefined ? cache.listRemoteLogSegments() : cache.listRemoteLogSegmentsForEpoch(leaderEpoch);
  }

  highestOffsetForEpoch(tp: TopicIdPartition, leaderEpoch: number): bigint | undefined {
    return this.readCache(tp)?.highestOffsetForEpoch(leaderEpoch);
  }

  /** Highest offset ever copied to the remote tier for `tp`, or undefined. */
  highestRemoteOffset(tp: TopicIdPartition): bigint | undefined {
    return this.readCache(tp)?.highestRemoteOffset();
  }

  /** Bytes of COPY_SEGMENT_FINISHED segments (what `retention.bytes` counts remotely). */
  remoteLogSizeBytes(tp: TopicIdPartition): number {
    return this.readCache(tp)?.remoteLogSizeBytes() ?? 0;
  }

  /** Start offset of the first COPY_SEGMENT_FINISHED segment, or undefined. */
  earliestRemoteOffset(tp: TopicIdPartition): bigint | undefined {
    return this.readCache(tp)?.earliestRemoteOffset();
  }

  /** A tracked segment by id, in any state but DELETE_SEGMENT_FINISHED. */
  remoteLogSegment(tp: TopicIdPartition, segmentId: string): RemoteLogSegmentMetadata | undefined {
    return this.readCache(tp)?.segment(segmentId);
  }

  remotePartitionDeleteState(tp: TopicIdPartition): RemotePartitionDeleteState | undefined {
    this.checkReady(tp);
    return this.deleteStates.get(topicIdPartitionKey(tp));
  }

  /** Number of segments tracked for `tp` (every state but DELETE_SEGMENT_FINISHED). */
  segmentCount(tp: TopicIdPartition): number {
    return this.readCache(tp)?.segmentCount ?? 0;
  }

  /**
   * This broker now leads or follows these partitions: make sure they have an index
   * and that their metadata partitions are caught up with records other brokers
   * wrote. Resolves when all of them are ready.
   */
  async onPartitionLeadershipChanges(
    leaderPartitions: Iterable<TopicIdPartition>,
    followerPartitions: Iterable<TopicIdPartition>,
  ): Promise<void> {
    const metadataPartitions = new Set<number>();
    for (const tp of [...leaderPartitions, ...followerPartitions]) {
      const key = topicIdPartitionKey(tp);
      if (!this.caches.has(key) && this.deleteStates.get(key) !== 'DELETE_PARTITION_FINISHED') {
        this.caches.set(key, new RemoteLogMetadataCache(tp));
      }
      metadataPartitions.add(this.metadataPartition(tp));
    }
    await Promise.all([...metadataPartitions].map((p) => this.catchUp(p)));
  }

  /** Applies records appended to metadata partition `partition` since the last ones applied. */
  async catchUp(partition: number): Promise<void> {
    await this.replay(partition);
    await this.serialised(partition, () => this.applyFrom(partition));
  }

  private replay(partition: number): Promise<void> {
    let replay = this.replays[partition];
    if (replay === undefined) {
      replay = this.serialised(partition, async () => {
        await this.applyFrom(partition);
        this.ready[partition] = true;
      });
      this.replays[partition] = replay;
      replay.catch(() => {
        this.replays[partition] = undefined;
      });
    }
    return replay;
  }

  /** Reads and applies every record from the next unapplied offset to the current end. */
  private async applyFrom(partition: number): Promise<void> {
    for await (const record of this.log.read(partition, this.nextOffsets[partition] as bigint)) {
      this.applyRecord(partition, record);
    }
  }

  private applyRecord(partition: number, record: MetadataTopicRecord): void {
    this.nextOffsets[partition] = record.offset + 1n;
    let event: RemoteLogMetadataEvent;
    try {
      event = deserializeRemoteLogMetadata(record.value);
    } catch (error) {
      this.skip(partition, record.offset, 'undecodable record', error);
      return;
    }
    const reason = this.tryApply(event);
    if (reason === undefined) this.stats.recordsApplied++;
    else this.skip(partition, record.offset, reason.message, reason);
  }

  private skip(partition: number, offset: bigint, reason: string, error?: unknown): void {
    this.stats.recordsSkipped++;
    this.onSkippedRecord?.({ partition, offset, reason, ...(error === undefined ? {} : { error }) });
  }

  /** Applies an event from the topic; returns why it was skipped, or undefined. */
  private tryApply(event: RemoteLogMetadataEvent): Error | undefined {
    try {
      this.apply(event);
      return undefined;
    } catch (error) {
      if (
        error instanceof IllegalStateTransitionError ||
        error instanceof RemoteResourceNotFoundError ||
        error instanceof InvalidRemoteLogMetadataError
      ) {
        return error;
      }
      throw error;
    }
  }

  private apply(event: RemoteLogMetadataEvent): void {
    switch (event.type) {
      case 'segment': {
        const tp = event.metadata.remoteLogSegmentId.topicIdPartition;
        const key = topicIdPartitionKey(tp);
        this.checkNotDeleted(tp);
        let cache = this.caches.get(key);
        if (cache === undefined) {
          cache = new RemoteLogMetadataCache(tp);
          this.caches.set(key, cache);
        }
        cache.addCopyInProgressSegment(event.metadata);
        return;
      }
      case 'segmentUpdate': {
        const tp = event.update.remoteLogSegmentId.topicIdPartition;
        this.checkNotDeleted(tp);
        const cache = this.caches.get(topicIdPartitionKey(tp));
        if (cache === undefined) {
          throw new RemoteResourceNotFoundError(`no remote log metadata for ${formatTopicIdPartition(tp)}`);
        }
        cache.updateRemoteLogSegmentMetadata(event.update);
        return;
      }
      case 'partitionDelete': {
        const tp = event.delete.topicIdPartition;
        const key = topicIdPartitionKey(tp);
        const state = transitionPartitionDeleteState(this.deleteStates.get(key), event.delete.state, formatTopicIdPartition(tp));
        this.deleteStates.set(key, state);
        if (state === 'DELETE_PARTITION_FINISHED') this.caches.delete(key);
        return;
      }
      case 'segmentSnapshot':
        throw new InvalidRemoteLogMetadataError('segment snapshot records do not belong in the metadata topic');
    }
  }

  private checkNotDeleted(tp: TopicIdPartition): void {
    if (this.deleteStates.get(topicIdPartitionKey(tp)) === 'DELETE_PARTITION_FINISHED') {
      throw new RemoteResourceNotFoundError(`${formatTopicIdPartition(tp)} was deleted`);
    }
  }

  /** Validate, append, then apply: the index changes only after the append is durable. */
  private write(tp: TopicIdPartition, event: RemoteLogMetadataEvent, validate: () => void): Promise<void> {
    try {
      this.checkReady(tp);
    } catch (error) {
      return Promise.reject(error);
    }
    const partition = this.metadataPartition(tp);
    return this.serialised(partition, async () => {
      // Validate against everything in the log so far, including records other
      // brokers wrote and any record an ambiguous failed append may have left.
      await this.applyFrom(partition);
      validate();
      const value = serializeRemoteLogMetadata(event);
      let offset: bigint;
      try {
        offset = await this.log.append(partition, null, value);
      } catch (error) {
        if (error instanceof KafkaError) throw error;
        throw new KafkaError(ErrorCode.KAFKA_STORAGE_ERROR, `append to __remote_log_metadata-${partition} failed`, {
          cause: error,
        });
      }
      if (offset === this.nextOffsets[partition]) {
        // Nothing else was appended since the last record applied: apply ours directly.
        this.nextOffsets[partition] = offset + 1n;
        this.apply(event);
        this.stats.recordsApplied++;
        return;
      }
      // Records we have not seen precede ours: apply them all, in order, from the log.
      let ours: Error | undefined;
      let seen = false;
      for await (const record of this.log.read(partition, this.nextOffsets[partition] as bigint)) {
        if (record.offset > offset) break;
        if (record.offset === offset) {
          seen = true;
          this.nextOffsets[partition] = offset + 1n;
          ours = this.tryApply(event);
          if (ours === undefined) this.stats.recordsApplied++;
          else this.stats.recordsSkipped++;
        } else {
          this.applyRecord(partition, record);
        }
      }
      if (!seen) {
        throw new KafkaError(
          ErrorCode.KAFKA_STORAGE_ERROR,
          `__remote_log_metadata-${partition}: appended offset ${offset} is not readable`,
        );
      }
      if (ours !== undefined) throw ours;
    });
  }

  private serialised<T>(partition: number, task: () => Promise<T>): Promise<T> {
    const tail = this.queues[partition] as Promise<unknown>;
    const run = tail.then(task, task);
    this.queues[partition] = run.catch(() => undefined);
    return run;
  }

  private checkReady(tp: TopicIdPartition): void {
    if (!this.isReady(tp)) {
      throw new RemoteLogMetadataNotReadyError(
        `remote log metadata for ${formatTopicIdPartition(tp)} is not loaded yet (metadata partition ${this.metadataPartition(tp)})`,
      );
    }
  }

  private readCache(tp: TopicIdPartition): RemoteLogMetadataCache | undefined {
    this.checkReady(tp);
    return this.caches.get(topicIdPartitionKey(tp));
  }
}
