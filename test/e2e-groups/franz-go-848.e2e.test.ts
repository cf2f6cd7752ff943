// franz-go's own KIP-848 support (kgo.ServerSideBalancer, v1.22.3 of
// test/compat/franz-go) against Sediment: the compat program, built from the
// repository's sources with --server-side-balancer, creates a topic, produces
// under every codec, consumes everything in a consumer-protocol group with
// commits, checks ListGroups' type and ConsumerGroupDescribe while it is a
// member, then the offsets and the lag.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { runProcess } from '../clients/common.js';
import { parseCompatSummary } from '../compat/summary.js';
import { assertNoBrokerErrors } from '../e2e/helpers.js';
import { startSediment, type SedimentProcess } from '../support/sediment.js';
import { repoRoot } from '../support/tools.js';

let broker: SedimentProcess;
let binDir: string;

before(async () => {
  binDir = mkdtempSync(path.join(os.tmpdir(), 'franz-go-848-'));
  // Offline: the modules come from the cache test/compat/install.sh filled (go.sum pinned).
  const built = spawnSync('go', ['build', '-o', path.join(binDir, 'compat-franz-go'), '.'], {
    cwd: path.join(repoRoot(), 'test', 'compat', 'franz-go'),
    env: { ...process.env, GOFLAGS: '-mod=mod', GOPROXY: 'off' },
    encoding: 'utf8',
    timeout: 600_000,
  });
  assert.equal(built.status, 0, `go build failed (run bash test/compat/install.sh franz-go first):\n${built.stderr}`);
  broker = await startSediment();
});

after(async () => {
  await broker?.close();
  if (binDir !== undefined) rmSync(binDir, { recursive: true, force: true });
});

test('franz-go with ServerSideBalancer consumes in a KIP-848 consumer group', { timeout: 600_000 }, async () => {
  const r = await runProcess(path.join(binDir, 'compat-franz-go'), [
    '--bootstrap', broker.bootstrap, '--topic', 'franz-848', '--group', 'g-franz-848', '--count', '5000', '--partitions', '3',
    '--timeout-ms', '120000', '--server-side-balancer',
  ], { timeoutMs: 300_000 });
  const summary = parseCompatSummary(r.stdout);
  assert.ok(summary !== null, `no summary:\n${r.stdout.slice(-2000)}\n${r.stderr.slice(-2000)}`);
  assert.deepEqual(summary.errors, []);
  assert.equal(summary.ok, true);
  const consume = summary.operations.find((o) => o.name === 'consumeGroup');
  assert.equal(consume?.ok, true, JSON.stringify(summary.operations));
  assertNoBrokerErrors(broker.logs);
});
