// The Java client (kafka-clients, the reference release, classic protocol) with
// CooperativeStickyAssignor and static membership: three members consume a
// six-partition topic to the end with commits; then each is restarted in turn
// (closed without LeaveGroup, started again with the same group.instance.id)
// while records keep arriving. The restarts cause no rebalance: every member
// keeps the generation id it had (the clients' groupMetadata()), the others see
// no revocation or assignment, the restarted member gets its old partitions
// back in the same generation, the coordinator stays Stable and logs no
// completed rebalance, and DescribeGroups shows the same instances owning the
// same partitions (the restarted one under a new member id).
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
  eventually,
  JsonLineProcess,
  ownershipProblem,
  ProcessedLedger,
  produceKeyed,
  range,
  Report,
  waitCommittedToEnd,
  withAdmin,
} from './support.js';

const topic = 'java-static';
const group = 'g-java-static';
const partitions = 6;
const sessionTimeoutMs = 30_000;
const instances = ['s-1', 's-2', 's-3'];

let broker: SedimentProcess;
let classDir: string;
const ledger = new ProcessedLedger();
const report = new Report();
let produced = 0;

const running = new Map<string, JavaMember>();
const all: JavaMember[] = [];

function startMember(instanceId: string): JavaMember {
  const m = new JavaMember({ classDir, bootstrap: broker.bootstrap, topic, group, instanceId, sessionTimeoutMs, ledger });
  running.set(instanceId, m);
  all.push(m);
  return m;
}

async function stopMember(m: JavaMember): Promise<void> {
  await m.stop();
  running.delete(m.name);
}

async function produce(count: number): Promise<void> {
  await produceKeyed(broker.bootstrap, topic, count, { prefix: 'j', first: produced });
  produced += count;
}

const sortedJson = (ps: readonly number[]): string => JSON.stringify([...ps].sort((a, b) => a - b));

/** Waits for a Stable group of the running members whose own view (status) matches the coordinator's. */
async function stableGroup(what: string): Promise<Map<string, { memberId: string; partitions: number[] }>> {
  let last = '';
  let out = new Map<string, { memberId: string; partitions: number[] }>();
  await eventually(what, async () => {
    for (const m of running.values()) if (!m.proc.alive) throw new Error(`${m.name} exited while waiting for ${what}:\n${m.proc.diagnostics()}`);
    const g = await withAdmin(broker.bootstrap, (a) => a.describeGroup(group));
    const owned = assignments(g, topic);
    last = `${g.state} ${JSON.stringify(g.members.map((m) => [m.groupInstanceId, m.memberId, owned.get(m.memberId)]))}; clients ${JSON.stringify([...running.values()].map((m) => m.status))}`;
    if (g.state !== 'Stable' || g.members.length !== running.size || ownershipProblem(owned, partitions) !== null) return false;
    // Status lines come every 500 ms: wait until every member reports the same generation.
    if (new Set([...running.values()].map((m) => m.status?.['gen'])).size !== 1) return false;
    const next = new Map<string, { memberId: string; partitions: number[] }>();
    for (const gm of g.members) {
      const m = gm.groupInstanceId === null ? undefined : running.get(gm.groupInstanceId);
      const ps = owned.get(gm.memberId) ?? [];
      if (m === undefined || m.status === null || m.status['memberId'] !== gm.memberId || sortedJson(m.status['partitions'] as number[]) !== sortedJson(ps)) return false;
      next.set(m.name, { memberId: gm.memberId, partitions: ps });
    }
    out = next;
    return true;
  }, 120_000, () => `${last}\n${diagnostics()}`);
  for (const m of all) assert.deepEqual(m.errors, [], `${m.name} failed`);
  return out;
}

const consumedToEnd = (): Promise<bigint[]> => waitCommittedToEnd(broker.bootstrap, group, topic, partitions, 120_000, diagnostics);

/**
 * Members started before the rolling restart saw no callback since `callbacksAt`;
 * restarted ones were assigned exactly once, in `generation`, and saw nothing else.
 */
function checkNoRebalanceCallbacks(generation: number, callbacksAt: ReadonlyMap<string, number>): void {
  for (const m of all) {
    const original = callbacksAt.has(m.name) && all.indexOf(m) < instances.length;
    const live = m.callbacks.slice(0, m.callbacksBeforeStop ?? m.callbacks.length);
    if (original) assert.deepEqual(live.slice(callbacksAt.get(m.name)), [], `${m.name} saw rebalance callbacks during the rolling restart`);
    else assert.deepEqual(live.map((e) => [e.ev, e['gen']]), [['assigned', generation]], `restarted ${m.name}: callbacks`);
  }
}

/** The coordinator's log lines and the members' logs, for failure messages. */
function diagnostics(): string {
  const coordinator = broker.logs.lines.filter((l) => l['component'] === 'group-coordinator').map((l) => JSON.stringify(l));
  return ['--- coordinator log:', ...coordinator.slice(-40), ...all.map((m) => m.proc.diagnostics())].join('\n');
}

const rebalanceLines = (): number =>
  [...broker.previousLogs, broker.logs].flatMap((l) => l.lines).filter((l) => l.msg === 'group rebalance completed' && l['groupId'] === group).length;

before(async () => {
  requireTools(['java', 'kafka', 'kafkajs']);
  classDir = compileGroupMember();
  broker = await startSediment();
  await createTopic(broker.bootstrap, topic, partitions);
});

after(async () => {
  for (const m of running.values()) await m.proc.kill();
  await broker?.close();
  if (classDir !== undefined) rmSync(classDir, { recursive: true, force: true });
  report.print('Java static members, CooperativeStickyAssignor:');
});

test('Java static members (cooperative-sticky): consume to the end; a rolling restart causes no rebalance', { timeout: 600_000 }, async () => {
  const t0 = Date.now();
  await produce(6000);
  for (const id of instances) startMember(id);
  const initial = await stableGroup('three static members to form a Stable group');
  report.add(`stable with 3 members after ${Date.now() - t0} ms: ${[...initial].map(([id, a]) => `${id}=[${a.partitions.join(',')}]`).join(' ')}`);
  await consumedToEnd();

  const gens = new Set([...running.values()].map((m) => Number(m.status?.['gen'])));
  assert.equal(gens.size, 1, `members disagree on the generation: ${[...gens].join(',')}`);
  const generation = [...gens][0] as number;
  const rebalancesBefore = rebalanceLines();
  assert.ok(rebalancesBefore >= 1);
  // Callback counts of the members that are not restarted at a given moment.
  const callbacksAt = new Map([...running.values()].map((m) => [m.name, m.callbacks.length]));

  for (const id of instances) {
    const old = running.get(id) as JavaMember;
    const before = initial.get(id) as { memberId: string; partitions: number[] };
    await produce(1000);
    const tStop = Date.now();
    await stopMember(old);
    // The coordinator keeps the closed static member (no LeaveGroup): still Stable, still three.
    const g = await withAdmin(broker.bootstrap, (a) => a.describeGroup(group));
    assert.equal(g.state, 'Stable');
    assert.deepEqual(g.members.map((m) => m.groupInstanceId).sort(), instances);
    const restarted = startMember(id);
    const first = await restarted.proc.waitFor(`${id} restarted: its assignment`, (e) => e.ev === 'assigned', 120_000);
    assert.equal(first['gen'], generation, `${id} rejoined in generation ${String(first['gen'])}, not ${generation}`);
    assert.equal(sortedJson(first['partitions'] as number[]), sortedJson(before.partitions), `${id} got other partitions back`);
    assert.notEqual(first['memberId'], before.memberId, 'a restarted static member gets a new member id');
    const now = await stableGroup(`${id} restarted: the group Stable again`);
    assert.deepEqual(now.get(id)?.partitions, before.partitions);
    report.add(`${id} restarted: same generation ${generation}, partitions [${before.partitions.join(',')}] back after ${Date.now() - tStop} ms`);
    checkNoRebalanceCallbacks(generation, callbacksAt);
  }

  await produce(1000);
  const ends = await consumedToEnd();
  assert.equal(rebalanceLines(), rebalancesBefore, 'the coordinator completed a rebalance during the rolling restart');
  checkNoRebalanceCallbacks(generation, callbacksAt);
  for (const m of running.values()) {
    assert.deepEqual([...m.gens], [generation], `${m.name} saw another generation`);
    assert.equal(Number(m.status?.['gen']), generation);
  }
  for (const p of range(partitions)) assert.equal(ledger.firstGap(p, ends[p] as bigint), null, `partition ${p}: offset never processed`);
  assert.deepEqual(ledger.conflicts, []);
  assert.equal(ends.reduce((a, b) => a + b, 0n), BigInt(produced));
  for (const s of ledger.summary(partitions)) report.add(`partition ${s.partition}: log end ${ends[s.partition]}, ${s.distinct} distinct offsets processed, ${s.duplicates} redelivered`);
  report.add(`${produced} records; wall ${Date.now() - t0} ms`);

  for (const m of [...running.values()]) await stopMember(m);
  assertNoBrokerErrors(broker.logs);
});

test('a second process with the same group.instance.id fences the first (FENCED_INSTANCE_ID), no rebalance', { timeout: 300_000 }, async () => {
  const fenceGroup = 'g-java-fence';
  const fenceLedger = new ProcessedLedger();
  const opts = { classDir, bootstrap: broker.bootstrap, topic, group: fenceGroup, instanceId: 'f-1', sessionTimeoutMs, ledger: fenceLedger };
  const first = new JavaMember({ ...opts, name: 'f-1 (first)' });
  const assigned = await first.proc.waitFor('the first f-1 process: its assignment', (e) => e.ev === 'assigned', 120_000);
  const rebalances = (): number => broker.logs.lines.filter((l) => l.msg === 'group rebalance completed' && l['groupId'] === fenceGroup).length;
  const before = rebalances();
  const second = new JavaMember({ ...opts, name: 'f-1 (second)' });
  try {
    const taken = await second.proc.waitFor('the second f-1 process: its assignment', (e) => e.ev === 'assigned', 120_000);
    // The newcomer replaces the known instance: same generation, same partitions, new member id.
    assert.equal(taken['gen'], assigned['gen']);
    assert.deepEqual(taken['partitions'], assigned['partitions']);
    assert.notEqual(taken['memberId'], assigned['memberId']);
    // The first process learns it was fenced at its next heartbeat, fetch or commit.
    const exit = await first.proc.waitExit(60_000);
    assert.equal(exit.code, 1, first.proc.diagnostics());
    assert.match(first.errors.join('\n'), /FencedInstanceIdException/);
    const g = await withAdmin(broker.bootstrap, (a) => a.describeGroup(fenceGroup));
    assert.deepEqual([g.state, g.members.map((m) => [m.groupInstanceId, m.memberId])], ['Stable', [['f-1', taken['memberId']]]]);
    assert.equal(rebalances(), before, 'replacing the static member rebalanced the group');
    await second.stop();
  } finally {
    for (const p of [first.proc, second.proc]) if (p.alive) await p.kill();
  }
  report.add(`fencing: the second f-1 took generation ${String(assigned['gen'])} and partitions [${(assigned['partitions'] as number[]).join(',')}]; the first failed with FencedInstanceIdException`);
});
