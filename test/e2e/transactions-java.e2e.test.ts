// The Java client (the reference release, 4.3.1) transactional producer (classic TV1 flow: the broker
// does not advertise transaction.version) against a Sediment child process:
// see test/e2e/java/TxnClient.java for the scenario.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { runProcess } from '../clients/common.js';
import { LogLevel, startSediment, type SedimentProcess } from '../support/sediment.js';
import { kafkaClasspath, repoRoot, requireTools } from '../support/tools.js';

let broker: SedimentProcess;
let classes: string;

before(async () => {
  requireTools(['java', 'kafka']);
  classes = mkdtempSync(path.join(os.tmpdir(), 'sediment-txn-java-'));
  const source = path.join(repoRoot(), 'test', 'e2e', 'java', 'TxnClient.java');
  const javac = await runProcess('javac', ['-d', classes, '-cp', kafkaClasspath(), source], { timeoutMs: 120_000 });
  assert.equal(javac.code, 0, javac.stderr);
  broker = await startSediment({ overrides: { 'transaction.abort.timed.out.transaction.cleanup.interval.ms': '1000' } });
});

after(async () => {
  await broker?.close();
  if (classes !== undefined) rmSync(classes, { recursive: true, force: true });
});

test('Java client: commit, abort, sendOffsetsToTransaction, read_committed, fencing', { timeout: 240_000 }, async () => {
  const log4j = path.join(repoRoot(), 'test', 'compat', 'java', 'log4j2.properties');
  const r = await runProcess('java', [`-Dlog4j2.configurationFile=${log4j}`, '-cp', `${classes}${path.delimiter}${kafkaClasspath()}`, 'TxnClient', broker.bootstrap, 'txn-in', 'txn-out', 'txn-java-group'], { timeoutMs: 180_000 });
  assert.equal(r.code, 0, `java exited ${r.code}:\n${r.stdout}\n${r.stderr.slice(-4000)}`);
  const results = new Map<string, string>();
  for (const line of r.stdout.split('\n')) {
    const m = /^RESULT (\w+)=(.*)$/.exec(line);
    if (m !== null) results.set(m[1]!, m[2]!);
  }
  assert.equal(results.get('consumedInput'), '10');
  assert.equal(results.get('groupOffset'), '10', 'the committed transaction’s offset, not the aborted one');
  assert.equal(results.get('fenced'), 'ProducerFencedException');
  const transformed = Array.from({ length: 10 }, (_, i) => `t-in${i}`);
  assert.deepEqual(results.get('committed')?.split(','), ['c0', 'c1', 'c2', ...transformed, 'zend'].sort());
  const uncommitted = results.get('uncommitted')?.split(',') ?? [];
  for (const v of ['a0', 'a1', 'a2', 'a-last', 'zombie']) assert.ok(uncommitted.includes(v), `read_uncommitted sees ${v}`);
  assert.equal(uncommitted.length, 3 + 3 + 10 + 1 + 1 + 1 + (uncommitted.includes('zombie2') ? 1 : 0));
  const errors = broker.logs.atLeast(LogLevel.error);
  assert.equal(errors.length, 0, errors.map((l) => JSON.stringify(l)).join('\n'));
});
