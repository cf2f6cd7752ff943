// Deleting a tiered RF 3 topic over three `sediment start` processes, a real
// etcd and one shared filesystem remote store: the partition's remote data
// is deleted once, by its leader (Kafka's deleteRemoteLog where the broker
// led the partition), and completely: the store holds nothing of the topic
// afterwards, and no other broker started a delete of its remote partition.
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { AdminClient, type ClusterMetadata, type PartitionMetadata } from '../../broker/cli/admin-client.js';
import { ErrorCode } from '../../broker/protocol/errors.js';
import { runProcess } from '../clients/common.js';
import { startEtcd, type EtcdServer } from '../support/etcd.js';
import { startSedimentCluster, type SedimentCluster } from '../support/sediment-cluster.js';
import { kcatPath, requireTools } from '../support/tools.js';

const TOPIC = 'tiered-doomed';
const SEGMENT_BYTES = 16_384;

let etcd: EtcdServer;
let cluster: SedimentCluster;
let remoteDir = '';

function partitionOf(md: ClusterMetadata): PartitionMetadata | undefined {
  return md.topics.find((t) => t.name === TOPIC)?.partitions[0];
}

async function remoteFiles(topicId: string): Promise<string[]> {
  return readdir(path.join(remoteDir, `${TOPIC}-${topicId}`, '0')).catch(() => [] as string[]);
}

async function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() >= deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

const deleteStartedBy = (nodeId: number): number => cluster.broker(nodeId).logs.lines.filter((l) => l.msg === 'remote partition delete started' && l['topic'] === TOPIC).length;

describe('deleting a tiered RF 3 topic over three broker processes, etcd and a shared filesystem store', () => {
  before(async () => {
    requireTools(['etcd', 'kcat']);
    etcd = await startEtcd();
    remoteDir = await mkdtemp(path.join(os.tmpdir(), 'sediment-delete-remote-'));
    cluster = await startSedimentCluster({
      etcd,
      brokers: 3,
      prefix: `/e2e-tiered-delete-${process.pid}`,
      overrides: {
        'broker.session.timeout.ms': '9000',
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

  it('the leader alone deletes the remote data, all of it', async () => {
    const admin = await AdminClient.connect(cluster.broker(1).bootstrap);
    try {
      const configs = new Map([
        ['min.insync.replicas', '2'],
        ['remote.storage.enable', 'true'],
        ['internal.segment.bytes', String(SEGMENT_BYTES)],
        ['local.retention.ms', '1000'],
      ]);
      const [r] = await admin.createTopics([{ name: TOPIC, numPartitions: 1, replicationFactor: 3, configs }]);
      assert.equal(r?.errorCode, ErrorCode.NONE, r?.errorMessage ?? '');
      const topicId = r!.topicId;
      const md = await cluster.untilMetadata(1, [TOPIC], (m) => partitionOf(m)?.isr.length === 3 && (partitionOf(m)?.leader ?? -1) > 0, 15_000, 'ISR of 3');
      const leader = partitionOf(md)!.leader;
      const input = Array.from({ length: 600 }, (_, i) => `${String(i).padStart(5, '0')}-${'x'.repeat(150)}\n`).join('');
      const p = await runProcess(kcatPath, ['-P', '-b', cluster.bootstrap, '-t', TOPIC, '-p', '0', '-X', 'acks=all', '-X', 'linger.ms=5', '-X', 'batch.num.messages=20', '-X', 'message.timeout.ms=60000'], { input, timeoutMs: 60_000 });
      assert.equal(p.code, 0, p.stderr);
      await until('four segments remote', 90_000, async () => ((await remoteFiles(topicId)).filter((n) => n.endsWith('.manifest')).length >= 4 ? true : undefined));

      const [d] = await admin.deleteTopics([TOPIC]);
      assert.equal(d?.errorCode, ErrorCode.NONE);
      await until('the remote partition empty', 60_000, async () => ((await remoteFiles(topicId)).length === 0 ? true : undefined));
      await until('the leader logged the delete', 10_000, async () => (deleteStartedBy(leader) === 1 ? true : undefined));
      for (const id of [1, 2, 3].filter((n) => n !== leader)) assert.equal(deleteStartedBy(id), 0, `broker ${id} (a follower) started no remote delete`);
    } finally {
      admin.close();
    }
  });
});
