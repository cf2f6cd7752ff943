// `sediment topics --describe` against three `sediment start` processes over a
// real etcd, with broker 3 killed -9: per partition the leader (none for the
// RF=1 partition broker 3 led), the leader epoch (raised by the controller's
// change), replicas, ISR (broker 3 gone from the RF=3 topic's) and the offline
// replicas (3); the live brokers' /v1/partitions (what the console reads) shows
// each partition's leader, epoch and replicas.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AdminClient } from '../../broker/cli/admin-client.js';
import { startEtcd, type EtcdServer } from '../support/etcd.js';
import { startSedimentCluster, type SedimentCluster } from '../support/sediment-cluster.js';
import { requireTools } from '../support/tools.js';
import { cli, parseDescribe } from '../broker/cli/cli-harness.js';

const SESSION_TIMEOUT_MS = 6000;

let etcd: EtcdServer;
let cluster: SedimentCluster;

async function describeTopic(nodeId: number, topic: string): Promise<Array<Record<string, string>>> {
  const r = await cli('topics', ['--bootstrap-server', cluster.broker(nodeId).bootstrap, '--describe', '--topic', topic, '--http', 'none']);
  assert.equal(r.code, 0, r.stderr);
  const d = parseDescribe(r.stdout).get(topic);
  assert.ok(d !== undefined, r.stdout);
  return d.partitions;
}

function httpPortOf(nodeId: number): number {
  const line = cluster.broker(nodeId).logs.lines.find((l) => l.msg === 'sediment broker started');
  const port = (line as { httpPort?: unknown } | undefined)?.httpPort;
  assert.ok(typeof port === 'number' && port > 0, `broker ${nodeId} logged its HTTP port`);
  return port;
}

describe('sediment topics --describe in a cluster with a broker down', () => {
  before(async () => {
    requireTools(['etcd']);
    etcd = await startEtcd();
    cluster = await startSedimentCluster({
      etcd,
      brokers: 3,
      prefix: `/e2e-describe-${process.pid}`,
      overrides: { 'broker.session.timeout.ms': String(SESSION_TIMEOUT_MS), 'broker.heartbeat.interval.ms': '1000' },
    });
    const admin = await AdminClient.connect(cluster.broker(1).bootstrap);
    try {
      const created = await admin.createTopics([
        { name: 'single', numPartitions: 3, replicationFactor: 1, configs: new Map() },
        { name: 'triple', numPartitions: 1, replicationFactor: 3, configs: new Map() },
      ]);
      assert.deepEqual(created.map((c) => c.errorCode), [0, 0]);
    } finally {
      admin.close();
    }
    await cluster.untilMetadata(1, ['single', 'triple'], (md) => md.topics.every((t) => t.partitions.length > 0 && t.partitions.every((p) => p.leader > 0 && p.isr.length === p.replicas.length)), 30_000, 'both topics led, ISRs full');
  });
  after(async () => {
    await cluster?.close();
    await etcd?.stop();
  });

  it('with all brokers up: leaders, epochs, replicas and ISR as the metadata has them, nothing offline', async () => {
    const md = await cluster.metadataFrom(1, ['single', 'triple']);
    const rows = await describeTopic(1, 'single');
    const single = md.topics.find((t) => t.name === 'single')!;
    assert.equal(rows.length, 3);
    for (const [i, p] of single.partitions.entries()) {
      assert.deepEqual(
        [rows[i]!['Partition'], rows[i]!['Leader'], rows[i]!['LeaderEpoch'], rows[i]!['Replicas'], rows[i]!['Isr'], rows[i]!['Offline']],
        [String(p.partition), String(p.leader), String(p.leaderEpoch), String(p.leader), String(p.leader), ''],
      );
    }
    const [t] = await describeTopic(2, 'triple');
    assert.equal(t!['Replicas']!.split(',').sort().join(','), '1,2,3');
    assert.equal(t!['Isr']!.split(',').sort().join(','), '1,2,3');
    assert.equal(t!['Offline'], '');
  });

  it('broker 3 killed -9: its RF=1 partition has no leader and 3 offline; the RF=3 partition lost 3 from its ISR and shows it offline', async () => {
    const before = await cluster.metadataFrom(1, ['single', 'triple']);
    const led = before.topics.find((t) => t.name === 'single')!.partitions.find((p) => p.leader === 3)!;
    const tripleBefore = before.topics.find((t) => t.name === 'triple')!.partitions[0]!;
    await cluster.broker(3).kill();
    await cluster.untilMetadata(1, ['single', 'triple'], (md) => md.topics.every((t) => t.partitions.every((p) => !p.isr.includes(3) || p.leader === -1)) && md.brokers.length === 2, 4 * SESSION_TIMEOUT_MS, 'broker 3 out of the metadata');

    const rows = await describeTopic(1, 'single');
    const row = rows.find((r) => r['Partition'] === String(led.partition))!;
    assert.equal(row['Leader'], 'none');
    assert.equal(Number(row['LeaderEpoch']), led.leaderEpoch + 1, 'going offline raised the leader epoch');
    assert.equal(row['Replicas'], '3');
    assert.equal(row['Isr'], '3', 'the ISR is kept for when its broker comes back');
    assert.equal(row['Offline'], '3');
    assert.equal(row['HighWatermark'], 'n/a', 'no leader to ask');
    for (const other of rows.filter((r) => r !== row)) {
      assert.notEqual(other['Leader'], 'none');
      assert.equal(other['Offline'], '');
    }

    const [t] = await describeTopic(2, 'triple');
    assert.notEqual(t!['Leader'], '3');
    assert.equal(t!['Replicas']!.split(',').sort().join(','), '1,2,3');
    assert.equal(t!['Isr']!.split(',').sort().join(','), '1,2');
    assert.equal(t!['Offline'], '3');
    assert.ok(Number(t!['LeaderEpoch']) >= tripleBefore.leaderEpoch, 'epoch never goes back');
    if (tripleBefore.leader === 3) assert.equal(Number(t!['LeaderEpoch']), tripleBefore.leaderEpoch + 1, 'a new leader, a new epoch');
  });

  it("a live broker's /v1/partitions shows each of its partitions' leader, epoch, ISR and replicas", async () => {
    const res = await fetch(`http://127.0.0.1:${httpPortOf(1)}/v1/partitions?topic=triple`);
    assert.equal(res.status, 200);
    const body = (await res.json()) as Array<{ partition: number; replication?: { leader: number; leaderEpoch: number; isr: number[]; replicas: Array<{ nodeId: number; inSync: boolean }> } }>;
    assert.equal(body.length, 1);
    const r = body[0]!.replication;
    assert.ok(r !== undefined, JSON.stringify(body));
    assert.ok(r.leader === 1 || r.leader === 2, JSON.stringify(r));
    assert.deepEqual(r.replicas.map((x) => [x.nodeId, x.inSync]).sort(), [[1, true], [2, true], [3, false]]);
  });
});
