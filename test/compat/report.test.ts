import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ClientSpec } from './clients.js';
import { clientPassed, declaredOperations, missingOperations, renderCompatibility, type ClientResult } from './report.js';
import type { CompatSummary, Operation } from './summary.js';

const spec = (id: string): ClientSpec => ({
  id,
  title: `client ${id}`,
  codecs: ['none', 'gzip'],
  coverage: { createTopic: 'admin create', produce: 'producer', extra: 'an extra call' },
  notes: ['a note'],
  run: () => Promise.reject(new Error('not run here')),
});

const op = (name: string, ok: boolean, detail = 'done'): Operation => ({ name, ok, detail, ms: 1 });

const summary = (ok: boolean, operations: Operation[], errors: string[] = []): CompatSummary => ({
  client: 'x', clientVersion: '1.2.3', ok, codecs: ['none', 'gzip'], idempotent: true, count: 10,
  operations, notes: [], errorCount: errors.length, errors,
});

test('renderCompatibility: one row per client, pass/FAIL/n/a/not run cells, failures listed', () => {
  const all = ['createTopic', 'produce', 'consumeGroup', 'listOffsets', 'groupLag'];
  const results: ClientResult[] = [
    { spec: spec('a'), summary: summary(true, [...all.map((n) => op(n, true)), op('extra', true)]), failure: null, wallMs: 1 },
    { spec: spec('b'), summary: summary(false, [op('createTopic', true, 'n/a: no admin API'), op('produce', false)], ['produce: boom']), failure: null, wallMs: 1 },
    { spec: spec('c'), summary: null, failure: 'cannot install c: no compiler', wallMs: 1 },
  ];
  assert.deepEqual(results.map(clientPassed), [true, false, false]);
  const md = renderCompatibility({ count: 10, partitions: 3, results });
  assert.match(md, /\| client a \| 1\.2\.3 \| pass \| pass: none, gzip \(idempotent\) \| pass \| pass \| pass \| extra pass \| \*\*pass\*\* \|/);
  assert.match(md, /\| client b \| 1\.2\.3 \| n\/a \| \*\*FAIL\*\*: none, gzip \(idempotent\) \| \*\*FAIL\*\* \(not reached\) \|/);
  assert.match(md, /\| client c \| \? \| not run \| not run \|.*\*\*FAIL\*\*: could not run \|/);
  assert.match(md, /## Failures[\s\S]*### client b[\s\S]*- produce: boom[\s\S]*### client c[\s\S]*cannot install c: no compiler/);
  assert.doesNotMatch(md, /### client a\n\n```/);
  assert.match(md, /- extra: an extra call — pass/);
  assert.match(md, /## Kafka 4\.3 protocol versions[\s\S]*\| Fetch \(1\) \| 4-18 \| 4-18 \|/);
});

test('the 4.3 versions section names the ranges the handler registry advertises', async () => {
  const { protocolVersionsSection } = await import('./protocol-versions.js');
  const { allHandlers } = await import('../../broker/handlers/index.js');
  const advertised = new Map(allHandlers.map((h) => [h.apiKey, `${h.minVersion}-${h.maxVersion}`]));
  let checked = 0;
  for (const line of protocolVersionsSection) {
    const cells = line.split(' | ');
    if (!line.startsWith('| ') || cells.length < 4 || /^\|[- |]*$/.test(line) || line.startsWith('| API')) continue;
    const keys: number[] = [];
    for (const m of (cells[0] as string).matchAll(/\((\d+)(?:-(\d+))?\)/g)) {
      const from = Number(m[1]);
      for (let k = from; k <= Number(m[2] ?? from); k++) keys.push(k);
    }
    const ours = (cells[2] as string).split(' / ');
    for (const [i, key] of keys.entries()) {
      const want = ours.length === 1 ? ours[0] : ours[i];
      assert.equal(advertised.get(key) ?? '-', want, `api key ${key}: ${line.slice(0, 60)}`);
      checked++;
    }
  }
  assert.ok(checked >= 25, `rows checked: ${checked}`);
});

test('a client whose summary says ok but stops before its declared operations fails, never "pass" beside "not reached"', () => {
  const all = ['createTopic', 'produce', 'consumeGroup', 'listOffsets', 'groupLag'];
  assert.deepEqual(declaredOperations(spec('d')), [...all, 'extra']);
  const early: ClientResult = { spec: spec('d'), summary: summary(true, [op('createTopic', true), op('produce', true)]), failure: null, wallMs: 1 };
  const noExtra: ClientResult = { spec: spec('e'), summary: summary(true, all.map((n) => op(n, true))), failure: null, wallMs: 1 };
  assert.deepEqual(missingOperations(early), ['consumeGroup', 'listOffsets', 'groupLag', 'extra']);
  assert.deepEqual(missingOperations(noExtra), ['extra']);
  assert.deepEqual([early, noExtra].map(clientPassed), [false, false]);
  const md = renderCompatibility({ count: 10, partitions: 3, results: [early, noExtra] });
  assert.match(md, /\| client d \| 1\.2\.3 \| pass \| pass: none, gzip \(idempotent\) \| \*\*FAIL\*\* \(not reached\) \| \*\*FAIL\*\* \(not reached\) \| \*\*FAIL\*\* \(not reached\) \|  \| \*\*FAIL\*\* \|/);
  assert.match(md, /\| client e \|.*\| \*\*FAIL\*\* \|$/m);
  assert.doesNotMatch(md, /not reached.*\*\*pass\*\* \|/);
  assert.match(md, /### client d\n\n- not reached: consumeGroup, listOffsets, groupLag, extra/);
  assert.match(md, /- extra: an extra call — \*\*FAIL\*\* \(not reached\)/);
});
