import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { ErrorCode } from '../../broker/protocol/errors.js';
import { FileSystemRemoteStorage } from '../../remote-log/filesystem/filesystem-remote-storage.js';
import { MemoryRemoteStorage } from '../../remote-log/memory/memory-remote-storage.js';
import { S3RemoteStorage } from '../../remote-log/s3/s3-remote-storage.js';
import {
  RemoteStorageConfigError,
  createRemoteStorage,
  parseRsmConfig,
  parseStorageUrl,
} from '../../remote-log/storage-url.js';
import { makeSegment, newRef } from './remote-storage.contract.js';

describe('parseStorageUrl', () => {
  it('reads the three schemes', () => {
    assert.deepEqual(parseStorageUrl('memory://'), { scheme: 'memory' });
    assert.deepEqual(parseStorageUrl('file:///var/lib/sediment/remote'), { scheme: 'file', root: '/var/lib/sediment/remote' });
    assert.deepEqual(parseStorageUrl('file:sediment-data/remote', '/home/me'), { scheme: 'file', root: '/home/me/sediment-data/remote' });
    assert.deepEqual(parseStorageUrl('file:///tmp/a%20b'), { scheme: 'file', root: '/tmp/a b' });
    assert.deepEqual(parseStorageUrl('s3://my-bucket'), { scheme: 's3', bucket: 'my-bucket', prefix: '' });
    assert.deepEqual(parseStorageUrl('s3://my-bucket/'), { scheme: 's3', bucket: 'my-bucket', prefix: '' });
    assert.deepEqual(parseStorageUrl('s3://my.bucket/tiered/prod'), { scheme: 's3', bucket: 'my.bucket', prefix: 'tiered/prod/' });
  });

  it('refuses what it cannot use, naming the setting', () => {
    for (const url of ['', 'http://x', 'file://host/path', 's3://', 's3://Upper/x', 's3://a', 's3://b/p?x=1', 'gs://b']) {
      assert.throws(() => parseStorageUrl(url), (e: unknown) => e instanceof RemoteStorageConfigError && /remote\.log\.storage\.url/.test(e.message), url);
    }
  });
});

describe('parseRsmConfig', () => {
  it('has documented defaults', () => {
    const c = parseRsmConfig({});
    assert.equal(c.chunkSizeBytes, 1024 * 1024);
    assert.equal(c.compressionEnable, false);
    assert.equal(c.s3.partSizeBytes, 8 * 1024 * 1024);
    assert.equal(c.s3.region, 'us-east-1');
    assert.equal(c.s3.accessKeyId, undefined);
    assert.equal(c.chunkCachePrefetchChunks, 8);
    assert.equal(c.chunkCacheFetchChunks, 8);
    assert.equal(c.fetchWorkerThreads, 1);
    assert.equal(c.fetchWorkerNice, 0);
    assert.equal(c.copyWorkerThreads, 1);
    assert.equal(c.copyWorkerNice, 10);
    assert.equal(c.chunkCacheReuseEnable, false);
    assert.equal(c.s3.readHttpHandler, 'direct');
  });

  it('reads values and ignores keys outside rsm.config.', () => {
    const c = parseRsmConfig({
      'rsm.config.s3.endpoint': 'http://127.0.0.1:9000',
      'rsm.config.s3.path.style.access': 'TRUE',
      'rsm.config.s3.access.key.id': 'ak',
      'rsm.config.s3.secret.access.key': 'sk',
      'rsm.config.compression.enable': 'true',
      'rsm.config.chunk.size.bytes': '65536',
      'rsm.config.chunk.cache.fetch.chunks': '4',
      'rsm.config.fetch.worker.threads': '2',
      'rsm.config.copy.worker.threads': '0',
      'rsm.config.s3.read.http.handler': 'node-http',
      'log.dirs': '/x',
    });
    assert.equal(c.s3.readHttpHandler, 'node-http');
    assert.equal(c.chunkCacheFetchChunks, 4);
    assert.equal(c.fetchWorkerThreads, 2);
    assert.equal(c.copyWorkerThreads, 0);
    assert.equal(c.s3.endpoint, 'http://127.0.0.1:9000');
    assert.equal(c.s3.pathStyleAccess, true);
    assert.equal(c.s3.accessKeyId, 'ak');
    assert.equal(c.compressionEnable, true);
    assert.equal(c.chunkSizeBytes, 65536);
  });

  it('refuses bad values with errors naming the key', () => {
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{ 'rsm.config.s3.part.size.bytes': '1000' }, /rsm\.config\.s3\.part\.size\.bytes: 1000 is outside/],
      [{ 'rsm.config.chunk.size.bytes': '1MB' }, /rsm\.config\.chunk\.size\.bytes: not an integer/],
      [{ 'rsm.config.compression.enable': 'yes' }, /rsm\.config\.compression\.enable: want true or false/],
      [{ 'rsm.config.s3.endpont': 'x' }, /unknown setting rsm\.config\.s3\.endpont/],
      [{ 'rsm.config.s3.access.key.id': 'ak' }, /go together/],
      [{ 'rsm.config.chunk.cache.fetch.chunks': '0' }, /rsm\.config\.chunk\.cache\.fetch\.chunks: 0 is outside/],
      [{ 'rsm.config.copy.worker.threads': '-1' }, /rsm\.config\.copy\.worker\.threads: -1 is outside/],
      [{ 'rsm.config.copy.worker.nice': '20' }, /rsm\.config\.copy\.worker\.nice: 20 is outside/],
      [{ 'rsm.config.s3.endpoint': '127.0.0.1:9000' }, /rsm\.config\.s3\.endpoint: want http/],
      [{ 'rsm.config.s3.read.http.handler': 'undici' }, /rsm\.config\.s3\.read\.http\.handler: want one of direct, node-http/],
      [{ 'rsm.config.s3.retry.backoff.ms': '500', 'rsm.config.s3.retry.backoff.max.ms': '100' }, /backoff\.max\.ms/],
    ];
    for (const [raw, re] of cases) {
      assert.throws(() => parseRsmConfig(raw), (e: unknown) => e instanceof RemoteStorageConfigError && e.code === ErrorCode.INVALID_CONFIG && re.test(e.message), re.source);
    }
  });
});

describe('createRemoteStorage', () => {
  it('builds each backend with its settings', async () => {
    const mem = createRemoteStorage('memory://', { 'rsm.config.chunk.size.bytes': '8192', 'rsm.config.compression.enable': 'true' });
    assert.ok(mem instanceof MemoryRemoteStorage);
    assert.equal(mem.chunkSize, 8192);
    assert.equal(mem.compression, true);
    const ref = newRef();
    const seg = makeSegment(50_000, 1);
    assert.equal((await mem.copySegment(ref, seg.files)).compression, 'zstd-chunked');
    assert.deepEqual(await mem.fetchData(ref, 9000, 20000), seg.data.subarray(9000, 20001));

    const dir = await mkdtemp(path.join(tmpdir(), 'sediment-url-'));
    try {
      const fs = createRemoteStorage(`file://${dir}`, {});
      assert.ok(fs instanceof FileSystemRemoteStorage);
      assert.equal(fs.store.root, dir);
      await fs.copySegment(ref, seg.files);
      assert.deepEqual(await fs.fetchData(ref, 0), seg.data);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }

    const s3 = createRemoteStorage('s3://bucket-x/tiered', {
      'rsm.config.s3.endpoint': 'http://127.0.0.1:9',
      'rsm.config.s3.multipart.threshold.bytes': '10485760',
      'rsm.config.s3.part.size.bytes': '5242880',
      'rsm.config.s3.upload.concurrency': '2',
    });
    assert.ok(s3 instanceof S3RemoteStorage);
    assert.equal(s3.prefix, 'tiered/');
    assert.equal(s3.store.bucket, 'bucket-x');
    assert.equal(s3.store.multipartThresholdBytes, 10485760);
    assert.equal(s3.store.partSizeBytes, 5242880);
    assert.equal(s3.store.uploadConcurrency, 2);
    await s3.close();
  });
});
