import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MetadataImage } from '../../../metadata/cluster/image.js';
import { electLeader, initialProposals, planLeaderChanges, planPreferredLeaders } from '../../../metadata/cluster/leader-election.js';
import type { MetadataChange, PartitionState } from '../../../metadata/cluster/records.js';

const clean = { uncleanLeaderElectionEnable: false };
const unclean = { uncleanLeaderElectionEnable: true };
const state = (replicas: number[], leader: number, isr: number[], leaderEpoch = 3, partitionEpoch = 7): PartitionState => ({ replicas, leader, leaderEpoch, isr, partitionEpoch });

function imageOf(live: number[], partitions: PartitionState[]): MetadataImage {
  const records: MetadataChange[] = [
    ...live.map((nodeId): MetadataChange => ({ kind: 'broker', nodeId, broker: { nodeId, incarnationId: `i${nodeId}`, rack: null, endpoints: [], brokerEpoch: 10n + BigInt(nodeId) } })),
    { kind: 'topic', name: 't', topic: { topicId: 'T', name: 't', partitionCount: partitions.length, configs: {} } },
    ...partitions.map((s, partition): MetadataChange => ({ kind: 'partition', topicId: 'T', partition, state: s })),
  ];
  return MetadataImage.fromSnapshot({ revision: 100n, records, problems: [] });
}

describe('leader election decisions', () => {
  it('a live leader with a live ISR needs nothing', () => {
    assert.equal(electLeader(state([1, 2], 1, [1, 2]), new Set([1, 2]), clean), null);
  });

  it('a gone leader is replaced by the first live ISR member in replica order, epoch + 1, the ISR shrunk', () => {
    const next = electLeader(state([1, 3, 2], 1, [1, 2, 3]), new Set([2, 3]), clean);
    assert.deepEqual(next, { proposal: { replicas: [1, 3, 2], leader: 3, leaderEpoch: 4, isr: [2, 3] }, reason: 'leader-gone' });
  });

  it('RF=1 with its broker gone goes offline (leader -1, epoch + 1, the ISR kept), and comes back when the broker returns', () => {
    const offline = electLeader(state([2], 2, [2]), new Set([1, 3]), clean);
    assert.deepEqual(offline, { proposal: { replicas: [2], leader: -1, leaderEpoch: 4, isr: [2] }, reason: 'offline' });
    const stillOffline = state([2], -1, [2], 4, 8);
    assert.equal(electLeader(stillOffline, new Set([1, 3]), clean), null);
    assert.deepEqual(electLeader(stillOffline, new Set([1, 2, 3]), clean), { proposal: { replicas: [2], leader: 2, leaderEpoch: 5, isr: [2] }, reason: 'back-online' });
  });

  it('without unclean election an out-of-sync live replica never leads; with it, it leads alone in the ISR', () => {
    const s = state([1, 2], 1, [1]);
    assert.equal(electLeader(s, new Set([2]), clean)?.proposal.leader, -1);
    assert.deepEqual(electLeader(s, new Set([2]), unclean), { proposal: { replicas: [1, 2], leader: 2, leaderEpoch: 4, isr: [2] }, reason: 'leader-gone' });
  });

  it('a gone follower leaves the ISR of a live leader without an epoch change', () => {
    assert.deepEqual(electLeader(state([1, 2], 1, [1, 2]), new Set([1]), clean), { proposal: { replicas: [1, 2], leader: 1, leaderEpoch: 3, isr: [1] }, reason: 'isr-shrink' });
  });

  it('planLeaderChanges lists the partitions to change with the epochs they are based on', () => {
    const image = imageOf([1, 3], [state([1], 1, [1]), state([2], 2, [2]), state([3], 3, [3])]);
    const changes = planLeaderChanges(image, clean);
    assert.equal(changes.length, 1);
    assert.deepEqual(changes[0], {
      topic: 't',
      ref: { topicId: 'T', partition: 1 },
      expected: { leaderEpoch: 3, partitionEpoch: 7 },
      proposal: { replicas: [2], leader: -1, leaderEpoch: 4, isr: [2] },
      reason: 'offline',
    });
  });

  it('preferred leader election moves a live leader to the live in-sync first replica only', () => {
    const image = imageOf([1, 2], [
      state([1, 2], 2, [1, 2]), // preferred 1 is live and in sync: move
      state([1, 2], 2, [2]), // preferred not in the ISR: stay
      state([3, 2], 2, [2, 3]), // preferred not live: stay
      state([2, 1], 2, [1, 2]), // already preferred
      state([1], -1, [1], 3, 7), // offline: planLeaderChanges' job
    ]);
    const moves = planPreferredLeaders(image);
    assert.deepEqual(moves.map((m) => [m.ref.partition, m.proposal.leader, m.proposal.leaderEpoch, m.reason]), [[0, 1, 4, 'preferred']]);
  });

  it('initial proposals: the first replica leads, all replicas in the ISR, epoch 0', () => {
    assert.deepEqual(initialProposals([[2, 1], [1, 2]]), [
      { replicas: [2, 1], leader: 2, leaderEpoch: 0, isr: [2, 1] },
      { replicas: [1, 2], leader: 1, leaderEpoch: 0, isr: [1, 2] },
    ]);
  });
});
