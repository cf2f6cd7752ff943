// Partition reassignment decisions (metadata/cluster/reassignment.ts) and the
// controller carrying them out on the in-memory store twin with a manual
// clock: start (union of replicas, adding/removing), completion once the
// target is in the ISR (leader kept or re-elected from the target, epochs),
// cancel (revert), refused requests with Kafka's error codes, and fencing of
// changes based on a stale partition epoch.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../../../broker/common/clock.js';
import { ErrorCode, KafkaError } from '../../../broker/protocol/errors.js';
import { ManualScheduler } from '../../../broker/common/scheduler.js';
import { ClusterController, type ControllerConfig } from '../../../metadata/cluster/controller.js';
import { StalePartitionUpdateError } from '../../../metadata/cluster/errors.js';
import { MetadataImageFollower } from '../../../metadata/cluster/image-follower.js';
import { decodeEntry, encodePartition, partitionKey } from '../../../metadata/cluster/layout.js';
import { initialProposals } from '../../../metadata/cluster/leader-election.js';
import { MemoryClusterMetadataStore, MemoryMetadataServer } from '../../../metadata/cluster/memory-store.js';
import { planReassignment, planReassignmentCompletions, type ReassignmentContext } from '../../../metadata/cluster/reassignment.js';
import type { PartitionState } from '../../../metadata/cluster/records.js';
import type { BrokerSession } from '../../../metadata/cluster/store.js';

const SESSION = { sessionTimeoutMs: 9000, heartbeatIntervalMs: 2000 };
const CONFIG: ControllerConfig = { uncleanLeaderElectionEnable: false, autoLeaderRebalanceEnable: false, leaderImbalanceCheckIntervalMs: 300_000, retryBackoffMs: 100 };
const REF = { topicId: 'T', partition: 0 };

function ctx(brokers: readonly number[], over: Partial<ReassignmentContext> = {}): ReassignmentContext {
  const registered = new Set(brokers);
  return { registered, canLead: (id) => registered.has(id), uncleanLeaderElectionEnable: false, allowReplicationFactorChange: true, ...over };
}

function state(s: Partial<PartitionState> & Pick<PartitionState, 'replicas'>): PartitionState {
  return { leader: s.replicas[0]!, leaderEpoch: 0, isr: [...s.replicas], partitionEpoch: 0, ...s };
}

function refusedWith(code: number): (e: unknown) => boolean {
  return (e) => {
    assert.ok(e instanceof KafkaError, String(e));
    assert.equal(e.code, code, e.message);
    return true;
  };
}

describe('reassignment decisions (pure)', () => {
  it('start: replicas = target then the removed ones, adding/removing set, leader and epochs unchanged', () => {
    const p = planReassignment(state({ replicas: [1, 2] }), [2, 3], ctx([1, 2, 3]));
    assert.deepEqual(p, { replicas: [2, 3, 1], leader: 1, leaderEpoch: 0, isr: [1, 2], addingReplicas: [3], removingReplicas: [1] });
  });

  it('a target the ISR already covers completes at once: a reorder keeps the leader, lowering the RF drops a replica and bumps the epoch', () => {
    assert.deepEqual(planReassignment(state({ replicas: [1, 2] }), [2, 1], ctx([1, 2])), { replicas: [2, 1], leader: 1, leaderEpoch: 0, isr: [1, 2], addingReplicas: [], removingReplicas: [] });
    assert.deepEqual(planReassignment(state({ replicas: [1, 2, 3] }), [1, 2], ctx([1, 2, 3])), { replicas: [1, 2], leader: 1, leaderEpoch: 1, isr: [1, 2], addingReplicas: [], removingReplicas: [] });
    assert.equal(planReassignment(state({ replicas: [1, 2] }), [1, 2], ctx([1, 2])), null, 'the current assignment is no change');
  });

  it('refuses an empty, duplicate or unknown-broker target with INVALID_REPLICA_ASSIGNMENT, an RF change with INVALID_REPLICATION_FACTOR when not allowed', () => {
    const s = state({ replicas: [1, 2] });
    assert.throws(() => planReassignment(s, [], ctx([1, 2, 3])), refusedWith(ErrorCode.INVALID_REPLICA_ASSIGNMENT));
    assert.throws(() => planReassignment(s, [2, 2], ctx([1, 2, 3])), refusedWith(ErrorCode.INVALID_REPLICA_ASSIGNMENT));
    assert.throws(() => planReassignment(s, [2, 4], ctx([1, 2, 3])), refusedWith(ErrorCode.INVALID_REPLICA_ASSIGNMENT));
    assert.throws(() => planReassignment(s, [1, 2, 3], ctx([1, 2, 3], { allowReplicationFactorChange: false })), refusedWith(ErrorCode.INVALID_REPLICATION_FACTOR));
    assert.notEqual(planReassignment(s, [2, 3], ctx([1, 2, 3], { allowReplicationFactorChange: false })), null, 'same RF is allowed');
  });

  it('cancel: NO_REASSIGNMENT_IN_PROGRESS without one; else the adding replicas leave, a leader being added gives way (epoch + 1)', () => {
    assert.throws(() => planReassignment(state({ replicas: [1, 2] }), null, ctx([1, 2, 3])), refusedWith(ErrorCode.NO_REASSIGNMENT_IN_PROGRESS));
    const moving = state({ replicas: [2, 3, 1], leader: 3, leaderEpoch: 4, isr: [1, 2, 3], addingReplicas: [3], removingReplicas: [1], partitionEpoch: 7 });
    assert.deepEqual(planReassignment(moving, null, ctx([1, 2, 3])), { replicas: [2, 1], leader: 2, leaderEpoch: 5, isr: [1, 2], addingReplicas: [], removingReplicas: [] });
  });

  it('cancel that would leave the ISR empty is an unclean election: refused unless unclean.leader.election.enable', () => {
    const s = state({ replicas: [3, 1], leader: 3, leaderEpoch: 2, isr: [3], addingReplicas: [3], removingReplicas: [1] });
    assert.throws(() => planReassignment(s, null, ctx([1, 3])), refusedWith(ErrorCode.INVALID_REPLICA_ASSIGNMENT));
    assert.deepEqual(planReassignment(s, null, ctx([1, 3], { uncleanLeaderElectionEnable: true })), { replicas: [1], leader: 1, leaderEpoch: 3, isr: [1], addingReplicas: [], removingReplicas: [] });
  });

  it('the partition record keeps adding/removing replicas through the layout, and has none without a reassignment', () => {
    const s = state({ replicas: [2, 3, 1], addingReplicas: [3], removingReplicas: [1] });
    const back = decodeEntry(partitionKey('T', 0), encodePartition(s), 1n);
    assert.deepEqual(back, { kind: 'partition', topicId: 'T', partition: 0, state: s });
    const plain = state({ replicas: [1, 2] });
    assert.equal(encodePartition(plain).includes('addingReplicas'), false);
  });
});

interface Node {
  readonly store: MemoryClusterMetadataStore;
  readonly session: BrokerSession;
  readonly follower: MetadataImageFollower;
  readonly controller: ClusterController;
}

class Cluster {
  readonly clock = new ManualClock();
  readonly scheduler = new ManualScheduler(this.clock);
  readonly server = new MemoryMetadataServer(this.clock, this.scheduler);
  readonly nodes: Node[] = [];

  async start(nodeId: number): Promise<Node> {
    const store = new MemoryClusterMetadataStore(this.server);
    await store.initialize({ proposedClusterId: 'reassignment-test' });
    const session = await store.registerBroker({ nodeId, incarnationId: `inc-${nodeId}`, rack: null, endpoints: [{ name: 'PLAINTEXT', host: '127.0.0.1', port: 9000 + nodeId, securityProtocol: 'PLAINTEXT' }] }, SESSION);
    let controller: ClusterController | undefined;
    const follower = new MetadataImageFollower(store, { scheduler: this.scheduler, onChange: () => controller?.imageChanged() });
    await follower.start();
    controller = new ClusterController({ store, image: follower.image, session, scheduler: this.scheduler, config: CONFIG });
    controller.start();
    const node = { store, session, follower, controller };
    this.nodes.push(node);
    return node;
  }

  async settle(): Promise<void> {
    for (let round = 0; round < 20; round++) {
      for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
      this.clock.advance(50);
    }
  }

  get store(): MemoryClusterMetadataStore {
    return this.nodes[0]!.store;
  }

  stateNow(): PartitionState {
    const image = this.nodes[0]!.follower.image;
    return image.partition('T', 0)!;
  }

  /** What a broker receiving AlterPartitionReassignments does: decide from its state, write by CAS. */
  async reassign(target: readonly number[] | null): Promise<PartitionState> {
    const s = this.stateNow();
    const proposal = planReassignment(s, target, ctx([1, 2, 3]));
    assert.ok(proposal !== null);
    return this.store.alterPartition(REF, { leaderEpoch: s.leaderEpoch, partitionEpoch: s.partitionEpoch }, proposal);
  }

  /** What the leader's ISR expansion writes: same replicas, the ISR plus `id`, no reassignment fields. */
  async expandIsr(id: number): Promise<PartitionState> {
    const s = this.stateNow();
    return this.store.alterPartition(REF, { leaderEpoch: s.leaderEpoch, partitionEpoch: s.partitionEpoch }, { replicas: s.replicas, leader: s.leader, leaderEpoch: s.leaderEpoch, isr: [...s.isr, id] });
  }

  async stop(): Promise<void> {
    for (const n of this.nodes) {
      await n.controller.stop();
      await n.follower.close();
      await n.store.close();
    }
  }
}

async function cluster(assignment: number[]): Promise<Cluster> {
  const c = new Cluster();
  for (const id of [1, 2, 3]) await c.start(id);
  await c.store.createTopic({ topicId: 'T', name: 't', partitionCount: 1, configs: {} }, initialProposals([assignment]));
  await c.settle();
  return c;
}

describe('the controller carries reassignments out (twin)', () => {
  it('move {1,2} -> {2,3}: nothing completes until 3 is in the ISR; then replicas [2,3], 1 leaves the ISR, a leader from the target with epoch + 1', async () => {
    const c = await cluster([1, 2]);
    try {
      const started = await c.reassign([2, 3]);
      assert.deepEqual(started, { replicas: [2, 3, 1], leader: 1, leaderEpoch: 0, isr: [1, 2], partitionEpoch: 1, addingReplicas: [3], removingReplicas: [1] });
      await c.settle();
      assert.deepEqual(c.stateNow(), started, 'the controller waits for the new replica to catch up');
      // The leader's ISR expansion keeps the reassignment as it is.
      const expanded = await c.expandIsr(3);
      assert.deepEqual(expanded.addingReplicas, [3]);
      assert.deepEqual(expanded.removingReplicas, [1]);
      await c.settle();
      assert.deepEqual(c.stateNow(), { replicas: [2, 3], leader: 2, leaderEpoch: 1, isr: [2, 3], partitionEpoch: 3 });
    } finally {
      await c.stop();
    }
  });

  it('a leader in the target keeps leading; the epoch still rises because a replica left', async () => {
    const c = await cluster([1, 2]);
    try {
      await c.reassign([1, 3]);
      await c.expandIsr(3);
      await c.settle();
      assert.deepEqual(c.stateNow(), { replicas: [1, 3], leader: 1, leaderEpoch: 1, isr: [1, 3], partitionEpoch: 3 });
    } finally {
      await c.stop();
    }
  });

  it('adding a replica only (RF 1 -> 2) completes without a leader epoch change', async () => {
    const c = await cluster([1]);
    try {
      await c.reassign([1, 2]);
      await c.expandIsr(2);
      await c.settle();
      assert.deepEqual(c.stateNow(), { replicas: [1, 2], leader: 1, leaderEpoch: 0, isr: [1, 2], partitionEpoch: 3 });
    } finally {
      await c.stop();
    }
  });

  it('cancel reverts to the original replicas before the new one caught up', async () => {
    const c = await cluster([1, 2]);
    try {
      await c.reassign([2, 3]);
      const reverted = await c.reassign(null);
      // Kafka's originalReplicas: the replicas without the adding ones, in the reassignment's order.
      assert.deepEqual(reverted, { replicas: [2, 1], leader: 1, leaderEpoch: 1, isr: [1, 2], partitionEpoch: 2 });
      await c.settle();
      assert.deepEqual(c.stateNow(), reverted, 'the controller has nothing to complete');
      assert.throws(() => planReassignment(c.stateNow(), null, ctx([1, 2, 3])), refusedWith(ErrorCode.NO_REASSIGNMENT_IN_PROGRESS));
    } finally {
      await c.stop();
    }
  });

  it('a change based on a stale partition epoch is refused and changes nothing: a start, a completion, an ISR change that does not know of the reassignment', async () => {
    const c = await cluster([1, 2]);
    try {
      const before = c.stateNow();
      const proposal = planReassignment(before, [2, 3], ctx([1, 2, 3]))!;
      await c.reassign([1, 3]); // someone else's reassignment got there first
      await assert.rejects(
        c.store.alterPartition(REF, { leaderEpoch: before.leaderEpoch, partitionEpoch: before.partitionEpoch }, proposal),
        (e: unknown) => e instanceof StalePartitionUpdateError && e.code === ErrorCode.INVALID_UPDATE_VERSION && e.current.partitionEpoch === 1,
      );
      // A completion planned on an image that the ISR has since moved past.
      for (const n of c.nodes) await n.controller.stop(); // the test plays the controller from here
      await c.expandIsr(3);
      await c.settle();
      const [completion] = planReassignmentCompletions(c.nodes[0]!.follower.image);
      assert.ok(completion !== undefined);
      const shrunk = await c.store.alterPartition(REF, completion.expected, { replicas: c.stateNow().replicas, leader: 1, leaderEpoch: 0, isr: [1, 3] });
      await assert.rejects(c.store.alterPartition(REF, completion.expected, completion.proposal), (e: unknown) => e instanceof StalePartitionUpdateError && e.code === ErrorCode.INVALID_UPDATE_VERSION);
      // An ISR change naming other replicas than the reassigning partition's is refused outright.
      await assert.rejects(
        c.store.alterPartition(REF, { leaderEpoch: 0, partitionEpoch: shrunk.partitionEpoch }, { replicas: [1, 2], leader: 1, leaderEpoch: 0, isr: [1] }),
        (e: unknown) => e instanceof KafkaError && e.code === ErrorCode.INVALID_REQUEST,
      );
      const now = await c.store.load();
      const record = now.records.find((r) => r.kind === 'partition');
      assert.deepEqual(record?.kind === 'partition' ? record.state : undefined, shrunk);
      assert.deepEqual(shrunk.addingReplicas, [3]);
    } finally {
      await c.stop();
    }
  });
});
