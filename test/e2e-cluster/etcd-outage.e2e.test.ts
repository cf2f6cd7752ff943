// etcd killed -9 and restarted (same data dir and port) under load: three
// `sediment start` processes, an RF=1 topic with one partition led by each; a
// kafkajs producer (acks=all) writes continuously. While etcd is down, for a
// few seconds (less than broker.session.timeout.ms): every broker keeps leading
// its partitions, produce and fetch go on, CreateTopics fails with a retriable
// error (REQUEST_TIMED_OUT, as Kafka answers when its controller cannot be
// reached); after the restart no session was lost, the watches resume (a topic
// created then is seen by every broker) and every acknowledged record is read
// back. An outage longer than the session timeout: the brokers count their
// sessions lost and stop leading (retriable errors), then, etcd back, they
// register again by themselves and serve their partitions again, nothing
// acknowledged lost. The outage and the produce figures are printed.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Kafka, logLevel } from 'kafkajs';
import { AdminClient } from '../../broker/cli/admin-client.js';
import { ErrorCode, errorName } from '../../broker/protocol/errors.js';
import { runProcess } from '../clients/common.js';
import { startEtcd, type EtcdServer } from '../support/etcd.js';
import { startSedimentCluster, type SedimentCluster } from '../support/sediment-cluster.js';
import { kcatPath, requireTools } from '../support/tools.js';

const SESSION_TIMEOUT_MS = 9000;
/** How long etcd stays down: a few seconds, well inside the session timeout. */
const OUTAGE_MS = 3000;
const TOPIC = 'load';
const PARTITIONS = 3;

let etcd: EtcdServer;
let cluster: SedimentCluster;

interface Ack {
  readonly value: string;
  readonly partition: number;
  readonly at: number;
}

/** A kafkajs producer writing one record at a time round the partitions until stopped. */
class LoadProducer {
  readonly acks: Ack[] = [];
  readonly errors: Array<{ readonly at: number; readonly message: string }> = [];
  private stopping = false;
  private loop: Promise<void> = Promise.resolve();

  constructor(private readonly bootstrap: string[]) {}

  async start(): Promise<void> {
    const kafka = new Kafka({ clientId: 'etcd-outage', brokers: this.bootstrap, logLevel: logLevel.NOTHING, retry: { retries: 10, initialRetryTime: 100 } });
    const producer = kafka.producer({ allowAutoTopicCreation: false });
    await producer.connect();
    this.loop = (async () => {
      for (let i = 0; !this.stopping; i++) {
        const partition = i % PARTITIONS;
        const value = `m${i}`;
        try {
          await producer.send({ topic: TOPIC, acks: -1, messages: [{ partition, value }] });
          this.acks.push({ value, partition, at: Date.now() });
        } catch (e) {
          this.errors.push({ at: Date.now(), message: e instanceof Error ? e.message : String(e) });
        }
      }
      await producer.disconnect();
    })();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await this.loop;
  }

  ackedBetween(from: number, to: number, partition: number): number {
    return this.acks.filter((a) => a.partition === partition && a.at >= from && a.at <= to).length;
  }

  /** The longest time between consecutive acknowledgements in [from, to]. */
  longestGap(from: number, to: number): number {
    let last = from;
    let gap = 0;
    for (const a of this.acks) {
      if (a.at < from || a.at > to) continue;
      gap = Math.max(gap, a.at - last);
      last = a.at;
    }
    return Math.max(gap, to - last);
  }
}

/**
 * The values of one partition from its start, read with kcat (Metadata,
 * ListOffsets and Fetch: nothing that needs etcd): the first `count`, or with
 * null every value up to the end (only once nothing is written any more).
 */
async function readPartition(bootstrap: string, partition: number, count: number | null = null): Promise<string[]> {
  const until = count === null ? ['-e'] : ['-c', String(count)];
  const c = await runProcess(kcatPath, ['-C', '-b', bootstrap, '-t', TOPIC, '-p', String(partition), '-o', 'beginning', ...until, '-q', '-f', '%s\n'], { timeoutMs: 60_000 });
  assert.equal(c.code, 0, c.stderr);
  return c.stdout.split('\n').filter((l) => l !== '');
}

const isLost = (msg: unknown): boolean => typeof msg === 'string' && msg.startsWith('lost the cluster session');

/** `p`, or a failure naming `what` after `ms` (a log line that never comes must not hang the suite). */
async function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([p, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

async function createTopic(nodeId: number, name: string, numPartitions = 1): Promise<{ errorCode: number; errorMessage: string | null }> {
  const admin = await AdminClient.connect(cluster.broker(nodeId).bootstrap, { timeoutMs: 30_000 });
  try {
    const [r] = await admin.createTopics([{ name, numPartitions, replicationFactor: 1, configs: new Map() }]);
    return { errorCode: r!.errorCode, errorMessage: r!.errorMessage };
  } finally {
    admin.close();
  }
}

describe('etcd killed -9 and restarted under load', () => {
  let load: LoadProducer | undefined;
  let leaders: number[] = [];

  const loadRef = (l: LoadProducer): void => {
    load = l;
  };

  before(async () => {
    requireTools(['etcd', 'kcat', 'kafkajs']);
    etcd = await startEtcd();
    cluster = await startSedimentCluster({
      etcd,
      brokers: 3,
      prefix: `/e2e-etcd-outage-${process.pid}`,
      overrides: { 'broker.session.timeout.ms': String(SESSION_TIMEOUT_MS), 'broker.heartbeat.interval.ms': '2000' },
    });
    const created = await createTopic(1, TOPIC, PARTITIONS);
    assert.equal(created.errorCode, ErrorCode.NONE, created.errorMessage ?? '');
    for (const id of [1, 2, 3]) {
      const md = await cluster.untilMetadata(id, [TOPIC], (m) => (m.topics[0]?.partitions ?? []).length === PARTITIONS && m.topics[0]!.partitions.every((p) => p.leader > 0), 20_000, `the topic on node ${id}`);
      leaders = md.topics[0]!.partitions.map((p) => p.leader);
    }
    assert.deepEqual([...leaders].sort(), [1, 2, 3], 'one partition led by each broker');
  });
  after(async () => {
    await load?.stop().catch(() => undefined);
    await cluster?.close();
    await etcd?.stop();
  });

  it('brokers keep serving their partitions, metadata changes fail retriably, and everything resumes after the restart', async () => {
    const load = new LoadProducer(cluster.brokers.map((b) => b.bootstrap));
    loadRef(load);
    await load.start();
    const started = Date.now();
    // Load running on every partition before the fault.
    while (!Array.from({ length: PARTITIONS }, (_, p) => load.ackedBetween(started, Date.now(), p) >= 20).every(Boolean)) {
      if (Date.now() - started > 60_000) throw new Error(`producer too slow: ${load.acks.length} acks, errors ${JSON.stringify(load.errors.slice(-3))}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const ackedBefore = Array.from({ length: PARTITIONS }, (_, p) => load.ackedBetween(0, Date.now(), p));

    const killedAt = Date.now();
    await etcd.kill('SIGKILL');

    // During the outage: CreateTopics is refused with a retriable error, and reads go on.
    const refused = await createTopic(2, 'during-outage');
    assert.equal(refused.errorCode, ErrorCode.REQUEST_TIMED_OUT, `CreateTopics during the outage: ${errorName(refused.errorCode)} ${refused.errorMessage ?? ''}`);
    // Fetch reads, from each partition's leader, more records than had been acknowledged when etcd went down.
    const ackedMeanwhile = Array.from({ length: PARTITIONS }, (_, p) => load.ackedBetween(0, Date.now(), p));
    for (let p = 0; p < PARTITIONS; p++) assert.ok(ackedMeanwhile[p]! > ackedBefore[p]!, `partition ${p} took writes during the outage`);
    const during = await Promise.all(Array.from({ length: PARTITIONS }, (_, p) => readPartition(cluster.broker(leaders[p]!).bootstrap, p, ackedMeanwhile[p]!)));
    for (let p = 0; p < PARTITIONS; p++) assert.equal(during[p]!.length, ackedMeanwhile[p], `partition ${p}: fetched during the outage`);
    const readAt = Date.now();
    assert.ok(readAt - killedAt < SESSION_TIMEOUT_MS, `the checks during the outage took ${readAt - killedAt} ms`);
    const wait = OUTAGE_MS - (Date.now() - killedAt);
    if (wait > 0) await new Promise((r) => setTimeout(r, wait)); // the outage itself: a fault held for a fixed time
    const restartAt = Date.now();
    for (let p = 0; p < PARTITIONS; p++) {
      assert.ok(load.ackedBetween(killedAt, restartAt, p) > 0, `partition ${p} (leader ${leaders[p]}) took acks=all writes while etcd was down`);
    }
    await etcd.restart();
    const restartedAt = Date.now();

    // After: a topic created now is seen by every broker (their watches resumed).
    let created = await createTopic(3, 'after-outage');
    const retryDeadline = Date.now() + SESSION_TIMEOUT_MS;
    while (created.errorCode === ErrorCode.REQUEST_TIMED_OUT && Date.now() < retryDeadline) {
      await new Promise((r) => setTimeout(r, 200)); // the admin client's retry backoff
      created = await createTopic(3, 'after-outage');
    }
    assert.equal(created.errorCode, ErrorCode.NONE, `CreateTopics after the restart: ${errorName(created.errorCode)} ${created.errorMessage ?? ''}`);
    const createdAt = Date.now();
    for (const id of [1, 2, 3]) await cluster.untilMetadata(id, ['after-outage'], (m) => (m.topics[0]?.partitions[0]?.leader ?? -1) > 0, 15_000, `after-outage on node ${id}`);
    const seenAt = Date.now();

    const stopAt = Date.now() + 1000;
    while (Date.now() < stopAt) await new Promise((r) => setTimeout(r, 100));
    await load.stop();

    // No broker lost its session: the same three registrations, each still leading its partition.
    const md = await cluster.metadataFrom(1, [TOPIC]);
    assert.deepEqual(md.brokers.map((b) => b.nodeId).sort(), [1, 2, 3]);
    assert.deepEqual(md.topics[0]!.partitions.map((p) => p.leader), leaders);
    for (const b of cluster.brokers) {
      assert.equal(b.starts, 1);
      assert.ok(b.alive, 'no broker crashed');
      assert.equal(b.logs.lines.filter((l) => isLost(l.msg)).length, 0, 'no session was lost');
    }

    // Nothing acknowledged is lost.
    const afterRead = await Promise.all(Array.from({ length: PARTITIONS }, (_, p) => readPartition(cluster.bootstrap, p)));
    for (let p = 0; p < PARTITIONS; p++) {
      const present = new Set(afterRead[p]);
      const missing = load.acks.filter((a) => a.partition === p && !present.has(a.value)).map((a) => a.value);
      assert.deepEqual(missing, [], `partition ${p}: acknowledged records missing`);
    }
    // When each broker's watch stream was back (its log line), from the restart.
    const resumed = cluster.brokers.map((b) => {
      const line = b.logs.lines.find((l) => typeof l.msg === 'string' && /^watching .* again$/.test(l.msg) && typeof l['time'] === 'number' && (l['time'] as number) >= restartAt);
      return line === undefined ? 'n/a' : `${(line['time'] as number) - restartedAt} ms`;
    });
    const outage = load.acks.filter((a) => a.at >= killedAt && a.at <= restartedAt).length;
    console.log(
      `# etcd down ${restartedAt - killedAt} ms (restart took ${restartedAt - restartAt} ms): ${outage} acks=all records acknowledged meanwhile, ` +
        `longest gap between acks ${load.longestGap(killedAt, restartedAt)} ms; ${load.errors.length} producer errors; ` +
        `CreateTopics accepted ${createdAt - restartedAt} ms after the restart, seen by all brokers ${seenAt - createdAt} ms later; watches back after the restart: ${resumed.join(', ')}; ${load.acks.length} records in all`,
    );
  });

  it('an outage longer than broker.session.timeout.ms: sessions are lost, then every broker registers again by itself and serves again', async () => {
    const load = new LoadProducer(cluster.brokers.map((b) => b.bootstrap));
    loadRef(load);
    await load.start();
    const started = Date.now();
    while (!Array.from({ length: PARTITIONS }, (_, p) => load.ackedBetween(started, Date.now(), p) >= 20).every(Boolean)) {
      if (Date.now() - started > 60_000) throw new Error(`producer too slow: ${load.acks.length} acks`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const killedAt = Date.now();
    await etcd.kill('SIGKILL');
    // Every broker counts its session lost (no keepalive acknowledged within the timeout) and stops leading.
    await within(Promise.all(cluster.brokers.map((b) => b.logs.next((l) => isLost(l.msg)))), 4 * SESSION_TIMEOUT_MS, 'every broker counts its session lost');
    const lostAt = Date.now();
    const registeredAgain = Promise.all(cluster.brokers.map((b) => b.logs.next((l) => typeof l.msg === 'string' && l.msg.startsWith('registered in the cluster'))));
    await new Promise((r) => setTimeout(r, 1000)); // the producer meets the stopped leaders
    await etcd.restart();
    const restartedAt = Date.now();
    // The old registrations may outlive the restart for a lease's time to live; each broker registers anew.
    await within(registeredAgain, 4 * SESSION_TIMEOUT_MS, 'every broker registered again');
    const registeredAt = Date.now();
    const md = await cluster.untilMetadata(1, [TOPIC], (m) => m.brokers.length === 3 && m.topics[0]!.partitions.every((p) => p.leader > 0), 4 * SESSION_TIMEOUT_MS, 'every partition led again');
    const ledAt = Date.now();
    const partitionLeaders = md.topics[0]!.partitions.map((p) => p.leader);
    // Writes go on: every partition takes acks=all writes again.
    while (!Array.from({ length: PARTITIONS }, (_, p) => load.ackedBetween(ledAt, Date.now(), p) >= 5).every(Boolean)) {
      if (Date.now() - ledAt > 60_000) throw new Error(`no writes after the rejoin: ${JSON.stringify(load.errors.slice(-3))}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const resumedAt = Date.now();
    await load.stop();
    for (const b of cluster.brokers) assert.ok(b.alive, 'no broker crashed');
    const all = await Promise.all(Array.from({ length: PARTITIONS }, (_, p) => readPartition(cluster.bootstrap, p)));
    for (let p = 0; p < PARTITIONS; p++) {
      const present = new Set(all[p]);
      const missing = load.acks.filter((a) => a.partition === p && !present.has(a.value)).map((a) => a.value);
      assert.deepEqual(missing, [], `partition ${p}: acknowledged records missing`);
    }
    console.log(
      `# etcd down ${restartedAt - killedAt} ms (sessions lost after ${lostAt - killedAt} ms, broker.session.timeout.ms=${SESSION_TIMEOUT_MS}): ` +
        `every broker registered again ${registeredAt - restartedAt} ms and every partition led ${ledAt - restartedAt} ms after the restart (leaders ${partitionLeaders.join(',')}), ` +
        `writes on every partition again ${resumedAt - restartedAt} ms after it; longest gap between acks ${load.longestGap(killedAt, resumedAt)} ms; ${load.acks.length} records acknowledged in all, none lost`,
    );
  });
});
