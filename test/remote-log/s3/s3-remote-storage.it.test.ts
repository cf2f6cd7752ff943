// S3RemoteStorage against a real MinIO server: the shared contract, then what
// only S3 has (multipart uploads, timeouts, retries over a dying server). The
// `minio` npm client is the independent second client that inspects and
// tampers with the bucket.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Client } from 'minio';
import { ErrorCode } from '../../../broker/protocol/errors.js';
import { crc32c } from '@node-rs/crc32';
import { objectKey } from '../../../remote-log/objects/object-keys.js';
import { pieceCrc32c } from '../../../remote-log/objects/object-store.js';
import { RemoteAbortedError, RemoteStorageError, RemoteTimeoutError } from '../../../remote-log/remote-storage.js';
import { StorageWorkerPool } from '../../../remote-log/workers/storage-worker-pool.js';
import { S3RemoteStorage, type S3RemoteStorageOptions } from '../../../remote-log/s3/s3-remote-storage.js';
import { startMinio, type MinioServer } from '../../support/minio.js';
import { makeSegment, newRef, remoteStorageContract } from '../remote-storage.contract.js';

/** MinIO's refusal of a body whose x-amz-checksum-crc32c is wrong, for `key`, as the store reports it (a TypeError from a bug is no refusal). */
function checksumRefused(key: string): (e: unknown) => boolean {
  return (e) => {
    if (!(e instanceof RemoteStorageError) || e.code !== ErrorCode.KAFKA_STORAGE_ERROR) return false;
    const cause = e.cause as { name?: unknown } | undefined;
    return /^(PUT|UPLOAD PART \d+) s3:\/\/\S+\//.test(e.message) && e.message.includes(key) && (cause?.name === 'XAmzContentChecksumMismatch' || cause?.name === 'BadDigest');
  };
}

async function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const p of stream) parts.push(Buffer.isBuffer(p) ? p : Buffer.from(p as string));
  return Buffer.concat(parts);
}

async function rawGet(client: Client, bucket: string, key: string): Promise<Buffer | undefined> {
  try {
    return await readAll(await client.getObject(bucket, key));
  } catch (e) {
    if ((e as { code?: unknown }).code === 'NoSuchKey') return undefined;
    throw e;
  }
}

async function rawList(client: Client, bucket: string, prefix: string): Promise<string[]> {
  const out: string[] = [];
  for await (const o of client.listObjectsV2(bucket, prefix, true)) {
    const name = (o as { name?: string }).name;
    if (name !== undefined) out.push(name);
  }
  return out;
}

let minio: MinioServer;
let client: Client;

before(async () => {
  minio = await startMinio();
  client = minio.client();
});
after(async () => {
  await minio?.stop();
});

function s3Options(prefix: string, extra: Partial<S3RemoteStorageOptions> = {}): S3RemoteStorageOptions {
  return {
    bucket: minio.bucket,
    endpoint: minio.endpoint,
    region: minio.region,
    forcePathStyle: true,
    credentials: { accessKeyId: minio.accessKey, secretAccessKey: minio.secretKey },
    prefix,
    retry: { maxAttempts: 3, initialBackoffMs: 10, maxBackoffMs: 50, requestTimeoutMs: 10_000 },
    ...extra,
  };
}

// Both GET transports (rsm.config.s3.read.http.handler) keep the whole contract.
for (const readHttpHandler of ['direct', 'node-http'] as const) {
remoteStorageContract({
  name: `S3RemoteStorage on MinIO, GETs over ${readHttpHandler}`,
  async openStore() {
    const prefix = `contract-${randomBytes(4).toString('hex')}/`;
    return {
      prefix,
      open: (options) => new S3RemoteStorage(s3Options(prefix, { readHttpHandler, ...options })),
      rawPut: async (key, bytes) => {
        await client.putObject(minio.bucket, key, bytes);
      },
      rawGet: (key) => rawGet(client, minio.bucket, key),
      rawList: () => rawList(client, minio.bucket, prefix),
      close: async () => {},
    };
  },
});
}

describe('S3RemoteStorage on MinIO', () => {
  it('serves fetch worker threads: every chunk of a multi-chunk GET arrives intact, in order, over both GET transports', async () => {
    for (const handler of ['direct', 'node-http']) {
      const prefix = `workers-${handler}/`;
      const rsmConfig = {
        'rsm.config.s3.endpoint': minio.endpoint,
        'rsm.config.s3.region': minio.region,
        'rsm.config.s3.path.style.access': 'true',
        'rsm.config.s3.access.key.id': minio.accessKey,
        'rsm.config.s3.secret.access.key': minio.secretKey,
        'rsm.config.s3.read.http.handler': handler,
      };
      // Stored in 64 KiB chunks, read in 64 KiB chunks: the worker cuts the GET's body as it streams.
      const storage = new S3RemoteStorage(s3Options(prefix, { chunkSize: 65536 }));
      const pool = new StorageWorkerPool({ url: `s3://${minio.bucket}/${prefix}`, rsmConfig, threads: 1 });
      try {
        const seg = makeSegment(8 * 65536 + 100, 5);
        const ref = newRef();
        await storage.copySegment(ref, seg.files);
        const told: number[] = [];
        const chunks = await pool.fetchChunks(ref, 0, 8, 65536, undefined, (i) => told.push(i));
        assert.deepEqual(told, [0, 1, 2, 3, 4, 5, 6, 7, 8]);
        assert.deepEqual(chunks.map((c) => c.length), [...Array.from({ length: 8 }, () => 65536), 100]);
        assert.ok(Buffer.concat(chunks).equals(seg.data), `${handler}: the chunks are the segment's bytes`);
      } finally {
        await pool.close();
        await storage.close();
      }
    }
  });

  it('uploads above the threshold as multipart, readable by ranges', async () => {
    const prefix = 'multipart/';
    const storage = new S3RemoteStorage(s3Options(prefix, { multipartThresholdBytes: 1024 * 1024, partSizeBytes: 5 * 1024 * 1024 }));
    try {
      const seg = makeSegment(12 * 1024 * 1024 + 5, 21);
      const ref = newRef();
      await storage.copySegment(ref, seg.files);
      const stat = await client.statObject(minio.bucket, objectKey(prefix, ref, 'log'));
      assert.equal(stat.size, seg.data.length);
      assert.match(stat.etag, /-3$/, `a 3-part upload's ETag ends in -3 (got ${stat.etag})`);
      const small = await client.statObject(minio.bucket, objectKey(prefix, ref, 'index'));
      assert.doesNotMatch(small.etag, /-/, 'small objects are single PUTs');
      const mid = 5 * 1024 * 1024;
      assert.deepEqual(await storage.fetchData(ref, mid - 10, mid + 10), seg.data.subarray(mid - 10, mid + 11));
      assert.deepEqual(await rawGet(client, minio.bucket, objectKey(prefix, ref, 'log')), seg.data);

      // From a file: read through one reused block, uploaded through pooled part buffers, twice over the same pool.
      const dir = await mkdtemp(path.join(tmpdir(), 'sediment-s3-'));
      try {
        for (const seed of [25, 26]) {
          const big = makeSegment(11 * 1024 * 1024 + 3, seed);
          const file = path.join(dir, `${seed}.log`);
          await writeFile(file, big.data);
          const fileRef = newRef();
          await storage.copySegment(fileRef, { ...big.files, data: file });
          assert.deepEqual(await rawGet(client, minio.bucket, objectKey(prefix, fileRef, 'log')), big.data);
          assert.match((await client.statObject(minio.bucket, objectKey(prefix, fileRef, 'log'))).etag, /-3$/);
        }
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    } finally {
      await storage.close();
    }
  });

  it('tells the pieces of a ranged GET while its body is still streaming', async () => {
    const storage = new S3RemoteStorage(s3Options('streaming/'));
    try {
      const mib = 1024 * 1024;
      const bytes = randomBytes(16 * mib);
      await client.putObject(minio.bucket, 'streaming/big', bytes);
      let settled = false;
      let settledWhenToldPieceZero: boolean | undefined;
      let told = 0;
      const answer = storage.store.getPieces('streaming/big', { start: 0, endInclusive: bytes.length - 1 }, Array.from({ length: 16 }, () => mib), undefined, (k, piece) => {
        assert.equal(k, told++);
        assert.ok(piece.equals(bytes.subarray(k * mib, (k + 1) * mib)), `piece ${k}`);
        // A piece told only at the end of the body would see the answer settled by the next turn of the loop.
        if (k === 0) setImmediate(() => (settledWhenToldPieceZero = settled));
      });
      const pieces = await answer.finally(() => (settled = true));
      assert.equal(told, 16);
      assert.equal(settledWhenToldPieceZero, false, 'piece 0 told before the body ended');
      assert.ok(Buffer.concat(pieces).equals(bytes));
    } finally {
      await storage.close();
    }
  });

  it('sends checksums combined from the CRCs a streamed body recorded for its pieces', async () => {
    const storage = new S3RemoteStorage(s3Options('piece-crc/', { multipartThresholdBytes: 1024 * 1024, partSizeBytes: 5 * 1024 * 1024 }));
    const stream = (data: Buffer, pieceSize: number, lie = false): AsyncIterable<Buffer> =>
      (async function* () {
        for (let pos = 0; pos < data.length; pos += pieceSize) {
          const piece = data.subarray(pos, Math.min(pos + pieceSize, data.length));
          pieceCrc32c.set(piece, (crc32c(piece) ^ (lie ? 1 : 0)) >>> 0);
          yield piece;
        }
      })();
    try {
      // Multipart, pieces straddling the 5 MiB parts; then a single PUT of two pieces.
      const big = randomBytes(13 * 1024 * 1024 + 11);
      await storage.store.put('piece-crc/multi', stream(big, 3 * 1024 * 1024 + 7), undefined, big.length);
      assert.deepEqual(await rawGet(client, minio.bucket, 'piece-crc/multi'), big);
      const small = randomBytes(600 * 1024 + 3);
      await storage.store.put('piece-crc/single', stream(small, 300 * 1024));
      assert.deepEqual(await rawGet(client, minio.bucket, 'piece-crc/single'), small);
      // The recorded CRCs are what the server checks: wrong ones are refused and nothing is stored.
      await assert.rejects(storage.store.put('piece-crc/lie-multi', stream(big, 5 * 1024 * 1024, true), undefined, big.length), checksumRefused('piece-crc/lie-multi'));
      assert.equal(await rawGet(client, minio.bucket, 'piece-crc/lie-multi'), undefined);
      await assert.rejects(storage.store.put('piece-crc/lie-single', stream(small, 300 * 1024, true)), checksumRefused('piece-crc/lie-single'));
      assert.equal(await rawGet(client, minio.bucket, 'piece-crc/lie-single'), undefined);
    } finally {
      await storage.close();
    }
  });

  it('aborts the multipart upload when the upload fails midway', async () => {
    const storage = new S3RemoteStorage(s3Options('multipart-fail/', { multipartThresholdBytes: 1024 * 1024, partSizeBytes: 5 * 1024 * 1024 }));
    try {
      const key = 'multipart-fail/broken';
      async function* failing(): AsyncGenerator<Buffer> {
        for (let i = 0; i < 7; i++) yield randomBytes(1024 * 1024);
        throw new Error('disk read failed');
      }
      await assert.rejects(storage.store.put(key, failing()), /disk read failed/);
      const pending: unknown[] = [];
      for await (const u of client.listIncompleteUploads(minio.bucket, 'multipart-fail/', true)) pending.push(u);
      assert.deepEqual(pending, [], 'no incomplete upload is left behind');
      assert.equal(await rawGet(client, minio.bucket, key), undefined);
    } finally {
      await storage.close();
    }
  });

  it('bounds requests to a frozen server with timeouts, and an abort ends a request at once', async () => {
    const prefix = 'frozen/';
    const storage = new S3RemoteStorage(s3Options(prefix, { retry: { maxAttempts: 2, initialBackoffMs: 1, maxBackoffMs: 1, requestTimeoutMs: 300 } }));
    const seg = makeSegment(100_000, 22);
    const ref = newRef();
    await storage.copySegment(ref, seg.files);
    await minio.pause();
    try {
      const started = Date.now();
      const err = await storage.fetchIndex(ref, 'offset').then(
        () => assert.fail('a frozen server cannot answer'),
        (e: unknown) => e as RemoteStorageError,
      );
      assert.ok(err instanceof RemoteTimeoutError, String(err));
      assert.equal(err.code, ErrorCode.REQUEST_TIMED_OUT);
      assert.ok(Date.now() - started < 5_000);

      const patient = new S3RemoteStorage(s3Options(prefix, { retry: { requestTimeoutMs: 60_000 } }));
      const controller = new AbortController();
      const pending = patient.fetchData(ref, 0, undefined, controller.signal);
      setImmediate(() => controller.abort(new Error('fetch.max.wait reached')));
      await assert.rejects(pending, (e: unknown) => e instanceof RemoteAbortedError && e.code === ErrorCode.REQUEST_TIMED_OUT);
      await patient.close();
    } finally {
      await minio.resume();
    }
    await storage.close();
    // A thawed server first works through what piled up: give it ordinary timeouts.
    const after = new S3RemoteStorage(s3Options(prefix));
    assert.deepEqual(await after.fetchIndex(ref, 'offset'), seg.indexes.offset, 'recovers once the server thaws');
    await after.close();
  });

  it('retries through a server crash and restart, and reports a lasting outage as a storage error', async () => {
    const prefix = 'crash/';
    const seg = makeSegment(50_000, 23);
    const ref = newRef();
    const writer = new S3RemoteStorage(s3Options(prefix));
    await writer.copySegment(ref, seg.files);
    await writer.close();

    await minio.kill('SIGKILL');
    const retries: number[] = [];
    const down = new S3RemoteStorage(
      s3Options(prefix, {
        retry: { maxAttempts: 3, initialBackoffMs: 1, maxBackoffMs: 1, requestTimeoutMs: 2_000 },
        transport: { onRetry: (r) => retries.push(r.attempt) },
      }),
    );
    const err = await down.fetchData(ref, 0).then(
      () => assert.fail('the server is down'),
      (e: unknown) => e as RemoteStorageError,
    );
    assert.equal(err.code, ErrorCode.KAFKA_STORAGE_ERROR);
    assert.match(err.message, /failed after 3 attempts/);
    assert.deepEqual(retries, [1, 2]);
    await down.close();

    // The first backoff brings the server back: the same request then succeeds.
    let restarted = false;
    const healing = new S3RemoteStorage(
      s3Options(prefix, {
        retry: { maxAttempts: 3, requestTimeoutMs: 5_000 },
        transport: {
          sleep: async () => {
            if (!restarted) {
              restarted = true;
              await minio.restart();
            }
          },
        },
      }),
    );
    assert.deepEqual(await healing.fetchData(ref, 0), seg.data);
    assert.ok(restarted);
    await healing.close();
  });
});

describe('createRemoteStorage with an s3:// URL', () => {
  it('reaches MinIO with rsm.config.* settings only', async () => {
    const { createRemoteStorage } = await import('../../../remote-log/storage-url.js');
    const storage = createRemoteStorage(`s3://${minio.bucket}/by-url`, {
      'rsm.config.s3.endpoint': minio.endpoint,
      'rsm.config.s3.region': minio.region,
      'rsm.config.s3.path.style.access': 'true',
      'rsm.config.s3.access.key.id': minio.accessKey,
      'rsm.config.s3.secret.access.key': minio.secretKey,
      'rsm.config.compression.enable': 'true',
    });
    try {
      const seg = makeSegment(3 * 1024 * 1024, 24);
      const ref = newRef();
      const result = await storage.copySegment(ref, seg.files);
      assert.equal(result.compression, 'zstd-chunked');
      assert.ok((await rawList(client, minio.bucket, 'by-url/')).includes(objectKey('by-url/', ref, 'manifest')));
      assert.deepEqual(await storage.fetchData(ref, 1024 * 1024 - 1, 2 * 1024 * 1024), seg.data.subarray(1024 * 1024 - 1, 2 * 1024 * 1024 + 1));
    } finally {
      await storage.close();
    }
  });
});
