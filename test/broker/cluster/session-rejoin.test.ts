// A broker of a cluster whose session is lost stops leading, following,
// coordinating and controlling at once, then registers again and rejoins: a
// new broker epoch, live again, follower of the partitions others now lead
// (at higher leader epochs) until their leaders put it back in the ISR, and a
// controller candidate again. Three brokers in this process over the in-memory
// metadata twin, whose leases run on a manual clock the test drives (at five
// times real speed); cutting one broker's store client off loses its session.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AdminClient } from '../../../broker/cli/admin-client.js';
import { ManualClock } from '../../../broker/common/clock.js';
import { ManualScheduler } from '../../../broker/common/scheduler.js';
import { ErrorCode } from '../../../broker/protocol/errors.js';
import { MemoryClusterMetadataStore, MemoryMetadataServer } from '../../../metadata/cluster/memory-store.js';
import type { PartitionState } from '../../../metadata/cluster/records.js';
import { startSedimentInProcess, type InProcessSediment } from '../../support/sediment.js';

const TOPIC = 'rejoin';
const PARTITIONS = 3;
const SESSION_TIMEOUT_MS = 4000;

const clock = new ManualClock(Date.now());
const scheduler = new ManualScheduler(clock);
const server = new MemoryMetadataServer(clock, scheduler);
const stores = new Map<number, MemoryClusterMetadataStore>();
const brokers = new Map<number, InProcessSediment>();
let ticker: NodeJS.Timeout | undefined;

function node(id: number): InProcessSediment {
  const b = brokers.get(id);
  assert.ok(b !== undefined);
  return b;
}

function states(id: number): PartitionState[] {
  const image = node(id).broker.membership!.image;
  const t = image.topic(TOPIC);
  return t === undefined ? [] : image.partitions(t.topicId).filter((s): s is PartitionState => s !== undefined);
}

/** Polls (real time) until `done`; the cluster converges through watches and fetches, with no one event to await. */
async function until(done: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) {
      const lines = [...brokers.entries()].flatMap(([id, b]) => b.logs.lines.filter((l) => l['topic'] === TOPIC || l.level >= 40).slice(-15).map((l) => `node ${id}: ${JSON.stringify(l)}`));
      throw new Error(`${what}: not within ${timeoutMs} ms; partitions on node 1: ${JSON.stringify(states(1))}\n${lines.join('\n')}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

function roles(id: number): string[] {
  return node(id).broker.cluster!.replication!.manager.all().map((r) => r.role.kind);
}

describe('a broker whose cluster session is lost registers again and rejoins (three brokers in process, in-memory metadata twin)', () => {
  before(async () => {
    // Metadata time runs at five times real time: leases are kept alive unless a store client is cut off.
    ticker = setInterval(() => clock.advance(100), 20);
    for (const id of [1, 2, 3]) {
      const store = new MemoryClusterMetadataStore(server);
      stores.set(id, store);
      brokers.set(
        id,
        await startSedimentInProcess({
          metadataStore: store,
          logLevel: 'info',
          overrides: {
            'node.id': String(id),
            'etcd.connect': '127.0.0.1:2379/session-rejoin',
            'broker.session.timeout.ms': String(SESSION_TIMEOUT_MS),
            'broker.heartbeat.interval.ms': '1000',
            'auto.leader.rebalance.enable': 'false',
            'replica.fetch.backoff.ms': '200',
          },
        }),
      );
    }
  });
  after(async () => {
    for (const b of brokers.values()) await b.close().catch(() => undefined);
    if (ticker !== undefined) clearInterval(ticker);
  });

  let lostNode = -1;
  let firstEpoch = -1n;
  const before0: PartitionState[] = [];

  it('an RF 3 topic: every replica in the ISR, each broker leading one partition', async () => {
    const admin = await AdminClient.connect(node(1).bootstrap);
    try {
      const [r] = await admin.createTopics([{ name: TOPIC, numPartitions: PARTITIONS, replicationFactor: 3, configs: new Map([['min.insync.replicas', '2']]) }]);
      assert.equal(r?.errorCode, ErrorCode.NONE, r?.errorMessage ?? '');
    } finally {
      admin.close();
    }
    await until(() => [1, 2, 3].every((id) => states(id).length === PARTITIONS && states(id).every((s) => s.isr.length === 3)), 20_000, 'full ISRs');
    await until(() => [1, 2, 3].every((id) => roles(id).length === PARTITIONS), 10_000, 'roles taken');
    // The controller: it leads a partition too, so its loss tests every part at once.
    lostNode = node(1).broker.membership!.image.controllerId;
    assert.ok([1, 2, 3].includes(lostNode));
    assert.ok(states(lostNode).some((s) => s.leader === lostNode), 'the controller leads a partition');
    firstEpoch = node(lostNode).broker.membership!.session!.brokerEpoch;
    before0.push(...states(1));
  });

  it('session lost: it stops leading, following and controlling at once; the others elect new leaders at higher epochs', async () => {
    const lost = node(lostNode).broker;
    stores.get(lostNode)!.setReachable(false);
    await until(() => lost.membership!.session!.state === 'lost', 20_000, 'the session lost');
    assert.equal(lost.cluster!.view.isLive, false);
    assert.ok(roles(lostNode).every((r) => r === 'offline'), `roles after the loss: ${roles(lostNode).join(',')}`);
    assert.equal(lost.cluster!.isController, false);
    const other = [1, 2, 3].find((id) => id !== lostNode)!;
    await until(
      () => states(other).every((s) => s.leader !== lostNode && s.leader > 0 && !s.isr.includes(lostNode)),
      20_000,
      'leadership moved off the lost broker',
    );
    states(other).forEach((s, p) => {
      if (before0[p]!.leader === lostNode) assert.ok(s.leaderEpoch > before0[p]!.leaderEpoch, `partition ${p}: new leader ${s.leader} at epoch ${s.leaderEpoch} > ${before0[p]!.leaderEpoch}`);
    });
    assert.ok([1, 2, 3].some((id) => id !== lostNode && node(id).broker.cluster!.isController), 'another broker is the controller');
  });

  it('reachable again: registered under a higher broker epoch, live, following the new leaders, back in every ISR', async () => {
    const back = node(lostNode).broker;
    stores.get(lostNode)!.setReachable(true);
    await until(() => back.membership!.session!.state === 'live', 20_000, 'registered again');
    const epoch = back.membership!.session!.brokerEpoch;
    assert.ok(epoch > firstEpoch, `broker epoch ${epoch} > ${firstEpoch}`);
    assert.equal(back.cluster!.view.isLive, true);
    const other = [1, 2, 3].find((id) => id !== lostNode)!;
    await until(() => node(other).broker.membership!.image.broker(lostNode)?.brokerEpoch === epoch, 10_000, 'the others see the new registration');
    await until(() => roles(lostNode).every((r) => r === 'follower' || r === 'leader') && roles(lostNode).includes('follower'), 10_000, 'roles taken again');
    await until(() => states(other).every((s) => s.isr.length === 3), 30_000, 'back in every ISR');
    assert.ok(node(lostNode).logs.lines.some((l) => l.msg === 'registered in the cluster again' && l['brokerEpoch'] === String(epoch)));
  });

  it('a controller candidate again: with the other two cut off it becomes the controller, and they rejoin too', async () => {
    const others = [1, 2, 3].filter((id) => id !== lostNode);
    for (const id of others) stores.get(id)!.setReachable(false);
    await until(() => others.every((id) => node(id).broker.membership!.session!.state === 'lost'), 20_000, 'the other two lost their sessions');
    await until(() => node(lostNode).broker.cluster!.isController, 20_000, 'the rejoined broker elected controller');
    for (const id of others) stores.get(id)!.setReachable(true);
    await until(() => others.every((id) => node(id).broker.membership!.session!.state === 'live'), 20_000, 'both registered again');
    await until(() => states(lostNode).every((s) => s.isr.length === 3 && s.leader > 0), 30_000, 'every partition online with a full ISR');
  });
});
