// The RemoteStorage contract, one suite for every backend. A backend's test
// file calls remoteStorageContract() with a factory; the suite reaches the
// stored objects only through the factory's raw (independent) access, the way
// an operator with another client would.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ErrorCode } from '../../broker/protocol/errors.js';
import { buildRecordBatch } from '../../broker/protocol/record-batch.js';
import { decodeManifest } from '../../remote-log/objects/manifest.js';
import type { ObjectRemoteStorageOptions } from '../../remote-log/objects/object-remote-storage.js';
import { afterBaseOffset, objectKey, partitionPrefix, topicPrefix } from '../../remote-log/objects/object-keys.js';
import type { IndexKind, RemoteSegmentRef, RemoteStorage, SegmentFiles } from '../../remote-log/remote-storage.js';
import { streamingChunksContract } from './streaming-chunks.contract.js';
import {
  RemoteAbortedError,
  RemoteCorruptionError,
  RemoteResourceNotFoundError,
  RemoteStorageError,
} from '../../remote-log/remote-storage.js';

/** One namespace of a backend: a fresh bucket prefix, directory or map. */
export interface ContractStore {
  /** The key prefix storages opened here use. */
  readonly prefix: string;
  /** A new RemoteStorage instance over this namespace (several may share it). */
  open(options?: Omit<ObjectRemoteStorageOptions, 'prefix'>): RemoteStorage;
  rawPut(key: string, bytes: Buffer): Promise<void>;
  /** undefined when absent. */
  rawGet(key: string): Promise<Buffer | undefined>;
  rawList(): Promise<string[]>;
  close(): Promise<void>;
}

export interface ContractBackend {
  readonly name: string;
  openStore(): Promise<ContractStore>;
}

const CHUNK = 64 * 1024;

/** Deterministic PRNG (mulberry32) so failures reproduce. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Compressible but not trivial bytes, like uncompressed record batches. */
export function segmentBytes(size: number, seed: number): Buffer {
  const rnd = prng(seed);
  const words = ['offset', 'value', 'key', 'payload', 'sediment', 'topic', 'record', '0123456789'];
  const out = Buffer.alloc(size);
  let pos = 0;
  while (pos < size) {
    const w = words[Math.floor(rnd() * words.length)] ?? 'x';
    pos += out.write(`${w}:${Math.floor(rnd() * 1000)};`, pos);
  }
  return out;
}

/** Uncompressed record batches of varied sizes filling about `size` bytes, and where each starts. */
export function recordBatches(size: number): { data: Buffer; positions: number[] } {
  const rnd = prng(size);
  const parts: Buffer[] = [];
  const positions: number[] = [];
  let pos = 0;
  while (pos < size) {
    const records = Array.from({ length: 1 + Math.floor(rnd() * 20) }, (_, i) => ({
      key: `key-${i}`,
      value: segmentBytes(10 + Math.floor(rnd() * 400), pos + i),
      timestamp: 1_700_000_000_000 + i,
    }));
    const batch = buildRecordBatch({ records, baseOffset: BigInt(parts.length * 100) });
    parts.push(batch);
    positions.push(pos);
    pos += batch.length;
  }
  return { data: Buffer.concat(parts), positions };
}

let refCounter = 0;
export function newRef(overrides: Partial<RemoteSegmentRef> = {}): RemoteSegmentRef {
  refCounter++;
  return {
    topic: 'orders-eu.v2_x',
    topicId: randomBytes(16).toString('base64url'),
    partition: 3,
    baseOffset: 1_000_000_000_000n + BigInt(refCounter),
    segmentId: randomBytes(16).toString('base64url'),
    ...overrides,
  };
}

interface Segment {
  files: SegmentFiles;
  data: Buffer;
  indexes: Record<Exclude<IndexKind, 'txn'>, Buffer> & { txn?: Buffer };
}

export function makeSegment(dataSize: number, seed: number, opts: { txn?: boolean; uncompressed?: boolean } = {}): Segment {
  const data = segmentBytes(dataSize, seed);
  const indexes = {
    offset: randomBytes(8 * 37),
    time: randomBytes(12 * 29),
    producerSnapshot: randomBytes(101),
    leaderEpoch: Buffer.from('0\n2\n0 0\n4 1200\n'),
    ...(opts.txn === false ? {} : { txn: randomBytes(34 * 3) }),
  };
  const files: SegmentFiles = {
    data,
    offsetIndex: indexes.offset,
    timeIndex: indexes.time,
    producerSnapshot: indexes.producerSnapshot,
    leaderEpochCheckpoint: indexes.leaderEpoch,
    ...(indexes.txn === undefined ? {} : { txnIndex: indexes.txn }),
    batchesUncompressed: opts.uncompressed ?? true,
  };
  return { files, data, indexes };
}

async function rejectsWith(p: Promise<unknown>, cls: new (...args: never[]) => Error, code?: number): Promise<Error> {
  let caught: unknown;
  try {
    await p;
  } catch (e) {
    caught = e;
  }
  assert.ok(caught instanceof cls, `expected ${cls.name}, got ${String(caught)}`);
  if (code !== undefined) assert.equal((caught as RemoteStorageError).code, code);
  return caught;
}

function flipByte(buf: Buffer, at: number): Buffer {
  const copy = Buffer.from(buf);
  copy[at] = (copy[at] ?? 0) ^ 0x5a;
  return copy;
}

export function remoteStorageContract(backend: ContractBackend): void {
  describe(`RemoteStorage contract: ${backend.name}`, () => {
    let store: ContractStore;
    let storage: RemoteStorage;
    let compressing: RemoteStorage;
    let tmp: string;

    before(async () => {
      store = await backend.openStore();
      storage = store.open({ chunkSize: CHUNK });
      compressing = store.open({ chunkSize: CHUNK, compression: true });
      tmp = await mkdtemp(path.join(tmpdir(), 'sediment-contract-'));
    });
    after(async () => {
      await storage.close();
      await compressing.close();
      await store.close();
      await rm(tmp, { recursive: true, force: true });
    });

    for (const mode of ['uncompressed', 'zstd-chunked'] as const) {
      it(`copies a segment and fetches data and every index (${mode})`, async () => {
        const s = mode === 'uncompressed' ? storage : compressing;
        const seg = makeSegment(3 * CHUNK + 1234, 1);
        const ref = newRef();
        const result = await s.copySegment(ref, seg.files);
        assert.equal(result.compression, mode === 'uncompressed' ? 'none' : 'zstd-chunked');
        assert.equal(result.dataSize, seg.data.length);
        assert.equal(result.chunkSize, CHUNK);
        if (mode === 'zstd-chunked') assert.ok(result.storedDataSize < seg.data.length / 2, 'zstd shrinks text data');
        else assert.equal(result.storedDataSize, seg.data.length);
        assert.equal(result.manifestKey, objectKey(store.prefix, ref, 'manifest'));
        assert.equal(result.objects.log?.key, objectKey(store.prefix, ref, 'log'));
        assert.equal(result.objects.log?.size, result.storedDataSize);
        assert.equal(result.objects.index?.size, seg.indexes.offset.length);
        assert.deepEqual(JSON.parse(result.customMetadata.toString('utf8')).compression, result.compression);

        assert.deepEqual(await s.fetchData(ref, 0), seg.data);
        assert.deepEqual(await s.fetchIndex(ref, 'offset'), seg.indexes.offset);
        assert.deepEqual(await s.fetchIndex(ref, 'time'), seg.indexes.time);
        assert.deepEqual(await s.fetchIndex(ref, 'txn'), seg.indexes.txn);
        assert.deepEqual(await s.fetchIndex(ref, 'producerSnapshot'), seg.indexes.producerSnapshot);
        assert.deepEqual(await s.fetchIndex(ref, 'leaderEpoch'), seg.indexes.leaderEpoch);
        // Another instance (cold manifest cache) reads the same bytes.
        const other = store.open({ chunkSize: 999 });
        assert.deepEqual(await other.fetchData(ref, 5, CHUNK + 7), seg.data.subarray(5, CHUNK + 8));
        await other.close();
      });

      it(`serves ranged reads at chunk edges and past the end (${mode})`, async () => {
        const s = mode === 'uncompressed' ? storage : compressing;
        const seg = makeSegment(4 * CHUNK + 17, 2);
        const ref = newRef();
        await s.copySegment(ref, seg.files);
        const size = seg.data.length;
        const cases: Array<[number, number | undefined]> = [
          [0, 0],
          [0, CHUNK - 1],
          [CHUNK - 1, CHUNK],
          [CHUNK, 2 * CHUNK - 1],
          [CHUNK - 3, 3 * CHUNK + 2],
          [size - 1, size - 1],
          [size - 1, undefined],
          [4 * CHUNK, undefined],
          [10, size + 5000],
          [123, undefined],
        ];
        for (const [start, end] of cases) {
          const want = seg.data.subarray(start, end === undefined ? size : Math.min(end + 1, size));
          assert.deepEqual(await s.fetchData(ref, start, end), want, `range ${start}..${end}`);
        }
        assert.equal((await s.fetchData(ref, size)).length, 0, 'start at the end');
        assert.equal((await s.fetchData(ref, size + 100, size + 200)).length, 0, 'start past the end');
        assert.equal((await s.fetchData(ref, 50, 49)).length, 0, 'end before start');
        await assert.rejects(s.fetchData(ref, -1), RangeError);
        const rnd = prng(99);
        for (let i = 0; i < 40; i++) {
          const a = Math.floor(rnd() * size);
          const b = a + Math.floor(rnd() * 2.5 * CHUNK);
          assert.deepEqual(await s.fetchData(ref, a, b), seg.data.subarray(a, Math.min(b + 1, size)), `random ${a}..${b}`);
        }
      });
    }

    for (const mode of ['uncompressed', 'zstd-chunked'] as const) {
      it(`fetchChunks returns the data cut into chunks, each its own allocation (${mode})`, async () => {
        const s = mode === 'uncompressed' ? storage : compressing;
        const seg = makeSegment(4 * CHUNK + 17, 21);
        const ref = newRef();
        await s.copySegment(ref, seg.files);
        const size = seg.data.length;
        const own = (b: Buffer): boolean => b.byteOffset === 0 && b.length === b.buffer.byteLength;
        const all = await s.fetchChunks(ref, 0, 10, CHUNK);
        assert.equal(all.length, 5, 'chunks past the end are left out');
        all.forEach((c, i) => {
          assert.deepEqual(c, seg.data.subarray(i * CHUNK, Math.min((i + 1) * CHUNK, size)), `chunk ${i}`);
          assert.ok(own(c), `chunk ${i} owns its bytes`);
        });
        const middle = await s.fetchChunks(ref, 1, 2, CHUNK);
        assert.deepEqual(Buffer.concat(middle), seg.data.subarray(CHUNK, 3 * CHUNK));
        assert.deepEqual(await s.fetchChunks(ref, 5, 9, CHUNK), [], 'past the end');
        // Another chunk size than the stored one: still the right bytes.
        const halves = await s.fetchChunks(ref, 3, 5, CHUNK / 2);
        assert.deepEqual(Buffer.concat(halves), seg.data.subarray((3 * CHUNK) / 2, 3 * CHUNK));
        assert.ok(halves.every(own));
        await assert.rejects(s.fetchChunks(ref, -1, 2, CHUNK), RangeError);
      });
    }

    it('fetchChunks never serves a corrupted or truncated chunk', async () => {
      const seg = makeSegment(3 * CHUNK, 23);
      const ref = newRef();
      await storage.copySegment(ref, seg.files);
      const key = objectKey(store.prefix, ref, 'log');
      const stored = await store.rawGet(key);
      assert.ok(stored !== undefined);
      await store.rawPut(key, flipByte(stored, 2 * CHUNK + 7));
      await rejectsWith(storage.fetchChunks(ref, 0, 2, CHUNK), RemoteCorruptionError, ErrorCode.CORRUPT_MESSAGE);
      assert.deepEqual(Buffer.concat(await storage.fetchChunks(ref, 0, 1, CHUNK)), seg.data.subarray(0, 2 * CHUNK), 'intact chunks still serve');
      await store.rawPut(key, stored.subarray(0, 2 * CHUNK + 100));
      await rejectsWith(storage.fetchChunks(ref, 1, 2, CHUNK), RemoteCorruptionError, ErrorCode.CORRUPT_MESSAGE);
    });

    for (const mode of ['uncompressed', 'zstd-chunked'] as const) {
      it(`verifies record batches at upload and says so in the manifest and the summary (${mode})`, async () => {
        const s = mode === 'uncompressed' ? storage : compressing;
        const { data, positions } = recordBatches(3 * CHUNK + 777);
        const verified = await s.copySegment(newRef(), { ...makeSegment(10, 5).files, data });
        assert.equal(verified.batchesVerified, true);
        assert.equal(verified.batchProblem, undefined);
        assert.equal(JSON.parse(verified.customMetadata.toString('utf8')).batchesVerified, true);
        // A batch corrupted before upload (in a chunk's middle): the copy goes ahead, flagged, and reads back as copied.
        const bad = Buffer.from(data);
        const victim = positions.find((p) => p > CHUNK + 100)!;
        bad[victim + 70] = (bad[victim + 70] ?? 0) ^ 0x04;
        const ref = newRef();
        const flagged = await s.copySegment(ref, { ...makeSegment(10, 5).files, data: bad });
        assert.equal(flagged.batchesVerified, false);
        assert.equal(flagged.batchProblem?.position, victim);
        assert.equal(JSON.parse(flagged.customMetadata.toString('utf8')).batchesVerified, false);
        const manifest = decodeManifest((await store.rawGet(objectKey(store.prefix, ref, 'manifest')))!);
        assert.equal(manifest.batchesVerified, false);
        assert.deepEqual(await s.fetchData(ref, 0), bad);
        // Data that is not batches at all.
        assert.equal((await s.copySegment(newRef(), makeSegment(2 * CHUNK, 6).files)).batchesVerified, false);
      });
    }

    it('stores data as is when the caller does not declare the batches uncompressed', async () => {
      const seg = makeSegment(2 * CHUNK, 3, { uncompressed: false });
      const ref = newRef();
      const result = await compressing.copySegment(ref, seg.files);
      assert.equal(result.compression, 'none');
      assert.deepEqual(await store.rawGet(objectKey(store.prefix, ref, 'log')), seg.data);
    });

    it('copies from files on disk', async () => {
      const seg = makeSegment(2 * CHUNK + 99, 4, { txn: false });
      const dir = path.join(tmp, 'seg-files');
      await rm(dir, { recursive: true, force: true });
      await mkdir(dir);
      const p = (n: string): string => path.join(dir, n);
      await writeFile(p('00000000000000000042.log'), seg.data);
      await writeFile(p('00000000000000000042.index'), seg.indexes.offset);
      await writeFile(p('00000000000000000042.timeindex'), seg.indexes.time);
      await writeFile(p('00000000000000000042.snapshot'), seg.indexes.producerSnapshot);
      await writeFile(p('leader-epoch-checkpoint'), seg.indexes.leaderEpoch);
      const ref = newRef({ baseOffset: 42n });
      for (const s of [storage, compressing]) {
        await s.copySegment(ref, {
          data: p('00000000000000000042.log'),
          offsetIndex: p('00000000000000000042.index'),
          timeIndex: p('00000000000000000042.timeindex'),
          producerSnapshot: p('00000000000000000042.snapshot'),
          leaderEpochCheckpoint: p('leader-epoch-checkpoint'),
          batchesUncompressed: true,
        });
        assert.deepEqual(await s.fetchData(ref, 0), seg.data);
        assert.deepEqual(await s.fetchIndex(ref, 'time'), seg.indexes.time);
        assert.equal((await s.fetchIndex(ref, 'txn')).length, 0, 'absent txn index reads as empty');
        assert.equal(await store.rawGet(objectKey(store.prefix, ref, 'txnindex')), undefined);
      }
    });

    it('copies an empty segment', async () => {
      const seg = makeSegment(0, 5);
      const ref = newRef();
      const result = await compressing.copySegment(ref, seg.files);
      assert.equal(result.dataSize, 0);
      assert.equal((await compressing.fetchData(ref, 0)).length, 0);
    });

    it('deletes idempotently, and a deleted segment is not served', async () => {
      const seg = makeSegment(CHUNK + 5, 6);
      const ref = newRef();
      await storage.copySegment(ref, seg.files);
      await storage.deleteSegment(ref);
      await storage.deleteSegment(ref);
      await storage.deleteSegment(newRef()); // never copied
      const keys = await store.rawList();
      assert.ok(!keys.some((k) => k.includes(ref.segmentId)), 'no object of the deleted segment remains');
      await rejectsWith(storage.fetchData(ref, 0), RemoteResourceNotFoundError, ErrorCode.KAFKA_STORAGE_ERROR);
      await rejectsWith(storage.fetchIndex(ref, 'offset'), RemoteResourceNotFoundError);
    });

    it('a retried copy overwrites what a failed one left, and the listing tells incomplete from complete', async () => {
      const ref = newRef({ partition: 7 });
      const first = makeSegment(2 * CHUNK, 7);
      // A stale, truncated data object from an earlier crashed attempt.
      await store.rawPut(objectKey(store.prefix, ref, 'log'), first.data.subarray(0, 100));
      const failed = storage.copySegment(ref, { ...first.files, producerSnapshot: path.join(tmp, 'missing.snapshot') });
      await rejectsWith(failed, RemoteStorageError, ErrorCode.KAFKA_STORAGE_ERROR);
      await rejectsWith(storage.fetchData(ref, 0), RemoteResourceNotFoundError);
      let listing = await storage.listSegments(partitionPrefix('', ref.topic, ref.topicId, ref.partition));
      assert.equal(listing.length, 1);
      assert.equal(listing[0]?.hasManifest, false);
      assert.deepEqual(listing[0]?.ref, ref);

      const second = makeSegment(2 * CHUNK + 11, 8);
      await storage.copySegment(ref, second.files);
      assert.deepEqual(await storage.fetchData(ref, 0), second.data);
      assert.deepEqual(await storage.fetchIndex(ref, 'producerSnapshot'), second.indexes.producerSnapshot);
      listing = await storage.listSegments(partitionPrefix('', ref.topic, ref.topicId, ref.partition));
      assert.equal(listing[0]?.hasManifest, true);
      const kinds = listing[0]?.objects.map((o) => o.kind).sort();
      assert.deepEqual(kinds, ['index', 'leader-epoch-checkpoint', 'log', 'manifest', 'snapshot', 'timeindex', 'txnindex']);

      // Copying a complete segment again replaces it (and its cached manifest).
      const third = makeSegment(CHUNK + 3, 9);
      await storage.copySegment(ref, third.files);
      assert.deepEqual(await storage.fetchData(ref, 0), third.data);
    });

    it('lists segments grouped per segment, under a topic or partition prefix', async () => {
      const topicId = randomBytes(16).toString('base64url');
      const a = newRef({ topic: 'a-b', topicId, partition: 0, baseOffset: 0n });
      const b = newRef({ topic: 'a-b', topicId, partition: 0, baseOffset: 500n });
      const c = newRef({ topic: 'a-b', topicId, partition: 1, baseOffset: 0n });
      for (const r of [a, b, c]) await storage.copySegment(r, makeSegment(100, 10).files);
      await storage.deleteSegment(b).then(() => store.rawPut(objectKey(store.prefix, b, 'log'), Buffer.from('orphan')));
      await store.rawPut(`${store.prefix}${topicPrefix('', 'a-b', topicId)}not-a-segment.txt`, Buffer.from('x'));

      const all = await storage.listSegments(topicPrefix('', 'a-b', topicId));
      assert.deepEqual(
        all.map((l) => [l.ref.partition, l.ref.baseOffset, l.hasManifest]).sort(),
        [[0, 0n, true], [0, 500n, false], [1, 0n, true]].sort(),
      );
      for (const l of all) {
        assert.ok(l.lastModified > 0);
        assert.equal(l.lastModified, Math.max(...l.objects.map((o) => o.lastModified)));
      }
      const p1 = await storage.listSegments(partitionPrefix('', 'a-b', topicId, 1));
      assert.deepEqual(p1.map((l) => l.ref), [c]);
      assert.deepEqual(await storage.listSegments(topicPrefix('', 'nothing', topicId)), []);
    });

    it('lists only the objects after a start-after bound', async () => {
      const topicId = randomBytes(16).toString('base64url');
      const refs = [0n, 10n, 20n, 30n].map((baseOffset) => newRef({ topic: 'after', topicId, partition: 3, baseOffset }));
      for (const r of refs) await storage.copySegment(r, makeSegment(100, 12).files);
      const prefix = partitionPrefix('', 'after', topicId, 3);
      const offsets = async (startAfter?: string): Promise<bigint[]> =>
        (await storage.listSegments(prefix, undefined, startAfter)).map((l) => l.ref.baseOffset).sort((a, b) => (a < b ? -1 : 1));
      assert.deepEqual(await offsets(), [0n, 10n, 20n, 30n]);
      assert.deepEqual(await offsets(afterBaseOffset('', 'after', topicId, 3, 10n)), [20n, 30n]);
      assert.deepEqual(await offsets(afterBaseOffset('', 'after', topicId, 3, 9n)), [10n, 20n, 30n]);
      assert.deepEqual(await offsets(afterBaseOffset('', 'after', topicId, 3, 30n)), []);
      // A bound inside one segment's keys: only its kinds sorting after it.
      const inside = objectKey('', refs[1]!, 'log');
      const whole = (await storage.listSegments(prefix)).find((l) => l.ref.baseOffset === 10n)!;
      const partial = await storage.listSegments(prefix, undefined, inside);
      assert.deepEqual(
        partial.filter((l) => l.ref.baseOffset === 10n).flatMap((l) => l.objects.map((o) => o.kind)).sort(),
        whole.objects.map((o) => o.kind).filter((k) => k > 'log').sort(),
      );
      assert.ok(partial.some((l) => l.ref.baseOffset === 10n && l.objects.some((o) => o.kind === 'manifest')));
      // A bound from another partition's keys does not widen the prefix.
      assert.deepEqual(
        (await storage.listSegments(prefix, undefined, afterBaseOffset('', 'after', topicId, 2, 0n))).length,
        4,
      );
    });

    for (const mode of ['uncompressed', 'zstd-chunked'] as const) {
      it(`detects a corrupted data object and never serves it (${mode})`, async () => {
        const s = mode === 'uncompressed' ? storage : compressing;
        const seg = makeSegment(3 * CHUNK, 11);
        const ref = newRef();
        const result = await s.copySegment(ref, seg.files);
        const key = objectKey(store.prefix, ref, 'log');
        const stored = await store.rawGet(key);
        assert.ok(stored !== undefined);
        // Corrupt a byte in the middle of the stored object (the second chunk when uncompressed).
        const at = mode === 'uncompressed' ? CHUNK + 10 : Math.floor(result.storedDataSize / 2);
        await store.rawPut(key, flipByte(stored, at));
        const err = await rejectsWith(s.fetchData(ref, 0), RemoteCorruptionError, ErrorCode.CORRUPT_MESSAGE);
        assert.match(err.message, /crc32c|zstd|decompressed/);
        if (mode === 'uncompressed') {
          assert.deepEqual(await s.fetchData(ref, 0, CHUNK - 1), seg.data.subarray(0, CHUNK), 'intact chunks still serve');
          await rejectsWith(s.fetchData(ref, CHUNK + 5, CHUNK + 5), RemoteCorruptionError);
        }
        // A truncated object is corruption too.
        await store.rawPut(key, stored.subarray(0, stored.length - 1));
        await rejectsWith(s.fetchData(ref, 0), RemoteCorruptionError, ErrorCode.CORRUPT_MESSAGE);
      });
    }

    it('detects corrupted indexes and a corrupted manifest', async () => {
      const seg = makeSegment(CHUNK, 12);
      const ref = newRef();
      await storage.copySegment(ref, seg.files);
      const idxKey = objectKey(store.prefix, ref, 'timeindex');
      await store.rawPut(idxKey, flipByte(seg.indexes.time, 3));
      await rejectsWith(storage.fetchIndex(ref, 'time'), RemoteCorruptionError, ErrorCode.CORRUPT_MESSAGE);
      await store.rawPut(idxKey, Buffer.concat([seg.indexes.time, Buffer.from([0])]));
      await rejectsWith(storage.fetchIndex(ref, 'time'), RemoteCorruptionError);

      const manifestKey = objectKey(store.prefix, ref, 'manifest');
      const manifest = await store.rawGet(manifestKey);
      assert.ok(manifest !== undefined);
      await store.rawPut(manifestKey, flipByte(manifest, manifest.length - 5));
      const fresh = store.open({ chunkSize: CHUNK });
      await rejectsWith(fresh.fetchData(ref, 0), RemoteCorruptionError, ErrorCode.CORRUPT_MESSAGE);
      await rejectsWith(fresh.fetchIndex(ref, 'offset'), RemoteCorruptionError);
      await fresh.close();
    });

    streamingChunksContract(() => ({ store, storage, compressing }));

    it('honours an AbortSignal', async () => {
      const seg = makeSegment(2 * CHUNK, 13);
      const ref = newRef();
      const aborted = AbortSignal.abort(new Error('caller gave up'));
      await rejectsWith(storage.copySegment(ref, seg.files, aborted), RemoteAbortedError, ErrorCode.REQUEST_TIMED_OUT);
      await storage.copySegment(ref, seg.files);
      await rejectsWith(store.open().fetchData(ref, 0, undefined, aborted), RemoteAbortedError, ErrorCode.REQUEST_TIMED_OUT);
      await rejectsWith(store.open().fetchIndex(ref, 'offset', aborted), RemoteAbortedError);
      // An abort while a copy is under way leaves no manifest.
      const ref2 = newRef();
      const controller = new AbortController();
      const big = makeSegment(40 * CHUNK, 14);
      const dataPath = path.join(tmp, 'abort.log');
      await writeFile(dataPath, big.data);
      const copy = storage.copySegment(ref2, { ...big.files, data: dataPath }, controller.signal);
      controller.abort(new Error('stop'));
      await rejectsWith(copy, RemoteAbortedError, ErrorCode.REQUEST_TIMED_OUT);
      await rejectsWith(storage.fetchData(ref2, 0), RemoteResourceNotFoundError);
    });
  });
}
