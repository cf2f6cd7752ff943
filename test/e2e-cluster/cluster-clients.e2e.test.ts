// The compatibility matrix's franz-go and Java client programs (test/compat/)
// against a cluster of three `sediment start` processes over a real etcd, each
// given ONE broker as its bootstrap: topic creation, produce in every codec,
// group consume, offsets, lag and the rest of its row, with the topic's
// partitions led by all three brokers, so the client must find each leader
// from Metadata (issue 13: "kcat, franz-go, the Java client and kafkajs
// produce and consume through any bootstrap broker"; kcat and kafkajs are in
// cluster.e2e.test.ts).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { defaultBaseTimestamp } from '../clients/content.js';
import { clients } from '../compat/clients.js';
import { startEtcd, type EtcdServer } from '../support/etcd.js';
import { startSedimentCluster, type SedimentCluster } from '../support/sediment-cluster.js';

const COUNT = 3000;
let etcd: EtcdServer;
let cluster: SedimentCluster;

describe('franz-go and the Java client through one bootstrap broker of three (etcd)', () => {
  before(async () => {
    etcd = await startEtcd();
    cluster = await startSedimentCluster({ etcd, brokers: 3, prefix: `/e2e-cluster-clients-${process.pid}` });
    await cluster.untilMetadata(1, [], (m) => m.brokers.length === 3, 20_000, 'three brokers');
  });
  after(async () => {
    await cluster?.close();
    await etcd?.stop();
  });

  for (const [id, via] of [['franz-go', 2], ['java', 3]] as const) {
    it(`${id}: its compatibility program bootstrapped through broker ${via} only; the topic's partitions led by all three brokers`, { timeout: 600_000 }, async () => {
      const spec = clients.find((c) => c.id === id);
      assert.ok(spec !== undefined, `no compat client ${id}`);
      const topic = `cluster-${id}`;
      const summary = await spec.run({
        bootstrap: cluster.broker(via).bootstrap,
        topic,
        group: `cluster-${id}-group`,
        count: COUNT,
        partitions: 3,
        codecs: spec.codecs,
        baseTimestamp: defaultBaseTimestamp(),
        timeoutMs: 240_000,
      });
      const failed = summary.operations.filter((op) => !op.ok).map((op) => op.name);
      assert.ok(summary.ok, `${id} ${summary.clientVersion}: failed ${failed.join(', ')}; ${summary.errorCount} errors:\n${summary.errors.join('\n')}`);
      const md = await cluster.metadataFrom(1, [topic]);
      const leaders = new Set(md.topics[0]?.partitions.map((p) => p.leader));
      assert.equal(leaders.size, 3, `partitions of ${topic} led by ${[...leaders].join(',')}`);
      console.log(`${id} via broker ${via}: ${summary.operations.map((op) => `${op.name} ${op.ms} ms`).join(', ')}`);
    });
  }
});
