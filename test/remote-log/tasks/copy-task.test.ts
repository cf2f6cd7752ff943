// The copy task: what is uploaded, in which order, with which metadata, and
// what a failed, interrupted or blocked copy leaves behind (DESIGN behaviours 1, 3, 4).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildEndTxnMarkerBatch, buildRecordBatch } from '../../../broker/protocol/record-batch.js';
import {
  type Env,
  finishedSegments,
  makeEnv,
  produce,
  readLocal,
  recordedEvents,
  consumeAll,
  tpOf,
  until,
  valuesOf,
} from '../helpers.js';

async function withEnv(fn: (env: Env) => Promise<void>, options: Parameters<typeof makeEnv>[0] = {}): Promise<void> {
  const env = await makeEnv(options);
  try {
    await fn(env);
  } finally {
    await env.cleanup();
  }
}

describe('copy task', () => {
  it('copies every closed segment in order, never the active one, and advances the highest remote offset', () =>
    withEnv(async (env) => {
      const log = await env.openLog();
      await produce(log, 30);
      const closed = log.closedSegments();
      assert.ok(closed.length >= 3, `want several closed segments, got ${closed.length}`);
      assert.equal(env.rlm.highestRemoteOffset(log), -1n);

      await env.rlm.runPartition(log);

      const tp = tpOf(log);
      assert.deepEqual(
        finishedSegments(env.metadata, tp).map((s) => [s.start, s.end, s.size]),
        closed.map((s) => [s.baseOffset, s.nextOffset - 1n, s.size]),
      );
      assert.equal(env.rlm.highestRemoteOffset(log), log.activeSegment().baseOffset - 1n);
      assert.equal(env.metadata.remoteLogSizeBytes(tp), closed.reduce((n, s) => n + s.size, 0));
      // Each copy: STARTED then FINISHED, oldest segment first, a distinct id each.
      const events = recordedEvents(env.metadataLog, tp);
      assert.deepEqual(
        events.map((e) => e.state),
        closed.flatMap(() => ['COPY_SEGMENT_STARTED', 'COPY_SEGMENT_FINISHED']),
      );
      const starts = events.filter((e) => e.state === 'COPY_SEGMENT_STARTED').map((e) => e.startOffset);
      assert.deepEqual(starts, closed.map((s) => s.baseOffset));
      assert.equal(new Set(events.map((e) => e.segmentId)).size, closed.length);
      // The store holds exactly those segments, complete, and nothing at or past the active segment.
      const listed = await env.storage.listSegments();
      assert.equal(listed.length, closed.length);
      assert.ok(listed.every((l) => l.hasManifest && l.ref.baseOffset < log.activeSegment().baseOffset));

      // A second run has nothing to do.
      await env.rlm.runPartition(log);
      assert.equal(recordedEvents(env.metadataLog, tp).length, events.length);
      assert.equal(env.rlm.lastError(log), undefined);
    }));

  it('uploads the indexes, producer snapshot and leader-epoch checkpoint with the data', () =>
    withEnv(async (env) => {
      const log = await env.openLog();
      await produce(log, 12);
      await env.rlm.runPartition(log);
      const tp = tpOf(log);
      const first = env.metadata.listRemoteLogSegments(tp)[0]!;
      const seg = log.closedSegments()[0]!;
      const ref = { topic: tp.topic, topicId: tp.topicId, partition: 0, baseOffset: first.startOffset, segmentId: first.remoteLogSegmentId.id };
      assert.deepEqual(await env.storage.fetchIndex(ref, 'offset'), seg.offsetIndex.bytes());
      assert.deepEqual(await env.storage.fetchIndex(ref, 'time'), seg.timeIndex.bytes());
      assert.equal((await env.storage.fetchIndex(ref, 'txn')).length, 0);
      assert.equal(first.txnIndexEmpty, true);
      assert.equal((await env.storage.fetchIndex(ref, 'leaderEpoch')).toString(), '0\n1\n0 0\n');
      assert.ok((await env.storage.fetchIndex(ref, 'producerSnapshot')).length > 0);
      assert.deepEqual(first.segmentLeaderEpochs, [{ leaderEpoch: 0, startOffset: 0n }]);
      assert.deepEqual(await env.storage.fetchData(ref, 0), await readLocal(log, 0n).then((b) => b.subarray(0, seg.size)));
    }));

  it('does not upload a segment holding an open transaction (at or above the LSO), nor any after it', () =>
    withEnv(async (env) => {
      const log = await env.openLog();
      const tp = tpOf(log);
      await produce(log, 8);
      const txnStart = log.logEndOffset;
      const producerId = 4242n;
      await log.append(
        buildRecordBatch({ records: [{ key: null, value: 'txn-0', timestamp: 1 }], producerId, producerEpoch: 0, baseSequence: 0, transactional: true }),
        { leaderEpoch: 0, isFromClient: true },
      );
      await produce(log, 20);
      assert.equal(log.lastStableOffset, txnStart);
      const holding = log.closedSegments().find((s) => s.baseOffset <= txnStart && txnStart < s.nextOffset)!;
      assert.ok(log.closedSegments().indexOf(holding) < log.closedSegments().length - 1, 'closed segments exist after the open transaction');

      await env.rlm.runPartition(log);
      const copied = finishedSegments(env.metadata, tp);
      assert.ok(copied.length > 0);
      assert.ok(copied.every((s) => s.end < txnStart), 'nothing at or above the LSO is remote');
      assert.equal(env.rlm.highestRemoteOffset(log), holding.baseOffset - 1n);

      await log.append(buildEndTxnMarkerBatch({ type: 'COMMIT', coordinatorEpoch: 0, producerId, producerEpoch: 0, timestamp: 2 }), {
        leaderEpoch: 0,
        isFromClient: false,
      });
      await log.roll();
      await env.rlm.runPartition(log);
      assert.equal(env.rlm.highestRemoteOffset(log), log.logEndOffset - 1n);
      const txnSegment = env.metadata.listRemoteLogSegments(tp).find((s) => s.startOffset === holding.baseOffset)!;
      assert.equal(txnSegment.state, 'COPY_SEGMENT_FINISHED');
    }));

  it('a failed copy deletes what it wrote, records the delete, and the retry uses a fresh segment id', () =>
    withEnv(async (env) => {
      const log = await env.openLog();
      const tp = tpOf(log);
      await produce(log, 12);
      // The store takes every object, then the copy fails (as a lost connection after the uploads would).
      env.faulty.beforeCopyFailure = async (ref, files) => {
        await env.storage.copySegment(ref, files);
      };
      env.faulty.set('fail', 'copy');
      await env.rlm.runPartition(log);

      assert.ok(env.rlm.lastError(log) !== undefined);
      assert.equal(env.rlm.highestRemoteOffset(log), -1n);
      assert.deepEqual(await env.storage.listSegments(), [], 'nothing of the failed copy is left');
      const events = recordedEvents(env.metadataLog, tp);
      assert.deepEqual(
        events.map((e) => e.state),
        ['COPY_SEGMENT_STARTED', 'DELETE_SEGMENT_STARTED', 'DELETE_SEGMENT_FINISHED'],
        'the run stops at the first failure and records the cleanup',
      );
      const failedId = events[0]!.segmentId;
      assert.ok(events.every((e) => e.segmentId === failedId));
      assert.equal(env.metadata.listRemoteLogSegments(tp).length, 0);

      env.faulty.set('ok', 'copy');
      await env.rlm.runPartition(log);
      const copied = finishedSegments(env.metadata, tp);
      assert.equal(copied.length, log.closedSegments().length);
      assert.ok(copied.every((s) => s.id !== failedId), 'a new id per attempt');
      assert.equal(env.rlm.lastError(log), undefined);
    }));

  it('after a crash in the middle of an upload, the leftover is deleted and recorded, and the segment is copied exactly once', async () => {
    const env1 = await makeEnv();
    const log1 = await env1.openLog();
    const tp = tpOf(log1);
    await produce(log1, 12);
    // The first copy uploads its objects (no manifest yet) and then hangs: the broker dies there.
    env1.faulty.beforeCopyFailure = async (ref, files) => {
      await env1.storage.copySegment(ref, files);
      const store = (env1.storage as unknown as { store: { delete(key: string): Promise<void> }; key(r: typeof ref, k: string): string });
      await store.store.delete(store.key(ref, 'manifest'));
    };
    env1.faulty.set('hang', 'copy');
    void env1.rlm.runPartition(log1);
    await until(() => env1.faulty.hangingCalls === 1, 'the copy to hang');
    const crashed = recordedEvents(env1.metadataLog, tp);
    assert.deepEqual(crashed.map((e) => e.state), ['COPY_SEGMENT_STARTED']);
    const leftover = (await env1.storage.listSegments())[0]!;
    assert.equal(leftover.hasManifest, false);
    await log1.closeHandles();

    // Restart: new metadata manager (replaying the topic), new manager, same store and log dir.
    const env2 = await makeEnv({ reuse: env1 });
    try {
      const log2 = await env2.openLog('tiered', {}, { topicId: log1.topicId });
      await env2.rlm.runPartition(log2);
      const events = recordedEvents(env2.metadataLog, tp);
      const deadId = crashed[0]!.segmentId;
      assert.deepEqual(
        events.filter((e) => e.segmentId === deadId).map((e) => e.state),
        ['COPY_SEGMENT_STARTED', 'DELETE_SEGMENT_STARTED', 'DELETE_SEGMENT_FINISHED'],
      );
      const copied = finishedSegments(env2.metadata, tp);
      assert.deepEqual(
        copied.map((s) => s.start),
        log2.closedSegments().map((s) => s.baseOffset),
        'each segment finished exactly once',
      );
      const listed = await env2.storage.listSegments();
      assert.deepEqual(listed.map((l) => l.ref.segmentId).sort(), copied.map((s) => s.id).sort(), 'no orphan remains');
      assert.ok(listed.every((l) => l.hasManifest));
    } finally {
      await env2.cleanup();
    }
  });

  it('with the store down: no local segment is deleted, the disk grows, nothing is lost, and copying catches up', () =>
    withEnv(async (env) => {
      const log = await env.openLog();
      const tp = tpOf(log);
      await produce(log, 15, { tag: 'a' });
      env.faulty.set('fail');
      await env.rlm.runPartition(log);
      assert.equal(env.rlm.highestRemoteOffset(log), -1n);
      assert.ok(env.rlm.lastError(log) !== undefined);
      // local.retention.bytes is 0: only the tiering veto keeps the segments.
      assert.equal((await log.applyRetention(env.clock.now())).deletedSegments, 0);
      const sizeBefore = log.size;
      await produce(log, 15, { tag: 'b' });
      await env.rlm.runPartition(log);
      assert.equal((await log.applyRetention(env.clock.now())).deletedSegments, 0);
      assert.ok(log.size > sizeBefore, 'the disk grows');
      assert.equal(log.localLogStartOffset, 0n);
      const expected = await readLocal(log, 0n);
      assert.equal(valuesOf(expected).length, Number(log.logEndOffset), 'local reads go on');

      env.faulty.set('ok');
      await env.rlm.runPartition(log);
      assert.equal(env.rlm.lastError(log), undefined);
      assert.equal(env.rlm.highestRemoteOffset(log), log.activeSegment().baseOffset - 1n, 'copying caught up');
      const r = await log.applyRetention(env.clock.now());
      assert.equal(r.deletedSegments, finishedSegments(env.metadata, tp).length);
      assert.equal(log.localLogStartOffset, log.activeSegment().baseOffset);
      assert.deepEqual(await consumeAll(env.rlm, log, 0n), expected, 'nothing is lost');
    }));

  it('local retention deletes only segments that are remote and beyond local.retention.bytes', () =>
    withEnv(async (env) => {
      const log = await env.openLog('tiered', { localRetentionBytes: 4096 });
      await produce(log, 60);
      const closed = log.closedSegments();
      // Only the first two segments become remote.
      env.faulty.only = (ref) => ref.baseOffset >= closed[2]!.baseOffset;
      env.faulty.set('fail', 'copy');
      await env.rlm.runPartition(log);
      assert.equal(env.rlm.highestRemoteOffset(log), closed[1]!.nextOffset - 1n);
      await log.applyRetention(env.clock.now());
      assert.equal(log.localLogStartOffset, closed[2]!.baseOffset, 'stops at the first segment not yet remote');
      env.faulty.set('ok', 'copy');
      await env.rlm.runPartition(log);
      await log.applyRetention(env.clock.now());
      assert.ok(log.size >= 4096 - 2048 && log.size <= 4096 + 2048, `local tier bounded near local.retention.bytes (${log.size})`);
      assert.ok(log.localLogStartOffset > closed[2]!.baseOffset);
    }));

  it('local.retention.ms bounds the local tier even when retention.ms is unlimited', () =>
    withEnv(async (env) => {
      const t0 = env.clock.now();
      const log = await env.openLog('tiered', { localRetentionBytes: -2, localRetentionMs: 60_000, retentionMs: -1 });
      await produce(log, 30, { timestamp: t0 });
      await env.rlm.runPartition(log);
      assert.equal((await log.applyRetention(t0 + 1000)).deletedSegments, 0, 'young segments stay');
      const r = await log.applyRetention(t0 + 120_000);
      assert.ok(r.deletedSegments > 0);
      assert.equal(log.localLogStartOffset, log.activeSegment().baseOffset, 'every remote segment past local.retention.ms is gone locally');
      assert.equal(env.rlm.logStartOffset(log), 0n, 'the partition still starts at 0, remotely');
    }));

  it('throttles copies to remote.log.manager.copy.max.bytes.per.second on the injected clock', () =>
    withEnv(
      async (env) => {
        const log = await env.openLog();
        const tp = tpOf(log);
        await produce(log, 30);
        const closed = log.closedSegments();
        assert.ok(closed.length >= 3);
        let done = false;
        const run = env.rlm.runPartition(log).then(() => (done = true));
        await until(() => finishedSegments(env.metadata, tp).length === 1, 'the first copy');
        // The first segment took the whole burst and more: the next waits for the debt to be paid.
        await new Promise((r) => setImmediate(r));
        assert.equal(finishedSegments(env.metadata, tp).length, 1);
        const debt = closed[0]!.size - 1000;
        env.clock.advance(Math.ceil((debt * 1000) / 1000) - 1);
        await new Promise((r) => setImmediate(r));
        assert.equal(finishedSegments(env.metadata, tp).length, 1, 'still waiting');
        for (let i = 0; i < 20 && !done; i++) {
          env.clock.advance(2000);
          await until(() => env.scheduler.pending > 0 || done, 'the next wait', 200, 0).catch(() => undefined);
        }
        await run;
        assert.equal(finishedSegments(env.metadata, tp).length, closed.length);
      },
      { config: { copyBytesPerSec: 1000 } },
    ));
});
