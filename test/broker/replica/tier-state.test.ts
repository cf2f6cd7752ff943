// A follower below its leader's local log start builds its state from the
// remote tier (Kafka's ReplicaFetcherTierStateMachine): the remote segment
// ending below the leader's local start, its uploaded leader-epoch checkpoint
// and producer snapshot. Real PartitionLogs, the RemoteLogManager over an
// in-memory metadata topic and store; and the pure choice of that segment.
import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import { PartitionLog } from '../../../broker/log/partition-log.js';
import { ErrorCode, KafkaError } from '../../../broker/protocol/errors.js';
import { buildRecordBatch } from '../../../broker/protocol/record-batch.js';
import { buildRemoteLogAuxState, logStartOverTiers, type ReplicaRemoteTier } from '../../../broker/replica/tier-state.js';
import { logConfig } from '../../../metadata/log-config.js';
import type { RemoteLogSegmentMetadata } from '../../../metadata/remote-log-metadata/types.js';
import { auxStateSegment } from '../../../remote-log/read/aux-state.js';
import { TIERED, makeEnv } from '../../remote-log/helpers.js';

const PRODUCER = 7n;

/** One idempotent batch of producer 7 (epoch 0) at `seq`, 5 records. */
function idempotentBatch(seq: number, at: number): Buffer {
  const records = Array.from({ length: 5 }, (_, i) => ({ key: null, value: `p-${seq + i}`.padEnd(60, '.'), timestamp: 1_700_000_000_000 + at + i }));
  return buildRecordBatch({ records, producerId: PRODUCER, producerEpoch: 0, baseSequence: seq });
}

describe('buildRemoteLogAuxState', () => {
  it('starts the follower at the leader\'s local log start with the remote epoch history and producer state', async () => {
    const env = await makeEnv();
    try {
      const leader = await env.openLog('tiered');
      let seq = 0;
      for (let i = 0; i < 30; i++) {
        if (i === 12) await leader.assignEpochStartOffset(2);
        await leader.append(idempotentBatch(seq, i * 5), { leaderEpoch: i < 12 ? 0 : 2, isFromClient: true });
        seq += 5;
      }
      // Then plain batches, past a roll: the leader's local tail holds nothing of producer 7, only the remote snapshot does.
      const firstPlain = leader.logEndOffset;
      for (let i = 0; i < 12; i++) {
        const records = Array.from({ length: 5 }, (_, j) => ({ key: null, value: `plain-${i}-${j}`.padEnd(60, '.'), timestamp: 1_700_000_100_000 + i * 5 + j }));
        await leader.append(buildRecordBatch({ records }), { leaderEpoch: 2, isFromClient: true });
      }
      assert.ok(leader.activeSegment().baseOffset > firstPlain, 'rolled after the idempotent batches');
      await env.rlm.runOnce();
      const closed = leader.closedSegments();
      assert.ok(closed.length >= 3, `several closed segments: ${closed.length}`);
      // The leader's local log starts at its active segment (everything below is remote).
      const leaderLocalStart = leader.activeSegment().baseOffset;
      const tier: ReplicaRemoteTier = { remoteAuxState: (l, o, e) => env.rlm.remoteAuxState(l, o, e), logStartOffset: (l) => env.rlm.logStartOffset(l) };

      const follower = await PartitionLog.open({ dir: path.join(env.dir, 'follower', 'tiered-0'), topic: 'tiered', partition: 0, topicId: leader.topicId, config: logConfig({ ...TIERED }), clock: env.clock });
      try {
        const next = await buildRemoteLogAuxState(follower, { offset: leaderLocalStart, leaderEpoch: 2 }, tier);
        assert.equal(next, leaderLocalStart);
        assert.equal(follower.logStartOffset, leaderLocalStart);
        assert.equal(follower.logEndOffset, leaderLocalStart);
        assert.deepEqual(follower.leaderEpochEntries(), leader.leaderEpochEntries().filter((e) => e.startOffset < leaderLocalStart), 'the epoch history below the start');
        // The leader's batches from its local start are replicated as usual...
        const tail = await leader.read(leaderLocalStart, 1 << 20, { maxOffset: leader.logEndOffset, minOneBatch: true });
        await follower.appendAsFollower(Buffer.concat(tail.records));
        assert.equal(follower.logEndOffset, leader.logEndOffset);
        // ...and, as leader, the follower continues producer 7's sequence: the next one is accepted, a gap is not.
        await follower.assignEpochStartOffset(3);
        // (A producer it knew nothing of could start at any sequence: the gap is refused only because the snapshot came along.)
        await assert.rejects(
          follower.append(idempotentBatch(seq + 50, 2000), { leaderEpoch: 3, isFromClient: true }),
          (e: unknown) => e instanceof KafkaError && e.code === ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
        );
        const ok = await follower.append(idempotentBatch(seq, 1000), { leaderEpoch: 3, isFromClient: true });
        assert.equal(ok.lastOffset, leader.logEndOffset + 4n);
        assert.equal(logStartOverTiers(follower, tier), 0n, 'the log start over both tiers is the remote one');
      } finally {
        await follower.close();
      }
    } finally {
      await env.cleanup();
    }
  });

  it('is retriable while the metadata has no segment ending below the leader\'s local start', async () => {
    const env = await makeEnv();
    try {
      const log = await env.openLog('tiered');
      await assert.rejects(env.rlm.remoteAuxState(log, 100n, 0), (e: unknown) => e instanceof KafkaError && e.code === ErrorCode.REPLICA_NOT_AVAILABLE);
    } finally {
      await env.cleanup();
    }
  });
});

describe('auxStateSegment', () => {
  const tp = { topicId: '5o3mHqaVQZqLhlWk2JzD9A', topic: 't', partition: 0 };
  const seg = (id: string, start: bigint, end: bigint, epochs: Array<[number, bigint]>, state: RemoteLogSegmentMetadata['state'] = 'COPY_SEGMENT_FINISHED', at = 0): RemoteLogSegmentMetadata => ({
    remoteLogSegmentId: { topicIdPartition: tp, id },
    startOffset: start,
    endOffset: end,
    brokerId: 1,
    maxTimestampMs: 0,
    eventTimestampMs: at,
    segmentLeaderEpochs: epochs.map(([leaderEpoch, startOffset]) => ({ leaderEpoch, startOffset })),
    segmentSizeInBytes: 1,
    state,
    txnIndexEmpty: true,
  });

  it('takes the finished segment holding the offset below the leader\'s local start, in the leader\'s lineage', () => {
    const a = seg('a', 0n, 99n, [[0, 0n]]);
    const b = seg('b', 100n, 199n, [[0, 100n], [2, 150n]]);
    const diverged = seg('x', 100n, 199n, [[0, 100n], [5, 160n]], 'COPY_SEGMENT_FINISHED', 9);
    const copying = seg('c', 200n, 299n, [[2, 200n]], 'COPY_SEGMENT_STARTED');
    assert.equal(auxStateSegment([a, b], 200n, 2)?.remoteLogSegmentId.id, 'b');
    assert.equal(auxStateSegment([a, b, diverged], 200n, 3)?.remoteLogSegmentId.id, 'b', 'epoch 5 at 199 is not the leader\'s (its epoch there is at most 3)');
    assert.equal(auxStateSegment([a, b], 100n, 2)?.remoteLogSegmentId.id, 'a');
    assert.equal(auxStateSegment([a, b, copying], 300n, 2), undefined, 'an unfinished copy is not used');
    assert.equal(auxStateSegment([a], 250n, 2), undefined);
  });
});
