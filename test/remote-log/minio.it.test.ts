// The RemoteLogManager on S3RemoteStorage against a real MinIO server: the
// tiering scenario (the `minio` npm client lists what the broker wrote), then
// faults: MinIO killed during copies, and frozen (SIGSTOP) during a remote read.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { Client } from 'minio';
import { S3RemoteStorage } from '../../remote-log/s3/s3-remote-storage.js';
import { startMinio, type MinioServer } from '../support/minio.js';
import { CHUNK_SIZE, consumeAll, finishedSegments, makeEnv, produce, readLocal, tpOf } from './helpers.js';
import { tieringScenario } from './scenario.js';

let minio: MinioServer;
let client: Client;

before(async () => {
  minio = await startMinio();
  client = minio.client();
});
after(async () => {
  await minio?.stop();
});

function s3Storage(prefix: string): S3RemoteStorage {
  return new S3RemoteStorage({
    bucket: minio.bucket,
    endpoint: minio.endpoint,
    region: minio.region,
    forcePathStyle: true,
    credentials: { accessKeyId: minio.accessKey, secretAccessKey: minio.secretKey },
    prefix,
    chunkSize: CHUNK_SIZE,
    retry: { maxAttempts: 2, initialBackoffMs: 10, maxBackoffMs: 20, requestTimeoutMs: 3000 },
  });
}

async function keysUnder(prefix: string): Promise<string[]> {
  const out: string[] = [];
  for await (const o of client.listObjectsV2(minio.bucket, prefix, true)) {
    const name = (o as { name?: string }).name;
    if (name !== undefined) out.push(name);
  }
  return out;
}

describe('RemoteLogManager on MinIO', () => {
  it('runs the tiering scenario', async () => {
    const prefix = `rlm-${randomBytes(4).toString('hex')}/`;
    await tieringScenario({ storage: () => s3Storage(prefix), inspect: () => keysUnder(prefix), compression: 'none' });
  });

  it('MinIO killed during copies: local data stays, nothing is lost, copying catches up after restart', async () => {
    const prefix = `rlm-kill-${randomBytes(4).toString('hex')}/`;
    const env = await makeEnv({ storage: () => s3Storage(prefix) });
    try {
      const log = await env.openLog();
      await produce(log, 30);
      await minio.kill('SIGKILL');
      await env.rlm.runPartition(log);
      assert.ok(env.rlm.lastError(log) !== undefined);
      assert.equal(env.rlm.highestRemoteOffset(log), -1n);
      assert.equal((await log.applyRetention(env.clock.now())).deletedSegments, 0, 'nothing local deleted while the store is down');
      await produce(log, 10);
      const expected = await readLocal(log, 0n);

      await minio.restart();
      await env.rlm.runPartition(log);
      assert.equal(env.rlm.lastError(log), undefined);
      assert.equal(env.rlm.highestRemoteOffset(log), log.activeSegment().baseOffset - 1n);
      await log.applyRetention(env.clock.now());
      assert.ok((await consumeAll(env.rlm, log, 0n)).equals(expected));
      // Only finished segments are in the bucket: the failed attempts left nothing.
      const ids = new Set(finishedSegments(env.metadata, tpOf(log)).map((s) => s.id));
      const keys = await keysUnder(prefix);
      assert.ok(keys.length > 0 && keys.every((k) => [...ids].some((id) => k.includes(id))));
    } finally {
      await env.cleanup();
    }
  });

  it('MinIO frozen during a remote read: the read answers empty after remote.fetch.max.wait.ms, then recovers', async () => {
    const prefix = `rlm-freeze-${randomBytes(4).toString('hex')}/`;
    const env = await makeEnv({ storage: () => s3Storage(prefix) });
    try {
      const log = await env.openLog();
      await produce(log, 30);
      const expected = await readLocal(log, 0n);
      await env.rlm.runPartition(log);
      await log.applyRetention(env.clock.now());
      await minio.pause();
      try {
        const read = env.rlm.read(log, 0n, 4096, true);
        env.clock.advance(500);
        assert.equal(await read, null);
      } finally {
        await minio.resume();
      }
      const got = await consumeAll(env.rlm, log, 0n);
      assert.ok(got.equals(expected));
    } finally {
      await env.cleanup();
    }
  });
});
