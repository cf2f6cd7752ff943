// Idempotent produce with injected retries: a chaos proxy between the client and
// Sediment closes the client's connection after the broker answered a Produce,
// without passing the answer on, so librdkafka resends batches the broker already
// appended. The broker advertises the proxy's port so clients stay on it.
// A control run without idempotence must show duplicates (proof that the faults
// hit after the append); the idempotent run must show none, in order.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { runPythonRoundTrip } from '../clients/run-client.js';
import { ApiKey, everyNth, startChaosProxy, type ChaosProxy, type FaultPlan } from '../support/chaos-proxy.js';
import { freePort } from '../support/kafka-reference.js';
import { requireTools } from '../support/tools.js';
import { startSediment, type SedimentProcess } from '../support/sediment.js';
import { assertCleanRun, assertNoBrokerErrors, e2eCount, Timings } from './helpers.js';

const count = e2eCount(100_000);
const controlCount = e2eCount(20_000);
// The faults start with the first Produce request: a fast producer may send all its
// records in fewer than five requests (CI saw it once, with 0 faults injected).
const timings = new Timings();
let broker: SedimentProcess;
let proxy: ChaosProxy;

before(async () => {
  requireTools(['python-confluent-kafka']);
  const proxyPort = await freePort();
  broker = await startSediment({ overrides: { 'advertised.listeners': `PLAINTEXT://127.0.0.1:${proxyPort}` } });
  proxy = await startChaosProxy({ target: { host: '127.0.0.1', port: broker.port }, port: proxyPort });
});

after(async () => {
  await proxy?.close();
  await broker?.close();
  timings.print('Produce through the chaos proxy:');
});

function faultsDuring<T>(run: () => Promise<T>): Promise<[T, number]> {
  const before = proxy.stats.faults;
  return run().then((r) => [r, proxy.stats.faults - before]);
}

test('control: without idempotence, dropped Produce responses cause duplicates', async () => {
  proxy.setFault(everyNth(ApiKey.produce, 5, 'close-after-response', Infinity, true));
  const [r, faults] = await faultsDuring(() => runPythonRoundTrip({ bootstrap: proxy.address, topic: 'chaos-control', count: controlCount, compression: 'lz4' }));
  timings.add(`python lz4, ${faults} dropped responses`, r, controlCount);
  assert.ok(faults > 0, 'faults were injected');
  assert.ok(r.duplicates > 0, `duplicates expected without idempotence, got ${r.duplicates}`);
  assertNoBrokerErrors(broker.logs);
});

test(`idempotent producer: ${count} records, dropped Produce responses, no duplicates, order kept`, async () => {
  proxy.setFault(everyNth(ApiKey.produce, 5, 'close-after-response', Infinity, true));
  const [r, faults] = await faultsDuring(() =>
    runPythonRoundTrip({ bootstrap: proxy.address, topic: 'chaos-idempotent', count, compression: 'lz4', idempotent: true }),
  );
  timings.add(`python lz4 idempotent, ${faults} dropped responses`, r, count);
  assert.ok(faults > 0, 'faults were injected');
  // The producer also checks every acknowledged offset: a duplicate must be acknowledged with its original offset.
  assertCleanRun(r, 'python idempotent through the chaos proxy', count);
  assert.ok(broker.alive);
  assertNoBrokerErrors(broker.logs);
});

test('idempotent producer: requests dropped before and responses after the broker, mixed, zstd', async () => {
  let n = 0;
  let injected = 0;
  const mixed: FaultPlan = (req) => {
    if (req.apiKey !== ApiKey.produce || injected >= 6) return 'forward';
    n++;
    if (n % 3 === 0 || n % 4 === 1) injected++;
    if (n % 3 === 0) return 'close-after-response';
    if (n % 4 === 1) return 'close-before-forward';
    return 'forward';
  };
  proxy.setFault(mixed);
  const [r, faults] = await faultsDuring(() =>
    runPythonRoundTrip({ bootstrap: proxy.address, topic: 'chaos-mixed', count: controlCount, compression: 'zstd', idempotent: true }),
  );
  timings.add(`python zstd idempotent, ${faults} mixed faults`, r, controlCount);
  assert.ok(faults > 0, 'faults were injected');
  assertCleanRun(r, 'python idempotent, mixed faults', controlCount);
  assertNoBrokerErrors(broker.logs);
});
