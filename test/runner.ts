// `npm test`: finds the compiled test files and runs them with node:test.
// Before running, it checks the external tools the suites need and says exactly
// what is missing and how to get it, instead of letting a suite fail obscurely.
//   node dist/test/runner.js [--only unit|pattern] [files...]
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
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

function main(): void {
  const args = process.argv.slice(2);
  let only: string | null = null;
  const files: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--only') only = args[++i] ?? null;
    else files.push(args[i]!);
  }
  let tests = files.length > 0 ? files.map((f) => path.resolve(f)) : findTests(here);
  if (only !== null) tests = tests.filter((t) => (only === 'unit' ? !/\.(it|e2e)\.test\.js$/.test(t) : t.includes(only!)));
  if (only !== 'unit') {
    const missing = missingTools();
    if (missing.length > 0) {
      for (const m of missing) console.error(m);
      console.error('.ci/run installs all of them.');
      process.exit(2);
    }
  }
  console.log(`running ${tests.length} test files`);
  const r = spawnSync(process.execPath, ['--test', '--test-concurrency=2', '--test-reporter=spec', ...tests], { stdio: 'inherit' });
  process.exit(r.status ?? 1);
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
