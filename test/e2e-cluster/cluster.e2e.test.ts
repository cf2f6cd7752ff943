// Three `sediment start` processes and a real etcd: the cluster as clients see
// it. Every broker lists the live brokers and one controller; a topic created
// through any broker (kafkajs, and Kafka's own kafka-topics) has its leaders
// spread over the three, as kafka-topics --describe shows; kcat and kafkajs
// produce and consume (a kafkajs group too) through any bootstrap broker; a broker killed with -9
// takes its RF=1 partitions offline (retriable errors) until it restarts; a
// Fetch v16+ sent to a broker that does not lead names the leader, its epoch
// and endpoint (KIP-951); a killed controller is replaced within broker.session.timeout.ms (printed).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Kafka, logLevel, Partitioners } from 'kafkajs';
import { apis } from '../../broker/protocol/messages/index.js';
import type { FetchResponse } from '../../broker/protocol/messages/fetch.js';
import { BrokerConnection } from '../../broker/cli/broker-connection.js';
import { ErrorCode } from '../../broker/protocol/errors.js';
import { runProcess } from '../clients/common.js';
import { startEtcd, type EtcdServer } from '../support/etcd.js';
import { startSedimentCluster, type SedimentCluster } from '../support/sediment-cluster.js';
import { kcatPath, requireTools } from '../support/tools.js';
import type { ClusterMetadata } from '../../broker/cli/admin-client.js';
import { KafkaTool, runKafkaTool } from '../support/kafka-reference.js';

const SESSION_TIMEOUT_MS = 9000;
const TOPIC = 'spread';
const PARTITIONS = 6;
const MESSAGES = 60;

let etcd: EtcdServer;
let cluster: SedimentCluster;

function leadersOf(md: ClusterMetadata, topic: string): number[] {
  return md.topics.find((t) => t.name === topic)?.partitions.map((p) => p.leader) ?? [];
}

async function kcatProduce(bootstrap: string, from: number, count: number): Promise<void> {
  const input = Array.from({ length: count }, (_, k) => `k${from + k}\tv${from + k}\n`).join('');
  const p = await runProcess(kcatPath, ['-P', '-b', bootstrap, '-t', TOPIC, '-K', '\\t'], { input, timeoutMs: 60_000 });
  assert.equal(p.code, 0, p.stderr);
}

async function kcatKeys(bootstrap: string): Promise<string[]> {
  const c = await runProcess(kcatPath, ['-C', '-b', bootstrap, '-t', TOPIC, '-o', 'beginning', '-e', '-q', '-f', '%k\n'], { timeoutMs: 60_000 });
  assert.equal(c.code, 0, c.stderr);
  return c.stdout.split('\n').filter((l) => l !== '').sort();
}

/** ListOffsets for one partition sent to one broker, whatever it leads. */
async function listOffsetsAt(nodeId: number, partition: number): Promise<number> {
  const [host, port] = cluster.broker(nodeId).bootstrap.split(':');
  const conn = await BrokerConnection.connect(host!, Number(port));
  try {
    const { body } = await conn.send(apis.ListOffsets, () => ({
      replicaId: -1,
      isolationLevel: 0,
      topics: [{ name: TOPIC, partitions: [{ partitionIndex: partition, currentLeaderEpoch: -1, timestamp: -1n, maxNumOffsets: 1 }] }],
      timeoutMs: 10_000,
    }));
    return body.topics[0]!.partitions[0]!.errorCode;
  } finally {
    conn.close();
  }
}

/** A consumer's sessionless Fetch of one partition (by topic id, v13+) sent to one broker, whatever it leads. */
async function fetchAt(nodeId: number, topicId: string, partition: number, want: { min?: number; max?: number }): Promise<{ version: number; body: FetchResponse }> {
  const [host, port] = cluster.broker(nodeId).bootstrap.split(':');
  const conn = await BrokerConnection.connect(host!, Number(port));
  try {
    return await conn.send(apis.Fetch, () => ({
      replicaId: -1,
      maxWaitMs: 0,
      minBytes: 1,
      maxBytes: 1 << 20,
      isolationLevel: 0,
      sessionId: 0,
      sessionEpoch: -1,
      topics: [{ topic: TOPIC, topicId, partitions: [{ partition, currentLeaderEpoch: -1, fetchOffset: 0n, lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: 1 << 20 }] }],
      forgottenTopicsData: [],
      rackId: '',
    }), want);
  } finally {
    conn.close();
  }
}

describe('a cluster of three broker processes over etcd', () => {
  before(async () => {
    requireTools(['etcd', 'kcat', 'kafkajs', 'java', 'kafka']);
    etcd = await startEtcd();
    cluster = await startSedimentCluster({
      etcd,
      brokers: 3,
      prefix: `/e2e-cluster-${process.pid}`,
      overrides: { 'broker.session.timeout.ms': String(SESSION_TIMEOUT_MS), 'broker.heartbeat.interval.ms': '2000' },
    });
  });
  after(async () => {
    await cluster?.close();
    await etcd?.stop();
  });

  it('every broker lists the three brokers and the same controller', async () => {
    const answers = await Promise.all([1, 2, 3].map((id) =>
      cluster.untilMetadata(id, [], (md) => md.brokers.length === 3 && md.controllerId > 0, 10_000, `metadata of node ${id}`),
    ));
    for (const md of answers) {
      assert.deepEqual(md.brokers.map((b) => b.nodeId).sort(), [1, 2, 3]);
      assert.equal(md.controllerId, answers[0]!.controllerId);
      assert.equal(md.clusterId, answers[0]!.clusterId);
    }
    for (const id of [1, 2, 3]) assert.equal(md0port(answers[0]!, id), cluster.broker(id).bootstrap);
  });

  it('a topic created through one broker is served by all, its leaders spread over the three', async () => {
    const kafka = new Kafka({ clientId: 'cluster-e2e', brokers: [cluster.broker(2).bootstrap], logLevel: logLevel.NOTHING });
    const admin = kafka.admin();
    await admin.connect();
    try {
      assert.equal(await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: PARTITIONS }], waitForLeaders: true }), true);
    } finally {
      await admin.disconnect();
    }
    for (const id of [1, 2, 3]) {
      const md = await cluster.untilMetadata(id, [TOPIC], (m) => leadersOf(m, TOPIC).length === PARTITIONS && leadersOf(m, TOPIC).every((l) => l > 0), 10_000, `topic on node ${id}`);
      const counts = new Map<number, number>();
      for (const l of leadersOf(md, TOPIC)) counts.set(l, (counts.get(l) ?? 0) + 1);
      assert.deepEqual([...counts.entries()].sort(), [[1, 2], [2, 2], [3, 2]], `leaders from node ${id}: ${leadersOf(md, TOPIC).join(',')}`);
      for (const p of md.topics[0]!.partitions) {
        assert.deepEqual(p.replicas, [p.leader]);
        assert.deepEqual(p.isr, [p.leader]);
      }
    }
  });

  it('a Fetch v16+ sent to a broker that does not lead answers NOT_LEADER_OR_FOLLOWER with the leader, its epoch and endpoint (KIP-951); v15 without', async () => {
    const md = await cluster.metadataFrom(1, [TOPIC]);
    const topic = md.topics.find((t) => t.name === TOPIC);
    assert.ok(topic !== undefined);
    for (const p of topic.partitions) {
      const elsewhere = [1, 2, 3].find((id) => id !== p.leader)!;
      const v16 = await fetchAt(elsewhere, topic.topicId, p.partition, { min: 16 });
      const v15 = await fetchAt(elsewhere, topic.topicId, p.partition, { max: 15 });
      const answered = v16.body.responses[0]?.partitions[0];
      assert.ok(v16.version >= 16, `version ${v16.version}`);
      assert.equal(answered?.errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER, `partition ${p.partition} at node ${elsewhere}`);
      assert.deepEqual(answered?.currentLeader, { leaderId: p.leader, leaderEpoch: p.leaderEpoch }, `partition ${p.partition} at node ${elsewhere}`);
      assert.deepEqual(v16.body.nodeEndpoints?.map((e) => ({ nodeId: e.nodeId, endpoint: `${e.host}:${e.port}` })), [{ nodeId: p.leader, endpoint: cluster.broker(p.leader).bootstrap }]);
      assert.equal(v15.version, 15);
      assert.equal(v15.body.responses[0]?.partitions[0]?.errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER);
      assert.deepEqual(v15.body.responses[0]?.partitions[0]?.currentLeader, { leaderId: -1, leaderEpoch: -1 }, 'v15: no CurrentLeader on the wire');
      assert.deepEqual(v15.body.nodeEndpoints ?? [], []);
    }
  });

  it("Kafka's kafka-topics (Java admin client) creates through one broker and --describe through another shows the leaders spread", async () => {
    const created = await runKafkaTool(KafkaTool.topics, ['--bootstrap-server', cluster.broker(1).bootstrap, '--create', '--topic', 'java-spread', '--partitions', '3', '--replication-factor', '1']);
    assert.match(created.stdout, /Created topic java-spread\./);
    const described = await runKafkaTool(KafkaTool.topics, ['--bootstrap-server', cluster.broker(3).bootstrap, '--describe', '--topic', 'java-spread']);
    const rows = described.stdout.split('\n').filter((l) => l.includes('Partition: ')).map((l) => /Partition: (\d+)\tLeader: (\S+)\tReplicas: (\S*)\tIsr: (\S*)/.exec(l));
    assert.equal(rows.length, 3, described.stdout);
    const leaders = rows.map((m) => {
      assert.ok(m !== null, described.stdout);
      assert.equal(m[3], m[2], 'replicas = [leader]');
      assert.equal(m[4], m[2], 'isr = [leader]');
      return Number(m[2]);
    });
    assert.deepEqual([...leaders].sort(), [1, 2, 3], described.stdout);
    const md = await cluster.metadataFrom(2, ['java-spread']);
    assert.deepEqual(leadersOf(md, 'java-spread'), leaders);
  });

  it('kcat and kafkajs produce and consume through any bootstrap broker', async () => {
    await kcatProduce(cluster.broker(1).bootstrap, 0, MESSAGES / 2);
    const kafka = new Kafka({ clientId: 'cluster-e2e', brokers: [cluster.broker(3).bootstrap], logLevel: logLevel.NOTHING });
    const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
    await producer.connect();
    try {
      await producer.send({ topic: TOPIC, messages: Array.from({ length: MESSAGES / 2 }, (_, i) => ({ key: `k${MESSAGES / 2 + i}`, value: `v${MESSAGES / 2 + i}` })) });
    } finally {
      await producer.disconnect();
    }
    const expected = Array.from({ length: MESSAGES }, (_, k) => `k${k}`).sort();
    for (const id of [1, 2, 3]) assert.deepEqual(await kcatKeys(cluster.broker(id).bootstrap), expected, `consumed through node ${id}`);
    // A consumer group through another bootstrap broker: FindCoordinator is answered alike by every broker.
    const consumer = new Kafka({ clientId: 'cluster-e2e', brokers: [cluster.broker(2).bootstrap], logLevel: logLevel.NOTHING }).consumer({ groupId: 'cluster-e2e-group' });
    await consumer.connect();
    try {
      await consumer.subscribe({ topic: TOPIC, fromBeginning: true });
      const seen = new Set<string>();
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`group consumed ${seen.size} of ${MESSAGES} within 60 s`)), 60_000);
        void consumer.run({
          eachMessage: async ({ message }) => {
            seen.add(message.key?.toString() ?? '');
            if (seen.size === MESSAGES) {
              clearTimeout(timer);
              resolve();
            }
          },
        });
      });
      assert.deepEqual([...seen].sort(), expected);
    } finally {
      await consumer.disconnect();
    }
  });

  it('kill -9 of a broker: its RF=1 partitions go offline with retriable errors and come back when it restarts', async () => {
    const before = await cluster.metadataFrom(1, [TOPIC]);
    const victim = [1, 2, 3].find((id) => id !== before.controllerId)!;
    const observer = [1, 2, 3].find((id) => id !== victim)!;
    const owned = before.topics[0]!.partitions.filter((p) => p.leader === victim).map((p) => p.partition);
    assert.equal(owned.length, 2);
    const killedAt = Date.now();
    await cluster.broker(victim).kill();
    const offline = await cluster.untilMetadata(observer, [TOPIC], (md) => owned.every((p) => md.topics[0]?.partitions[p]?.leader === -1), SESSION_TIMEOUT_MS + 5000, 'partitions offline');
    const offlineMs = Date.now() - killedAt;
    console.log(`# kill -9 of node ${victim} -> its partitions offline on node ${observer} after ${offlineMs} ms (broker.session.timeout.ms=${SESSION_TIMEOUT_MS})`);
    for (const p of owned) {
      assert.equal(offline.topics[0]!.partitions[p]!.errorCode, ErrorCode.LEADER_NOT_AVAILABLE);
      assert.equal(await listOffsetsAt(observer, p), ErrorCode.NOT_LEADER_OR_FOLLOWER);
    }
    assert.deepEqual(offline.brokers.map((b) => b.nodeId).sort(), [1, 2, 3].filter((id) => id !== victim));
    // The other partitions still take writes through the survivors.
    const restartAt = Date.now();
    await cluster.broker(victim).start();
    await cluster.untilMetadata(observer, [TOPIC], (md) => owned.every((p) => md.topics[0]?.partitions[p]?.leader === victim), 10_000, 'partitions back');
    console.log(`# node ${victim} restarted -> its partitions served again after ${Date.now() - restartAt} ms from the restart`);
    const expected = Array.from({ length: MESSAGES }, (_, k) => `k${k}`).sort();
    assert.deepEqual(await kcatKeys(cluster.bootstrap), expected, 'nothing lost across the kill');
  });

  it('kill -9 of the controller: another broker is the controller within broker.session.timeout.ms', async () => {
    const before = await cluster.metadataFrom(1, [TOPIC]);
    const old = before.controllerId;
    assert.equal(leadersOf(before, TOPIC).filter((l) => l === old).length, 2);
    const observer = [1, 2, 3].find((id) => id !== old)!;
    const killedAt = Date.now();
    await cluster.broker(old).kill();
    const md = await cluster.untilMetadata(observer, [TOPIC], (m) => m.controllerId > 0 && m.controllerId !== old, SESSION_TIMEOUT_MS + 5000, 'a new controller', 50);
    const tookMs = Date.now() - killedAt;
    console.log(`# kill -9 of controller node ${old} -> node ${md.controllerId} is the controller after ${tookMs} ms (broker.session.timeout.ms=${SESSION_TIMEOUT_MS})`);
    assert.ok(tookMs <= SESSION_TIMEOUT_MS + 1000, `new controller after ${tookMs} ms`);
    // The new controller acts: the old one's partitions go offline.
    await cluster.untilMetadata(observer, [TOPIC], (m) => !leadersOf(m, TOPIC).includes(old) && leadersOf(m, TOPIC).includes(-1), 5000, 'the old controller\'s partitions offline');
    await cluster.broker(old).start();
    await cluster.untilMetadata(observer, [TOPIC], (m) => leadersOf(m, TOPIC).filter((l) => l === old).length === 2 && m.brokers.length === 3, 10_000, 'old controller back as a broker');
  });
});

function md0port(md: ClusterMetadata, nodeId: number): string {
  const b = md.brokers.find((x) => x.nodeId === nodeId);
  return b === undefined ? '' : `${b.host}:${b.port}`;
}
