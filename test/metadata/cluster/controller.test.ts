// The controller on the in-memory twin with a manual clock: election among
// brokers, offline/online of RF=1 partitions as brokers' sessions end and
// return, failover of the controller itself, preferred leader election.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../../../broker/common/clock.js';
import { ManualScheduler } from '../../../broker/common/scheduler.js';
import { ClusterController, type ControllerConfig } from '../../../metadata/cluster/controller.js';
import { MetadataImageFollower } from '../../../metadata/cluster/image-follower.js';
import { initialProposals } from '../../../metadata/cluster/leader-election.js';
import { MemoryClusterMetadataStore, MemoryMetadataServer } from '../../../metadata/cluster/memory-store.js';
import type { PartitionState } from '../../../metadata/cluster/records.js';
import type { BrokerSession } from '../../../metadata/cluster/store.js';

const SESSION = { sessionTimeoutMs: 9000, heartbeatIntervalMs: 2000 };
const CONFIG: ControllerConfig = { uncleanLeaderElectionEnable: false, autoLeaderRebalanceEnable: true, leaderImbalanceCheckIntervalMs: 300_000, retryBackoffMs: 100 };
const STEP_MS = 50;

interface Node {
  readonly nodeId: number;
  readonly store: MemoryClusterMetadataStore;
  readonly session: BrokerSession;
  readonly follower: MetadataImageFollower;
  readonly controller: ClusterController;
}

class Cluster {
  readonly clock = new ManualClock();
  readonly scheduler = new ManualScheduler(this.clock);
  readonly server = new MemoryMetadataServer(this.clock, this.scheduler);
  readonly nodes = new Map<number, Node>();
  private incarnation = 0;

  async start(nodeId: number, config: ControllerConfig = CONFIG): Promise<Node> {
    const store = new MemoryClusterMetadataStore(this.server);
    await store.initialize({ proposedClusterId: 'controller-test' });
    const session = await store.registerBroker(
      { nodeId, incarnationId: `inc-${nodeId}-${++this.incarnation}`, rack: null, endpoints: [{ name: 'PLAINTEXT', host: '127.0.0.1', port: 9000 + nodeId, securityProtocol: 'PLAINTEXT' }] },
      SESSION,
    );
    let controller: ClusterController | undefined;
    const follower = new MetadataImageFollower(store, { scheduler: this.scheduler, onChange: () => controller?.imageChanged() });
    await follower.start();
    controller = new ClusterController({ store, image: follower.image, session, scheduler: this.scheduler, config });
    controller.start();
    const node = { nodeId, store, session, follower, controller };
    this.nodes.set(nodeId, node);
    return node;
  }

  /** Moves simulated time in steps, letting promise work run, until `done` holds; returns the time it took. */
  async until(done: () => boolean, maxMs: number, what: string): Promise<number> {
    const start = this.clock.now();
    for (;;) {
      for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
      if (done()) return this.clock.now() - start;
      if (this.clock.now() - start >= maxMs) throw new Error(`${what}: not within ${maxMs} ms of simulated time`);
      this.clock.advance(STEP_MS);
    }
  }

  /** Lets `ms` of simulated time pass in 1 s steps (keepalives keep sessions live). */
  async pass(ms: number): Promise<void> {
    for (let t = 0; t < ms; t += 1000) {
      this.clock.advance(1000);
      for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
    }
  }

  active(): Node[] {
    return [...this.nodes.values()].filter((n) => n.controller.isActive);
  }

  state(nodeId: number, topic: string, partition: number): PartitionState | undefined {
    const image = this.nodes.get(nodeId)!.follower.image;
    const t = image.topic(topic);
    return t === undefined ? undefined : image.partition(t.topicId, partition);
  }

  async stopAll(): Promise<void> {
    for (const n of this.nodes.values()) {
      await n.controller.stop();
      await n.follower.close();
      await n.store.close();
    }
  }
}

describe('cluster controller (twin, manual clock)', () => {
  it('exactly one broker becomes the controller and every image names it', async () => {
    const c = new Cluster();
    try {
      for (const id of [1, 2, 3]) await c.start(id);
      await c.until(() => c.active().length === 1 && [...c.nodes.values()].every((n) => n.follower.image.controllerId === c.active()[0]!.nodeId), 1000, 'one controller');
      const first = c.active()[0]!;
      // And it stays the one as time passes (keepalives, no re-election).
      await c.pass(30_000);
      assert.deepEqual(c.active(), [first]);
    } finally {
      await c.stopAll();
    }
  });

  it("RF=1: a broker's session ends -> its partitions go offline (leader -1, epoch + 1); it registers again -> they come back", async () => {
    const c = new Cluster();
    try {
      for (const id of [1, 2, 3]) await c.start(id);
      await c.until(() => c.active().length === 1, 1000, 'a controller');
      await c.nodes.get(1)!.store.createTopic({ topicId: 'T', name: 't', partitionCount: 3, configs: {} }, initialProposals([[1], [2], [3]]));
      // Cut off a broker that is not the controller: its lease runs out at the store.
      const victim = [2, 3].find((id) => !c.nodes.get(id)!.controller.isActive)!;
      c.nodes.get(victim)!.store.setReachable(false);
      const observer = [1, 2, 3].find((id) => id !== victim)!;
      const tookMs = await c.until(() => c.state(observer, 't', victim - 1)?.leader === -1, 20_000, 'partition offline');
      assert.ok(tookMs <= SESSION.sessionTimeoutMs + 1000, `offline after ${tookMs} ms`);
      assert.deepEqual(c.state(observer, 't', victim - 1), { replicas: [victim], leader: -1, leaderEpoch: 1, isr: [victim], partitionEpoch: 1 });
      // The other partitions keep their leaders.
      for (const id of [1, 2, 3].filter((i) => i !== victim)) assert.equal(c.state(observer, 't', id - 1)?.leader, id);
      // The broker "restarts": a new client and registration.
      await c.nodes.get(victim)!.follower.close();
      await c.start(victim);
      await c.until(() => c.state(observer, 't', victim - 1)?.leader === victim, 5000, 'partition back');
      assert.deepEqual(c.state(observer, 't', victim - 1), { replicas: [victim], leader: victim, leaderEpoch: 2, isr: [victim], partitionEpoch: 2 });
    } finally {
      await c.stopAll();
    }
  });

  it('the controller cut off from the store stops acting when its session is lost, before another broker takes over within the session timeout', async () => {
    const c = new Cluster();
    try {
      for (const id of [1, 2, 3]) await c.start(id);
      await c.until(() => c.active().length === 1, 1000, 'a controller');
      const old = c.active()[0]!;
      const oldEpoch = old.controller.controller!.controllerEpoch;
      const events: string[] = [];
      old.session.onLost(() => events.push(`lost@${c.clock.now()}`));
      old.store.setReachable(false);
      const tookMs = await c.until(() => c.active().some((n) => n !== old), 20_000, 'a new controller');
      assert.equal(old.controller.isActive, false);
      assert.equal(c.active().length, 1);
      assert.ok(tookMs <= SESSION.sessionTimeoutMs + 1000, `new controller after ${tookMs} ms`);
      assert.equal(events.length, 1, 'the old controller saw its session lost');
      const next = c.active()[0]!;
      assert.ok(next.controller.controller!.controllerEpoch > oldEpoch);
      // The new controller acts: the old controller's broker is gone, so its RF=1 partition goes offline.
      await next.store.createTopic({ topicId: 'U', name: 'u', partitionCount: 1, configs: {} }, initialProposals([[old.nodeId]]));
      await c.until(() => c.state(next.nodeId, 'u', 0)?.leader === -1, 2000, 'offline by the new controller');
    } finally {
      await c.stopAll();
    }
  });

  it('preferred leader election moves leadership back to the first replica every leader.imbalance.check.interval', async () => {
    const c = new Cluster();
    try {
      for (const id of [1, 2]) await c.start(id);
      await c.until(() => c.active().length === 1, 1000, 'a controller');
      // Partition 0 prefers broker 1 but is led by 2 (as after a failover).
      await c.nodes.get(1)!.store.createTopic({ topicId: 'P', name: 'p', partitionCount: 1, configs: {} }, [{ replicas: [1, 2], leader: 2, leaderEpoch: 0, isr: [1, 2] }]);
      await c.until(() => c.state(1, 'p', 0) !== undefined, 1000, 'topic seen');
      const tookMs = await c.until(() => c.state(1, 'p', 0)?.leader === 1, 400_000, 'preferred leader');
      assert.ok(tookMs >= 250_000 && tookMs <= 301_000, `moved after ${tookMs} ms, within one check interval`);
      assert.equal(c.state(1, 'p', 0)?.leaderEpoch, 1);
    } finally {
      await c.stopAll();
    }
  });

  it('with auto.leader.rebalance.enable=false the preferred replica does not take over', async () => {
    const c = new Cluster();
    try {
      const config = { ...CONFIG, autoLeaderRebalanceEnable: false };
      for (const id of [1, 2]) await c.start(id, config);
      await c.until(() => c.active().length === 1, 1000, 'a controller');
      await c.nodes.get(1)!.store.createTopic({ topicId: 'P', name: 'p', partitionCount: 1, configs: {} }, [{ replicas: [1, 2], leader: 2, leaderEpoch: 0, isr: [1, 2] }]);
      await c.until(() => c.state(1, 'p', 0) !== undefined, 1000, 'topic seen');
      await c.pass(700_000);
      assert.equal(c.state(1, 'p', 0)?.leader, 2);
    } finally {
      await c.stopAll();
    }
  });
  it('controlled shutdown: the shutting-down broker\'s leadership moves to another live ISR replica, it leaves ISRs; RF=1 and lone-ISR partitions stay', async () => {
    const c = new Cluster();
    try {
      for (const id of [1, 2, 3]) await c.start(id);
      await c.until(() => c.active().length === 1, 1000, 'a controller');
      const controller = c.active()[0]!.nodeId;
      // The broker that shuts down is not the controller here; the decisions are the same when it is.
      const leaving = [1, 2, 3].find((id) => id !== controller)!;
      const others = [1, 2, 3].filter((id) => id !== leaving);
      const [a, b] = others as [number, number];
      await c.nodes.get(1)!.store.createTopic({ topicId: 'T', name: 't', partitionCount: 4, configs: {} }, [
        { replicas: [leaving, a, b], leader: leaving, leaderEpoch: 0, isr: [leaving, a, b] }, // moves to a
        { replicas: [leaving], leader: leaving, leaderEpoch: 0, isr: [leaving] }, // RF=1: nothing to move
        { replicas: [a, leaving, b], leader: a, leaderEpoch: 0, isr: [a, leaving, b] }, // follower: leaves the ISR
        { replicas: [leaving, b], leader: leaving, leaderEpoch: 0, isr: [leaving] }, // no other ISR member: stays
      ]);
      await c.until(() => c.state(controller, 't', 3) !== undefined, 1000, 'topic visible');
      const node = c.nodes.get(leaving)!;
      await node.store.requestControlledShutdown(node.session);
      await c.until(() => c.state(controller, 't', 0)?.leader === a && c.state(controller, 't', 2)?.isr.length === 2, 5000, 'leadership moved');
      assert.deepEqual(c.state(controller, 't', 0), { replicas: [leaving, a, b], leader: a, leaderEpoch: 1, isr: [a, b], partitionEpoch: 1 });
      assert.deepEqual(c.state(controller, 't', 1), { replicas: [leaving], leader: leaving, leaderEpoch: 0, isr: [leaving], partitionEpoch: 0 });
      assert.deepEqual(c.state(controller, 't', 2), { replicas: [a, leaving, b], leader: a, leaderEpoch: 0, isr: [a, b], partitionEpoch: 1 });
      assert.deepEqual(c.state(controller, 't', 3), { replicas: [leaving, b], leader: leaving, leaderEpoch: 0, isr: [leaving], partitionEpoch: 0 });
      assert.equal(node.follower.image.broker(leaving)?.inControlledShutdown, true);
      assert.equal(node.follower.image.broker(leaving)?.brokerEpoch, node.session.brokerEpoch, 'same registration, same broker epoch');
      // The preferred-leader pass does not hand leadership back to a broker that is shutting down.
      assert.equal(await c.nodes.get(controller)!.controller.rebalanceNow(), 0);
      // A second request is a no-op; a lost session may not mark anything.
      await node.store.requestControlledShutdown(node.session);
      await node.session.close();
      await assert.rejects(node.store.requestControlledShutdown(node.session), /no longer|closed/);
    } finally {
      await c.stopAll();
    }
  });
});
