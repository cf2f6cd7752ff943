// `npm test`: finds the compiled test files and runs them with node:test.
// Before running, it checks the external tools the suites need and says exactly
// what is missing and how to get it, instead of letting a suite fail obscurely.
//   node dist/test/runner.js [--only unit|pattern] [files...]
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

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

interface ToolCheck {
  name: string;
  ok: () => boolean;
  fix: string;
}

function commandWorks(cmd: string, args: string[]): boolean {
  const r = spawnSync(cmd, args, { stdio: 'ignore', timeout: 20000 });
  return r.status === 0;
}

export const toolChecks: ToolCheck[] = [
  { name: 'kcat', ok: () => commandWorks('kcat', ['-V']), fix: 'apt-get install -y kcat' },
  {
    name: 'confluent-kafka-python under /usr/bin/python3',
    ok: () => commandWorks('/usr/bin/python3', ['-c', 'import confluent_kafka']),
    fix: 'apt-get install -y python3-confluent-kafka (Debian\'s module is seen by /usr/bin/python3 only)',
  },
];

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
    const missing = toolChecks.filter((c) => !c.ok());
    if (missing.length > 0) {
      for (const m of missing) console.error(`missing tool: ${m.name}. Install it with: ${m.fix}`);
      process.exit(2);
    }
  }
  console.log(`running ${tests.length} test files`);
  const r = spawnSync(process.execPath, ['--test', '--test-concurrency=2', '--test-reporter=spec', ...tests], { stdio: 'inherit' });
  process.exit(r.status ?? 1);
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
