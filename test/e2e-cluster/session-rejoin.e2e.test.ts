// A broker paused (SIGSTOP) for longer than broker.session.timeout.ms comes
// back on its own, as a Kafka broker that was fenced does: three `sediment
// start` processes over a real etcd, an RF 3 topic with
// min.insync.replicas=2. While the broker that leads a partition is stopped,
// the others elect new leaders at higher leader epochs and take acks=all
// writes (kcat, idempotent); on SIGCONT it finds its session lost, registers
// again under a higher broker epoch within a bounded time, follows the new
// leaders and is back in every ISR; acks=all writes go on, and every
// acknowledged record is read back once. From every broker's log: no two
// brokers ever became leader of one partition at the same leader epoch.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AdminClient, type ClusterMetadata, type PartitionMetadata } from '../../broker/cli/admin-client.js';
import { ErrorCode } from '../../broker/protocol/errors.js';
import { runProcess } from '../clients/common.js';
import { startEtcd, type EtcdServer } from '../support/etcd.js';
import type { LogLine } from '../support/sediment.js';
import { startSedimentCluster, type SedimentCluster } from '../support/sediment-cluster.js';
import { kcatPath, requireTools } from '../support/tools.js';

const TOPIC = 'rejoin';
const PARTITIONS = 3;
const SESSION_TIMEOUT_MS = 4000;
/** How long a resumed broker may take to register again and be back in every ISR. */
const REJOIN_BOUND_MS = 30_000;

let etcd: EtcdServer;
let cluster: SedimentCluster;

function partitions(md: ClusterMetadata): readonly PartitionMetadata[] {
  return md.topics.find((t) => t.name === TOPIC)?.partitions ?? [];
}

/** acks=all, idempotent: one kcat per partition, each value on its own line. */
async function produce(prefix: string, perPartition: number): Promise<string[]> {
  const acked: string[] = [];
  for (let p = 0; p < PARTITIONS; p++) {
    const values = Array.from({ length: perPartition }, (_, i) => `${prefix}-p${p}-${i}`);
    const r = await runProcess(kcatPath, ['-P', '-b', cluster.bootstrap, '-t', TOPIC, '-p', String(p), '-X', 'acks=all', '-X', 'enable.idempotence=true', '-X', 'message.timeout.ms=60000'], {
      input: values.map((v) => `${v}\n`).join(''),
      timeoutMs: 90_000,
    });
    assert.equal(r.code, 0, `kcat produce to partition ${p}: ${r.stderr}`);
    acked.push(...values);
  }
  return acked;
}

async function consumeAll(): Promise<string[]> {
  const out: string[] = [];
  for (let p = 0; p < PARTITIONS; p++) {
    const c = await runProcess(kcatPath, ['-C', '-b', cluster.bootstrap, '-t', TOPIC, '-p', String(p), '-o', 'beginning', '-e', '-q', '-f', '%s\n'], { timeoutMs: 60_000 });
    assert.equal(c.code, 0, c.stderr);
    out.push(...c.stdout.split('\n').filter((l) => l !== ''));
  }
  return out;
}

/** Every line of every run of `nodeId`. */
function allLines(nodeId: number): LogLine[] {
  const b = cluster.broker(nodeId);
  return [...b.previousLogs.flatMap((l) => l.lines), ...b.logs.lines];
}

describe('a broker paused past its session registers again and rejoins every ISR (three processes, etcd, RF 3)', () => {
  before(async () => {
    requireTools(['etcd', 'kcat']);
    etcd = await startEtcd();
    cluster = await startSedimentCluster({
      etcd,
      brokers: 3,
      prefix: `/e2e-session-rejoin-${process.pid}`,
      overrides: { 'broker.session.timeout.ms': String(SESSION_TIMEOUT_MS), 'broker.heartbeat.interval.ms': '1000', 'auto.leader.rebalance.enable': 'false' },
    });
  });
  after(async () => {
    for (const b of cluster?.brokers ?? []) if (b.alive) process.kill(b.pid, 'SIGCONT');
    await cluster?.close();
    await etcd?.stop();
  });

  const acknowledged: string[] = [];
  let paused = -1;
  let before0: readonly PartitionMetadata[] = [];

  it('an RF 3 topic with min.insync.replicas=2, every replica in sync, takes acks=all writes', async () => {
    const admin = await AdminClient.connect(cluster.broker(1).bootstrap);
    try {
      const [r] = await admin.createTopics([{ name: TOPIC, numPartitions: PARTITIONS, replicationFactor: 3, configs: new Map([['min.insync.replicas', '2']]) }]);
      assert.equal(r?.errorCode, ErrorCode.NONE, r?.errorMessage ?? '');
    } finally {
      admin.close();
    }
    const md = await cluster.untilMetadata(1, [TOPIC], (m) => partitions(m).length === PARTITIONS && partitions(m).every((p) => p.leader > 0 && p.isr.length === 3), 20_000, 'full ISRs');
    before0 = partitions(md);
    acknowledged.push(...(await produce('a', 50)));
  });

  it('SIGSTOP of a leader past broker.session.timeout.ms: the others elect new leaders at higher epochs and take acks=all writes', async () => {
    paused = before0.find((p) => p.partition === 0)!.leader;
    const led = before0.filter((p) => p.leader === paused).map((p) => p.partition);
    const other = [1, 2, 3].find((id) => id !== paused)!;
    process.kill(cluster.broker(paused).pid, 'SIGSTOP');
    const stoppedAt = Date.now();
    const md = await cluster.untilMetadata(other, [TOPIC], (m) => partitions(m).every((p) => p.leader > 0 && p.leader !== paused && !p.isr.includes(paused)), SESSION_TIMEOUT_MS + 20_000, 'leadership moved off the paused broker');
    console.log(`paused broker ${paused} (leader of ${led.join(',')}): leadership moved after ${Date.now() - stoppedAt} ms (broker.session.timeout.ms=${SESSION_TIMEOUT_MS})`);
    for (const p of partitions(md)) {
      const was = before0.find((b) => b.partition === p.partition)!;
      if (led.includes(p.partition)) assert.ok(p.leaderEpoch > was.leaderEpoch, `partition ${p.partition}: epoch ${p.leaderEpoch} > ${was.leaderEpoch}`);
    }
    acknowledged.push(...(await produce('b', 50)));
    // Paused well past its session: its lease is certainly gone when it resumes.
    const waited = Date.now() - stoppedAt;
    if (waited < 2 * SESSION_TIMEOUT_MS) await new Promise((r) => setTimeout(r, 2 * SESSION_TIMEOUT_MS - waited));
  });

  it('SIGCONT: it registers again under a higher broker epoch within a bounded time and is back in every ISR; acks=all goes on, nothing acknowledged is lost', async () => {
    const b = cluster.broker(paused);
    const firstRegistration = allLines(paused).find((l) => l.msg === 'registered in the cluster');
    assert.ok(firstRegistration !== undefined);
    const again = b.logs.next((l) => l.msg === 'registered in the cluster again');
    const resumedAt = Date.now();
    process.kill(b.pid, 'SIGCONT');
    let timer: NodeJS.Timeout | undefined;
    const line = await Promise.race([again, new Promise<null>((r) => (timer = setTimeout(() => r(null), REJOIN_BOUND_MS)))]).finally(() => clearTimeout(timer));
    assert.ok(line !== null, `registered again within ${REJOIN_BOUND_MS} ms:\n${b.logs.tail(30)}`);
    const registeredMs = Date.now() - resumedAt;
    assert.ok(BigInt(line['brokerEpoch'] as string) > BigInt(firstRegistration['brokerEpoch'] as string), `new broker epoch ${String(line['brokerEpoch'])} > ${String(firstRegistration['brokerEpoch'])}`);
    assert.ok(allLines(paused).some((l) => l.msg?.startsWith('lost the cluster session') === true), 'it logged the loss first');
    await cluster.untilMetadata(paused, [TOPIC], (m) => partitions(m).every((p) => p.leader > 0 && p.isr.length === 3), REJOIN_BOUND_MS, 'the resumed broker back in every ISR');
    console.log(`resumed broker ${paused}: registered again ${registeredMs} ms after SIGCONT (${String(line['attempts'])} attempts), in every ISR after ${Date.now() - resumedAt} ms`);
    acknowledged.push(...(await produce('c', 50)));
    const values = await consumeAll();
    const seen = new Map<string, number>();
    for (const v of values) seen.set(v, (seen.get(v) ?? 0) + 1);
    const missing = acknowledged.filter((v) => !seen.has(v));
    const twice = [...seen].filter(([, n]) => n > 1).map(([v]) => v);
    assert.deepEqual(missing, [], 'every acknowledged record is there');
    assert.deepEqual(twice, [], 'none twice');
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
    assert.ok(leaders.size >= PARTITIONS + 1, `leader terms seen: ${[...leaders.keys()].join(' ')}`);
    for (const [k, nodes] of leaders) assert.equal(nodes.size, 1, `partition@epoch ${k} claimed by nodes ${[...nodes].join(',')}`);
  });
});
