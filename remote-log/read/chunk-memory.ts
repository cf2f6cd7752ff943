// Fixed slots of chunk memory for the chunk cache, carved out of a few large
// slabs and reused, so that a cold read does not allocate a fresh buffer per
// chunk. Every fresh 1 MiB chunk counted as external memory, and V8 answers a
// few hundred MiB/s of it with a mark-compact every 100-200 ms: 39% of the
// event loop's busy time during a cold read (issue 16). Shared slabs
// (SharedArrayBuffers) let a storage worker thread fill a slot in place, but
// V8 copies into shared memory element by element (about 430 MB/s here,
// against several GB/s into ordinary memory), so slabs are shared only when
// workers fill them. Ordinary slots are allocated one by one, as the cache
// first needs them, from the same allocator fresh chunks came from. A first
// version took all of its memory in one allocation, whose pages are then
// faulted in on first write, on the event loop; the one bench:tiering run of
// it had twice the cold read's system time per MiB of the run before (2.10
// against 0.85 ms, on another host), which that would explain but not prove.
//
// A slot is lent to one fetch, which fills it or gives it back when it ends;
// the cache then owns it until the chunk is evicted and no response holds a
// view of it (see ChunkCache). Pure bookkeeping: no I/O.

export interface ChunkMemoryStats {
  /** Slots in all slabs. */
  readonly slots: number;
  /** Slots handed out and not given back. */
  readonly inUse: number;
  readonly slabs: number;
}

export class ChunkMemory {
  /** Slots per slab. */
  readonly slotsPerSlab: number;
  readonly maxSlots: number;
  private readonly slabs = new WeakSet<ArrayBufferLike>();
  private slabCount = 0;
  private readonly free: Buffer[] = [];
  /** Every slot handed out, by its Buffer object. */
  private readonly lent = new Set<Buffer>();
  private slotCount = 0;

  /**
   * @param slotSize bytes per slot (the cache's chunk size).
   * @param maxBytes the memory all slabs may take; slabs are allocated as needed, up to it.
   * @param shared slabs of shared memory, which worker threads can fill.
   * @param slabBytes bytes per slab (rounded down to whole slots, at least
   *   one). By default 16 MiB for shared slabs and one slot for ordinary ones.
   */
  constructor(
    readonly slotSize: number,
    maxBytes: number,
    readonly shared = false,
    slabBytes = shared ? 16 * 1024 * 1024 : slotSize,
  ) {
    if (!Number.isSafeInteger(slotSize) || slotSize <= 0) throw new RangeError(`slotSize must be positive: ${slotSize}`);
    this.maxSlots = Math.max(0, Math.floor(maxBytes / slotSize));
    this.slotsPerSlab = Math.max(1, Math.floor(slabBytes / slotSize));
  }

  /** A free slot (a Buffer of slotSize bytes over shared memory), or undefined when all of maxBytes is in use. */
  take(): Buffer | undefined {
    let slot = this.free.pop();
    if (slot === undefined) {
      if (this.slotCount >= this.maxSlots) return undefined;
      this.grow();
      slot = this.free.pop();
      if (slot === undefined) return undefined;
    }
    this.lent.add(slot);
    return slot;
  }

  /** Gives a slot back; only a slot take() handed out, once. */
  give(slot: Buffer): void {
    if (!this.lent.delete(slot)) throw new Error('ChunkMemory.give: not a slot in use');
    this.free.push(slot);
  }

  /** Whether `buf` views memory of this pool's slabs. */
  holds(buf: Uint8Array): boolean {
    return this.slabs.has(buf.buffer);
  }

  stats(): ChunkMemoryStats {
    return { slots: this.slotCount, inUse: this.lent.size, slabs: this.slabCount };
  }

  private grow(): void {
    const slots = Math.min(this.slotsPerSlab, this.maxSlots - this.slotCount);
    const slab = this.shared ? new SharedArrayBuffer(slots * this.slotSize) : Buffer.allocUnsafeSlow(slots * this.slotSize).buffer;
    this.slabs.add(slab);
    this.slabCount++;
    // Pushed in reverse so that take() hands out a slab's slots in address order.
    for (let k = slots - 1; k >= 0; k--) this.free.push(Buffer.from(slab, k * this.slotSize, this.slotSize));
    this.slotCount += slots;
  }
}
