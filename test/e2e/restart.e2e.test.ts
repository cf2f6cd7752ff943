// Durability end to end, with a Sediment child process:
//  - clean restart (SIGTERM): confluent-kafka-python produces, the broker stops
//    cleanly (exit 0, no recovery at the next start), and a full verification
//    reads every record back;
//  - kill -9 in the middle of a produce (twice): the idempotent producer rides
//    through both crashes and restarts on the same port; every acknowledged
//    record is then present exactly once and intact;
//  - torn tail: after a kill -9, a partial batch and a whole batch with a bad
//    CRC are left at the end of a segment (what a crash mid-write leaves); the
//    restart truncates them, nothing past them is ever served, and new records
//    continue at the right offsets.
import assert from 'node:assert/strict';
import { appendFileSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { Kafka, logLevel } from 'kafkajs';
import { buildRecordBatch, readBatchHeader, batchSize, OFFSET_CRC } from '../../broker/protocol/record-batch.js';
import { runKcatRoundTrip, runPythonRoundTrip } from '../clients/run-client.js';
import { defaultBaseTimestamp } from '../clients/content.js';
import { runProcess } from '../clients/common.js';
import { kcatPath, requireTools } from '../support/tools.js';
import { startSediment, type LogCollector, type SedimentProcess } from '../support/sediment.js';
import { assertCleanRun, assertNoBrokerErrors, e2eCount, Timings } from './helpers.js';

const count = e2eCount(100_000);
const timings = new Timings();
let broker: SedimentProcess;

before(async () => {
  requireTools(['python-confluent-kafka', 'kcat', 'kafkajs']);
  broker = await startSediment();
});

after(async () => {
  await broker?.close();
  timings.print('Restarts:');
});

function loadedCleanly(logs: LogCollector): boolean | undefined {
  const line = logs.lines.find((l) => l.msg === 'loaded log dir');
  return typeof line?.['cleanShutdown'] === 'boolean' ? line['cleanShutdown'] : undefined;
}

function partitionDir(topic: string, p: number): string {
  return path.join(broker.dataDir, `${topic}-${p}`);
}

function activeSegment(topic: string, p: number): string {
  const logs = readdirSync(partitionDir(topic, p)).filter((f) => /^\d{20}\.log$/.test(f)).sort();
  const last = logs[logs.length - 1];
  assert.ok(last !== undefined, `a segment in ${partitionDir(topic, p)}`);
  return path.join(partitionDir(topic, p), last);
}

test(`clean restart (SIGTERM) between produce and consume: ${count} records, full verification`, async () => {
  const topic = 'clean-restart';
  const baseTimestamp = defaultBaseTimestamp();
  const p = await runPythonRoundTrip({ bootstrap: broker.bootstrap, topic, count, compression: 'zstd', idempotent: true, phase: 'produce', baseTimestamp });
  timings.add('python zstd produce', p, count);
  assert.equal(p.ok, true, p.errors.join('\n'));
  assert.equal(p.produced, count);

  const exit = await broker.stop();
  assert.deepEqual(exit, { code: 0, signal: null }, 'SIGTERM exits 0');
  assert.ok(broker.logs.lines.some((l) => l.msg === 'shut down cleanly'));
  assertNoBrokerErrors(broker.logs);
  await broker.start();
  assert.equal(loadedCleanly(broker.logs), true, 'no recovery needed after a clean shutdown');

  const c = await runPythonRoundTrip({ bootstrap: broker.bootstrap, topic, count, compression: 'zstd', phase: 'consume', baseTimestamp });
  timings.add('python consume after clean restart', c, count);
  assertCleanRun(c, 'after clean restart', count, { produced: 0 });
  assertNoBrokerErrors(broker.logs);
});

test(`kill -9 twice in the middle of an idempotent produce: ${count} records, each acknowledged once`, async () => {
  const topic = 'kill9-produce';
  const baseTimestamp = defaultBaseTimestamp();
  const killAt = [0.25, 0.6].map((f) => Math.floor(count * f));
  const crashes: Array<Promise<void>> = [];
  let busy = false;
  const p = await runPythonRoundTrip({
    bootstrap: broker.bootstrap,
    topic,
    count,
    compression: 'lz4',
    idempotent: true,
    phase: 'produce',
    baseTimestamp,
    progressEvery: Math.max(1, Math.floor(count / 50)),
    onProgress: (acked) => {
      const next = killAt[crashes.length];
      if (busy || next === undefined || acked < next) return;
      busy = true;
      crashes.push(
        (async () => {
          await broker.kill();
          assert.equal(broker.exit?.signal, 'SIGKILL');
          await broker.start();
          busy = false;
        })(),
      );
    },
  });
  await Promise.all(crashes);
  assert.equal(crashes.length, killAt.length, 'the broker was killed twice during the produce');
  timings.add('python lz4 idempotent produce, 2 x kill -9', p, count);
  // The producer checks that record i was acknowledged at offset i / P exactly once.
  assert.equal(p.ok, true, p.errors.join('\n'));
  assert.equal(p.produced, count);
  assert.equal(broker.starts >= 3, true);
  assert.equal(loadedCleanly(broker.logs), false, 'the restart after kill -9 ran recovery');

  const c = await runPythonRoundTrip({ bootstrap: broker.bootstrap, topic, count, compression: 'lz4', phase: 'consume', baseTimestamp });
  timings.add('python consume after kill -9', c, count);
  assertCleanRun(c, 'after kill -9', count, { produced: 0 });
  assertNoBrokerErrors(broker.logs);
});

test('torn tail after kill -9: partial and corrupt batches are truncated, never served, and appends continue', async () => {
  const topic = 'torn-tail';
  const partitions = 3;
  const n = e2eCount(20_000);
  const first = await runKcatRoundTrip({ bootstrap: broker.bootstrap, topic, count: n, partitions, compression: 'snappy', phase: 'produce' });
  assert.equal(first.ok, true, first.errors.join('\n'));
  await broker.kill();

  // Partition 0: half of a copy of its last batch. Partition 1: a whole batch of
  // "torn" records with a flipped CRC. Partition 2: a size field promising more than the file holds.
  const seg0 = activeSegment(topic, 0);
  const bytes0 = readFileSync(seg0);
  let pos = 0;
  let lastStart = 0;
  while (pos < bytes0.length) {
    lastStart = pos;
    pos += batchSize(readBatchHeader(bytes0, pos));
  }
  const lastBatch = bytes0.subarray(lastStart);
  appendFileSync(seg0, lastBatch.subarray(0, Math.floor(lastBatch.length / 2)));
  const corrupt = buildRecordBatch({ baseOffset: 999_999n, records: Array.from({ length: 5 }, (_, k) => ({ key: `torn-${k}`, value: 'never served', timestamp: Date.now() })) });
  corrupt.writeUInt32BE((corrupt.readUInt32BE(OFFSET_CRC) ^ 0x5a5a5a5a) >>> 0, OFFSET_CRC);
  appendFileSync(activeSegment(topic, 1), corrupt);
  const header = Buffer.alloc(12);
  header.writeBigInt64BE(999_999n, 0);
  header.writeInt32BE(1_000_000, 8);
  appendFileSync(activeSegment(topic, 2), header);
  const sizes = [0, 1, 2].map((p) => statSync(activeSegment(topic, p)).size);

  await broker.start();
  assert.equal(loadedCleanly(broker.logs), false);
  const truncations = broker.logs.lines.filter((l) => l.msg === 'truncated invalid bytes at the end of a segment');
  assert.equal(truncations.length, 3, `one truncation per partition: ${JSON.stringify(truncations)}`);
  [0, 1, 2].forEach((p) => assert.ok(statSync(activeSegment(topic, p)).size < (sizes[p] as number), `partition ${p} segment truncated`));

  // Full verification: exactly the acknowledged records, nothing of the torn tails.
  const window = first.produceWindow;
  assert.ok(window !== null);
  const c = await runKcatRoundTrip({ bootstrap: broker.bootstrap, topic, count: n, partitions, phase: 'consume', produceWindow: window });
  timings.add('kcat consume after torn tails', c, n);
  assertCleanRun(c, 'after torn tails', n, { produced: 0 });

  // New records land right after the last good one.
  const kafka = new Kafka({ clientId: 'torn-tail', brokers: [broker.bootstrap], logLevel: logLevel.NOTHING });
  const producer = kafka.producer();
  await producer.connect();
  try {
    for (let p = 0; p < partitions; p++) {
      const [r] = await producer.send({ topic, acks: -1, messages: [{ partition: p, key: `after-${p}`, value: 'after the crash' }] });
      const expected = Math.ceil((n - p) / partitions);
      assert.equal(r?.baseOffset, String(expected), `partition ${p} continues at ${expected}`);
    }
  } finally {
    await producer.disconnect();
  }
  const tail = await runProcess(kcatPath, ['-C', '-b', broker.bootstrap, '-t', topic, '-p', '1', '-o', String(Math.ceil((n - 1) / partitions) - 1), '-e', '-q', '-f', '%k\\n'], { timeoutMs: 30_000 });
  assert.equal(tail.code, 0, tail.stderr);
  assert.deepEqual(tail.stdout.trim().split('\n'), [`k-${n - 1 - ((n - 1 - 1) % partitions)}`, 'after-1']);
  assertNoBrokerErrors(broker.logs);
});
