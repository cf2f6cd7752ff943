// Reads below the local tier (DESIGN behaviours 2, 7, 8, 9, 12, 13).
import assert from 'node:assert/strict';
import { open } from 'node:fs/promises';
import { describe, it } from 'node:test';
import { crc32c } from '@node-rs/crc32';
import { pino } from 'pino';
import { ErrorCode, KafkaError } from '../../../broker/protocol/errors.js';
import { OFFSET_CRC, batchCrcValid, decodeRecordBatches, readBatchHeader } from '../../../broker/protocol/record-batch.js';
import type { PartitionLog } from '../../../broker/log/partition-log.js';
import type { MemoryRemoteStorage } from '../../../remote-log/memory/memory-remote-storage.js';
import { batchesVerifiedAtUpload } from '../../../remote-log/objects/copy-summary.js';
import { decodeManifest, encodeManifest } from '../../../remote-log/objects/manifest.js';
import { objectKey } from '../../../remote-log/objects/object-keys.js';
import { refOf } from '../../../remote-log/partition-state.js';
import {
  type Env,
  consumeAll,
  finishedSegments,
  makeEnv,
  offsetsOf,
  produce,
  readLocal,
  tpOf,
  until,
  valuesOf,
  bytesOf,
} from '../helpers.js';

async function withEnv(fn: (env: Env) => Promise<void>, options: Parameters<typeof makeEnv>[0] = {}): Promise<void> {
  const env = await makeEnv(options);
  try {
    await fn(env);
  } finally {
    await env.cleanup();
  }
}

/** Produces, tiers every closed segment and deletes the local copies; returns what the log held. */
async function tiered(env: Env, batches = 40, name = 'tiered', timestamp?: number): Promise<{ log: PartitionLog; expected: Buffer }> {
  const log = await env.openLog(name);
  await produce(log, batches, timestamp === undefined ? {} : { timestamp });
  const expected = await readLocal(log, 0n);
  await env.rlm.runPartition(log);
  await log.applyRetention(env.clock.now());
  assert.ok(log.localLogStartOffset > 0n && log.localLogStartOffset === log.activeSegment().baseOffset);
  return { log, expected };
}

const code = (c: number) => (e: unknown) => e instanceof KafkaError && e.code === c;

describe('remote reads', () => {
  it('a consumer from offset 0 reads every record, in order, byte-identical, across the tier boundary', () =>
    withEnv(async (env) => {
      const { log, expected } = await tiered(env);
      const got = await consumeAll(env.rlm, log, 0n);
      assert.equal(got.length, expected.length);
      assert.ok(got.equals(expected), 'byte-identical');
      assert.deepEqual(offsetsOf(got), Array.from({ length: Number(log.logEndOffset) }, (_, i) => BigInt(i)));
      assert.equal(env.rlm.logStartOffset(log), 0n);
    }));

  it('returns whole batches from the one holding the offset and crosses into the next remote segment while room remains', () =>
    withEnv(async (env) => {
      const { log, expected } = await tiered(env);
      const segs = finishedSegments(env.metadata, tpOf(log));
      // From the middle of a batch: that batch comes first.
      const mid = bytesOf(await env.rlm.read(log, 2n, 1 << 20, true));
      assert.equal(decodeRecordBatches(mid!)[0]!.header.baseOffset, 0n);
      // Everything remote in one read: it spans all remote segments and stops at the local tier.
      const offsets = offsetsOf(mid);
      assert.equal(offsets[offsets.length - 1], segs[segs.length - 1]!.end);
      assert.ok(mid!.equals(expected.subarray(0, mid!.length)));
      // A read starting in the second segment.
      const second = bytesOf(await env.rlm.read(log, segs[1]!.start + 1n, 1 << 20, true));
      assert.equal(offsetsOf(second)[0], segs[1]!.start);
    }));

  it('honours maxBytes and minOneBatch', () =>
    withEnv(async (env) => {
      const { log } = await tiered(env);
      assert.equal(bytesOf(await env.rlm.read(log, 0n, 10, false)), null, 'no batch fits in 10 bytes');
      const one = bytesOf(await env.rlm.read(log, 0n, 10, true));
      assert.equal(decodeRecordBatches(one!).length, 1, 'minOneBatch: the first batch whatever its size');
      const batchSize = one!.length;
      const two = bytesOf(await env.rlm.read(log, 0n, batchSize * 2 + 10, false));
      assert.equal(decodeRecordBatches(two!).length, 2);
      // Crossing a segment boundary respects maxBytes too.
      const segs = finishedSegments(env.metadata, tpOf(log));
      const nearEnd = segs[0]!.end;
      const across = bytesOf(await env.rlm.read(log, nearEnd, batchSize * 2, false));
      assert.deepEqual(decodeRecordBatches(across!).map((b) => b.header.baseOffset), [nearEnd - 4n, segs[1]!.start]);
    }));

  it('an offset below the remote log start, or in no finished segment, is OFFSET_OUT_OF_RANGE', () =>
    withEnv(async (env) => {
      const log = await env.openLog();
      await produce(log, 20);
      await assert.rejects(env.rlm.read(log, 0n, 1000, true), code(ErrorCode.OFFSET_OUT_OF_RANGE), 'nothing is remote yet');
    }));

  it('never serves a segment whose copy has not finished', () =>
    withEnv(async (env) => {
      const log = await env.openLog();
      const tp = tpOf(log);
      await produce(log, 20);
      // The copy uploads everything, manifest included, then hangs before COPY_SEGMENT_FINISHED.
      env.faulty.beforeCopyFailure = async (ref, files) => {
        await env.storage.copySegment(ref, files);
      };
      env.faulty.set('hang', 'copy');
      const run = env.rlm.runPartition(log);
      await until(() => env.faulty.hangingCalls === 1, 'the copy to hang');
      const [started] = env.metadata.listRemoteLogSegments(tp);
      assert.equal(started!.state, 'COPY_SEGMENT_STARTED');
      assert.equal((await env.storage.listSegments())[0]!.hasManifest, true);
      assert.equal(env.metadata.remoteLogSegmentMetadata(tp, 0, 0n), undefined);
      await assert.rejects(env.rlm.read(log, 0n, 1000, true), code(ErrorCode.OFFSET_OUT_OF_RANGE));
      assert.equal(env.rlm.logStartOffset(log), null);
      assert.equal(env.rlm.highestRemoteOffset(log), -1n);
      env.faulty.release();
      await run;
      assert.deepEqual(await env.storage.listSegments(), []);
    }));

  it('a slow remote read answers empty after remote.fetch.max.wait.ms while another partition answers', () =>
    withEnv(async (env) => {
      const a = await tiered(env, 30, 'slow');
      const b = await tiered(env, 30, 'fast');
      env.faulty.only = (ref) => ref.topic === 'slow';
      env.faulty.set('hang', 'fetchData', 'fetchIndex');
      const slow = env.rlm.read(a.log, 0n, 4096, true);
      const fast = bytesOf(await env.rlm.read(b.log, 0n, 4096, true));
      assert.ok(fast !== null && fast.equals(b.expected.subarray(0, fast.length)), 'the other partition answers');
      let settled = false;
      void slow.then(() => (settled = true));
      await new Promise((r) => setImmediate(r));
      assert.equal(settled, false, 'still waiting on the store');
      env.clock.advance(499);
      await new Promise((r) => setImmediate(r));
      assert.equal(settled, false);
      env.clock.advance(1);
      assert.equal(await slow, null, 'empty for the slow partition');
      // The store recovers: the same read succeeds.
      env.faulty.release();
      env.faulty.set('ok');
      await new Promise((r) => setImmediate(r));
      const again = bytesOf(await env.rlm.read(a.log, 0n, 4096, true));
      assert.ok(again !== null && again.equals(a.expected.subarray(0, again.length)));
    }));

  it('a caller abort ends the read at once with no records', () =>
    withEnv(async (env) => {
      const { log } = await tiered(env, 20);
      env.faulty.set('hang', 'fetchData', 'fetchIndex');
      const controller = new AbortController();
      const p = env.rlm.read(log, 0n, 4096, true, controller.signal);
      controller.abort();
      assert.equal(await p, null);
      env.faulty.release();
    }));

  it('a store failure is a retriable KAFKA_STORAGE_ERROR, and reads recover with the store', () =>
    withEnv(async (env) => {
      const { log, expected } = await tiered(env, 20);
      env.faulty.set('fail', 'fetchData', 'fetchIndex');
      await assert.rejects(env.rlm.read(log, 0n, 4096, true), code(ErrorCode.KAFKA_STORAGE_ERROR));
      env.faulty.set('ok');
      const r = bytesOf(await env.rlm.read(log, 0n, 4096, true));
      assert.ok(r!.equals(expected.subarray(0, r!.length)));
    }));

  it('a corrupted object (stored chunk CRC) is CORRUPT_MESSAGE, never served', () =>
    withEnv(async (env) => {
      const { log } = await tiered(env, 20);
      const tp = tpOf(log);
      const seg = env.metadata.listRemoteLogSegments(tp)[0]!;
      const ref = { topic: tp.topic, topicId: tp.topicId, partition: 0, baseOffset: seg.startOffset, segmentId: seg.remoteLogSegmentId.id };
      const memory = env.storage as MemoryRemoteStorage;
      const key = objectKey('', ref, 'log');
      const bytes = memory.store.peek(key)!;
      bytes[200] = bytes[200]! ^ 0xff;
      memory.store.poke(key, bytes);
      await assert.rejects(env.rlm.read(log, 0n, 4096, true), code(ErrorCode.CORRUPT_MESSAGE));
    }));

  it('a batch that fails its own CRC (corrupted before upload) is CORRUPT_MESSAGE, never served', async () => {
    const warnings: Array<Record<string, unknown>> = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(JSON.parse(line) as Record<string, unknown>) });
    await withEnv(
      async (env) => {
        const log = await env.openLog();
        await produce(log, 20);
        // Flip a byte inside the first batch's records on disk, behind the log's back.
        const fh = await open(log.closedSegments()[0]!.files.log, 'r+');
        const b = Buffer.alloc(1);
        await fh.read(b, 0, 1, 100);
        b[0] = b[0]! ^ 0x01;
        await fh.write(b, 0, 1, 100);
        await fh.close();
        await env.rlm.runPartition(log);
        await log.applyRetention(env.clock.now());
        // The copy went ahead, flagged: that segment's reads check every batch.
        const segments = env.metadata.listRemoteLogSegments(tpOf(log));
        assert.deepEqual(
          segments.map((s) => batchesVerifiedAtUpload(s.customMetadata)),
          segments.map((_, i) => i !== 0),
        );
        const warning = warnings.find((w) => w['segmentId'] === segments[0]!.remoteLogSegmentId.id);
        assert.ok(warning !== undefined, `a warning names the segment: ${JSON.stringify(warnings)}`);
        assert.equal(warning['position'], 0);
        assert.match(String(warning['problem']), /crc32c/);
        await assert.rejects(env.rlm.read(log, 0n, 4096, true), code(ErrorCode.CORRUPT_MESSAGE));
        // Batches of other segments are still served.
        const segs = finishedSegments(env.metadata, tpOf(log));
        const ok = bytesOf(await env.rlm.read(log, segs[1]!.start, 4096, true));
        assert.ok(valuesOf(ok).length > 0);
      },
      { logger },
    );
  });

  it('a segment verified at upload is read on its chunk CRCs alone: corrupted storage is still refused', () =>
    withEnv(async (env) => {
      const { log, expected } = await tiered(env, 20);
      const seg = env.metadata.listRemoteLogSegments(tpOf(log))[0]!;
      assert.equal(batchesVerifiedAtUpload(seg.customMetadata), true);
      const ref = refOf(seg);
      const memory = env.storage as MemoryRemoteStorage;
      const dataKey = objectKey('', ref, 'log');
      const manifestKey = objectKey('', ref, 'manifest');
      // Only the first batch's CRC field changes: the stored chunk's CRC no longer matches.
      const bytes = memory.store.peek(dataKey)!;
      bytes[OFFSET_CRC] = bytes[OFFSET_CRC]! ^ 0x10;
      memory.store.poke(dataKey, bytes);
      await assert.rejects(env.rlm.read(log, 0n, 4096, true), code(ErrorCode.CORRUPT_MESSAGE));
      // Rewrite the manifest to vouch for the tampered chunk: now only a per-batch check could notice, and
      // none runs (the upload verified the batches), so the tampered batch comes back as stored.
      const manifest = decodeManifest(memory.store.peek(manifestKey)!);
      const size = manifest.data.chunkSize;
      const chunkCrcs = manifest.data.chunkCrcs.map((c, i) => (i === 0 ? crc32c(bytes.subarray(0, Math.min(size, bytes.length))) : c));
      memory.store.poke(manifestKey, encodeManifest({ ...manifest, data: { ...manifest.data, chunkCrcs } }));
      memory.clearManifestCache();
      const got = bytesOf(await env.rlm.read(log, 0n, bytes.length, true));
      assert.ok(got !== null && got.equals(bytes), 'the whole tampered segment');
      assert.ok(!got.equals(expected.subarray(0, got.length)));
      assert.equal(batchCrcValid(got, 0, readBatchHeader(got, 0)), false, 'the batch check was skipped');
    }));

  it('offset-for-timestamp lookups use the remote time index', () =>
    withEnv(async (env) => {
      const t0 = 1_700_000_000_000;
      const { log } = await tiered(env, 40, 'tiered', t0);
      const localStart = log.localLogStartOffset;
      // Record at offset o has timestamp t0 + o.
      for (const o of [0n, 1n, 7n, 33n, localStart - 1n]) {
        const r = await env.rlm.offsetForTimestamp(log, BigInt(t0) + o);
        assert.deepEqual(r, { offset: o, timestamp: BigInt(t0) + o, leaderEpoch: 0 }, `timestamp of offset ${o}`);
      }
      assert.deepEqual(await env.rlm.offsetForTimestamp(log, 0n), { offset: 0n, timestamp: BigInt(t0), leaderEpoch: 0 });
      assert.equal(await env.rlm.offsetForTimestamp(log, BigInt(t0) + localStart), null, 'the local tier answers above it');
      assert.deepEqual(await log.offsetForTimestamp(BigInt(t0) + localStart), { offset: localStart, timestamp: BigInt(t0) + localStart, leaderEpoch: 0 });
    }));

  it('the chunk and index caches stay within their byte limits', () =>
    withEnv(
      async (env) => {
        const { log, expected } = await tiered(env, 80);
        for (let pass = 0; pass < 2; pass++) {
          const got = await consumeAll(env.rlm, log, 0n, 700);
          assert.ok(got.equals(expected));
          const { chunks, indexes } = env.rlm.cacheStats();
          assert.ok(chunks.bytes <= 3 * 4096, `chunk cache ${chunks.bytes} bytes`);
          assert.ok(indexes.bytes <= 200, `index cache ${indexes.bytes} bytes`);
          assert.ok(chunks.evictions > 0 && indexes.evictions > 0);
        }
      },
      { config: { chunkCacheBytes: 3 * 4096, indexCacheBytes: 200 } },
    ));

  it('a second sequential read is served from the chunk cache (read-ahead)', () =>
    withEnv(async (env) => {
      const { log, expected } = await tiered(env, 40);
      await consumeAll(env.rlm, log, 0n, 700);
      const fetchesAfterCold = env.rlm.cacheStats().chunks.fetches;
      const got = await consumeAll(env.rlm, log, 0n, 700);
      assert.ok(got.equals(expected));
      const warm = env.rlm.cacheStats().chunks;
      assert.equal(warm.fetches, fetchesAfterCold, 'no GET on the warm pass');
      assert.ok(warm.hits > 0);
    }));

  it('throttles remote reads to remote.log.manager.fetch.max.bytes.per.second', () =>
    withEnv(
      async (env) => {
        const { log } = await tiered(env, 20);
        const first = bytesOf(await env.rlm.read(log, 0n, 3000, true));
        assert.ok(first!.length > 1000);
        // The bucket is in debt: the next read waits for the clock, and the deadline ends it empty.
        const second = env.rlm.read(log, 0n, 3000, true);
        env.clock.advance(500);
        assert.equal(await second, null);
        env.clock.advance(5000);
        assert.ok((bytesOf(await env.rlm.read(log, 0n, 3000, true))) !== null);
      },
      { config: { fetchBytesPerSec: 1000 } },
    ));
});
