// The HTTP listener over a real in-process broker: paths and methods, the
// Prometheus scrape after produce and consume (request latency and rate,
// bytes and records in and out, group lag, rebalances, runtime metrics), and
// /v1/partitions and /v1/groups against what the Kafka protocol answers
// (ListOffsets, OffsetFetch through our own admin client).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AdminClient, OffsetSpec } from '../../../broker/cli/admin-client.js';
import { fetchPartitionStats } from '../../../broker/cli/partition-stats.js';
import { createTopic, eventually, getJson, produce, sample, samples, startTestBroker, type TestBroker } from './harness.js';

interface PartitionJson {
  topic: string;
  partition: number;
  logStartOffset: number;
  localLogStartOffset: number;
  highWatermark: number;
  lastStableOffset: number;
  logEndOffset: number;
  localSegments: number;
  localBytes: number;
  remoteSegments: number;
  remoteBytes: number;
  internal: boolean;
  segments?: Array<{ tier: string; baseOffset: number; endOffset: number; sizeBytes: number; count: number }>;
}

interface GroupJson {
  groupId: string;
  state: string;
  members: number;
  rebalances: number;
  totalLag: number;
  maxLag: number;
  partitions: Array<{ topic: string; partition: number; committedOffset: number; highWatermark: number; lag: number | null }>;
}

describe('HTTP listener on a live broker', () => {
  let t: TestBroker;
  const topic = 'orders';
  const group = 'billing';
  /** Messages produced to each partition of `orders` before the consumer runs. */
  const perPartition = [40, 25, 0];

  before(async () => {
    // Tiered storage off (Sediment's default is on): the view and metrics without a RemoteLogManager.
    t = await startTestBroker({ 'remote.log.storage.system.enable': 'false' });
    const admin = t.kafka().admin();
    await admin.connect();
    await createTopic(admin, topic, 3);
    await admin.disconnect();
    for (const [p, n] of perPartition.entries()) if (n > 0) await produce(t, topic, p, n, 200, 10);
  });

  after(async () => {
    await t?.close();
  });

  it('answers GET paths, 404 for unknown ones and 405 for other methods', async () => {
    const health = await fetch(`${t.baseUrl}/healthz`);
    assert.equal(health.status, 200);
    assert.equal(await health.text(), 'ok\n');
    const page = await fetch(`${t.baseUrl}/`);
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
    assert.match(await page.text(), /<title>Sediment console<\/title>/);
    const missing = await fetch(`${t.baseUrl}/v1/nothing`);
    assert.equal(missing.status, 404);
    assert.match(((await missing.json()) as { error: string }).error, /no such path/);
    const post = await fetch(`${t.baseUrl}/metrics`, { method: 'POST', body: 'x' });
    assert.equal(post.status, 405);
    assert.equal(post.headers.get('allow'), 'GET, HEAD');
    const head = await fetch(`${t.baseUrl}/v1/partitions`, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(await head.text(), '');
    // A trailing slash is the same path.
    assert.equal((await fetch(`${t.baseUrl}/v1/partitions/`)).status, 200);
  });

  it('/v1/partitions matches ListOffsets (-2, -4, latest, read_committed latest) and is what the CLI reads', async () => {
    const stats = await getJson<PartitionJson[]>(t, `/v1/partitions?topic=${topic}`);
    assert.deepEqual(stats.map((s) => s.partition), [0, 1, 2]);
    const admin = await AdminClient.connect(t.bootstrap);
    try {
      const tps = stats.map((s) => ({ topic, partition: s.partition }));
      const ask = async (timestamp: bigint, isolation = 0) =>
        new Map((await admin.listOffsets(tps.map((tp) => ({ ...tp, timestamp })), isolation)).map((a) => [a.partition, Number(a.offset)]));
      const earliest = await ask(OffsetSpec.earliest);
      const earliestLocal = await ask(OffsetSpec.earliestLocal);
      const latest = await ask(OffsetSpec.latest);
      const stable = await ask(OffsetSpec.latest, 1);
      for (const s of stats) {
        assert.equal(s.logStartOffset, earliest.get(s.partition), `logStartOffset of ${s.partition}`);
        assert.equal(s.localLogStartOffset, earliestLocal.get(s.partition), `localLogStartOffset of ${s.partition}`);
        assert.equal(s.highWatermark, latest.get(s.partition), `highWatermark of ${s.partition}`);
        assert.equal(s.lastStableOffset, stable.get(s.partition), `lastStableOffset of ${s.partition}`);
        assert.equal(s.highWatermark, perPartition[s.partition]);
        assert.equal(s.localSegments, 1);
        assert.equal(s.remoteSegments, 0);
        assert.equal(s.remoteBytes, 0);
        assert.equal(s.internal, false);
        assert.ok(s.partition === 2 ? s.localBytes === 0 : s.localBytes > 200 * (perPartition[s.partition] ?? 0));
        assert.equal(s.segments, undefined);
      }
    } finally {
      admin.close();
    }
    const cli = await fetchPartitionStats(t.baseUrl, topic);
    assert.ok(cli !== null);
    assert.equal(cli.get(`${topic}:0`)?.highWatermark, 40n);
    assert.equal(cli.get(`${topic}:1`)?.localBytes, BigInt(stats[1]?.localBytes ?? -1));
    // Every topic (internal ones flagged) without a filter; none for an unknown topic.
    const all = await getJson<PartitionJson[]>(t, '/v1/partitions');
    assert.ok(all.some((s) => s.topic === '__consumer_offsets' && s.internal));
    assert.ok(!(await getJson<PartitionJson[]>(t, '/v1/partitions?excludeInternal=1')).some((s) => s.internal));
    assert.deepEqual(await getJson<PartitionJson[]>(t, '/v1/partitions?topic=nope'), []);
    // segments=1 adds the picture: the active segment spans the whole log here.
    const withSegments = await getJson<PartitionJson[]>(t, `/v1/partitions?topic=${topic}&segments=1`);
    assert.deepEqual(withSegments[0]?.segments, [{ tier: 'active', baseOffset: 0, endOffset: 39, sizeBytes: withSegments[0]?.localBytes, count: 1 }]);
  });

  it('the scrape has request, traffic, group and runtime series after produce and consume', async () => {
    const consumer = t.kafka('http-test-consumer').consumer({ groupId: group });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    let consumed = 0;
    await consumer.run({ eachMessage: async () => void consumed++ });
    const total = perPartition.reduce((a, b) => a + b, 0);
    // Offsets committed up to the high watermark everywhere: lag 0.
    const caughtUp = await eventually('the group to commit every offset', async () => {
      const groups = await getJson<GroupJson[]>(t, '/v1/groups');
      const g = groups.find((x) => x.groupId === group);
      const caught = [0, 1].every((i) => g?.partitions.some((p) => p.partition === i && p.lag === 0) === true);
      return consumed === total && caught ? g : undefined;
    });
    assert.equal(caughtUp.state, 'Stable');
    assert.equal(caughtUp.members, 1);
    assert.ok(caughtUp.rebalances >= 1);
    assert.equal(caughtUp.maxLag, 0);

    const admin = await AdminClient.connect(t.bootstrap);
    try {
      const fetched = await admin.offsetFetch(group, null);
      for (const p of caughtUp.partitions) {
        const c = fetched.offsets.find((o) => o.topic === p.topic && o.partition === p.partition);
        assert.equal(Number(c?.offset), p.committedOffset, `committed offset of ${p.topic}-${p.partition}`);
      }
    } finally {
      admin.close();
    }

    await consumer.disconnect();
    // 7 more records on partition 1 nobody reads: lag 7 there, max lag 7.
    await produce(t, topic, 1, 7, 100, 7);
    const groups = await getJson<GroupJson[]>(t, `/v1/groups?group=${group}`);
    assert.equal(groups.length, 1);
    const g = groups[0] as GroupJson;
    assert.equal(g.state, 'Empty');
    assert.deepEqual(
      g.partitions.map((p) => [p.partition, p.committedOffset, p.highWatermark, p.lag]),
      [[0, 40, 40, 0], [1, 25, 32, 7]],
    );
    assert.equal(g.maxLag, 7);
    assert.equal(g.totalLag, 7);

    const res = await fetch(`${t.baseUrl}/metrics`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    // Requests: latency histogram and rate per API.
    assert.ok((sample(text, 'sediment_request_duration_seconds_count', { api: 'Produce' }) ?? 0) >= 8);
    assert.ok((sample(text, 'sediment_request_duration_seconds_bucket', { api: 'Fetch', le: '+Inf' }) ?? 0) >= 1);
    assert.ok((sample(text, 'sediment_requests_total', { api: 'Metadata' }) ?? 0) >= 1);
    assert.ok((sample(text, 'sediment_requests_total', { api: 'JoinGroup' }) ?? 0) >= 1);
    assert.ok(samples(text, 'sediment_requests_total').every((s) => /^\d+$/.test(s.labels['version'] ?? '')));
    // Traffic: every record in counted exactly; bytes out at least the bytes in that were consumed.
    assert.equal(sample(text, 'sediment_messages_in_total', { topic }), total + 7);
    const bytesIn = sample(text, 'sediment_bytes_in_total', { topic }) ?? 0;
    assert.ok(bytesIn > 200 * total, `bytes in ${bytesIn}`);
    assert.ok((sample(text, 'sediment_bytes_out_total', { topic }) ?? 0) >= 200 * total);
    // Groups.
    assert.equal(sample(text, 'sediment_consumer_group_lag', { group, topic, partition: 1 }), 7);
    assert.equal(sample(text, 'sediment_consumer_group_lag', { group, topic, partition: 0 }), 0);
    assert.equal(sample(text, 'sediment_consumer_group_max_lag', { group }), 7);
    assert.equal(sample(text, 'sediment_consumer_group_members', { group }), 0);
    assert.equal(sample(text, 'sediment_consumer_group_rebalances_total', { group }), caughtUp.rebalances);
    // Local log gauges.
    assert.equal(sample(text, 'sediment_log_end_offset', { topic, partition: 1 }), 32);
    assert.equal(sample(text, 'sediment_log_segments', { topic, partition: 0 }), 1);
    // Node runtime metrics on the broker's registry.
    for (const name of ['process_cpu_user_seconds_total', 'process_resident_memory_bytes', 'nodejs_heap_size_used_bytes', 'nodejs_eventloop_lag_seconds']) {
      assert.ok(sample(text, name) !== undefined, `${name} in the scrape`);
    }
    // No tiering on this broker: the remote series are declared, with no topic.
    assert.match(text, /# TYPE sediment_remote_copy_bytes_total counter/);
    assert.equal(samples(text, 'sediment_remote_copy_bytes_total').length, 0);
    assert.equal(sample(text, 'sediment_remote_reader_queue_depth'), 0);
  });

  it('a second broker in the same process keeps its own registry', async () => {
    const other = await startTestBroker({ 'remote.log.storage.system.enable': 'false' });
    try {
      const admin = other.kafka().admin();
      await admin.connect();
      await createTopic(admin, 'elsewhere', 1);
      await admin.disconnect();
      await produce(other, 'elsewhere', 0, 3, 50, 3);
      const mine = await (await fetch(`${t.baseUrl}/metrics`)).text();
      const theirs = await (await fetch(`${other.baseUrl}/metrics`)).text();
      assert.equal(sample(theirs, 'sediment_messages_in_total', { topic: 'elsewhere' }), 3);
      assert.equal(sample(mine, 'sediment_messages_in_total', { topic: 'elsewhere' }), undefined);
      assert.equal(sample(theirs, 'sediment_messages_in_total', { topic }), undefined);
    } finally {
      await other.close();
    }
  });
});
