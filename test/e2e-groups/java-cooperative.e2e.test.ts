// Incremental (cooperative-sticky) rebalances of dynamic Java members while a
// producer keeps writing: three members join, one is SIGKILLed (dropped by the
// session timeout), partitions are added to the topic (the members notice and
// rejoin), a new member joins. After each change the group settles with every
// partition owned once; across the whole run no partition is ever owned by two
// members at once (ownership rebuilt from the members' assign/revoke callbacks
// on the shared monotonic clock: a partition moves only after its old owner
// revoked it, or died); at the end committed == log end and every offset was
// processed.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { createTopic } from '../clients/common.js';
import { assertNoBrokerErrors } from '../e2e/helpers.js';
import { startSediment, type SedimentProcess } from '../support/sediment.js';
import { requireTools } from '../support/tools.js';
import { compileGroupMember } from './java-member.js';
import { JavaGroupRun } from './java-group-run.js';
import { ContinuousProducer, range, waitCommittedToEnd, withAdmin } from './support.js';

const topic = 'java-cooperative';
const group = 'g-java-cooperative';
const sessionTimeoutMs = 6000;
let broker: SedimentProcess;
let classDir: string;
let run: JavaGroupRun;
let producer: ContinuousProducer | null = null;

before(async () => {
  requireTools(['java', 'kafka', 'kafkajs']);
  classDir = compileGroupMember();
  broker = await startSediment();
  run = new JavaGroupRun({ broker, classDir, topic, group, sessionTimeoutMs, partitions: 6 });
  await createTopic(broker.bootstrap, topic, run.partitions);
  producer = new ContinuousProducer(broker.bootstrap, topic, { keys: 900, batch: 20, pauseMs: 10 });
  await producer.start();
});

after(async () => {
  await producer?.stop().catch(() => undefined);
  await run?.killAll();
  await broker?.close();
  if (classDir !== undefined) rmSync(classDir, { recursive: true, force: true });
  run?.report.print('Java dynamic members, cooperative-sticky rebalances:');
});

test('cooperative-sticky: kill, added partitions, join; never two owners, nothing lost', { timeout: 900_000 }, async () => {
  const t0 = Date.now();
  const a = run.start('a');
  const b = run.start('b');
  const c = run.start('c');
  await run.settle('a, b, c joined', [a, b, c]);

  const before = new Map([a, b].map((m) => [m, m.partitions]));
  await run.kill(c);
  await run.settle('c killed (session timeout)', [a, b]);
  // Sticky: the survivors kept what they had and took over c's partitions.
  for (const [m, ps] of before) for (const p of ps) assert.ok(m.partitions.includes(p), `${m.name} lost partition ${p} when c died`);

  await withAdmin(broker.bootstrap, async (adm) => {
    const r = await adm.createPartitions(topic, 9);
    assert.equal(r.errorCode, 0, r.errorMessage ?? '');
  });
  run.partitions = 9;
  await run.settle('partitions 6 -> 9', [a, b]);

  const d = run.start('d');
  await run.settle('d joined', [a, b, d]);

  await producer?.stop();
  producer = null;
  const ends = await waitCommittedToEnd(broker.bootstrap, group, topic, run.partitions, 120_000, () => run.diagnostics());
  for (const m of [a, b, d]) await m.stop();
  const steps = run.checkNeverTwoOwners();
  for (const p of range(run.partitions)) assert.equal(run.ledger.firstGap(p, ends[p] as bigint), null, `partition ${p}: an offset never processed`);
  assert.deepEqual(run.ledger.conflicts, []);
  const s = run.ledger.summary(run.partitions);
  run.report.add(`${steps} ownership changes replayed: never two owners; ${ends.reduce((x, y) => x + y, 0n)} records over ${run.partitions} partitions, ${s.reduce((x, y) => x + y.duplicates, 0)} redelivered; wall ${Date.now() - t0} ms`);
  assertNoBrokerErrors(broker.logs);
});
