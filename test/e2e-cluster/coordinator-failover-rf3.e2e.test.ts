// Coordinators move with their partitions' leadership when the coordinator
// topics are replicated (offsets.topic.replication.factor and
// transaction.state.log.replication.factor at their default 3, with three
// `sediment start` processes and a real etcd): (1) the coordinator of a Java
// consumer group (kafka-clients 4.3.1) is killed with -9 and NOT restarted;
// FindCoordinator names another broker within broker.session.timeout.ms and a
// few seconds, which loaded the group's offsets from its replica of
// __consumer_offsets: the member resumes from the committed offsets and
// consumes to the end, nothing skipped. (2) With the killed broker back, a
// kafkajs transactional producer's coordinator is killed -9 in the middle of a
// transaction and not restarted: the new coordinator loads the open
// transaction from its replica of __transaction_state, the producer commits
// it, and a read_committed consumer reads exactly the committed records.
// Times are printed.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { Kafka, logLevel, Partitioners } from 'kafkajs';
import { AdminClient } from '../../broker/cli/admin-client.js';
import { BrokerConnection } from '../../broker/cli/broker-connection.js';
import { apis } from '../../broker/protocol/messages/index.js';
import { partitionForGroup } from '../../broker/group/offsets-topic.js';
import { ErrorCode } from '../../broker/protocol/errors.js';
import { startEtcd, type EtcdServer } from '../support/etcd.js';
import { startSedimentCluster, type SedimentCluster } from '../support/sediment-cluster.js';
import { requireTools } from '../support/tools.js';
import { compileGroupMember, JavaMember } from '../e2e-groups/java-member.js';
import { committedOffsets, eventually, logEndOffsets, ProcessedLedger, produceKeyed, withAdmin } from '../e2e-groups/support.js';

const SESSION_TIMEOUT_MS = 6000;
/** Fewer coordinator partitions than Kafka's 50: 3 x 10 replicas to replicate on a loaded machine. */
const INTERNAL_PARTITIONS = 10;
const TOPIC = 'failover-rf3';
const PARTITIONS = 6;
/** "Within the session timeout and a few seconds": the lease expires, the controller elects, the new leader loads. */
const MOVE_BUDGET_MS = SESSION_TIMEOUT_MS + 8000;

let etcd: EtcdServer;
let cluster: SedimentCluster;
let classDir: string | undefined;

/** FindCoordinator (key type 0 group, 1 transactional id) asked of one broker: its error code and node. */
async function findCoordinator(nodeId: number, key: string, keyType: 0 | 1): Promise<{ errorCode: number; nodeId: number }> {
  const [host, port] = cluster.broker(nodeId).bootstrap.split(':');
  const conn = await BrokerConnection.connect(host!, Number(port));
  try {
    const { body } = await conn.send(apis.FindCoordinator, () => ({ key, keyType, coordinatorKeys: [key] }));
    const c = body.coordinators[0];
    return c === undefined ? { errorCode: body.errorCode, nodeId: body.nodeId } : { errorCode: c.errorCode, nodeId: c.nodeId };
  } finally {
    conn.close();
  }
}

/** Asks `observer` until the key's coordinator is a live broker other than `gone`: that node and the ms it took since `since`. */
async function untilMovedFrom(observer: number, key: string, keyType: 0 | 1, gone: number, since: number): Promise<{ nodeId: number; ms: number }> {
  let last = { errorCode: -1, nodeId: -1 };
  for (;;) {
    try {
      last = await findCoordinator(observer, key, keyType);
      if (last.errorCode === ErrorCode.NONE && last.nodeId !== gone) return { nodeId: last.nodeId, ms: Date.now() - since };
    } catch {
      // the observer is busy; ask again
    }
    if (Date.now() - since > MOVE_BUDGET_MS + 30_000) throw new Error(`${key}'s coordinator did not move from node ${gone}: last answer ${JSON.stringify(last)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A key (prefix-n) whose partition of the internal topic is led by `nodeId`, every partition of which has a leader and three in-sync replicas. */
async function keyCoordinatedBy(topic: string, nodeId: number, prefix: string): Promise<string> {
  const md = await cluster.untilMetadata(
    1,
    [topic],
    (m) => m.topics[0]?.partitions.length === INTERNAL_PARTITIONS && m.topics[0].partitions.every((p) => p.leader >= 0 && p.isr.length === 3),
    60_000,
    `${topic} created, fully in sync`,
  );
  const leaders = md.topics[0]!.partitions.map((p) => p.leader);
  for (let i = 0; i < 10_000; i++) {
    const key = `${prefix}-${i}`;
    if (leaders[partitionForGroup(key, INTERNAL_PARTITIONS)] === nodeId) return key;
  }
  throw new Error(`no ${prefix} key is coordinated by node ${nodeId}: leaders ${leaders.join(',')}`);
}

describe('replicated coordinator topics: coordinators move when their broker dies (3 brokers, etcd, RF 3)', () => {
  before(async () => {
    requireTools(['etcd', 'kafkajs', 'java', 'kafka']);
    classDir = compileGroupMember();
    etcd = await startEtcd();
    cluster = await startSedimentCluster({
      etcd,
      brokers: 3,
      prefix: `/e2e-coordinators-rf3-${process.pid}`,
      overrides: {
        'broker.session.timeout.ms': String(SESSION_TIMEOUT_MS),
        'broker.heartbeat.interval.ms': '1000',
        'offsets.topic.num.partitions': String(INTERNAL_PARTITIONS),
        'transaction.state.log.num.partitions': String(INTERNAL_PARTITIONS),
        'group.initial.rebalance.delay.ms': '0',
      },
    });
    const kafka = new Kafka({ clientId: 'rf3-admin', brokers: [cluster.broker(1).bootstrap], logLevel: logLevel.NOTHING });
    const admin = kafka.admin();
    await admin.connect();
    try {
      await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: PARTITIONS, replicationFactor: 3 }], waitForLeaders: true });
    } finally {
      await admin.disconnect();
    }
  });
  after(async () => {
    await cluster?.close();
    await etcd?.stop();
    if (classDir !== undefined) rmSync(classDir, { recursive: true, force: true });
  });

  it('the coordinator topics are created with 3 replicas by default, __transaction_state with min.insync.replicas 2', async () => {
    let probe = { errorCode: -1, nodeId: -1 };
    await eventually('group and transaction coordinators are found', async () => {
      probe = await findCoordinator(2, 'probe', 0);
      const txn = await findCoordinator(2, 'probe-txn', 1);
      return probe.errorCode === ErrorCode.NONE && txn.errorCode === ErrorCode.NONE;
    }, 60_000, () => JSON.stringify(probe));
    for (const topic of ['__consumer_offsets', '__transaction_state']) {
      const md = await cluster.untilMetadata(3, [topic], (m) => m.topics[0]?.partitions.length === INTERNAL_PARTITIONS, 30_000, `node 3 sees ${topic}`);
      assert.deepEqual(md.topics[0]!.partitions.map((p) => p.replicas.length), Array(INTERNAL_PARTITIONS).fill(3), `${topic} has 3 replicas per partition`);
    }
    // Broker 1 answers DescribeConfigs from its own image, which its etcd watch
    // may bring up to date after node 3's: a local npm test at cca8684 read no
    // min.insync.replicas there (most likely the topic not known there yet; the
    // error code is now asserted first, so a recurrence says which).
    await cluster.untilMetadata(1, ['__transaction_state'], (m) => m.topics[0]?.partitions.length === INTERNAL_PARTITIONS, 30_000, 'node 1 sees __transaction_state');
    const a = await AdminClient.connect(cluster.broker(1).bootstrap);
    try {
      const configs = (await a.describeTopicConfigs(['__transaction_state'])).get('__transaction_state');
      assert.equal(configs?.errorCode, ErrorCode.NONE, configs?.errorMessage ?? 'no result for __transaction_state');
      assert.equal(configs?.configs.find((c) => c.name === 'min.insync.replicas')?.value, '2');
    } finally {
      a.close();
    }
  });

  it('a Java group resumes from its committed offsets after kill -9 of its coordinator, which is not restarted: another broker coordinates it within the session timeout', { timeout: 300_000 }, async () => {
    const victim = 3;
    const group = await keyCoordinatedBy('__consumer_offsets', victim, 'java-rf3');
    await produceKeyed(cluster.broker(1).bootstrap, TOPIC, 3000, { prefix: 'a' });
    const ledger = new ProcessedLedger();
    const member = new JavaMember({ classDir: classDir!, bootstrap: cluster.bootstrap, topic: TOPIC, group, sessionTimeoutMs: 30_000, ledger, name: 'rf3' });
    try {
      let committedBefore: bigint[] = [];
      await eventually('the member consumed some records and committed', async () => {
        committedBefore = await withAdmin(cluster.broker(1).bootstrap, (a) => committedOffsets(a, group, TOPIC, PARTITIONS));
        return committedBefore.some((o) => o > 0n);
      }, 120_000, () => member.proc.diagnostics());
      const killedAt = Date.now();
      await cluster.broker(victim).kill();
      const moved = await untilMovedFrom(1, group, 0, victim, killedAt);
      console.log(`# group coordinator node ${victim} killed -9 (not restarted): FindCoordinator names node ${moved.nodeId} ${moved.ms} ms later (broker.session.timeout.ms ${SESSION_TIMEOUT_MS})`);
      assert.ok(moved.ms <= MOVE_BUDGET_MS, `the coordinator moved after ${moved.ms} ms`);
      // The new coordinator has the offsets committed before the kill (from its replica of __consumer_offsets).
      const after = await withAdmin(cluster.bootstrap, (a) => committedOffsets(a, group, TOPIC, PARTITIONS));
      for (let p = 0; p < PARTITIONS; p++) assert.ok(after[p]! >= committedBefore[p]!, `partition ${p}: committed ${after[p]} after the move, ${committedBefore[p]} before`);
      await produceKeyed(cluster.bootstrap.split(',')[0]!, TOPIC, 1500, { prefix: 'b', first: 3000 });
      const ends = await withAdmin(cluster.bootstrap, (a) => logEndOffsets(a, TOPIC, PARTITIONS));
      await eventually('the group committed every partition to its log end', async () => {
        const committed = await withAdmin(cluster.bootstrap, (a) => committedOffsets(a, group, TOPIC, PARTITIONS));
        return committed.every((o, p) => o === ends[p]);
      }, 180_000, () => member.proc.diagnostics());
      for (let p = 0; p < PARTITIONS; p++) assert.equal(ledger.firstGap(p, ends[p]!), null, `partition ${p}: an offset below ${ends[p]} was never processed`);
      assert.deepEqual(ledger.conflicts, []);
      assert.equal(ledger.allValues().size, 4500);
      assert.deepEqual(member.errors, []);
      const summary = ledger.summary(PARTITIONS);
      console.log(`# deliveries per partition after the move: ${summary.map((s) => `${s.partition}:${s.distinct}/${s.deliveries}`).join(' ')}; generations ${[...member.gens].join(',')}`);
      await member.stop();
    } finally {
      if (member.proc.alive) member.proc.kill();
    }
    // Back for the next test: min.insync.replicas 2 of __transaction_state needs two brokers after the next kill.
    await cluster.broker(victim).start();
    await cluster.untilMetadata(1, ['__transaction_state', TOPIC], (m) => m.topics.every((t) => t.partitions.every((p) => p.isr.length === 3)), 90_000, `node ${victim} back in every ISR`);
  });

  it('a transactional producer commits the transaction it had open when its coordinator was killed -9 and not restarted', { timeout: 300_000 }, async () => {
    const victim = 2;
    const txnId = await keyCoordinatedBy('__transaction_state', victim, 'txn-rf3');
    const kafka = new Kafka({ brokers: [cluster.broker(1).bootstrap], clientId: 'txn-rf3', logLevel: logLevel.NOTHING, retry: { retries: 60, initialRetryTime: 200, maxRetryTime: 2000 } });
    const producer = kafka.producer({ transactionalId: txnId, idempotent: true, maxInFlightRequests: 1, createPartitioner: Partitioners.DefaultPartitioner });
    await producer.connect();
    const values = (tag: string, n: number) => Array.from({ length: n }, (_, i) => ({ key: `tk-${i}`, value: `${tag}-${i}` }));
    let movedTo = -1;
    try {
      const first = await producer.transaction();
      await first.send({ topic: TOPIC, messages: values('t1', 60) });
      await first.commit();
      const open = await producer.transaction();
      await open.send({ topic: TOPIC, messages: values('t2', 60) });
      const killedAt = Date.now();
      await cluster.broker(victim).kill();
      const moved = await untilMovedFrom(1, txnId, 1, victim, killedAt);
      movedTo = moved.nodeId;
      const commitAt = Date.now();
      await open.commit();
      console.log(`# transaction coordinator node ${victim} killed -9 (not restarted): FindCoordinator names node ${moved.nodeId} ${moved.ms} ms later; the open transaction committed ${Date.now() - commitAt} ms after that`);
      assert.ok(moved.ms <= MOVE_BUDGET_MS, `the coordinator moved after ${moved.ms} ms`);
      const aborted = await producer.transaction();
      await aborted.send({ topic: TOPIC, messages: values('aborted', 30) });
      await aborted.abort();
    } finally {
      await producer.disconnect();
    }
    assert.notEqual(movedTo, victim);
    const expected = new Set([...values('t1', 60), ...values('t2', 60)].map((m) => m.value));
    await eventually('last stable offsets at the log ends', async () => {
      const a = await AdminClient.connect(cluster.bootstrap);
      try {
        const queries = Array.from({ length: PARTITIONS }, (_, partition) => ({ topic: TOPIC, partition, timestamp: -1n }));
        const lso = await a.listOffsets(queries, 1);
        const hw = new Map((await a.listOffsets(queries, 0)).map((x) => [x.partition, x.offset] as const));
        return lso.length === PARTITIONS && lso.every((x) => x.errorCode === ErrorCode.NONE && x.offset === hw.get(x.partition));
      } finally {
        a.close();
      }
    }, 60_000);
    const seen = new Set<string>();
    const consumer = kafka.consumer({ groupId: `txn-rf3-read-${process.pid}`, readUncommitted: false, maxWaitTimeInMs: 200 });
    await consumer.connect();
    await consumer.subscribe({ topic: TOPIC, fromBeginning: true });
    await consumer.run({ eachMessage: async ({ message }) => void seen.add(message.value?.toString() ?? '') });
    try {
      await eventually('the read_committed consumer saw every committed record', () => [...expected].every((v) => seen.has(v)), 120_000, () => `${seen.size} seen`);
    } finally {
      await consumer.disconnect();
    }
    const txnValues = [...seen].filter((v) => /^(t\d|aborted)/.test(v));
    assert.deepEqual(txnValues.filter((v) => v.startsWith('aborted')), [], 'aborted records are not read');
    assert.equal(new Set(txnValues).size, expected.size);
  });
});
