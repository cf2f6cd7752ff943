// A byte-bounded LRU of fixed-size chunks of remote segment data, keyed by
// segment and chunk index, in front of RemoteStorage. A read fetches its
// missing chunks (runs of them in one ranged request each, through
// fetchChunks, each chunk cached and served as soon as its bytes arrive),
// shares fetches already in flight, and starts reading ahead the next chunks
// so a sequential consumer finds them cached. Cached bytes never
// exceed the byte limit: each entry owns exactly its bytes.
//
// With a ChunkMemory, chunks are read into its reusable slots instead of fresh
// buffers (a fresh MiB per chunk kept V8 collecting, issue 16). A slot is
// reused only when its chunk has left the cache and nothing can still refer to
// it: a reader that passes a lease (a Fetch request's ReadLease) pins the
// chunks it is given until the lease is released (the response written); a
// reader without one is given copies by read(), and marks the chunks
// readParts() hands it as escaped, never reused. A reader waiting for a chunk
// still in flight holds its claim from the moment it asked, so a chunk is
// never reused between its arrival and its reader.
import { setMaxListeners } from 'node:events';
import { ownedBytes } from '../objects/chunked-zstd.js';
import { segmentIdentity } from '../objects/object-keys.js';
import type { ChunkTargets, RemoteSegmentRef, RemoteStorage } from '../remote-storage.js';
import { raceAbort, throwIfAborted } from '../remote-storage.js';
import type { ChunkMemory } from './chunk-memory.js';
import { ReadBufferPool } from '../../broker/common/read-buffer-pool.js';
import { SegmentLru } from './segment-lru.js';

const EMPTY = Buffer.alloc(0);
/** Leases of single read() calls, released as soon as the bytes are copied out (they take no buffers). */
const ONE_READ = new ReadBufferPool(0);

export interface ChunkCacheOptions {
  readonly source: Pick<RemoteStorage, 'fetchData'> & Partial<Pick<RemoteStorage, 'fetchChunks'>>;
  /** Bytes per chunk; best equal to the storage's chunk size so fetches align with stored chunks. */
  readonly chunkSize: number;
  /** The byte limit (0 disables caching; reads still work). */
  readonly maxBytes: number;
  /** Chunks fetched ahead after each read. Default 8. */
  readonly readAheadChunks?: number;
  /**
   * Chunks one request may carry when the source has fetchChunks. Default 8
   * (the default read-ahead): each chunk is served as soon as it arrives, so a
   * larger request costs a reader no wait, and it saves requests.
   */
  readonly maxChunksPerRequest?: number;
  /** Slots chunks are read into and reused from (see above); without it, every chunk is a fresh buffer. */
  readonly memory?: ChunkMemory;
}

/** What a reader's chunks stay pinned by: released once nothing refers to them (ReadLease satisfies it). */
export interface ChunkLease {
  /** Runs `end` when the lease is released; false (and `end` is dropped) when it already was. */
  defer(end: () => void): boolean;
}

/** A chunk in a slot of the ChunkMemory. */
interface SlotChunk {
  readonly slot: Buffer;
  /** Readers holding it under a lease not yet released. */
  pins: number;
  /** Handed to a reader without a lease: never reused. */
  escaped: boolean;
  /** In the LRU now. */
  cached: boolean;
  freed: boolean;
}

/** A reader's claim on a chunk it asked for before it arrived. */
interface Claim {
  readonly lease: ChunkLease | undefined;
  /** Set when it arrives, for the lease to unpin. */
  chunk?: Buffer;
  /** The lease was released before the chunk arrived. */
  dropped?: boolean;
}

export interface ChunkCacheStats {
  /** Chunks served from the cache. */
  readonly hits: number;
  /** Chunks a read found already being fetched (mostly by read-ahead). */
  readonly inFlightHits: number;
  /** Chunks a read had to fetch. */
  readonly misses: number;
  readonly readAheadChunks: number;
  readonly readAheadErrors: number;
  /** Requests made to the source (one may carry several chunks). */
  readonly fetches: number;
  readonly fetchedBytes: number;
  readonly evictions: number;
  /** Bytes held now (never above maxBytes). */
  readonly bytes: number;
  readonly entries: number;
  /** Chunks read into reused slots of the ChunkMemory, and slots given back for reuse. */
  readonly slotFills: number;
  readonly slotReturns: number;
}

export interface ChunkReadOptions {
  readonly signal?: AbortSignal;
  /** The segment's data size when the caller knows it: read-ahead stops at its end. */
  readonly segmentSize?: number;
  /** Pins the chunks readParts hands out until released (see above). */
  readonly lease?: ChunkLease;
}

export class ChunkCache {
  readonly chunkSize: number;
  readonly maxBytes: number;
  readonly readAheadChunks: number;
  readonly maxChunksPerRequest: number;
  private readonly source: Pick<RemoteStorage, 'fetchData'> & Partial<Pick<RemoteStorage, 'fetchChunks'>>;
  private readonly cache: SegmentLru;
  private readonly memory: ChunkMemory | undefined;
  /** The chunks that live in slots, by their Buffer. */
  private readonly slotChunks = new WeakMap<Buffer, SlotChunk>();
  /** Claims of readers on chunks in flight, by key. */
  private readonly claims = new Map<string, Claim[]>();
  private counters = { hits: 0, inFlightHits: 0, misses: 0, readAheadChunks: 0, readAheadErrors: 0, fetches: 0, fetchedBytes: 0, slotFills: 0, slotReturns: 0 };

  constructor(options: ChunkCacheOptions) {
    if (!Number.isSafeInteger(options.chunkSize) || options.chunkSize <= 0) throw new RangeError(`chunkSize must be positive: ${options.chunkSize}`);
    if (options.memory !== undefined && options.memory.slotSize < options.chunkSize) {
      throw new RangeError(`memory slots of ${options.memory.slotSize} bytes cannot hold chunks of ${options.chunkSize}`);
    }
    this.memory = options.maxBytes > 0 ? options.memory : undefined;
    this.cache = new SegmentLru(options.maxBytes, (buf) => this.left(buf));
    // Every fetch in flight listens on the close signal (one listener per request attempt): many is normal here.
    setMaxListeners(0, this.cache.closing.signal);
    this.source = options.source;
    this.chunkSize = options.chunkSize;
    this.maxBytes = options.maxBytes;
    this.readAheadChunks = options.readAheadChunks ?? 8;
    this.maxChunksPerRequest = options.maxChunksPerRequest ?? 8;
    if (!Number.isSafeInteger(this.maxChunksPerRequest) || this.maxChunksPerRequest < 1) {
      throw new RangeError(`maxChunksPerRequest must be >= 1: ${this.maxChunksPerRequest}`);
    }
  }

  /**
   * Chunks each GET of a sequential reader carries after its first: the
   * read-ahead window, cut into requests of at most maxChunksPerRequest (a
   * reader without read-ahead fetches its own reads, a chunk or so each). What
   * the cost model calls chunks per GET.
   */
  static sequentialChunksPerGet(readAheadChunks: number, maxChunksPerRequest: number): number {
    return Math.max(1, Math.min(readAheadChunks, maxChunksPerRequest));
  }

  /**
   * Bytes [start, endInclusive] of the segment's data (clamped to its end),
   * through the cache, as one buffer (a view when one chunk holds them all).
   */
  async read(ref: RemoteSegmentRef, start: number, endInclusive: number, options: ChunkReadOptions = {}): Promise<Buffer> {
    if (this.memory === undefined || options.lease !== undefined) {
      const parts = await this.readParts(ref, start, endInclusive, options);
      return parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts);
    }
    // Pinned while copied out: the caller keeps no view of a slot it cannot give back.
    const lease = ONE_READ.lease();
    try {
      const parts = await this.readParts(ref, start, endInclusive, { ...options, lease });
      return parts.length === 1 && !this.memory.holds(parts[0] as Buffer) ? (parts[0] as Buffer) : Buffer.concat(parts);
    } finally {
      lease.release();
    }
  }

  /**
   * Bytes [start, endInclusive] of the segment's data (clamped to its end),
   * through the cache, as views into the cached chunks, in order: nothing is
   * copied. Empty when the range is empty or past the end.
   */
  async readParts(ref: RemoteSegmentRef, start: number, endInclusive: number, options: ChunkReadOptions = {}): Promise<Buffer[]> {
    throwIfAborted(options.signal, 'chunk cache read');
    if (!Number.isSafeInteger(start) || start < 0) throw new RangeError(`invalid start position ${start}`);
    if (endInclusive < start) return [];
    const segment = segmentIdentity(ref);
    const first = Math.floor(start / this.chunkSize);
    let last = Math.floor(endInclusive / this.chunkSize);
    if (options.segmentSize !== undefined) last = Math.min(last, Math.ceil(options.segmentSize / this.chunkSize) - 1);
    if (last < first) return [];

    const pending: Array<Promise<Buffer>> = [];
    let runStart = -1;
    const flushRun = (upTo: number): void => {
      if (runStart < 0) return;
      const fetched = this.fetchRun(ref, segment, runStart, upTo);
      for (const p of fetched) pending.push(p);
      this.counters.misses += upTo - runStart + 1;
      runStart = -1;
    };
    for (let i = first; i <= last; i++) {
      const key = `${segment}#${i}`;
      const cached = this.cache.get(key);
      const flying = cached === undefined ? this.cache.inFlight.get(key) : undefined;
      if (this.memory !== undefined) {
        // Claimed now, before any wait: the chunk cannot be reused before this reader has it.
        if (cached !== undefined) this.hold(cached, options.lease);
        else this.claim(key, options.lease);
      }
      if (cached === undefined && flying === undefined) {
        if (runStart < 0) runStart = i;
        continue;
      }
      flushRun(i - 1);
      if (cached !== undefined) {
        this.counters.hits++;
        pending.push(Promise.resolve(cached));
      } else if (flying !== undefined) {
        this.counters.inFlightHits++;
        pending.push(flying);
      }
    }
    flushRun(last);
    this.readAhead(ref, segment, last + 1, options.segmentSize);

    const chunks = await raceAbort(Promise.all(pending), options.signal, 'chunk cache read');
    const parts: Buffer[] = [];
    for (const [k, c] of chunks.entries()) {
      const base = (first + k) * this.chunkSize;
      const from = Math.max(0, start - base);
      const to = Math.min(c.length, endInclusive - base + 1);
      if (to > from) parts.push(from === 0 && to === c.length ? c : c.subarray(from, to));
      // A short chunk is the segment's last: stop there.
      if (c.length < this.chunkSize) break;
    }
    return parts;
  }

  /** Starts fetching `chunks` chunks from `startPosition` (e.g. the head of the next segment) without waiting. */
  prefetch(ref: RemoteSegmentRef, startPosition: number, chunks: number, segmentSize?: number): void {
    const segment = segmentIdentity(ref);
    this.readAhead(ref, segment, Math.floor(startPosition / this.chunkSize), segmentSize, chunks);
  }

  /** Drops every cached chunk of a segment (deleted or replaced). */
  invalidate(ref: RemoteSegmentRef): void {
    this.cache.invalidate(ref);
  }

  stats(): ChunkCacheStats {
    return { ...this.counters, evictions: this.cache.evictions, bytes: this.cache.bytes, entries: this.cache.entries };
  }

  /** A reader takes a chunk it found cached: pinned under its lease, or escaped without one. */
  private hold(chunk: Buffer, lease: ChunkLease | undefined): void {
    const s = this.slotChunks.get(chunk);
    if (s === undefined) return;
    if (lease !== undefined && lease.defer(() => this.unpin(s))) s.pins++;
    else s.escaped = true;
  }

  /** A reader waits for a chunk not cached: its claim turns into a pin (or an escape) when the chunk arrives. */
  private claim(key: string, lease: ChunkLease | undefined): void {
    const claim: Claim = { lease };
    if (lease !== undefined) {
      const kept = lease.defer(() => {
        if (claim.chunk !== undefined) {
          const s = this.slotChunks.get(claim.chunk);
          if (s !== undefined) this.unpin(s);
        } else claim.dropped = true;
      });
      // Released already (an abandoned read finishing late): whatever it gets, nobody will read it.
      if (!kept) return;
    }
    let list = this.claims.get(key);
    if (list === undefined) {
      list = [];
      this.claims.set(key, list);
    }
    list.push(claim);
  }

  /** Chunk `key` arrived (or failed: no chunk): its claims become pins or escapes. */
  private settleClaims(key: string, chunk: Buffer | undefined): void {
    const list = this.claims.get(key);
    if (list === undefined) return;
    this.claims.delete(key);
    const s = chunk === undefined ? undefined : this.slotChunks.get(chunk);
    if (s === undefined) return;
    for (const c of list) {
      if (c.lease === undefined) s.escaped = true;
      else if (c.dropped !== true) {
        c.chunk = chunk;
        s.pins++;
      }
    }
  }

  private unpin(s: SlotChunk): void {
    s.pins--;
    this.maybeFree(s);
  }

  /** A buffer left the LRU. */
  private left(buf: Buffer): void {
    const s = this.slotChunks.get(buf);
    if (s === undefined || !s.cached) return;
    s.cached = false;
    this.maybeFree(s);
  }

  private maybeFree(s: SlotChunk): void {
    if (s.freed || s.cached || s.escaped || s.pins > 0 || this.memory === undefined) return;
    s.freed = true;
    this.counters.slotReturns++;
    this.memory.give(s.slot);
  }

  /** Cancels read-ahead and empties the cache. */
  close(): void {
    this.cache.close('chunk cache closed');
  }

  /**
   * Keeps `count` chunks from `from` on requested. When some are missing, the
   * fetch runs a whole window past the first missing one, so a sequential
   * reader causes one `count`-chunk request every `count` chunks rather than
   * one single-chunk request per read.
   */
  private readAhead(ref: RemoteSegmentRef, segment: string, from: number, segmentSize: number | undefined, count = this.readAheadChunks): void {
    if (count <= 0 || this.cache.closing.signal.aborted) return;
    const lastChunk = segmentSize === undefined ? Number.MAX_SAFE_INTEGER : Math.ceil(segmentSize / this.chunkSize) - 1;
    let firstMissing = -1;
    for (let i = from; i <= Math.min(from + count - 1, lastChunk); i++) {
      const key = `${segment}#${i}`;
      if (!this.cache.has(key) && !this.cache.inFlight.has(key)) {
        firstMissing = i;
        break;
      }
    }
    if (firstMissing < 0) return;
    const to = Math.min(firstMissing + count - 1, lastChunk);
    let runStart = -1;
    const flush = (upTo: number): void => {
      if (runStart < 0) return;
      this.counters.readAheadChunks += upTo - runStart + 1;
      for (const p of this.fetchRun(ref, segment, runStart, upTo, true)) {
        p.catch(() => {
          this.counters.readAheadErrors++;
        });
      }
      runStart = -1;
    };
    for (let i = firstMissing; i <= to; i++) {
      const key = `${segment}#${i}`;
      if (this.cache.has(key) || this.cache.inFlight.has(key)) {
        flush(i - 1);
        continue;
      }
      if (runStart < 0) runStart = i;
    }
    flush(to);
  }

  /**
   * Fetches chunks [from, to]: with a source that cuts its answer into
   * separately allocated chunks (fetchChunks), one request per run of up to
   * maxChunksPerRequest chunks, each chunk cached and handed to its readers as
   * soon as the source tells it (while the rest of the body still streams);
   * otherwise one ranged request per chunk, in parallel. Either way each chunk
   * owns exactly its bytes (a view into a larger buffer would pin all of it
   * behind the byte accounting). Returns one promise per chunk, each
   * registered as in flight.
   */
  private fetchRun(ref: RemoteSegmentRef, segment: string, from: number, to: number, deferred = false): Array<Promise<Buffer>> {
    const out: Array<Promise<Buffer>> = [];
    const fetchChunks = this.source.fetchChunks?.bind(this.source);
    for (let groupStart = from; groupStart <= to; ) {
      const groupEnd = fetchChunks === undefined ? groupStart : Math.min(to, groupStart + this.maxChunksPerRequest - 1);
      const first = groupStart;
      const waiting = Array.from({ length: groupEnd - first + 1 }, () => settleable<Buffer>());
      // Slots lent to this request: a slot its chunk arrived in belongs to that chunk; the rest come back when it settles.
      const memory = fetchChunks === undefined ? undefined : this.memory;
      const lent: Array<Buffer | undefined> = memory === undefined ? [] : waiting.map(() => undefined);
      const targets: ChunkTargets | undefined =
        memory === undefined
          ? undefined
          : (index, length) => {
              const k = index - first;
              if (k < 0 || k >= lent.length || length > memory.slotSize) return undefined;
              lent[k] ??= memory.take();
              return lent[k];
            };
      const adopt = (k: number, chunk: Buffer): void => {
        const slot = lent[k];
        if (slot === undefined || chunk.buffer !== slot.buffer || chunk.byteOffset !== slot.byteOffset) return;
        lent[k] = undefined;
        this.counters.slotFills++;
        this.slotChunks.set(chunk, { slot, pins: 0, escaped: false, cached: false, freed: false });
      };
      const giveBackUnused = (): void => {
        for (const [k, slot] of lent.entries()) {
          if (slot === undefined) continue;
          lent[k] = undefined;
          memory?.give(slot);
        }
      };
      const onChunk = (i: number, chunk: Buffer): void => {
        adopt(i - first, chunk);
        waiting[i - first]?.resolve(chunk);
      };
      const send = (): Promise<Buffer[]> =>
        fetchChunks === undefined
          ? this.source.fetchData(ref, first * this.chunkSize, (first + 1) * this.chunkSize - 1, this.cache.closing.signal).then((b) => [b])
          : fetchChunks(ref, first, groupEnd, this.chunkSize, this.cache.closing.signal, onChunk, targets);
      // Read-ahead starts its requests after the current I/O callbacks: preparing a request
      // (signing, middleware) then delays no fetch answer. In flight from now on all the same.
      const group = deferred ? new Promise<void>((resolve) => setImmediate(resolve)).then(send) : send();
      // Chunks not told as they came (a source without streaming) settle with the answer; past its end, empty.
      // A failure fails only the chunks not told yet.
      group.then(
        (chunks) => {
          for (const [k, w] of waiting.entries()) {
            const chunk = chunks[k];
            if (chunk !== undefined) adopt(k, chunk);
            w.resolve(chunk ?? EMPTY);
          }
          giveBackUnused();
        },
        (e: unknown) => {
          // The store writes no slot once its answer has settled (ChunkTargets).
          giveBackUnused();
          for (const w of waiting) w.reject(e);
        },
      );
      this.counters.fetches++;
      for (const [k, w] of waiting.entries()) out.push(this.track(segment, first + k, w.promise));
      groupStart = groupEnd + 1;
    }
    return out;
  }

  /** Chunk `i`: cached when it arrives, in flight until then. */
  private track(segment: string, i: number, arrival: Promise<Buffer>): Promise<Buffer> {
    const key = `${segment}#${i}`;
    const piece: Promise<Buffer> = arrival
      .then((buf) => {
        this.counters.fetchedBytes += buf.length;
        const slot = this.slotChunks.get(buf);
        if (slot === undefined) {
          // A view into a larger buffer would keep all of it alive behind the accounting: own the bytes.
          const own = ownedBytes(buf);
          this.settleClaims(key, undefined);
          if (own.length > 0) this.cache.set(key, own);
          return own;
        }
        // Its slot holds exactly the chunk. Claims first: a reader waiting for it holds it from now on.
        this.settleClaims(key, buf);
        if (buf.length > 0 && this.cache.set(key, buf)) slot.cached = true;
        // Not cached (closed, or empty): nothing will say when its last reader is done.
        else slot.escaped = true;
        return buf;
      })
      .finally(() => {
        this.claims.delete(key);
        if (this.cache.inFlight.get(key) === piece) this.cache.inFlight.delete(key);
      });
    // Read-ahead pieces may have no reader: a failure must not become an unhandled rejection.
    piece.catch(() => {});
    this.cache.inFlight.set(key, piece);
    return piece;
  }
}

/** A promise with its settling functions; settling it again does nothing. */
function settleable<T>(): { promise: Promise<T>; resolve: (v: T) => void; reject: (e: unknown) => void } {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}
