// Who tiers a partition in a cluster: the replica manager's leader role for a
// replicated partition, the image's leader (with a live session) for one with
// a single replica; and the metadata topic's replication factor cap.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { metadataTopicReplicationFactor } from '../../../broker/cluster/remote-metadata-topic.js';
import { tieringLeadership } from '../../../broker/cluster/tiering-leadership.js';
import type { ReplicaManager } from '../../../broker/replica/replica-manager.js';
import type { PartitionState } from '../../../metadata/cluster/records.js';
import type { LocalLog } from '../../../remote-log/local-log.js';

const log = { topic: 't', partition: 0 } as LocalLog;
const view = (state: PartitionState | undefined, isLive = true) => ({ partition: () => state, isLive });
const state = (leader: number, replicas: number[], leaderEpoch = 4): PartitionState => ({ leader, replicas, isr: replicas, leaderEpoch, partitionEpoch: 1 });
const replicas = (role: 'leader' | 'follower', leaderEpoch: number, ofLog: unknown = log): Pick<ReplicaManager, 'replica'> => ({
  replica: () =>
    ({ log: ofLog, role: role === 'leader' ? { kind: 'leader', state: { leaderEpoch } } : { kind: 'follower', leaderId: 2, leaderEpoch } }) as unknown as ReturnType<ReplicaManager['replica']>,
});

describe('tieringLeadership', () => {
  it('follows the replica manager\'s role for a replicated partition', () => {
    assert.deepEqual(tieringLeadership(1, view(state(1, [1, 2, 3])), replicas('leader', 7))(log), { leader: true, leaderEpoch: 7 });
    assert.deepEqual(tieringLeadership(1, view(state(1, [1, 2, 3])), replicas('follower', 7))(log), { leader: false, leaderEpoch: 7 });
  });

  it('never leads a replicated partition before the replica manager says so, even when the image names this broker', () => {
    assert.equal(tieringLeadership(1, view(state(1, [1, 2, 3])), null)(log).leader, false);
    assert.equal(tieringLeadership(1, view(state(1, [1, 2, 3])), replicas('leader', 7, { other: true }))(log).leader, false, 'a replica of another log instance');
  });

  it('leads a single-replica partition the image gives it while its session is live', () => {
    assert.deepEqual(tieringLeadership(1, view(state(1, [1])), null)(log), { leader: true, leaderEpoch: 4 });
    assert.equal(tieringLeadership(1, view(state(1, [1]), false), null)(log).leader, false);
    assert.equal(tieringLeadership(1, view(state(2, [2])), null)(log).leader, false);
    assert.equal(tieringLeadership(1, view(undefined), null)(log).leader, false);
  });
});

describe('metadataTopicReplicationFactor', () => {
  it('is remote.log.metadata.topic.replication.factor capped at the registered brokers, at least 1', () => {
    assert.equal(metadataTopicReplicationFactor(3, 5), 3);
    assert.equal(metadataTopicReplicationFactor(3, 2), 2);
    assert.equal(metadataTopicReplicationFactor(3, 0), 1);
  });
});
