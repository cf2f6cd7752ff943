// The bookkeeping the chunk cache and the index cache share: a byte-bounded LRU
// of buffers keyed by segment (`<segment identity>#<part>`), or none when the
// limit is 0; the fetches in flight per key, so concurrent readers share one;
// the close signal that aborts those fetches and keeps late results out; the
// eviction count; and dropping a whole segment when it is deleted or replaced.
import { LRUCache } from 'lru-cache';
import { segmentIdentity } from '../objects/object-keys.js';
import type { RemoteSegmentRef } from '../remote-storage.js';

export class SegmentLru {
  /** Fetches running now, by key. */
  readonly inFlight = new Map<string, Promise<Buffer>>();
  /** Aborted by close(): fetches listen on it, and set() ignores what arrives after. */
  readonly closing = new AbortController();
  private evicted = 0;
  private readonly lru: LRUCache<string, Buffer> | undefined;

  /** @param onDispose told each buffer that leaves the cache (evicted, deleted, replaced, cleared). */
  constructor(
    readonly maxBytes: number,
    onDispose?: (buf: Buffer) => void,
  ) {
    if (!Number.isSafeInteger(maxBytes) || maxBytes < 0) throw new RangeError(`maxBytes must be >= 0: ${maxBytes}`);
    this.lru =
      maxBytes === 0
        ? undefined
        : new LRUCache<string, Buffer>({
            maxSize: maxBytes,
            // Empty buffers (an index with no entries) still take a slot.
            sizeCalculation: (b) => Math.max(1, b.length),
            dispose: (v, _k, reason) => {
              if (reason === 'evict') this.evicted++;
              onDispose?.(v);
            },
          });
  }

  /** The key of one part (a chunk index, an index kind) of a segment. */
  static key(ref: RemoteSegmentRef, part: string | number): string {
    return `${segmentIdentity(ref)}#${part}`;
  }

  get(key: string): Buffer | undefined {
    return this.lru?.get(key);
  }

  has(key: string): boolean {
    return this.lru?.has(key) === true;
  }

  /**
   * Caches `buf` unless the cache is closed (a fetch that lands after close()
   * is dropped) or `buf` is larger than the whole cache; true when it is held.
   */
  set(key: string, buf: Buffer): boolean {
    if (this.closing.signal.aborted || this.lru === undefined) return false;
    this.lru.set(key, buf);
    return this.lru.peek(key) === buf;
  }

  /** Drops every cached part of a segment. */
  invalidate(ref: RemoteSegmentRef): void {
    if (this.lru === undefined) return;
    const prefix = SegmentLru.key(ref, '');
    for (const key of [...this.lru.keys()]) if (key.startsWith(prefix)) this.lru.delete(key);
  }

  get evictions(): number {
    return this.evicted;
  }

  /** Bytes held now (never above maxBytes). */
  get bytes(): number {
    return this.lru?.calculatedSize ?? 0;
  }

  get entries(): number {
    return this.lru?.size ?? 0;
  }

  /** Aborts the fetches in flight (with `reason`) and empties the cache. */
  close(reason: string): void {
    this.closing.abort(new Error(reason));
    this.lru?.clear();
  }
}
