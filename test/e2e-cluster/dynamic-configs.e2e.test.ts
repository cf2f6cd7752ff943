// Dynamic broker configs across three `sediment start` processes over a real
// etcd, driven by Kafka's own kafka-configs (Java admin client): a cluster-wide
// default altered through broker 1 is stored in etcd (readable with etcdctl),
// described through broker 3 with source DYNAMIC_DEFAULT_BROKER_CONFIG, and
// broker 3 acts on it at once (message.max.bytes: a record over it is refused
// with MESSAGE_TOO_LARGE by the partition broker 3 leads); a per-broker value
// beats the default on that broker only; a read-only key is refused;
// follower.fetch.last.tiered.offset.enable is accepted and in force; deleting
// the default puts the static value back in force.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AdminClient } from '../../broker/cli/admin-client.js';
import { ErrorCode } from '../../broker/protocol/errors.js';
import { apis } from '../../broker/protocol/messages/index.js';
import { buildRecordBatch } from '../../broker/protocol/record-batch.js';
import { startEtcd, type EtcdServer } from '../support/etcd.js';
import { KafkaTool, runKafkaTool } from '../support/kafka-reference.js';
import { startSedimentCluster, type SedimentCluster } from '../support/sediment-cluster.js';
import { requireTools } from '../support/tools.js';

const TOPIC = 'dynamic';
const PREFIX = `/e2e-dynamic-${process.pid}`;

let etcd: EtcdServer;
let cluster: SedimentCluster;

/** Produces one record of `size` bytes to `partition`, straight to `nodeId`: the partition's error code. */
async function produceTo(nodeId: number, partition: number, size: number): Promise<number> {
  const records = buildRecordBatch({ records: [{ key: null, value: 'x'.repeat(size), timestamp: Date.now() }] });
  return cluster.produceTo(nodeId, { topic: TOPIC, partition, acks: 1, timeoutMs: 5000, maxVersion: 9 }, records);
}

async function configs(nodeId: number, args: readonly string[], check = true) {
  return runKafkaTool(KafkaTool.configs, ['--bootstrap-server', cluster.broker(nodeId).bootstrap, '--entity-type', 'brokers', ...args], { check });
}

/** kafka-configs --describe until its output matches (each broker's image follows etcd through a watch: polled). */
async function untilDescribed(nodeId: number, args: readonly string[], pattern: RegExp, timeoutMs: number): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await configs(nodeId, ['--describe', ...args]);
    if (pattern.test(r.stdout)) return r.stdout;
    if (Date.now() >= deadline) throw new Error(`kafka-configs --describe ${args.join(' ')} through broker ${nodeId}: no ${pattern} within ${timeoutMs} ms:\n${r.stdout}`);
  }
}

/** Produces to the partition until the code is `want` (the broker applies a change once its watch delivers it). */
async function untilProduceAnswers(nodeId: number, partition: number, size: number, want: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const got = await produceTo(nodeId, partition, size);
    if (got === want) return;
    if (Date.now() >= deadline) throw new Error(`produce of ${size} bytes to broker ${nodeId}: error ${got}, not ${want}, after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('dynamic broker configs in a cluster of three brokers over etcd', () => {
  let ledBy3 = -1;

  before(async () => {
    requireTools(['etcd', 'java', 'kafka']);
    etcd = await startEtcd();
    cluster = await startSedimentCluster({ etcd, brokers: 3, prefix: PREFIX });
    const admin = await AdminClient.connect(cluster.broker(1).bootstrap);
    try {
      await admin.createTopics([{ name: TOPIC, numPartitions: 3, replicationFactor: 1, configs: new Map() }]);
    } finally {
      admin.close();
    }
    const md = await cluster.untilMetadata(3, [TOPIC], (m) => (m.topics[0]?.partitions ?? []).some((p) => p.leader === 3), 20_000, 'a partition led by broker 3');
    ledBy3 = md.topics[0]!.partitions.find((p) => p.leader === 3)!.partition;
  });
  after(async () => {
    await cluster?.close();
    await etcd?.stop();
  });

  it('a default altered through broker 1 is in etcd, described through broker 3, and enforced by broker 3', async () => {
    // A 4000-byte record is accepted under the static default (1048588), once broker 3 has opened the log.
    await untilProduceAnswers(3, ledBy3, 4000, ErrorCode.NONE, 20_000);
    const altered = await configs(1, ['--entity-default', '--alter', '--add-config', 'message.max.bytes=2048,log.retention.ms=86400000']);
    assert.match(altered.stdout, /Completed updating default config for brokers in the cluster/);
    const alteredAt = Date.now();
    await untilProduceAnswers(3, ledBy3, 4000, ErrorCode.MESSAGE_TOO_LARGE, 20_000);
    console.log(`# default altered through broker 1 -> enforced by broker 3 within ${Date.now() - alteredAt} ms of kafka-configs exiting`);

    const stored = etcd.etcdctl(['get', '--prefix', `${PREFIX}/configs/`]);
    assert.equal(stored, `${PREFIX}/configs/cluster/log.retention.ms\n86400000\n${PREFIX}/configs/cluster/message.max.bytes\n2048\n`);

    const described = await untilDescribed(3, ['--entity-default'], /message\.max\.bytes=2048/, 20_000);
    assert.match(described, /Default configs for brokers in the cluster are:/);
    assert.match(described, /log\.retention\.ms=86400000 sensitive=false synonyms=\{DYNAMIC_DEFAULT_BROKER_CONFIG:log\.retention\.ms=86400000\}/);

    const all = await configs(3, ['--entity-name', '3', '--describe', '--all']);
    assert.match(all.stdout, /message\.max\.bytes=2048 sensitive=false synonyms=\{DYNAMIC_DEFAULT_BROKER_CONFIG:message\.max\.bytes=2048, DEFAULT_CONFIG:message\.max\.bytes=1048588\}/);

    await untilProduceAnswers(3, ledBy3, 4000, ErrorCode.MESSAGE_TOO_LARGE, 20_000);
    assert.equal(await produceTo(3, ledBy3, 100), ErrorCode.NONE, 'a small record still goes in');
  });

  it("a per-broker value beats the default on that broker only", async () => {
    const altered = await configs(1, ['--entity-name', '3', '--alter', '--add-config', 'message.max.bytes=8192']);
    assert.match(altered.stdout, /Completed updating config for broker 3/);
    const described = await untilDescribed(3, ['--entity-name', '3'], /message\.max\.bytes=8192/, 20_000);
    assert.match(described, /message\.max\.bytes=8192 sensitive=false synonyms=\{DYNAMIC_BROKER_CONFIG:message\.max\.bytes=8192, DYNAMIC_DEFAULT_BROKER_CONFIG:message\.max\.bytes=2048/);
    await untilProduceAnswers(3, ledBy3, 4000, ErrorCode.NONE, 20_000);
    const md = await cluster.metadataFrom(1, [TOPIC]);
    const other = md.topics[0]!.partitions.find((p) => p.leader !== 3)!;
    assert.equal(await produceTo(other.leader, other.partition, 4000), ErrorCode.MESSAGE_TOO_LARGE, `broker ${other.leader} keeps the default`);
    await configs(1, ['--entity-name', '3', '--alter', '--delete-config', 'message.max.bytes']);
  });

  it('a read-only key is refused and nothing is written', async () => {
    const r = await configs(2, ['--entity-default', '--alter', '--add-config', 'log.dirs=/elsewhere'], false);
    assert.notEqual(r.code, 0);
    assert.match(r.stdout + r.stderr, /Cannot update these configs dynamically: Set\(log\.dirs\)/);
    assert.doesNotMatch(etcd.etcdctl(['get', '--prefix', '--keys-only', `${PREFIX}/configs/`]), /log\.dirs/);
  });

  it('follower.fetch.last.tiered.offset.enable is dynamic (Kafka 4.3): a cluster default is accepted and in force on broker 3', async () => {
    const altered = await configs(1, ['--entity-default', '--alter', '--add-config', 'follower.fetch.last.tiered.offset.enable=true']);
    assert.match(altered.stdout, /Completed updating default config for brokers in the cluster/);
    const all = await untilDescribed(3, ['--entity-name', '3', '--all'], /follower\.fetch\.last\.tiered\.offset\.enable=true/, 20_000);
    assert.match(all, /follower\.fetch\.last\.tiered\.offset\.enable=true sensitive=false synonyms=\{DYNAMIC_DEFAULT_BROKER_CONFIG:follower\.fetch\.last\.tiered\.offset\.enable=true, DEFAULT_CONFIG:follower\.fetch\.last\.tiered\.offset\.enable=false\}/);
    await configs(1, ['--entity-default', '--alter', '--delete-config', 'follower.fetch.last.tiered.offset.enable']);
  });

  it('deleting the default puts the static value back in force', async () => {
    await configs(2, ['--entity-default', '--alter', '--delete-config', 'message.max.bytes,log.retention.ms']);
    assert.equal(etcd.etcdctl(['get', '--prefix', '--keys-only', `${PREFIX}/configs/`]).trim(), '');
    await untilProduceAnswers(3, ledBy3, 4000, ErrorCode.NONE, 20_000);
  });
});
