// The layering rule (docs/architecture.md, .dependency-cruiser.cjs) checked on
// the source tree, and shown to fire: a fixture tree with one deliberate
// violation of each rule must fail the same check. Runs dependency-cruiser's
// CLI (as CI would) and reads its JSON report.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { repoRoot } from './support/tools.js';

const run = promisify(execFile);

interface Violation {
  readonly from: string;
  readonly to: string;
  readonly rule: { readonly name: string };
}

interface Report {
  readonly violations: readonly Violation[];
  readonly modules: number;
}

/** Cruises `dirs` under `cwd` with the project's rules (the JSON reporter exits 0 either way: the verdict is the violation list). */
async function cruise(cwd: string, dirs: readonly string[]): Promise<Report> {
  const root = repoRoot();
  const bin = path.join(root, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs');
  if (!existsSync(bin)) throw new Error(`dependency-cruiser is not installed (${bin} is missing): run npm install (it is a devDependency)`);
  const args = [bin, '--config', path.join(root, '.dependency-cruiser.cjs'), '--output-type', 'json', ...dirs];
  const { stdout } = await run(process.execPath, args, { cwd, maxBuffer: 256 * 1024 * 1024 });
  const report = JSON.parse(stdout) as { summary: { violations: Violation[]; totalCruised: number } };
  return { violations: report.summary.violations, modules: report.summary.totalCruised };
}

const describeViolations = (vs: readonly Violation[]): string => vs.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`).join('\n');

describe('layering', () => {
  it('the source tree keeps the layering rule (base, metadata, remote-log, broker; no cycles)', async () => {
    const report = await cruise(repoRoot(), ['broker', 'remote-log', 'metadata']);
    assert.ok(report.modules > 300, `cruised only ${report.modules} modules: is the check looking at the sources?`);
    assert.deepEqual(report.violations, [], describeViolations(report.violations));
  });

  it('a deliberate violation of each rule fails the check, and allowed imports do not', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'sediment-layering-'));
    try {
      const files: Record<string, string> = {
        'tsconfig.json': JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true } }),
        'broker/common/clock.ts': 'export const now = (): number => 0;\n',
        'broker/protocol/codec.ts': "import { now } from '../common/clock.js';\nimport { open } from '../log/segment.js';\nexport const t = now() + open();\n",
        'broker/log/segment.ts': "import { now } from '../common/clock.js';\nexport const open = (): number => now();\n",
        // Allowed: remote-log on the base and metadata; broker on everything.
        'remote-log/reader.ts': "import { now } from '../broker/common/clock.js';\nimport { topics } from '../metadata/topics.js';\nexport const r = now() + topics;\n",
        'broker/wiring.ts': "import { r } from '../remote-log/reader.js';\nimport { open } from './log/segment.js';\nexport const w = r + open();\n",
        // Violations: remote-log reaching into broker/log, metadata into remote-log.
        'remote-log/copy.ts': "import { open } from '../broker/log/segment.js';\nexport const c = open();\n",
        'metadata/topics.ts': "export const topics = 1;\n",
        'metadata/store.ts': "import { r } from '../remote-log/reader.js';\nexport const s = r;\n",
        // A folder cycle: cost -> cli -> cost.
        'broker/cost/report.ts': "import { table } from '../cli/args.js';\nexport const report = table;\n",
        'broker/cli/args.ts': "export const table = 1;\n",
        'broker/cli/cost.ts': "import { report } from '../cost/report.js';\nexport const cost = report;\n",
        // A module cycle inside one folder.
        'broker/protocol/a.ts': "import { b } from './b.js';\nexport const a = (): number => b();\n",
        'broker/protocol/b.ts': "import { a } from './a.js';\nexport const b = (): number => a();\n",
      };
      for (const [name, text] of Object.entries(files)) {
        await mkdir(path.dirname(path.join(dir, name)), { recursive: true });
        await writeFile(path.join(dir, name), text);
      }
      const report = await cruise(dir, ['broker', 'remote-log', 'metadata']);
      const found = new Set(report.violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`));
      for (const expected of [
        'base-imports-only-base: broker/protocol/codec.ts -> broker/log/segment.ts',
        'remote-log-stands-on-base-and-metadata: remote-log/copy.ts -> broker/log/segment.ts',
        'metadata-stands-on-base: metadata/store.ts -> remote-log/reader.ts',
        'no-module-cycles: broker/protocol/a.ts -> broker/protocol/b.ts',
      ]) {
        assert.ok(found.has(expected), `expected ${expected} among:\n${describeViolations(report.violations)}`);
      }
      const folderCycles = report.violations.filter((v) => v.rule.name === 'no-folder-cycles').map((v) => `${v.from} -> ${v.to}`);
      assert.ok(folderCycles.includes('broker/cost -> broker/cli'), `expected the cost/cli folder cycle among:\n${describeViolations(report.violations)}`);
      // Nothing allowed is reported: neither remote-log/reader.ts nor broker/wiring.ts appears as a source.
      const allowed = report.violations.filter((v) => v.from === 'remote-log/reader.ts' || v.from === 'broker/wiring.ts');
      assert.deepEqual(allowed, [], describeViolations(allowed));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
