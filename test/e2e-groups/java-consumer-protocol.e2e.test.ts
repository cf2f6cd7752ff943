// KIP-848 consumer groups with Java consumers (group.protocol=consumer, the
// reference release) while a producer keeps writing: three members join, one
// is SIGKILLed (fenced at the broker's group.consumer.session.timeout.ms),
// partitions are added to the topic (the coordinator sees the new metadata on
// the next heartbeat), a member leaves with close() and a new one joins. After
// each change the group settles with every partition owned once; across the
// whole run no partition is ever owned by two members at once (ownership
// rebuilt from the members' assign/revoke callbacks on the shared monotonic
// clock: a partition moves only after its old owner revoked it, or died); at
// the end committed == log end and every offset was processed.
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

const topic = 'java-consumer-protocol';
const group = 'g-java-consumer-protocol';
const sessionTimeoutMs = 6000;
let broker: SedimentProcess;
let classDir: string;
let run: JavaGroupRun;
let producer: ContinuousProducer | null = null;

before(async () => {
  requireTools(['java', 'kafka', 'kafkajs']);
  classDir = compileGroupMember();
  broker = await startSediment({
    overrides: {
      // Short sessions so a killed member is fenced within seconds.
      'group.consumer.min.session.timeout.ms': String(sessionTimeoutMs),
      'group.consumer.session.timeout.ms': String(sessionTimeoutMs),
      'group.consumer.min.heartbeat.interval.ms': '500',
      'group.consumer.heartbeat.interval.ms': '500',
    },
  });
  run = new JavaGroupRun({ broker, classDir, topic, group, sessionTimeoutMs, partitions: 6, protocol: 'consumer' });
  await createTopic(broker.bootstrap, topic, run.partitions);
  producer = new ContinuousProducer(broker.bootstrap, topic, { keys: 900, batch: 20, pauseMs: 10 });
  await producer.start();
});

after(async () => {
  await producer?.stop().catch(() => undefined);
  await run?.killAll();
  await broker?.close();
  if (classDir !== undefined) rmSync(classDir, { recursive: true, force: true });
  run?.report.print('Java members, KIP-848 consumer protocol (server-side uniform assignor):');
});

test('consumer protocol: kill, added partitions, leave, join; never two owners, nothing lost', { timeout: 900_000 }, async () => {
  const t0 = Date.now();
  const a = run.start('a');
  const b = run.start('b');
  const c = run.start('c');
  await run.settle('a, b, c joined', [a, b, c]);

  const before = new Map([a, b].map((m) => [m, m.partitions]));
  await run.kill(c);
  await run.settle('c killed (session timeout)', [a, b]);
  // The uniform assignor is sticky: the survivors kept what they had.
  for (const [m, ps] of before) for (const p of ps) assert.ok(m.partitions.includes(p), `${m.name} lost partition ${p} when c died`);

  await withAdmin(broker.bootstrap, async (adm) => {
    const r = await adm.createPartitions(topic, 9);
    assert.equal(r.errorCode, 0, r.errorMessage ?? '');
  });
  run.partitions = 9;
  await run.settle('partitions 6 -> 9', [a, b]);

  const d = run.start('d');
  await run.settle('d joined', [a, b, d]);
  await b.stop();
  await run.settle('b left (close)', [a, d]);
  const e = run.start('e');
  await run.settle('e joined', [a, d, e]);

  await producer?.stop();
  producer = null;
  const ends = await waitCommittedToEnd(broker.bootstrap, group, topic, run.partitions, 120_000, () => run.diagnostics());
  for (const m of [a, d, e]) await m.stop();
  const steps = run.checkNeverTwoOwners();
  for (const p of range(run.partitions)) assert.equal(run.ledger.firstGap(p, ends[p] as bigint), null, `partition ${p}: an offset never processed`);
  assert.deepEqual(run.ledger.conflicts, []);
  const s = run.ledger.summary(run.partitions);
  run.report.add(`${steps} ownership changes replayed: never two owners; ${ends.reduce((x, y) => x + y, 0n)} records over ${run.partitions} partitions, ${s.reduce((x, y) => x + y.duplicates, 0)} redelivered; wall ${Date.now() - t0} ms`);
  assertNoBrokerErrors(broker.logs);
});
