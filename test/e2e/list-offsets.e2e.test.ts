// ListOffsets by timestamp against a model: one partition of many small segments
// (internal.segment.bytes) with a dense time index, filled by kafkajs with
// batches of 1-40 records whose CreateTimes go up overall but jump back and
// forth inside and across batches. For every probed timestamp T the broker must
// answer the first offset whose timestamp is >= T and that record's timestamp
// (or -1/-1), at every ListOffsets version; -1, -2, -3, -4, -5 as Kafka answers
// them. The same answers must come back after a clean restart, after kill -9,
// after the index files were deleted (rebuilt at start), and DeleteRecords
// moves the earliest answer up.
import assert from 'node:assert/strict';
import { readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { CompressionTypes, Kafka, logLevel, type Producer } from 'kafkajs';
import { BrokerConnection } from '../../broker/cli/broker-connection.js';
import { apis, type ListOffsetsResponseListOffsetsPartitionResponse } from '../../broker/protocol/messages/index.js';
import { Prng } from '../fuzz/prng.js';
import { startSediment, type SedimentProcess } from '../support/sediment.js';
import { assertNoBrokerErrors } from './helpers.js';

const topic = 'timestamps';
const recordCount = 3000;
const base = Math.floor(Date.now() / 1000) * 1000 - 3_600_000;
/** Timestamps by offset. */
const ts: number[] = [];
let maxTsOffset = -1;
let broker: SedimentProcess;

function buildTimestamps(rng: Prng): void {
  for (let o = 0; o < recordCount; o++) {
    // Mostly rising by 10 ms per offset, with jitter that reorders neighbours and repeats values.
    const jitter = rng.bool(0.3) ? rng.int(-25, 25) : 0;
    ts.push(base + 10 * o + jitter);
  }
  // One unique maximum in the middle (-3 must find it), within message.timestamp.after.max.ms.
  maxTsOffset = Math.floor(recordCount * 0.4);
  ts[maxTsOffset] = base + 3_000_000;
}

async function produceAll(producer: Producer, rng: Prng): Promise<number> {
  let o = 0;
  let batches = 0;
  while (o < recordCount) {
    const n = Math.min(recordCount - o, rng.int(1, 40));
    const messages = [];
    for (let k = 0; k < n; k++, o++) {
      messages.push({ key: `k-${o}`, value: `v-${o}-${'x'.repeat(rng.int(50, 400))}`, timestamp: String(ts[o]) });
    }
    await producer.send({ topic, acks: -1, compression: batches % 3 === 2 ? CompressionTypes.GZIP : CompressionTypes.None, messages });
    batches++;
  }
  return batches;
}

/** Expected answer for target T with log start `start`: the first offset >= start with ts >= T. */
function expectedFor(target: number, start: number): { offset: number; timestamp: number } {
  for (let o = start; o < recordCount; o++) if ((ts[o] as number) >= target) return { offset: o, timestamp: ts[o] as number };
  return { offset: -1, timestamp: -1 };
}

function probeTargets(rng: Prng): number[] {
  const targets = new Set<number>([base - 100_000, base, base + 1, base + 3_000_000, base + 3_000_001, base + 10 * recordCount + 100]);
  for (let k = 0; k < 300; k++) {
    const t = ts[rng.int(0, recordCount - 1)] as number;
    targets.add(t);
    targets.add(t + rng.int(-3, 3));
  }
  return [...targets].sort((a, b) => a - b);
}

async function listOffset(conn: BrokerConnection, timestamp: number, version: number): Promise<ListOffsetsResponseListOffsetsPartitionResponse> {
  const { body } = await conn.send(
    apis.ListOffsets,
    () => ({
      replicaId: -1,
      isolationLevel: 0,
      timeoutMs: 30_000,
      topics: [{ name: topic, partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: BigInt(timestamp), maxNumOffsets: 1 }] }],
    }),
    { min: version, max: version },
  );
  const p = body.topics[0]?.partitions[0];
  assert.ok(p !== undefined, 'a partition answer');
  return p;
}

async function withConnection<T>(fn: (conn: BrokerConnection) => Promise<T>): Promise<T> {
  const conn = await BrokerConnection.connect('127.0.0.1', broker.port, { clientId: 'list-offsets-e2e' });
  try {
    return await fn(conn);
  } finally {
    conn.close();
  }
}

/** Checks every target at the given versions (pipelined) against the model with log start `start`. */
async function checkTimestamps(label: string, targets: readonly number[], start: number, versions: readonly number[]): Promise<number> {
  return withConnection(async (conn) => {
    let checked = 0;
    for (const version of versions) {
      const answers = await Promise.all(targets.map((t) => listOffset(conn, t, version)));
      answers.forEach((a, k) => {
        const t = targets[k] as number;
        const want = expectedFor(t, start);
        assert.equal(a.errorCode, 0, `${label} v${version} T=${t}: error ${a.errorCode}`);
        assert.deepEqual([Number(a.offset), Number(a.timestamp)], [want.offset, want.timestamp], `${label} v${version} T=${t - base}+base`);
        checked++;
      });
    }
    return checked;
  });
}

async function checkMaxTimestamp(label: string): Promise<void> {
  await withConnection(async (conn) => {
    const maxTs = await listOffset(conn, -3, 10);
    assert.deepEqual([Number(maxTs.offset), Number(maxTs.timestamp)], [maxTsOffset, ts[maxTsOffset]], `${label}: -3 max timestamp`);
  });
}

async function checkSpecial(label: string, start: number, options: { maxTimestamp?: boolean } = {}): Promise<void> {
  if (options.maxTimestamp !== false) await checkMaxTimestamp(label);
  await withConnection(async (conn) => {
    const latest = await listOffset(conn, -1, 10);
    assert.equal(Number(latest.offset), recordCount, `${label}: -1 latest`);
    const earliest = await listOffset(conn, -2, 10);
    assert.equal(Number(earliest.offset), start, `${label}: -2 earliest`);
    const localStart = await listOffset(conn, -4, 10);
    assert.equal(Number(localStart.offset), start, `${label}: -4 earliest local`);
    const tiered = await listOffset(conn, -5, 10);
    assert.equal(Number(tiered.offset), -1, `${label}: -5 latest tiered (nothing tiered)`);
    // Before v7, -3 is not a valid query.
    const old = await listOffset(conn, -3, 6);
    assert.notEqual(old.errorCode, 0, `${label}: -3 at v6 is refused`);
  });
}

function segmentFiles(ext: string): string[] {
  const dir = path.join(broker.dataDir, `${topic}-0`);
  return readdirSync(dir).filter((f) => f.endsWith(ext)).map((f) => path.join(dir, f));
}

let targets: number[] = [];

before(async () => {
  const rng = new Prng(20261129);
  buildTimestamps(rng);
  broker = await startSediment();
  broker.onUnexpectedExit = (info, logs) => console.error(`broker exited unexpectedly (${info.code ?? info.signal}):\n${logs.tail(20)}`);
  const kafka = new Kafka({ clientId: 'list-offsets-e2e', brokers: [broker.bootstrap], logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({
    topics: [{ topic, numPartitions: 1, configEntries: [{ name: 'internal.segment.bytes', value: '32768' }, { name: 'index.interval.bytes', value: '512' }] }],
    waitForLeaders: true,
  });
  await admin.disconnect();
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  try {
    const batches = await produceAll(producer, rng);
    assert.ok(batches > 100);
  } finally {
    await producer.disconnect();
  }
  targets = probeTargets(rng);
});

after(async () => {
  await broker?.close();
});

test('the partition spans many segments', () => {
  assert.ok(segmentFiles('.log').length >= 10, `segments: ${segmentFiles('.log').length}`);
});

test('timestamps map to the first offset at or after them, at every version', async () => {
  const checked = await checkTimestamps('live', targets, 0, [1, 4, 7, 10]);
  assert.equal(checked, targets.length * 4);
  await checkSpecial('live', 0);
});

test('kafkajs admin.fetchTopicOffsetsByTimestamp agrees', async () => {
  const kafka = new Kafka({ clientId: 'list-offsets-e2e', brokers: [broker.bootstrap], logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  try {
    for (const t of targets.filter((_, k) => k % 20 === 0)) {
      const want = expectedFor(t, 0);
      if (want.offset < 0) continue;
      const got = await admin.fetchTopicOffsetsByTimestamp(topic, t);
      assert.equal(got[0]?.offset, String(want.offset), `kafkajs T=${t}`);
    }
  } finally {
    await admin.disconnect();
  }
});

test('same answers after a clean restart (SIGTERM)', async () => {
  await broker.restart();
  await checkTimestamps('after restart', targets, 0, [10]);
  await checkSpecial('after restart', 0);
});

test('same answers after kill -9 (recovery)', async () => {
  await broker.kill();
  await broker.start();
  await checkTimestamps('after kill -9', targets, 0, [10]);
  await checkSpecial('after kill -9', 0);
});

test('same answers after the offset and time indexes were deleted (rebuilt at start)', async () => {
  await broker.stop();
  const removed = [...segmentFiles('.timeindex'), ...segmentFiles('.index')];
  assert.ok(removed.length > 0);
  for (const f of removed) rmSync(f);
  await broker.start();
  await checkTimestamps('indexes rebuilt', targets, 0, [10]);
  await checkSpecial('indexes rebuilt', 0);
});

// DeleteRecords to 1234 leaves the segment holding the maximum (offset 1200) in place.
const deletedBefore = 1234;

test('DeleteRecords moves the earliest offset; lookups never answer below it', async () => {
  assert.ok(maxTsOffset < deletedBefore);
  const start = deletedBefore;
  await withConnection(async (conn) => {
    const { body } = await conn.send(apis.DeleteRecords, () => ({ timeoutMs: 30_000, topics: [{ name: topic, partitions: [{ partitionIndex: 0, offset: BigInt(start) }] }] }));
    const p = body.topics[0]?.partitions[0];
    assert.equal(p?.errorCode, 0);
    assert.equal(p?.lowWatermark, BigInt(start));
  });
  await checkTimestamps('after DeleteRecords', targets, start, [10]);
  await checkSpecial('after DeleteRecords', start, { maxTimestamp: false });
  await broker.restart();
  await checkTimestamps('after DeleteRecords and restart', targets, start, [10]);
  await checkSpecial('after DeleteRecords and restart', start, { maxTimestamp: false });
  assert.ok(broker.alive);
  assertNoBrokerErrors(broker.logs);
});

// Kafka (UnifiedLog.fetchOffsetByTimestamp) answers -3 from the segment with the
// largest timestamp and the batch carrying it, with that record's own offset and
// timestamp, whether or not the log start moved past it. The pair must at least
// name one record: the offset of the record that has that timestamp.
test('-3 after DeleteRecords past the maximum still names the record holding it (offset and timestamp agree)', async () => {
  await checkMaxTimestamp('after DeleteRecords');
});
