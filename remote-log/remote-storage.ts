// The remote storage port. It moves bytes only: a segment's data and indexes go
// up, byte ranges and whole indexes come back, a segment's objects can be
// deleted or listed. What the bytes mean (offsets, epochs, segment states) is
// the remote log metadata's business, as in Kafka's RemoteStorageManager.
//
// Contract shared by every backend (the contract suite in
// test/remote-log/remote-storage.contract.ts checks it):
// - copySegment is idempotent: a retried copy with the same ref overwrites
//   whatever a partial earlier attempt left. The manifest is written last; a
//   segment without a manifest is incomplete and is never served.
// - fetchData/fetchIndex verify CRC-32C against the manifest; a mismatch is a
//   RemoteCorruptionError (CORRUPT_MESSAGE), never returned bytes.
// - deleteSegment is idempotent and removes every kind, partial or complete.
// - Failures are RemoteStorageError (KAFKA_STORAGE_ERROR) wrapping their
//   cause; timeouts and aborts carry REQUEST_TIMED_OUT.
import { ErrorCode, KafkaError } from '../broker/protocol/errors.js';
import type { BatchProblem } from './objects/batch-crc-scanner.js';

/** Which remote segment: everything needed to name its objects. */
export interface RemoteSegmentRef {
  readonly topic: string;
  /** The topic id, 16 bytes as base64url without padding (22 characters). */
  readonly topicId: string;
  readonly partition: number;
  readonly baseOffset: bigint;
  /** The remote segment id, a uuid as base64url without padding (22 characters). */
  readonly segmentId: string;
}

/** A file on disk (path) or bytes already in memory. */
export type SegmentSource = string | Buffer;

export interface SegmentFiles {
  readonly data: SegmentSource;
  readonly offsetIndex: SegmentSource;
  readonly timeIndex: SegmentSource;
  /** Absent when the segment has no aborted transactions; fetchIndex('txn') then returns an empty buffer. */
  readonly txnIndex?: SegmentSource;
  readonly producerSnapshot: SegmentSource;
  readonly leaderEpochCheckpoint: SegmentSource;
  /**
   * The caller's word that every batch in `data` is uncompressed. Only then may
   * the store zstd-compress the data (when its compression is enabled).
   */
  readonly batchesUncompressed?: boolean;
  /**
   * The caller's word that no earlier copy used this segment id (a new id per
   * attempt): nothing is there to overwrite, so the store may skip making a
   * previous copy incomplete first. Without it, a copy overwrites safely.
   */
  readonly freshSegmentId?: boolean;
}

/** The per-object kinds that end object keys. */
export type ObjectKind =
  | 'log'
  | 'index'
  | 'timeindex'
  | 'txnindex'
  | 'snapshot'
  | 'leader-epoch-checkpoint'
  | 'manifest';

/** The index kinds callers ask for, after Kafka's IndexType. */
export type IndexKind = 'offset' | 'time' | 'txn' | 'producerSnapshot' | 'leaderEpoch';

export type DataCompression = 'none' | 'zstd-chunked';

export interface StoredObject {
  readonly key: string;
  /** Bytes as stored (after compression for the data object). */
  readonly size: number;
  readonly crc32c: number;
}

export interface CopyResult {
  readonly manifestKey: string;
  /** Objects written, by kind (txnindex absent when the segment had none). */
  readonly objects: Readonly<Partial<Record<ObjectKind, StoredObject>>>;
  /** Size of the segment data before compression. */
  readonly dataSize: number;
  /** Size of the data object as stored. */
  readonly storedDataSize: number;
  readonly compression: DataCompression;
  readonly chunkSize: number;
  /**
   * Every record batch of the data was whole and passed its CRC during the
   * upload. Either way the copy completes; when not, batchProblem says where.
   */
  readonly batchesVerified: boolean;
  readonly batchProblem?: BatchProblem;
  /** Small opaque blob (UTF-8 JSON, copy-summary.ts) a metadata record may carry as custom metadata. */
  readonly customMetadata: Buffer;
}

export interface ListedObject {
  readonly key: string;
  readonly kind: ObjectKind;
  readonly size: number;
  /** Milliseconds since the epoch. */
  readonly lastModified: number;
}

export interface RemoteSegmentListing {
  readonly ref: RemoteSegmentRef;
  readonly objects: readonly ListedObject[];
  /** True when the manifest exists: the copy completed. */
  readonly hasManifest: boolean;
  /** The newest lastModified among the segment's objects. */
  readonly lastModified: number;
}

/**
 * Memory a fetchChunks caller lends for the chunks it asks for: the buffer
 * chunk `index` (`length` bytes as stored) is to be read into, at least that
 * long, or undefined (the store allocates its own). A store that uses it tells
 * and returns the chunk as `target.subarray(0, length)`, and writes the target
 * no more once the chunk is told or the request has settled. A store may
 * ignore it (compressed data, data stored under another chunk size).
 */
export type ChunkTargets = (index: number, length: number) => Buffer | undefined;

/** Told each chunk of a fetchChunks request as it arrives: `index` is the chunk's index in the segment. */
export type ChunkListener = (index: number, chunk: Buffer) => void;

export interface RemoteStorage {
  copySegment(ref: RemoteSegmentRef, files: SegmentFiles, signal?: AbortSignal): Promise<CopyResult>;
  /**
   * Bytes [startPosition, endPositionInclusive] of the segment data, as it was
   * before any compression. The end defaults to, and is clamped to, the last
   * byte; a start at or past the end yields an empty buffer.
   */
  fetchData(
    ref: RemoteSegmentRef,
    startPosition: number,
    endPositionInclusive?: number,
    signal?: AbortSignal,
  ): Promise<Buffer>;
  /**
   * Chunks [firstChunk, lastChunk] of `chunkSize` bytes of the segment data
   * (as fetchData: before compression, verified), in one request where the
   * store allows: one Buffer per chunk, each its own allocation rather than a
   * view into a shared one, so a cache can hold and drop them one by one.
   * Chunks past the end are left out; the data's last chunk may be short.
   *
   * `onChunk` is told each chunk (its index in the segment, and the same
   * Buffer the answer will hold), in order, as soon as it has arrived and been
   * verified, while the rest of the request may still be streaming: a reader
   * of the first chunk need not wait for the whole body. A chunk handed to
   * onChunk stays valid when the request fails later (the answer then
   * rejects). An exception thrown by onChunk fails the request.
   */
  fetchChunks(
    ref: RemoteSegmentRef,
    firstChunk: number,
    lastChunk: number,
    chunkSize: number,
    signal?: AbortSignal,
    onChunk?: ChunkListener,
    targets?: ChunkTargets,
  ): Promise<Buffer[]>;
  fetchIndex(ref: RemoteSegmentRef, kind: IndexKind, signal?: AbortSignal): Promise<Buffer>;
  deleteSegment(ref: RemoteSegmentRef, signal?: AbortSignal): Promise<void>;
  /**
   * Segments found under `prefix` (relative to the store's key prefix; build it
   * with object-keys.ts), grouped by segment. Keys that are not segment objects
   * are ignored. With `startAfter` (also relative to the store's key prefix;
   * object-keys.ts builds it too), only objects whose key sorts after it are
   * listed, so a LIST costs what is new rather than the whole partition.
   */
  listSegments(prefix?: string, signal?: AbortSignal, startAfter?: string): Promise<RemoteSegmentListing[]>;
  close(): Promise<void>;
}

/** A remote storage failure, wrapped with its cause. */
export class RemoteStorageError extends KafkaError {
  constructor(message: string, options?: { cause?: unknown; code?: number }) {
    super(options?.code ?? ErrorCode.KAFKA_STORAGE_ERROR, message, options);
    this.name = 'RemoteStorageError';
  }
}

/** The object (or the segment's manifest) does not exist. */
export class RemoteResourceNotFoundError extends RemoteStorageError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'RemoteResourceNotFoundError';
  }
}

/** Fetched bytes do not match the manifest's CRC or size: never served. */
export class RemoteCorruptionError extends RemoteStorageError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, { ...options, code: ErrorCode.CORRUPT_MESSAGE });
    this.name = 'RemoteCorruptionError';
  }
}

/** A request ran past its timeout on every attempt, or the caller aborted. */
export class RemoteTimeoutError extends RemoteStorageError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, { ...options, code: ErrorCode.REQUEST_TIMED_OUT });
    this.name = 'RemoteTimeoutError';
  }
}

/** The caller's AbortSignal fired. */
export class RemoteAbortedError extends RemoteTimeoutError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'RemoteAbortedError';
  }
}

/** Throws RemoteAbortedError when `signal` has fired. */
export function throwIfAborted(signal: AbortSignal | undefined, what: string): void {
  if (signal?.aborted) throw new RemoteAbortedError(`${what}: aborted`, { cause: signal.reason });
}

export const INDEX_KIND_TO_OBJECT: Readonly<Record<IndexKind, ObjectKind>> = {
  offset: 'index',
  time: 'timeindex',
  txn: 'txnindex',
  producerSnapshot: 'snapshot',
  leaderEpoch: 'leader-epoch-checkpoint',
};

/** Waits for `p`, but rejects with RemoteAbortedError as soon as `signal` fires (p keeps running for others). */
export function raceAbort<T>(p: Promise<T>, signal: AbortSignal | undefined, what: string): Promise<T> {
  if (signal === undefined) return p;
  if (signal.aborted) return Promise.reject(new RemoteAbortedError(`${what}: aborted`, { cause: signal.reason }));
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(new RemoteAbortedError(`${what}: aborted`, { cause: signal.reason }));
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}
