// A byte-bounded LRU of remote index files (offset, time, and the other kinds)
// per segment, in front of RemoteStorage.fetchIndex; sized by the broker
// setting remote.log.index.file.cache.total.size.bytes. Kafka keeps these on
// disk; here they are memory, bounded the same way. Concurrent requests for
// the same index share one fetch.
import { LRUCache } from 'lru-cache';
import { segmentIdentity } from '../objects/object-keys.js';
import type { IndexKind, RemoteSegmentRef, RemoteStorage } from '../remote-storage.js';
import { raceAbort, throwIfAborted } from '../remote-storage.js';

/** Kafka's default for remote.log.index.file.cache.total.size.bytes (1 GiB). */
export const DEFAULT_INDEX_CACHE_BYTES = 1024 * 1024 * 1024;

export interface IndexCacheOptions {
  readonly source: Pick<RemoteStorage, 'fetchIndex'>;
  /** remote.log.index.file.cache.total.size.bytes (0 disables caching). */
  readonly maxBytes: number;
}

export interface IndexCacheStats {
  readonly hits: number;
  readonly misses: number;
  readonly evictions: number;
  readonly bytes: number;
  readonly entries: number;
}

export class IndexCache {
  readonly maxBytes: number;
  private readonly source: Pick<RemoteStorage, 'fetchIndex'>;
  private readonly lru: LRUCache<string, Buffer> | undefined;
  private readonly inFlight = new Map<string, Promise<Buffer>>();
  private readonly closing = new AbortController();
  private counters = { hits: 0, misses: 0, evictions: 0 };

  constructor(options: IndexCacheOptions) {
    if (!Number.isSafeInteger(options.maxBytes) || options.maxBytes < 0) throw new RangeError(`maxBytes must be >= 0: ${options.maxBytes}`);
    this.source = options.source;
    this.maxBytes = options.maxBytes;
    this.lru =
      options.maxBytes === 0
        ? undefined
        : new LRUCache<string, Buffer>({
            maxSize: options.maxBytes,
            // Empty indexes (no aborted transactions) still take a slot.
            sizeCalculation: (b) => Math.max(1, b.length),
            dispose: (_v, _k, reason) => {
              if (reason === 'evict') this.counters.evictions++;
            },
          });
  }

  async get(ref: RemoteSegmentRef, kind: IndexKind, signal?: AbortSignal): Promise<Buffer> {
    throwIfAborted(signal, `${kind} index read`);
    const key = `${segmentIdentity(ref)}#${kind}`;
    const cached = this.lru?.get(key);
    if (cached !== undefined) {
      this.counters.hits++;
      return cached;
    }
    this.counters.misses++;
    let p = this.inFlight.get(key);
    if (p === undefined) {
      const fetching = this.source.fetchIndex(ref, kind, this.closing.signal).then((buf) => {
        if (!this.closing.signal.aborted) this.lru?.set(key, buf);
        return buf;
      });
      const tracked = fetching.finally(() => {
        if (this.inFlight.get(key) === tracked) this.inFlight.delete(key);
      });
      tracked.catch(() => {});
      this.inFlight.set(key, tracked);
      p = tracked;
    }
    return raceAbort(p, signal, `${kind} index read`);
  }

  /** Drops a segment's indexes (deleted or replaced). */
  invalidate(ref: RemoteSegmentRef): void {
    if (this.lru === undefined) return;
    const prefix = `${segmentIdentity(ref)}#`;
    for (const key of [...this.lru.keys()]) if (key.startsWith(prefix)) this.lru.delete(key);
  }

  stats(): IndexCacheStats {
    return { ...this.counters, bytes: this.lru?.calculatedSize ?? 0, entries: this.lru?.size ?? 0 };
  }

  close(): void {
    this.closing.abort(new Error('index cache closed'));
    this.lru?.clear();
  }
}
