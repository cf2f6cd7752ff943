// Tiered storage on a replicated topic (KIP-405's follower rules), over three
// `sediment start` processes, a real etcd and one filesystem remote store
// they share: an RF 3 topic with remote.storage.enable=true, small segments
// and a one-second local retention. Only the partition's leader uploads
// (every segment's objects are in the store once), the followers learn from
// the cluster-wide __remote_log_metadata that their segments are remote and
// drop them locally; after kill -9 of the leader the new leader continues
// without uploading anything again, and a consumer reads every record from
// offset 0, through the remote tier and then the local one. The killed
// leader, down while its partition tiered and expired locally, restarts,
// builds its state from the remote tier (OFFSET_MOVED_TO_TIERED_STORAGE),
// catches up, and once it leads knows an idempotent producer whose batches
// only the remote tier holds (a sequence gap is refused, the next accepted).
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { AdminClient, type ClusterMetadata, type PartitionMetadata } from '../../broker/cli/admin-client.js';
import { ErrorCode } from '../../broker/protocol/errors.js';
import { apis } from '../../broker/protocol/messages/index.js';
import { buildRecordBatch } from '../../broker/protocol/record-batch.js';
import { runProcess } from '../clients/common.js';
import { startEtcd, type EtcdServer } from '../support/etcd.js';
import { startSedimentCluster, type SedimentCluster } from '../support/sediment-cluster.js';
import { kcatPath, requireTools } from '../support/tools.js';

const TOPIC = 'tiered-rf3';
const SESSION_TIMEOUT_MS = 9000;
const SEGMENT_BYTES = 16_384;

let etcd: EtcdServer;
let cluster: SedimentCluster;
let remoteDir = '';

function partitionOf(md: ClusterMetadata): PartitionMetadata | undefined {
  return md.topics.find((t) => t.name === TOPIC)?.partitions[0];
}

async function kcatProduce(bootstrap: string, values: readonly string[]): Promise<void> {
  const input = values.map((v) => `${v}\n`).join('');
  const args = ['-P', '-b', bootstrap, '-t', TOPIC, '-p', '0', '-X', 'acks=all', '-X', 'enable.idempotence=true', '-X', 'message.timeout.ms=60000', '-X', 'linger.ms=5', '-X', 'batch.num.messages=20'];
  const p = await runProcess(kcatPath, args, { input, timeoutMs: 90_000 });
  assert.equal(p.code, 0, p.stderr);
}

async function kcatValues(bootstrap: string): Promise<string[]> {
  const c = await runProcess(kcatPath, ['-C', '-b', bootstrap, '-t', TOPIC, '-p', '0', '-o', 'beginning', '-e', '-q', '-f', '%s\n'], { timeoutMs: 90_000 });
  assert.equal(c.code, 0, c.stderr);
  return c.stdout.split('\n').filter((l) => l !== '');
}

/** Base offset -> segment ids with objects in the shared store (a segment uploaded twice shows two ids). */
async function remoteSegments(topicId: string): Promise<Map<bigint, Set<string>>> {
  const dir = path.join(remoteDir, `${TOPIC}-${topicId}`, '0');
  const out = new Map<bigint, Set<string>>();
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return out;
  }
  for (const name of names) {
    const m = /^(\d{20})-([A-Za-z0-9_-]{22})\.[a-z-]+$/.exec(name);
    if (m === null) continue;
    const base = BigInt(m[1]!);
    let ids = out.get(base);
    if (ids === undefined) out.set(base, (ids = new Set()));
    ids.add(m[2]!);
  }
  return out;
}

/** Base offsets of the segments with a manifest (finished uploads). */
async function finishedBases(topicId: string): Promise<bigint[]> {
  const dir = path.join(remoteDir, `${TOPIC}-${topicId}`, '0');
  const names = await readdir(dir).catch(() => [] as string[]);
  return names.filter((n) => n.endsWith('.manifest')).map((n) => BigInt(n.slice(0, 20))).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** The base offsets of a broker's local segments of the partition. */
async function localBases(nodeId: number): Promise<bigint[]> {
  const names = await readdir(path.join(cluster.broker(nodeId).dataDir, `${TOPIC}-0`)).catch(() => [] as string[]);
  return names.filter((n) => n.endsWith('.log')).map((n) => BigInt(n.slice(0, 20))).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

async function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() >= deadline) {
      const problems = cluster.brokers.map((b, i) => `broker ${i + 1}:\n${b.logs.problems.slice(-15).map((l) => JSON.stringify(l).slice(0, 400)).join('\n')}`).join('\n');
      throw new Error(`${what}: not within ${timeoutMs} ms; the brokers' last warnings:\n${problems}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

function assertEachSegmentOnce(segments: Map<bigint, Set<string>>): void {
  for (const [base, ids] of segments) assert.equal(ids.size, 1, `segment at ${base} uploaded ${ids.size} times: ${[...ids].join(', ')}`);
}

function copiesLoggedBy(nodeId: number): number {
  return cluster.broker(nodeId).logs.lines.filter((l) => l.msg === 'remote segment copy started' && l['topic'] === TOPIC).length;
}

describe('tiered storage on an RF 3 topic over three broker processes, etcd and a shared filesystem store', () => {
  before(async () => {
    requireTools(['etcd', 'kcat']);
    etcd = await startEtcd();
    remoteDir = await mkdtemp(path.join(os.tmpdir(), 'sediment-shared-remote-'));
    cluster = await startSedimentCluster({
      etcd,
      brokers: 3,
      prefix: `/e2e-tiering-rf3-${process.pid}`,
      overrides: {
        'broker.session.timeout.ms': String(SESSION_TIMEOUT_MS),
        'broker.heartbeat.interval.ms': '2000',
        'auto.leader.rebalance.enable': 'false',
        'remote.log.storage.url': pathToFileURL(remoteDir).href,
        'remote.log.manager.task.interval.ms': '1000',
        'log.retention.check.interval.ms': '1000',
        'remote.log.metadata.topic.num.partitions': '5',
      },
    });
  });
  after(async () => {
    await cluster?.close();
    await etcd?.stop();
    if (remoteDir !== '') await rm(remoteDir, { recursive: true, force: true });
  });

  let topicId = '';
  let firstLeader = -1;
  const produced: string[] = [];
  const batch = (tag: string, n: number): string[] => Array.from({ length: n }, (_, i) => `${tag}-${String(i).padStart(5, '0')}-${'x'.repeat(150)}`);

  it('creates an RF 3 tiered topic with all three replicas in the ISR', async () => {
    const admin = await AdminClient.connect(cluster.broker(1).bootstrap);
    try {
      const configs = new Map([
        ['min.insync.replicas', '2'],
        ['remote.storage.enable', 'true'],
        ['internal.segment.bytes', String(SEGMENT_BYTES)],
        ['local.retention.ms', '1000'],
        ['local.retention.bytes', String(2 * SEGMENT_BYTES)],
      ]);
      const [r] = await admin.createTopics([{ name: TOPIC, numPartitions: 1, replicationFactor: 3, configs }]);
      assert.equal(r?.errorCode, ErrorCode.NONE, r?.errorMessage ?? '');
      topicId = r!.topicId;
    } finally {
      admin.close();
    }
    const md = await cluster.untilMetadata(1, [TOPIC], (m) => partitionOf(m)?.isr.length === 3 && (partitionOf(m)?.leader ?? -1) > 0, 15_000, 'ISR of 3');
    firstLeader = partitionOf(md)!.leader;
  });

  it('only the leader uploads, each segment once; the followers drop local segments once they are remote', async () => {
    const values = batch('a', 1000);
    await kcatProduce(cluster.bootstrap, values);
    produced.push(...values);
    const followers = [1, 2, 3].filter((id) => id !== firstLeader);
    // ~170 KB in 16 KiB segments: about ten closed segments to upload.
    const bases = await until('eight segments remote', 90_000, async () => {
      const b = await finishedBases(topicId);
      return b.length >= 8 ? b : undefined;
    });
    assertEachSegmentOnce(await remoteSegments(topicId));
    assert.ok(copiesLoggedBy(firstLeader) >= bases.length, 'the leader logged its copies');
    for (const f of followers) assert.equal(copiesLoggedBy(f), 0, `follower ${f} uploaded nothing`);
    // The followers learn from __remote_log_metadata that their old segments are remote, and local retention deletes them.
    for (const f of [firstLeader, ...followers]) {
      await until(`node ${f} deletes remote segments locally`, 60_000, async () => {
        const l = await localBases(f);
        return l.length > 0 && l[0]! > bases[0]! ? l : undefined;
      });
    }
    const md = await cluster.metadataFrom(firstLeader, ['__remote_log_metadata']);
    const meta = md.topics.find((t) => t.name === '__remote_log_metadata');
    assert.equal(meta?.partitions.length, 5, 'the metadata topic is a cluster topic with remote.log.metadata.topic.num.partitions partitions');
    assert.ok(meta!.partitions.every((p) => p.replicas.length === 3), 'replicated on the three brokers');
  });

  it('after kill -9 of the leader the new leader continues without uploading anything again; a consumer reads from offset 0', async () => {
    const before = await finishedBases(topicId);
    await cluster.broker(firstLeader).kill();
    const survivor = [1, 2, 3].find((id) => id !== firstLeader)!;
    const md = await cluster.untilMetadata(survivor, [TOPIC], (m) => {
      const p = partitionOf(m);
      return p !== undefined && p.leader > 0 && p.leader !== firstLeader;
    }, SESSION_TIMEOUT_MS + 15_000, 'a new leader');
    const newLeader = partitionOf(md)!.leader;
    const values = batch('b', 1000);
    await kcatProduce(cluster.bootstrap, values);
    produced.push(...values);
    const after = await until('the new leader uploads the new segments', 90_000, async () => {
      const b = await finishedBases(topicId);
      return b.length >= before.length + 8 ? b : undefined;
    });
    assertEachSegmentOnce(await remoteSegments(topicId));
    for (const b of before) assert.ok(after.includes(b), `segment ${b} is still remote`);
    assert.ok(copiesLoggedBy(newLeader) >= after.length - before.length, 'the new leader uploaded the new segments');
    const remaining = [1, 2, 3].filter((id) => id !== firstLeader && id !== newLeader);
    for (const f of remaining) assert.equal(copiesLoggedBy(f), 0, `follower ${f} uploaded nothing`);
    // The new leader's local log no longer starts at 0: offset 0 comes from the remote tier.
    const local = await localBases(newLeader);
    assert.ok(local[0]! > 0n, `node ${newLeader} has dropped its first segments (${local.join(',')})`);
    const read = await kcatValues(cluster.bootstrap);
    assert.equal(read.length, produced.length);
    assert.deepEqual(read, produced, 'every record, in order, across the tiers');
    leaderAfterFailover = newLeader;
  });

  it('the old leader, down while its partition tiered and expired locally, rebuilds from the remote tier, catches up and, as leader, continues an idempotent producer', async () => {
    const current = leaderAfterFailover;
    const other = [1, 2, 3].find((id) => id !== firstLeader && id !== current)!;
    // An idempotent producer writes three batches at the current leader; they will only be remote when the old leader returns.
    const pid = await initProducerId(current);
    for (const seq of [0, 5, 10]) assert.equal(await produceIdempotent(current, pid, seq, `i${seq}`), ErrorCode.NONE);
    for (let i = 0; i < 15; i++) produced.push(`i${i - (i % 5)}-${i % 5}`);
    const idempotentEnd = BigInt(produced.length);
    const values = batch('c', 1000);
    await kcatProduce(cluster.bootstrap, values);
    produced.push(...values);
    await until('the leader\'s local log starts past the idempotent batches', 90_000, async () => {
      const l = await localBases(current);
      return l.length > 0 && l[0]! > idempotentEnd ? l : undefined;
    });
    await cluster.broker(firstLeader).restart();
    await cluster.untilMetadata(current, [TOPIC], (m) => partitionOf(m)?.isr.length === 3, 60_000, 'the old leader back in the ISR').catch((err: unknown) => {
      const about = (id: number) => cluster.broker(id).logs.lines.filter((l) => l['topic'] === TOPIC || l.level >= 40).slice(-40).map((l) => JSON.stringify(l)).join('\n');
      throw new Error(`${err instanceof Error ? err.message : String(err)}\nnode ${firstLeader}:\n${about(firstLeader)}\nleader ${current}:\n${about(current)}`);
    });
    const rebuilt = cluster.broker(firstLeader).logs.lines.find((l) => l.msg === "follower below the leader's local log start: built its state from the remote tier" && l['topic'] === TOPIC);
    assert.ok(rebuilt !== undefined, 'the old leader built its state from the remote tier');
    console.log(`node ${firstLeader} rebuilt from the remote tier: log from ${String(rebuilt['from'])} restarted at ${String(rebuilt['to'])} (leader's local log start ${String(rebuilt['leaderLocalLogStartOffset'])})`);
    const local = await localBases(firstLeader);
    assert.ok(local[0]! > idempotentEnd, `node ${firstLeader} holds only the leader's local tail (${local.join(',')})`);

    // It becomes the leader: the other two go down (the ISR shrinks to it), one comes back for acks=all.
    await cluster.broker(current).kill();
    await cluster.broker(other).kill();
    await cluster.untilMetadata(firstLeader, [TOPIC], (m) => partitionOf(m)?.leader === firstLeader && partitionOf(m)?.isr.length === 1, SESSION_TIMEOUT_MS + 30_000, 'the old leader leads alone');
    await cluster.broker(other).restart();
    await cluster.untilMetadata(firstLeader, [TOPIC], (m) => partitionOf(m)?.isr.length === 2, 60_000, 'a follower back in the ISR');
    // It knows the producer from the remote snapshot: a sequence gap is refused (an unknown producer could start anywhere), the next sequence goes in.
    let code = -1;
    for (let attempt = 0; attempt < 20; attempt++) {
      code = await produceIdempotent(firstLeader, pid, 40, 'gap');
      if (code !== ErrorCode.NOT_ENOUGH_REPLICAS && code !== ErrorCode.REQUEST_TIMED_OUT) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    assert.equal(code, ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
    assert.equal(await produceIdempotent(firstLeader, pid, 15, 'i15'), ErrorCode.NONE);
    for (let i = 0; i < 5; i++) produced.push(`i15-${i}`);
    const read = await kcatValues(cluster.broker(firstLeader).bootstrap);
    assert.deepEqual(read, produced, 'every record from offset 0, through the remote tier, on the rebuilt replica');
  });
});

let leaderAfterFailover = -1;

async function initProducerId(nodeId: number): Promise<{ producerId: bigint; producerEpoch: number }> {
  const conn = await cluster.connect(nodeId);
  try {
    const { body } = await conn.send(apis.InitProducerId, () => ({ transactionalId: null, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1, enable2Pc: false, keepPreparedTxn: false }));
    assert.equal(body.errorCode, ErrorCode.NONE);
    return { producerId: body.producerId, producerEpoch: body.producerEpoch };
  } finally {
    conn.close();
  }
}

/** One idempotent batch of five records `<tag>-0..4` at `seq`, acks=all, straight to `nodeId`: the partition's error code. */
async function produceIdempotent(nodeId: number, pid: { producerId: bigint; producerEpoch: number }, seq: number, tag: string): Promise<number> {
  const records = buildRecordBatch({ records: Array.from({ length: 5 }, (_, i) => ({ key: null, value: `${tag}-${i}`, timestamp: Date.now() })), producerId: pid.producerId, producerEpoch: pid.producerEpoch, baseSequence: seq });
  return cluster.produceTo(nodeId, { topic: TOPIC, acks: -1 }, records);
}
