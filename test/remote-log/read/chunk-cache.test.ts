import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { ChunkCache } from '../../../remote-log/read/chunk-cache.js';
import { MemoryRemoteStorage } from '../../../remote-log/memory/memory-remote-storage.js';
import { objectKey } from '../../../remote-log/objects/object-keys.js';
import type { ChunkListener, ChunkTargets, RemoteSegmentRef, RemoteStorage } from '../../../remote-log/remote-storage.js';
import { ChunkMemory } from '../../../remote-log/read/chunk-memory.js';
import { ReadBufferPool, type ReadLease } from '../../../broker/common/read-buffer-pool.js';
import { RemoteAbortedError, RemoteCorruptionError } from '../../../remote-log/remote-storage.js';
import { makeSegment, newRef } from '../remote-storage.contract.js';

const CS = 4096;

/** Counts fetches and lets a test hold them until released. */
class CountingSource {
  readonly calls: Array<[number, number | undefined]> = [];
  readonly pending = new Set<Promise<unknown>>();
  protected gate: Promise<void> | undefined;
  private open: (() => void) | undefined;
  constructor(readonly storage: RemoteStorage) {}
  hold(): void {
    this.gate = new Promise((r) => (this.open = r));
  }
  release(): void {
    this.open?.();
    this.gate = undefined;
  }
  fetchData(ref: RemoteSegmentRef, start: number, end?: number, signal?: AbortSignal): Promise<Buffer> {
    this.calls.push([start, end]);
    const gate = this.gate;
    const p = (gate ?? Promise.resolve()).then(() => this.storage.fetchData(ref, start, end, signal));
    this.pending.add(p);
    void p.finally(() => this.pending.delete(p)).catch(() => {});
    return p;
  }
  /** Waits for every fetch, read-ahead included (the cache starts read-ahead on the next turn of the event loop). */
  async settle(): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }
}

/** A source that also cuts runs of chunks itself (fetchChunks), as ObjectRemoteStorage does. */
class ChunkingSource extends CountingSource {
  readonly chunkCalls: Array<[number, number]> = [];
  fetchChunks(
    ref: RemoteSegmentRef,
    first: number,
    last: number,
    chunkSize: number,
    signal?: AbortSignal,
    onChunk?: ChunkListener,
    targets?: ChunkTargets,
  ): Promise<Buffer[]> {
    this.chunkCalls.push([first, last]);
    const gate = this.gate;
    const p = (gate ?? Promise.resolve()).then(() => this.storage.fetchChunks(ref, first, last, chunkSize, signal, onChunk, targets));
    this.pending.add(p);
    void p.finally(() => this.pending.delete(p)).catch(() => {});
    return p;
  }
}

async function setup(segments: number, size = 10 * CS + 100): Promise<{ storage: MemoryRemoteStorage; refs: RemoteSegmentRef[]; data: Buffer[] }> {
  const storage = new MemoryRemoteStorage({ chunkSize: CS });
  const refs: RemoteSegmentRef[] = [];
  const data: Buffer[] = [];
  for (let i = 0; i < segments; i++) {
    const seg = makeSegment(size, 100 + i);
    const ref = newRef();
    await storage.copySegment(ref, seg.files);
    refs.push(ref);
    data.push(seg.data);
  }
  return { storage, refs, data };
}

describe('ChunkCache', () => {
  it('a sequential reader GETs sequentialChunksPerGet chunks at a time after its first read', async () => {
    for (const [readAhead, perRequest] of [
      [3, 8],
      [8, 2],
      [8, 8],
    ] as const) {
      const { storage, refs } = await setup(1, 40 * CS);
      const ref = refs[0] as RemoteSegmentRef;
      const source = new ChunkingSource(storage);
      const cache = new ChunkCache({ source, chunkSize: CS, maxBytes: 1 << 30, readAheadChunks: readAhead, maxChunksPerRequest: perRequest });
      for (let pos = 0; pos < 24 * CS; pos += CS) {
        await cache.readParts(ref, pos, pos + CS - 1, { segmentSize: 40 * CS });
        await source.settle();
      }
      const sizes = source.chunkCalls.slice(1).map(([first, last]) => last - first + 1);
      assert.ok(sizes.length > 0);
      assert.deepEqual(new Set(sizes), new Set([ChunkCache.sequentialChunksPerGet(readAhead, perRequest)]), `read-ahead ${readAhead}, ${perRequest} per request: ${sizes.join(',')}`);
      cache.close();
    }
    assert.equal(ChunkCache.sequentialChunksPerGet(0, 8), 1);
  });

  it('serves exact bytes and counts hits and misses', async () => {
    const { storage, refs, data } = await setup(1);
    const ref = refs[0]!;
    const seg = data[0]!;
    const source = new CountingSource(storage);
    const cache = new ChunkCache({ source, chunkSize: CS, maxBytes: 1024 * 1024, readAheadChunks: 0 });
    assert.deepEqual(await cache.read(ref, 10, CS + 10), seg.subarray(10, CS + 11));
    assert.deepEqual(cache.stats().misses, 2);
    assert.deepEqual(source.calls, [[0, CS - 1], [CS, 2 * CS - 1]], 'one aligned ranged fetch per missing chunk');
    assert.deepEqual(await cache.read(ref, 0, 2 * CS - 1), seg.subarray(0, 2 * CS));
    assert.equal(cache.stats().hits, 2);
    assert.deepEqual(await cache.read(ref, seg.length - 5, seg.length + 1000), seg.subarray(seg.length - 5));
    assert.deepEqual(await cache.read(ref, 0, seg.length * 2), seg);
    assert.equal((await cache.read(ref, seg.length + 1, seg.length + 10)).length, 0);
    assert.equal(cache.stats().bytes, seg.length);
  });

  it('reads ahead so a sequential reader finds the next chunks fetched', async () => {
    const { storage, refs, data } = await setup(1);
    const source = new CountingSource(storage);
    const cache = new ChunkCache({ source, chunkSize: CS, maxBytes: 1024 * 1024, readAheadChunks: 2 });
    const seg = data[0]!;
    const out: Buffer[] = [];
    for (let pos = 0; pos < seg.length; pos += CS) {
      out.push(await cache.read(refs[0]!, pos, pos + CS - 1, { segmentSize: seg.length }));
      await source.settle();
    }
    assert.deepEqual(Buffer.concat(out), seg);
    const s = cache.stats();
    assert.equal(s.misses, 1, 'only the first chunk is a miss');
    assert.equal(s.hits, 10);
    assert.equal(s.readAheadChunks, 10);
    assert.ok(source.calls.every(([start]) => start < seg.length), 'read-ahead stops at the segment end');
  });

  it('shares a fetch in flight between readers, and an aborted reader does not cancel it', async () => {
    const { storage, refs, data } = await setup(1);
    const source = new CountingSource(storage);
    const cache = new ChunkCache({ source, chunkSize: CS, maxBytes: 1024 * 1024, readAheadChunks: 0 });
    source.hold();
    const controller = new AbortController();
    const a = cache.read(refs[0]!, 0, 100, { signal: controller.signal });
    const b = cache.read(refs[0]!, 50, 60);
    controller.abort(new Error('remote.fetch.max.wait.ms'));
    await assert.rejects(a, RemoteAbortedError);
    source.release();
    assert.deepEqual(await b, data[0]!.subarray(50, 61));
    assert.equal(source.calls.length, 1);
    assert.equal(cache.stats().inFlightHits, 1);
    assert.deepEqual(await cache.read(refs[0]!, 0, 100), data[0]!.subarray(0, 101));
    assert.equal(cache.stats().hits, 1);
  });

  it('propagates corruption to readers and absorbs read-ahead failures', async () => {
    const { storage, refs } = await setup(1);
    const ref = refs[0]!;
    const key = objectKey('', ref, 'log');
    const stored = storage.store.peek(key)!;
    stored[3 * CS + 1] = (stored[3 * CS + 1] ?? 0) ^ 1;
    storage.store.poke(key, stored);
    const source = new CountingSource(storage);
    const cache = new ChunkCache({ source, chunkSize: CS, maxBytes: 1024 * 1024, readAheadChunks: 2 });
    // Read-ahead of chunks 2..3 fails (chunk 3 is corrupt): counted, not thrown anywhere.
    await cache.read(ref, CS, 2 * CS - 1);
    await source.settle();
    assert.equal(cache.stats().readAheadErrors, 1, 'chunk 3 (corrupt) failed; chunk 2 was fetched on its own and cached');
    await assert.rejects(cache.read(ref, 3 * CS, 3 * CS + 5), RemoteCorruptionError);
    await source.settle();
    const before = source.calls.length;
    await assert.rejects(cache.read(ref, 3 * CS, 3 * CS + 5), RemoteCorruptionError);
    assert.equal(source.calls.length, before + 1, 'the corrupt chunk was not cached: it is fetched again');
    assert.deepEqual(await cache.read(ref, 4 * CS, 4 * CS + 1), Buffer.from(stored.subarray(4 * CS, 4 * CS + 2)));
  });

  it('invalidates a segment, and works with caching off', async () => {
    const { storage, refs, data } = await setup(2);
    const cache = new ChunkCache({ source: storage, chunkSize: CS, maxBytes: 1024 * 1024, readAheadChunks: 0 });
    await cache.read(refs[0]!, 0, 3 * CS);
    await cache.read(refs[1]!, 0, CS);
    cache.invalidate(refs[0]!);
    assert.equal(cache.stats().entries, 2);
    const off = new ChunkCache({ source: storage, chunkSize: CS, maxBytes: 0 });
    assert.deepEqual(await off.read(refs[1]!, 5, 3 * CS), data[1]!.subarray(5, 3 * CS + 1));
    assert.equal(off.stats().bytes, 0);
    cache.close();
    off.close();
  });

  it('fetches a run of missing chunks in one request, at most maxChunksPerRequest chunks each', async () => {
    const { storage, refs, data } = await setup(1);
    const seg = data[0]!;
    const source = new ChunkingSource(storage);
    const cache = new ChunkCache({ source, chunkSize: CS, maxBytes: 1024 * 1024, readAheadChunks: 0, maxChunksPerRequest: 3 });
    assert.deepEqual(await cache.read(refs[0]!, 10, 5 * CS + 10), seg.subarray(10, 5 * CS + 11));
    assert.deepEqual(source.chunkCalls, [[0, 2], [3, 5]]);
    assert.deepEqual(source.calls, [], 'no per-chunk fetchData');
    const stats = cache.stats();
    assert.equal(stats.fetches, 2);
    assert.equal(stats.misses, 6);
    assert.equal(stats.bytes, 6 * CS, 'each chunk accounted separately');
    // Cached chunks split a later run; the last chunk of the data is short.
    assert.deepEqual(await cache.read(refs[0]!, 4 * CS, seg.length), seg.subarray(4 * CS));
    assert.deepEqual(source.chunkCalls.slice(2), [[6, 8], [9, 10]]);
  });

  it('read-ahead of a sequential reader goes out as one request per window', async () => {
    const { storage, refs, data } = await setup(1);
    const seg = data[0]!;
    const source = new ChunkingSource(storage);
    const cache = new ChunkCache({ source, chunkSize: CS, maxBytes: 1024 * 1024, readAheadChunks: 4, maxChunksPerRequest: 4 });
    for (let pos = 0; pos < seg.length; pos += CS) {
      assert.deepEqual(await cache.read(refs[0]!, pos, pos + CS - 1, { segmentSize: seg.length }), seg.subarray(pos, pos + CS));
      await source.settle();
    }
    // Chunk 0 on demand, then windows of four: 1-4, 5-8, 9-10 (the data has 11 chunks).
    assert.deepEqual(source.chunkCalls, [[0, 0], [1, 4], [5, 8], [9, 10]]);
  });

  it('readParts answers with views into the cached chunks, never a copy', async () => {
    const { storage, refs, data } = await setup(1);
    const seg = data[0]!;
    const cache = new ChunkCache({ source: new ChunkingSource(storage), chunkSize: CS, maxBytes: 1024 * 1024, readAheadChunks: 0 });
    const first = await cache.readParts(refs[0]!, CS - 100, 3 * CS + 99);
    assert.deepEqual(first.map((b) => b.length), [100, CS, CS, 100]);
    assert.deepEqual(Buffer.concat(first), seg.subarray(CS - 100, 3 * CS + 100));
    const again = await cache.readParts(refs[0]!, CS - 100, 3 * CS + 99);
    // Same memory means same ArrayBuffer *and* same offset into it: small Buffers share a pooled ArrayBuffer, so a copy could match on .buffer alone.
    again.forEach((b, i) => {
      assert.equal(b.buffer, first[i]!.buffer, `part ${i} is in the cached chunk's ArrayBuffer`);
      assert.equal(b.byteOffset, first[i]!.byteOffset, `part ${i} starts at the same byte of it`);
      assert.equal(b.length, first[i]!.length);
    });
    assert.deepEqual(await cache.readParts(refs[0]!, seg.length, seg.length + 10), []);
    assert.deepEqual(await cache.readParts(refs[0]!, 5, 4), []);
  });

  it('never holds more bytes than its limit', async () => {
    const { storage, refs, data } = await setup(3, 12 * CS + 777);
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 6 * CS }),
        fc.integer({ min: 0, max: 4 }),
        fc.array(fc.tuple(fc.integer({ min: 0, max: 2 }), fc.integer({ min: 0, max: 13 * CS }), fc.integer({ min: 0, max: 5 * CS })), { minLength: 1, maxLength: 25 }),
        fc.boolean(),
        async (maxBytes, readAhead, reads, chunking) => {
          const source = chunking ? new ChunkingSource(storage) : new CountingSource(storage);
          const cache = new ChunkCache({ source, chunkSize: CS, maxBytes, readAheadChunks: readAhead, maxChunksPerRequest: 3 });
          for (const [s, start, len] of reads) {
            const got = chunking ? Buffer.concat(await cache.readParts(refs[s]!, start, start + len)) : await cache.read(refs[s]!, start, start + len);
            assert.deepEqual(got, data[s]!.subarray(start, start + len + 1));
            assert.ok(cache.stats().bytes <= maxBytes, `${cache.stats().bytes} > ${maxBytes}`);
            await source.settle();
            assert.ok(cache.stats().bytes <= maxBytes, `${cache.stats().bytes} > ${maxBytes} after read-ahead`);
          }
          cache.close();
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe('ChunkCache with ChunkMemory (reused chunk slots)', () => {
  const leases = new ReadBufferPool();

  it('reads chunks into slots and reuses a slot only once its chunk is evicted and no lease holds it', async () => {
    const { storage, refs, data } = await setup(1, 8 * CS);
    const seg = data[0]!;
    const memory = new ChunkMemory(CS, 16 * CS);
    const cache = new ChunkCache({ source: new ChunkingSource(storage), chunkSize: CS, maxBytes: 2 * CS, readAheadChunks: 0, memory });
    const held = leases.lease();
    const first = await cache.readParts(refs[0]!, 0, CS - 1, { lease: held });
    assert.ok(memory.holds(first[0]!), 'the chunk is in slot memory');
    assert.equal(cache.stats().slotFills, 1);
    // Chunks 1..5 evict chunk 0 (the cache holds two); their own leases are released at once.
    for (let i = 1; i <= 5; i++) {
      const l = leases.lease();
      assert.deepEqual(Buffer.concat(await cache.readParts(refs[0]!, i * CS, i * CS + CS - 1, { lease: l })), seg.subarray(i * CS, (i + 1) * CS));
      l.release();
    }
    assert.ok(cache.stats().evictions >= 4);
    // Chunk 0's slot is not back while `held` is out: its bytes are still chunk 0's.
    assert.deepEqual(first[0], seg.subarray(0, CS));
    const returnedBefore = cache.stats().slotReturns;
    held.release();
    assert.equal(cache.stats().slotReturns, returnedBefore + 1, 'released and evicted: the slot goes back');
    assert.ok(memory.stats().inUse <= 2 + 1, `slots in use ${memory.stats().inUse}`);
    cache.close();
    assert.equal(memory.stats().inUse, 0, 'closing the cache gives every unpinned slot back');
  });

  it('a reader without a lease gets copies from read(), and chunks readParts hands it are never reused', async () => {
    const { storage, refs, data } = await setup(1, 6 * CS);
    const seg = data[0]!;
    const memory = new ChunkMemory(CS, 16 * CS);
    const cache = new ChunkCache({ source: new ChunkingSource(storage), chunkSize: CS, maxBytes: 2 * CS, readAheadChunks: 0, memory });
    const head = await cache.read(refs[0]!, 10, 70);
    assert.equal(memory.holds(head), false, 'read() copies out of the slot');
    assert.deepEqual(head, seg.subarray(10, 71));
    const loose = await cache.readParts(refs[0]!, CS, 2 * CS - 1);
    assert.ok(memory.holds(loose[0]!));
    for (let i = 2; i <= 5; i++) await cache.read(refs[0]!, i * CS, i * CS + 9);
    // Chunk 1 left the cache but escaped: its slot is never given back, so its bytes stay.
    assert.deepEqual(loose[0], seg.subarray(CS, 2 * CS));
    cache.close();
    assert.equal(memory.stats().inUse, 1, 'only the escaped slot is still out');
  });

  it('a reader waiting for a chunk in flight holds it from its arrival, even when the next chunk evicts it at once', async () => {
    const { storage, refs, data } = await setup(1, 8 * CS);
    const seg = data[0]!;
    const memory = new ChunkMemory(CS, 4 * CS);
    const source = new ChunkingSource(storage);
    const cache = new ChunkCache({ source, chunkSize: CS, maxBytes: CS, readAheadChunks: 0, maxChunksPerRequest: 4, memory });
    const lease = leases.lease();
    source.hold();
    // Two chunks in one request, a cache of one: chunk 1's arrival evicts chunk 0 before this reader resumes.
    const reading = cache.readParts(refs[0]!, 0, 2 * CS - 1, { lease });
    source.release();
    const parts = await reading;
    // Other readers now churn through every free slot.
    for (let i = 2; i < 8; i++) {
      const l = leases.lease();
      await cache.readParts(refs[0]!, i * CS, i * CS + CS - 1, { lease: l });
      l.release();
    }
    assert.deepEqual(Buffer.concat(parts), seg.subarray(0, 2 * CS), 'the pinned chunks were not reused');
    lease.release();
    cache.close();
    assert.equal(memory.stats().inUse, 0);
  });

  it('never hands a reader bytes that change while its lease is out (random reads, leases released out of order)', async () => {
    const { storage, refs, data } = await setup(2, 9 * CS + 321);
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 2, max: 12 }),
        fc.integer({ min: 0, max: 3 }),
        fc.array(
          fc.record({ s: fc.integer({ min: 0, max: 1 }), start: fc.integer({ min: 0, max: 10 * CS }), len: fc.integer({ min: 0, max: 3 * CS }), leased: fc.boolean(), releaseAfter: fc.integer({ min: 0, max: 4 }) }),
          { minLength: 1, maxLength: 30 },
        ),
        async (cacheChunks, slots, readAhead, reads) => {
          const memory = new ChunkMemory(CS, slots * CS);
          const source = new ChunkingSource(storage);
          const cache = new ChunkCache({ source, chunkSize: CS, maxBytes: cacheChunks * CS, readAheadChunks: readAhead, maxChunksPerRequest: 2, memory });
          const out: Array<{ lease: ReadLease | undefined; parts: Buffer[]; want: Buffer; due: number }> = [];
          for (const [step, r] of reads.entries()) {
            const lease = r.leased ? leases.lease() : undefined;
            const parts = await cache.readParts(refs[r.s]!, r.start, r.start + r.len, lease === undefined ? {} : { lease });
            out.push({ lease, parts, want: data[r.s]!.subarray(r.start, r.start + r.len + 1), due: step + r.releaseAfter });
            await source.settle();
            for (const o of out) {
              if (o.lease !== undefined && o.due < step) {
                o.lease.release();
                o.lease = undefined;
                o.parts = [];
                o.want = Buffer.alloc(0);
              }
              assert.deepEqual(Buffer.concat(o.parts), o.want, 'bytes held under a lease (or escaped) changed');
            }
            assert.ok(memory.stats().inUse <= memory.maxSlots);
          }
          for (const o of out) o.lease?.release();
          cache.close();
        },
      ),
      { numRuns: 80 },
    );
  });
});
