// The operator's CLI against Sediment. First the CLI integration suites
// (test/broker/cli/*.it.test.ts, validated against Apache Kafka) run unchanged
// against a Sediment broker through SEDIMENT_CLI_TEST_BOOTSTRAP; the topics
// suite without its transaction check (Sediment has no transaction coordinator
// yet). Then, on a tiered topic whose early segments exist only in remote
// storage (ListOffsets earliest-local > 0), `groups --reset-offsets
// --to-datetime` positions the group at the first record at or after the time,
// both in the remote and in the local part, `--describe` reports the lag, and a
// kafkajs member of the group starts reading exactly there.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { Kafka, logLevel } from 'kafkajs';
import { OffsetSpec } from '../../broker/cli/admin-client.js';
import { cli, parseTable } from '../broker/cli/cli-harness.js';
import { assertNoBrokerErrors } from '../e2e/helpers.js';
import { startSediment, type SedimentProcess } from '../support/sediment.js';
import { requireTools } from '../support/tools.js';
import { committedOffsets, eventually, here, listOffsets, range, Report, withAdmin } from './support.js';

let broker: SedimentProcess;
const report = new Report();

before(async () => {
  requireTools(['kafkajs']);
  broker = await startSediment({
    overrides: {
      'remote.log.manager.task.interval.ms': '1000',
      'log.retention.check.interval.ms': '2000',
    },
  });
});

after(async () => {
  await broker?.close();
  report.print('the CLI against Sediment:');
});

/** Runs a compiled CLI suite with node --test against this broker; resolves with its exit code and output. */
function runSuite(file: string, extraArgs: readonly string[] = []): Promise<{ code: number | null; output: string }> {
  const suite = path.join(here, '..', 'broker', 'cli', file);
  // Without NODE_TEST_CONTEXT, or the child thinks it runs inside this test file and runs nothing.
  const env: NodeJS.ProcessEnv = { ...process.env, SEDIMENT_CLI_TEST_BOOTSTRAP: broker.bootstrap };
  delete env['NODE_TEST_CONTEXT'];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--test', '--test-reporter=spec', ...extraArgs, suite], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (b: Buffer) => (output += b.toString('utf8')));
    child.stderr.on('data', (b: Buffer) => (output += b.toString('utf8')));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, output }));
  });
}

/** The names of a suite's top-level tests (`test('name', ...)` in the compiled file). */
function suiteTestNames(file: string): string[] {
  const text = readFileSync(path.join(here, '..', 'broker', 'cli', file), 'utf8');
  return [...text.matchAll(/^test\((['"`])(.+?)\1,/gm)].map((m) => m[2] as string);
}

function passed(output: string): number {
  return Number(/ℹ pass (\d+)/.exec(output)?.[1] ?? '0');
}

test('the groups CLI suite passes against Sediment', { timeout: 300_000 }, async () => {
  const t = Date.now();
  const r = await runSuite('groups.it.test.js');
  assert.equal(r.code, 0, r.output.slice(-8000));
  assert.ok(passed(r.output) >= 7, r.output.slice(-3000));
  report.add(`groups.it suite: ${passed(r.output)} tests passed against Sediment in ${Date.now() - t} ms`);
});

test('the topics CLI suite passes against Sediment (without the transaction check)', { timeout: 300_000 }, async () => {
  const t = Date.now();
  // InitProducerId with a transactional id answers COORDINATOR_NOT_AVAILABLE until Sediment has a transaction coordinator.
  const names = suiteTestNames('topics.it.test.js').filter((n) => !/open transaction/.test(n));
  assert.ok(names.length >= 6, names.join('\n'));
  const r = await runSuite('topics.it.test.js', names.map((n) => `--test-name-pattern=^${n.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`));
  assert.equal(r.code, 0, r.output.slice(-8000));
  assert.ok(passed(r.output) >= 6, r.output.slice(-3000));
  report.add(`topics.it suite: ${passed(r.output)} tests passed against Sediment in ${Date.now() - t} ms`);
});

test('reset-offsets --to-datetime on a topic whose early segments are remote; describe shows the lag', { timeout: 600_000 }, async () => {
  const t0 = Date.now();
  const topic = 'cli-tiered';
  const group = 'g-cli-tiered';
  const partitions = 3;
  const count = 3000;
  // CreateTime of record i: base + i seconds (three hours ago, well inside retention.ms).
  const base = Math.floor(Date.now() / 1000) * 1000 - 3 * 3_600_000;
  const b = broker.bootstrap;
  const created = await cli('topics', ['--bootstrap-server', b, '--create', '--topic', topic, '--partitions', String(partitions),
    '--config', 'internal.segment.bytes=100000', '--config', 'local.retention.ms=1000', '--config', 'remote.storage.enable=true']);
  assert.equal(created.code, 0, created.stderr);

  const kafka = new Kafka({ brokers: [b], clientId: 'cli-tiered', logLevel: logLevel.NOTHING });
  const producer = kafka.producer();
  await producer.connect();
  const pad = 'x'.repeat(100);
  for (let p = 0; p < partitions; p++) {
    for (let i = 0; i < count; i += 500) {
      await producer.send({ topic, acks: -1, messages: range(Math.min(500, count - i)).map((j) => ({ partition: p, value: `v${i + j}-${pad}`, timestamp: String(base + (i + j) * 1000) })) });
    }
  }
  await producer.disconnect();

  // Wait until the early segments are in remote storage and gone locally.
  let localStart: bigint[] = [];
  await eventually('the early segments of every partition to be remote only (ListOffsets -4 > 0)', async () => {
    localStart = await withAdmin(b, (a) => listOffsets(a, topic, partitions, OffsetSpec.earliestLocal));
    return localStart.every((o) => o > 0n);
  }, 300_000, () => `earliest local ${localStart.join(',')}`);
  const tieredMs = Date.now() - t0;
  assert.deepEqual(await withAdmin(b, (a) => listOffsets(a, topic, partitions, OffsetSpec.earliest)), range(partitions).map(() => 0n));
  const ends = await withAdmin(b, (a) => listOffsets(a, topic, partitions, OffsetSpec.latest));
  assert.deepEqual(ends, range(partitions).map(() => BigInt(count)));

  const iso = (ms: number): string => new Date(ms).toISOString();
  const plan = (stdout: string): string[] => parseTable(stdout, 'GROUP').map((r) => `${r['PARTITION']}=${r['NEW-OFFSET']}`);
  const minLocal = Number(localStart.reduce((x, y) => (y < x ? y : x)));
  const targets = [
    { where: 'remote', offset: Math.floor(minLocal / 2) },
    { where: 'local', offset: Math.floor((Number(localStart.reduce((x, y) => (y > x ? y : x))) + count) / 2) },
  ];
  assert.ok((targets[0]?.offset ?? 0) > 0);
  for (const { where, offset } of targets) {
    // Half a second before record `offset`: the first record at or after is `offset`.
    const r = await cli('groups', ['--bootstrap-server', b, '--reset-offsets', '--group', group, '--topic', topic, '--to-datetime', iso(base + offset * 1000 - 500), '--execute']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(plan(r.stdout), range(partitions).map((p) => `${p}=${offset}`), `${where}: ${r.stdout}`);
    assert.deepEqual(await withAdmin(b, (a) => committedOffsets(a, group, topic, partitions)), range(partitions).map(() => BigInt(offset)));
    for (const p of range(partitions)) assert.equal(BigInt(offset) < (localStart[p] as bigint), where === 'remote', `${where}: offset ${offset} vs local log start ${localStart[p]}`);

    const d = await cli('groups', ['--bootstrap-server', b, '--describe', '--group', group]);
    assert.equal(d.code, 0, d.stderr);
    const rows = parseTable(d.stdout, 'GROUP').filter((x) => x['TOPIC'] === topic);
    assert.deepEqual(rows.map((x) => [x['PARTITION'], x['CURRENT-OFFSET'], x['LOG-END-OFFSET'], x['LAG']]), range(partitions).map((p) => [String(p), String(offset), String(count), String(count - offset)]));
    assert.match(d.stdout, new RegExp(`\\nMax lag: ${count - offset}\\n$`));
    report.add(`--to-datetime into the ${where} part: every partition at ${offset} (local log starts ${localStart.join(',')}), lag ${count - offset}`);
  }

  // A member of the group starts where the reset put it: back to the remote target first.
  const remoteTarget = targets[0]?.offset ?? 0;
  const back = await cli('groups', ['--bootstrap-server', b, '--reset-offsets', '--group', group, '--topic', topic, '--to-datetime', iso(base + remoteTarget * 1000), '--execute']);
  assert.equal(back.code, 0, back.stderr);
  const consumer = kafka.consumer({ groupId: group, sessionTimeout: 10_000, heartbeatInterval: 500, maxWaitTimeInMs: 250 });
  const first = new Map<number, { offset: string; value: string }>();
  try {
    await consumer.connect();
    await consumer.subscribe({ topic });
    const done = new Promise<void>((resolve, reject) => {
      consumer.on(consumer.events.CRASH, (e) => reject(e.payload.error));
      consumer.run({
        autoCommit: false,
        eachMessage: async ({ partition, message }) => {
          if (!first.has(partition)) first.set(partition, { offset: message.offset, value: message.value?.toString('utf8') ?? '' });
          if (first.size === partitions) resolve();
        },
      }).catch(reject);
    });
    await done;
  } finally {
    await consumer.disconnect();
  }
  for (const p of range(partitions)) assert.deepEqual(first.get(p), { offset: String(remoteTarget), value: `v${remoteTarget}-${pad}` }, `partition ${p}: first record read by the group`);
  report.add(`kafkajs member of the group read first offset ${remoteTarget} (remote) in every partition; segments tiered after ${tieredMs} ms; wall ${Date.now() - t0} ms`);
  assertNoBrokerErrors(broker.logs);
});
