// KIP-405's follower rules in the RemoteLogManager: two managers (two brokers)
// share one metadata topic and one store; only the partition's leader copies,
// the follower learns the remote segments from the metadata (and may then
// drop its local copies), a new leader continues from the highest remote
// offset of its epoch history without uploading anything twice, and losing
// leadership aborts the copy in flight, which the next leader cleans up.
import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import { PartitionLog } from '../../broker/log/partition-log.js';
import { buildRecordBatch } from '../../broker/protocol/record-batch.js';
import { logConfig } from '../../metadata/log-config.js';
import { RemoteLogMetadataManager } from '../../metadata/remote-log-metadata/remote-log-metadata-manager.js';
import type { TopicIdPartition } from '../../metadata/remote-log-metadata/types.js';
import type { PartitionLeadership } from '../../remote-log/partition-state.js';
import { RemoteLogManager } from '../../remote-log/remote-log-manager.js';
import { findHighestRemoteOffset } from '../../remote-log/tasks/copy-task.js';
import { FaultyStorage, TIERED, finishedSegments, makeEnv, rlmConfig, tpOf, type Env } from './helpers.js';

/** Appends the same `batches` batches (5 records of 40 bytes each) in `leaderEpoch` to every log. */
async function produceTo(logs: readonly PartitionLog[], batches: number, leaderEpoch: number): Promise<void> {
  for (let b = 0; b < batches; b++) {
    for (const log of logs) {
      const base = Number(log.logEndOffset);
      const records = Array.from({ length: 5 }, (_, i) => ({ key: null, value: `v-${base + i}`.padEnd(40, '.'), timestamp: 1_700_000_000_000 + base + i }));
      await log.append(buildRecordBatch({ records }), { leaderEpoch, isFromClient: true });
    }
  }
}

interface Pair {
  readonly env: Env;
  readonly a: { rlm: RemoteLogManager; log: PartitionLog; storage: FaultyStorage };
  readonly b: { rlm: RemoteLogManager; log: PartitionLog; storage: FaultyStorage };
  /** Who leads: 'a' or 'b', at `epoch`. */
  lead(who: 'a' | 'b', epoch: number): Promise<void>;
  cleanup(): Promise<void>;
}

/** Broker A is env.rlm with its log; broker B a second manager over the same metadata topic and store, with a log of the same partition. */
async function makePair(): Promise<Pair> {
  const leader = { who: 'a' as 'a' | 'b', epoch: 0 };
  const leadershipFor = (who: 'a' | 'b') => (): PartitionLeadership => ({ leader: leader.who === who, leaderEpoch: leader.epoch });
  const env = await makeEnv();
  // env.rlm has no leadership callback (it leads everything): A is a manager of its own, over env's metadata topic and store.
  const storageA = new FaultyStorage(env.storage);
  const storageB = new FaultyStorage(env.storage);
  const build = async (who: 'a' | 'b', storage: FaultyStorage) => {
    const metadata = new RemoteLogMetadataManager({ log: env.metadataLog });
    const rlm = RemoteLogManager.create({ storage, metadata, clock: env.clock, scheduler: env.scheduler, config: rlmConfig(), brokerId: who === 'a' ? 1 : 2, leadership: leadershipFor(who) });
    await metadata.start();
    return rlm;
  };
  const rlmA = await build('a', storageA);
  const rlmB = await build('b', storageB);
  const topicId = '5o3mHqaVQZqLhlWk2JzD9A';
  const open = (who: 'a' | 'b', rlm: RemoteLogManager): Promise<PartitionLog> => {
    const holder: { log?: PartitionLog } = {};
    return PartitionLog.open({
      dir: path.join(env.dir, who, 'tiered-0'),
      topic: 'tiered',
      partition: 0,
      topicId,
      config: logConfig({ ...TIERED }),
      clock: env.clock,
      canDeleteSegment: (s) => holder.log !== undefined && rlm.canDeleteLocalSegment(holder.log, s),
    }).then((log) => {
      holder.log = log;
      rlm.onPartitionAdded(log);
      return log;
    });
  };
  const logA = await open('a', rlmA);
  const logB = await open('b', rlmB);
  return {
    env,
    a: { rlm: rlmA, log: logA, storage: storageA },
    b: { rlm: rlmB, log: logB, storage: storageB },
    async lead(who, epoch) {
      leader.who = who;
      leader.epoch = epoch;
      await (who === 'a' ? logA : logB).assignEpochStartOffset(epoch);
      await rlmA.onLeadershipChanged(logA);
      await rlmB.onLeadershipChanged(logB);
    },
    async cleanup() {
      await rlmA.stop();
      await rlmB.stop();
      await logA.close();
      await logB.close();
      await env.cleanup();
    },
  };
}

/** Start offsets of the finished segments, in order (a duplicate upload would show twice). */
function finishedStarts(env: Env, tp: TopicIdPartition): bigint[] {
  return finishedSegments(env.metadata, tp).map((s) => s.start);
}

describe('RemoteLogManager leadership (KIP-405 follower rules)', () => {
  it('copies only on the leader; the follower learns the remote segments from the metadata and may then delete its local copies', async () => {
    const p = await makePair();
    try {
      await produceTo([p.a.log, p.b.log], 20, 0);
      const closed = p.a.log.closedSegments().length;
      assert.ok(closed >= 3, `needs several closed segments, has ${closed}`);
      const first = p.b.log.closedSegments()[0]!;
      assert.equal(p.b.rlm.canDeleteLocalSegment(p.b.log, first), false, 'nothing is remote yet');

      await p.b.rlm.runOnce();
      assert.equal(p.b.storage.calls.copy, 0, 'the follower uploads nothing');
      await p.a.rlm.runOnce();
      await p.b.rlm.runOnce();
      assert.equal(p.a.storage.calls.copy, closed, 'the leader uploaded every closed segment');
      assert.equal(p.b.storage.calls.copy, 0, 'the follower uploaded nothing');
      await p.env.metadata.catchUp(p.env.metadata.metadataPartition(tpOf(p.a.log)));
      assert.equal(finishedStarts(p.env, tpOf(p.a.log)).length, closed);
      assert.equal(p.b.rlm.canDeleteLocalSegment(p.b.log, first), true, 'the follower knows the segment is remote');
      assert.equal(p.b.rlm.highestRemoteOffset(p.b.log), p.b.log.activeSegment().baseOffset - 1n);
      assert.equal(p.b.rlm.canDeleteLocalSegment(p.b.log, p.b.log.activeSegment()), false);
      assert.equal(p.b.rlm.partitionStats(p.b.log)?.remoteSegmentCount, closed, 'the follower counts the remote segments too');
    } finally {
      await p.cleanup();
    }
  });

  it('a new leader continues from the highest remote offset: each segment is uploaded exactly once', async () => {
    const p = await makePair();
    try {
      await produceTo([p.a.log, p.b.log], 20, 0);
      await p.a.rlm.runOnce();
      await p.b.rlm.runOnce();
      const copiedByA = p.a.storage.calls.copy;

      await p.lead('b', 1);
      await produceTo([p.b.log, p.a.log], 20, 1);
      await p.a.rlm.runOnce();
      await p.b.rlm.runOnce();
      const closed = p.b.log.closedSegments().length;
      assert.equal(p.a.storage.calls.copy, copiedByA, 'the old leader copies nothing more');
      assert.equal(p.b.storage.calls.copy, closed - copiedByA, 'the new leader copies only what was not remote');
      await p.env.metadata.catchUp(p.env.metadata.metadataPartition(tpOf(p.b.log)));
      const starts = finishedStarts(p.env, tpOf(p.b.log));
      assert.equal(new Set(starts).size, starts.length, `no segment twice: ${starts.join(',')}`);
      assert.deepEqual(starts, p.b.log.closedSegments().map((s) => s.baseOffset));
      const epochs = p.env.metadata.listRemoteLogSegments(tpOf(p.b.log)).map((s) => s.segmentLeaderEpochs.map((e) => e.leaderEpoch));
      assert.ok(epochs.some((e) => e.includes(1)), 'the new leader records its epoch');
      assert.equal(await p.a.rlm.read(p.a.log, 0n, 1000, true).then((r) => r !== null), true, 'the follower reads the remote tier too');
    } finally {
      await p.cleanup();
    }
  });

  it('losing leadership aborts the copy in flight; the next leader deletes it and copies the segment itself', async () => {
    const p = await makePair();
    try {
      await produceTo([p.a.log, p.b.log], 8, 0);
      p.a.storage.set('hang', 'copy');
      const running = p.a.rlm.runOnce();
      while (p.a.storage.hangingCalls === 0) await new Promise((r) => setImmediate(r));
      await p.lead('b', 1);
      await running;
      assert.equal(p.a.storage.hangingCalls, 0, 'the hung upload was aborted');
      const tp = tpOf(p.a.log);
      await p.env.metadata.catchUp(p.env.metadata.metadataPartition(tp));
      assert.equal(finishedStarts(p.env, tp).length, p.b.log.closedSegments().length, 'the new leader copied everything');
      const states = p.env.metadata.listRemoteLogSegments(tp).map((s) => s.state);
      assert.ok(states.every((s) => s === 'COPY_SEGMENT_FINISHED'), `the aborted copy was cleaned up: ${states.join(',')}`);
      assert.ok(p.b.storage.calls.delete >= 1, 'the new leader deleted the abandoned copy');
    } finally {
      await p.cleanup();
    }
  });
});

describe('findHighestRemoteOffset', () => {
  const tp: TopicIdPartition = { topicId: '5o3mHqaVQZqLhlWk2JzD9A', topic: 't', partition: 0 };
  const remote = (perEpoch: Record<number, bigint>, overall?: bigint) => ({
    highestOffsetForEpoch: (_tp: TopicIdPartition, epoch: number) => perEpoch[epoch],
    highestRemoteOffset: () => overall,
  });
  const history = [
    { epoch: 0, startOffset: 0n },
    { epoch: 2, startOffset: 100n },
    { epoch: 5, startOffset: 200n },
  ];

  it('takes the latest epoch of the history that has remote data', () => {
    assert.equal(findHighestRemoteOffset(remote({ 0: 99n, 2: 150n }, 150n), tp, history, 300n), 150n);
    assert.equal(findHighestRemoteOffset(remote({ 0: 99n, 2: 199n, 5: 260n }, 260n), tp, history, 300n), 260n);
  });

  it('caps it at the end of that epoch in this log: remote data of a diverged epoch does not count', () => {
    // Epoch 2 was uploaded up to 250 by a leader whose log diverged; here epoch 2 ends at 199.
    assert.equal(findHighestRemoteOffset(remote({ 0: 99n, 2: 250n }, 250n), tp, history, 300n), 199n);
    // Epoch 7 (not in this history) is ignored entirely.
    assert.equal(findHighestRemoteOffset(remote({ 0: 99n, 7: 400n }, 400n), tp, history, 300n), 99n);
  });

  it('is -1 with nothing remote; epoch 0 without history; below the history when only older epochs are remote', () => {
    assert.equal(findHighestRemoteOffset(remote({}), tp, history, 300n), -1n);
    assert.equal(findHighestRemoteOffset(remote({ 0: 42n }, 42n), tp, [], 100n), 42n);
    const truncated = [{ epoch: 5, startOffset: 200n }];
    assert.equal(findHighestRemoteOffset(remote({ 2: 150n }, 150n), tp, truncated, 300n), 150n);
    assert.equal(findHighestRemoteOffset(remote({ 2: 250n }, 250n), tp, truncated, 300n), 199n);
  });
});
