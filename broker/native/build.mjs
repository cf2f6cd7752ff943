// Builds the sendfile addon (sendfile.c) with node-gyp, against Node's own
// headers (nodedir: npm_config_nodedir, else /usr, where Debian's and
// NodeSource's nodejs put include/node), so nothing is downloaded. Skipped when
// the addon is newer than its source. Without a C toolchain the broker still
// works (it reads record bytes into buffers instead), so a failed build only
// warns, unless SEDIMENT_REQUIRE_SENDFILE=1 (CI) makes it an error.
import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const dir = path.dirname(fileURLToPath(import.meta.url));
const out = path.join(dir, 'build', 'Release', 'sendfile.node');
const sources = ['sendfile.c', 'binding.gyp'].map((f) => path.join(dir, f));
const required = process.env.SEDIMENT_REQUIRE_SENDFILE === '1';

if (process.platform !== 'linux') {
  console.log('build:native: sendfile is Linux only; record bytes are read into buffers');
  process.exit(0);
}
if (existsSync(out) && sources.every((s) => statSync(s).mtimeMs <= statSync(out).mtimeMs)) process.exit(0);

const nodedir = process.env.npm_config_nodedir ?? '/usr';
// npm puts its own node-gyp on the PATH of scripts; outside npm, take the one next to npm.
const npmGyp = path.join(path.dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js');
const gyp = existsSync(npmGyp) ? [process.execPath, npmGyp] : ['node-gyp'];
const r = spawnSync(gyp[0], [...gyp.slice(1), 'rebuild', `--nodedir=${nodedir}`], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
if (r.status === 0) {
  console.log(`build:native: built ${path.relative(process.cwd(), out)}`);
  process.exit(0);
}
const why = `${r.error?.message ?? ''}${r.stderr ?? ''}`.trim().split('\n').slice(-8).join('\n');
console.error(`build:native: the sendfile addon did not build (record bytes will be read into buffers instead):\n${why}`);
process.exit(required ? 1 : 0);
