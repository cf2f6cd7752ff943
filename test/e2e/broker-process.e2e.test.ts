// The `sediment start` process as an operator and the e2e harness see it:
// a free port read back from the start-up log, a configuration error naming the
// key, SIGTERM as a clean shutdown (exit 0, no recovery at the next start),
// SIGKILL leaving a log that the next start recovers, and the in-process variant;
// the harness failing a suite whose broker crashed or printed a stack trace.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runProcess } from '../clients/common.js';
import { kcatPath, requireTools } from '../support/tools.js';
import { LogCollector, startSediment, startSedimentInProcess, tempDataDir } from '../support/sediment.js';
import { assertNoBrokerErrors } from './helpers.js';
import { rmSync } from 'node:fs';

function cleanShutdownFlag(lines: readonly { msg?: string; [k: string]: unknown }[]): unknown {
  return lines.find((l) => l.msg === 'loaded log dir')?.['cleanShutdown'];
}

async function produceAndCount(bootstrap: string, topic: string, n: number): Promise<number> {
  const input = Array.from({ length: n }, (_, k) => `k${k}\tv${k}\n`).join('');
  const p = await runProcess(kcatPath, ['-P', '-b', bootstrap, '-t', topic, '-K', '\\t'], { input, timeoutMs: 30_000 });
  assert.equal(p.code, 0, p.stderr);
  const c = await runProcess(kcatPath, ['-C', '-b', bootstrap, '-t', topic, '-o', 'beginning', '-e', '-q', '-f', '%k\n'], { timeoutMs: 30_000 });
  assert.equal(c.code, 0, c.stderr);
  return c.stdout.split('\n').filter((l) => l !== '').length;
}

test('start on a free port, SIGTERM is clean, SIGKILL is recovered', async () => {
  requireTools(['kcat']);
  const s = await startSediment();
  try {
    assert.ok(s.port > 0);
    assert.equal(cleanShutdownFlag(s.logs.lines), false, 'a fresh log dir has no clean-shutdown marker');
    assert.equal(await produceAndCount(s.bootstrap, 'process-a', 50), 50);

    assert.deepEqual(await s.stop(), { code: 0, signal: null });
    assert.ok(s.logs.lines.some((l) => l.msg === 'shut down cleanly'));
    const port = s.port;
    await s.start();
    assert.equal(s.port, port, 'restarted on the same port');
    assert.equal(cleanShutdownFlag(s.logs.lines), true);
    assert.equal(await produceAndCount(s.bootstrap, 'process-a', 50), 100);

    await s.kill();
    assert.equal(s.exit?.signal, 'SIGKILL');
    assert.equal(s.alive, false);
    await s.restart();
    assert.equal(cleanShutdownFlag(s.logs.lines), false, 'after kill -9 the next start recovers');
    assert.equal(await produceAndCount(s.bootstrap, 'process-a', 50), 150);
    assert.equal(s.previousLogs.length, 2);
  } finally {
    await s.close();
  }
});

test('an unknown configuration key stops start-up with a message naming it', async () => {
  const dir = tempDataDir();
  try {
    await assert.rejects(startSediment({ dataDir: dir, overrides: { 'log.segmnet.bytes': '1000' } }), /log\.segmnet\.bytes/);
    await assert.rejects(startSediment({ dataDir: dir, overrides: { 'num.partitions': 'many' } }), /num\.partitions/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('in-process broker: serves, restarts on the same port and directory', async () => {
  requireTools(['kcat']);
  const b = await startSedimentInProcess();
  let again;
  try {
    assert.equal(await produceAndCount(b.bootstrap, 'in-process', 20), 20);
    again = await b.restart();
    assert.equal(again.port, b.port);
    assert.equal(await produceAndCount(again.bootstrap, 'in-process', 20), 40);
  } finally {
    await (again ?? b).close();
  }
});

test('the harness fails close() for a broker that exited unasked, and for none that was stopped or killed', async () => {
  const s = await startSediment();
  const exited = new Promise<void>((resolve) => (s.onUnexpectedExit = () => resolve()));
  // A crash as the suite would not see it: the process dies while tests go on.
  process.kill(s.pid, 'SIGABRT');
  await exited;
  await assert.rejects(s.close(), /sediment broker ended uncleanly:\nrun 1 exited unasked \(SIGABRT\)/);
  const clean = await startSediment();
  await clean.kill();
  await clean.restart();
  await clean.close();
  assert.deepEqual(clean.uncleanExits, []);
});

test('assertNoBrokerErrors fails on a stack trace on stderr, not on ordinary output', () => {
  const logs = new LogCollector();
  logs.write('{"level":30,"msg":"sediment broker started"}\n');
  logs.addOther('sediment: note: something a human reads');
  logs.addOther('(node:123) ExperimentalWarning: something');
  assertNoBrokerErrors(logs);
  for (const line of [
    'TypeError: Cannot read properties of undefined (reading \'x\')',
    '    at PartitionLog.read (file:///x/dist/broker/log/partition-log.js:322:23)',
    'Error [ERR_STREAM_WRITE_AFTER_END]: write after end',
    'node:internal/process/promises:289',
  ]) {
    const bad = new LogCollector();
    bad.addOther(line);
    assert.throws(() => assertNoBrokerErrors(bad), (e: unknown) => e instanceof assert.AssertionError && e.message.includes('printed a stack trace') && e.message.includes(line), line);
  }
});
