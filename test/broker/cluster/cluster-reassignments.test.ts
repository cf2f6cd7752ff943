// The receiving broker's side of AlterPartitionReassignments /
// ListPartitionReassignments (broker/cluster/cluster-reassignments.ts) on the
// in-memory store twin: unknown topics and partitions, the change written and
// visible in this broker's image before the answer, a write fenced by a newer
// partition state decided again from the store's state, a topic's own
// unclean.leader.election.enable, and the single broker.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ClusterReassignments, SingleBrokerReassignments } from '../../../broker/cluster/cluster-reassignments.js';
import { ManualClock } from '../../../broker/common/clock.js';
import { ManualScheduler } from '../../../broker/common/scheduler.js';
import { ErrorCode, KafkaError } from '../../../broker/protocol/errors.js';
import { MetadataImage } from '../../../metadata/cluster/image.js';
import { MetadataImageFollower } from '../../../metadata/cluster/image-follower.js';
import { initialProposals } from '../../../metadata/cluster/leader-election.js';
import { MemoryClusterMetadataStore, MemoryMetadataServer } from '../../../metadata/cluster/memory-store.js';

const SESSION = { sessionTimeoutMs: 9000, heartbeatIntervalMs: 2000 };
const REF = { topicId: 'T', partition: 0 };

async function setup(assignment: number[], configs: Record<string, string> = {}) {
  const clock = new ManualClock();
  const scheduler = new ManualScheduler(clock);
  const server = new MemoryMetadataServer(clock, scheduler);
  const store = new MemoryClusterMetadataStore(server);
  await store.initialize({ proposedClusterId: 'reassign' });
  for (const nodeId of [1, 2, 3]) {
    await store.registerBroker({ nodeId, incarnationId: `i${nodeId}`, rack: null, endpoints: [{ name: 'PLAINTEXT', host: 'h', port: nodeId, securityProtocol: 'PLAINTEXT' }] }, SESSION);
  }
  await store.createTopic({ topicId: 'T', name: 't', partitionCount: 1, configs }, initialProposals([assignment]));
  const follower = new MetadataImageFollower(store, { scheduler });
  await follower.start();
  // TopicSync.waitFor's contract (resolves once done() holds), over the follower's image here.
  const sync = {
    async waitFor(done: () => boolean, _timeoutMs: number, what: string): Promise<void> {
      for (let i = 0; i < 1000 && !done(); i++) await new Promise((r) => setImmediate(r));
      if (!done()) throw new Error(`${what}: not visible`);
    },
  };
  return { store, follower, sync, close: async () => { await follower.close(); await store.close(); } };
}

function code(c: number): (e: unknown) => boolean {
  return (e) => e instanceof KafkaError && e.code === c;
}

describe('ClusterReassignments (twin)', () => {
  it('unknown topic or partition: UNKNOWN_TOPIC_OR_PARTITION', async () => {
    const s = await setup([1, 2]);
    try {
      const r = new ClusterReassignments({ store: s.store, image: s.follower.image, sync: s.sync, uncleanLeaderElectionEnable: false, visibleWithinMs: 1000 });
      await assert.rejects(r.alter('nope', 0, [2, 3], true), code(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION));
      await assert.rejects(r.alter('t', 1, [2, 3], true), code(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION));
      await assert.rejects(r.alter('t', 0, [2, 4], true), code(ErrorCode.INVALID_REPLICA_ASSIGNMENT));
    } finally {
      await s.close();
    }
  });

  it('a start is in the image when alter resolves, and ListPartitionReassignments shows replicas, adding and removing', async () => {
    const s = await setup([1, 2]);
    try {
      const r = new ClusterReassignments({ store: s.store, image: s.follower.image, sync: s.sync, uncleanLeaderElectionEnable: false, visibleWithinMs: 1000 });
      assert.deepEqual(r.list(null), []);
      await r.alter('t', 0, [2, 3], true);
      assert.deepEqual(s.follower.image.partition('T', 0)?.replicas, [2, 3, 1]);
      const all = [{ name: 't', partitions: [{ partitionIndex: 0, replicas: [2, 3, 1], addingReplicas: [3], removingReplicas: [1] }] }];
      assert.deepEqual(r.list(null), all);
      assert.deepEqual(r.list([{ name: 't', partitionIndexes: [0, 5] }, { name: 'nope', partitionIndexes: [0] }]), all);
      await r.alter('t', 0, null, true);
      assert.deepEqual(r.list(null), []);
      await assert.rejects(r.alter('t', 0, null, true), code(ErrorCode.NO_REASSIGNMENT_IN_PROGRESS));
    } finally {
      await s.close();
    }
  });

  it('decided on a stale image, the write is fenced and decided again from the state the store returned', async () => {
    const s = await setup([1, 2, 3]);
    try {
      const stale = MetadataImage.fromSnapshot(await s.store.load());
      // The leader shrank the ISR meanwhile; the stale image still shows [1,2,3].
      await s.store.alterPartition(REF, { leaderEpoch: 0, partitionEpoch: 0 }, { replicas: [1, 2, 3], leader: 1, leaderEpoch: 0, isr: [1, 2] });
      const r = new ClusterReassignments({ store: s.store, image: stale, sync: { waitFor: async () => undefined }, uncleanLeaderElectionEnable: false, visibleWithinMs: 1000 });
      // Dropping 3: with the stale ISR it would complete at once; with the real one ([1,2]) it completes too, from partition epoch 1.
      await r.alter('t', 0, [1, 2], true);
      const now = (await s.store.load()).records.find((x) => x.kind === 'partition');
      assert.deepEqual(now?.kind === 'partition' ? now.state : undefined, { replicas: [1, 2], leader: 1, leaderEpoch: 1, isr: [1, 2], partitionEpoch: 2 });
    } finally {
      await s.close();
    }
  });

  it("a cancel needing an unclean election follows the topic's unclean.leader.election.enable over the broker's", async () => {
    const s = await setup([1], { 'unclean.leader.election.enable': 'true' });
    try {
      // {1} -> {2} with 2 alone in the ISR (1 fell out): the revert needs an unclean election.
      await s.store.alterPartition(REF, { leaderEpoch: 0, partitionEpoch: 0 }, { replicas: [2, 1], leader: 1, leaderEpoch: 0, isr: [1], addingReplicas: [2], removingReplicas: [1] });
      await s.store.alterPartition(REF, { leaderEpoch: 0, partitionEpoch: 1 }, { replicas: [2, 1], leader: 2, leaderEpoch: 1, isr: [2] });
      await new Promise((r) => setImmediate(r));
      const r = new ClusterReassignments({ store: s.store, image: s.follower.image, sync: s.sync, uncleanLeaderElectionEnable: false, visibleWithinMs: 1000 });
      await r.alter('t', 0, null, true);
      assert.deepEqual(s.follower.image.partition('T', 0), { replicas: [1], leader: 1, leaderEpoch: 2, isr: [1], partitionEpoch: 3 });
    } finally {
      await s.close();
    }
  });

  it('the single broker: [itself] is no change, anything else is refused as Kafka refuses it, nothing is ever listed', async () => {
    const r = new SingleBrokerReassignments(1, (t) => (t === 't' ? 2 : undefined));
    await r.alter('t', 1, [1], true);
    await assert.rejects(r.alter('t', 0, [1, 2], true), code(ErrorCode.INVALID_REPLICA_ASSIGNMENT));
    await assert.rejects(r.alter('t', 0, null, true), code(ErrorCode.NO_REASSIGNMENT_IN_PROGRESS));
    await assert.rejects(r.alter('t', 2, [1], true), code(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION));
    await assert.rejects(r.alter('u', 0, [1], true), code(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION));
    assert.deepEqual(r.list(), []);
  });
});
