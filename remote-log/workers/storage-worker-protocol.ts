// The messages between the broker's event loop and its remote storage workers
// (storage-worker.ts), and how segment files, copy results and errors cross
// the thread boundary (errors with their class and Kafka error code intact).
// Pure; no I/O.
import type { CopyResult, RemoteSegmentRef, SegmentFiles, SegmentSource } from '../remote-storage.js';
import type { PriorityOutcome } from './thread-priority.js';
import type { Manifest } from '../objects/manifest.js';
import {
  RemoteAbortedError,
  RemoteCorruptionError,
  RemoteResourceNotFoundError,
  RemoteStorageError,
  RemoteTimeoutError,
} from '../remote-storage.js';

/** What a worker is started with: the same storage settings as the broker's own storage. */
export interface StorageWorkerData {
  readonly url: string;
  readonly rsmConfig: Readonly<Record<string, string>>;
  /** The nice value the worker sets its own thread to (0 or absent: unchanged; thread-priority.ts). */
  readonly nice?: number;
}

/** A slot of shared memory the broker lends a fetch for one chunk: `length` bytes at `offset` of memory `memory`. */
export interface LentSlot {
  readonly memory: number;
  readonly offset: number;
  readonly length: number;
}

/**
 * 'fetch' is RemoteStorage.fetchChunks: `targets[k]`, when there is one, is
 * where chunk first + k goes (its targets); 'memory' shares a
 * SharedArrayBuffer the broker's slots live in, sent before the first fetch
 * that names it. 'copy' is RemoteStorage.copySegment (files named by path are
 * read by the worker; bytes held in memory are copied across with the
 * message); 'cancel' aborts a fetch or a copy.
 */
export type StorageWorkerRequest =
  | {
      readonly type: 'fetch';
      readonly id: number;
      readonly ref: RemoteSegmentRef;
      readonly first: number;
      readonly last: number;
      readonly chunkSize: number;
      readonly targets?: ReadonlyArray<LentSlot | null>;
      /** The segment's manifest as the broker has it, so the worker need not read it again. */
      readonly manifest?: Manifest;
    }
  | { readonly type: 'memory'; readonly memory: number; readonly buffer: SharedArrayBuffer }
  | { readonly type: 'copy'; readonly id: number; readonly ref: RemoteSegmentRef; readonly files: SegmentFiles }
  | { readonly type: 'cancel'; readonly id: number };

/**
 * A fetch's chunks come one message each as soon as each has arrived and been
 * verified: 'filled' when it went into its lent slot (`length` bytes), else
 * 'chunk' (its memory transferred); then 'done', or 'failed' (the chunks
 * already sent stay valid). Every fetch ends with one of those two, a
 * cancelled one too: only then does the worker write its slots no more. A copy
 * ends with 'copied' or 'failed'. 'priority', once at the start of a worker
 * asked for a nice value, says whether it took.
 */
export type StorageWorkerReply =
  | { readonly type: 'priority'; readonly outcome: PriorityOutcome }
  | { readonly type: 'chunk'; readonly id: number; readonly index: number; readonly chunk: ArrayBuffer }
  | { readonly type: 'filled'; readonly id: number; readonly index: number; readonly length: number }
  | { readonly type: 'done'; readonly id: number }
  | { readonly type: 'copied'; readonly id: number; readonly result: CopyResult }
  | { readonly type: 'failed'; readonly id: number; readonly error: SerializedError };

/** A Buffer sent in a message arrives as a plain Uint8Array: the same bytes as a Buffer again, without a copy. */
export function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function receivedSource(source: SegmentSource | Uint8Array): SegmentSource {
  return typeof source === 'string' ? source : asBuffer(source);
}

/** The segment files of a 'copy' message as the worker received them: in-memory sources as Buffers again. */
export function receivedSegmentFiles(files: SegmentFiles): SegmentFiles {
  return {
    ...files,
    data: receivedSource(files.data),
    offsetIndex: receivedSource(files.offsetIndex),
    timeIndex: receivedSource(files.timeIndex),
    ...(files.txnIndex === undefined ? {} : { txnIndex: receivedSource(files.txnIndex) }),
    producerSnapshot: receivedSource(files.producerSnapshot),
    leaderEpochCheckpoint: receivedSource(files.leaderEpochCheckpoint),
  };
}

/** A 'copied' message's result as the pool received it: its custom metadata a Buffer again. */
export function receivedCopyResult(result: CopyResult): CopyResult {
  return { ...result, customMetadata: asBuffer(result.customMetadata) };
}

export interface SerializedError {
  readonly name: string;
  readonly message: string;
  readonly code?: number;
}

export function serializeError(e: unknown): SerializedError {
  if (e instanceof Error) {
    const code = (e as { code?: unknown }).code;
    return { name: e.name, message: e.message, ...(typeof code === 'number' ? { code } : {}) };
  }
  return { name: 'Error', message: String(e) };
}

/** The error a worker reported, as the class the storage layer would have thrown in this thread. */
export function deserializeError(e: SerializedError): Error {
  switch (e.name) {
    case 'RemoteCorruptionError':
      return new RemoteCorruptionError(e.message);
    case 'RemoteResourceNotFoundError':
      return new RemoteResourceNotFoundError(e.message);
    case 'RemoteAbortedError':
      return new RemoteAbortedError(e.message);
    case 'RemoteTimeoutError':
      return new RemoteTimeoutError(e.message);
    case 'RangeError':
      return new RangeError(e.message);
    default:
      return new RemoteStorageError(e.message, e.code === undefined ? {} : { code: e.code });
  }
}
