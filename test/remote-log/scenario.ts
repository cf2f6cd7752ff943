// One end-to-end tiering scenario over a given RemoteStorage, run against every
// backend (memory, filesystem, and S3 on MinIO): tier a partition, read it all
// back from offset 0, look up timestamps, expire by retention, restart and
// compare, sweep an orphan, delete the topic. `inspect` lists the keys the
// backend holds through an independent path (the directory, the minio client).
import assert from 'node:assert/strict';
import type { ManualClock } from '../../broker/common/clock.js';
import { logConfig } from '../../metadata/log-config.js';
import { randomUuid } from '../../metadata/uuid.js';
import type { RemoteStorage } from '../../remote-log/remote-storage.js';
import { TIERED, consumeAll, finishedSegments, makeEnv, produce, readLocal, tpOf } from './helpers.js';

export interface ScenarioBackend {
  /** A storage for the scenario; `dir` is a fresh temp dir it may use. */
  storage(clock: ManualClock, dir: string): RemoteStorage;
  /** Every object key the backend holds, seen without going through the storage under test. */
  inspect(): Promise<string[]>;
  /** How the store keeps segment data (the copy result's custom metadata says). */
  compression: 'none' | 'zstd-chunked';
}

export async function tieringScenario(backend: ScenarioBackend): Promise<void> {
  const env1 = await makeEnv({ storage: (clock, dir) => backend.storage(clock, dir) });
  const t0 = env1.clock.now();
  const log1 = await env1.openLog('orders', {}, {});
  const tp = tpOf(log1);
  await produce(log1, 60, { timestamp: t0, perBatch: 10 });
  const expected = await readLocal(log1, 0n);
  await env1.rlm.runPartition(log1);
  await log1.applyRetention(env1.clock.now());
  const remote = finishedSegments(env1.metadata, tp);
  assert.ok(remote.length >= 5, `tiered ${remote.length} segments`);
  assert.equal(log1.localLogStartOffset, log1.activeSegment().baseOffset, 'only the active segment stays local');

  for (const s of env1.metadata.listRemoteLogSegments(tp)) {
    const custom = JSON.parse(s.customMetadata?.toString('utf8') ?? '{}') as { compression?: string };
    assert.equal(custom.compression, backend.compression);
  }
  // Every record from offset 0, byte-identical, across the tier boundary.
  assert.ok((await consumeAll(env1.rlm, log1, 0n)).equals(expected));
  // The bucket holds each segment's objects under deterministic keys.
  const keys = await backend.inspect();
  for (const s of remote) {
    const base = s.start.toString().padStart(20, '0');
    for (const kind of ['log', 'index', 'timeindex', 'snapshot', 'leader-epoch-checkpoint', 'manifest']) {
      assert.ok(keys.some((k) => k.endsWith(`orders-${tp.topicId}/0/${base}-${s.id}.${kind}`)), `${kind} of ${base}`);
    }
  }
  // Timestamp lookups on the remote tier (record o has timestamp t0 + o).
  const probe = remote[2]!.start + 3n;
  assert.deepEqual(await env1.rlm.offsetForTimestamp(log1, BigInt(t0) + probe), { offset: probe, timestamp: BigInt(t0) + probe, leaderEpoch: 0 });

  // Total retention expires the two oldest remote segments.
  const retentionBytes = env1.metadata.remoteLogSizeBytes(tp) + log1.size - remote[0]!.size - remote[1]!.size;
  log1.updateConfig(logConfig({ ...TIERED, retentionBytes }));
  await env1.rlm.runPartition(log1);
  assert.equal(env1.rlm.logStartOffset(log1), remote[2]!.start);

  // An orphan: objects no record points at, older than the grace period.
  const orphan = { topic: 'orders', topicId: tp.topicId, partition: 0, baseOffset: 999_999n, segmentId: randomUuid() };
  const empty = Buffer.alloc(0);
  await env1.storage.copySegment(orphan, { data: Buffer.from('x'), offsetIndex: empty, timeIndex: empty, producerSnapshot: empty, leaderEpochCheckpoint: empty });

  const before = {
    highest: env1.rlm.highestRemoteOffset(log1),
    start: env1.rlm.logStartOffset(log1),
    size: env1.metadata.remoteLogSizeBytes(tp),
    segments: finishedSegments(env1.metadata, tp),
    localStart: log1.localLogStartOffset,
    data: await consumeAll(env1.rlm, log1, remote[2]!.start),
  };
  await env1.rlm.stop();
  await log1.close();

  // Restart: everything comes back from the metadata replay.
  const env2 = await makeEnv({ reuse: env1 });
  try {
    const log2 = await env2.openLog('orders', { retentionBytes }, { topicId: tp.topicId });
    await env2.metadata.whenReady(tp);
    assert.equal(env2.rlm.highestRemoteOffset(log2), before.highest);
    assert.equal(env2.rlm.logStartOffset(log2), before.start);
    assert.equal(env2.metadata.remoteLogSizeBytes(tp), before.size);
    assert.deepEqual(finishedSegments(env2.metadata, tp), before.segments);
    assert.equal(log2.localLogStartOffset, before.localStart);
    assert.ok((await consumeAll(env2.rlm, log2, remote[2]!.start)).equals(before.data));

    // The sweep deletes the orphan once past the grace period, and nothing else.
    env2.clock.advance(120_000);
    await env2.rlm.runPartition(log2);
    const afterSweep = await backend.inspect();
    assert.ok(!afterSweep.some((k) => k.includes(orphan.segmentId)), 'orphan swept');
    assert.equal(finishedSegments(env2.metadata, tp).length, before.segments.length);
    assert.ok((await consumeAll(env2.rlm, log2, remote[2]!.start)).equals(before.data));

    // Deleting the topic removes its objects.
    await env2.rlm.deletePartitionData(tp);
    assert.deepEqual((await backend.inspect()).filter((k) => k.includes(tp.topicId)), []);
    assert.equal(env2.metadata.remotePartitionDeleteState(tp), 'DELETE_PARTITION_FINISHED');
  } finally {
    await env2.cleanup();
  }
}
