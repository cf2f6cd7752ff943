// Two brokers' ReplicaManagers over the in-memory metadata twin, real
// partition logs in a temp dir, a manual clock and scheduler; the follower's
// fetch connection calls the leader's replica-fetch answer in process. The HW
// follows the ISR's log end offsets; acks=all waits for it (or times out); the
// ISR shrinks after replica.lag.time.max.ms without the follower catching up
// and grows when it catches up again, each a compare-and-swap in the store; a
// leader change bumps the epoch and the old leader's diverged tail is cut.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import pino from 'pino';
import { ManualClock } from '../../../broker/common/clock.js';
import { ManualScheduler } from '../../../broker/common/scheduler.js';
import { PartitionLog } from '../../../broker/log/partition-log.js';
import { PartitionWaiters } from '../../../broker/partition-waiters.js';
import { ErrorCode } from '../../../broker/protocol/errors.js';
import { answerReplicaFetch } from '../../../broker/replica/leader-fetch.js';
import type { FetchConnection } from '../../../broker/replica/replica-fetcher.js';
import { ReplicaManager } from '../../../broker/replica/replica-manager.js';
import type { ReplicationEvent } from '../../../broker/replica/replication-events.js';
import { ReplicationQuota, UNLIMITED_RATE } from '../../../broker/replica/replication-quota.js';
import { MetadataImageFollower } from '../../../metadata/cluster/image-follower.js';
import { initialProposals } from '../../../metadata/cluster/leader-election.js';
import { MemoryClusterMetadataStore, MemoryMetadataServer } from '../../../metadata/cluster/memory-store.js';
import type { PartitionState } from '../../../metadata/cluster/records.js';
import type { BrokerSession } from '../../../metadata/cluster/store.js';
import { preferredReadReplica } from '../../../broker/replica/replica-selector.js';
import { logConfig } from '../../../metadata/log-config.js';
import { batch } from '../log/helpers.js';

const TOPIC = 't';
const TOPIC_ID = 'AAAAAAAAAAAAAAAAAAAAAQ';
const LAG_MS = 30_000;
const FETCH_VERSION = 18;
const log = pino({ level: 'silent' });

interface Node {
  readonly nodeId: number;
  readonly store: MemoryClusterMetadataStore;
  readonly session: BrokerSession;
  readonly follower: MetadataImageFollower;
  readonly waiters: PartitionWaiters;
  readonly log: PartitionLog;
  manager: ReplicaManager;
  readonly events: ReplicationEvent[];
  /** False: this node's fetches fail as if its link to the leader were cut. */
  linkUp: boolean;
}

class Rig {
  readonly clock = new ManualClock();
  readonly scheduler = new ManualScheduler(this.clock);
  readonly server = new MemoryMetadataServer(this.clock, this.scheduler);
  readonly nodes = new Map<number, Node>();
  minIsr = 1;
  fetchMaxBytes = 1 << 20;
  /** Leader-side replication throttles, by leader node id. */
  readonly leaderQuotas = new Map<number, ReplicationQuota>();
  /** Follower-side replication throttles, by follower node id (read when the node starts). */
  readonly followerQuotas = new Map<number, ReplicationQuota>();

  constructor(readonly dir: string) {}

  async start(nodeId: number, rack: string | null = null): Promise<Node> {
    const store = new MemoryClusterMetadataStore(this.server);
    await store.initialize({ proposedClusterId: 'replica-test' });
    const session = await store.registerBroker(
      { nodeId, incarnationId: `inc-${nodeId}`, rack, endpoints: [{ name: 'PLAINTEXT', host: '127.0.0.1', port: 9000 + nodeId, securityProtocol: 'PLAINTEXT' }] },
      { sessionTimeoutMs: 9000, heartbeatIntervalMs: 2000 },
    );
    const partitionLog = await PartitionLog.open({ dir: path.join(this.dir, `n${nodeId}`, `${TOPIC}-0`), topic: TOPIC, partition: 0, topicId: TOPIC_ID, config: logConfig({}), clock: this.clock });
    const waiters = new PartitionWaiters(this.scheduler);
    let node: Node | undefined;
    const follower = new MetadataImageFollower(store, { scheduler: this.scheduler, onChange: () => node?.manager.reconcile() });
    await follower.start();
    node = { nodeId, store, session, follower, waiters, log: partitionLog, manager: undefined as unknown as ReplicaManager, events: [], linkUp: true };
    node.manager = this.manager(node);
    this.nodes.set(nodeId, node);
    node.manager.start();
    return node;
  }

  manager(node: Node): ReplicaManager {
    const followerQuota = this.followerQuotas.get(node.nodeId);
    const m = new ReplicaManager({
      ...(followerQuota === undefined ? {} : { followerQuota }),
      nodeId: node.nodeId,
      brokerEpoch: () => node.session.brokerEpoch,
      image: node.follower.image,
      store: node.store,
      logOf: (topic, partition) => (topic === TOPIC && partition === 0 ? node.log : undefined),
      minInsyncReplicas: () => this.minIsr,
      notify: (topic, partition) => node.waiters.notify(topic, partition),
      connect: async (_host, port) => this.connection(node, port - 9000),
      listenerName: 'PLAINTEXT',
      config: { numReplicaFetchers: 1, replicaLagTimeMaxMs: LAG_MS, fetch: { fetchMaxBytes: this.fetchMaxBytes, responseMaxBytes: 10 << 20, waitMaxMs: 500, minBytes: 1, backoffMs: 1000 } },
      clock: this.clock,
      scheduler: this.scheduler,
      log,
    });
    m.onEvent((e) => node.events.push(e));
    return m;
  }

  /** The follower `from`'s connection to `leaderId`: the leader's answer, in process. */
  connection(from: Node, leaderId: number): FetchConnection {
    // Closing the connection ends a fetch parked at the leader, as a closed socket would.
    const ac = new AbortController();
    const signal = ac.signal;
    return {
      fetch: async (build) => {
        const leader = this.nodes.get(leaderId);
        if (!from.linkUp || leader === undefined) throw new Error(`link ${from.nodeId} -> ${leaderId} is down`);
        const quota = this.leaderQuotas.get(leaderId);
        return answerReplicaFetch(
          { replicas: leader.manager, waiters: leader.waiters, clock: this.clock, topicNameById: (id) => (id === TOPIC_ID ? TOPIC : undefined), currentLeader: () => undefined, ...(quota === undefined ? {} : { quota }) },
          build(FETCH_VERSION),
          FETCH_VERSION,
          signal,
        );
      },
      close: () => ac.abort(),
    };
  }

  state(nodeId = 1): PartitionState | undefined {
    return this.nodes.get(nodeId)!.follower.image.partition(TOPIC_ID, 0);
  }

  async until(done: () => boolean, maxMs: number, what: string, stepMs = 50): Promise<number> {
    const start = this.clock.now();
    for (;;) {
      // The logs do real file I/O: each step lets the event loop wait for it (up to 1 ms of real time)
      // before simulated time moves on, so timeouts are never outrun by a slow disk.
      for (let i = 0; i < 5; i++) {
        await new Promise((r) => setTimeout(r, 1));
        for (let j = 0; j < 5; j++) await new Promise((r) => setImmediate(r));
      }
      if (done()) return this.clock.now() - start;
      if (this.clock.now() - start >= maxMs) throw new Error(`${what}: not within ${maxMs} ms of simulated time; ${this.describe()}`);
      this.clock.advance(stepMs);
    }
  }

  describe(): string {
    return [...this.nodes.values()].map((n) => `node ${n.nodeId}: role ${n.manager.replica(TOPIC, 0)?.role.kind}, LEO ${n.log.logEndOffset}, HW ${n.log.highWatermark}, epochs ${JSON.stringify(n.log.leaderEpochEntries().map((e) => [e.epoch, String(e.startOffset)]))}`).join('; ') + `; state ${JSON.stringify(this.state())}`;
  }

  async stop(): Promise<void> {
    for (const n of this.nodes.values()) {
      await n.manager.stop();
      await n.follower.close();
      await n.store.close();
      await n.log.close();
    }
  }
}

async function leaderAppend(n: Node, count: number, epoch: number, valueSize?: number): Promise<bigint> {
  const r = await n.log.append(batch({ count, ...(valueSize === undefined ? {} : { valueSize }) }), { leaderEpoch: epoch, isFromClient: true });
  n.manager.appended(TOPIC, 0);
  n.waiters.notify(TOPIC, 0);
  return r.lastOffset + 1n;
}

describe('ReplicaManager (two brokers, in-memory metadata twin, manual clock)', () => {
  let dir: string;
  let rig: Rig;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'sediment-replica-'));
    rig = new Rig(dir);
  });
  afterEach(async () => {
    await rig.stop();
    await rm(dir, { recursive: true, force: true });
  });

  async function twoReplicas(): Promise<{ leader: Node; follower: Node }> {
    const leader = await rig.start(1);
    const follower = await rig.start(2);
    await leader.store.createTopic({ topicId: TOPIC_ID, name: TOPIC, partitionCount: 1, configs: {} }, initialProposals([[1, 2]]));
    await rig.until(() => leader.manager.replica(TOPIC, 0)?.role.kind === 'leader' && follower.manager.replica(TOPIC, 0)?.role.kind === 'follower', 1000, 'roles');
    return { leader, follower };
  }

  it('DeleteRecords on the leader: the follower takes the leader\'s log start offset from its fetches and deletes its segments wholly below it', async () => {
    const { leader, follower } = await twoReplicas();
    let end = 0n;
    for (let i = 0; i < 4; i++) end = await leaderAppend(leader, 5, 0);
    await rig.until(() => follower.log.highWatermark === end, 5000, 'replicated');
    assert.equal(follower.log.logStartOffset, 0n);
    assert.equal(await leader.log.deleteRecordsBefore(12n), 12n);
    await leaderAppend(leader, 1, 0);
    await rig.until(() => follower.log.logStartOffset === 12n, 5000, 'the follower\'s log start follows the leader\'s');
    assert.equal(follower.log.localLogStartOffset, 12n);
  });

  async function replicatedTwenty(): Promise<{ leader: Node; follower: Node }> {
    const nodes = await twoReplicas();
    let end = 0n;
    for (let i = 0; i < 4; i++) end = await leaderAppend(nodes.leader, 5, 0);
    await rig.until(() => nodes.follower.log.highWatermark === end && nodes.leader.manager.lowWatermark(TOPIC, 0) === 0n, 5000, 'replicated');
    return nodes;
  }

  it('DeleteRecords waits for the low watermark (Kafka\'s DelayedDeleteRecords): answered NONE with it once the follower\'s fetch reports the moved log start; the parked fetch is answered at once, not at its max wait', async () => {
    const { leader, follower } = await replicatedTwenty();
    assert.equal(await leader.log.deleteRecordsBefore(12n), 12n);
    assert.equal(leader.manager.lowWatermark(TOPIC, 0), 0n, 'the follower still starts at 0');
    let answer: { errorCode: number; lowWatermark: bigint } | null = null;
    void leader.manager.awaitLowWatermark(TOPIC, 0, 12n, 30_000)!.then((r) => (answer = r));
    const took = await rig.until(() => answer !== null, 5000, 'DeleteRecords answered', 10);
    assert.deepEqual(answer, { errorCode: ErrorCode.NONE, lowWatermark: 12n });
    assert.equal(follower.log.logStartOffset, 12n);
    assert.ok(took < 500, `answered after ${took} ms of simulated time: the follower's long poll (500 ms) was not woken`);
  });

  it('DeleteRecords times out with REQUEST_TIMED_OUT and the low watermark as it was, while a live follower does not fetch', async () => {
    const { leader, follower } = await replicatedTwenty();
    follower.linkUp = false;
    await leader.log.deleteRecordsBefore(12n);
    let answer: { errorCode: number; lowWatermark: bigint } | null = null;
    void leader.manager.awaitLowWatermark(TOPIC, 0, 12n, 3000)!.then((r) => (answer = r));
    const took = await rig.until(() => answer !== null, 10_000, 'DeleteRecords answered');
    assert.deepEqual(answer, { errorCode: ErrorCode.REQUEST_TIMED_OUT, lowWatermark: 0n });
    assert.ok(took >= 3000, `answered after ${took} ms`);
    assert.equal(leader.manager.lowWatermark(TOPIC, 0), 0n, 'no fetch reported the follower\'s moved log start');
  });

  it('DeleteRecords: a follower whose broker is no longer registered does not hold the low watermark back', async () => {
    const { leader, follower } = await replicatedTwenty();
    follower.linkUp = false;
    await leader.log.deleteRecordsBefore(12n);
    let answer: { errorCode: number; lowWatermark: bigint } | null = null;
    void leader.manager.awaitLowWatermark(TOPIC, 0, 12n, 60_000)!.then((r) => (answer = r));
    await rig.until(() => rig.clock.now() >= 1000, 2000, 'a second passes');
    assert.equal(answer, null, 'waits while the follower is registered');
    await follower.session.close();
    await rig.until(() => answer !== null, 5000, 'DeleteRecords answered once the follower left the image');
    assert.deepEqual(answer, { errorCode: ErrorCode.NONE, lowWatermark: 12n });
  });

  it('DeleteRecords waiting for the low watermark fails NOT_LEADER_OR_FOLLOWER when leadership is lost; an unreplicated partition is not waited for', async () => {
    const { leader, follower } = await replicatedTwenty();
    follower.linkUp = false;
    await leader.log.deleteRecordsBefore(12n);
    let answer: { errorCode: number; lowWatermark: bigint } | null = null;
    void leader.manager.awaitLowWatermark(TOPIC, 0, 12n, 60_000)!.then((r) => (answer = r));
    leader.manager.sessionLost();
    await rig.until(() => answer !== null, 1000, 'DeleteRecords answered');
    assert.deepEqual(answer, { errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, lowWatermark: -1n });
    assert.equal(leader.manager.awaitLowWatermark('other', 0, 1n, 1000), null);
  });

  it('the HW is the follower\'s LEO once it fetched; acks=all answers then, and the follower holds the same batches', async () => {
    const { leader, follower } = await twoReplicas();
    const end = await leaderAppend(leader, 5, 0);
    assert.equal(leader.log.highWatermark, 0n, 'nothing is replicated yet');
    let answer: number | null = null;
    void leader.manager.awaitReplication(TOPIC, 0, end, 30_000).then((c) => (answer = c));
    await rig.until(() => answer !== null, 5000, 'acks=all answered');
    assert.equal(answer, ErrorCode.NONE);
    assert.equal(leader.log.highWatermark, end);
    assert.equal(follower.log.logEndOffset, end);
    await rig.until(() => follower.log.highWatermark === end, 2000, 'the follower learns the HW');
    const read = async (l: PartitionLog) => Buffer.concat((await l.read(0n, 1 << 20, { maxOffset: end, minOneBatch: true })).records);
    assert.deepEqual(await read(follower.log), await read(leader.log));
    assert.ok(leader.events.some((e) => e.type === 'high-watermark' && e.highWatermark === end));
    assert.ok(leader.events.some((e) => e.type === 'follower-lag' && e.replicaId === 2));
  });

  it('a lost session leaves every role (waiting acks fail NOT_LEADER_OR_FOLLOWER); registered again, the roles come back from the image and replication goes on', async () => {
    const { leader, follower } = await twoReplicas();
    await leaderAppend(leader, 1, 0);
    await rig.until(() => leader.log.highWatermark === 1n, 5000, 'first record replicated');
    const end = await leaderAppend(leader, 2, 0);
    follower.linkUp = false;
    let answer: number | null = null;
    void leader.manager.awaitReplication(TOPIC, 0, end, 30_000).then((c) => (answer = c));
    leader.manager.sessionLost();
    follower.manager.sessionLost();
    await rig.until(() => answer !== null, 1000, 'the waiting ack answered');
    assert.equal(answer, ErrorCode.NOT_LEADER_OR_FOLLOWER);
    assert.equal(leader.manager.replica(TOPIC, 0)?.role.kind, 'offline');
    assert.equal(follower.manager.replica(TOPIC, 0)?.role.kind, 'offline');
    leader.manager.reconcile();
    assert.equal(leader.manager.replica(TOPIC, 0)?.role.kind, 'offline', 'no role while the session is lost, whatever the image says');

    follower.linkUp = true;
    leader.manager.sessionStarted();
    follower.manager.sessionStarted();
    assert.equal(leader.manager.replica(TOPIC, 0)?.role.kind, 'leader');
    assert.equal(follower.manager.replica(TOPIC, 0)?.role.kind, 'follower');
    await rig.until(() => leader.log.highWatermark === end && follower.log.logEndOffset === end, 5000, 'replicated again');
  });

  it('a follower made follower while its leader had no registration starts fetching once the leader registers, with the leadership unchanged', async () => {
    const follower = await rig.start(2);
    await follower.store.createTopic({ topicId: TOPIC_ID, name: TOPIC, partitionCount: 1, configs: {} }, initialProposals([[1, 2]]));
    await rig.until(() => follower.manager.replica(TOPIC, 0)?.role.kind === 'follower', 1000, 'follower role without a registered leader');
    const leader = await rig.start(1);
    await rig.until(() => leader.manager.replica(TOPIC, 0)?.role.kind === 'leader', 1000, 'leader role');
    assert.deepEqual(rig.state(2)?.leaderEpoch, 0, 'no leadership change');
    const end = await leaderAppend(leader, 3, 0);
    await rig.until(() => follower.log.logEndOffset === end && leader.log.highWatermark === end, 5000, 'the follower fetched from the leader that registered');
  });

  it('KIP-392: the leader sees each replica\'s rack, log start and end and ISR membership; a follower out of the ISR is no longer preferred', async () => {
    const leader = await rig.start(1, 'a');
    const follower = await rig.start(2, 'b');
    await leader.store.createTopic({ topicId: TOPIC_ID, name: TOPIC, partitionCount: 1, configs: {} }, initialProposals([[1, 2]]));
    await rig.until(() => leader.manager.replica(TOPIC, 0)?.role.kind === 'leader' && follower.manager.replica(TOPIC, 0)?.role.kind === 'follower', 1000, 'roles');
    assert.equal(leader.manager.consumerStanding(TOPIC, 0), 'leader');
    assert.equal(follower.manager.consumerStanding(TOPIC, 0), 'follower');
    assert.equal(follower.manager.replicaViews(TOPIC, 0), undefined, 'only the leader has views');
    assert.equal(leader.manager.consumerStanding('other', 0), undefined);
    const end = await leaderAppend(leader, 4, 0);
    await rig.until(() => leader.manager.replicaViews(TOPIC, 0)?.[1]?.logEndOffset === end, 5000, 'the follower fetched to the end');
    assert.deepEqual(leader.manager.replicaViews(TOPIC, 0), [
      { replicaId: 1, rack: 'a', logStartOffset: 0n, logEndOffset: end, inSync: true },
      { replicaId: 2, rack: 'b', logStartOffset: 0n, logEndOffset: end, inSync: true },
    ]);
    const choose = () => preferredReadReplica({ selector: 'rack-aware', leaderId: 1, replicas: leader.manager.replicaViews(TOPIC, 0)!, clientRack: 'b', fetchOffset: 2n });
    assert.equal(choose(), 2);
    follower.linkUp = false;
    await leaderAppend(leader, 1, 0);
    await rig.until(() => (rig.state()?.isr.length ?? 0) === 1, 60_000, 'ISR shrink', 500);
    assert.equal(leader.manager.replicaViews(TOPIC, 0)?.[1]?.inSync, false);
    assert.equal(choose(), -1, 'back to the leader once the follower left the ISR');
  });

  it('KIP-392: consumers parked on a follower are woken when the replica fetcher moves its high watermark', async () => {
    const { leader, follower } = await twoReplicas();
    let woken = false;
    void follower.waiters.wait([PartitionWaiters.key(TOPIC, 0)], 600_000).then(() => (woken = true));
    const end = await leaderAppend(leader, 3, 0);
    await rig.until(() => woken, 5000, 'the follower woke its consumers');
    await rig.until(() => follower.log.highWatermark === end, 5000, 'the follower learns the HW');
  });

  it('acks=all times out with REQUEST_TIMED_OUT while a follower in the ISR does not fetch', async () => {
    const { leader, follower } = await twoReplicas();
    follower.linkUp = false;
    const end = await leaderAppend(leader, 1, 0);
    let answer: number | null = null;
    void leader.manager.awaitReplication(TOPIC, 0, end, 3000).then((c) => (answer = c));
    const took = await rig.until(() => answer !== null, 10_000, 'acks=all answered');
    assert.equal(answer, ErrorCode.REQUEST_TIMED_OUT);
    assert.ok(took >= 3000, `answered after ${took} ms`);
  });

  it('shrinks the ISR after replica.lag.time.max.ms (waiting acks=all then fail NOT_ENOUGH_REPLICAS_AFTER_APPEND) and grows it when the follower catches up', async () => {
    rig.minIsr = 2;
    const { leader, follower } = await twoReplicas();
    await leaderAppend(leader, 2, 0);
    await rig.until(() => leader.log.highWatermark === 2n, 5000, 'replicated');
    follower.linkUp = false;
    const end = await leaderAppend(leader, 3, 0);
    let answer: number | null = null;
    void leader.manager.awaitReplication(TOPIC, 0, end, 120_000).then((c) => (answer = c));
    const took = await rig.until(() => (rig.state()?.isr.length ?? 0) === 1, 60_000, 'ISR shrink', 500);
    assert.ok(took > LAG_MS && took <= LAG_MS * 1.5 + 1000, `shrank after ${took} ms`);
    assert.deepEqual(rig.state(), { replicas: [1, 2], leader: 1, leaderEpoch: 0, isr: [1], partitionEpoch: 1 });
    await rig.until(() => answer !== null, 1000, 'acks=all answered');
    assert.equal(answer, ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND, 'the HW moved to the leader alone, below min.insync.replicas');
    assert.equal(leader.manager.checkEnoughReplicas(TOPIC, 0), ErrorCode.NOT_ENOUGH_REPLICAS);
    assert.ok(leader.events.some((e) => e.type === 'isr-shrink' && e.changed.includes(2)));
    follower.linkUp = true;
    await rig.until(() => (rig.state()?.isr.length ?? 0) === 2, 10_000, 'ISR expand', 100);
    assert.deepEqual(rig.state(), { replicas: [1, 2], leader: 1, leaderEpoch: 0, isr: [1, 2], partitionEpoch: 2 });
    assert.equal(follower.log.logEndOffset, end);
    assert.equal(leader.manager.checkEnoughReplicas(TOPIC, 0), ErrorCode.NONE);
    assert.ok(leader.events.some((e) => e.type === 'isr-expand' && e.changed.includes(2)));
  });

  it('leader.replication.throttled.rate holds a follower outside the ISR to the rate; once in the ISR it is not held', async () => {
    rig.fetchMaxBytes = 2000;
    let limit = 1000;
    rig.leaderQuotas.set(1, new ReplicationQuota({ clock: rig.clock, limit: () => limit, throttled: (t, p) => t === TOPIC && p === 0 }));
    const { leader, follower } = await twoReplicas();
    follower.linkUp = false;
    const s = rig.state()!;
    await leader.store.alterPartition({ topicId: TOPIC_ID, partition: 0 }, { leaderEpoch: s.leaderEpoch, partitionEpoch: s.partitionEpoch }, { replicas: [1, 2], leader: 1, leaderEpoch: 0, isr: [1] });
    await rig.until(() => leader.manager.leaderState(TOPIC, 0)?.state.isr.length === 1, 1000, 'the follower out of the ISR');
    let end = 0n;
    for (let i = 0; i < 40; i++) end = await leaderAppend(leader, 1, 0, 1000);
    const total = leader.log.size;
    assert.ok(total > 40_000, `${total} bytes`);
    follower.linkUp = true;
    const t0 = rig.clock.now();
    await rig.until(() => rig.clock.now() - t0 >= 20_000, 30_000, '20 s of replication', 200);
    const fetched = follower.log.size;
    // At most the rate over the (at least 10 s) window, plus the one response that went over it.
    assert.ok(fetched > 0 && fetched <= 1000 * 20 + 2 * 2000, `the follower fetched ${fetched} of ${total} bytes in 20 s at 1000 B/s`);
    assert.ok(follower.log.logEndOffset < end, 'not caught up');
    limit = UNLIMITED_RATE;
    await rig.until(() => rig.state()?.isr.length === 2, 10_000, 'caught up and back in the ISR once unthrottled', 100);
    limit = 1000;
    const more = await (async () => {
      let e = 0n;
      for (let i = 0; i < 40; i++) e = await leaderAppend(leader, 1, 0, 1000);
      return e;
    })();
    await rig.until(() => follower.log.logEndOffset === more, 5000, 'an in-sync follower is not held back', 100);
  });

  it('follower.replication.throttled.rate: a follower outside the ISR leaves the throttled partition out of its fetches while over the rate', async () => {
    rig.fetchMaxBytes = 2000;
    let limit = 1000;
    const quota = new ReplicationQuota({ clock: rig.clock, limit: () => limit, throttled: (t, p) => t === TOPIC && p === 0 });
    rig.followerQuotas.set(2, quota);
    const { leader, follower } = await twoReplicas();
    follower.linkUp = false;
    const s = rig.state()!;
    await leader.store.alterPartition({ topicId: TOPIC_ID, partition: 0 }, { leaderEpoch: s.leaderEpoch, partitionEpoch: s.partitionEpoch }, { replicas: [1, 2], leader: 1, leaderEpoch: 0, isr: [1] });
    await rig.until(() => follower.follower.image.partition(TOPIC_ID, 0)?.isr.length === 1, 1000, 'the follower sees itself out of the ISR');
    let end = 0n;
    for (let i = 0; i < 40; i++) end = await leaderAppend(leader, 1, 0, 1000);
    follower.linkUp = true;
    const t0 = rig.clock.now();
    await rig.until(() => rig.clock.now() - t0 >= 20_000, 30_000, '20 s of replication', 200);
    const fetched = follower.log.size;
    assert.ok(fetched > 0 && fetched <= 1000 * 20 + 2 * 2000, `the follower fetched ${fetched} of ${leader.log.size} bytes in 20 s at 1000 B/s`);
    assert.ok(quota.rate() > 0);
    limit = UNLIMITED_RATE;
    await rig.until(() => follower.log.logEndOffset === end && rig.state()?.isr.length === 2, 10_000, 'caught up once unthrottled', 100);
  });

  it('an ISR change refused on a stale partition epoch is decided again from the store\'s state', async () => {
    const { leader, follower } = await twoReplicas();
    await leaderAppend(leader, 1, 0);
    await rig.until(() => leader.log.highWatermark === 1n, 5000, 'replicated');
    follower.linkUp = false;
    // Another writer (the controller) changes the partition first: same ISR, new partition epoch.
    const s = rig.state()!;
    await leader.store.alterPartition({ topicId: TOPIC_ID, partition: 0 }, { leaderEpoch: s.leaderEpoch, partitionEpoch: s.partitionEpoch }, { replicas: s.replicas, leader: 1, leaderEpoch: 0, isr: [1, 2] });
    await leaderAppend(leader, 1, 0);
    await rig.until(() => (rig.state()?.isr.length ?? 0) === 1, 60_000, 'ISR shrink', 500);
    assert.equal(rig.state()?.partitionEpoch, 2);
  });

  it('a new leader (epoch + 1) makes the old one a follower that truncates what only it had, then follows', async () => {
    const { leader, follower } = await twoReplicas();
    await leaderAppend(leader, 3, 0);
    await rig.until(() => follower.log.logEndOffset === 3n && leader.log.highWatermark === 3n, 5000, 'replicated');
    follower.linkUp = false;
    await leaderAppend(leader, 2, 0); // only on node 1
    // The controller moves leadership to node 2 (node 1 "died" and came back).
    const s = rig.state()!;
    await leader.store.alterPartition({ topicId: TOPIC_ID, partition: 0 }, { leaderEpoch: s.leaderEpoch, partitionEpoch: s.partitionEpoch }, { replicas: [1, 2], leader: 2, leaderEpoch: 1, isr: [2] });
    follower.linkUp = true;
    await rig.until(() => follower.manager.replica(TOPIC, 0)?.role.kind === 'leader' && leader.manager.replica(TOPIC, 0)?.role.kind === 'follower', 2000, 'roles swapped');
    const newEnd = await leaderAppend(follower, 4, 1);
    await rig.until(() => leader.log.logEndOffset === newEnd, 10_000, 'the old leader caught up');
    assert.ok(leader.events.some((e) => e.type === 'truncated' && e.from === 5n && e.to === 3n), JSON.stringify(leader.events.filter((e) => e.type === 'truncated'), (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v)));
    assert.deepEqual(leader.log.leaderEpochEntries(), [{ epoch: 0, startOffset: 0n }, { epoch: 1, startOffset: 3n }]);
    const read = async (l: PartitionLog) => Buffer.concat((await l.read(0n, 1 << 20, { maxOffset: newEnd, minOneBatch: true })).records);
    assert.deepEqual(await read(leader.log), await read(follower.log));
    await rig.until(() => (rig.state()?.isr.length ?? 0) === 2, 5000, 'the old leader back in the ISR');
  });

  it('a lost session takes every role away until the next session starts; then the roles follow the image as it is now', async () => {
    const { leader, follower } = await twoReplicas();
    await leaderAppend(leader, 2, 0);
    await rig.until(() => follower.log.logEndOffset === 2n && leader.log.highWatermark === 2n, 5000, 'replicated');
    let answer: number | null = null;
    const end = await leaderAppend(leader, 1, 0);
    follower.linkUp = false;
    void leader.manager.awaitReplication(TOPIC, 0, end, 30_000).then((c) => (answer = c));
    leader.manager.sessionLost();
    await rig.until(() => answer !== null, 1000, 'the waiting acks=all answered');
    assert.equal(answer, ErrorCode.NOT_LEADER_OR_FOLLOWER);
    assert.equal(leader.manager.replica(TOPIC, 0)?.role.kind, 'offline');
    // Meanwhile the controller makes node 2 the leader (epoch 1): node 1 takes no role while it has no session.
    const s = rig.state()!;
    await leader.store.alterPartition({ topicId: TOPIC_ID, partition: 0 }, { leaderEpoch: s.leaderEpoch, partitionEpoch: s.partitionEpoch }, { replicas: [1, 2], leader: 2, leaderEpoch: 1, isr: [2] });
    follower.linkUp = true;
    await rig.until(() => follower.manager.replica(TOPIC, 0)?.role.kind === 'leader' && rig.state(1)?.leaderEpoch === 1, 2000, 'node 2 leads');
    leader.manager.reconcile();
    assert.equal(leader.manager.replica(TOPIC, 0)?.role.kind, 'offline', 'no role without a session');
    assert.equal(leader.manager.checkEnoughReplicas(TOPIC, 0), ErrorCode.NONE);
    assert.equal(await leader.manager.awaitReplication(TOPIC, 0, end, 1000), ErrorCode.NOT_LEADER_OR_FOLLOWER, 'not a leader any more');
    leader.manager.sessionStarted();
    const role = leader.manager.replica(TOPIC, 0)?.role;
    assert.ok(role?.kind === 'follower' && role.leaderId === 2 && role.leaderEpoch === 1, JSON.stringify(role));
    const newEnd = await leaderAppend(follower, 2, 1);
    await rig.until(() => leader.log.logEndOffset === newEnd, 10_000, 'node 1 truncated its unreplicated record and caught up');
    await rig.until(() => (rig.state()?.isr.length ?? 0) === 2, 5000, 'node 1 back in the ISR');
  });
});
