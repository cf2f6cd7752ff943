// Tiering end to end with real clients on a real MinIO: a topic with 1 MiB
// segments and a one-second local retention receives SEDIMENT_TIERING_COUNT
// records (default 1M) from librdkafka (confluent-kafka-python). Every closed
// segment must end up in the bucket (listed with the `minio` client) and gone
// from disk, the active one never uploaded; a new consumer then reads every
// record from offset 0, byte-identical (key, value, headers, CreateTime) and in
// order across the tier boundary; ListOffsets -2/-4/-5/-1 and offset-for-timestamp
// (python offsets_for_times, kafkajs fetchTopicOffsetsByTimestamp, our admin
// client with the answered timestamps) are right on both tiers. Deleting the
// topic then empties its part of the bucket. This broker reads remote data
// on its event loop (rsm.config.fetch.worker.threads=0; a fetch worker thread
// by default); the other tiering suites cover the default.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Kafka, logLevel } from 'kafkajs';
import { runPythonRoundTrip } from '../clients/run-client.js';
import { defaultBaseTimestamp, expectedOffsetForTimestamp, partitionRecordCount } from '../clients/content.js';
import { assertNoBrokerErrors } from '../e2e/helpers.js';
import { startMinio, type MinioServer } from '../support/minio.js';
import type { SedimentProcess } from '../support/sediment.js';
import { requireTools } from '../support/tools.js';
import {
  brokerState,
  createTopic,
  elapsed,
  groupSegments,
  listOffsets,
  localSegments,
  segmentObjects,
  startTieredBroker,
  tierOffsets,
  tieredTopicConfigs,
  uniquePrefix,
  waitFor,
  waitFullyTiered,
} from './support.js';

const count = Number(process.env['SEDIMENT_TIERING_COUNT'] ?? 1_000_000);
const partitions = 2;
const segmentBytes = 1_048_576;
const topic = 'tiered';
const baseTimestamp = defaultBaseTimestamp();

let minio: MinioServer;
let broker: SedimentProcess;
const prefix = uniquePrefix('e2e-tiering');
const phases: string[] = [];

before(async () => {
  requireTools(['python-confluent-kafka', 'kafkajs']);
  minio = await startMinio();
  broker = await startTieredBroker(minio, prefix, { overrides: { 'rsm.config.fetch.worker.threads': '0' } });
});

after(async () => {
  await broker?.close();
  await minio?.stop();
  console.log(`\ntiering e2e, ${count} records:\n  ${phases.join('\n  ')}`);
});

test(`${count} records: closed segments tier to MinIO, a consumer from offset 0 reads them all back byte-identical`, { timeout: 15 * 60_000 }, async () => {
  await createTopic(broker.bootstrap, topic, partitions, tieredTopicConfigs(segmentBytes));

  let t = performance.now();
  const produced = await runPythonRoundTrip({ bootstrap: broker.bootstrap, topic, count, partitions, phase: 'produce', createTopic: false, baseTimestamp, timeoutMs: 10 * 60_000 });
  assert.equal(produced.ok, true, produced.errors.join('\n'));
  assert.equal(produced.produced, count);
  phases.push(`produce (librdkafka, acks=all): ${elapsed(t)}, ${Math.round(count / (produced.produceMs / 1000))} records/s`);

  t = performance.now();
  const tiered = await waitFullyTiered(broker, topic, partitions, 5 * 60_000);
  phases.push(`tiering caught up after the last ack: ${elapsed(t)}`);

  // The bucket, read independently: one complete segment per closed local segment, nothing else.
  const objects = await segmentObjects(minio, prefix);
  const segments = groupSegments(objects, topic);
  let remoteBytes = 0;
  for (let p = 0; p < partitions; p++) {
    const remote = segments.filter((s) => s.partition === p);
    const active = localSegments(broker.dataDir, topic, p);
    assert.equal(active.length, 1, `partition ${p}: only the active segment stays on disk`);
    const activeBase = active[0]!.baseOffset;
    assert.ok(remote.length >= 2, `partition ${p}: several segments remote (${remote.length})`);
    assert.equal(remote[0]?.baseOffset, 0n, `partition ${p}: the first remote segment starts at 0`);
    assert.ok(remote.every((s) => s.complete), `partition ${p}: every segment in the bucket has its manifest`);
    assert.equal(new Set(remote.map((s) => s.baseOffset)).size, remote.length, `partition ${p}: each segment uploaded once`);
    assert.ok(remote.every((s) => s.baseOffset < activeBase), `partition ${p}: the active segment (base ${activeBase}) is not in the bucket`);
    for (const s of remote) {
      for (const kind of ['log', 'index', 'timeindex', 'snapshot', 'leader-epoch-checkpoint', 'manifest']) {
        assert.ok(s.kinds.has(kind), `partition ${p} segment ${s.baseOffset}: ${kind} object present`);
      }
      assert.ok(s.dataSize > 0 && s.dataSize <= segmentBytes, `partition ${p} segment ${s.baseOffset}: data size ${s.dataSize}`);
      remoteBytes += s.dataSize;
    }
    assert.equal(tiered[p], activeBase - 1n, `partition ${p}: -5 is the last offset before the active segment`);
  }
  phases.push(`bucket: ${segments.length} segments, ${objects.length} objects, ${(remoteBytes / 1048576).toFixed(1)} MiB of data`);

  const offsets = await tierOffsets(broker.bootstrap, topic, partitions);
  for (let p = 0; p < partitions; p++) {
    const activeBase = localSegments(broker.dataDir, topic, p)[0]!.baseOffset;
    assert.equal(offsets.earliest[p], 0n, `partition ${p}: -2 (log start) is 0, on the remote tier`);
    assert.equal(offsets.earliestLocal[p], activeBase, `partition ${p}: -4 is the local log start (the active segment)`);
    assert.equal(offsets.latestTiered[p], activeBase - 1n, `partition ${p}: -5`);
    assert.equal(offsets.latest[p], BigInt(partitionRecordCount(count, partitions, p)), `partition ${p}: -1`);
  }

  // Offset for timestamp on both tiers, answered offset and timestamp, through our admin client.
  const samples = [0, 1, 2, 777, Math.floor(count / 4), Math.floor(count / 2) + 3, count - 3, count - 2, count - 1];
  for (const i of samples) {
    const answers = await listOffsets(broker.bootstrap, topic, partitions, BigInt(baseTimestamp + i));
    for (const a of answers) {
      const want = expectedOffsetForTimestamp(i, a.partition, count, partitions);
      assert.equal(a.offset, BigInt(want), `ListOffsets(base+${i}) partition ${a.partition}`);
      // Record j = offset * P + p carries CreateTime base + j.
      assert.equal(a.timestamp, want < 0 ? -1n : BigInt(baseTimestamp + want * partitions + a.partition), `ListOffsets(base+${i}) partition ${a.partition}: timestamp`);
    }
  }
  // The same through kafkajs, an independent client.
  const kafka = new Kafka({ clientId: 'tiering-e2e', brokers: [broker.bootstrap], logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  try {
    for (const i of samples) {
      const seek = await admin.fetchTopicOffsetsByTimestamp(topic, baseTimestamp + i);
      for (const s of seek) {
        const want = expectedOffsetForTimestamp(i, s.partition, count, partitions);
        // kafkajs maps "no such offset" (-1) to the latest offset.
        const wantKafkajs = want < 0 ? partitionRecordCount(count, partitions, s.partition) : want;
        assert.equal(Number(s.offset), wantKafkajs, `kafkajs fetchTopicOffsetsByTimestamp(base+${i}) partition ${s.partition}`);
      }
    }
  } finally {
    await admin.disconnect();
  }

  // A new consumer from offset 0: librdkafka reads the remote tier, then the local one.
  t = performance.now();
  const consumed = await runPythonRoundTrip({ bootstrap: broker.bootstrap, topic, count, partitions, phase: 'consume', createTopic: false, baseTimestamp, timeoutMs: 10 * 60_000 });
  assert.equal(consumed.ok, true, `${consumed.errors.join('\n')}\n${brokerState(broker)}`);
  assert.equal(consumed.consumed, count);
  assert.equal(consumed.duplicates, 0);
  assert.equal(consumed.missing, 0);
  assert.ok(consumed.listOffsetsChecked > 0, 'offsets_for_times checked');
  phases.push(`consume from offset 0 (librdkafka, verified): ${elapsed(t)}, ${Math.round(count / (consumed.consumeMs / 1000))} records/s`);

  assertNoBrokerErrors(broker.logs);
});

test('deleting the tiered topic removes its remote objects', { timeout: 5 * 60_000 }, async () => {
  const before = (await segmentObjects(minio, prefix)).filter((o) => o.topic === topic);
  assert.ok(before.length > 0, 'the topic has remote objects');
  const kafka = new Kafka({ clientId: 'tiering-e2e', brokers: [broker.bootstrap], logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  try {
    await admin.deleteTopics({ topics: [topic], timeout: 30_000 });
  } finally {
    await admin.disconnect();
  }
  const t = performance.now();
  await waitFor('the bucket to hold nothing of the deleted topic', async () => (await segmentObjects(minio, prefix)).every((o) => o.topic !== topic), {
    timeoutMs: 120_000,
    intervalMs: 500,
    broker,
    wakeOn: ['remote segment deleted', 'remote partition delete started'],
  });
  phases.push(`topic deleted: ${before.length} remote objects gone in ${elapsed(t)}`);
  assertNoBrokerErrors(broker.logs);
});
