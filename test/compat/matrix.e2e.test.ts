// The compatibility matrix: every client in test/compat/clients.ts runs its
// program against one Sediment broker (a `sediment start` child process), and
// the results are written to docs/compatibility.md. A client that fails, or
// cannot be installed, fails its test with the reason.
//   SEDIMENT_COMPAT_COUNT=5000   fewer records (docs/compatibility.md is then left alone)
//   SEDIMENT_COMPAT_ONLY=java,kcat   a subset of clients (likewise)
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, afterEach, before, describe, test } from 'node:test';
import { defaultBaseTimestamp } from '../clients/content.js';
import { LogLevel, startSediment, type SedimentProcess } from '../support/sediment.js';
import { assertNoBrokerErrors } from '../e2e/helpers.js';
import { selectByEnv } from '../support/env-selection.js';
import { repoRoot } from '../support/tools.js';
import { clients } from './clients.js';
import { clientPassed, missingOperations, renderCompatibility, type ClientResult } from './report.js';

const defaultCount = 50_000;
const partitions = 3;
const count = Number(process.env['SEDIMENT_COMPAT_COUNT'] ?? defaultCount);
const selected = selectByEnv('SEDIMENT_COMPAT_ONLY', clients);
/** Per-client limit for consuming; the test's own timeout adds installs and start-up. */
const clientTimeoutMs = 240_000;

let broker: SedimentProcess;
let unexpectedExit: string | null = null;
const results: ClientResult[] = [];

describe('compatibility matrix', () => {
  before(async () => {
    broker = await startSediment();
    broker.onUnexpectedExit = (info, logs) => {
      unexpectedExit = `broker exited (${info.code ?? info.signal}):\n${logs.tail()}`;
    };
  });

  after(async () => {
    const warnings = broker?.logs.atLeast(LogLevel.warn) ?? [];
    await broker?.close();
    const lines = ['', `Compatibility matrix (${count} records per client):`];
    for (const r of results) lines.push(`  ${r.spec.id.padEnd(18)} ${clientPassed(r) ? 'pass' : 'FAIL'}  ${(r.wallMs / 1000).toFixed(1).padStart(6)} s  ${(r.summary?.operations ?? []).map((op) => `${op.name} ${op.ms} ms`).join(', ')}`);
    lines.push(`  total ${(results.reduce((s, r) => s + r.wallMs, 0) / 1000).toFixed(1)} s`);
    if (warnings.length > 0) lines.push(`  broker warnings: ${warnings.length}`, ...warnings.slice(0, 10).map((l) => `    ${JSON.stringify(l).slice(0, 400)}`));
    console.log(lines.join('\n'));
    if (count === defaultCount && selected.length === clients.length && results.length === clients.length) {
      writeFileSync(path.join(repoRoot(), 'docs', 'compatibility.md'), renderCompatibility({ count, partitions, results }));
    }
  });

  afterEach(() => {
    assert.equal(unexpectedExit, null);
    assertNoBrokerErrors(broker.logs);
  });

  for (const spec of selected) {
    test(`${spec.title}: ${count} records, ${spec.codecs.join('/')}, group, offsets, lag`, { timeout: clientTimeoutMs + 180_000 + (spec.installMs ?? 0) }, async () => {
      const t0 = performance.now();
      let result: ClientResult;
      try {
        const summary = await spec.run({
          bootstrap: broker.bootstrap,
          topic: `compat-${spec.id}`,
          group: `compat-${spec.id}-group`,
          count,
          partitions,
          codecs: spec.codecs,
          baseTimestamp: defaultBaseTimestamp(),
          timeoutMs: clientTimeoutMs,
        });
        result = { spec, summary, failure: null, wallMs: performance.now() - t0 };
      } catch (e) {
        result = { spec, summary: null, failure: e instanceof Error ? e.message : String(e), wallMs: performance.now() - t0 };
      }
      results.push(result);
      assert.equal(result.failure, null, `${spec.title} could not run: ${result.failure}`);
      const s = result.summary!;
      const failedOps = s.operations.filter((op) => !op.ok).map((op) => op.name);
      assert.ok(s.ok, `${spec.title} ${s.clientVersion}: failed ${failedOps.join(', ')}; ${s.errorCount} errors:\n${s.errors.join('\n')}`);
      assert.deepEqual(missingOperations(result), [], `${spec.title}: declared operations not reported (the program stopped before them)`);
      assert.ok(clientPassed(result));
    });
  }
});
