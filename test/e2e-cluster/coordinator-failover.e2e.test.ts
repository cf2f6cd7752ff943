// Coordinators follow partition leadership, with three `sediment start`
// processes and a real etcd. (1) A Java consumer group (kafka-clients 4.3.1,
// classic protocol) whose coordinator is the broker that also leads some of
// its partitions: that broker is killed with -9 and restarted; the member
// rides it out (its partitions and its coordinator unavailable meanwhile, with
// retriable errors), resumes from the committed offsets and consumes to the
// end: every offset of every partition processed, none skipped. (2) A kafkajs
// transactional producer whose transaction coordinator is killed -9 in the
// middle of a transaction and restarted: the restarted coordinator loads the
// transaction from __transaction_state and the producer commits it, then
// commits another; a read_committed consumer reads exactly the committed
// records, and every partition's last stable offset reaches its log end (the
// markers reached the partitions led by the other brokers, through
// WriteTxnMarkers). (3) SIGTERM is a controlled shutdown: with RF=1 it stops
// at once and restarts at once (the registration was revoked). Times are printed.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { Kafka, logLevel, Partitioners } from 'kafkajs';
import { AdminClient, type ClusterMetadata } from '../../broker/cli/admin-client.js';
import { BrokerConnection } from '../../broker/cli/broker-connection.js';
import { apis } from '../../broker/protocol/messages/index.js';
import { partitionForGroup } from '../../broker/group/offsets-topic.js';
import { ErrorCode } from '../../broker/protocol/errors.js';
import { createTopic } from '../clients/common.js';
import { startEtcd, type EtcdServer } from '../support/etcd.js';
import { startSedimentCluster, type SedimentCluster } from '../support/sediment-cluster.js';
import { requireTools } from '../support/tools.js';
import { compileGroupMember, JavaMember } from '../e2e-groups/java-member.js';
import { committedOffsets, eventually, logEndOffsets, ProcessedLedger, produceKeyed, withAdmin } from '../e2e-groups/support.js';

const SESSION_TIMEOUT_MS = 6000;
const OFFSETS_PARTITIONS = 50;
const TOPIC = 'failover';
const PARTITIONS = 6;

let etcd: EtcdServer;
let cluster: SedimentCluster;
let classDir: string | undefined;

/** host:port of one running broker (kafkajs helpers take a single address and find the rest). */
function one(): string {
  return cluster.bootstrap.split(',')[0]!;
}

/** FindCoordinator (key type 1) for a transactional id, asked of one broker: its error code. */
async function findTxnCoordinator(bootstrap: string, transactionalId: string): Promise<number> {
  const [host, port] = bootstrap.split(':');
  const conn = await BrokerConnection.connect(host!, Number(port));
  try {
    const { body } = await conn.send(apis.FindCoordinator, () => ({ key: transactionalId, keyType: 1, coordinatorKeys: [transactionalId] }));
    return body.coordinators[0]?.errorCode ?? body.errorCode;
  } finally {
    conn.close();
  }
}

/** The node leading `topic`-`partition` as node 1 sees it. */
async function leaderOf(topic: string, partition: number): Promise<number> {
  const md = await cluster.untilMetadata(1, [topic], (m) => (m.topics[0]?.partitions[partition]?.leader ?? -1) >= 0, 30_000, `${topic}-${partition} has a leader`);
  return md.topics[0]!.partitions[partition]!.leader;
}

/** A key (prefix-n) whose internal-topic partition is led by `nodeId`. */
async function keyCoordinatedBy(topic: string, nodeId: number, prefix: string): Promise<string> {
  const md = await cluster.untilMetadata(1, [topic], (m) => m.topics[0]?.partitions.length === OFFSETS_PARTITIONS && m.topics[0].partitions.every((p) => p.leader >= 0), 30_000, `${topic} created`);
  const leaders = md.topics[0]!.partitions.map((p) => p.leader);
  for (let i = 0; i < 10_000; i++) {
    const key = `${prefix}-${i}`;
    if (leaders[partitionForGroup(key, OFFSETS_PARTITIONS)] === nodeId) return key;
  }
  throw new Error(`no ${prefix} key is coordinated by node ${nodeId}: leaders ${leaders.join(',')}`);
}

/** Kills `nodeId` with -9, waits until the others show its partitions offline (its lease gone), restarts it. Returns the ms it was down. */
async function killAndRestart(nodeId: number, topic: string, during?: () => Promise<void>): Promise<number> {
  const observer = [1, 2, 3].find((id) => id !== nodeId)!;
  const md = await cluster.metadataFrom(observer, [topic]);
  const owned = md.topics[0]!.partitions.filter((p) => p.leader === nodeId).map((p) => p.partition);
  const killedAt = Date.now();
  await cluster.broker(nodeId).kill();
  const offline = await cluster.untilMetadata(observer, [topic], (m) => owned.every((p) => m.topics[0]?.partitions[p]?.leader === -1), SESSION_TIMEOUT_MS + 10_000, `node ${nodeId}'s partitions offline`);
  for (const p of owned) assert.equal(offline.topics[0]!.partitions[p]!.errorCode, ErrorCode.LEADER_NOT_AVAILABLE);
  await during?.();
  await cluster.broker(nodeId).start();
  await cluster.untilMetadata(observer, [topic], (m) => owned.every((p) => m.topics[0]?.partitions[p]?.leader === nodeId), 20_000, `node ${nodeId}'s partitions back`);
  return Date.now() - killedAt;
}

describe('coordinators follow partition leadership (3 brokers, etcd)', () => {
  before(async () => {
    requireTools(['etcd', 'kafkajs', 'java', 'kafka']);
    classDir = compileGroupMember();
    etcd = await startEtcd();
    cluster = await startSedimentCluster({
      etcd,
      brokers: 3,
      prefix: `/e2e-coordinators-${process.pid}`,
      overrides: {
        'broker.session.timeout.ms': String(SESSION_TIMEOUT_MS),
        'broker.heartbeat.interval.ms': '1000',
        'offsets.topic.num.partitions': String(OFFSETS_PARTITIONS),
        'transaction.state.log.num.partitions': String(OFFSETS_PARTITIONS),
        // One replica, so a killed coordinator's partitions go offline until it restarts (coordinator-failover-rf3 moves them).
        'offsets.topic.replication.factor': '1',
        'transaction.state.log.replication.factor': '1',
        'group.initial.rebalance.delay.ms': '0',
      },
    });
    await createTopic(cluster.broker(1).bootstrap, TOPIC, PARTITIONS);
  });
  after(async () => {
    await cluster?.close();
    await etcd?.stop();
    if (classDir !== undefined) rmSync(classDir, { recursive: true, force: true });
  });

  it('FindCoordinator names the leader of the group\'s __consumer_offsets partition, whichever broker is asked', async () => {
    // The first FindCoordinator creates __consumer_offsets (spread over the three), as in Kafka.
    const admin = await AdminClient.connect(cluster.broker(3).bootstrap, { retryMs: 30_000 });
    try {
      await admin.coordinator('probe');
    } finally {
      admin.close();
    }
    const md: ClusterMetadata = await cluster.metadataFrom(2, ['__consumer_offsets']);
    const leaders = md.topics[0]!.partitions.map((p) => p.leader);
    assert.deepEqual([...new Set(leaders)].sort(), [1, 2, 3], 'the offsets partitions are led by all three brokers');
    for (const node of [1, 2, 3]) {
      const group = await keyCoordinatedBy('__consumer_offsets', node, 'g');
      for (const asked of [1, 2, 3]) {
        const a = await AdminClient.connect(cluster.broker(asked).bootstrap, { retryMs: 30_000 });
        try {
          const conn = await a.coordinator(group);
          assert.equal(conn.address, cluster.broker(node).bootstrap, `broker ${asked} names node ${node} for ${group}`);
        } finally {
          a.close();
        }
      }
    }
  });

  it('a Java group keeps consuming across kill -9 and restart of its coordinator, which leads some of its partitions; nothing skipped', { timeout: 300_000 }, async () => {
    const victim = await leaderOf(TOPIC, 0);
    const group = await keyCoordinatedBy('__consumer_offsets', victim, 'java-failover');
    await produceKeyed(one(), TOPIC, 3000, { prefix: 'a' });
    const ledger = new ProcessedLedger();
    const member = new JavaMember({ classDir: classDir!, bootstrap: cluster.bootstrap, topic: TOPIC, group, sessionTimeoutMs: 30_000, ledger, name: 'failover' });
    try {
      let committedBefore: bigint[] = [];
      await eventually('the member consumed some records and committed', async () => {
        committedBefore = await withAdmin(cluster.bootstrap, (a) => committedOffsets(a, group, TOPIC, PARTITIONS));
        return committedBefore.some((o) => o > 0n);
      }, 120_000, () => member.proc.diagnostics());
      const downMs = await killAndRestart(victim, TOPIC, async () => {
        // Meanwhile the coordinator is unknown: FindCoordinator through a survivor is COORDINATOR_NOT_AVAILABLE.
        const survivor = [1, 2, 3].find((id) => id !== victim)!;
        const a = await AdminClient.connect(cluster.broker(survivor).bootstrap, { retryMs: 0 });
        try {
          await assert.rejects(a.coordinator(group), (e: unknown) => e instanceof Error && /COORDINATOR_NOT_AVAILABLE/.test(e.message));
        } finally {
          a.close();
        }
      });
      console.log(`# coordinator node ${victim} of ${group} killed -9 and restarted: down ${downMs} ms`);
      await produceKeyed(one(), TOPIC, 1500, { prefix: 'b', first: 3000 });
      const ends = await withAdmin(cluster.bootstrap, (a) => logEndOffsets(a, TOPIC, PARTITIONS));
      await eventually('the group committed every partition to its log end', async () => {
        const committed = await withAdmin(cluster.bootstrap, (a) => committedOffsets(a, group, TOPIC, PARTITIONS));
        return committed.every((o, p) => o === ends[p]);
      }, 120_000, () => member.proc.diagnostics());
      for (let p = 0; p < PARTITIONS; p++) {
        assert.equal(ledger.firstGap(p, ends[p]!), null, `partition ${p}: an offset below ${ends[p]} was never processed`);
        assert.ok(committedBefore[p]! <= ends[p]!);
      }
      assert.deepEqual(ledger.conflicts, []);
      assert.equal(ledger.allValues().size, 4500);
      assert.deepEqual(member.errors, []);
      const summary = ledger.summary(PARTITIONS);
      console.log(`# deliveries per partition after the failover: ${summary.map((s) => `${s.partition}:${s.distinct}/${s.deliveries}`).join(' ')}; generations ${[...member.gens].join(',')}`);
      await member.stop();
    } finally {
      if (member.proc.alive) member.proc.kill();
    }
  });

  it('a transactional producer commits the transaction it had open when its coordinator was killed -9, after the restart, and another', { timeout: 300_000 }, async () => {
    // The first FindCoordinator for a transactional id creates __transaction_state (COORDINATOR_NOT_AVAILABLE meanwhile).
    let probe = -1;
    await eventually('a transaction coordinator is found', async () => {
      probe = await findTxnCoordinator(cluster.broker(2).bootstrap, 'probe-txn');
      return probe === ErrorCode.NONE;
    }, 30_000, () => `last error ${probe}`);
    const kafka = new Kafka({ brokers: cluster.bootstrap.split(','), clientId: 'txn-failover', logLevel: logLevel.NOTHING, retry: { retries: 60, initialRetryTime: 200, maxRetryTime: 2000 } });
    const victim = await leaderOf(TOPIC, 1);
    const txnId = await keyCoordinatedBy('__transaction_state', victim, 'txn-failover');
    const producer = kafka.producer({ transactionalId: txnId, idempotent: true, maxInFlightRequests: 1, createPartitioner: Partitioners.DefaultPartitioner });
    await producer.connect();
    const values = (tag: string, n: number) => Array.from({ length: n }, (_, i) => ({ key: `tk-${i}`, value: `${tag}-${i}` }));
    try {
      const first = await producer.transaction();
      await first.send({ topic: TOPIC, messages: values('t1', 60) });
      await first.commit();
      // A transaction open when its coordinator dies: its records are in the (surviving and restarted) partitions.
      const open = await producer.transaction();
      const survivorPartitions = await (async () => {
        const md = await cluster.metadataFrom(1, [TOPIC]);
        return md.topics[0]!.partitions.filter((p) => p.leader !== victim).map((p) => p.partition);
      })();
      await open.send({ topic: TOPIC, messages: survivorPartitions.flatMap((partition) => values(`t2p${partition}`, 10).map((m) => ({ ...m, partition }))) });
      const downMs = await killAndRestart(victim, TOPIC);
      const commitAt = Date.now();
      await open.commit();
      console.log(`# transaction coordinator node ${victim} killed -9 and restarted (down ${downMs} ms); the open transaction committed ${Date.now() - commitAt} ms after the restart`);
      const third = await producer.transaction();
      await third.send({ topic: TOPIC, messages: values('t3', 60) });
      await third.commit();
      const aborted = await producer.transaction();
      await aborted.send({ topic: TOPIC, messages: values('aborted', 30) });
      await aborted.abort();
    } finally {
      await producer.disconnect();
    }
    const expected = new Set([...values('t1', 60), ...values('t3', 60)].map((m) => m.value));
    const md = await cluster.metadataFrom(1, [TOPIC]);
    for (const p of md.topics[0]!.partitions) if (p.leader !== victim) for (let i = 0; i < 10; i++) expected.add(`t2p${p.partition}-${i}`);
    // Every partition's last stable offset is its log end: no transaction left open anywhere.
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
    const consumer = kafka.consumer({ groupId: `txn-read-${process.pid}`, readUncommitted: false, maxWaitTimeInMs: 200 });
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
  it('SIGTERM is a controlled shutdown: with RF=1 nothing can move, the broker stops cleanly at once and restarts without waiting for a lease', { timeout: 120_000 }, async () => {
    const victim = await leaderOf(TOPIC, 2);
    const b = cluster.broker(victim);
    const stopAt = Date.now();
    const exit = await b.stop();
    const stopMs = Date.now() - stopAt;
    assert.deepEqual(exit, { code: 0, signal: null });
    const logs = b.logs.lines.map((l) => String(l['msg'] ?? ''));
    assert.ok(logs.includes('controlled shutdown: this broker leads no partition another in-sync replica could take'), logs.slice(-20).join('\n'));
    // Far below controlled.shutdown.max.retries x controlled.shutdown.retry.backoff.ms (3 x 5 s): nothing waited for.
    assert.ok(stopMs < 10_000, `stopped after ${stopMs} ms`);
    const restartAt = Date.now();
    await b.start();
    const observer = [1, 2, 3].find((id) => id !== victim)!;
    await cluster.untilMetadata(observer, [TOPIC], (m) => m.topics[0]?.partitions[2]?.leader === victim, 20_000, 'served again');
    console.log(`# controlled shutdown of node ${victim}: stopped in ${stopMs} ms; restarted and serving its partitions ${Date.now() - restartAt} ms later`);
  });
});
