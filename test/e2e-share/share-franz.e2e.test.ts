// franz-go's own share-group consumer (kgo.ShareGroup, v1.22.3: ShareFetch and
// ShareAcknowledge v2) against a Sediment child process, through the program in
// franz-go/ (built here with `go build`; the modules are those test/compat/install.sh
// downloads for test/compat/franz-go). Every record once, renewed (AckRenew)
// then accepted; a second run of the group gets only what was produced since.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { LogLevel, startSediment, type SedimentProcess } from '../support/sediment.js';
import { repoRoot } from '../support/tools.js';
import { runProcess } from '../clients/common.js';
import { createAndProduce } from './support.js';
import { Kafka, logLevel, Partitioners } from 'kafkajs';

let broker: SedimentProcess;
let dir: string;
let bin: string;

before(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'sediment-share-franz-'));
  bin = path.join(dir, 'share-franz');
  const src = path.join(repoRoot(), 'test', 'e2e-share', 'franz-go');
  const r = spawnSync('go', ['build', '-o', bin, '.'], { cwd: src, encoding: 'utf8', env: { ...process.env, GOFLAGS: '-mod=mod', GOTOOLCHAIN: 'local' } });
  assert.equal(r.status, 0, `go build (Go 1.26+ and the franz-go modules: bash test/compat/install.sh franz-go):\n${r.stderr}`);
  broker = await startSediment();
});

after(async () => {
  await broker?.close();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

interface Rec { p: number; o: number; v: string; dc: number }

async function run(group: string, topic: string, count: number, mode: 'accept' | 'renew'): Promise<Rec[]> {
  const r = await runProcess(bin, [broker.bootstrap, group, topic, String(count), mode], { timeoutMs: 240_000 });
  assert.equal(r.code, 0, `share-franz exited ${r.code}:\n${r.stdout.slice(-3000)}\n${r.stderr.slice(-3000)}`);
  const events = r.stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
  assert.deepEqual(events.filter((e) => e['ev'] === 'fetch-error'), []);
  return events.filter((e) => e['ev'] === 'rec').map((e) => ({ p: Number(e['p']), o: Number(e['o']), v: String(e['v']), dc: Number(e['dc']) }));
}

test('franz-go share consumer: every record once (renewed, then accepted); the next run only gets new records', { timeout: 400_000 }, async () => {
  const topic = 'share-franz';
  const values = Array.from({ length: 100 }, (_, i) => `franz-${i}`);
  await createAndProduce(broker.bootstrap, topic, 2, values);
  const first = await run('g-franz', topic, values.length, 'renew');
  assert.deepEqual(first.map((r) => r.v).sort(), [...values].sort(), 'every record, none twice');
  // A record is delivered again only if its lock ran out in the client's prefetch buffer (a stalled machine): then kgo drops the stale copy.
  assert.ok(first.every((r) => r.dc >= 1), 'delivery counts come with the records');
  const kafka = new Kafka({ clientId: 'share-franz-e2e', brokers: [broker.bootstrap], logLevel: logLevel.NOTHING });
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  const more = Array.from({ length: 10 }, (_, i) => `franz-more-${i}`);
  await producer.send({ topic, messages: more.map((value, i) => ({ value, partition: i % 2 })) });
  await producer.disconnect();
  const second = await run('g-franz', topic, more.length, 'accept');
  assert.deepEqual(second.map((r) => r.v).sort(), [...more].sort(), 'accepted records are not delivered again');
  const errors = broker.logs.atLeast(LogLevel.error);
  assert.equal(errors.length, 0, errors.map((l) => JSON.stringify(l)).join('\n'));
});
