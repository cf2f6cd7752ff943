// The local log as the remote tier sees it: the port through which remote-log
// reads a partition's local segments, and nothing more. broker/log's
// PartitionLog implements it (and the tests' fakes can); remote-log never
// imports broker/log. After Kafka's split: the remote storage manager is handed
// a LogSegmentData value (a data file path and index buffers), never the log.
import type { LogConfig } from '../metadata/log-config.js';

/** One entry of the partition's leader-epoch history: `epoch` starts at `startOffset`. */
export interface LeaderEpochEntry {
  readonly epoch: number;
  readonly startOffset: bigint;
}

/** A local segment, as far as copy, expiration and the deletion veto look at it. */
export interface LocalSegment {
  readonly baseOffset: bigint;
  /** The offset after the segment's last batch (the base offset when empty). */
  readonly nextOffset: bigint;
  readonly size: number;
  readonly isEmpty: boolean;
  /** No aborted transaction is recorded in the segment's transaction index. */
  readonly txnIndexEmpty: boolean;
  /** The largest record timestamp (ms), or the file's mtime when no batch has one. */
  largestTimestamp(): Promise<number>;
}

/**
 * What goes up for one closed segment (Kafka's LogSegmentData): the data by
 * path, the indexes as bytes holding exactly their valid entries.
 */
export interface LogSegmentData {
  /** Path of the segment's .log file (read in chunks by the store). */
  readonly logSegment: string;
  readonly offsetIndex: Buffer;
  readonly timeIndex: Buffer;
  /** Absent when the segment has no aborted transactions. */
  readonly transactionIndex?: Buffer;
  /** Path of the producer snapshot taken at the segment's end, or the bytes of an empty one when there is none. */
  readonly producerSnapshot: string | Buffer;
  /** The leader-epoch checkpoint of the epochs starting before the segment's end. */
  readonly leaderEpochIndex: Buffer;
}

/** The tiering settings of a partition's config. */
export type TieringConfig = Pick<LogConfig, 'retentionMs' | 'retentionBytes' | 'remoteStorageEnable' | 'remoteLogCopyDisable' | 'remoteLogDeleteOnDisable'>;

/** One partition's local log. */
export interface LocalLog {
  readonly topic: string;
  readonly partition: number;
  readonly topicId: string;
  readonly currentConfig: TieringConfig;
  readonly logStartOffset: bigint;
  readonly localLogStartOffset: bigint;
  readonly logEndOffset: bigint;
  readonly highWatermark: bigint;
  readonly lastStableOffset: bigint;
  /** Closed (non-active) segments, oldest first. */
  closedSegments(): readonly LocalSegment[];
  activeSegment(): LocalSegment;
  leaderEpochEntries(): readonly LeaderEpochEntry[];
  /**
   * The upload of `segment` (one of this log's closedSegments()), its epoch
   * checkpoint cut from `epochs` (the history the copy recorded in the metadata).
   */
  segmentData(segment: LocalSegment, epochs: readonly LeaderEpochEntry[]): Promise<LogSegmentData>;
  /** Whether every batch of `segment` (one of this log's closedSegments()) is uncompressed. */
  batchesUncompressed(segment: LocalSegment): Promise<boolean>;
  /** DeleteRecords on the local log: moves the log start offset to `offset`; resolves to the new log start offset. */
  deleteRecordsBefore(offset: bigint): Promise<bigint>;
}
