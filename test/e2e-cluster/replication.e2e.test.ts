// Replication across three `sediment start` processes over a real etcd: an RF 3
// topic with min.insync.replicas=2; kcat (librdkafka) produces with acks=all
// and idempotence; the leader is killed -9, a new leader is elected from the
// ISR and every acknowledged record is read back from it (the failover time,
// kill to the first acks=all write accepted, is printed); with two of three
// brokers down acks=all is refused with NOT_ENOUGH_REPLICAS while reads and
// acks=1 go on; an old leader holding records no one else has (written with
// acks=1 while its followers were paused) restarts, truncates them away and
// catches up: below the high watermark every replica's log is batch for batch
// the leader's.
import assert from 'node:assert/strict';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { AdminClient, type ClusterMetadata, type PartitionMetadata } from '../../broker/cli/admin-client.js';
import { ManualClock } from '../../broker/common/clock.js';
import { PartitionLog } from '../../broker/log/partition-log.js';
import { ErrorCode } from '../../broker/protocol/errors.js';
import { apis } from '../../broker/protocol/messages/index.js';
import { buildRecordBatch, iterateBatches, lastOffset } from '../../broker/protocol/record-batch.js';
import { logConfig } from '../../metadata/log-config.js';
import { runProcess } from '../clients/common.js';
import { startEtcd, type EtcdServer } from '../support/etcd.js';
import { startSedimentCluster, type SedimentCluster } from '../support/sediment-cluster.js';
import { kcatPath, requireTools } from '../support/tools.js';

const TOPIC = 'replicated';
const SESSION_TIMEOUT_MS = 9000;

let etcd: EtcdServer;
let cluster: SedimentCluster;

function partitionOf(md: ClusterMetadata): PartitionMetadata | undefined {
  return md.topics.find((t) => t.name === TOPIC)?.partitions[0];
}

async function kcatProduce(bootstrap: string, values: readonly string[], extra: readonly string[] = []): Promise<{ code: number | null; stderr: string }> {
  const input = values.map((v) => `${v}\n`).join('');
  const args = ['-P', '-b', bootstrap, '-t', TOPIC, '-p', '0', '-X', 'acks=all', '-X', 'enable.idempotence=true', '-X', 'message.timeout.ms=30000', ...extra];
  const p = await runProcess(kcatPath, args, { input, timeoutMs: 60_000 });
  return { code: p.code, stderr: p.stderr };
}

async function kcatValues(bootstrap: string): Promise<string[]> {
  const c = await runProcess(kcatPath, ['-C', '-b', bootstrap, '-t', TOPIC, '-p', '0', '-o', 'beginning', '-e', '-q', '-f', '%s\n'], { timeoutMs: 60_000 });
  assert.equal(c.code, 0, c.stderr);
  return c.stdout.split('\n').filter((l) => l !== '');
}

/** One Produce of one record straight to `nodeId`: the partition's error code, as the broker answered it. */
async function produceOnce(nodeId: number, acks: number, value: string): Promise<number> {
  return cluster.produceTo(nodeId, { topic: TOPIC, acks, timeoutMs: 5000 }, buildRecordBatch({ records: [{ key: null, value, timestamp: Date.now() }] }));
}

/** The partition's batches below `end`, as the log of `nodeId` holds them (a copy of its directory, opened here). */
async function batchesOf(nodeId: number, topicId: string, end: bigint): Promise<Buffer> {
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'sediment-repl-copy-'));
  try {
    const src = path.join(cluster.broker(nodeId).dataDir, `${TOPIC}-0`);
    const dst = path.join(tmp, `${TOPIC}-0`);
    await cp(src, dst, { recursive: true });
    const log = await PartitionLog.open({ dir: dst, topic: TOPIC, partition: 0, topicId, config: logConfig({}), clock: new ManualClock(Date.now()) });
    const out: Buffer[] = [];
    let next = log.logStartOffset;
    while (next < end) {
      const r = await log.read(next, 1 << 20, { maxOffset: end, minOneBatch: true });
      if (r.records.length === 0) break;
      out.push(...r.records);
      for (const b of r.records) for (const x of iterateBatches(b)) next = lastOffset(x.header) + 1n;
    }
    await log.close();
    return Buffer.concat(out);
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

describe('replication: RF 3, acks=all, min.insync.replicas=2, over three broker processes and etcd', () => {
  before(async () => {
    requireTools(['etcd', 'kcat']);
    etcd = await startEtcd();
    cluster = await startSedimentCluster({
      etcd,
      brokers: 3,
      prefix: `/e2e-replication-${process.pid}`,
      overrides: { 'broker.session.timeout.ms': String(SESSION_TIMEOUT_MS), 'broker.heartbeat.interval.ms': '2000', 'auto.leader.rebalance.enable': 'false' },
    });
  });
  after(async () => {
    await cluster?.close();
    await etcd?.stop();
  });

  let topicId = '';
  let firstLeader = -1;
  const acknowledged: string[] = [];

  it('creates an RF 3 topic whose three replicas are all in the ISR', async () => {
    const admin = await AdminClient.connect(cluster.broker(1).bootstrap);
    try {
      const [r] = await admin.createTopics([{ name: TOPIC, numPartitions: 1, replicationFactor: 3, configs: new Map([['min.insync.replicas', '2']]) }]);
      assert.equal(r?.errorCode, ErrorCode.NONE, r?.errorMessage ?? '');
      topicId = r!.topicId;
    } finally {
      admin.close();
    }
    for (const id of [1, 2, 3]) {
      const md = await cluster.untilMetadata(id, [TOPIC], (m) => partitionOf(m)?.isr.length === 3 && (partitionOf(m)?.leader ?? -1) > 0, 10_000, `ISR of 3 on node ${id}`);
      assert.deepEqual([...partitionOf(md)!.replicas].sort(), [1, 2, 3]);
      firstLeader = partitionOf(md)!.leader;
    }
  });

  it('acks=all writes are acknowledged and every replica holds them', async () => {
    const values = Array.from({ length: 300 }, (_, i) => `a${i}`);
    const r = await kcatProduce(cluster.bootstrap, values);
    assert.equal(r.code, 0, r.stderr);
    acknowledged.push(...values);
    assert.deepEqual(await kcatValues(cluster.bootstrap), acknowledged);
  });

  it('after kill -9 of the leader a new leader from the ISR serves every acknowledged record and takes acks=all writes', async () => {
    const killedAt = Date.now();
    await cluster.broker(firstLeader).kill();
    const survivor = [1, 2, 3].find((id) => id !== firstLeader)!;
    const md = await cluster.untilMetadata(survivor, [TOPIC], (m) => {
      const p = partitionOf(m);
      return p !== undefined && p.leader > 0 && p.leader !== firstLeader;
    }, SESSION_TIMEOUT_MS + 10_000, 'a new leader');
    const newLeader = partitionOf(md)!.leader;
    let accepted = -1;
    for (let attempt = 0; attempt < 50 && accepted < 0; attempt++) {
      const code = await produceOnce(newLeader, -1, `probe${attempt}`);
      if (code === ErrorCode.NONE) {
        accepted = Date.now() - killedAt;
        acknowledged.push(`probe${attempt}`);
      } else {
        assert.ok(([ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.NOT_ENOUGH_REPLICAS, ErrorCode.REQUEST_TIMED_OUT] as number[]).includes(code), `retriable error expected, got ${code}`);
      }
    }
    assert.ok(accepted >= 0, 'the new leader took an acks=all write');
    console.log(`failover: kill -9 of leader ${firstLeader} to the first acks=all write accepted by leader ${newLeader}: ${accepted} ms (broker.session.timeout.ms=${SESSION_TIMEOUT_MS})`);
    const more = Array.from({ length: 100 }, (_, i) => `b${i}`);
    const r = await kcatProduce(cluster.bootstrap, more);
    assert.equal(r.code, 0, r.stderr);
    acknowledged.push(...more);
    assert.deepEqual(await kcatValues(cluster.bootstrap), acknowledged);
  });

  it('with two of three brokers down acks=all is refused with NOT_ENOUGH_REPLICAS, reads and acks=1 go on', async () => {
    const alive = [1, 2, 3].filter((id) => id !== firstLeader);
    const md0 = await cluster.metadataFrom(alive[0]!, [TOPIC]);
    const leader = partitionOf(md0)!.leader;
    const other = alive.find((id) => id !== leader)!;
    await cluster.broker(other).kill();
    // The controller drops the dead broker from the ISR once its lease expires.
    await cluster.untilMetadata(leader, [TOPIC], (m) => partitionOf(m)?.isr.length === 1, SESSION_TIMEOUT_MS + 10_000, 'the ISR down to the leader');
    assert.equal(await produceOnce(leader, -1, 'refused'), ErrorCode.NOT_ENOUGH_REPLICAS);
    assert.equal(await produceOnce(leader, 1, 'c-acks1'), ErrorCode.NONE);
    acknowledged.push('c-acks1');
    assert.deepEqual(await kcatValues(cluster.broker(leader).bootstrap), acknowledged);
    await cluster.broker(other).restart();
    await cluster.untilMetadata(leader, [TOPIC], (m) => partitionOf(m)?.isr.length === 2, 20_000, 'the restarted follower back in the ISR');
    assert.equal(await produceOnce(leader, -1, 'c-again'), ErrorCode.NONE);
    acknowledged.push('c-again');
  });

  it('an old leader with records nobody else has truncates them on restart and catches up batch for batch', async () => {
    await cluster.broker(firstLeader).restart();
    const all = await cluster.untilMetadata(cluster.brokers.findIndex((b) => b.alive) + 1, [TOPIC], (m) => partitionOf(m)?.isr.length === 3, 30_000, 'all three in the ISR');
    const leader = partitionOf(all)!.leader;
    const followers = [1, 2, 3].filter((id) => id !== leader);
    // Followers paused, then two acks=1 writes. A fetch a follower had parked at the leader may be
    // answered with the first (the bytes wait in its socket), but no follower can ask again before
    // the second: that one is the leader's alone. Then the leader dies.
    for (const f of followers) process.kill(cluster.broker(f).pid, 'SIGSTOP');
    let code: number;
    try {
      code = await produceOnce(leader, 1, 'maybe-acks1');
      if (code === ErrorCode.NONE) code = await produceOnce(leader, 1, 'lost-acks1');
    } finally {
      await cluster.broker(leader).kill();
      for (const f of followers) process.kill(cluster.broker(f).pid, 'SIGCONT');
    }
    assert.equal(code, ErrorCode.NONE);
    const md = await cluster.untilMetadata(followers[0]!, [TOPIC], (m) => {
      const p = partitionOf(m);
      return p !== undefined && p.leader > 0 && p.leader !== leader;
    }, SESSION_TIMEOUT_MS + 10_000, 'a leader among the paused followers');
    const newLeader = partitionOf(md)!.leader;
    const before = [...acknowledged];
    const r = await kcatProduce(cluster.broker(newLeader).bootstrap, ['d0', 'd1', 'd2']);
    assert.equal(r.code, 0, r.stderr);
    acknowledged.push('d0', 'd1', 'd2');
    await cluster.broker(leader).restart();
    await cluster.untilMetadata(newLeader, [TOPIC], (m) => partitionOf(m)?.isr.length === 3, 30_000, 'the old leader back in the ISR');
    assert.ok(
      cluster.broker(leader).logs.lines.some((l) => l.msg === 'follower log diverged from the leader: truncated' && l['topic'] === TOPIC),
      `the restarted old leader logged its truncation:\n${cluster.broker(leader).logs.lines.filter((l) => l['topic'] === TOPIC || l['component'] === 'replication').map((l) => JSON.stringify(l)).join('\n')}`,
    );
    const values = await kcatValues(cluster.broker(newLeader).bootstrap);
    // The first acks=1 record survives if a follower got it before the pause, else it went with the second.
    const survived = values.includes('maybe-acks1');
    assert.deepEqual(values, survived ? [...before, 'maybe-acks1', 'd0', 'd1', 'd2'] : acknowledged, 'the acks=1 record only the dead leader had is gone; everything acknowledged is there once, in order');
    if (survived) acknowledged.splice(before.length, 0, 'maybe-acks1');
    const conn = await cluster.connect(newLeader);
    let hw: bigint;
    try {
      const { body } = await conn.send(apis.ListOffsets, () => ({ replicaId: -1, isolationLevel: 0, topics: [{ name: TOPIC, partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1n, maxNumOffsets: 1 }] }], timeoutMs: 5000 }));
      hw = body.topics[0]!.partitions[0]!.offset;
    } finally {
      conn.close();
    }
    const reference = await batchesOf(newLeader, topicId, hw);
    assert.ok(reference.length > 0);
    for (const id of [1, 2, 3]) {
      if (id === newLeader) continue;
      assert.deepEqual(await batchesOf(id, topicId, hw), reference, `node ${id}'s batches below the HW ${hw} equal the leader's`);
    }
  });
});
