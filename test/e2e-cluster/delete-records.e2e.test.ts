// DeleteRecords on an RF 3 topic over three `sediment start` processes and a
// real etcd, as Kafka's DelayedDeleteRecords: the leader's answer comes once
// every live follower moved its log start to the offset (the low watermark),
// so right after it each follower refuses offsets below it; a follower's moved
// log start is in its log-start-offset-checkpoint after a clean restart; after
// kill -9 of the leader the new leader does not show the deleted records.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { AdminClient, type ClusterMetadata, type PartitionMetadata } from '../../broker/cli/admin-client.js';
import { ErrorCode } from '../../broker/protocol/errors.js';
import { apis } from '../../broker/protocol/messages/index.js';
import type { DeleteRecordsResponse } from '../../broker/protocol/messages/delete-records.js';
import type { FetchResponsePartitionData } from '../../broker/protocol/messages/fetch.js';
import { buildRecordBatch } from '../../broker/protocol/record-batch.js';
import { runProcess } from '../clients/common.js';
import { startEtcd, type EtcdServer } from '../support/etcd.js';
import { startSedimentCluster, type SedimentCluster } from '../support/sediment-cluster.js';
import { kcatPath, requireTools } from '../support/tools.js';

const TOPIC = 'trimmed';
const SESSION_TIMEOUT_MS = 6000;
const DELETE_BEFORE = 23n;
const RECORDS = 50;

let etcd: EtcdServer;
let cluster: SedimentCluster;

function partitionOf(md: ClusterMetadata): PartitionMetadata | undefined {
  return md.topics.find((t) => t.name === TOPIC)?.partitions[0];
}

/** acks=all straight to `nodeId`, retried while retriable (the leader's image may be a moment behind node 1's). */
async function produce(nodeId: number, values: readonly string[]): Promise<number> {
  const records = buildRecordBatch({ records: values.map((value) => ({ key: null, value, timestamp: Date.now() })) });
  return cluster.produceRetrying(nodeId, { topic: TOPIC, acks: -1 }, records);
}

async function deleteRecords(nodeId: number, offset: bigint, timeoutMs: number): Promise<DeleteRecordsResponse['topics'][number]['partitions'][number]> {
  const conn = await cluster.connect(nodeId);
  try {
    const { body } = await conn.send(apis.DeleteRecords, () => ({ timeoutMs, topics: [{ name: TOPIC, partitions: [{ partitionIndex: 0, offset }] }] }));
    return body.topics[0]!.partitions[0]!;
  } finally {
    conn.close();
  }
}

/** A consumer's sessionless Fetch at `offset` sent to one broker, leader or follower (a follower answers consumers, KIP-392). */
async function fetchAt(nodeId: number, topicId: string, offset: bigint): Promise<FetchResponsePartitionData> {
  const conn = await cluster.connect(nodeId);
  try {
    const { body } = await conn.send(apis.Fetch, () => ({
      replicaId: -1,
      maxWaitMs: 0,
      minBytes: 1,
      maxBytes: 1 << 20,
      isolationLevel: 0,
      sessionId: 0,
      sessionEpoch: -1,
      topics: [{ topic: TOPIC, topicId, partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: offset, lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: 1 << 20 }] }],
      forgottenTopicsData: [],
      rackId: '',
    }), { min: 13 });
    return body.responses[0]!.partitions[0]!;
  } finally {
    conn.close();
  }
}

describe('DeleteRecords on an RF 3 topic over three broker processes and etcd', () => {
  before(async () => {
    requireTools(['etcd', 'kcat']);
    etcd = await startEtcd();
    cluster = await startSedimentCluster({
      etcd,
      brokers: 3,
      prefix: `/e2e-delete-records-${process.pid}`,
      overrides: { 'broker.session.timeout.ms': String(SESSION_TIMEOUT_MS), 'broker.heartbeat.interval.ms': '1500', 'auto.leader.rebalance.enable': 'false' },
    });
  });
  after(async () => {
    await cluster?.close();
    await etcd?.stop();
  });

  let topicId = '';
  let leader = -1;
  let followers: number[] = [];

  it('answers with the low watermark once every follower moved its log start to the offset', async () => {
    const admin = await AdminClient.connect(cluster.broker(1).bootstrap);
    try {
      const [r] = await admin.createTopics([{ name: TOPIC, numPartitions: 1, replicationFactor: 3, configs: new Map([['min.insync.replicas', '2']]) }]);
      assert.equal(r?.errorCode, ErrorCode.NONE, r?.errorMessage ?? '');
      topicId = r!.topicId;
    } finally {
      admin.close();
    }
    const md = await cluster.untilMetadata(1, [TOPIC], (m) => partitionOf(m)?.isr.length === 3 && (partitionOf(m)?.leader ?? -1) > 0, 15_000, 'ISR of 3');
    leader = partitionOf(md)!.leader;
    followers = [1, 2, 3].filter((id) => id !== leader);
    for (let i = 0; i < RECORDS; i += 10) assert.equal(await produce(leader, Array.from({ length: 10 }, (_, j) => `v${i + j}`)), ErrorCode.NONE);

    assert.equal((await deleteRecords(followers[0]!, DELETE_BEFORE, 5000)).errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER);
    const answer = await deleteRecords(leader, DELETE_BEFORE, 30_000);
    assert.deepEqual({ errorCode: answer.errorCode, lowWatermark: answer.lowWatermark }, { errorCode: ErrorCode.NONE, lowWatermark: DELETE_BEFORE });
    // The low watermark is the smallest log start over the replicas: each follower already refuses what was deleted.
    for (const id of [leader, ...followers]) {
      const below = await fetchAt(id, topicId, 0n);
      assert.deepEqual({ node: id, errorCode: below.errorCode, logStartOffset: below.logStartOffset }, { node: id, errorCode: ErrorCode.OFFSET_OUT_OF_RANGE, logStartOffset: DELETE_BEFORE });
    }
  });

  it('a follower\'s moved log start is checkpointed by a clean shutdown and is its log start after the restart', async () => {
    const f = followers[0]!;
    await cluster.broker(f).stop();
    const lines = (await readFile(path.join(cluster.broker(f).dataDir, 'log-start-offset-checkpoint'), 'utf8')).split('\n');
    assert.ok(lines.includes(`${TOPIC} 0 ${DELETE_BEFORE}`), lines.join('\n'));
    await cluster.broker(f).start();
    const below = await fetchAt(f, topicId, 0n);
    assert.deepEqual({ errorCode: below.errorCode, logStartOffset: below.logStartOffset }, { errorCode: ErrorCode.OFFSET_OUT_OF_RANGE, logStartOffset: DELETE_BEFORE });
    await cluster.untilMetadata(leader, [TOPIC], (m) => partitionOf(m)?.isr.length === 3, 20_000, 'the restarted follower back in the ISR');
  });

  it('after kill -9 of the leader the new leader starts at the deleted offset: its earliest offset, and a consumer from the beginning', async () => {
    await cluster.broker(leader).kill();
    const md = await cluster.untilMetadata(followers[0]!, [TOPIC], (m) => followers.includes(partitionOf(m)?.leader ?? -1), SESSION_TIMEOUT_MS + 20_000, 'a new leader');
    const next = partitionOf(md)!.leader;
    const admin = await AdminClient.connect(cluster.broker(next).bootstrap);
    try {
      const [earliest] = await admin.listOffsets([{ topic: TOPIC, partition: 0, timestamp: -2n }]);
      assert.deepEqual({ errorCode: earliest?.errorCode, offset: earliest?.offset }, { errorCode: ErrorCode.NONE, offset: DELETE_BEFORE });
    } finally {
      admin.close();
    }
    const c = await runProcess(kcatPath, ['-C', '-b', cluster.broker(next).bootstrap, '-t', TOPIC, '-p', '0', '-o', 'beginning', '-e', '-q', '-f', '%o %s\n'], { timeoutMs: 60_000 });
    assert.equal(c.code, 0, c.stderr);
    const got = c.stdout.split('\n').filter((l) => l !== '');
    assert.deepEqual(got, Array.from({ length: RECORDS - Number(DELETE_BEFORE) }, (_, i) => `${Number(DELETE_BEFORE) + i} v${Number(DELETE_BEFORE) + i}`));
  });
});
