// The messages between the broker's event loop and its remote fetch workers
// (fetch-worker.ts), and how errors cross the thread boundary with their
// class and Kafka error code intact. Pure; no I/O.
import type { RemoteSegmentRef } from '../remote-storage.js';
import {
  RemoteAbortedError,
  RemoteCorruptionError,
  RemoteResourceNotFoundError,
  RemoteStorageError,
  RemoteTimeoutError,
} from '../remote-storage.js';

/** What a worker is started with: the same storage settings as the broker's own storage. */
export interface FetchWorkerData {
  readonly url: string;
  readonly rsmConfig: Readonly<Record<string, string>>;
}

export type FetchWorkerRequest =
  | { readonly type: 'fetch'; readonly id: number; readonly ref: RemoteSegmentRef; readonly first: number; readonly last: number; readonly chunkSize: number }
  | { readonly type: 'cancel'; readonly id: number };

/**
 * A request's chunks come one 'chunk' message each (its memory transferred) as
 * soon as each has arrived and been verified; then 'done', or 'failed' (the
 * chunks already sent stay valid).
 */
export type FetchWorkerReply =
  | { readonly type: 'chunk'; readonly id: number; readonly index: number; readonly chunk: ArrayBuffer }
  | { readonly type: 'done'; readonly id: number }
  | { readonly type: 'failed'; readonly id: number; readonly error: SerializedError };

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
