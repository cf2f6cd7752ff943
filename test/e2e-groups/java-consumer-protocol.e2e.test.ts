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
import { compileGroupMember, JavaMember } from './java-member.js';
import {
  assignments,
  ContinuousProducer,
  eventually,
  ownershipProblem,
  ProcessedLedger,
  range,
  Report,
  waitCommittedToEnd,
  withAdmin,
} from './support.js';

const topic = 'java-consumer-protocol';
const group = 'g-java-consumer-protocol';
const sessionTimeoutMs = 6000;
let partitions = 6;
let broker: SedimentProcess;
let classDir: string;
const ledger = new ProcessedLedger();
const report = new Report();
let producer: ContinuousProducer | null = null;
const members: JavaMember[] = [];
/** Monotonic time (ns) each killed member died: its partitions are free from then on. */
const killedAt = new Map<JavaMember, bigint>();

function start(name: string): JavaMember {
  const m = new JavaMember({ classDir, bootstrap: broker.bootstrap, topic, group, sessionTimeoutMs, ledger, name, protocol: 'consumer' });
  members.push(m);
  return m;
}

function diagnostics(): string {
  const coordinator = broker.logs.lines.filter((l) => l['component'] === 'group-coordinator').map((l) => JSON.stringify(l));
  return ['--- coordinator log:', ...coordinator.slice(-30), ...members.filter((m) => m.proc.alive).map((m) => m.proc.diagnostics())].join('\n');
}

/** Waits for a Stable group of `live` whose members' own views match the coordinator's. */
async function settle(step: string, live: readonly JavaMember[]): Promise<void> {
  const t = Date.now();
  let last = '';
  await eventually(`the group to settle after: ${step}`, async () => {
    for (const m of live) if (!m.proc.alive) throw new Error(`${m.name} exited:\n${m.proc.diagnostics()}`);
    const g = await withAdmin(broker.bootstrap, (a) => a.describeGroup(group));
    const owned = assignments(g, topic);
    last = `${g.state} ${JSON.stringify([...owned])}; members say ${JSON.stringify(live.map((m) => [m.status?.['memberId'], m.partitions]))}`;
    if (g.state !== 'Stable' || g.members.length !== live.length || ownershipProblem(owned, partitions) !== null) return false;
    if (new Set(live.map((m) => m.status?.['gen'])).size !== 1) return false;
    return live.every((m) => {
      const id = m.status?.['memberId'];
      return typeof id === 'string' && JSON.stringify(owned.get(id)) === JSON.stringify(m.partitions);
    });
  }, 120_000, () => `${last}\n${diagnostics()}`);
  for (const m of members) assert.deepEqual(m.errors, [], `${m.name} failed`);
  report.add(`${step.padEnd(36)} settled in ${String(Date.now() - t).padStart(5)} ms: ${live.map((m) => `${m.name}=[${m.partitions.join(',')}]`).join(' ')}`);
}

/**
 * Replays every member's callbacks (and deaths) in monotonic time order: no
 * partition ever has two owners. Cooperative callbacks carry only the change:
 * assigned = partitions added, revoked = partitions taken away.
 */
function checkNeverTwoOwners(): number {
  type Step = { t: bigint; member: JavaMember; kind: 'assigned' | 'revoked' | 'lost' | 'died'; partitions: number[] };
  const steps: Step[] = [];
  for (const m of members) {
    // Every callback, those of close() included: a stopping member revokes before it leaves.
    for (const e of m.callbacks) steps.push({ t: BigInt(String(e['t'])), member: m, kind: e.ev as Step['kind'], partitions: e['partitions'] as number[] });
    const died = killedAt.get(m);
    if (died !== undefined) steps.push({ t: died, member: m, kind: 'died', partitions: [] });
  }
  steps.sort((a, b) => (a.t < b.t ? -1 : a.t > b.t ? 1 : 0));
  const owner = new Map<number, JavaMember>();
  const t0 = steps[0]?.t ?? 0n;
  const timeline = (): string =>
    steps.map((s) => `${String((s.t - t0) / 1_000_000n).padStart(7)} ms ${s.member.name} ${s.kind} [${s.partitions.join(',')}]`).join('\n');
  for (const s of steps) {
    if (s.kind === 'assigned') {
      for (const p of s.partitions) {
        const o = owner.get(p);
        assert.ok(o === undefined || o === s.member, `partition ${p} assigned to ${s.member.name} while ${o?.name} still owned it; callbacks:\n${timeline()}`);
        owner.set(p, s.member);
      }
    } else if (s.kind === 'died') {
      for (const [p, o] of [...owner]) if (o === s.member) owner.delete(p);
    } else {
      for (const p of s.partitions) if (owner.get(p) === s.member) owner.delete(p);
    }
  }
  return steps.length;
}

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
  await createTopic(broker.bootstrap, topic, partitions);
  producer = new ContinuousProducer(broker.bootstrap, topic, { keys: 900, batch: 20, pauseMs: 10 });
  await producer.start();
});

after(async () => {
  await producer?.stop().catch(() => undefined);
  for (const m of members) if (m.proc.alive) await m.proc.kill();
  await broker?.close();
  if (classDir !== undefined) rmSync(classDir, { recursive: true, force: true });
  report.print('Java members, KIP-848 consumer protocol (server-side uniform assignor):');
});

test('consumer protocol: kill, added partitions, leave, join; never two owners, nothing lost', { timeout: 900_000 }, async () => {
  const t0 = Date.now();
  const a = start('a');
  const b = start('b');
  const c = start('c');
  await settle('a, b, c joined', [a, b, c]);

  const before = new Map([a, b].map((m) => [m, m.partitions]));
  const t = process.hrtime.bigint();
  await c.proc.kill();
  killedAt.set(c, t);
  await settle('c killed (session timeout)', [a, b]);
  // The uniform assignor is sticky: the survivors kept what they had.
  for (const [m, ps] of before) for (const p of ps) assert.ok(m.partitions.includes(p), `${m.name} lost partition ${p} when c died`);

  await withAdmin(broker.bootstrap, async (adm) => {
    const r = await adm.createPartitions(topic, 9);
    assert.equal(r.errorCode, 0, r.errorMessage ?? '');
  });
  partitions = 9;
  await settle('partitions 6 -> 9', [a, b]);

  const d = start('d');
  await settle('d joined', [a, b, d]);
  await b.stop();
  await settle('b left (close)', [a, d]);
  const e = start('e');
  await settle('e joined', [a, d, e]);

  await producer?.stop();
  producer = null;
  const ends = await waitCommittedToEnd(broker.bootstrap, group, topic, partitions, 120_000, diagnostics);
  for (const m of [a, d, e]) await m.stop();
  const steps = checkNeverTwoOwners();
  for (const p of range(partitions)) assert.equal(ledger.firstGap(p, ends[p] as bigint), null, `partition ${p}: an offset never processed`);
  assert.deepEqual(ledger.conflicts, []);
  const s = ledger.summary(partitions);
  report.add(`${steps} ownership changes replayed: never two owners; ${ends.reduce((x, y) => x + y, 0n)} records over ${partitions} partitions, ${s.reduce((x, y) => x + y.duplicates, 0)} redelivered; wall ${Date.now() - t0} ms`);
  assertNoBrokerErrors(broker.logs);
});
