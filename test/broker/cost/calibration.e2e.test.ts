// Calibration of the cost model against a real broker on MinIO: a fixed
// workload is produced, tiered and read back from offset 0, and what the broker
// actually did is counted independently:
//   - requests: a counting proxy between the broker and MinIO sees every S3
//     request MinIO receives (PUT-class: PutObject, multipart create, parts,
//     complete; GET: GetObject);
//   - stored bytes and objects: the bucket listed with the `minio` npm client.
// The model (broker/cost/model.ts), fed the workload (bytes produced,
// partitions, segment and batch size, chunk size, multipart settings), must
// predict the PUT and GET counts and the stored bytes within 5%. The broker's
// own /metrics counters, read through `sediment cost --from-metrics`'s code,
// must project the same uploads.
//
// A second case calibrates the orphan sweep's LISTs: a partition of many small
// segments (more than one 1,000-key LIST page of objects) is tiered, the broker
// restarted, and the ListObjectsV2 requests MinIO receives are read off the
// proxy: the first sweep after start lists the partition's whole prefix and
// the whole bucket (what every sweep did before it was incremental), the later
// ones only the keys after the highest finished segment (StartAfter). The
// model's sweepLists must predict both per sweep.
//
// The workload is shaped so the numbers are exact rather than lucky: every
// batch has the same size b (fixed-size keys and values, fewer than 64 records),
// measured on the broker's bytes-in counter; segment.bytes is 64 b, so each
// segment holds exactly 64 batches and is above the 5 MiB multipart threshold
// (a multipart upload of 2 parts). The broker is restarted before the read so
// the manifest and index caches are cold, as for any read of old data.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Kafka, logLevel, type Admin } from 'kafkajs';
import { Broker } from '../../../broker/broker.js';
import type { BrokerContext } from '../../../broker/broker-context.js';
import { BrokerConfig } from '../../../broker/config.js';
import { measureFromMetrics, projectMonth } from '../../../broker/cost/from-metrics.js';
import type { Workload } from '../../../broker/cost/model.js';
import { DEFAULT_WORKLOAD, MONTH_MS, MONTH_SECONDS, costScenario, sweepLists } from '../../../broker/cost/model.js';
import { parsePrometheusText, sumFirst } from '../../../broker/cost/prometheus.js';
import { builtinSheet, selectPrices } from '../../../broker/cost/price-sheet.js';
import { buildReport } from '../../../broker/cost/report.js';
import { allHandlers } from '../../../broker/handlers/index.js';
import { startHttpServer, type HttpServerHandle } from '../../../broker/http/http-server.js';
import { silentLogger } from '../../../broker/common/logger.js';
import { BrokerMetrics } from '../../../broker/metrics/broker-metrics.js';
import type { BrokerParts } from '../../../broker/metrics/broker-view.js';
import { Dispatcher } from '../../../broker/server/dispatcher.js';
import { KafkaListener } from '../../../broker/server/listener.js';
import { startMinio, type MinioServer } from '../../support/minio.js';
import { PUT_CLASS, startCountingProxy, type CountingProxy } from './s3-counting-proxy.js';

const host = '127.0.0.1';
const TOPIC = 'calibration';
const PARTITIONS = 2;
const RECORDS_PER_BATCH = 60;
const VALUE_BYTES = 1600;
const BATCHES_PER_SEGMENT = 64;
const SEGMENTS_PER_PARTITION = 4;
const CHUNK_BYTES = 131_072;
const PART_BYTES = 5 * 1024 * 1024;
const TOLERANCE = 0.05;

interface RunningBroker {
  readonly broker: Broker;
  readonly http: HttpServerHandle;
  readonly metricsUrl: string;
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, host, () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

/** The broker with its metrics and HTTP listener, wired as broker.ts wires them (see test/broker/http/harness.ts). */
async function startBroker(dataDir: string, kafkaPort: number, overrides: Readonly<Record<string, string>>): Promise<RunningBroker> {
  const log = silentLogger();
  const config = BrokerConfig.fromProperties({
    'log.dirs': dataDir,
    listeners: `PLAINTEXT://${host}:0`,
    'advertised.listeners': `PLAINTEXT://${host}:${kafkaPort}`,
    'http.listeners': '',
    'group.initial.rebalance.delay.ms': '0',
    'offsets.topic.num.partitions': '1',
    ...overrides,
  });
  const broker = await Broker.start(config, { log });
  const parts: BrokerParts = { topics: broker.topics, groups: broker.context.groups, remoteLogManager: broker.remoteLogManager };
  const metrics = new BrokerMetrics(parts);
  const dispatcher = new Dispatcher<BrokerContext>(metrics.instrument(allHandlers), broker.context, metrics.requestObserver);
  const listener = new KafkaListener({ name: 'PLAINTEXT', host, port: kafkaPort }, dispatcher, config.socketRequestMaxBytes, log);
  await listener.start();
  const http = await startHttpServer({ ...parts, metrics, listeners: [{ host, port: 0 }], logger: log });
  return {
    broker,
    http,
    metricsUrl: `http://${host}:${http.port}/metrics`,
    stop: async () => {
      await http.stop();
      await listener.stop();
      await broker.stop();
    },
  };
}

async function scrape(url: string): Promise<ReturnType<typeof parsePrometheusText>> {
  const res = await fetch(url);
  assert.equal(res.status, 200);
  return parsePrometheusText(await res.text());
}

async function metric(url: string, name: string, labels: Readonly<Record<string, string>> = {}): Promise<number> {
  return sumFirst(await scrape(url), [name], labels)?.value ?? 0;
}

async function eventually(what: string, probe: () => Promise<boolean>, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function sendBatches(kafka: Kafka, topic: string, partition: number, batches: number, firstKey: number): Promise<void> {
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  try {
    for (let i = 0; i < batches; i++) {
      const base = firstKey + i * RECORDS_PER_BATCH;
      await producer.send({
        topic,
        acks: -1,
        messages: Array.from({ length: RECORDS_PER_BATCH }, (_, k) => ({
          partition,
          key: `k${String(base + k).padStart(10, '0')}`,
          value: 'v'.repeat(VALUE_BYTES),
        })),
      });
    }
  } finally {
    await producer.disconnect();
  }
}

async function createTopic(admin: Admin, topic: string, partitions: number, configs: Readonly<Record<string, string>>): Promise<void> {
  await admin.createTopics({
    topics: [{ topic, numPartitions: partitions, replicationFactor: 1, configEntries: Object.entries(configs).map(([name, value]) => ({ name, value })) }],
    waitForLeaders: true,
  });
}

function within(actual: number, predicted: number, what: string): void {
  const error = Math.abs(actual - predicted) / Math.max(1, actual);
  assert.ok(error <= TOLERANCE, `${what}: the model predicts ${predicted.toFixed(1)}, the broker did ${actual} (${(error * 100).toFixed(2)}% off, allowed ${TOLERANCE * 100}%)`);
}

describe('cost model calibration on MinIO', { timeout: 10 * 60_000 }, () => {
  let minio: MinioServer;
  let proxy: CountingProxy;
  let dataDir = '';

  before(async () => {
    minio = await startMinio({ bucket: 'calibration' });
    proxy = await startCountingProxy({ host: minio.host, port: minio.port });
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'sediment-calibration-'));
  });

  after(async () => {
    await proxy?.stop();
    await minio?.stop();
    if (dataDir !== '') rmSync(dataDir, { recursive: true, force: true });
  });

  it('predicts the PUTs, GETs and stored bytes of a tiered workload within 5%', async (t) => {
    const kafkaPort = await freePort();
    const overrides = {
      'remote.log.storage.system.enable': 'true',
      'remote.log.storage.url': `s3://${minio.bucket}/calibration/`,
      'rsm.config.s3.endpoint': proxy.endpoint,
      'rsm.config.s3.region': minio.region,
      'rsm.config.s3.path.style.access': 'true',
      'rsm.config.s3.access.key.id': minio.accessKey,
      'rsm.config.s3.secret.access.key': minio.secretKey,
      'rsm.config.s3.multipart.threshold.bytes': String(PART_BYTES),
      'rsm.config.s3.part.size.bytes': String(PART_BYTES),
      'rsm.config.chunk.size.bytes': String(CHUNK_BYTES),
      'remote.log.manager.task.interval.ms': '300',
      'log.retention.check.interval.ms': '200',
      'remote.fetch.max.wait.ms': '10000',
    };
    let running = await startBroker(dataDir, kafkaPort, overrides);
    const kafka = new Kafka({ clientId: 'calibration', brokers: [`${host}:${kafkaPort}`], logLevel: logLevel.NOTHING });
    const admin = kafka.admin();
    await admin.connect();
    try {
      // The batch size, from the broker's bytes-in counter.
      await createTopic(admin, 'probe', 1, { 'remote.storage.enable': 'false' });
      await sendBatches(kafka, 'probe', 0, 1, 0);
      const batchBytes = await metric(running.metricsUrl, 'sediment_bytes_in_total', { topic: 'probe' });
      assert.ok(batchBytes > RECORDS_PER_BATCH * VALUE_BYTES, `batch of ${batchBytes} bytes`);
      const segmentBytes = BATCHES_PER_SEGMENT * batchBytes;
      assert.ok(segmentBytes > PART_BYTES, 'segments go up as multipart uploads');

      await createTopic(admin, TOPIC, PARTITIONS, {
        'remote.storage.enable': 'true',
        'segment.bytes': String(segmentBytes),
        'local.retention.ms': '1000',
      });
      // n full segments per partition, then one batch that rolls the last one and stays in the active segment.
      const batchesPerPartition = BATCHES_PER_SEGMENT * SEGMENTS_PER_PARTITION + 1;
      const producedBytes = PARTITIONS * batchesPerPartition * batchBytes;
      proxy.reset();
      const produceAndTier = async (): Promise<void> => {
        for (let p = 0; p < PARTITIONS; p++) await sendBatches(kafka, TOPIC, p, batchesPerPartition, p * 1_000_000_000);
        await eventually('every closed segment remote and deleted locally', async () => {
          const s = await scrape(running.metricsUrl);
          for (let p = 0; p < PARTITIONS; p++) {
            const labels = { topic: TOPIC, partition: String(p) };
            if ((sumFirst(s, ['sediment_remote_log_segments'], labels)?.value ?? 0) !== SEGMENTS_PER_PARTITION) return false;
            if ((sumFirst(s, ['sediment_log_segments'], labels)?.value ?? 0) !== 1) return false;
          }
          return true;
        });
      };
      // `sediment cost --from-metrics --sample`: the sample period is the workload itself.
      const measured = await measureFromMetrics(running.metricsUrl, { sampleMs: 1, sleep: produceAndTier });
      assert.equal(
        await metric(running.metricsUrl, 'sediment_bytes_in_total', { topic: TOPIC }),
        producedBytes,
        'every batch has the same size',
      );
      const uploads = proxy.counts();

      // The truth about storage: the bucket, listed independently.
      const client = minio.client();
      const objects: Array<{ name: string; size: number }> = [];
      for await (const o of client.listObjectsV2(minio.bucket, 'calibration/', true)) {
        const item = o as { name?: string; size?: number };
        if (item.name !== undefined) objects.push({ name: item.name, size: item.size ?? 0 });
      }
      const storedBytes = objects.reduce((a, o) => a + o.size, 0);
      const dataObjects = objects.filter((o) => o.name.endsWith('.log'));
      assert.equal(dataObjects.length, PARTITIONS * SEGMENTS_PER_PARTITION, objects.map((o) => o.name).join('\n'));
      assert.ok(dataObjects.every((o) => o.size === segmentBytes), 'each segment holds exactly 64 batches');

      // Cold caches for the read, as for any read of old data.
      await running.stop();
      running = await startBroker(dataDir, kafkaPort, overrides);
      proxy.reset();
      const consumer = kafka.consumer({ groupId: 'calibration-reader', maxBytesPerPartition: 1_048_576 });
      const expected = PARTITIONS * batchesPerPartition * RECORDS_PER_BATCH;
      let consumed = 0;
      let consumedBytes = 0;
      await consumer.connect();
      await consumer.subscribe({ topic: TOPIC, fromBeginning: true });
      await new Promise<void>((resolve, reject) => {
        consumer
          .run({
            eachBatch: async ({ batch }) => {
              consumed += batch.messages.length;
              consumedBytes += batch.messages.reduce((a, m) => a + (m.value?.length ?? 0), 0);
              if (consumed >= expected) resolve();
            },
          })
          .catch(reject);
      });
      await consumer.disconnect();
      assert.equal(consumed, expected);
      const reads = proxy.counts();
      const brokerGets =
        (await metric(running.metricsUrl, 'sediment_remote_chunk_fetches_total')) + (await metric(running.metricsUrl, 'sediment_remote_index_cache_misses_total'));
      await running.stop();

      // The model, fed the workload.
      const workload: Workload = {
        ...DEFAULT_WORKLOAD,
        ingressBytesPerSec: producedBytes / MONTH_SECONDS,
        retentionMs: MONTH_MS,
        partitions: PARTITIONS,
        segmentBytes,
        segmentMs: MONTH_MS,
        batchBytes,
        chunkSizeBytes: CHUNK_BYTES,
        multipartThresholdBytes: PART_BYTES,
        partSizeBytes: PART_BYTES,
        // Everything but the one batch left in each active segment is read from the bucket.
        remoteReadShare: (batchesPerPartition - 1) / batchesPerPartition,
        readFanout: 1,
      };
      const prices = selectPrices(builtinSheet('aws')!).prices;
      const model = costScenario(workload, { name: 'calibration', localRetentionMs: 1000 }, prices, 0).quantities;

      const truePuts = PUT_CLASS.reduce((a, op) => a + uploads[op], 0);
      t.diagnostic(
        `batch ${batchBytes} B, segment ${segmentBytes} B; PUT-class: broker ${truePuts}, model ${model.putRequests.toFixed(1)}; ` +
          `GET: broker ${reads.GetObject}, model ${model.getRequests.toFixed(1)}; stored: bucket ${storedBytes} B in ${objects.length} objects, ` +
          `model ${Math.round(model.remoteBytes)} B; requests seen by MinIO: ${JSON.stringify({ ...uploads })} then ${JSON.stringify({ ...reads })}`,
      );
      within(truePuts, model.putRequests, 'PUT-class requests');
      within(uploads.UploadPart, PARTITIONS * SEGMENTS_PER_PARTITION * 2, 'multipart parts');
      within(reads.GetObject, model.getRequests, 'GET requests');
      within(storedBytes, model.remoteBytes, 'bytes stored');
      within(objects.length, (model.remoteBytes / segmentBytes) * model.objectsPerSegment, 'objects stored');
      assert.equal(uploads.AbortMultipartUpload, 0);
      assert.ok(consumedBytes > 0);

      // The broker's own counters tell the same story through --from-metrics.
      const report = buildReport({ ...workload, ingressBytesPerSec: measured.measured.ingressBytesPerSec }, [], selectPrices(builtinSheet('aws')!));
      const month = projectMonth(measured, report);
      const window = measured.measured.windowSeconds;
      within(Math.round(measured.measured.ingressBytesPerSec * window), producedBytes, 'bytes in from /metrics');
      within(Math.round(month.segmentsCopied * (window / MONTH_SECONDS)), PARTITIONS * SEGMENTS_PER_PARTITION, 'segments copied from /metrics');
      within(truePuts, month.putRequests * (window / MONTH_SECONDS), 'PUT-class requests projected from /metrics');
      // The broker counts chunk and index GETs, not manifest GETs (one per segment read).
      within(reads.GetObject - PARTITIONS * SEGMENTS_PER_PARTITION, brokerGets, 'GETs counted by the broker');
    } finally {
      await admin.disconnect().catch(() => undefined);
      await running.stop().catch(() => undefined);
    }
  });

  it('predicts the orphan sweep LISTs: whole prefixes once after start, then one LIST per partition per sweep', async (t) => {
    const SEGMENTS = 200;
    const SWEEP_MS = 200;
    const INCREMENTAL_SWEEPS = 40;
    const sweepDir = mkdtempSync(path.join(os.tmpdir(), 'sediment-calibration-sweep-'));
    const kafkaPort = await freePort();
    const prefix = 'sweep/';
    const overrides = {
      'remote.log.storage.system.enable': 'true',
      'remote.log.storage.url': `s3://${minio.bucket}/${prefix}`,
      'rsm.config.s3.endpoint': proxy.endpoint,
      'rsm.config.s3.region': minio.region,
      'rsm.config.s3.path.style.access': 'true',
      'rsm.config.s3.access.key.id': minio.accessKey,
      'rsm.config.s3.secret.access.key': minio.secretKey,
      'rsm.config.orphan.sweep.interval.ms': String(SWEEP_MS),
      'remote.log.manager.task.interval.ms': '100',
      'log.retention.check.interval.ms': '200',
    };
    let running = await startBroker(sweepDir, kafkaPort, overrides);
    const kafka = new Kafka({ clientId: 'calibration-sweep', brokers: [`${host}:${kafkaPort}`], logLevel: logLevel.NOTHING });
    const admin = kafka.admin();
    await admin.connect();
    try {
      // One record per batch, one batch per segment: many objects for few bytes.
      const topic = 'swept';
      await createTopic(admin, topic, 1, { 'remote.storage.enable': 'true', 'internal.segment.bytes': '200', 'local.retention.ms': '1000' });
      const producer = kafka.producer({ allowAutoTopicCreation: false });
      await producer.connect();
      for (let i = 0; i <= SEGMENTS; i++) await producer.send({ topic, acks: -1, messages: [{ partition: 0, value: `v${String(i).padStart(8, '0')}`.padEnd(120, '.') }] });
      await producer.disconnect();
      await eventually(
        `${SEGMENTS} segments remote`,
        async () => (await metric(running.metricsUrl, 'sediment_remote_log_segments', { topic, partition: '0' })) >= SEGMENTS,
      );
      const objects: string[] = [];
      for await (const o of minio.client().listObjectsV2(minio.bucket, prefix, true)) {
        const name = (o as { name?: string }).name;
        if (name !== undefined) objects.push(name);
      }
      assert.ok(objects.length > 1000, `${objects.length} objects: more than one LIST page`);

      // A cold start: the first sweep lists everything, the next ones what is new.
      await running.stop();
      proxy.reset();
      running = await startBroker(sweepDir, kafkaPort, overrides);
      const rlm = running.broker.remoteLogManager!;
      const log = running.broker.topics.partitionLog(topic, 0)!;
      const sweeps = (): { all: number; full: number } => {
        const s = rlm.partitionStats(log);
        return { all: s?.orphanSweeps ?? 0, full: s?.orphanFullSweeps ?? 0 };
      };
      await eventually(`${INCREMENTAL_SWEEPS} sweeps after the first`, async () => sweeps().all >= 1 + INCREMENTAL_SWEEPS, 60_000);
      // Read the LISTs between sweeps: the same sweep count before and after the read.
      let lists = proxy.lists();
      let done = sweeps();
      await eventually('a read of the LISTs between two sweeps', async () => {
        const before = sweeps();
        lists = proxy.lists();
        done = sweeps();
        return before.all === done.all;
      });
      const model = sweepLists({ partitions: 1, orphanSweepIntervalMs: SWEEP_MS, orphanFullSweepIntervalMs: DEFAULT_WORKLOAD.orphanFullSweepIntervalMs }, objects.length);
      const monthly = sweepLists({ ...DEFAULT_WORKLOAD, partitions: 1 }, objects.length);
      const full = lists.filter((l) => l.startAfter === undefined);
      const incremental = lists.filter((l) => l.startAfter !== undefined);
      const perSweep = incremental.length / (done.all - done.full);
      t.diagnostic(
        `${objects.length} objects in ${SEGMENTS} segments; first sweep after start: ${full.length} LISTs ` +
          `(${full.filter((l) => l.prefix === prefix).length} of the bucket, ${full.filter((l) => l.prefix !== prefix).length} of the partition), model ${model.fullSweep}; ` +
          `then ${incremental.length} LISTs in ${done.all - done.full} sweeps (${perSweep.toFixed(3)} per sweep), model ${model.incrementalSweep}; ` +
          `a month of default sweeps of this bucket: ${Math.round(monthly.perMonth)} LISTs, ${Math.round((MONTH_MS / DEFAULT_WORKLOAD.orphanSweepIntervalMs) * model.fullSweep)} if every sweep listed everything`,
      );
      assert.equal(done.full, 1, 'one full sweep: the first after start');
      assert.equal(full.length, model.fullSweep, 'the first sweep lists every page of the partition and of the bucket');
      assert.ok(full.some((l) => l.continuation), 'the full listing pages');
      within(incremental.length, model.incrementalSweep * (done.all - done.full), 'LISTs of the incremental sweeps');
      assert.ok(incremental.every((l) => l.prefix !== prefix && !l.continuation), 'incremental sweeps list one page of the partition, never the bucket');
      // Every incremental LIST starts after the highest finished segment's offset.
      const highest = rlm.remoteSegments(log).filter((s) => s.state === 'COPY_SEGMENT_FINISHED').at(-1)!.startOffset;
      assert.ok(incremental.every((l) => l.startAfter === `${l.prefix}${highest.toString().padStart(20, '0')}.`), JSON.stringify(incremental.slice(0, 2)));
    } finally {
      await admin.disconnect().catch(() => undefined);
      await running.stop().catch(() => undefined);
      rmSync(sweepDir, { recursive: true, force: true });
    }
  });
});
