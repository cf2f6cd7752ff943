// Fetch from the closest replica (KIP-392) across three `sediment start`
// processes over a real etcd: brokers in racks a, b and c with
// replica.selector.class = RackAwareReplicaSelector, an RF 3 topic of three
// partitions written with acks=all; kcat (librdkafka) with client.rack=b reads
// every record, and the brokers' sediment_fetch_consumer_bytes_total shows that
// the rack-b broker served them all (as a follower for the partitions it does
// not lead) and the other leaders none; a consumer with no rack reads from the
// leaders; the Java consumer (Kafka 4.3.1's console consumer, in a group, with
// incremental fetch sessions) with client.rack=c is served by the rack-c broker.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { AdminClient, type ClusterMetadata } from '../../broker/cli/admin-client.js';
import { ErrorCode } from '../../broker/protocol/errors.js';
import { RACK_AWARE_REPLICA_SELECTOR } from '../../metadata/broker-config-defs.js';
import { runProcess } from '../clients/common.js';
import { cliJvmOptions } from '../compat/kafka-cli.js';
import { KafkaTool } from '../support/kafka-reference.js';
import { startEtcd, type EtcdServer } from '../support/etcd.js';
import { startSedimentCluster, type SedimentCluster } from '../support/sediment-cluster.js';
import { kafkaClasspath, kcatPath, repoRoot, requireTools } from '../support/tools.js';

const TOPIC = 'nearby';
const PARTITIONS = 3;
const PER_PARTITION = 200;
const RACKS: Readonly<Record<number, string>> = { 1: 'a', 2: 'b', 3: 'c' };
const RACK_B_NODE = 2;

let etcd: EtcdServer;
let cluster: SedimentCluster;

function leaders(md: ClusterMetadata): number[] {
  return (md.topics.find((t) => t.name === TOPIC)?.partitions ?? []).map((p) => p.leader);
}

/** One sample of a broker's /metrics, by its exact name and labels (0 before anything was counted). */
async function metric(nodeId: number, series: string): Promise<number> {
  const url = cluster.broker(nodeId).httpUrl;
  assert.ok(url !== null, `node ${nodeId} has an HTTP listener`);
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

/** sediment_fetch_consumer_bytes_total{topic="nearby"} of one broker. */
function consumerBytes(nodeId: number): Promise<number> {
  return metric(nodeId, `sediment_fetch_consumer_bytes_total{topic="${TOPIC}"}`);
}

async function allConsumerBytes(): Promise<Record<number, number>> {
  const out: Record<number, number> = {};
  for (const id of [1, 2, 3]) out[id] = await consumerBytes(id);
  return out;
}

/** Every record of the topic (all partitions, no group), `count` in all, with kcat's extra -X settings. */
async function kcatRead(count: number, extra: readonly string[]): Promise<string[]> {
  const c = await runProcess(kcatPath, ['-C', '-b', cluster.bootstrap, '-t', TOPIC, '-o', 'beginning', '-c', String(count), '-q', '-f', '%s\n', ...extra], { timeoutMs: 120_000 });
  assert.equal(c.code, 0, c.stderr);
  return c.stdout.split('\n').filter((l) => l !== '');
}

describe('fetch from the closest replica: racks a/b/c, RackAwareReplicaSelector, a client in rack b', () => {
  before(async () => {
    requireTools(['etcd', 'kcat', 'java', 'kafka']);
    etcd = await startEtcd();
    cluster = await startSedimentCluster({
      etcd,
      brokers: 3,
      prefix: `/e2e-closest-replica-${process.pid}`,
      overrides: { 'replica.selector.class': RACK_AWARE_REPLICA_SELECTOR, 'auto.leader.rebalance.enable': 'false' },
      brokerOverrides: (id) => ({ 'broker.rack': RACKS[id] ?? '' }),
    });
  });
  after(async () => {
    await cluster?.close();
    await etcd?.stop();
  });

  const written: string[] = [];
  let partitionLeaders: number[] = [];

  it('creates an RF 3 topic whose replicas are all in sync, and writes it with acks=all', async () => {
    const admin = await AdminClient.connect(cluster.broker(1).bootstrap);
    try {
      const [r] = await admin.createTopics([{ name: TOPIC, numPartitions: PARTITIONS, replicationFactor: 3, configs: new Map([['min.insync.replicas', '2']]) }]);
      assert.equal(r?.errorCode, ErrorCode.NONE, r?.errorMessage ?? '');
    } finally {
      admin.close();
    }
    for (const id of [1, 2, 3]) {
      const md = await cluster.untilMetadata(id, [TOPIC], (m) => {
        const ps = m.topics.find((t) => t.name === TOPIC)?.partitions ?? [];
        return ps.length === PARTITIONS && ps.every((p) => p.isr.length === 3 && p.leader > 0);
      }, 20_000, `every ISR of 3 on node ${id}`);
      partitionLeaders = leaders(md);
    }
    // Leaders spread over the brokers: at least one partition is led outside rack b, read from its follower there.
    assert.ok(partitionLeaders.some((l) => l !== RACK_B_NODE), `leaders ${partitionLeaders.join(',')}`);
    for (let p = 0; p < PARTITIONS; p++) {
      const values = Array.from({ length: PER_PARTITION }, (_, i) => `p${p}-${i}`);
      const input = values.map((v) => `${v}\n`).join('');
      const r = await runProcess(kcatPath, ['-P', '-b', cluster.bootstrap, '-t', TOPIC, '-p', String(p), '-X', 'acks=all', '-X', 'enable.idempotence=true', '-X', 'message.timeout.ms=30000'], { input, timeoutMs: 60_000 });
      assert.equal(r.code, 0, r.stderr);
      written.push(...values);
    }
    assert.deepEqual(await allConsumerBytes(), { 1: 0, 2: 0, 3: 0 }, 'nothing consumed yet');
  });

  it('a consumer with client.rack=b reads every record, all of them served by the rack-b broker', async () => {
    const got = await kcatRead(written.length, ['-X', 'client.rack=b']);
    assert.deepEqual([...got].sort(), [...written].sort());
    for (let p = 0; p < PARTITIONS; p++) {
      const inOrder = got.filter((v) => v.startsWith(`p${p}-`));
      assert.deepEqual(inOrder, written.filter((v) => v.startsWith(`p${p}-`)), `partition ${p} in order`);
    }
    const bytes = await allConsumerBytes();
    console.log(`client.rack=b: consumer bytes served per broker ${JSON.stringify(bytes)}; partition leaders ${partitionLeaders.join(',')} (rack-b broker ${RACK_B_NODE})`);
    assert.ok(bytes[RACK_B_NODE]! > written.length * 5, `the rack-b broker served the records (${bytes[RACK_B_NODE]} bytes)`);
    for (const id of [1, 3]) assert.equal(bytes[id], 0, `broker ${id} (rack ${RACKS[id]}${partitionLeaders.includes(id) ? ', a leader' : ''}) served no consumer bytes`);
  });

  it('a consumer naming no rack reads from the leaders', async () => {
    const before = await allConsumerBytes();
    const got = await kcatRead(written.length, []);
    assert.deepEqual([...got].sort(), [...written].sort());
    const after = await allConsumerBytes();
    for (const leader of new Set(partitionLeaders)) assert.ok(after[leader]! > before[leader]!, `leader ${leader} served it`);
    for (const id of [1, 2, 3]) if (!partitionLeaders.includes(id)) assert.equal(after[id], before[id], `non-leader ${id} served nothing`);
  });

  it('the Java consumer with client.rack=c, in a group and fetch sessions, reads every record from the rack-c broker', { timeout: 240_000 }, async () => {
    const before = await allConsumerBytes();
    const incrementalBefore = await metric(3, 'sediment_fetch_session_incremental_fetches_total');
    const log4j = path.join(repoRoot(), 'test', 'compat', 'java', 'log4j2.properties');
    const r = await runProcess('java', [
      ...cliJvmOptions, `-Dlog4j2.configurationFile=${log4j}`, '-cp', kafkaClasspath(), KafkaTool.consoleConsumer,
      '--bootstrap-server', cluster.bootstrap, '--topic', TOPIC, '--group', 'closest-java', '--from-beginning',
      '--max-messages', String(written.length), '--timeout-ms', '90000', '--consumer-property', 'client.rack=c',
    ], { timeoutMs: 180_000 });
    assert.equal(r.code, 0, `${r.stdout.slice(-2000)}\n${r.stderr.slice(-4000)}`);
    const got = r.stdout.split('\n').filter((l) => l.startsWith('p'));
    assert.deepEqual([...got].sort(), [...written].sort());
    const after = await allConsumerBytes();
    const served = { 1: after[1]! - before[1]!, 2: after[2]! - before[2]!, 3: after[3]! - before[3]! };
    console.log(`Java client.rack=c: consumer bytes served per broker ${JSON.stringify(served)}`);
    assert.ok(served[3] > written.length * 5, 'the rack-c broker served the records');
    assert.equal(served[1], 0, 'broker 1 (rack a) served none');
    assert.equal(served[2], 0, 'broker 2 (rack b) served none');
    const incremental = (await metric(3, 'sediment_fetch_session_incremental_fetches_total')) - incrementalBefore;
    console.log(`Java client.rack=c: ${incremental} incremental fetches in a session on the rack-c broker`);
    assert.ok(incremental > 0, 'the follower served the Java client in an incremental fetch session');
  });
});
