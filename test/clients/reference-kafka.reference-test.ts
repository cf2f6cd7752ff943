// Proves the real-client programs against a real Apache Kafka 4.x broker, so
// that a failure against Sediment points at Sediment. Not part of `npm test`
// (the file name does not end in .test.ts); run it by hand:
//   npm run build && node --test --test-reporter=spec dist/test/clients/reference-kafka.reference-test.js
// SEDIMENT_REF_COUNT sets the records per round trip (default 100000).
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { everyNth, ApiKey, startChaosProxy } from '../support/chaos-proxy.js';
import { freePort, KafkaTool, runKafkaTool, startKafkaReference, type KafkaReference } from '../support/kafka-reference.js';
import { requireTools } from '../support/tools.js';
import { clientCodecs, runKafkajsRoundTrip, runKcatRoundTrip, runPythonRoundTrip, type ClientRun } from './run-client.js';

const count = Number(process.env['SEDIMENT_REF_COUNT'] ?? 100_000);
const timings: Array<{ run: string; produceMs: number; consumeMs: number; wallMs: number }> = [];

function assertClean(run: ClientRun, label: string, produced = count): void {
  timings.push({ run: label, produceMs: run.produceMs, consumeMs: run.consumeMs, wallMs: Math.round(run.wallMs) });
  assert.equal(run.ok, true, `${label}: ${run.errorCount} errors:\n${run.errors.join('\n')}`);
  assert.equal(run.produced, produced, label);
  assert.equal(run.consumed, count, label);
  assert.equal(run.duplicates, 0, label);
  assert.equal(run.missing, 0, label);
  assert.ok(run.listOffsetsChecked > 0, `${label}: ListOffsets by timestamp checked`);
}

let kafka: KafkaReference;
let topicSeq = 0;
const topic = (name: string): string => `${name}-${++topicSeq}`;

before(async () => {
  requireTools(['java', 'kafka', 'kcat', 'python-confluent-kafka', 'kafkajs']);
  kafka = await startKafkaReference();
});

after(async () => {
  await kafka?.stop();
  console.log(`\nreference Kafka, ${count} records per run:`);
  for (const t of timings) console.log(`  ${t.run.padEnd(40)} produce ${String(t.produceMs).padStart(6)} ms  consume ${String(t.consumeMs).padStart(6)} ms  wall ${String(t.wallMs).padStart(6)} ms`);
});

describe('kafkajs', () => {
  for (const codec of clientCodecs.kafkajs) {
    test(`${codec}: ${count} records round trip`, async () => {
      assertClean(await runKafkajsRoundTrip({ bootstrap: kafka.bootstrap, topic: topic(`kafkajs-${codec}`), count, compression: codec }), `kafkajs ${codec}`);
    });
  }
  test('idempotent, consumer group', async () => {
    const r = await runKafkajsRoundTrip({ bootstrap: kafka.bootstrap, topic: topic('kafkajs-group'), count, idempotent: true, group: `g-kafkajs-${topicSeq}` });
    assertClean(r, 'kafkajs idempotent group');
  });
});

describe('confluent-kafka-python', () => {
  for (const codec of clientCodecs.python) {
    test(`${codec}: ${count} records round trip, idempotent`, async () => {
      const r = await runPythonRoundTrip({ bootstrap: kafka.bootstrap, topic: topic(`python-${codec}`), count, compression: codec, idempotent: true });
      assertClean(r, `python ${codec} idempotent`);
    });
  }
  test('not idempotent, consumer group', async () => {
    const r = await runPythonRoundTrip({ bootstrap: kafka.bootstrap, topic: topic('python-group'), count, compression: 'lz4', group: `g-python-${topicSeq}` });
    assertClean(r, 'python lz4 group');
  });
});

describe('kcat', () => {
  for (const codec of clientCodecs.kcat) {
    test(`${codec}: ${count} records round trip`, async () => {
      assertClean(await runKcatRoundTrip({ bootstrap: kafka.bootstrap, topic: topic(`kcat-${codec}`), count, compression: codec }), `kcat ${codec}`);
    });
  }
});

describe('restart between produce and consume', () => {
  test('python zstd: produce, clean broker restart, verify', async () => {
    const ownPort = await freePort();
    const first = await startKafkaReference({ port: ownPort, keepData: true });
    const t = topic('restart');
    const baseTimestamp = Math.floor(Date.now() / 1000) * 1000 - 3_600_000;
    try {
      const p = await runPythonRoundTrip({ bootstrap: first.bootstrap, topic: t, count, compression: 'zstd', idempotent: true, phase: 'produce', baseTimestamp });
      assert.equal(p.ok, true, p.errors.join('\n'));
      assert.equal(p.produced, count);
    } finally {
      await first.stop();
    }
    const second = await startKafkaReference({ port: ownPort, dataDir: first.dataDir });
    try {
      const c = await runPythonRoundTrip({ bootstrap: second.bootstrap, topic: t, count, compression: 'zstd', phase: 'consume', baseTimestamp });
      assertClean(c, 'python zstd after restart (consume)', 0);
    } finally {
      await second.stop();
      rmSync(first.workDir, { recursive: true, force: true });
    }
  });
});

describe('kill -9 in the middle of a produce', () => {
  test('python idempotent: broker killed after 30% acknowledged, restarted, producer completes, full verification', async () => {
    const ownPort = await freePort();
    const first = await startKafkaReference({ port: ownPort, keepData: true });
    let second: KafkaReference | undefined;
    let restart: Promise<void> | undefined;
    const t = topic('kill9');
    const baseTimestamp = Math.floor(Date.now() / 1000) * 1000 - 3_600_000;
    try {
      const p = await runPythonRoundTrip({
        bootstrap: first.bootstrap,
        topic: t,
        count,
        compression: 'zstd',
        idempotent: true,
        phase: 'produce',
        baseTimestamp,
        progressEvery: Math.max(1, Math.floor(count / 10)),
        onProgress: (acked) => {
          if (restart !== undefined || acked < count * 0.3) return;
          restart = (async () => {
            await first.kill();
            second = await startKafkaReference({ port: ownPort, dataDir: first.dataDir });
          })();
        },
      });
      assert.ok(restart !== undefined, 'the broker was killed during the produce');
      await restart;
      assert.equal(p.ok, true, p.errors.join('\n'));
      assert.equal(p.produced, count);
      assert.ok(second !== undefined);
      const c = await runPythonRoundTrip({ bootstrap: second.bootstrap, topic: t, count, compression: 'zstd', phase: 'consume', baseTimestamp });
      assertClean(c, 'python zstd after kill -9 (consume)', 0);
    } finally {
      await first.stop();
      await second?.stop();
      rmSync(first.workDir, { recursive: true, force: true });
    }
  });
});

describe('idempotent produce with injected retries', () => {
  test('python: responses to Produce dropped, no duplicates, order kept', async () => {
    const proxyPort = await freePort();
    const broker = await startKafkaReference({ proxyAdvertisedPort: proxyPort });
    const target = broker.externalListener;
    assert.ok(target !== undefined);
    const proxy = await startChaosProxy({ target, port: proxyPort });
    try {
      // Control: without idempotence the same faults must produce duplicates,
      // which proves the faults hit after the broker appended.
      proxy.setFault(everyNth(ApiKey.produce, 5, 'close-after-response'));
      const control = await runPythonRoundTrip({ bootstrap: proxy.address, topic: topic('chaos-control'), count: 20_000, compression: 'lz4' });
      const controlFaults = proxy.stats.faults;
      assert.ok(controlFaults > 0, 'faults injected in the control run');
      assert.ok(control.duplicates > 0, `control run without idempotence shows duplicates (got ${control.duplicates})`);

      proxy.setFault(everyNth(ApiKey.produce, 5, 'close-after-response'));
      const r = await runPythonRoundTrip({ bootstrap: proxy.address, topic: topic('chaos-idempotent'), count, compression: 'lz4', idempotent: true });
      assert.ok(proxy.stats.faults - controlFaults > 0, 'faults injected in the idempotent run');
      assertClean(r, `python idempotent, ${proxy.stats.faults - controlFaults} dropped Produce responses`);
    } finally {
      await proxy.close();
      await broker.stop();
    }
  });
});

describe('Kafka CLI tools on the reference classpath', () => {
  test('topics, console producer/consumer, consumer groups, perf tests', async () => {
    const b = kafka.bootstrap;
    const t = topic('cli');
    await runKafkaTool(KafkaTool.topics, ['--bootstrap-server', b, '--create', '--topic', t, '--partitions', '2']);
    const described = await runKafkaTool(KafkaTool.topics, ['--bootstrap-server', b, '--describe', '--topic', t]);
    assert.match(described.stdout, /PartitionCount: 2/);
    await runKafkaTool(KafkaTool.consoleProducer, ['--bootstrap-server', b, '--topic', t], { input: 'one\ntwo\nthree\n' });
    const consumed = await runKafkaTool(KafkaTool.consoleConsumer, ['--bootstrap-server', b, '--topic', t, '--from-beginning', '--max-messages', '3', '--group', 'cli-group']);
    assert.deepEqual(consumed.stdout.trim().split('\n').sort(), ['one', 'three', 'two']);
    const groups = await runKafkaTool(KafkaTool.consumerGroups, ['--bootstrap-server', b, '--describe', '--group', 'cli-group']);
    assert.match(groups.stdout, new RegExp(t));
    const perf = await runKafkaTool(KafkaTool.producerPerfTest, ['--topic', t, '--num-records', '10000', '--record-size', '1024', '--throughput', '-1', '--producer-props', `bootstrap.servers=${b}`]);
    assert.match(perf.stdout, /10000 records sent/);
    const cperf = await runKafkaTool(KafkaTool.consumerPerfTest, ['--bootstrap-server', b, '--topic', t, '--messages', '10000']);
    assert.match(cperf.stdout, /data.consumed.in.MB/);
  });
});
