// OffsetCommit v10 / OffsetFetch v10 (topics named by id, KIP-848) with the
// Java consumer of the reference release: with group.protocol=consumer its
// CommitRequestManager builds both requests by topic id whenever the broker
// advertises v10 (the classic consumer stays on names). A first member
// consumes and commits everything, a second one in the same group starts from
// the committed offsets (its OffsetFetch by id), and the broker's
// sediment_requests_total shows the v10 requests were the ones served.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { createTopic } from '../clients/common.js';
import { assertNoBrokerErrors } from '../e2e/helpers.js';
import { startSediment, type SedimentProcess } from '../support/sediment.js';
import { requireTools } from '../support/tools.js';
import { compileGroupMember, JavaMember } from './java-member.js';
import { ProcessedLedger, produceKeyed, waitCommittedToEnd } from './support.js';

const topic = 'java-offset-topic-ids';
const group = 'g-java-offset-topic-ids';
const partitions = 3;
let broker: SedimentProcess;
let classDir: string;
const members: JavaMember[] = [];

before(async () => {
  requireTools(['java', 'kafka', 'kafkajs']);
  classDir = compileGroupMember();
  broker = await startSediment({ overrides: { 'group.consumer.min.heartbeat.interval.ms': '500', 'group.consumer.heartbeat.interval.ms': '500' } });
  await createTopic(broker.bootstrap, topic, partitions);
});

after(async () => {
  for (const m of members) m.proc.kill();
  await broker?.close();
  if (classDir !== undefined) rmSync(classDir, { recursive: true, force: true });
});

/** sediment_requests_total of one API at one version, from the broker's /metrics. */
async function requestsServed(api: string, version: number): Promise<number> {
  const started = broker.logs.lines.find((l) => l.msg === 'sediment broker started');
  const port = started?.['httpPort'];
  assert.equal(typeof port, 'number', 'the start line carries the HTTP port');
  const text = await (await fetch(`http://127.0.0.1:${String(port)}/metrics`)).text();
  const m = new RegExp(`^sediment_requests_total\\{api="${api}",version="${String(version)}"\\} (\\d+)$`, 'm').exec(text);
  return m === null ? 0 : Number(m[1]);
}

function member(name: string, ledger: ProcessedLedger): JavaMember {
  const m = new JavaMember({ classDir, bootstrap: broker.bootstrap, topic, group, sessionTimeoutMs: 45_000, ledger, name, protocol: 'consumer' });
  members.push(m);
  return m;
}

test('a group.protocol=consumer Java consumer commits and resumes by topic id (v10)', { timeout: 300_000 }, async () => {
  await produceKeyed(broker.bootstrap, topic, 300);
  const first = member('a', new ProcessedLedger());
  const ends = await waitCommittedToEnd(broker.bootstrap, group, topic, partitions, 120_000, () => first.proc.diagnostics());
  assert.ok((await requestsServed('OffsetCommit', 10)) > 0, 'the commits came as OffsetCommit v10');
  assert.equal(await requestsServed('OffsetCommit', 9), 0, 'no commit by name');
  await first.stop();

  await produceKeyed(broker.bootstrap, topic, 60, { first: 300 });
  const ledger = new ProcessedLedger();
  const second = member('b', ledger);
  await waitCommittedToEnd(broker.bootstrap, group, topic, partitions, 120_000, () => second.proc.diagnostics());
  assert.ok((await requestsServed('OffsetFetch', 10)) > 0, 'the committed offsets were fetched as OffsetFetch v10');
  // Resumed from the committed offsets: only the 60 new records, none the first member committed.
  const expected = new Set(Array.from({ length: 60 }, (_, i) => `v-${300 + i}`));
  assert.deepEqual([...ledger.allValues()].sort(), [...expected].sort());
  await second.stop();
  assertNoBrokerErrors(broker.logs);
});
