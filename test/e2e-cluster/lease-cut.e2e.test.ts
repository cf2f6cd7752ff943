// A broker cut off from etcd while it keeps running (its lease cannot be
// renewed) stops acting as leader within its lease, before any other broker
// could be elected, so there is never a split brain. Three `sediment start`
// processes over a real etcd; broker 3 reaches etcd through a TCP proxy the
// test cuts (the other two and the clients keep their paths). An RF 3 topic
// with min.insync.replicas=2: after the cut, broker 3 logs the loss of its
// session before the controller moves any of its partitions, it answers
// requests for them NOT_LEADER_OR_FOLLOWER, the others take acks=all writes at
// higher leader epochs; after the heal broker 3 registers again and is back in
// every ISR, and every acknowledged record is read once. From every broker's
// log: no two brokers became leader of one partition at the same leader epoch.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AdminClient, type ClusterMetadata, type PartitionMetadata } from '../../broker/cli/admin-client.js';
import { BrokerConnection } from '../../broker/cli/broker-connection.js';
import { ErrorCode } from '../../broker/protocol/errors.js';
import { apis } from '../../broker/protocol/messages/index.js';
import { runProcess } from '../clients/common.js';
import { startCutProxy, type CutProxy } from '../support/cut-proxy.js';
import { startEtcd, type EtcdServer } from '../support/etcd.js';
import { startSediment, type LogLine } from '../support/sediment.js';
import { SedimentCluster, startSedimentCluster } from '../support/sediment-cluster.js';
import { kcatPath, requireTools } from '../support/tools.js';

const TOPIC = 'lease-cut';
const PARTITIONS = 3;
const SESSION_TIMEOUT_MS = 4000;
const CUT = 3;
const settings = { 'broker.session.timeout.ms': String(SESSION_TIMEOUT_MS), 'broker.heartbeat.interval.ms': '1000', 'auto.leader.rebalance.enable': 'false' };

let etcd: EtcdServer;
let proxy: CutProxy;
let cluster: SedimentCluster;

function partitions(md: ClusterMetadata): readonly PartitionMetadata[] {
  return md.topics.find((t) => t.name === TOPIC)?.partitions ?? [];
}

function allLines(nodeId: number): LogLine[] {
  const b = cluster.broker(nodeId);
  return [...b.previousLogs.flatMap((l) => l.lines), ...b.logs.lines];
}

async function produce(bootstrap: string, prefix: string, perPartition: number): Promise<string[]> {
  const acked: string[] = [];
  for (let p = 0; p < PARTITIONS; p++) {
    const values = Array.from({ length: perPartition }, (_, i) => `${prefix}-p${p}-${i}`);
    const r = await runProcess(kcatPath, ['-P', '-b', bootstrap, '-t', TOPIC, '-p', String(p), '-X', 'acks=all', '-X', 'enable.idempotence=true', '-X', 'message.timeout.ms=60000'], {
      input: values.map((v) => `${v}\n`).join(''),
      timeoutMs: 90_000,
    });
    assert.equal(r.code, 0, `kcat produce to partition ${p}: ${r.stderr}`);
    acked.push(...values);
  }
  return acked;
}

/** The controller's log lines moving partitions `led` from `since` on, from brokers 1 and 2, once there is one for each. */
async function movesLogged(led: readonly number[], since: number): Promise<LogLine[]> {
  const isMove = (l: LogLine): boolean => l.msg === 'partition leadership changed' && l['topic'] === TOPIC && led.includes(l['partition'] as number) && (l['time'] as number) >= since;
  const moves = (): LogLine[] => [1, 2].flatMap((id) => allLines(id).filter(isMove));
  // Checking and subscribing in one turn of the event loop: no line falls between.
  while (new Set(moves().map((l) => l['partition'])).size < led.length) await Promise.race([1, 2].map((id) => cluster.broker(id).logs.next(isMove)));
  return moves();
}

async function within<T>(what: string, ms: number, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms)));
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

describe('a broker cut off from etcd stops leading within its lease, before another is elected (three processes, etcd, RF 3)', () => {
  before(async () => {
    requireTools(['etcd', 'kcat']);
    etcd = await startEtcd();
    proxy = await startCutProxy({ host: etcd.host, port: etcd.port });
    const prefix = `/e2e-lease-cut-${process.pid}`;
    const two = await startSedimentCluster({ etcd, brokers: 2, prefix, overrides: settings });
    try {
      const third = await startSediment({ overrides: { ...settings, 'node.id': String(CUT), 'etcd.connect': `${proxy.host}:${proxy.port}${prefix}` } });
      cluster = new SedimentCluster([...two.brokers, third], prefix);
    } catch (e) {
      await two.close();
      throw e;
    }
  });
  after(async () => {
    proxy?.heal();
    await cluster?.close();
    await proxy?.close();
    await etcd?.stop();
  });

  const acknowledged: string[] = [];
  let before0: readonly PartitionMetadata[] = [];
  let led: number[] = [];

  it('an RF 3 topic with min.insync.replicas=2 whose partitions broker 3 leads some of, every replica in sync', async () => {
    await cluster.untilMetadata(1, [], (m) => m.brokers.length === 3, 20_000, 'three brokers');
    const admin = await AdminClient.connect(cluster.broker(1).bootstrap);
    try {
      const [r] = await admin.createTopics([{ name: TOPIC, numPartitions: PARTITIONS, replicationFactor: 3, configs: new Map([['min.insync.replicas', '2']]) }]);
      assert.equal(r?.errorCode, ErrorCode.NONE, r?.errorMessage ?? '');
    } finally {
      admin.close();
    }
    const md = await cluster.untilMetadata(1, [TOPIC], (m) => partitions(m).length === PARTITIONS && partitions(m).every((p) => p.leader > 0 && p.isr.length === 3), 20_000, 'full ISRs');
    before0 = partitions(md);
    led = before0.filter((p) => p.leader === CUT).map((p) => p.partition);
    assert.ok(led.length > 0, `broker ${CUT} leads a partition: leaders ${before0.map((p) => p.leader).join(',')}`);
    acknowledged.push(...(await produce(cluster.bootstrap, 'a', 50)));
  });

  it('cut from etcd: broker 3 gives up its session before the controller moves its partitions, then answers NOT_LEADER_OR_FOLLOWER; the others take acks=all writes at higher epochs', async () => {
    const b3 = cluster.broker(CUT);
    const lost = b3.logs.next((l) => l.msg?.startsWith('lost the cluster session') === true);
    const cutAt = Date.now();
    proxy.cut();
    const lostLine = await within('broker 3 logs the loss of its session', SESSION_TIMEOUT_MS + 10_000, lost);
    const md = await cluster.untilMetadata(1, [TOPIC], (m) => partitions(m).every((p) => p.leader > 0 && p.leader !== CUT && !p.isr.includes(CUT)), SESSION_TIMEOUT_MS + 20_000, 'leadership moved off the cut broker');
    const lostAt = lostLine.time as number;
    // The controller logs a move after its etcd write returns, so the other
    // broker's watch (and so its metadata) can be ahead of that log line.
    const moves = await within(`the controller logs the moves of partitions ${led.join(',')}`, 10_000, movesLogged(led, cutAt));
    const firstMove = Math.min(...moves.map((l) => l['time'] as number));
    console.log(`cut broker ${CUT} (leader of ${led.join(',')}): session given up ${lostAt - cutAt} ms after the cut, first partition moved ${firstMove - cutAt} ms after it (broker.session.timeout.ms=${SESSION_TIMEOUT_MS})`);
    assert.ok(lostAt < firstMove, `broker ${CUT} stopped leading (${lostAt}) before another broker was elected (${firstMove})`);
    for (const p of partitions(md)) {
      const was = before0.find((b) => b.partition === p.partition)!;
      if (led.includes(p.partition)) assert.ok(p.leaderEpoch > was.leaderEpoch, `partition ${p.partition}: epoch ${p.leaderEpoch} > ${was.leaderEpoch}`);
    }
    const [host, port] = b3.bootstrap.split(':');
    const conn = await BrokerConnection.connect(host!, Number(port));
    try {
      const { body } = await conn.send(apis.ListOffsets, () => ({
        replicaId: -1,
        isolationLevel: 0,
        topics: [{ name: TOPIC, partitions: led.map((partitionIndex) => ({ partitionIndex, currentLeaderEpoch: -1, timestamp: -1n, maxNumOffsets: 1 })) }],
        timeoutMs: 10_000,
      }));
      for (const p of body.topics[0]!.partitions) assert.equal(p.errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER, `partition ${p.partitionIndex} on the cut broker`);
    } finally {
      conn.close();
    }
    acknowledged.push(...(await produce(`${cluster.broker(1).bootstrap},${cluster.broker(2).bootstrap}`, 'b', 50)));
  });

  it('healed: broker 3 registers again and is back in every ISR; acks=all goes on, nothing acknowledged is lost or doubled', async () => {
    const b3 = cluster.broker(CUT);
    const again = b3.logs.next((l) => l.msg === 'registered in the cluster again');
    proxy.heal();
    await within('broker 3 registers again', 30_000, again);
    await cluster.untilMetadata(1, [TOPIC], (m) => partitions(m).every((p) => p.leader > 0 && p.isr.length === 3), 30_000, 'broker 3 back in every ISR');
    acknowledged.push(...(await produce(cluster.bootstrap, 'c', 50)));
    const values: string[] = [];
    for (let p = 0; p < PARTITIONS; p++) {
      const c = await runProcess(kcatPath, ['-C', '-b', cluster.bootstrap, '-t', TOPIC, '-p', String(p), '-o', 'beginning', '-e', '-q', '-f', '%s\n'], { timeoutMs: 60_000 });
      assert.equal(c.code, 0, c.stderr);
      values.push(...c.stdout.split('\n').filter((l) => l !== ''));
    }
    const seen = new Map<string, number>();
    for (const v of values) seen.set(v, (seen.get(v) ?? 0) + 1);
    assert.deepEqual(acknowledged.filter((v) => !seen.has(v)), [], 'every acknowledged record is there');
    assert.deepEqual([...seen].filter(([, n]) => n > 1).map(([v]) => v), [], 'none twice');
  });

  it('no two brokers became leader of one partition at the same leader epoch', () => {
    const leaders = new Map<string, Set<number>>();
    for (const id of [1, 2, 3]) {
      for (const l of allLines(id)) {
        if (l.msg !== 'became leader' || l['topic'] !== TOPIC) continue;
        const k = `${String(l['partition'])}@${String(l['leaderEpoch'])}`;
        const set = leaders.get(k) ?? new Set<number>();
        set.add(id);
        leaders.set(k, set);
      }
    }
    assert.ok(leaders.size >= PARTITIONS + led.length, `leader terms seen: ${[...leaders.keys()].join(' ')}`);
    for (const [k, nodes] of leaders) assert.equal(nodes.size, 1, `partition@epoch ${k} claimed by nodes ${[...nodes].join(',')}`);
  });
});
