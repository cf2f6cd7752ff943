// Objects without a finished record (DESIGN behaviour 3).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { randomUuid } from '../../../metadata/uuid.js';
import type { RemoteSegmentRef } from '../../../remote-log/remote-storage.js';
import { type Env, finishedSegments, makeEnv, produce, tpOf, until } from '../helpers.js';

async function withEnv(fn: (env: Env) => Promise<void>): Promise<void> {
  const env = await makeEnv({ config: { orphanGraceMs: 60_000, orphanSweepIntervalMs: 10_000 } });
  try {
    await fn(env);
  } finally {
    await env.cleanup();
  }
}

async function writeOrphan(env: Env, ref: RemoteSegmentRef): Promise<void> {
  const empty = Buffer.alloc(0);
  await env.storage.copySegment(ref, { data: Buffer.from('orphan'), offsetIndex: empty, timeIndex: empty, producerSnapshot: empty, leaderEpochCheckpoint: empty });
}

const idsIn = async (env: Env): Promise<string[]> => (await env.storage.listSegments()).map((l) => l.ref.segmentId).sort();

describe('orphan sweeper', () => {
  it('deletes objects with no record once older than the grace period, and keeps finished segments', () =>
    withEnv(async (env) => {
      const log = await env.openLog();
      const tp = tpOf(log);
      await produce(log, 20);
      await env.rlm.runPartition(log);
      const finished = finishedSegments(env.metadata, tp).map((s) => s.id);
      const orphan = { topic: tp.topic, topicId: tp.topicId, partition: 0, baseOffset: 3n, segmentId: randomUuid() };
      await writeOrphan(env, orphan);

      env.clock.advance(30_000);
      await env.rlm.runPartition(log);
      assert.ok((await idsIn(env)).includes(orphan.segmentId), 'too young to be swept');

      env.clock.advance(31_000);
      await env.rlm.runPartition(log);
      assert.deepEqual(await idsIn(env), [...finished].sort());
      assert.equal(env.rlm.partitionStats(log)?.orphansDeleted, 1);
    }));

  it('sweeps partitions nobody runs: unrecorded objects and dead copies go, finished segments stay', () =>
    withEnv(async (env) => {
      const log = await env.openLog('gone');
      const tp = tpOf(log);
      await produce(log, 20);
      // One finished segment, then a copy that dies half way.
      env.faulty.only = (ref) => ref.baseOffset > 0n;
      env.faulty.beforeCopyFailure = async (ref, files) => {
        await env.storage.copySegment(ref, files);
      };
      env.faulty.set('hang', 'copy');
      void env.rlm.runPartition(log);
      await until(() => env.faulty.hangingCalls === 1, 'the second copy to hang');
      const before = env.metadata.listRemoteLogSegments(tp);
      assert.deepEqual(before.map((s) => s.state), ['COPY_SEGMENT_FINISHED', 'COPY_SEGMENT_STARTED']);
      // The partition leaves this broker: its copy is aborted and left STARTED.
      await env.rlm.onPartitionRemoved(log);
      env.faulty.set('ok');
      assert.deepEqual(env.metadata.listRemoteLogSegments(tp).map((s) => s.state), ['COPY_SEGMENT_FINISHED', 'COPY_SEGMENT_STARTED']);
      // A stray unrecorded object of another, unknown partition.
      const stray = { topic: 'ghost', topicId: randomUuid(), partition: 2, baseOffset: 0n, segmentId: randomUuid() };
      await writeOrphan(env, stray);

      env.clock.advance(61_000);
      await env.rlm.runOnce();
      const left = await env.storage.listSegments();
      assert.deepEqual(left.map((l) => l.ref.segmentId), [before[0]!.remoteLogSegmentId.id], 'the finished segment of an unloaded partition is kept');
      assert.deepEqual(env.metadata.listRemoteLogSegments(tp).map((s) => s.state), ['COPY_SEGMENT_FINISHED']);
    }));
});
