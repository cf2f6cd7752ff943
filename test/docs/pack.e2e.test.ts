// `npm pack` yields a package whose `sediment` binary works after
// `npm install -g` of the tarball: packed from the repository's current build,
// installed into a temporary prefix (dependencies from the npm registry or the
// local npm cache), then run: --help, a cost report (its price sheets are data
// files that must be in the package), a zstd round trip through the installed
// native module, and a broker start and clean stop.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { repoRoot } from '../support/tools.js';

const root = repoRoot();
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

interface PackEntry {
  readonly filename: string;
  readonly files: ReadonlyArray<{ readonly path: string }>;
}

describe('npm pack + npm install -g', { timeout: 15 * 60_000 }, () => {
  let dir = '';
  let pack: PackEntry;
  let prefix = '';
  let bin = '';

  before(() => {
    assert.ok(
      existsSync(path.join(root, 'dist', 'broker', 'cli', 'sediment.js')),
      'no build to pack: run npm run build first (npm test does it)',
    );
    dir = mkdtempSync(path.join(tmpdir(), 'sediment-pack-'));
    const packed = spawnSync(npm, ['pack', '--json', '--pack-destination', dir], { cwd: root, encoding: 'utf8', timeout: 120_000 });
    assert.equal(packed.status, 0, `npm pack failed:\n${packed.stderr}`);
    const entries = JSON.parse(packed.stdout) as PackEntry[];
    assert.equal(entries.length, 1);
    pack = entries[0] as PackEntry;
    prefix = path.join(dir, 'prefix');
    const installed = spawnSync(
      npm,
      ['install', '-g', '--prefix', prefix, path.join(dir, pack.filename), '--no-audit', '--no-fund', '--prefer-offline', '--allow-scripts=zstd-napi'],
      { cwd: dir, encoding: 'utf8', timeout: 10 * 60_000 },
    );
    assert.equal(installed.status, 0, `npm install -g of the tarball failed:\n${installed.stderr}`);
    bin = path.join(prefix, 'bin', 'sediment');
  });

  after(() => {
    if (dir !== '') rmSync(dir, { recursive: true, force: true });
  });

  it('packs the compiled broker, remote-log and metadata modules, the price sheets and the docs, and no tests', () => {
    const files = new Set(pack.files.map((f) => f.path));
    for (const want of ['package.json', 'dist/broker/cli/sediment.js', 'dist/broker/cli/cost.js', 'dist/broker/cost/sheets/aws-us-east-1.json', 'dist/remote-log/remote-log-manager.js', 'dist/metadata/config-defs.js', 'docs/configuration.md']) {
      assert.ok(files.has(want), `${want} is not in the package`);
    }
    assert.ok(![...files].some((f) => f.startsWith('dist/test/')), 'tests are not shipped');
  });

  it('installs a sediment binary that prints its usage', () => {
    assert.ok(existsSync(bin), `${bin} was not created`);
    const r = spawnSync(bin, ['--help'], { encoding: 'utf8', timeout: 30_000 });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^usage: sediment <command>/);
    assert.match(r.stdout, /^ {2}start /m);
    assert.match(r.stdout, /^ {2}cost /m);
  });

  it('runs sediment cost with the shipped price sheets', () => {
    const r = spawnSync(bin, ['cost', '--ingress', '10MiB/s', '--retention', '30d', '--json'], { encoding: 'utf8', timeout: 30_000 });
    assert.equal(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout) as Array<{ scenario: string; total: number }>;
    assert.deepEqual(
      out.map((s) => s.scenario),
      ['no tiering', 'local 7d', 'local 1d', 'local 1h'],
    );
    assert.ok(out.every((s) => s.total > 0));
  });

  it('loads its native compression modules', () => {
    const mod = path.join(prefix, 'lib', 'node_modules', 'sediment', 'dist', 'broker', 'protocol', 'compression.js');
    const script = `const m = await import(${JSON.stringify(mod)});
const data = Buffer.from('sediment '.repeat(1000));
for (const t of ['zstd', 'lz4', 'snappy', 'gzip']) {
  const back = m.decompress(t, m.compress(t, data));
  if (!back.equals(data)) throw new Error(t + ' round trip differs');
}
console.log('ok');`;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 30_000 });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout.trim(), 'ok');
  });

  it('starts a broker and stops it cleanly on SIGTERM', async () => {
    const data = path.join(dir, 'data');
    const child = spawn(
      bin,
      ['start', '--override', 'listeners=PLAINTEXT://127.0.0.1:0', '--override', 'http.listeners=http://127.0.0.1:0', '--override', `log.dirs=${data}`],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    let err = '';
    child.stderr.setEncoding('utf8').on('data', (s: string) => (err += s));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const started = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), 60_000);
      child.stdout.setEncoding('utf8').on('data', (s: string) => {
        out += s;
        if (out.includes('"sediment broker started"')) {
          clearTimeout(timer);
          resolve(true);
        }
      });
      void exited.then(() => {
        clearTimeout(timer);
        resolve(false);
      });
    });
    if (!started) child.kill('SIGKILL');
    assert.ok(started, `the installed broker did not start:\n${out}\n${err}`);
    child.kill('SIGTERM');
    assert.equal(await exited, 0, `exit after SIGTERM:\n${err}`);
  });
});
