// Total retention over both tiers, topic deletion, tiering turned off
// (DESIGN behaviours 5, 6, 11).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode, KafkaError } from '../../../broker/protocol/errors.js';
import { logConfig } from '../../../metadata/log-config.js';
import type { PartitionLog } from '../../../broker/log/partition-log.js';
import { partitionPrefix } from '../../../remote-log/objects/object-keys.js';
import { RemoteStorageError } from '../../../remote-log/remote-storage.js';
import {
  type Env,
  TIERED,
  consumeAll,
  finishedSegments,
  makeEnv,
  produce,
  readLocal,
  recordedEvents,
  tpOf,
} from '../helpers.js';

async function withEnv(fn: (env: Env) => Promise<void>, options: Parameters<typeof makeEnv>[0] = {}): Promise<void> {
  const env = await makeEnv(options);
  try {
    await fn(env);
  } finally {
    await env.cleanup();
  }
}

/** Start offsets of the finished segments whose deletion started, in the order it did. */
function deleteOrder(env: Env, log: PartitionLog): bigint[] {
  const events = recordedEvents(env.metadataLog, tpOf(log));
  const startOf = new Map(events.filter((e) => e.startOffset !== undefined).map((e) => [e.segmentId, e.startOffset!]));
  const finished = new Set(events.filter((e) => e.state === 'COPY_SEGMENT_FINISHED').map((e) => e.segmentId));
  return events.filter((e) => e.state === 'DELETE_SEGMENT_STARTED' && finished.has(e.segmentId)).map((e) => startOf.get(e.segmentId)!);
}

describe('remote expiration', () => {
  it('retention.bytes counts local-only plus finished remote bytes; remote segments go oldest first and the log start moves', () =>
    withEnv(async (env) => {
      const log = await env.openLog();
      const tp = tpOf(log);
      await produce(log, 40);
      await env.rlm.runPartition(log);
      await log.applyRetention(env.clock.now());
      const remote = finishedSegments(env.metadata, tp);
      assert.ok(remote.length >= 5);
      const remoteBytes = remote.reduce((n, s) => n + s.size, 0);
      assert.equal(env.metadata.remoteLogSizeBytes(tp), remoteBytes);

      // Copying stops; new local-only data builds up.
      env.faulty.set('fail', 'copy');
      await produce(log, 20);
      const localOnly = [...log.closedSegments(), log.activeSegment()]
        .filter((s) => s.baseOffset > remote[remote.length - 1]!.end)
        .reduce((n, s) => n + s.size, 0);
      assert.ok(localOnly > remote[0]!.size + remote[1]!.size, 'local-only bytes exceed the two oldest remote segments');
      // retention.bytes equal to the remote bytes alone: only counting local-only bytes breaches it.
      log.updateConfig(logConfig({ ...TIERED, retentionBytes: remoteBytes }));
      await env.rlm.runPartition(log);

      let expectDeleted = 0;
      let breach = localOnly;
      while (expectDeleted < remote.length && breach - remote[expectDeleted]!.size >= 0) breach -= remote[expectDeleted++]!.size;
      assert.ok(expectDeleted >= 2);
      const left = finishedSegments(env.metadata, tp);
      assert.deepEqual(left.map((s) => s.start), remote.slice(expectDeleted).map((s) => s.start));
      assert.deepEqual(deleteOrder(env, log), remote.slice(0, expectDeleted).map((s) => s.start), 'oldest first');
      assert.equal(env.rlm.logStartOffset(log), remote[expectDeleted]!.start, 'the log start offset moved past them');
      assert.equal(env.metadata.remoteLogSizeBytes(tp), remoteBytes - remote.slice(0, expectDeleted).reduce((n, s) => n + s.size, 0));
      // The expired objects are gone; the remaining ones are readable from the new start.
      const listed = await env.storage.listSegments();
      assert.deepEqual(listed.map((l) => l.ref.segmentId).sort(), left.map((s) => s.id).sort());
      await assert.rejects(env.rlm.read(log, 0n, 1000, true), (e: unknown) => e instanceof KafkaError && e.code === ErrorCode.OFFSET_OUT_OF_RANGE);
      const rest = await consumeAll(env.rlm, log, remote[expectDeleted]!.start);
      assert.ok(rest.length > 0);
    }));

  it('retention.ms expires remote segments by their max timestamp, oldest first', () =>
    withEnv(async (env) => {
      const t0 = env.clock.now();
      const log = await env.openLog('tiered', { retentionMs: 60_000 });
      const tp = tpOf(log);
      await produce(log, 40, { timestamp: t0 });
      await env.rlm.runPartition(log);
      const remote = finishedSegments(env.metadata, tp);
      assert.equal(deleteOrder(env, log).length, 0, 'nothing is old yet');
      // Record at offset o has timestamp t0 + o: move the clock so the first three segments are past retention.
      env.clock.set(t0 + Number(remote[2]!.end) + 60_000);
      await env.rlm.runPartition(log);
      assert.deepEqual(deleteOrder(env, log), remote.slice(0, 3).map((s) => s.start));
      assert.equal(env.rlm.logStartOffset(log), remote[3]!.start);
    }));

  it('a local log still holding expired offsets drops them: the log start moves on both tiers', () =>
    withEnv(async (env) => {
      // Local retention inherits retention.bytes (-1): the local tier keeps everything.
      const log = await env.openLog('tiered', { localRetentionBytes: -2 });
      const tp = tpOf(log);
      await produce(log, 40);
      await env.rlm.runPartition(log);
      await log.applyRetention(env.clock.now());
      assert.equal(log.localLogStartOffset, 0n);
      const remote = finishedSegments(env.metadata, tp);
      const total = log.size;
      log.updateConfig(logConfig({ ...TIERED, localRetentionBytes: -2, retentionBytes: total - remote[0]!.size - remote[1]!.size }));
      await env.rlm.runPartition(log);
      assert.deepEqual(deleteOrder(env, log), [remote[0]!.start, remote[1]!.start]);
      assert.equal(log.logStartOffset, remote[2]!.start);
      assert.equal(log.localLogStartOffset, remote[2]!.start);
      await assert.rejects(log.read(0n, 1000, { maxOffset: log.highWatermark, minOneBatch: true }), (e: unknown) => e instanceof KafkaError && e.code === ErrorCode.OFFSET_OUT_OF_RANGE);
    }));

  it('a failed remote delete stays DELETE_SEGMENT_STARTED (never served) and is retried on the next run', () =>
    withEnv(async (env) => {
      const log = await env.openLog();
      const tp = tpOf(log);
      await produce(log, 30);
      await env.rlm.runPartition(log);
      await log.applyRetention(env.clock.now());
      const remote = finishedSegments(env.metadata, tp);
      env.faulty.set('fail', 'delete');
      log.updateConfig(logConfig({ ...TIERED, retentionBytes: env.metadata.remoteLogSizeBytes(tp) + log.size - remote[0]!.size }));
      await env.rlm.runPartition(log);
      const first = env.metadata.listRemoteLogSegments(tp)[0]!;
      assert.equal(first.state, 'DELETE_SEGMENT_STARTED');
      assert.equal(env.rlm.logStartOffset(log), remote[1]!.start);
      await assert.rejects(env.rlm.read(log, 0n, 1000, true), (e: unknown) => e instanceof KafkaError && e.code === ErrorCode.OFFSET_OUT_OF_RANGE);
      assert.equal((await env.storage.listSegments()).length, remote.length, 'objects still there');

      env.faulty.set('ok', 'delete');
      await env.rlm.runPartition(log);
      assert.equal(env.metadata.remoteLogSegment(tp, first.remoteLogSegmentId.id), undefined);
      assert.equal((await env.storage.listSegments()).length, remote.length - 1);
    }));

  it('deleting a topic removes its remote objects and records the partition delete', () =>
    withEnv(async (env) => {
      const doomed = await env.openLog('doomed');
      const kept = await env.openLog('kept');
      await produce(doomed, 30);
      await produce(kept, 30);
      await env.rlm.runPartition(doomed);
      await env.rlm.runPartition(kept);
      const tp = tpOf(doomed);
      const keptBefore = await env.storage.listSegments(partitionPrefix('', 'kept', kept.topicId, 0));
      assert.ok((await env.storage.listSegments(partitionPrefix('', 'doomed', doomed.topicId, 0))).length > 0);

      await env.rlm.deletePartitionData(tp);

      assert.deepEqual(await env.storage.listSegments(partitionPrefix('', 'doomed', doomed.topicId, 0)), []);
      assert.equal(env.metadata.remotePartitionDeleteState(tp), 'DELETE_PARTITION_FINISHED');
      const states = recordedEvents(env.metadataLog, tp).map((e) => e.state);
      assert.equal(states.filter((s) => s === 'DELETE_SEGMENT_FINISHED').length, states.filter((s) => s === 'COPY_SEGMENT_FINISHED').length);
      assert.equal(states[states.length - 1], 'DELETE_PARTITION_FINISHED');
      assert.ok(states.includes('DELETE_PARTITION_STARTED'));
      await assert.rejects(env.rlm.read(doomed, 0n, 1000, true), (e: unknown) => e instanceof KafkaError && e.code === ErrorCode.NOT_LEADER_OR_FOLLOWER);
      // The other topic is untouched and still served.
      assert.deepEqual(await env.storage.listSegments(partitionPrefix('', 'kept', kept.topicId, 0)), keptBefore);
      assert.ok((await env.rlm.read(kept, 0n, 1000, true)) !== null);
    }));

  it('a partition delete interrupted by the store resumes and finishes', () =>
    withEnv(async (env) => {
      const log = await env.openLog('doomed');
      await produce(log, 30);
      await env.rlm.runPartition(log);
      const tp = tpOf(log);
      env.faulty.set('fail', 'delete');
      await assert.rejects(env.rlm.deletePartitionData(tp), (e: unknown) => e instanceof RemoteStorageError && e.code === ErrorCode.KAFKA_STORAGE_ERROR && e.message === 'injected delete failure');
      assert.equal(env.metadata.remotePartitionDeleteState(tp), 'DELETE_PARTITION_STARTED');
      env.faulty.set('ok', 'delete');
      // The bucket-wide sweep finds the unfinished delete of a partition nobody runs.
      env.clock.advance(60_000);
      await env.rlm.runOnce();
      assert.equal(env.metadata.remotePartitionDeleteState(tp), 'DELETE_PARTITION_FINISHED');
      assert.deepEqual(await env.storage.listSegments(), []);
    }));

  it('turning tiering off with remote.log.delete.on.disable deletes the remote log', () =>
    withEnv(async (env) => {
      const log = await env.openLog('tiered', { localRetentionBytes: -2 });
      await produce(log, 30);
      await env.rlm.runPartition(log);
      const expected = await readLocal(log, 0n);
      assert.ok(finishedSegments(env.metadata, tpOf(log)).length > 0);
      log.updateConfig(logConfig({ ...TIERED, localRetentionBytes: -2, remoteStorageEnable: false, remoteLogDeleteOnDisable: true }));
      await env.rlm.onConfigChanged(log);
      assert.deepEqual(finishedSegments(env.metadata, tpOf(log)), []);
      assert.deepEqual(await env.storage.listSegments(), []);
      assert.ok((await readLocal(log, 0n)).equals(expected), 'the local log keeps its data');
    }));
});
