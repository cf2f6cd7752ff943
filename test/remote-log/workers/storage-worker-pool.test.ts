import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { ErrorCode } from '../../../broker/protocol/errors.js';
import { FileSystemRemoteStorage } from '../../../remote-log/filesystem/filesystem-remote-storage.js';
import { StorageWorkerPool, shareableStorageUrl } from '../../../remote-log/workers/storage-worker-pool.js';
import { objectKey } from '../../../remote-log/objects/object-keys.js';
import { ChunkMemory } from '../../../remote-log/read/chunk-memory.js';
import type { RemoteSegmentRef } from '../../../remote-log/remote-storage.js';
import { RemoteAbortedError, RemoteCorruptionError, RemoteResourceNotFoundError, RemoteStorageError } from '../../../remote-log/remote-storage.js';
import { makeSegment, newRef } from '../remote-storage.contract.js';

const CHUNK = 16 * 1024;
const RSM = { 'rsm.config.chunk.size.bytes': String(CHUNK) };

describe('StorageWorkerPool', () => {
  let root: string;
  let url: string;
  let storage: FileSystemRemoteStorage;
  let ref: RemoteSegmentRef;
  let data: Buffer;

  before(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'sediment-storage-workers-'));
    url = pathToFileURL(root).href;
    storage = new FileSystemRemoteStorage(root, { chunkSize: CHUNK });
    const seg = makeSegment(5 * CHUNK + 123, 7);
    ref = newRef();
    await storage.copySegment(ref, seg.files);
    data = seg.data;
  });
  after(async () => {
    await storage.close();
    await rm(root, { recursive: true, force: true });
  });

  it('serves the same verified chunks as the storage, each owning its memory', async () => {
    const pool = new StorageWorkerPool({ url, rsmConfig: RSM, threads: 2 });
    try {
      const chunks = await pool.fetchChunks(ref, 0, 9, CHUNK);
      assert.equal(chunks.length, 6);
      chunks.forEach((c, i) => {
        assert.deepEqual(c, data.subarray(i * CHUNK, Math.min((i + 1) * CHUNK, data.length)), `chunk ${i}`);
        assert.equal(c.buffer.byteLength, c.length, `chunk ${i} is its own memory`);
      });
      // Several at once spread over both workers.
      const many = await Promise.all(Array.from({ length: 8 }, (_, i) => pool.fetchChunks(ref, i % 6, i % 6, CHUNK)));
      many.forEach((c, i) => assert.deepEqual(Buffer.concat(c), data.subarray((i % 6) * CHUNK, Math.min((i % 6 + 1) * CHUNK, data.length))));
    } finally {
      await pool.close();
    }
  });

  it('posts each chunk as it completes: told in order, the answer holds the same chunks, those told before a failure stay valid', async () => {
    const pool = new StorageWorkerPool({ url, rsmConfig: RSM, threads: 1 });
    try {
      const told: Array<[number, Buffer]> = [];
      const chunks = await pool.fetchChunks(ref, 1, 9, CHUNK, undefined, (i, c) => told.push([i, c]));
      assert.deepEqual(
        told.map(([i]) => i),
        [1, 2, 3, 4, 5],
      );
      told.forEach(([i, c], k) => {
        assert.equal(c, chunks[k]);
        assert.deepEqual(c, data.subarray(i * CHUNK, Math.min((i + 1) * CHUNK, data.length)));
      });
      // Stored chunk 2 corrupted: chunks 0 and 1 are told, then the request fails.
      const seg = makeSegment(4 * CHUNK, 9);
      const victim = newRef();
      await storage.copySegment(victim, seg.files);
      const file = path.join(root, objectKey('', victim, 'log'));
      const stored = await readFile(file);
      stored[2 * CHUNK + 5] = (stored[2 * CHUNK + 5] as number) ^ 0xff;
      await writeFile(file, stored);
      const early: Buffer[] = [];
      const failed = await pool.fetchChunks(victim, 0, 3, CHUNK, undefined, (_i, c) => early.push(c)).then(
        () => assert.fail('a corrupted chunk was served'),
        (e: unknown) => e,
      );
      assert.ok(failed instanceof RemoteCorruptionError);
      assert.deepEqual(Buffer.concat(early), seg.data.subarray(0, 2 * CHUNK));
      // A listener that throws fails the request; the worker carries on with the next.
      const refusal = new Error('refused');
      await assert.rejects(
        pool.fetchChunks(ref, 0, 3, CHUNK, undefined, () => {
          throw refusal;
        }),
        (e) => e === refusal,
      );
      assert.deepEqual(Buffer.concat(await pool.fetchChunks(ref, 0, 0, CHUNK)), data.subarray(0, CHUNK));
    } finally {
      await pool.close();
    }
  });

  it('reports storage errors with their class and Kafka code', async () => {
    const pool = new StorageWorkerPool({ url, rsmConfig: RSM, threads: 1 });
    const other = newRef();
    try {
      const missing = await pool.fetchChunks(other, 0, 0, CHUNK).then(
        () => assert.fail('a segment without a manifest was served'),
        (e: unknown) => e,
      );
      assert.ok(missing instanceof RemoteResourceNotFoundError);
      // Corrupt one stored chunk of a second copy: that chunk fails, the others serve.
      const seg = makeSegment(3 * CHUNK, 8);
      const victim = newRef();
      await storage.copySegment(victim, seg.files);
      const file = path.join(root, objectKey('', victim, 'log'));
      const stored = await readFile(file);
      stored[CHUNK + 5] = (stored[CHUNK + 5] as number) ^ 0xff;
      await writeFile(file, stored);
      const corrupt = await pool.fetchChunks(victim, 1, 1, CHUNK).then(
        () => assert.fail('a corrupted chunk was served'),
        (e: unknown) => e,
      );
      assert.ok(corrupt instanceof RemoteCorruptionError);
      assert.equal(corrupt.code, ErrorCode.CORRUPT_MESSAGE);
      assert.deepEqual(Buffer.concat(await pool.fetchChunks(victim, 2, 2, CHUNK)), seg.data.subarray(2 * CHUNK));
    } finally {
      await pool.close();
    }
  });

  it('an aborted fetch rejects at once and the pool goes on', async () => {
    const pool = new StorageWorkerPool({ url, rsmConfig: RSM, threads: 1 });
    try {
      const controller = new AbortController();
      const pending = pool.fetchChunks(ref, 0, 5, CHUNK, controller.signal);
      controller.abort(new Error('caller gave up'));
      await assert.rejects(pending, RemoteAbortedError);
      await assert.rejects(pool.fetchChunks(ref, 0, 0, CHUNK, controller.signal), RemoteAbortedError);
      assert.deepEqual(Buffer.concat(await pool.fetchChunks(ref, 0, 0, CHUNK)), data.subarray(0, CHUNK));
    } finally {
      await pool.close();
    }
    await assert.rejects(pool.fetchChunks(ref, 0, 0, CHUNK), RemoteStorageError, 'closed');
  });

  it('a worker that cannot open the store fails its requests with KAFKA_STORAGE_ERROR, naming why', async () => {
    const pool = new StorageWorkerPool({ url, rsmConfig: { 'rsm.config.chunk.size.bytes': '1' }, threads: 1 });
    try {
      const err = await pool.fetchChunks(ref, 0, 0, CHUNK).then(
        () => assert.fail('served without a store'),
        (e: unknown) => e,
      );
      assert.ok(err instanceof RemoteStorageError);
      assert.equal(err.code, ErrorCode.KAFKA_STORAGE_ERROR);
      assert.match(err.message, /chunk\.size\.bytes/);
    } finally {
      await pool.close();
    }
  });

  it('fills the shared-memory slots it is lent in place, and an aborted fetch with slots settles once the worker has ended it', async () => {
    const pool = new StorageWorkerPool({ url, rsmConfig: RSM, threads: 1 });
    try {
      const memory = new ChunkMemory(CHUNK, 8 * CHUNK, true);
      const slots = [memory.take()!, memory.take()!, memory.take()!];
      const told: Buffer[] = [];
      const chunks = await pool.fetchChunks(ref, 1, 3, CHUNK, undefined, (_i, c) => told.push(c), (index) => slots[index - 1]);
      chunks.forEach((c, k) => {
        assert.equal(c.buffer, slots[k]!.buffer, `chunk ${k + 1} is in its slot's memory`);
        assert.equal(c.byteOffset, slots[k]!.byteOffset);
        assert.equal(c, told[k]);
        assert.deepEqual(c, data.subarray((k + 1) * CHUNK, (k + 2) * CHUNK));
      });
      // The last chunk is short; an ordinary (not shared) target cannot be filled by a worker, so it is transferred.
      const plain = Buffer.alloc(CHUNK);
      const [last] = await pool.fetchChunks(ref, 5, 5, CHUNK, undefined, undefined, () => plain);
      assert.notEqual(last!.buffer, plain.buffer);
      assert.deepEqual(last, data.subarray(5 * CHUNK));
      const controller = new AbortController();
      const pending = pool.fetchChunks(ref, 0, 5, CHUNK, controller.signal, undefined, () => memory.take());
      controller.abort(new Error('reader gone'));
      await assert.rejects(pending, RemoteAbortedError);
      assert.deepEqual(Buffer.concat(await pool.fetchChunks(ref, 0, 0, CHUNK)), data.subarray(0, CHUNK));
    } finally {
      await pool.close();
    }
  });

  it('copies a segment in a worker (data by path, indexes in memory): the storage reads back the same bytes and indexes', async () => {
    const pool = new StorageWorkerPool({ url, rsmConfig: RSM, threads: 1 });
    try {
      const seg = makeSegment(3 * CHUNK + 77, 11);
      const dataFile = path.join(root, 'segment-to-copy.log');
      await writeFile(dataFile, seg.data);
      const copied = newRef();
      const result = await pool.copySegment(copied, { ...seg.files, data: dataFile });
      assert.equal(result.dataSize, seg.data.length);
      // The same verdict on its batches (random bytes here: not batches) as the storage's own copy gives.
      const own = await storage.copySegment(newRef(), seg.files);
      assert.equal(result.batchesVerified, own.batchesVerified);
      assert.deepEqual(result.batchProblem, own.batchProblem);
      assert.equal(result.storedDataSize, own.storedDataSize);
      assert.ok(Buffer.isBuffer(result.customMetadata), 'custom metadata arrives as a Buffer');
      assert.deepEqual(JSON.parse(result.customMetadata.toString('utf8')).dataSize, seg.data.length);
      assert.deepEqual(await storage.fetchData(copied, 0), seg.data);
      assert.deepEqual(await storage.fetchIndex(copied, 'offset'), seg.indexes.offset);
      assert.deepEqual(await storage.fetchIndex(copied, 'producerSnapshot'), seg.indexes.producerSnapshot);
      assert.deepEqual(await storage.fetchIndex(copied, 'leaderEpoch'), seg.indexes.leaderEpoch);
      // A data file that is gone fails the copy with the storage's error, naming the file; no manifest is written.
      const gone = newRef();
      const err = await pool.copySegment(gone, { ...seg.files, data: path.join(root, 'no-such.log') }).then(
        () => assert.fail('copied a missing file'),
        (e: unknown) => e,
      );
      assert.ok(err instanceof RemoteStorageError);
      assert.equal(err.code, ErrorCode.KAFKA_STORAGE_ERROR);
      assert.match(err.message, /no-such\.log/);
      await assert.rejects(storage.fetchData(gone, 0), RemoteResourceNotFoundError);
      // An aborted copy rejects at once.
      const controller = new AbortController();
      const pending = pool.copySegment(newRef(), { ...seg.files, data: dataFile }, controller.signal);
      controller.abort(new Error('leadership lost'));
      await assert.rejects(pending, RemoteAbortedError);
    } finally {
      await pool.close();
    }
  });

  it("carries the broker's manifest with each fetch: the worker does not read it from the store again", async () => {
    const seg = makeSegment(3 * CHUNK + 5, 11);
    const r = newRef();
    // The broker's storage wrote it, so holds its manifest; the store no longer does.
    await storage.copySegment(r, seg.files);
    await rm(path.join(root, objectKey('', r, 'manifest')));
    const carried = new StorageWorkerPool({ url, rsmConfig: RSM, threads: 1, manifests: storage });
    const alone = new StorageWorkerPool({ url, rsmConfig: RSM, threads: 1 });
    try {
      assert.deepEqual(Buffer.concat(await carried.fetchChunks(r, 0, 9, CHUNK)), seg.data);
      await assert.rejects(alone.fetchChunks(r, 0, 0, CHUNK), (e) => e instanceof RemoteResourceNotFoundError);
      // A segment the broker cannot find a manifest for fails as before.
      const other = newRef();
      await assert.rejects(carried.fetchChunks(other, 0, 0, CHUNK), (e) => e instanceof RemoteResourceNotFoundError);
      // A manifest handed over for another segment is refused as corruption, not cached.
      const mine = await storage.manifestOf(r);
      assert.throws(() => storage.adoptManifest(other, mine), (e) => e instanceof RemoteCorruptionError);
    } finally {
      await carried.close();
      await alone.close();
    }
  });

  it('is refused for a memory store, which one thread owns', () => {
    assert.equal(shareableStorageUrl('memory://'), false);
    assert.equal(shareableStorageUrl('s3://bucket/prefix'), true);
    assert.equal(shareableStorageUrl(url), true);
    assert.throws(() => new StorageWorkerPool({ url: 'memory://', rsmConfig: {}, threads: 1 }), RangeError);
    assert.throws(() => new StorageWorkerPool({ url, rsmConfig: {}, threads: 0 }), RangeError);
  });
});
