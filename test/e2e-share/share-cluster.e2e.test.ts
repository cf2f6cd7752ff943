// Share groups in a cluster of three brokers over etcd: the topic's partitions
// are led by different brokers, the group coordinator is the one FindCoordinator
// names, and each leader keeps the share-partitions of the partitions it leads
// (their state in its own __share_group_state). Two Java KafkaShareConsumers
// receive every record exactly once. Group configs are kept per broker (not
// yet in the cluster metadata): share.auto.offset.reset is set on each broker.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { startEtcd, type EtcdServer } from '../support/etcd.js';
import { startSedimentCluster, type SedimentCluster } from '../support/sediment-cluster.js';
import { requireTools } from '../support/tools.js';
import { eventually } from '../e2e-groups/support.js';
import { apis } from '../../broker/protocol/messages/index.js';
import { BrokerConnection } from '../../broker/cli/broker-connection.js';
import { compileShareMember, createAndProduce, Ledger, ShareMember, type MemberEnv } from './support.js';

let etcd: EtcdServer;
let cluster: SedimentCluster;
let classes: string;
const members: ShareMember[] = [];

before(async () => {
  requireTools(['etcd', 'java', 'kafka', 'kafkajs']);
  classes = compileShareMember();
  etcd = await startEtcd();
  cluster = await startSedimentCluster({ etcd, brokers: 3, prefix: `/e2e-share-cluster-${process.pid}` });
});

after(async () => {
  for (const m of members) if (m.proc.alive) await m.proc.kill();
  await cluster?.close();
  await etcd?.stop();
  if (classes !== undefined) rmSync(classes, { recursive: true, force: true });
});

test('share consumers over three brokers: every record once, fetched from each partition\'s leader', { timeout: 400_000 }, async () => {
  const topic = 'share-spread';
  const values = Array.from({ length: 120 }, (_, i) => `spread-${i}`);
  await cluster.untilMetadata(1, [], (md) => md.brokers.length === 3, 30_000, 'three brokers');
  await createAndProduce(cluster.bootstrap, topic, 6, values);
  const md = await cluster.untilMetadata(1, [topic], (m) => (m.topics[0]?.partitions.length ?? 0) === 6, 30_000, 'the topic');
  const leaders = new Set(md.topics[0]!.partitions.map((p) => p.leader));
  assert.ok(leaders.size >= 2, `partitions led by several brokers: ${[...leaders].join(',')}`);
  for (const b of cluster.brokers) {
    const [host, port] = b.bootstrap.split(':');
    const conn = await BrokerConnection.connect(host!, Number(port));
    try {
      const { body } = await conn.send(apis.IncrementalAlterConfigs, () => ({
        resources: [{ resourceType: 32, resourceName: 'g-spread', configs: [{ name: 'share.auto.offset.reset', configOperation: 0, value: 'earliest' }] }],
        validateOnly: false,
      }));
      assert.equal(body.responses[0]!.errorCode, 0);
    } finally {
      conn.close();
    }
  }
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
});
