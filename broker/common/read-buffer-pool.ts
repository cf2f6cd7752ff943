// Buffers for reads of segment data that go out in a Fetch response, reused
// once the response has been written to the socket. Every Fetch used to read
// into fresh Buffers (a MiB or more per partition), and V8 answers that much
// external memory with incremental marking and mark-compacts: most of the
// consume CPU of the "slow" benchmark runs (issue 16) was garbage collection
// of a heap that held nothing to collect.
//
// A ReadLease belongs to one request. It hands out buffers of power-of-two
// size classes and gives them all back at once, only when the bytes read into
// them can no longer be referenced: after the response carrying them has been
// written (the socket's write callback). A lease that is never released costs
// nothing but garbage, so an error path simply drops it. Pure: no I/O.

/** Reads smaller than this use ordinary allocations (Node's own slab serves them). */
export const MIN_POOLED_BYTES = 64 * 1024;
/** Reads larger than this are not pooled. */
export const MAX_POOLED_BYTES = 16 * 1024 * 1024;

function sizeClass(bytes: number): number {
  let size = MIN_POOLED_BYTES;
  while (size < bytes) size *= 2;
  return size;
}

export class ReadBufferPool {
  private readonly free = new Map<number, Buffer[]>();
  private retainedBytes = 0;

  /** @param maxRetainedBytes idle buffers kept for reuse, in all (more are left to the GC). */
  constructor(readonly maxRetainedBytes: number = 64 * 1024 * 1024) {}

  /** Idle bytes held for reuse. */
  get retained(): number {
    return this.retainedBytes;
  }

  /** A buffer of at least `bytes` from the pool, or null when `bytes` is not pooled (too small or too large). */
  take(bytes: number): Buffer | null {
    if (bytes < MIN_POOLED_BYTES || bytes > MAX_POOLED_BYTES) return null;
    const size = sizeClass(bytes);
    const list = this.free.get(size);
    const buf = list?.pop();
    if (buf !== undefined) {
      this.retainedBytes -= size;
      return buf;
    }
    return Buffer.allocUnsafeSlow(size);
  }

  /** Returns a buffer this pool handed out; kept while the pool holds less than its limit. */
  give(buf: Buffer): void {
    const size = buf.length;
    if (size !== sizeClass(size) || size > MAX_POOLED_BYTES) return;
    if (this.retainedBytes + size > this.maxRetainedBytes) return;
    let list = this.free.get(size);
    if (list === undefined) {
      list = [];
      this.free.set(size, list);
    }
    list.push(buf);
    this.retainedBytes += size;
  }

  lease(): ReadLease {
    return new ReadLease(this);
  }
}

/** Told when a lease is released: the response holding the bytes is written. */
export type LeaseEnd = () => void;

/**
 * The pooled buffers one request read into, and what else must wait for its
 * response to be written (deferred), all given back together by release().
 */
export class ReadLease {
  private taken: Buffer[] = [];
  private deferred: LeaseEnd[] = [];
  private released = false;

  constructor(private readonly pool: ReadBufferPool) {}

  /** A buffer of at least `bytes` for a read, or undefined (the reader allocates its own). */
  take(bytes: number): Buffer | undefined {
    if (this.released) return undefined;
    const buf = this.pool.take(bytes);
    if (buf === null) return undefined;
    this.taken.push(buf);
    return buf;
  }

  /**
   * Runs `end` at release(), with the buffers' return: for memory of other
   * pools (the remote chunk cache's) that this request's response refers to.
   * False, and `end` is not kept, when the lease is already released.
   */
  defer(end: LeaseEnd): boolean {
    if (this.released) return false;
    this.deferred.push(end);
    return true;
  }

  /** Gives every buffer back. Call only when nothing read into them can be referenced any more. */
  release(): void {
    if (this.released) return;
    this.released = true;
    for (const b of this.taken) this.pool.give(b);
    this.taken = [];
    const deferred = this.deferred;
    this.deferred = [];
    for (const end of deferred) end();
  }
}
