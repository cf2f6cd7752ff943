// Share groups in a cluster of three brokers over etcd: the topic's partitions
// are led by different brokers, the group coordinator is the one FindCoordinator
// names, and each share-partition's state is at its share coordinator, the
// leader of its __share_group_state partition (FindCoordinator key type 2;
// the topic has RF 3 here). Two Java KafkaShareConsumers receive every record
// exactly once. Then the state follows leadership: records are acknowledged,
// a member holds others (acquired, never acknowledged), and a broker is
// killed -9: first the leader of a user partition (not the coordinator of its
// share-partition), then, on another topic, the share coordinator of a
// share-partition (not its leader). A new member then receives every record
// not yet acknowledged, the held ones included, and none acknowledged again
// (the Ledger checks it). Group configs are in the cluster metadata:
// share.auto.offset.reset is set through one broker and every broker
// describes it (and acts on it).
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { startEtcd, type EtcdServer } from '../support/etcd.js';
import { startSedimentCluster, type SedimentCluster } from '../support/sediment-cluster.js';
import { requireTools } from '../support/tools.js';
import { eventually } from '../e2e-groups/support.js';
import { apis } from '../../broker/protocol/messages/index.js';
import { BrokerConnection } from '../../broker/cli/broker-connection.js';
import type { ClusterMetadata } from '../../broker/cli/admin-client.js';
import { partitionForShareKey } from '../../broker/share/share-coordinator.js';
import { compileShareMember, createAndProduce, Ledger, produce, ShareMember, type MemberEnv } from './support.js';

const SESSION_TIMEOUT_MS = 9000;

let etcd: EtcdServer;
let cluster: SedimentCluster;
let classes: string;
const members: ShareMember[] = [];

before(async () => {
  requireTools(['etcd', 'java', 'kafka', 'kafkajs']);
  classes = compileShareMember();
  etcd = await startEtcd();
  cluster = await startSedimentCluster({
    etcd,
    brokers: 3,
    prefix: `/e2e-share-cluster-${process.pid}`,
    overrides: {
      'broker.session.timeout.ms': String(SESSION_TIMEOUT_MS),
      'broker.heartbeat.interval.ms': '2000',
      'auto.leader.rebalance.enable': 'false',
      // Few partitions keep replication light on a small machine. (__consumer_offsets has one replica: Sediment allows no other.)
      'offsets.topic.num.partitions': '6',
      'share.coordinator.state.topic.replication.factor': '3',
      'share.coordinator.state.topic.num.partitions': '6',
    },
  });
});

after(async () => {
  for (const m of members) if (m.proc.alive) await m.proc.kill();
  await cluster?.close();
  await etcd?.stop();
  if (classes !== undefined) rmSync(classes, { recursive: true, force: true });
});

async function onBroker<T>(bootstrap: string, fn: (conn: BrokerConnection) => Promise<T>): Promise<T> {
  const [host, port] = bootstrap.split(':');
  const conn = await BrokerConnection.connect(host!, Number(port));
  try {
    return await fn(conn);
  } finally {
    conn.close();
  }
}

/** share.auto.offset.reset=earliest for the group, set through the last running broker; every running broker describes it at once. */
async function earliestEverywhere(group: string): Promise<void> {
  const alive = cluster.brokers.filter((x) => x.alive);
  const code = await onBroker(alive.at(-1)!.bootstrap, async (conn) => {
    const { body } = await conn.send(apis.IncrementalAlterConfigs, () => ({
      resources: [{ resourceType: 32, resourceName: group, configs: [{ name: 'share.auto.offset.reset', configOperation: 0, value: 'earliest' }] }],
      validateOnly: false,
    }));
    return body.responses[0]!.errorCode;
  });
  assert.equal(code, 0);
  for (const b of alive) {
    let value: string | null | undefined;
    await eventually(`the group config on ${b.bootstrap}`, async () => {
      value = await onBroker(b.bootstrap, async (conn) => {
        const { body } = await conn.send(apis.DescribeConfigs, () => ({ resources: [{ resourceType: 32, resourceName: group, configurationKeys: ['share.auto.offset.reset'] }], includeSynonyms: false, includeDocumentation: false }));
        return body.results[0]?.configs.find((c) => c.name === 'share.auto.offset.reset')?.value;
      });
      return value === 'earliest';
    }, 10_000, () => `share.auto.offset.reset=${String(value)}`);
  }
}

/** The coordinator of a key, as FindCoordinator answers it (key type 0 group, 2 share-partition "group:topicId:partition"). */
async function coordinatorOf(keyType: number, key: string): Promise<number> {
  const bootstrap = cluster.brokers.find((b) => b.alive)!.bootstrap;
  let node = -1;
  await eventually('a coordinator', async () => {
    node = await onBroker(bootstrap, async (conn) => {
      const { body } = await conn.send(apis.FindCoordinator, () => ({ key: '', keyType, coordinatorKeys: [key] }), { min: 4 });
      const c = body.coordinators[0]!;
      return c.errorCode === 0 ? c.nodeId : -1;
    });
    return node > 0;
  }, 60_000);
  return node;
}

test('share consumers over three brokers: every record once, fetched from each partition\'s leader', { timeout: 400_000 }, async () => {
  const topic = 'share-spread';
  const values = Array.from({ length: 120 }, (_, i) => `spread-${i}`);
  await cluster.untilMetadata(1, [], (md) => md.brokers.length === 3, 30_000, 'three brokers');
  await createAndProduce(cluster.bootstrap, topic, 6, values);
  const md = await cluster.untilMetadata(1, [topic], (m) => (m.topics[0]?.partitions.length ?? 0) === 6, 30_000, 'the topic');
  const leaders = new Set(md.topics[0]!.partitions.map((p) => p.leader));
  assert.ok(leaders.size >= 2, `partitions led by several brokers: ${[...leaders].join(',')}`);
  await earliestEverywhere('g-spread');
  const env: MemberEnv = { classes, get bootstrap() { return cluster.bootstrap; }, members };
  const ledger = new Ledger();
  const a = new ShareMember(env, 'a', ledger, 'g-spread', topic, 'explicit', false, {});
  const b = new ShareMember(env, 'b', ledger, 'g-spread', topic, 'explicit', false, {});
  await eventually('every record', () => ledger.distinct().size === values.length, 240_000, () => `${ledger.distinct().size} of ${values.length}\n${a.proc.diagnostics()}`);
  await a.stop();
  await b.stop();
  assert.deepEqual([...ledger.distinct()].filter((v) => ledger.seen(v).length > 1), [], 'none twice');
  assert.deepEqual(new Set(ledger.deliveries.map((d) => d.p)).size, 6, 'every partition delivered');
  assert.deepEqual([...a.errors, ...b.errors], []);
  // The state is at the share coordinators: __share_group_state is a cluster topic with three replicas.
  const state = await cluster.untilMetadata(1, ['__share_group_state'], (m) => (m.topics[0]?.partitions.length ?? 0) === 6, 30_000, '__share_group_state');
  assert.ok(state.topics[0]!.partitions.every((p) => p.replicas.length === 3), JSON.stringify(state.topics[0]!.partitions));
});

/**
 * Acknowledges the first records, holds some of the next ones in another
 * member, kills -9 the broker `pickVictim` names, then checks a new member
 * gets every record not acknowledged and none acknowledged again.
 */
async function failover(topic: string, groupBase: string, pickVictim: (leaders: Map<number, number>, coordinators: Map<number, number>, groupCoordinator: number) => { victim: number; partition: number } | null, moved: (md: ClusterMetadata, victim: number, partition: number, topicId: string, group: string) => boolean): Promise<void> {
  const first = Array.from({ length: 60 }, (_, i) => `${topic}-a-${i}`);
  const later = Array.from({ length: 30 }, (_, i) => `${topic}-b-${i}`);
  await createAndProduce(cluster.bootstrap, topic, 3, first, { 'min.insync.replicas': '2' }, 3);
  const alive = cluster.brokers.findIndex((b) => b.alive) + 1;
  const md = await cluster.untilMetadata(alive, [topic], (m) => (m.topics[0]?.partitions ?? []).every((p) => p.isr.length === 3) && m.topics[0]!.partitions.length === 3, 60_000, 'the topic in sync');
  const topicId = md.topics[0]!.topicId;
  const leaders = new Map(md.topics[0]!.partitions.map((p) => [p.partition, p.leader] as const));
  // The placement of share-partitions hangs on the group id: the first group whose placement allows the case.
  let group = '';
  let coordinators = new Map<number, number>();
  let groupCoordinator = -1;
  let picked: { victim: number; partition: number } | null = null;
  for (let i = 0; picked === null; i++) {
    if (i === 20) throw new Error(`no group of ${groupBase}-0..19 places its share-partitions for this case`);
    group = `${groupBase}-${i}`;
    coordinators = new Map();
    for (const p of leaders.keys()) coordinators.set(p, await coordinatorOf(2, `${group}:${topicId}:${p}`));
    groupCoordinator = await coordinatorOf(0, group);
    picked = pickVictim(leaders, coordinators, groupCoordinator);
  }
  const { victim, partition } = picked;
  await earliestEverywhere(group);
  const env: MemberEnv = { classes, get bootstrap() { return cluster.bootstrap; }, members };
  const ledger = new Ledger();
  const a = new ShareMember(env, 'a', ledger, group, topic, 'explicit', false, {});
  await eventually('the first records acknowledged', () => new Set(ledger.acks.map((x) => `${x.p}:${x.o}`)).size >= first.length, 180_000, () => `${ledger.acks.length} acks\n${a.proc.diagnostics()}`);
  await a.stop();
  const acked = ledger.acks.length;
  // A member that acquires records and never acknowledges them.
  const h = new ShareMember(env, 'h', ledger, group, topic, 'explicit', true, {});
  await produce(cluster.bootstrap, topic, 3, later);
  await eventually('the holding member to acquire', () => ledger.deliveries.some((d) => d.member === 'h'), 120_000, () => h.proc.diagnostics());
  const held = ledger.deliveries.filter((d) => d.member === 'h');
  console.log(`# ${topic}: leaders ${JSON.stringify([...leaders])}, share coordinators ${JSON.stringify([...coordinators])}, group coordinator ${groupCoordinator}; kill -9 of node ${victim} (partition ${partition}); member h holds ${held.length} records`);
  const killedAt = Date.now();
  await cluster.broker(victim).kill();
  const observer = cluster.brokers.findIndex((b) => b.alive) + 1;
  assert.equal(cluster.broker(victim).alive, false, 'the victim is dead');
  try {
    await cluster.untilMetadata(observer, [topic, '__share_group_state'], (m) => moved(m, victim, partition, topicId, group), 60_000, 'leadership away from the killed broker');
  } catch (e) {
    const logs = cluster.brokers.filter((b) => b.alive).map((b) => b.logs.tail(25)).join('\n---\n');
    throw new Error(`${(e as Error).message}\nlogs of the live brokers:\n${logs}`);
  }
  console.log(`# ${topic}: leadership moved ${Date.now() - killedAt} ms after the kill`);
  // __consumer_offsets has one replica: a killed group coordinator comes back only with its broker (after the move above).
  if (victim === groupCoordinator) await cluster.broker(victim).restart();
  // The held records come back when the member leaves (or on the new leader, from the coordinator's state).
  await h.stop();
  const b = new ShareMember(env, 'b', ledger, group, topic, 'explicit', false, {});
  const all = [...first, ...later];
  const toB = (d: { p: number; o: number }): boolean => ledger.deliveries.some((x) => x.member === 'b' && x.p === d.p && x.o === d.o);
  await eventually('every record after the kill', () => all.every((v) => ledger.seen(v).length > 0) && held.every(toB), 240_000, () => `${all.filter((v) => ledger.seen(v).length === 0).length} never delivered; held not yet redelivered: ${held.filter((d) => !toB(d)).map((d) => `${d.p}:${d.o}`).join(',')}\n${b.proc.diagnostics()}`);
  console.log(`# ${topic}: every record delivered ${Date.now() - killedAt} ms after the kill; b's ack errors: ${b.ackErrors.length}`);
  await b.stop();
  assert.deepEqual(ledger.redeliveredAfterAck(), [], 'nothing acknowledged is delivered again');
  assert.ok(acked >= first.length);
  assert.deepEqual([a, h, b].flatMap((m) => m.errors.filter((e) => !m.ackErrors.includes(e))), [], 'no consumer failed');
  if (!cluster.broker(victim).alive) await cluster.broker(victim).restart();
  await cluster.untilMetadata(victim === 1 ? 2 : 1, [], (m) => m.brokers.length === 3, 60_000, 'the victim back');
}

test('kill -9 of a partition\'s leader: its share-partition is loaded by the new leader from the share coordinator', { timeout: 600_000 }, async () => {
  await failover(
    'share-leader-kill',
    'g-leader-kill',
    (leaders, coordinators, groupCoordinator) => {
      const candidates = [...leaders].filter(([p, leader]) => coordinators.get(p) !== leader);
      const [p, leader] = candidates.find(([, l]) => l !== groupCoordinator) ?? candidates[0] ?? [];
      if (p === undefined || leader === undefined) return null;
      return { victim: leader, partition: p };
    },
    (md, victim, partition) => {
      const l = md.topics.find((t) => t.name === 'share-leader-kill')?.partitions[partition]?.leader;
      return l !== undefined && l >= 0 && l !== victim;
    },
  );
});

test('kill -9 of a share coordinator: its __share_group_state partition moves, the state with it', { timeout: 600_000 }, async () => {
  await failover(
    'share-coord-kill',
    'g-coord-kill',
    (leaders, coordinators, groupCoordinator) => {
      const candidates = [...coordinators].filter(([p, c]) => leaders.get(p) !== c);
      const [p, c] = candidates.find(([, x]) => x !== groupCoordinator) ?? candidates[0] ?? [];
      if (p === undefined || c === undefined) return null;
      return { victim: c, partition: p };
    },
    (md, victim, partition, topicId, group) => {
      const statePartition = partitionForShareKey(group, topicId, partition, 6);
      const l = md.topics.find((t) => t.name === '__share_group_state')?.partitions[statePartition]?.leader;
      return l !== undefined && l >= 0 && l !== victim;
    },
  );
});
