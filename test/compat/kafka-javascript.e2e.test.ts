// Issue 12 with the client that found it: the npm @confluentinc/kafka-javascript
// (built by test/compat/install.sh) bundles a librdkafka of 2.13 or later, whose
// all-topics Metadata request carries bytes after the body Kafka defines. The broker
// must answer it (as Kafka does, logging the bytes at debug) so that listTopics and a
// regex subscription work; this runs the matrix program on a few records against an
// in-process broker at debug level and checks both the answer and that the client
// really sent such bytes (otherwise the row would no longer cover the issue).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { startSedimentInProcess, type InProcessSediment } from '../support/sediment.js';
import { installPart } from './clients.js';
import { parseCompatSummary, programArgs } from './summary.js';
import { defaultBaseTimestamp } from '../clients/content.js';

const here = path.dirname(fileURLToPath(import.meta.url));

function run(args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString('utf8')));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('@confluentinc/kafka-javascript against Sediment (issue 12)', () => {
  let broker: InProcessSediment;
  let moduleDir: string;

  before(async () => {
    moduleDir = await installPart('kafka-javascript');
    broker = await startSedimentInProcess({ logLevel: 'debug' });
  });

  after(async () => {
    await broker?.close();
  });

  it('lists all topics and subscribes by regex although its Metadata requests carry trailing bytes', { timeout: 300_000 }, async () => {
    const r = await run([
      path.join(here, 'kafka-javascript', 'compat.js'),
      '--module-dir', moduleDir,
      ...programArgs({ bootstrap: broker.bootstrap, topic: 'kjs-issue12', group: 'kjs-issue12-group', count: 600, partitions: 3, codecs: ['none', 'zstd'], baseTimestamp: defaultBaseTimestamp(), timeoutMs: 120_000 }),
    ]);
    const summary = parseCompatSummary(r.stdout);
    assert.ok(summary !== null, `no summary (exit ${r.code}):\n${r.stdout.slice(-2000)}\n${r.stderr.slice(-2000)}`);
    assert.ok(summary.ok, `${summary.errorCount} errors:\n${summary.errors.join('\n')}`);
    assert.equal(r.code, 0);
    for (const name of ['listTopics', 'regexSubscribe']) assert.equal(summary.operations.find((op) => op.name === name)?.ok, true, name);

    const m = /librdkafka (\d+)\.(\d+)\.(\d+)/.exec(summary.clientVersion);
    assert.ok(m !== null, summary.clientVersion);
    const [major, minor] = [Number(m[1]), Number(m[2])];
    assert.ok(major > 2 || (major === 2 && minor >= 13), `librdkafka ${m[0]}: 2.13 or later expected`);

    const padded = broker.logs.lines.filter((l) => l['apiKey'] === 3 && typeof l['trailingBytes'] === 'number' && l['trailingBytes'] > 0);
    assert.ok(padded.length > 0, 'no Metadata request with trailing bytes was logged: the client no longer exercises issue 12');
    assert.deepEqual(broker.logs.problems, [], 'the broker logged warnings or errors');
  });
});
