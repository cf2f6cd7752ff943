// Objects without a finished record (DESIGN behaviour 3), found by sweeps that
// list only what is new (remote-log/tasks/orphan-sweeper.ts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { randomUuid } from '../../../metadata/uuid.js';
import type { TopicIdPartition } from '../../../metadata/remote-log-metadata/types.js';
import { afterBaseOffset, partitionPrefix } from '../../../remote-log/objects/object-keys.js';
import type { RemoteLogManagerConfig } from '../../../remote-log/remote-log-manager.js';
import type { RemoteSegmentRef } from '../../../remote-log/remote-storage.js';
import { type Env, finishedSegments, makeEnv, produce, tpOf, until } from '../helpers.js';

const GRACE_MS = 60_000;
const SWEEP_MS = 10_000;
const FULL_MS = 3_600_000;

async function withEnv(fn: (env: Env) => Promise<void>, config: Partial<RemoteLogManagerConfig> = {}): Promise<void> {
  const env = await makeEnv({ config: { orphanGraceMs: GRACE_MS, orphanSweepIntervalMs: SWEEP_MS, orphanFullSweepIntervalMs: FULL_MS, ...config } });
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
const orphanAt = (tp: TopicIdPartition, baseOffset: bigint): RemoteSegmentRef => ({ ...tp, baseOffset, segmentId: randomUuid() });
const highestFinishedBase = (env: Env, tp: TopicIdPartition): bigint => finishedSegments(env.metadata, tp).at(-1)!.start;
/** The listings of one partition's prefix since `from` (index into the log of listings). */
const partitionListings = (env: Env, tp: TopicIdPartition, from = 0): Array<string | undefined> =>
  env.faulty.listings.slice(from).filter((l) => l.prefix === partitionPrefix('', tp.topic, tp.topicId, tp.partition)).map((l) => l.startAfter);

describe('orphan sweeper', () => {
  it('lists the whole prefix once, then only after the highest finished segment; an unrecorded object there goes once older than the grace period', () =>
    withEnv(async (env) => {
      const log = await env.openLog();
      const tp = tpOf(log);
      await produce(log, 20);
      await env.rlm.runPartition(log);
      const finished = finishedSegments(env.metadata, tp).map((s) => s.id);
      assert.ok(finished.length >= 2);
      const h = highestFinishedBase(env, tp);
      assert.deepEqual(partitionListings(env, tp), [undefined], 'the first sweep after start lists everything');

      // Unrecorded objects past the finished ones (a STARTED record lost in a crash).
      const orphan = orphanAt(tp, h + 1000n);
      await writeOrphan(env, orphan);
      env.clock.advance(SWEEP_MS);
      await env.rlm.runPartition(log);
      assert.ok((await idsIn(env)).includes(orphan.segmentId), 'too young to be swept');
      env.clock.advance(GRACE_MS);
      await env.rlm.runPartition(log);
      assert.deepEqual(await idsIn(env), [...finished].sort());
      const stats = env.rlm.partitionStats(log)!;
      assert.equal(stats.orphansDeleted, 1);
      assert.equal(stats.orphanSweeps, 3);
      assert.equal(stats.orphanFullSweeps, 1);
      const after = afterBaseOffset('', tp.topic, tp.topicId, tp.partition, h);
      assert.deepEqual(partitionListings(env, tp), [undefined, after, after]);
    }));

  it('new segments move the cursor; a sweep not yet due lists nothing', () =>
    withEnv(async (env) => {
      const log = await env.openLog();
      const tp = tpOf(log);
      await produce(log, 10);
      await env.rlm.runPartition(log);
      const h1 = highestFinishedBase(env, tp);
      await produce(log, 10);
      env.clock.advance(SWEEP_MS - 1);
      await env.rlm.runPartition(log);
      assert.equal(partitionListings(env, tp).length, 1, 'not due yet');
      const h2 = highestFinishedBase(env, tp);
      assert.ok(h2 > h1, 'more segments were copied');
      env.clock.advance(1);
      await env.rlm.runPartition(log);
      env.clock.advance(SWEEP_MS);
      await env.rlm.runPartition(log);
      assert.deepEqual(partitionListings(env, tp), [
        undefined,
        afterBaseOffset('', tp.topic, tp.topicId, tp.partition, h1),
        afterBaseOffset('', tp.topic, tp.topicId, tp.partition, h2),
      ]);
    }));

  it('a young unrecorded object below the finished segments holds the cursor below it until it is swept', () =>
    withEnv(async (env) => {
      const log = await env.openLog();
      const tp = tpOf(log);
      // Left by an earlier process: objects of offset 3 that no record names.
      const orphan = orphanAt(tp, 3n);
      await writeOrphan(env, orphan);
      await produce(log, 20);
      await env.rlm.runPartition(log);
      const h = highestFinishedBase(env, tp);
      assert.ok(h > 3n);
      env.clock.advance(SWEEP_MS);
      await env.rlm.runPartition(log);
      assert.ok((await idsIn(env)).includes(orphan.segmentId), 'too young to be swept');
      env.clock.advance(GRACE_MS);
      await env.rlm.runPartition(log);
      assert.ok(!(await idsIn(env)).includes(orphan.segmentId), 'swept once old enough');
      env.clock.advance(SWEEP_MS);
      await env.rlm.runPartition(log);
      const at = (o: bigint): string => afterBaseOffset('', tp.topic, tp.topicId, tp.partition, o);
      assert.deepEqual(partitionListings(env, tp), [undefined, at(2n), at(2n), at(h)]);
      assert.equal(env.rlm.partitionStats(log)?.orphansDeleted, 1);
    }));

  it('an unrecorded object written below the cursor (a second writer) is found by the next full sweep, not before', () =>
    withEnv(async (env) => {
      const log = await env.openLog();
      const tp = tpOf(log);
      await produce(log, 20);
      await env.rlm.runPartition(log);
      const orphan = orphanAt(tp, 3n);
      await writeOrphan(env, orphan);
      const sweepsToFull = FULL_MS / SWEEP_MS;
      for (let i = 1; i < sweepsToFull; i++) {
        env.clock.advance(SWEEP_MS);
        await env.rlm.runPartition(log);
      }
      assert.ok((await idsIn(env)).includes(orphan.segmentId), 'below the cursor: incremental sweeps do not see it');
      env.clock.advance(SWEEP_MS);
      await env.rlm.runPartition(log);
      assert.ok(!(await idsIn(env)).includes(orphan.segmentId), 'the full sweep deleted it');
      const stats = env.rlm.partitionStats(log)!;
      assert.equal(stats.orphanSweeps, sweepsToFull + 1);
      assert.equal(stats.orphanFullSweeps, 2);
      assert.equal(partitionListings(env, tp).filter((s) => s === undefined).length, 2);
    }));

  it('sweeps partitions nobody runs: unrecorded objects and dead copies go, finished segments stay; later sweeps list only what needs it', () =>
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
      const ghost: TopicIdPartition = { topic: 'ghost', topicId: randomUuid(), partition: 2 };
      await writeOrphan(env, orphanAt(ghost, 0n));
      // And a young one of a third, which must be looked at again.
      const late: TopicIdPartition = { topic: 'late', topicId: randomUuid(), partition: 0 };
      env.clock.advance(GRACE_MS + 1000);
      const lateOrphan = orphanAt(late, 7n);
      await writeOrphan(env, lateOrphan);

      const listed = env.faulty.listings.length;
      await env.rlm.runOnce();
      const left = await env.storage.listSegments();
      assert.deepEqual(
        left.map((l) => l.ref.segmentId).sort(),
        [before[0]!.remoteLogSegmentId.id, lateOrphan.segmentId].sort(),
        'the finished segment of an unloaded partition is kept, the young orphan too',
      );
      assert.deepEqual(env.metadata.listRemoteLogSegments(tp).map((s) => s.state), ['COPY_SEGMENT_FINISHED']);
      assert.deepEqual(env.faulty.listings.slice(listed), [{ prefix: '', startAfter: undefined }], 'one LIST of the bucket');

      // Within the full interval: only the partition holding a young orphan is listed again.
      env.clock.advance(SWEEP_MS);
      const listed2 = env.faulty.listings.length;
      await env.rlm.runOnce();
      assert.deepEqual(env.faulty.listings.slice(listed2), [{ prefix: partitionPrefix('', late.topic, late.topicId, late.partition), startAfter: undefined }]);
      env.clock.advance(GRACE_MS);
      await env.rlm.runOnce();
      assert.ok(!(await idsIn(env)).includes(lateOrphan.segmentId), 'swept once old enough');
      const listed3 = env.faulty.listings.length;
      env.clock.advance(SWEEP_MS);
      await env.rlm.runOnce();
      assert.deepEqual(env.faulty.listings.slice(listed3), [], 'nothing left to look at until the next full sweep');
      env.clock.advance(FULL_MS);
      await env.rlm.runOnce();
      assert.deepEqual(env.faulty.listings.slice(listed3), [{ prefix: '', startAfter: undefined }]);
    }));

  it('a partition deletion that failed is retried by the next sweep without listing the bucket', () =>
    withEnv(async (env) => {
      const log = await env.openLog('doomed');
      const tp = tpOf(log);
      await produce(log, 20);
      await env.rlm.runOnce();
      assert.ok(finishedSegments(env.metadata, tp).length > 0);
      env.faulty.set('fail', 'delete');
      await assert.rejects(env.rlm.deletePartitionData(tp));
      assert.ok((await env.storage.listSegments(partitionPrefix('', tp.topic, tp.topicId, tp.partition))).length > 0, 'the failed deletion left objects');
      env.faulty.set('ok');
      env.clock.advance(SWEEP_MS);
      const listed = env.faulty.listings.length;
      await env.rlm.runOnce();
      assert.deepEqual(await env.storage.listSegments(partitionPrefix('', tp.topic, tp.topicId, tp.partition)), []);
      assert.equal(env.metadata.remotePartitionDeleteState(tp), 'DELETE_PARTITION_FINISHED');
      assert.ok(
        env.faulty.listings.slice(listed).every((l) => l.prefix !== ''),
        `no bucket-wide LIST: ${JSON.stringify(env.faulty.listings.slice(listed))}`,
      );
    }));
});
