// Real clients against a Sediment broker child process over real sockets and
// files: kafkajs, confluent-kafka-python and kcat each create a topic, produce
// keyed records with headers under every codec the client supports, consume
// from the beginning and verify every key, value, header, timestamp and the
// per-partition order, then check ListOffsets by timestamp (see
// test/clients/README.md for the content rules).
// SEDIMENT_E2E_COUNT=2000 makes a quick run; the default is 100k per codec.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { clientCodecs, runKafkajsRoundTrip, runKcatRoundTrip, runPythonRoundTrip } from '../clients/run-client.js';
import { requireTools } from '../support/tools.js';
import { startSediment, type SedimentProcess } from '../support/sediment.js';
import { assertCleanRun, assertNoBrokerErrors, e2eCount, Timings } from './helpers.js';

const count = e2eCount(100_000);
const smallCount = e2eCount(20_000);
const timings = new Timings();
let broker: SedimentProcess;
let unexpectedExit: string | null = null;

before(async () => {
  requireTools(['kcat', 'python-confluent-kafka', 'kafkajs']);
  // num.partitions=3 so the auto-created topic matches the clients' layout.
  broker = await startSediment({ overrides: { 'num.partitions': '3' } });
  broker.onUnexpectedExit = (info, logs) => {
    unexpectedExit = `broker exited (${info.code ?? info.signal}):\n${logs.tail()}`;
  };
});

after(async () => {
  await broker?.close();
  timings.print(`Sediment round trips (${count} records per codec run):`);
});

afterEach(() => {
  assert.equal(unexpectedExit, null);
  assert.ok(broker.alive, 'broker still running');
  assertNoBrokerErrors(broker.logs);
});

describe('kafkajs', () => {
  for (const codec of clientCodecs.kafkajs) {
    test(`${codec}: ${count} keyed records with headers round trip`, async () => {
      const r = await runKafkajsRoundTrip({ bootstrap: broker.bootstrap, topic: `kafkajs-${codec}`, count, compression: codec });
      timings.add(`kafkajs ${codec}`, r, count);
      assertCleanRun(r, `kafkajs ${codec}`, count);
    });
  }
  test(`idempotent producer, consumer group, auto-created topic: ${smallCount} records`, async () => {
    const r = await runKafkajsRoundTrip({ bootstrap: broker.bootstrap, topic: 'kafkajs-group', count: smallCount, idempotent: true, group: 'g-kafkajs', createTopic: false });
    timings.add('kafkajs idempotent group auto-create', r, smallCount);
    assertCleanRun(r, 'kafkajs idempotent group', smallCount);
  });
});

describe('confluent-kafka-python', () => {
  for (const codec of clientCodecs.python) {
    test(`${codec}: ${count} keyed records with headers round trip, idempotent producer`, async () => {
      const r = await runPythonRoundTrip({ bootstrap: broker.bootstrap, topic: `python-${codec}`, count, compression: codec, idempotent: true });
      timings.add(`python ${codec} idempotent`, r, count);
      assertCleanRun(r, `python ${codec}`, count);
    });
  }
  test(`not idempotent, consumer group: ${smallCount} records`, async () => {
    const r = await runPythonRoundTrip({ bootstrap: broker.bootstrap, topic: 'python-group', count: smallCount, compression: 'lz4', group: 'g-python' });
    timings.add('python lz4 group', r, smallCount);
    assertCleanRun(r, 'python lz4 group', smallCount);
  });
});

describe('kcat', () => {
  for (const codec of clientCodecs.kcat) {
    test(`${codec}: ${count} keyed records with headers round trip`, async () => {
      const r = await runKcatRoundTrip({ bootstrap: broker.bootstrap, topic: `kcat-${codec}`, count, compression: codec });
      timings.add(`kcat ${codec}`, r, count);
      assertCleanRun(r, `kcat ${codec}`, count);
    });
  }
  test(`idempotent producer: ${smallCount} records`, async () => {
    const r = await runKcatRoundTrip({ bootstrap: broker.bootstrap, topic: 'kcat-idempotent', count: smallCount, compression: 'zstd', idempotent: true });
    timings.add('kcat zstd idempotent', r, smallCount);
    assertCleanRun(r, 'kcat zstd idempotent', smallCount);
  });
});
