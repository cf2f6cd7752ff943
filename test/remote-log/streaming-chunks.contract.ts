// Part of the RemoteStorage contract (remote-storage.contract.ts runs it for
// every backend): chunks of a multi-chunk fetchChunks request are told to
// onChunk, and through it cached and served by the ChunkCache, as soon as
// their bytes have arrived, while the rest of the body is still streaming. A
// StallingObjectStore wrapped around the backend's own store holds the body
// after its first piece, for as long as the test wants.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode } from '../../broker/protocol/errors.js';
import { ChunkCache } from '../../remote-log/read/chunk-cache.js';
import { decodeManifest, storedChunkRange } from '../../remote-log/objects/manifest.js';
import { objectKey } from '../../remote-log/objects/object-keys.js';
import { ObjectRemoteStorage } from '../../remote-log/objects/object-remote-storage.js';
import type { ByteRange, ObjectBody, ObjectInfo, ObjectStore, PieceListener } from '../../remote-log/objects/object-store.js';
import type { RemoteSegmentRef, RemoteStorage } from '../../remote-log/remote-storage.js';
import { RemoteAbortedError, RemoteCorruptionError, RemoteStorageError } from '../../remote-log/remote-storage.js';
import type { ContractStore } from './remote-storage.contract.js';
import { makeSegment, newRef } from './remote-storage.contract.js';

/**
 * The inner store's getPieces, its pieces told one by one: before piece
 * `holdAt` (and before the end when there are no more) it waits until
 * release(), as a body whose bytes have not all arrived yet.
 */
export class StallingObjectStore implements ObjectStore {
  readonly description: string;
  holdAt = 1;
  private release_: (() => void) | undefined;
  private reachedWaiters: Array<() => void> = [];

  constructor(private readonly inner: ObjectStore) {
    this.description = `stalling ${inner.description}`;
  }

  /** Resolves when a getPieces has stopped at piece `holdAt`. */
  stalled(): Promise<void> {
    return new Promise((resolve) => this.reachedWaiters.push(resolve));
  }

  release(): void {
    this.release_?.();
  }

  async getPieces(key: string, range: ByteRange, lengths: readonly number[], signal?: AbortSignal, onPiece?: PieceListener): Promise<Buffer[]> {
    const pieces = this.inner.getPieces === undefined ? [await this.inner.get(key, range, signal)] : await this.inner.getPieces(key, range, lengths, signal);
    for (let k = 0; k <= pieces.length; k++) {
      if (k === this.holdAt) await this.hold(signal);
      const piece = pieces[k];
      if (piece !== undefined && piece.length === lengths[k]) onPiece?.(k, piece);
    }
    return pieces;
  }

  put(key: string, body: ObjectBody, signal?: AbortSignal, sizeHint?: number): Promise<void> {
    return this.inner.put(key, body, signal, sizeHint);
  }
  get(key: string, range?: ByteRange, signal?: AbortSignal): Promise<Buffer> {
    return this.inner.get(key, range, signal);
  }
  delete(key: string, signal?: AbortSignal): Promise<void> {
    return this.inner.delete(key, signal);
  }
  list(prefix: string, signal?: AbortSignal, startAfter?: string): Promise<ObjectInfo[]> {
    return this.inner.list(prefix, signal, startAfter);
  }
  async close(): Promise<void> {}

  private hold(signal?: AbortSignal): Promise<void> {
    const released = new Promise<void>((resolve) => (this.release_ = resolve));
    for (const w of this.reachedWaiters.splice(0)) w();
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => reject(new RemoteAbortedError('stalled body aborted', { cause: signal?.reason }));
      if (signal?.aborted === true) onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      void released.then(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      });
    });
  }
}

/** The backend's own object store under a RemoteStorage opened by the contract factory. */
function objectStoreOf(s: RemoteStorage): ObjectStore {
  assert.ok(s instanceof ObjectRemoteStorage, 'every backend is an ObjectRemoteStorage');
  return s.store;
}

async function rejection(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => assert.fail('expected a rejection'),
    (e: unknown) => e,
  );
}

const CHUNK = 64 * 1024;
type Mode = 'uncompressed' | 'zstd-chunked';

export function streamingChunksContract(ctx: () => { store: ContractStore; storage: RemoteStorage; compressing: RemoteStorage }): void {
  describe('chunks delivered as they arrive', () => {
    const storageFor = (mode: Mode): RemoteStorage => (mode === 'uncompressed' ? ctx().storage : ctx().compressing);
    const stalling = (mode: Mode): { stall: StallingObjectStore; s: ObjectRemoteStorage } => {
      const stall = new StallingObjectStore(objectStoreOf(storageFor(mode)));
      const s = new ObjectRemoteStorage(stall, { prefix: ctx().store.prefix, chunkSize: CHUNK, compression: mode === 'zstd-chunked', ownsStore: false });
      return { stall, s };
    };
    /** The segment's stored data object as the store holds it, its key and the byte range of stored chunk `i`. */
    const storedData = async (ref: RemoteSegmentRef, i: number): Promise<{ key: string; stored: Buffer; chunk: { start: number; end: number } }> => {
      const { store } = ctx();
      const manifest = await store.rawGet(objectKey(store.prefix, ref, 'manifest'));
      assert.ok(manifest !== undefined);
      const key = objectKey(store.prefix, ref, 'log');
      const stored = await store.rawGet(key);
      assert.ok(stored !== undefined);
      return { key, stored, chunk: storedChunkRange(decodeManifest(manifest).data, i) };
    };
    /** Flips a byte of stored chunk `i` of the segment's data object. */
    const corruptChunk = async (ref: RemoteSegmentRef, i: number): Promise<void> => {
      const { key, stored, chunk } = await storedData(ref, i);
      const copy = Buffer.from(stored);
      const at = chunk.start + 3;
      copy[at] = (copy[at] ?? 0) ^ 0x5a;
      await ctx().store.rawPut(key, copy);
    };

    for (const mode of ['uncompressed', 'zstd-chunked'] as const) {
      it(`tells chunk 0 of a 4-chunk request while the body is still streaming, and the cache serves it then (${mode})`, async () => {
        const seg = makeSegment(4 * CHUNK, 41);
        const ref = newRef();
        await storageFor(mode).copySegment(ref, seg.files);
        const { stall, s } = stalling(mode);
        const told: number[] = [];
        const stalled = stall.stalled();
        const answer = s.fetchChunks(ref, 0, 3, CHUNK, undefined, (i, c) => {
          told.push(i);
          assert.deepEqual(c, seg.data.subarray(i * CHUNK, (i + 1) * CHUNK), `chunk ${i}`);
        });
        let settled = false;
        void answer.finally(() => (settled = true)).catch(() => {});
        await stalled;
        assert.deepEqual(told, [0], 'chunk 0 told before the rest of the body arrived');
        assert.equal(settled, false);
        stall.release();
        const chunks = await answer;
        assert.deepEqual(told, [0, 1, 2, 3]);
        assert.deepEqual(Buffer.concat(chunks), seg.data);

        // Through the cache: one request for chunks 0..3; a read of chunk 0 is answered while it stalls.
        const cache = new ChunkCache({ source: s, chunkSize: CHUNK, maxBytes: 1 << 20, readAheadChunks: 0, maxChunksPerRequest: 4 });
        const again = stall.stalled();
        cache.prefetch(ref, 0, 4, seg.data.length);
        await again;
        assert.deepEqual(await cache.read(ref, 10, CHUNK - 1), seg.data.subarray(10, CHUNK));
        assert.equal(cache.stats().entries, 1, 'chunk 0 cached while chunks 1..3 are on their way');
        assert.equal(cache.stats().fetches, 1);
        const rest = cache.read(ref, CHUNK, 4 * CHUNK - 1);
        stall.release();
        assert.deepEqual(await rest, seg.data.subarray(CHUNK));
        assert.deepEqual({ fetches: cache.stats().fetches, entries: cache.stats().entries }, { fetches: 1, entries: 4 });
        cache.close();
      });

      it(`a chunk that fails its check fails only the chunks from it on; those before stay valid and cached (${mode})`, async () => {
        const s = storageFor(mode);
        const seg = makeSegment(4 * CHUNK, 42);
        const ref = newRef();
        await s.copySegment(ref, seg.files);
        await corruptChunk(ref, 2);
        const told: Buffer[] = [];
        const e = await rejection(s.fetchChunks(ref, 0, 3, CHUNK, undefined, (_i, c) => told.push(c)));
        assert.ok(e instanceof RemoteCorruptionError, String(e));
        assert.equal(e.code, ErrorCode.CORRUPT_MESSAGE);
        assert.deepEqual(Buffer.concat(told), seg.data.subarray(0, 2 * CHUNK), 'chunks 0 and 1 told, intact');

        const cache = new ChunkCache({ source: s, chunkSize: CHUNK, maxBytes: 1 << 20, readAheadChunks: 0, maxChunksPerRequest: 4 });
        cache.prefetch(ref, 0, 4, seg.data.length);
        const reads = [0, 1, 2, 3].map((i) => cache.read(ref, i * CHUNK, (i + 1) * CHUNK - 1));
        assert.deepEqual(await reads[0], seg.data.subarray(0, CHUNK));
        assert.deepEqual(await reads[1], seg.data.subarray(CHUNK, 2 * CHUNK));
        assert.ok((await rejection(reads[2] as Promise<Buffer>)) instanceof RemoteCorruptionError);
        assert.ok((await rejection(reads[3] as Promise<Buffer>)) instanceof RemoteCorruptionError);
        assert.deepEqual({ fetches: cache.stats().fetches, entries: cache.stats().entries }, { fetches: 1, entries: 2 });
        assert.deepEqual(await cache.read(ref, 0, 2 * CHUNK - 1), seg.data.subarray(0, 2 * CHUNK), 'served from the cache');
        assert.equal(cache.stats().fetches, 1);
        cache.close();
      });

      it(`a data object cut short: its complete chunks are told, the rest refused as corrupt (${mode})`, async () => {
        const s = storageFor(mode);
        const seg = makeSegment(4 * CHUNK, 43);
        const ref = newRef();
        await s.copySegment(ref, seg.files);
        const { key, stored, chunk } = await storedData(ref, 2);
        await ctx().store.rawPut(key, stored.subarray(0, chunk.start + 5));
        const told: number[] = [];
        const e = await rejection(s.fetchChunks(ref, 0, 3, CHUNK, undefined, (i) => told.push(i)));
        assert.ok(e instanceof RemoteCorruptionError, String(e));
        assert.deepEqual(told, [0, 1]);
      });

      it(`an abort while the body streams rejects the request; chunks told before stay valid (${mode})`, async () => {
        const seg = makeSegment(3 * CHUNK, 44);
        const ref = newRef();
        await storageFor(mode).copySegment(ref, seg.files);
        const { stall, s } = stalling(mode);
        const controller = new AbortController();
        const told: Buffer[] = [];
        const stalled = stall.stalled();
        const answer = s.fetchChunks(ref, 0, 2, CHUNK, controller.signal, (_i, c) => told.push(c));
        await stalled;
        controller.abort(new Error('reader gone'));
        const e = await rejection(answer);
        assert.ok(e instanceof RemoteAbortedError, String(e));
        assert.equal(told.length, 1);
        assert.deepEqual(told[0], seg.data.subarray(0, CHUNK));
        // The backend itself refuses an aborted request.
        await assert.rejects(storageFor(mode).fetchChunks(ref, 0, 2, CHUNK, AbortSignal.abort(), () => assert.fail('told')), RemoteAbortedError);
      });

      it(`tells every chunk, in order, when the cache's chunk size is not the stored one (${mode})`, async () => {
        const s = storageFor(mode);
        const seg = makeSegment(4 * CHUNK + 100, 45);
        const ref = newRef();
        await s.copySegment(ref, seg.files);
        const half = CHUNK / 2;
        const told: Array<[number, Buffer]> = [];
        const chunks = await s.fetchChunks(ref, 1, 7, half, undefined, (i, c) => told.push([i, c]));
        assert.deepEqual(
          told.map(([i]) => i),
          [1, 2, 3, 4, 5, 6, 7],
        );
        told.forEach(([i, c], k) => {
          assert.equal(c, chunks[k], 'the answer holds the chunks told');
          assert.deepEqual(c, seg.data.subarray(i * half, Math.min((i + 1) * half, seg.data.length)));
        });
        // Past the stored end: the last chunk short, later ones left out.
        const tail: number[] = [];
        const last = await s.fetchChunks(ref, 7, 11, half, undefined, (i) => tail.push(i));
        assert.deepEqual(tail, [7, 8]);
        assert.deepEqual(Buffer.concat(last), seg.data.subarray(7 * half));
        assert.equal(last[1]?.length, 100);
      });
    }

    it('an exception thrown by onChunk fails the request', async () => {
      const s = ctx().storage;
      const seg = makeSegment(3 * CHUNK, 46);
      const ref = newRef();
      await s.copySegment(ref, seg.files);
      const refusal = new RemoteStorageError('refused by the listener');
      const e = await rejection(
        s.fetchChunks(ref, 0, 2, CHUNK, undefined, (i) => {
          if (i === 1) throw refusal;
        }),
      );
      assert.equal(e, refusal);
    });
  });
}
