// Remote storage work off the event loop: a pool of worker threads
// (storage-worker.ts), each with its own connection to the remote store,
// serving the ChunkCache's fetchChunks (each chunk posted back as soon as it
// has arrived) or the copy task's copySegment. On the event loop a remote read
// then costs a message per chunk and one at the end, and a segment copy two
// messages; the GETs and PUTs, the body copies, the file reads and the CRC
// checks run on other cores, so serving Kafka requests and talking to S3 no
// longer take turns on one thread. Only stores another thread can open by URL
// use it (s3://, file://).
import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { StorageWorkerData, StorageWorkerReply, StorageWorkerRequest } from './storage-worker-protocol.js';
import { deserializeError, receivedCopyResult } from './storage-worker-protocol.js';
import type { ChunkListener, CopyResult, RemoteSegmentRef, RemoteStorage, SegmentFiles } from '../remote-storage.js';
import { RemoteAbortedError, RemoteStorageError } from '../remote-storage.js';
import { parseStorageUrl } from '../storage-url.js';

export interface StorageWorkerPoolOptions {
  readonly url: string;
  /** rsm.config.* settings, prefixed, as createRemoteStorage takes them. */
  readonly rsmConfig: Readonly<Record<string, string>>;
  /** Worker threads, started by warm() or on first use. */
  readonly threads: number;
  readonly logger?: Logger;
}

interface Pending {
  /** A fetch's chunks received so far, in order. */
  readonly chunks: Buffer[];
  readonly onChunk: ChunkListener | undefined;
  /** Told the fetch's chunks, or a copy's result. */
  readonly resolve: (answer: { chunks: Buffer[]; result?: CopyResult }) => void;
  readonly reject: (e: unknown) => void;
}

interface PoolWorker {
  readonly worker: Worker;
  readonly pending: Map<number, Pending>;
}

/** Whether another thread can open the store named by `url` (memory:// lives in one thread only). */
export function shareableStorageUrl(url: string): boolean {
  return parseStorageUrl(url).scheme !== 'memory';
}

export class StorageWorkerPool implements Pick<RemoteStorage, 'fetchChunks' | 'copySegment'> {
  readonly threads: number;
  private readonly workers: Array<PoolWorker | undefined>;
  private nextId = 1;
  private closed = false;

  constructor(private readonly options: StorageWorkerPoolOptions) {
    if (!Number.isInteger(options.threads) || options.threads < 1) throw new RangeError(`threads must be >= 1: ${options.threads}`);
    if (!shareableStorageUrl(options.url)) throw new RangeError(`${options.url}: a memory store cannot be used from worker threads`);
    this.threads = options.threads;
    this.workers = Array.from({ length: options.threads }, () => undefined);
  }

  fetchChunks(ref: RemoteSegmentRef, first: number, last: number, chunkSize: number, signal?: AbortSignal, onChunk?: ChunkListener): Promise<Buffer[]> {
    return this.request('remote fetch', signal, onChunk, (id) => ({ type: 'fetch', id, ref, first, last, chunkSize })).then((a) => a.chunks);
  }

  copySegment(ref: RemoteSegmentRef, files: SegmentFiles, signal?: AbortSignal): Promise<CopyResult> {
    return this.request('remote copy', signal, undefined, (id) => ({ type: 'copy', id, ref, files })).then((a) => {
      if (a.result === undefined) throw new RemoteStorageError('remote copy: the worker answered without a result');
      return a.result;
    });
  }

  private request(
    what: string,
    signal: AbortSignal | undefined,
    onChunk: ChunkListener | undefined,
    message: (id: number) => StorageWorkerRequest,
  ): Promise<{ chunks: Buffer[]; result?: CopyResult }> {
    if (signal?.aborted === true) return Promise.reject(new RemoteAbortedError(`${what}: aborted`, { cause: signal.reason }));
    if (this.closed) return Promise.reject(new RemoteStorageError(`${what}: the storage workers are closed`));
    const w = this.pick();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        if (!w.pending.delete(id)) return;
        if (w.pending.size === 0) w.worker.unref();
        w.worker.postMessage({ type: 'cancel', id } satisfies StorageWorkerRequest);
        reject(new RemoteAbortedError(`${what}: aborted`, { cause: signal?.reason }));
      };
      const done = (): void => {
        signal?.removeEventListener('abort', onAbort);
        if (w.pending.size === 0) w.worker.unref();
      };
      // Referenced while it owes answers: a caller awaiting one keeps the process alive.
      if (w.pending.size === 0) w.worker.ref();
      w.pending.set(id, {
        chunks: [],
        onChunk,
        resolve: (answer) => {
          done();
          resolve(answer);
        },
        reject: (e) => {
          done();
          reject(e);
        },
      });
      signal?.addEventListener('abort', onAbort, { once: true });
      w.worker.postMessage(message(id));
    });
  }

  /**
   * Starts every worker that is not running, without waiting for it: a
   * worker's start (a fresh isolate loading the storage's modules) takes
   * hundreds of milliseconds, better spent before the first request than in it.
   */
  warm(): void {
    if (this.closed) return;
    for (let i = 0; i < this.workers.length; i++) if (this.workers[i] === undefined) this.start(i);
  }

  /** Stops the workers; requests still pending fail. */
  async close(): Promise<void> {
    this.closed = true;
    const running = this.workers.filter((w): w is PoolWorker => w !== undefined);
    this.workers.fill(undefined);
    for (const w of running) this.failAll(w, new RemoteStorageError('remote storage workers closed'));
    await Promise.all(running.map((w) => w.worker.terminate()));
  }

  /** The worker with the fewest requests pending, started if need be. */
  private pick(): PoolWorker {
    let best = -1;
    for (let i = 0; i < this.workers.length; i++) {
      const w = this.workers[i];
      if (w === undefined) {
        best = i;
        break;
      }
      if (best < 0 || w.pending.size < (this.workers[best] as PoolWorker).pending.size) best = i;
    }
    return this.workers[best] ?? this.start(best);
  }

  private start(slot: number): PoolWorker {
    const data: StorageWorkerData = { url: this.options.url, rsmConfig: { ...this.options.rsmConfig } };
    const worker = new Worker(new URL('./storage-worker.js', import.meta.url), { workerData: data });
    // The pool's owner closes it; an idle worker must not keep the process alive.
    worker.unref();
    const w: PoolWorker = { worker, pending: new Map() };
    worker.on('message', (m: StorageWorkerReply) => {
      const p = w.pending.get(m.id);
      if (p === undefined) return; // cancelled
      if (m.type === 'chunk') {
        const chunk = Buffer.from(m.chunk);
        p.chunks.push(chunk);
        try {
          p.onChunk?.(m.index, chunk);
        } catch (e) {
          // The caller refused the chunk: the request fails, and the worker stops it.
          w.pending.delete(m.id);
          w.worker.postMessage({ type: 'cancel', id: m.id } satisfies StorageWorkerRequest);
          p.reject(e);
        }
        return;
      }
      w.pending.delete(m.id);
      if (m.type === 'done') p.resolve({ chunks: p.chunks });
      else if (m.type === 'copied') p.resolve({ chunks: [], result: receivedCopyResult(m.result) });
      else p.reject(deserializeError(m.error));
    });
    const lost = (why: string): void => {
      if (this.workers[slot] === w) this.workers[slot] = undefined;
      if (w.pending.size > 0) this.options.logger?.warn({ slot, pending: w.pending.size }, `remote storage worker ${why}`);
      this.failAll(w, new RemoteStorageError(`remote storage worker ${why}`));
    };
    worker.on('error', (e) => lost(`failed: ${e.message}`));
    worker.on('exit', (code) => lost(`exited with code ${code}`));
    this.workers[slot] = w;
    return w;
  }

  private failAll(w: PoolWorker, e: Error): void {
    const pending = [...w.pending.values()];
    w.pending.clear();
    for (const p of pending) p.reject(e);
  }
}
