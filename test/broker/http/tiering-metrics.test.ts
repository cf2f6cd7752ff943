// Tiering seen through the HTTP listener, on an in-process broker tiering into
// its file:// store. The RemoteLogManager's timer is set far out and the test
// runs it with runOnce(), so every step is observed before and after: copy lag
// (active segment excluded), copies, remote size and segment count, remote
// reads through the chunk and index caches, delete lag after DeleteRecords and
// the deletions; /v1/partitions and /v1/tiering against ListOffsets.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AdminClient, OffsetSpec } from '../../../broker/cli/admin-client.js';
import type { RemoteLogManager } from '../../../remote-log/remote-log-manager.js';
import { createTopic, eventually, getJson, produce, sample, startTestBroker, tieredTopicConfigs, tieringOverrides, type TestBroker } from './harness.js';

interface PartitionJson {
  topic: string;
  partition: number;
  tiered: boolean;
  logStartOffset: number;
  localLogStartOffset: number;
  highWatermark: number;
  lastStableOffset: number;
  logEndOffset: number;
  localSegments: number;
  localBytes: number;
  remoteSegments: number;
  remoteBytes: number;
  highestRemoteOffset: number;
  segments?: Array<{ tier: string; baseOffset: number; endOffset: number; sizeBytes: number; count: number; state?: string }>;
}

interface TieringJson {
  enabled: boolean;
  readerQueueDepth: number;
  chunkCache: { hits: number; misses: number; bytes: number; fetches: number; fetchedBytes: number };
  indexCache: { hits: number; misses: number; bytes: number };
  totals: { copyLagSegments: number; copyLagBytes: number; remoteSegments: number; remoteBytes: number; deleteLagSegments: number };
  partitions: Array<{
    topic: string;
    partition: number;
    copyLagSegments: number;
    copyLagBytes: number;
    deleteLagSegments: number;
    deleteLagBytes: number;
    remoteSegments: number;
    remoteBytes: number;
    copyRequests: number;
    copyBytes: number;
    lastError: string | null;
  }>;
}

const topic = 'tiered';
const labels = { topic, partition: 0 };

async function scrape(t: TestBroker): Promise<string> {
  return (await fetch(`${t.baseUrl}/metrics`)).text();
}

async function partition0(t: TestBroker): Promise<PartitionJson> {
  const [p] = await getJson<PartitionJson[]>(t, `/v1/partitions?topic=${topic}&segments=1`);
  assert.ok(p !== undefined);
  return p;
}

describe('tiering metrics and endpoints', () => {
  let t: TestBroker;
  let rlm: RemoteLogManager;
  let closedBefore = 0;
  let closedBytes = 0;

  before(async () => {
    // The scheduled runs are far out: the test drives the RemoteLogManager itself.
    t = await startTestBroker({ ...tieringOverrides, 'remote.log.manager.task.interval.ms': '600000' });
    assert.ok(t.broker.remoteLogManager !== null);
    rlm = t.broker.remoteLogManager;
    const admin = t.kafka().admin();
    await admin.connect();
    await createTopic(admin, topic, 1, tieredTopicConfigs);
    await admin.disconnect();
    await produce(t, topic, 0, 600, 1000, 50);
  });

  after(async () => {
    await t?.close();
  });

  it('copy lag counts the closed segments waiting (never the active one)', async () => {
    const tiering = await eventually('the partition to be tiered', async () => {
      const s = await getJson<TieringJson>(t, '/v1/tiering');
      return s.partitions.some((p) => p.topic === topic) ? s : undefined;
    });
    assert.equal(tiering.enabled, true);
    const p = await partition0(t);
    closedBefore = p.localSegments - 1;
    assert.ok(closedBefore >= 4, `closed segments: ${closedBefore}`);
    const closed = (p.segments ?? []).filter((s) => s.tier === 'local');
    assert.equal(closed.length, closedBefore);
    closedBytes = closed.reduce((n, s) => n + s.sizeBytes, 0);
    const tp = tiering.partitions.find((x) => x.topic === topic);
    assert.equal(tp?.copyLagSegments, closedBefore);
    assert.equal(tp?.copyLagBytes, closedBytes);
    assert.equal(tiering.totals.copyLagSegments, closedBefore);

    const text = await scrape(t);
    assert.equal(sample(text, 'sediment_remote_copy_lag_segments', labels), closedBefore);
    assert.equal(sample(text, 'sediment_remote_copy_lag_bytes', labels), closedBytes);
    assert.equal(sample(text, 'sediment_remote_log_segments', labels), 0);
    assert.equal(sample(text, 'sediment_remote_log_size_bytes', labels), 0);
    assert.equal(sample(text, 'sediment_remote_copy_bytes_total', { topic }), 0);
    assert.equal(sample(text, 'sediment_remote_log_task_failing', labels), 0);
    // Internal topics are never tiered.
    assert.equal(sample(text, 'sediment_remote_copy_lag_segments', { topic: '__consumer_offsets' }), undefined);
  });

  it('after a run: copies counted, lag zero, remote size and count as /v1/partitions and ListOffsets -5 say', async () => {
    await rlm.runOnce();
    const text = await scrape(t);
    assert.equal(sample(text, 'sediment_remote_copy_lag_segments', labels), 0);
    assert.equal(sample(text, 'sediment_remote_copy_lag_bytes', labels), 0);
    assert.equal(sample(text, 'sediment_remote_copy_requests_total', { topic }), closedBefore);
    assert.equal(sample(text, 'sediment_remote_copy_bytes_total', { topic }), closedBytes);
    assert.equal(sample(text, 'sediment_remote_copy_errors_total', { topic }), 0);
    assert.equal(sample(text, 'sediment_remote_log_segments', labels), closedBefore);
    assert.equal(sample(text, 'sediment_remote_log_size_bytes', labels), closedBytes);

    const p = await partition0(t);
    assert.equal(p.tiered, true);
    assert.equal(p.remoteSegments, closedBefore);
    assert.equal(p.remoteBytes, closedBytes);
    const remote = (p.segments ?? []).filter((s) => s.tier === 'remote');
    assert.equal(remote.length, closedBefore);
    assert.ok(remote.every((s) => s.state === 'COPY_SEGMENT_FINISHED'));
    assert.equal(p.highestRemoteOffset, remote[remote.length - 1]?.endOffset);
    const admin = await AdminClient.connect(t.bootstrap);
    try {
      const [tiered] = await admin.listOffsets([{ topic, partition: 0, timestamp: OffsetSpec.latestTiered }]);
      assert.equal(Number(tiered?.offset), p.highestRemoteOffset);
    } finally {
      admin.close();
    }
  });

  it('once local retention deleted the copied segments, /v1/partitions still matches ListOffsets', async () => {
    const p = await eventually('local retention to delete the copied segments', async () => {
      const x = await partition0(t);
      return x.localLogStartOffset > x.highestRemoteOffset ? x : undefined;
    });
    assert.equal(p.logStartOffset, 0);
    assert.equal(p.localSegments, 1);
    assert.deepEqual((p.segments ?? []).map((s) => s.tier), [...Array<string>(closedBefore).fill('remote'), 'active']);
    const admin = await AdminClient.connect(t.bootstrap);
    try {
      const ask = async (timestamp: bigint, isolation = 0) => Number((await admin.listOffsets([{ topic, partition: 0, timestamp }], isolation))[0]?.offset);
      assert.equal(p.logStartOffset, await ask(OffsetSpec.earliest));
      assert.equal(p.localLogStartOffset, await ask(OffsetSpec.earliestLocal));
      assert.equal(p.highWatermark, await ask(OffsetSpec.latest));
      assert.equal(p.lastStableOffset, await ask(OffsetSpec.latest, 1));
      assert.equal(p.highestRemoteOffset, await ask(OffsetSpec.latestTiered));
    } finally {
      admin.close();
    }
  });

  it('reading from offset 0 goes to the remote tier: fetch counters and caches move', async () => {
    const consumer = t.kafka('remote-reader').consumer({ groupId: 'remote-readers', maxBytesPerPartition: 64 * 1024 });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    let seen = 0;
    const all = new Promise<void>((resolve) => {
      void consumer.run({
        eachMessage: async () => {
          if (++seen === 600) resolve();
        },
      });
    });
    await all;
    await consumer.disconnect();
    const text = await scrape(t);
    assert.ok((sample(text, 'sediment_remote_fetch_requests_total', { topic }) ?? 0) >= 1);
    assert.ok((sample(text, 'sediment_remote_fetch_bytes_total', { topic }) ?? 0) >= closedBytes * 0.5);
    assert.equal(sample(text, 'sediment_remote_fetch_errors_total', { topic }), 0);
    assert.ok((sample(text, 'sediment_remote_chunk_cache_misses_total') ?? 0) >= 1);
    assert.ok((sample(text, 'sediment_remote_chunk_fetches_total') ?? 0) >= 1);
    assert.ok((sample(text, 'sediment_remote_chunk_fetch_bytes_total') ?? 0) >= 1);
    assert.ok((sample(text, 'sediment_remote_chunk_cache_bytes') ?? 0) >= 1);
    assert.ok((sample(text, 'sediment_remote_index_cache_misses_total') ?? 0) >= 1);
    assert.ok(sample(text, 'sediment_remote_chunk_cache_hits_total') !== undefined);
    assert.equal(sample(text, 'sediment_remote_reader_queue_depth'), 0);
    assert.ok((sample(text, 'sediment_bytes_out_total', { topic }) ?? 0) >= 600 * 1000);
    const tiering = await getJson<TieringJson>(t, '/v1/tiering');
    assert.equal(tiering.chunkCache.misses, sample(text, 'sediment_remote_chunk_cache_misses_total'));
  });

  it('DeleteRecords makes remote delete lag; the next run deletes oldest first and moves the log start', async () => {
    const before = await partition0(t);
    const remote = (before.segments ?? []).filter((s) => s.tier === 'remote');
    const cut = (remote[2]?.endOffset ?? 0) + 1;
    const admin = t.kafka().admin();
    await admin.connect();
    try {
      await admin.fetchTopicMetadata({ topics: [topic] });
      await admin.deleteTopicRecords({ topic, partitions: [{ partition: 0, offset: String(cut) }] });
    } finally {
      await admin.disconnect();
    }
    const due = remote.filter((s) => s.endOffset < cut);
    assert.equal(due.length, 3);
    const dueBytes = due.reduce((n, s) => n + s.sizeBytes, 0);
    let text = await scrape(t);
    assert.equal(sample(text, 'sediment_remote_delete_lag_segments', labels), 3);
    assert.equal(sample(text, 'sediment_remote_delete_lag_bytes', labels), dueBytes);
    const deletesBefore = sample(text, 'sediment_remote_delete_requests_total', { topic }) ?? 0;

    await rlm.runOnce();
    text = await scrape(t);
    assert.equal(sample(text, 'sediment_remote_delete_lag_segments', labels), 0);
    assert.equal(sample(text, 'sediment_remote_delete_lag_bytes', labels), 0);
    assert.equal(sample(text, 'sediment_remote_delete_requests_total', { topic }), deletesBefore + 3);
    assert.equal(sample(text, 'sediment_remote_delete_errors_total', { topic }), 0);
    assert.equal(sample(text, 'sediment_remote_log_segments', labels), closedBefore - 3);
    assert.equal(sample(text, 'sediment_remote_log_size_bytes', labels), closedBytes - dueBytes);
    // The counters keep what they counted: copies are not undone by deletions.
    assert.equal(sample(text, 'sediment_remote_copy_bytes_total', { topic }), closedBytes);
    const after = await partition0(t);
    assert.equal(after.logStartOffset, cut);
    assert.equal(after.remoteSegments, closedBefore - 3);
    const ac = await AdminClient.connect(t.bootstrap);
    try {
      const [earliest] = await ac.listOffsets([{ topic, partition: 0, timestamp: OffsetSpec.earliest }]);
      assert.equal(Number(earliest?.offset), after.logStartOffset);
    } finally {
      ac.close();
    }
  });
});
