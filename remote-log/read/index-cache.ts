// A byte-bounded LRU of remote index files (offset, time, and the other kinds)
// per segment, in front of RemoteStorage.fetchIndex; sized by the broker
// setting remote.log.index.file.cache.total.size.bytes. Kafka keeps these on
// disk; here they are memory, bounded the same way. Concurrent requests for
// the same index share one fetch.
import type { IndexKind, RemoteSegmentRef, RemoteStorage } from '../remote-storage.js';
import { raceAbort, throwIfAborted } from '../remote-storage.js';
import { SegmentLru } from './segment-lru.js';

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
  private readonly cache: SegmentLru;
  private counters = { hits: 0, misses: 0 };

  constructor(options: IndexCacheOptions) {
    this.cache = new SegmentLru(options.maxBytes);
    this.source = options.source;
    this.maxBytes = options.maxBytes;
  }

  async get(ref: RemoteSegmentRef, kind: IndexKind, signal?: AbortSignal): Promise<Buffer> {
    throwIfAborted(signal, `${kind} index read`);
    const key = SegmentLru.key(ref, kind);
    const cached = this.cache.get(key);
    if (cached !== undefined) {
      this.counters.hits++;
      return cached;
    }
    this.counters.misses++;
    const inFlight = this.cache.inFlight;
    let p = inFlight.get(key);
    if (p === undefined) {
      const fetching = this.source.fetchIndex(ref, kind, this.cache.closing.signal).then((buf) => {
        this.cache.set(key, buf);
        return buf;
      });
      const tracked = fetching.finally(() => {
        if (inFlight.get(key) === tracked) inFlight.delete(key);
      });
      tracked.catch(() => {});
      inFlight.set(key, tracked);
      p = tracked;
    }
    return raceAbort(p, signal, `${kind} index read`);
  }

  /** Drops a segment's indexes (deleted or replaced). */
  invalidate(ref: RemoteSegmentRef): void {
    this.cache.invalidate(ref);
  }

  stats(): IndexCacheStats {
    return { ...this.counters, evictions: this.cache.evictions, bytes: this.cache.bytes, entries: this.cache.entries };
  }

  close(): void {
    this.cache.close('index cache closed');
  }
}
