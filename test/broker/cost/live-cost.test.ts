// GET /v1/cost: the cost report for the live workload, on a real in-process
// broker with its HTTP listener (test/broker/http/harness.ts).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createLiveCostRoute, liveTopicsFrom, liveWorkload } from '../../../broker/cost/live-cost.js';
import { DAY_MS, HOUR_MS } from '../../../broker/cost/model.js';
import type { HttpRoute } from '../../../broker/http/http-server.js';
import { createTopic, produce, startTestBroker, tieringOverrides, type TestBroker } from '../http/harness.js';

interface CostBody {
  measured: { ingressBytesPerSec: number };
  workload: { partitions: number; retentionMs: number; segmentBytes: number; replicationFactor: number };
  priceSheet: { id: string; storageClass: string };
  scenarios: Array<{ scenario: string; total: number; components: Record<string, number> }>;
}

describe('live cost report', () => {
  it('builds the workload from the user topics: partitions, longest retention, weighted segment size, configured local retentions', () => {
    const { workload, configuredLocal } = liveWorkload(
      [
        { name: 'a', partitions: 3, config: { retentionMs: 7 * DAY_MS, segmentBytes: 100, segmentMs: DAY_MS, indexIntervalBytes: 4096, remoteStorageEnable: true, localRetentionMs: 2 * HOUR_MS } },
        { name: 'b', partitions: 1, config: { retentionMs: 30 * DAY_MS, segmentBytes: 500, segmentMs: DAY_MS, indexIntervalBytes: 4096, remoteStorageEnable: false, localRetentionMs: HOUR_MS } },
      ],
      1000,
    );
    assert.equal(workload.partitions, 4);
    assert.equal(workload.retentionMs, 30 * DAY_MS);
    assert.equal(workload.segmentBytes, 200);
    assert.equal(workload.replicationFactor, 1);
    assert.deepEqual(configuredLocal, [2 * HOUR_MS], 'only tiered topics count');
  });

  describe('GET /v1/cost on a broker', () => {
    let t: TestBroker;
    let route: HttpRoute | undefined;

    before(async () => {
      t = await startTestBroker(tieringOverrides, { routes: { '/v1/cost': (q) => (route as HttpRoute)(q) } });
      const store = t.broker.topics.store;
      route = createLiveCostRoute({
        metricsText: () => t.metrics.registry.metrics(),
        topics: () => liveTopicsFrom(store.list(), (n) => store.logConfig(n), (n) => t.broker.topics.isInternal(n)),
      });
      const admin = t.kafka().admin();
      await admin.connect();
      try {
        await createTopic(admin, 'orders', 3, { 'remote.storage.enable': 'true', 'retention.ms': String(7 * DAY_MS), 'local.retention.ms': String(2 * HOUR_MS) });
      } finally {
        await admin.disconnect();
      }
      await produce(t, 'orders', 0, 200, 1000);
    });

    after(async () => {
      await t?.close();
    });

    it('answers the scenarios of the measured workload, the configured local retention included', async () => {
      const res = await fetch(`${t.baseUrl}/v1/cost`);
      assert.equal(res.status, 200);
      const body = (await res.json()) as CostBody;
      assert.ok(body.measured.ingressBytesPerSec > 0, 'the produced bytes were measured');
      assert.equal(body.workload.partitions, 3, 'internal topics are left out');
      assert.equal(body.workload.retentionMs, 7 * DAY_MS);
      assert.equal(body.workload.replicationFactor, 1);
      assert.deepEqual(
        body.scenarios.map((s) => s.scenario),
        ['no tiering', 'local 1d', 'configured local 2h', 'local 1h'],
      );
      for (const s of body.scenarios) assert.ok(s.total > 0 && Object.keys(s.components).length === 6, s.scenario);
      assert.equal(body.priceSheet.id, 'aws-us-east-1');
    });

    it('takes the sheet, class, retention and replication factor from the query, and refuses bad values', async () => {
      const res = await fetch(`${t.baseUrl}/v1/cost?sheet=gcp&storageClass=nearline&retention=30d&replicationFactor=3`);
      assert.equal(res.status, 200);
      const body = (await res.json()) as CostBody;
      assert.equal(body.priceSheet.id, 'gcp-us-central1');
      assert.equal(body.priceSheet.storageClass, 'nearline');
      assert.equal(body.workload.retentionMs, 30 * DAY_MS);
      assert.equal(body.workload.replicationFactor, 3);
      assert.ok(body.scenarios.some((s) => s.scenario === 'local 7d'));
      for (const q of ['sheet=oracle', 'retention=forever', 'storageClass=tape']) {
        const bad = await fetch(`${t.baseUrl}/v1/cost?${q}`);
        assert.equal(bad.status, 400, q);
        assert.match(((await bad.json()) as { error: string }).error, /./);
      }
    });
  });
});
