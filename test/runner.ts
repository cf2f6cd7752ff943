// `npm test`: finds the compiled test files and runs them with node:test.
// Before running, it checks the external tools the suites need and says exactly
// what is missing and how to get it, instead of letting a suite fail obscurely.
// A selection that names no file, a file that registers no test, a skipped test
// and a test (or file) that runs past its timeout each fail the run.
//   node dist/test/runner.js [--only unit|pattern] [files...]
//   SEDIMENT_TEST_TIMEOUT_MS=N   per-file and per-test timeout instead of the defaults below
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FileCounts } from './support/test-count-reporter.js';
import { findMissingTools, repoRoot } from './support/tools.js';

const here = path.dirname(fileURLToPath(import.meta.url));

function findTests(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) out.push(...findTests(p));
    else if (name.endsWith('.test.js')) out.push(p);
  }
  return out.sort();
}

function minioMissing(): string | null {
  const r = spawnSync('bash', [path.join(repoRoot(), 'test', 'support', 'install-minio.sh'), '--print-path'], { encoding: 'utf8' });
  const bin = r.stdout.trim();
  if (r.status === 0 && bin !== '' && existsSync(bin)) return null;
  return `missing tool: MinIO server (${bin || 'not built'}). Build it with: bash test/support/install-minio.sh (needs go; about 4 minutes)`;
}

function missingTools(): string[] {
  const out = findMissingTools(['java', 'kafka', 'kcat', 'python-confluent-kafka', 'kafkajs', 'etcd']).map((m) => `missing tool: ${m.name}: ${m.problem}. ${m.fix}`);
  if (!existsSync('/usr/bin/chromium')) out.push('missing tool: chromium (/usr/bin/chromium, for the console test). Install it with: apt-get install -y chromium');
  const minio = minioMissing();
  if (minio !== null) out.push(minio);
  return out;
}

/** Files whose tests run real clients, brokers or object stores: the slow kind. */
export function isSlowTest(file: string): boolean {
  return /\.(it|e2e)\.test\.js$/.test(file);
}

// node 20 applies --test-timeout to every test and also to each file's run as a
// whole, so these bound a file. Unit files take up to ~45 s on a loaded 2-core
// machine (the cleaner crash-safety and offsets-compaction properties); the
// compatibility matrix runs eight clients of up to seven minutes each. A test's
// own `timeout` option still applies inside these.
// SEDIMENT_TEST_TIMEOUT_MS replaces both (test/runner.test.ts proves a hang fails with it).
const timeoutOverride = Number(process.env['SEDIMENT_TEST_TIMEOUT_MS'] ?? '') || undefined;
const timeoutMs = { unit: timeoutOverride ?? 300_000, slow: timeoutOverride ?? 3_600_000 } as const;

/**
 * A test named by its source path (`test/x.test.ts`) runs as its compiled file
 * (`dist/test/x.test.js`); a `.js` path is taken as it is.
 */
export function compiledTestPath(file: string, root: string = repoRoot()): string {
  if (!file.endsWith('.ts')) return file;
  const rel = path.relative(root, file);
  if (rel.startsWith('..') || path.isAbsolute(rel)) return file;
  return path.join(root, 'dist', rel.replace(/\.ts$/, '.js'));
}

/** Selects the files to run; throws when a selection names nothing, rather than letting node --test run everything. */
export function selectTests(all: readonly string[], files: readonly string[], only: string | null): string[] {
  for (const f of files) if (!existsSync(f)) throw new Error(`no such test file: ${f}`);
  let tests = files.length > 0 ? [...files] : [...all];
  if (only !== null) tests = tests.filter((t) => (only === 'unit' ? !isSlowTest(t) : t.includes(only)));
  if (tests.length === 0) throw new Error(only === null ? 'no test files found' : `--only ${only} matches no test file`);
  return tests;
}

/**
 * The shared contract modules (`*.contract.js`) a test file imports. node:test
 * reports a test under the file whose code called test()/it(), so the tests a
 * contract registers for a file are counted under the contract module.
 */
export function importedContracts(file: string, source: string): string[] {
  const out: string[] = [];
  for (const m of source.matchAll(/from\s+'(\.{1,2}\/[^']*\.contract\.js)'/g)) out.push(path.resolve(path.dirname(file), m[1]!));
  return out;
}

function readSource(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

/**
 * Files that ran no test, or skipped some: each one is a failure of the run (no
 * skipped tests, no empty files). A file whose tests all come from contract
 * modules is credited with the tests counted under those modules (shared by
 * every file that runs the same contract).
 */
export function emptyOrSkipped(files: readonly string[], counts: Readonly<Record<string, FileCounts>>, source: (file: string) => string = readSource): string[] {
  const out: string[] = [];
  for (const f of files) {
    const c = counts[f];
    const viaContracts = importedContracts(f, source(f)).some((m) => (counts[m]?.tests ?? 0) > 0);
    if ((c === undefined || (c.tests === 0 && c.failed === 0)) && !viaContracts) out.push(`${f}: registered no test`);
    else if (c !== undefined && (c.skipped > 0 || c.todo > 0)) out.push(`${f}: ${c.skipped} skipped, ${c.todo} todo`);
  }
  return out;
}

/** One `node --test` over `tests`; returns its exit status and the per-file counts. */
function runNodeTest(tests: readonly string[], kind: keyof typeof timeoutMs): { status: number; problems: string[] } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sediment-test-counts-'));
  const countsFile = path.join(dir, 'counts.json');
  try {
    const reporter = path.join(here, 'support', 'test-count-reporter.js');
    const args = ['--test', '--test-concurrency=2', `--test-timeout=${timeoutMs[kind]}`, '--test-reporter=spec', '--test-reporter-destination=stdout', `--test-reporter=${reporter}`, '--test-reporter-destination=stdout', ...tests];
    const r = spawnSync(process.execPath, args, { stdio: 'inherit', env: { ...process.env, SEDIMENT_TEST_COUNTS: countsFile } });
    const counts = existsSync(countsFile) ? (JSON.parse(readFileSync(countsFile, 'utf8')) as Record<string, FileCounts>) : {};
    return { status: r.status ?? 1, problems: emptyOrSkipped(tests, counts) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function main(): void {
  const args = process.argv.slice(2);
  let only: string | null = null;
  const files: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--only') {
      only = args[++i] ?? null;
      if (only === null || only === '') {
        console.error('--only needs a pattern (unit, or part of a path)');
        process.exit(2);
      }
    } else files.push(compiledTestPath(path.resolve(args[i]!)));
  }
  let tests: string[];
  try {
    tests = selectTests(files.length > 0 ? [] : findTests(here), files, only);
  } catch (e) {
    console.error(`runner: ${(e as Error).message}`);
    process.exit(2);
  }
  if (tests.some(isSlowTest)) {
    const missing = missingTools();
    if (missing.length > 0) {
      for (const m of missing) console.error(m);
      console.error('.ci/run installs all of them.');
      process.exit(2);
    }
  }
  console.log(`running ${tests.length} test files`);
  let status = 0;
  const problems: string[] = [];
  for (const kind of ['unit', 'slow'] as const) {
    const batch = tests.filter((t) => isSlowTest(t) === (kind === 'slow'));
    if (batch.length === 0) continue;
    const r = runNodeTest(batch, kind);
    if (r.status !== 0) status = r.status;
    problems.push(...r.problems);
  }
  if (problems.length > 0) {
    console.error(`\n${problems.length} test file(s) fail the run:\n${problems.map((p) => `  ${p}`).join('\n')}`);
    if (status === 0) status = 1;
  }
  process.exit(status);
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
