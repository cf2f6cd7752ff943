// Moving a classic group to the consumer protocol (KIP-848) while a producer
// keeps writing, the way Sediment supports it today: the classic Java members
// (cooperative-sticky) stop, which leaves the group empty; Java members with
// group.protocol=consumer then join the same group id, which converts it to a
// consumer group with its committed offsets. They carry on from those
// offsets: at the end committed == log end, every offset was processed, and no
// partition ever had two owners. (The online, rolling migration, with classic
// and consumer-protocol members in one group: java-online-migration.e2e.test.ts.)
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { createTopic } from '../clients/common.js';
import { assertNoBrokerErrors } from '../e2e/helpers.js';
import { startSediment, type SedimentProcess } from '../support/sediment.js';
import { requireTools } from '../support/tools.js';
import { compileGroupMember, JavaMember } from './java-member.js';
import { assignments, ContinuousProducer, eventually, ownershipProblem, ProcessedLedger, range, Report, waitCommittedToEnd, withAdmin } from './support.js';

const topic = 'java-offline-migration';
const group = 'g-java-offline-migration';
const partitions = 6;
const sessionTimeoutMs = 6000;
let broker: SedimentProcess;
let classDir: string;
const ledger = new ProcessedLedger();
const report = new Report();
let producer: ContinuousProducer | null = null;
const members: JavaMember[] = [];

function start(name: string, protocol: 'classic' | 'consumer'): JavaMember {
  const m = new JavaMember({ classDir, bootstrap: broker.bootstrap, topic, group, sessionTimeoutMs, ledger, name, protocol });
  members.push(m);
  return m;
}

async function settle(step: string, live: readonly JavaMember[]): Promise<void> {
  const t = Date.now();
  let last = '';
  await eventually(`the group to settle after: ${step}`, async () => {
    for (const m of live) if (!m.proc.alive) throw new Error(`${m.name} exited:\n${m.proc.diagnostics()}`);
    const g = await withAdmin(broker.bootstrap, (a) => a.describeGroup(group));
    const owned = assignments(g, topic);
    last = `${g.state} ${JSON.stringify([...owned])}`;
    if (g.state !== 'Stable' || g.members.length !== live.length || ownershipProblem(owned, partitions) !== null) return false;
    return live.every((m) => JSON.stringify(owned.get(String(m.status?.['memberId']))) === JSON.stringify(m.partitions));
  }, 180_000, () => last);
  report.add(`${step.padEnd(40)} settled in ${String(Date.now() - t).padStart(6)} ms: ${live.map((m) => `${m.name}=[${m.partitions.join(',')}]`).join(' ')}`);
}

before(async () => {
  requireTools(['java', 'kafka', 'kafkajs']);
  classDir = compileGroupMember();
  broker = await startSediment({
    overrides: {
      'group.consumer.min.session.timeout.ms': String(sessionTimeoutMs),
      'group.consumer.session.timeout.ms': String(sessionTimeoutMs),
      'group.consumer.min.heartbeat.interval.ms': '500',
      'group.consumer.heartbeat.interval.ms': '500',
    },
  });
  await createTopic(broker.bootstrap, topic, partitions);
  producer = new ContinuousProducer(broker.bootstrap, topic, { keys: 900, batch: 20, pauseMs: 10 });
  await producer.start();
});

after(async () => {
  await producer?.stop().catch(() => undefined);
  for (const m of members) if (m.proc.alive) await m.proc.kill();
  await broker?.close();
  if (classDir !== undefined) rmSync(classDir, { recursive: true, force: true });
  report.print('Java group moved from the classic to the consumer protocol (offline):');
});

test('classic members stop, consumer-protocol members carry on from the committed offsets', { timeout: 900_000 }, async () => {
  const a = start('classic-a', 'classic');
  const b = start('classic-b', 'classic');
  await settle('classic a, b joined', [a, b]);
  await eventually('the classic members to commit', async () => a.gens.size > 0 && b.gens.size > 0, 60_000);
  await a.stop();
  await b.stop();
  const stoppedAt = process.hrtime.bigint();
  const listed = await withAdmin(broker.bootstrap, (adm) => adm.describeGroup(group));
  assert.equal(listed.state, 'Empty');
  const c = start('consumer-c', 'consumer');
  const d = start('consumer-d', 'consumer');
  await settle('consumer-protocol c, d joined', [c, d]);
  await producer?.stop();
  producer = null;
  const ends = await waitCommittedToEnd(broker.bootstrap, group, topic, partitions, 120_000, () => [c, d].map((m) => m.proc.diagnostics()).join('\n'));
  await c.stop();
  await d.stop();
  // The consumer-protocol members only got partitions after the classic ones had stopped.
  for (const m of [c, d]) {
    for (const e of m.callbacks) if (e.ev === 'assigned' && (e['partitions'] as number[]).length > 0) assert.ok(BigInt(String(e['t'])) > stoppedAt);
  }
  for (const p of range(partitions)) assert.equal(ledger.firstGap(p, ends[p] as bigint), null, `partition ${p}: an offset never processed`);
  assert.deepEqual(ledger.conflicts, []);
  const s = ledger.summary(partitions);
  report.add(`${ends.reduce((x, y) => x + y, 0n)} records over ${partitions} partitions, ${s.reduce((x, y) => x + y.duplicates, 0)} redelivered`);
  assertNoBrokerErrors(broker.logs);
});
