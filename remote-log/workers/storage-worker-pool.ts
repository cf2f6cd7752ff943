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
import type { ChunkListener, ChunkTargets, CopyResult, RemoteSegmentRef, RemoteStorage, SegmentFiles } from '../remote-storage.js';
import { RemoteAbortedError, RemoteStorageError } from '../remote-storage.js';
import { parseStorageUrl } from '../storage-url.js';
import type { Manifest } from '../objects/manifest.js';

export interface StorageWorkerPoolOptions {
  readonly url: string;
  /** rsm.config.* settings, prefixed, as createRemoteStorage takes them. */
  readonly rsmConfig: Readonly<Record<string, string>>;
  /** Worker threads, started by warm() or on first use. */
  readonly threads: number;
  /** The nice value each worker sets its thread to (Linux; 0 or absent: the broker's own). */
  readonly nice?: number;
  /**
   * Where the broker's own storage keeps the segments' manifests: each fetch
   * carries its segment's manifest to the worker, which would otherwise read it
   * from the store again (one more GET per segment, and per worker).
   */
  readonly manifests?: ManifestSource;
  readonly logger?: Logger;
}

/** The broker's own storage as a source of manifests (ObjectRemoteStorage.manifestOf). */
export interface ManifestSource {
  manifestOf(ref: RemoteSegmentRef, signal?: AbortSignal): Promise<Manifest>;
}

interface Pending {
  /** A fetch's chunks received so far, in order. */
  readonly chunks: Buffer[];
  readonly onChunk: ChunkListener | undefined;
  /** A fetch's first chunk, and the slots lent for its chunks (by chunk - first). */
  readonly first: number;
  readonly lent: ReadonlyArray<Buffer | undefined> | undefined;
  /** Why the request failed while the worker may still be writing its lent slots: told once the worker ends it. */
  failure?: { readonly error: unknown };
  /** Told the fetch's chunks, or a copy's result. */
  readonly resolve: (answer: { chunks: Buffer[]; result?: CopyResult }) => void;
  readonly reject: (e: unknown) => void;
}

interface PoolWorker {
  readonly worker: Worker;
  readonly pending: Map<number, Pending>;
  /** The shared memories this worker has been sent, by their number. */
  readonly memories: Set<number>;
}

/** The slot of shared memory a target is, as a worker can name it, or null (memory a worker cannot fill). */
function sharedSlot(target: Buffer | undefined): { buffer: SharedArrayBuffer; offset: number; length: number } | null {
  if (target === undefined || !(target.buffer instanceof SharedArrayBuffer)) return null;
  return { buffer: target.buffer, offset: target.byteOffset, length: target.length };
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
  private readonly memoryIds = new WeakMap<SharedArrayBuffer, number>();
  private nextMemoryId = 1;

  constructor(private readonly options: StorageWorkerPoolOptions) {
    if (!Number.isInteger(options.threads) || options.threads < 1) throw new RangeError(`threads must be >= 1: ${options.threads}`);
    if (!shareableStorageUrl(options.url)) throw new RangeError(`${options.url}: a memory store cannot be used from worker threads`);
    this.threads = options.threads;
    this.workers = Array.from({ length: options.threads }, () => undefined);
  }

  /**
   * With `targets`, each chunk goes into the target lent for it when that is
   * shared memory (a ChunkMemory slot), filled by the worker in place; other
   * chunks come as transferred memory. Such a fetch settles only once the
   * worker has ended it, an aborted one too (then rejected): until then the
   * worker may still write the lent slots.
   */
  async fetchChunks(
    ref: RemoteSegmentRef,
    first: number,
    last: number,
    chunkSize: number,
    signal?: AbortSignal,
    onChunk?: ChunkListener,
    targets?: ChunkTargets,
  ): Promise<Buffer[]> {
    const manifest = await this.options.manifests?.manifestOf(ref, signal);
    const lent = targets === undefined ? undefined : Array.from({ length: Math.max(0, last - first + 1) }, (_, k) => targets(first + k, chunkSize));
    return this.request('remote fetch', signal, { onChunk, first, lent }, (id, w) => {
      const slots = lent?.map((t) => {
        const shared = sharedSlot(t);
        return shared === null ? null : { memory: this.share(w, shared.buffer), offset: shared.offset, length: shared.length };
      });
      return {
        type: 'fetch',
        id,
        ref,
        first,
        last,
        chunkSize,
        ...(slots === undefined || slots.every((x) => x === null) ? {} : { targets: slots }),
        ...(manifest === undefined ? {} : { manifest }),
      };
    }).then((a) => a.chunks);
  }

  copySegment(ref: RemoteSegmentRef, files: SegmentFiles, signal?: AbortSignal): Promise<CopyResult> {
    return this.request('remote copy', signal, { onChunk: undefined, first: 0, lent: undefined }, (id) => ({ type: 'copy', id, ref, files })).then((a) => {
      if (a.result === undefined) throw new RemoteStorageError('remote copy: the worker answered without a result');
      return a.result;
    });
  }

  /** The number `buffer` goes by, sent to worker `w` first if it has not seen it. */
  private share(w: PoolWorker, buffer: SharedArrayBuffer): number {
    let id = this.memoryIds.get(buffer);
    if (id === undefined) {
      id = this.nextMemoryId++;
      this.memoryIds.set(buffer, id);
    }
    if (!w.memories.has(id)) {
      w.memories.add(id);
      w.worker.postMessage({ type: 'memory', memory: id, buffer } satisfies StorageWorkerRequest);
    }
    return id;
  }

  private request(
    what: string,
    signal: AbortSignal | undefined,
    fetch: { onChunk: ChunkListener | undefined; first: number; lent: ReadonlyArray<Buffer | undefined> | undefined },
    message: (id: number, w: PoolWorker) => StorageWorkerRequest,
  ): Promise<{ chunks: Buffer[]; result?: CopyResult }> {
    if (signal?.aborted === true) return Promise.reject(new RemoteAbortedError(`${what}: aborted`, { cause: signal.reason }));
    if (this.closed) return Promise.reject(new RemoteStorageError(`${what}: the storage workers are closed`));
    const w = this.pick();
    const id = this.nextId++;
    const lends = fetch.lent?.some((t) => sharedSlot(t) !== null) === true;
    return new Promise((resolve, reject) => {
      const done = (): void => {
        signal?.removeEventListener('abort', onAbort);
        if (w.pending.size === 0) w.worker.unref();
      };
      const pending: Pending = {
        chunks: [],
        onChunk: fetch.onChunk,
        first: fetch.first,
        lent: fetch.lent,
        resolve: (answer) => {
          done();
          resolve(answer);
        },
        reject: (e) => {
          done();
          reject(e);
        },
      };
      const onAbort = (): void => {
        if (w.pending.get(id) !== pending || pending.failure !== undefined) return;
        const error = new RemoteAbortedError(`${what}: aborted`, { cause: signal?.reason });
        w.worker.postMessage({ type: 'cancel', id } satisfies StorageWorkerRequest);
        if (lends) {
          // Told when the worker has stopped writing the lent slots.
          pending.failure = { error };
          return;
        }
        w.pending.delete(id);
        pending.reject(error);
      };
      // Referenced while it owes answers: a caller awaiting one keeps the process alive.
      if (w.pending.size === 0) w.worker.ref();
      w.pending.set(id, pending);
      signal?.addEventListener('abort', onAbort, { once: true });
      w.worker.postMessage(message(id, w));
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
    const data: StorageWorkerData = { url: this.options.url, rsmConfig: { ...this.options.rsmConfig }, ...(this.options.nice === undefined ? {} : { nice: this.options.nice }) };
    const worker = new Worker(new URL('./storage-worker.js', import.meta.url), { workerData: data });
    // The pool's owner closes it; an idle worker must not keep the process alive.
    worker.unref();
    const w: PoolWorker = { worker, pending: new Map(), memories: new Set() };
    worker.on('message', (m: StorageWorkerReply) => {
      if (m.type === 'priority') {
        if (m.outcome.applied) this.options.logger?.debug({ slot, nice: m.outcome.nice }, 'remote storage worker priority lowered');
        else this.options.logger?.warn({ slot, reason: m.outcome.reason }, 'remote storage worker runs at the broker\'s priority');
        return;
      }
      const p = w.pending.get(m.id);
      if (p === undefined) return; // cancelled
      if (m.type === 'chunk' || m.type === 'filled') {
        if (p.failure !== undefined) return; // failed already: waiting for the worker's end
        const chunk = m.type === 'chunk' ? Buffer.from(m.chunk) : p.lent?.[m.index - p.first]?.subarray(0, m.length);
        if (chunk === undefined) {
          p.failure = { error: new RemoteStorageError(`remote fetch: the worker filled chunk ${m.index}, which had no slot`) };
          w.worker.postMessage({ type: 'cancel', id: m.id } satisfies StorageWorkerRequest);
          return;
        }
        p.chunks.push(chunk);
        try {
          p.onChunk?.(m.index, chunk);
        } catch (e) {
          // The caller refused the chunk: the request fails, and the worker stops it.
          w.worker.postMessage({ type: 'cancel', id: m.id } satisfies StorageWorkerRequest);
          if (p.lent !== undefined) {
            p.failure = { error: e };
            return;
          }
          w.pending.delete(m.id);
          p.reject(e);
        }
        return;
      }
      w.pending.delete(m.id);
      if (p.failure !== undefined) p.reject(p.failure.error);
      else if (m.type === 'done') p.resolve({ chunks: p.chunks });
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
