// The runner itself: a selection that names nothing, a file that registers no
// test, a skipped test and a promise that never settles each fail the run, loudly.
// The last three run the real runner over fixture files in a temporary directory.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { compiledTestPath, emptyOrSkipped, isSlowTest, selectTests } from './runner.js';
import { selectByEnv } from './support/env-selection.js';

const runner = path.join(path.dirname(fileURLToPath(import.meta.url)), 'runner.js');

describe('test selection', () => {
  const all = ['/t/a.test.js', '/t/b/c.e2e.test.js', '/t/d.it.test.js'];

  it('--only unit keeps the fast files, a pattern keeps the paths containing it', () => {
    assert.deepEqual(selectTests(all, [], 'unit'), ['/t/a.test.js']);
    assert.deepEqual(selectTests(all, [], '/b/'), ['/t/b/c.e2e.test.js']);
    assert.deepEqual(all.map(isSlowTest), [false, true, true]);
  });

  it('a pattern that matches no file, or a file that does not exist, is refused', () => {
    assert.throws(() => selectTests(all, [], 'no-such-suite'), /--only no-such-suite matches no test file/);
    assert.throws(() => selectTests([], ['/no/such/file.test.js'], null), /no such test file: \/no\/such\/file\.test\.js/);
    assert.throws(() => selectTests([], [], null), /no test files found/);
  });

  it('a source path (test/x.test.ts) names its compiled file under dist/, a .js path stays as it is', () => {
    assert.equal(compiledTestPath('/repo/test/broker/a.test.ts', '/repo'), '/repo/dist/test/broker/a.test.js');
    assert.equal(compiledTestPath('/repo/dist/test/broker/a.test.js', '/repo'), '/repo/dist/test/broker/a.test.js');
    assert.equal(compiledTestPath('/elsewhere/a.test.ts', '/repo'), '/elsewhere/a.test.ts');
  });

  it('a file with no test, or a skipped one, is a problem; a file that failed to load is already a failure', () => {
    const counts = { '/a': { tests: 2, failed: 0, skipped: 0, todo: 0 }, '/b': { tests: 0, failed: 0, skipped: 0, todo: 0 }, '/c': { tests: 3, failed: 0, skipped: 1, todo: 0 }, '/e': { tests: 0, failed: 1, skipped: 0, todo: 0 } };
    assert.deepEqual(emptyOrSkipped(['/a', '/b', '/c', '/d', '/e'], counts), ['/b: registered no test', '/c: 1 skipped, 0 todo', '/d: registered no test']);
  });

  it('a file whose tests come from an imported contract module is credited with them, only when that module ran tests', () => {
    const sources: Record<string, string> = {
      '/t/store-memory.test.js': "import { storeContract } from './store.contract.js';\nstoreContract(h);",
      '/t/other.test.js': "import { x } from './unused.contract.js';",
    };
    const counts = { '/t/store.contract.js': { tests: 10, failed: 0, skipped: 0, todo: 0 } };
    const source = (f: string): string => sources[f] ?? '';
    assert.deepEqual(emptyOrSkipped(['/t/store-memory.test.js', '/t/other.test.js'], counts, source), ['/t/other.test.js: registered no test']);
  });
});

describe('subsets chosen by environment variables', () => {
  const items = [{ id: 'java' }, { id: 'kcat' }, { id: 'kafkajs' }];

  it('selects the named ids, all of them when unset, and refuses a typo', () => {
    assert.deepEqual(selectByEnv('X', items, {}), items);
    assert.deepEqual(selectByEnv('X', items, { X: 'kcat, java' }), [{ id: 'java' }, { id: 'kcat' }]);
    assert.throws(() => selectByEnv('SEDIMENT_COMPAT_ONLY', items, { SEDIMENT_COMPAT_ONLY: 'java,kcta' }), /SEDIMENT_COMPAT_ONLY=java,kcta: unknown kcta; known: java, kcat, kafkajs/);
  });
});

describe('the runner over fixture files', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sediment-runner-test-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  const fixture = (name: string, body: string): string => {
    const file = path.join(dir, name);
    writeFileSync(file, `import { describe, test } from 'node:test';\n${body}\n`);
    return file;
  };
  const run = (args: readonly string[], env: NodeJS.ProcessEnv = {}): { status: number | null; out: string } => {
    // Without NODE_TEST_CONTEXT (set for this file by node --test) the inner node --test runs its files instead of skipping them as recursive.
    const { NODE_TEST_CONTEXT: _, ...outer } = process.env;
    const r = spawnSync(process.execPath, [runner, ...args], { encoding: 'utf8', env: { ...outer, ...env }, timeout: 120_000 });
    return { status: r.status, out: `${r.stdout}\n${r.stderr}` };
  };

  it('passes a file whose tests pass', () => {
    const r = run([fixture('ok.test.mjs', "test('fine', () => {});")]);
    assert.equal(r.status, 0, r.out);
  });

  it('fails on --only matching nothing instead of running every file', () => {
    const r = run(['--only', 'no-such-suite-anywhere']);
    assert.equal(r.status, 2, r.out);
    assert.match(r.out, /--only no-such-suite-anywhere matches no test file/);
  });

  it('fails a file that registers no test (an empty selection) and a file that skips one', () => {
    const empty = fixture('empty.test.mjs', "describe('clients', () => { for (const c of []) test(c, () => {}); });");
    const skipped = fixture('skipped.test.mjs', "test('a', () => {}); test('b, a fixture skipped on purpose: the runner must fail its file', { skip: 'fixture of the runner test' }, () => {});");
    const ok = fixture('ok2.test.mjs', "test('fine', () => {});");
    const r = run([empty, skipped, ok]);
    assert.equal(r.status, 1, r.out);
    assert.match(r.out, /empty\.test\.mjs: registered no test/);
    assert.match(r.out, /skipped\.test\.mjs: 1 skipped, 0 todo/);
    assert.doesNotMatch(r.out, /ok2\.test\.mjs: /);
  });

  it('fails a test whose promise never settles (a listening server keeps the process alive) at the timeout', () => {
    const hang = fixture('hang.test.mjs', "import net from 'node:net';\ntest('never settles', async () => { net.createServer().listen(0, '127.0.0.1'); await new Promise(() => {}); });");
    const started = performance.now();
    const r = run([hang], { SEDIMENT_TEST_TIMEOUT_MS: '2000' });
    assert.equal(r.status, 1, r.out);
    assert.match(r.out, /timed out after 2000ms/);
    assert.ok(performance.now() - started < 60_000, 'the run ends soon after the timeout');
  });
});
