// Partition reassignment with Kafka's own kafka-reassign-partitions tool
// (ReassignPartitionsCommand, 4.x) against three `sediment start` processes
// over a real etcd: an RF 2 topic on brokers {1,2} (kafka-topics
// --replica-assignment) takes acks=all records; --execute moves it to {2,3};
// --verify is polled until it reports the reassignment completed (and clears
// the throttles it would have set). Then broker 3's log holds every record
// batch for batch as broker 1's did before the move, broker 1 has deleted its
// copy, every broker's metadata shows replicas and ISR [2,3], a consumer reads
// every record, and --list shows nothing in progress. A second move with
// --throttle takes at least as long as the rate allows, and --verify clears
// the broker and topic throttles at the end. A third, held back by a very low
// throttle, shows in --list and in Metadata (the union of replicas) until
// --cancel reverts it and the added replica deletes its partial copy. A
// broker that was down while its replica was moved away deletes its copy when
// it starts again.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { ClusterMetadata, PartitionMetadata } from '../../broker/cli/admin-client.js';
import { ManualClock } from '../../broker/common/clock.js';
import { PartitionLog } from '../../broker/log/partition-log.js';
import { iterateBatches, lastOffset } from '../../broker/protocol/record-batch.js';
import { logConfig } from '../../metadata/log-config.js';
import { runProcess } from '../clients/common.js';
import { startEtcd, type EtcdServer } from '../support/etcd.js';
import { KafkaTool, runKafkaTool } from '../support/kafka-reference.js';
import { startSedimentCluster, type SedimentCluster } from '../support/sediment-cluster.js';
import { kcatPath, requireTools } from '../support/tools.js';

const TOPIC = 'moved';
const REASSIGN = 'org.apache.kafka.tools.reassign.ReassignPartitionsCommand';
const RECORDS = 2000;

let etcd: EtcdServer;
let cluster: SedimentCluster;
let work: string;

function partitionOf(md: ClusterMetadata): PartitionMetadata | undefined {
  return md.topics.find((t) => t.name === TOPIC)?.partitions[0];
}

async function kcatValues(bootstrap: string): Promise<string[]> {
  const c = await runProcess(kcatPath, ['-C', '-b', bootstrap, '-t', TOPIC, '-p', '0', '-o', 'beginning', '-e', '-q', '-f', '%s\n'], { timeoutMs: 60_000 });
  assert.equal(c.code, 0, c.stderr);
  return c.stdout.split('\n').filter((l) => l !== '');
}

/** The partition's batches as `nodeId`'s log holds them (a copy of its directory, opened here), with the topic id its partition.metadata names. */
async function batchesOf(nodeId: number, topicId: string): Promise<{ bytes: Buffer; count: number }> {
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'sediment-reassign-copy-'));
  try {
    const dst = path.join(tmp, `${TOPIC}-0`);
    await cp(path.join(cluster.broker(nodeId).dataDir, `${TOPIC}-0`), dst, { recursive: true });
    const log = await PartitionLog.open({ dir: dst, topic: TOPIC, partition: 0, topicId, config: logConfig({}), clock: new ManualClock(Date.now()) });
    const out: Buffer[] = [];
    let next = log.logStartOffset;
    let count = 0;
    const end = log.logEndOffset;
    while (next < end) {
      const r = await log.read(next, 1 << 20, { maxOffset: end, minOneBatch: true });
      if (r.records.length === 0) break;
      out.push(...r.records);
      for (const b of r.records) {
        for (const x of iterateBatches(b)) {
          next = lastOffset(x.header) + 1n;
          count++;
        }
      }
    }
    await log.close();
    return { bytes: Buffer.concat(out), count };
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

async function reassignTool(args: readonly string[]): Promise<string> {
  const r = await runKafkaTool(REASSIGN, ['--bootstrap-server', cluster.bootstrap, ...args], { timeoutMs: 120_000 });
  assert.equal(r.code, 0, `kafka-reassign-partitions ${args.join(' ')} exited ${r.code}:\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

describe('partition reassignment with kafka-reassign-partitions over three brokers and etcd', () => {
  before(async () => {
    requireTools(['etcd', 'kcat', 'java', 'kafka']);
    work = await mkdtemp(path.join(os.tmpdir(), 'sediment-reassign-'));
    etcd = await startEtcd();
    cluster = await startSedimentCluster({
      etcd,
      brokers: 3,
      prefix: `/e2e-reassign-${process.pid}`,
      overrides: { 'broker.session.timeout.ms': '9000', 'broker.heartbeat.interval.ms': '2000', 'auto.leader.rebalance.enable': 'false' },
    });
  });
  after(async () => {
    await cluster?.close();
    await etcd?.stop();
    if (work !== undefined) await rm(work, { recursive: true, force: true });
  });

  let topicId = '';
  let original: { bytes: Buffer; count: number } = { bytes: Buffer.alloc(0), count: 0 };
  const produced = Array.from({ length: RECORDS }, (_, i) => `r${i}`);

  it('an RF 2 topic on brokers {1,2} takes acks=all records', async () => {
    const created = await runKafkaTool(KafkaTool.topics, ['--bootstrap-server', cluster.broker(1).bootstrap, '--create', '--topic', TOPIC, '--replica-assignment', '1:2']);
    assert.match(created.stdout, new RegExp(`Created topic ${TOPIC}\\.`), created.stderr);
    await cluster.untilMetadata(1, [TOPIC], (m) => partitionOf(m)?.isr.length === 2 && partitionOf(m)?.leader === 1, 20_000, 'ISR [1,2] with leader 1');
    // In several produce requests, so the log holds many batches.
    for (let i = 0; i < 4; i++) {
      const chunk = produced.slice((i * RECORDS) / 4, ((i + 1) * RECORDS) / 4);
      const p = await runProcess(kcatPath, ['-P', '-b', cluster.bootstrap, '-t', TOPIC, '-p', '0', '-X', 'acks=all', '-X', 'linger.ms=5', '-X', 'batch.num.messages=50'], { input: chunk.map((v) => `${v}\n`).join(''), timeoutMs: 60_000 });
      assert.equal(p.code, 0, p.stderr);
    }
    assert.deepEqual(await kcatValues(cluster.bootstrap), produced);
    const md = await cluster.metadataFrom(1, [TOPIC]);
    topicId = md.topics[0]!.topicId;
    original = await batchesOf(1, topicId);
    assert.ok(original.count >= 4, `${original.count} batches`);
  });

  it('--execute moves it to {2,3}; --verify reports it completed; metadata shows replicas and ISR [2,3]', async () => {
    const file = path.join(work, 'reassign.json');
    await writeFile(file, JSON.stringify({ version: 1, partitions: [{ topic: TOPIC, partition: 0, replicas: [2, 3], log_dirs: ['any', 'any'] }] }));
    const executed = await reassignTool(['--reassignment-json-file', file, '--execute']);
    assert.match(executed, /Current partition replica assignment/);
    assert.match(executed, new RegExp(`"replicas":\\[1,2\\]`));
    assert.match(executed, new RegExp(`Successfully started partition reassignment for ${TOPIC}-0`));
    const deadline = Date.now() + 90_000;
    let verified = '';
    for (;;) {
      verified = await reassignTool(['--reassignment-json-file', file, '--verify']);
      if (verified.includes(`Reassignment of partition ${TOPIC}-0 is completed.`)) break;
      assert.match(verified, new RegExp(`Reassignment of partition ${TOPIC}-0 is still in progress\\.`), verified);
      assert.ok(Date.now() < deadline, `not completed within 90 s:\n${verified}`);
      await new Promise((r) => setTimeout(r, 500));
    }
    assert.match(verified, /Clearing broker-level throttles/);
    for (const id of [1, 2, 3]) {
      const md = await cluster.untilMetadata(id, [TOPIC], (m) => partitionOf(m)?.replicas.length === 2 && partitionOf(m)?.replicas.includes(3) === true, 10_000, `replicas [2,3] on node ${id}`);
      const p = partitionOf(md)!;
      assert.deepEqual(p.replicas, [2, 3]);
      assert.deepEqual([...p.isr].sort(), [2, 3]);
      assert.ok(p.leader === 2 || p.leader === 3, `leader ${p.leader}`);
    }
  });

  it('broker 3 holds every record batch for batch, broker 1 deleted its copy, a consumer reads everything', async () => {
    // Broker 1 deletes its log once its image shows it is no longer a replica.
    const dir1 = path.join(cluster.broker(1).dataDir, `${TOPIC}-0`);
    const deadline = Date.now() + 20_000;
    while (existsSync(dir1)) {
      assert.ok(Date.now() < deadline, `broker 1 still has ${dir1}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.ok(cluster.broker(1).logs.lines.some((l) => l['topic'] === TOPIC && typeof l.msg === 'string' && l.msg.startsWith('deleted the local replica')), 'broker 1 logged the deletion');
    const on3 = await batchesOf(3, topicId);
    assert.equal(on3.count, original.count);
    assert.ok(on3.bytes.equals(original.bytes), 'broker 3 holds the same batches, byte for byte, as broker 1 did');
    assert.deepEqual(await kcatValues(cluster.broker(3).bootstrap), produced);
  });

  it('--list shows no reassignment in progress', async () => {
    const listed = await reassignTool(['--list']);
    assert.match(listed, /No partition reassignments found\./, listed);
  });

  it('--execute --throttle holds the new replica to the rate; --verify clears the throttles once complete', async () => {
    const topic = 'throttled';
    const created = await runKafkaTool(KafkaTool.topics, ['--bootstrap-server', cluster.broker(1).bootstrap, '--create', '--topic', topic, '--replica-assignment', '1:2']);
    assert.match(created.stdout, new RegExp(`Created topic ${topic}\\.`), created.stderr);
    await cluster.untilMetadata(1, [topic], (m) => m.topics[0]?.partitions[0]?.isr.length === 2, 20_000, 'ISR [1,2]');
    const value = 'x'.repeat(1000);
    const count = 4000; // 4 MB: twice what an 11 s window at the rate below lets through at once
    const p = await runProcess(kcatPath, ['-P', '-b', cluster.bootstrap, '-t', topic, '-p', '0', '-X', 'acks=all'], { input: Array.from({ length: count }, (_, i) => `${i}${value}\n`).join(''), timeoutMs: 120_000 });
    assert.equal(p.code, 0, p.stderr);
    const rate = 200_000;
    const file = path.join(work, 'throttled.json');
    await writeFile(file, JSON.stringify({ version: 1, partitions: [{ topic, partition: 0, replicas: [2, 3], log_dirs: ['any', 'any'] }] }));
    const started = Date.now();
    const executed = await reassignTool(['--reassignment-json-file', file, '--execute', '--throttle', String(rate)]);
    assert.match(executed, new RegExp(`The inter-broker throttle limit was set to ${rate} B/s`), executed);
    // The rate is a dynamic config of every broker of the move, as kafka-configs shows it.
    const described = await runKafkaTool(KafkaTool.configs, ['--bootstrap-server', cluster.broker(3).bootstrap, '--describe', '--entity-type', 'brokers', '--entity-name', '3']);
    assert.match(described.stdout, new RegExp(`Dynamic configs for broker 3 are:[\\s\\S]*follower\\.replication\\.throttled\\.rate=${rate} sensitive=false synonyms=\\{DYNAMIC_BROKER_CONFIG:follower\\.replication\\.throttled\\.rate=${rate}`), `${described.stdout}\n${described.stderr}`);
    const deadline = Date.now() + 120_000;
    let verified = '';
    let polls = 0;
    for (;;) {
      verified = await reassignTool(['--reassignment-json-file', file, '--verify']);
      polls++;
      if (verified.includes(`Reassignment of partition ${topic}-0 is completed.`)) break;
      assert.ok(Date.now() < deadline, `not completed within 120 s:\n${verified}`);
      await new Promise((r) => setTimeout(r, 1000));
    }
    const tookMs = Date.now() - started;
    console.log(`throttled reassignment of ${count} KB at ${rate} B/s: completed after ${tookMs} ms (${polls} --verify runs)`);
    // Unthrottled, the first move (2 MB) took well under this; 4 MB at 200 KB/s needs more than one 11 s window.
    assert.ok(tookMs >= 10_000, `completed in ${tookMs} ms: the throttle did not hold`);
    assert.match(verified, /Clearing broker-level throttles on brokers/);
    assert.match(verified, new RegExp(`Clearing topic-level throttles on topic ${topic}`));
    const md = await cluster.untilMetadata(3, [topic], (m) => m.topics[0]?.partitions[0]?.replicas.length === 2, 10_000, 'replicas [2,3]');
    assert.deepEqual(md.topics[0]!.partitions[0]!.replicas, [2, 3]);
    const c = await runProcess(kcatPath, ['-C', '-b', cluster.broker(3).bootstrap, '-t', topic, '-p', '0', '-o', 'beginning', '-e', '-q', '-f', '%s\n'], { timeoutMs: 60_000 });
    assert.equal(c.stdout.split('\n').filter((l) => l !== '').length, count);
  });

  it('a reassignment held back by a low throttle is in progress (--list, Metadata show the union) until --cancel reverts it; the added replica deletes its copy', async () => {
    const topic = 'cancelled';
    const created = await runKafkaTool(KafkaTool.topics, ['--bootstrap-server', cluster.broker(1).bootstrap, '--create', '--topic', topic, '--replica-assignment', '1:2']);
    assert.match(created.stdout, new RegExp(`Created topic ${topic}\\.`), created.stderr);
    await cluster.untilMetadata(1, [topic], (m) => m.topics[0]?.partitions[0]?.isr.length === 2, 20_000, 'ISR [1,2]');
    const value = 'y'.repeat(1000);
    const count = 1000;
    const p = await runProcess(kcatPath, ['-P', '-b', cluster.bootstrap, '-t', topic, '-p', '0', '-X', 'acks=all'], { input: Array.from({ length: count }, (_, i) => `${i}${value}\n`).join(''), timeoutMs: 120_000 });
    assert.equal(p.code, 0, p.stderr);
    const file = path.join(work, 'cancelled.json');
    await writeFile(file, JSON.stringify({ version: 1, partitions: [{ topic, partition: 0, replicas: [2, 3], log_dirs: ['any', 'any'] }] }));
    // 1 MB at 1000 B/s: it cannot complete while the test looks at it.
    await reassignTool(['--reassignment-json-file', file, '--execute', '--throttle', '1000']);
    const listed = await reassignTool(['--list']);
    assert.match(listed, new RegExp(`Current partition reassignments:\\s+${topic}-0: replicas: 2,3,1\\. adding: 3\\. removing: 1\\.`), listed);
    for (const id of [1, 2, 3]) {
      const md = await cluster.untilMetadata(id, [topic], (m) => m.topics[0]?.partitions[0]?.replicas.length === 3, 10_000, `the union on node ${id}`);
      const part = md.topics[0]!.partitions[0]!;
      assert.deepEqual(part.replicas, [2, 3, 1], 'Metadata shows the target and the replicas being removed');
      assert.deepEqual([...part.isr].sort(), [1, 2], 'the new replica has not caught up');
    }
    const dir3 = path.join(cluster.broker(3).dataDir, `${topic}-0`);
    assert.ok(existsSync(dir3), 'the adding replica has a log');
    const cancelled = await reassignTool(['--reassignment-json-file', file, '--cancel']);
    assert.match(cancelled, new RegExp(`Successfully cancelled partition reassignment for: ${topic}-0`), cancelled);
    for (const id of [1, 2, 3]) {
      const md = await cluster.untilMetadata(id, [topic], (m) => m.topics[0]?.partitions[0]?.replicas.length === 2, 10_000, `reverted on node ${id}`);
      assert.deepEqual([...md.topics[0]!.partitions[0]!.replicas].sort(), [1, 2]);
    }
    const deadline = Date.now() + 20_000;
    while (existsSync(dir3)) {
      assert.ok(Date.now() < deadline, `broker 3 still has ${dir3}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.match(await reassignTool(['--list']), /No partition reassignments found\./);
    const c = await runProcess(kcatPath, ['-C', '-b', cluster.bootstrap, '-t', topic, '-p', '0', '-o', 'beginning', '-e', '-q', '-f', '%s\n'], { timeoutMs: 60_000 });
    assert.equal(c.stdout.split('\n').filter((l) => l !== '').length, count);
  });

  it('a broker that was down while its replica was moved away deletes its copy when it starts again', async () => {
    const topic = 'while-down';
    const created = await runKafkaTool(KafkaTool.topics, ['--bootstrap-server', cluster.broker(2).bootstrap, '--create', '--topic', topic, '--replica-assignment', '1:2']);
    assert.match(created.stdout, new RegExp(`Created topic ${topic}\\.`), created.stderr);
    await cluster.untilMetadata(2, [topic], (m) => m.topics[0]?.partitions[0]?.isr.length === 2, 20_000, 'ISR [1,2]');
    const p = await runProcess(kcatPath, ['-P', '-b', cluster.bootstrap, '-t', topic, '-p', '0', '-X', 'acks=all'], { input: Array.from({ length: 100 }, (_, i) => `w${i}\n`).join(''), timeoutMs: 60_000 });
    assert.equal(p.code, 0, p.stderr);
    const dir1 = path.join(cluster.broker(1).dataDir, `${topic}-0`);
    assert.ok(existsSync(dir1));
    await cluster.broker(1).kill();
    await cluster.untilMetadata(2, [topic], (m) => m.topics[0]?.partitions[0]?.leader === 2, 30_000, 'broker 2 leads once broker 1 is gone');
    const file = path.join(work, 'while-down.json');
    await writeFile(file, JSON.stringify({ version: 1, partitions: [{ topic, partition: 0, replicas: [2, 3], log_dirs: ['any', 'any'] }] }));
    await reassignTool(['--reassignment-json-file', file, '--execute']);
    await cluster.untilMetadata(2, [topic], (m) => m.topics[0]?.partitions[0]?.replicas.length === 2 && m.topics[0]?.partitions[0]?.isr.length === 2, 30_000, 'moved to [2,3] without broker 1');
    assert.ok(existsSync(dir1), 'the dead broker still has its copy');
    await cluster.broker(1).restart();
    const deadline = Date.now() + 30_000;
    while (existsSync(dir1)) {
      assert.ok(Date.now() < deadline, `broker 1 kept ${dir1} after its restart`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const c = await runProcess(kcatPath, ['-C', '-b', cluster.broker(1).bootstrap, '-t', topic, '-p', '0', '-o', 'beginning', '-e', '-q', '-f', '%s\n'], { timeoutMs: 60_000 });
    assert.equal(c.stdout.split('\n').filter((l) => l !== '').length, 100, 'everything is read through the restarted broker');
  });
});
