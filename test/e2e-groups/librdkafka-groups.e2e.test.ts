// librdkafka's group consumers against Sediment: two confluent-kafka-python
// static members and two `kcat -G` members each consume a six-partition topic
// to the end with commits (committed == log end, every offset processed, one
// owner per partition while Stable). The python members are then restarted one
// at a time (close without LeaveGroup, same group.instance.id): the coordinator
// completes no rebalance, each instance keeps its partitions, and the records
// produced meanwhile are consumed and committed.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { createTopic } from '../clients/common.js';
import { assertNoBrokerErrors } from '../e2e/helpers.js';
import { startSediment, type SedimentProcess } from '../support/sediment.js';
import { kcatPath, repoRoot, requireTools, systemPython } from '../support/tools.js';
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
  type JsonEvent,
} from './support.js';

const partitions = 6;
let broker: SedimentProcess;
const report = new Report();
const procs: JsonLineProcess[] = [];

before(async () => {
  requireTools(['python-confluent-kafka', 'kcat', 'kafkajs']);
  broker = await startSediment();
});

after(async () => {
  for (const p of procs) if (p.alive) await p.kill();
  await broker?.close();
  report.print('librdkafka groups (python static members, kcat -G):');
});

const rebalances = (group: string): number =>
  [...broker.previousLogs, broker.logs].flatMap((l) => l.lines).filter((l) => l.msg === 'group rebalance completed' && l['groupId'] === group).length;

/** Waits for a Stable group of `count` members giving every partition one owner; memberId -> partitions. */
async function stable(group: string, topic: string, count: number, extra: () => boolean = () => true): Promise<Map<string, { instance: string | null; partitions: number[] }>> {
  let last = '';
  let out = new Map<string, { instance: string | null; partitions: number[] }>();
  await eventually(`${group}: ${count} members Stable`, async () => {
    const g = await withAdmin(broker.bootstrap, (a) => a.describeGroup(group));
    const owned = assignments(g, topic);
    last = `${g.state} ${JSON.stringify(g.members.map((m) => [m.groupInstanceId, m.memberId, owned.get(m.memberId)]))}`;
    if (g.state !== 'Stable' || g.members.length !== count || ownershipProblem(owned, partitions) !== null || !extra()) return false;
    out = new Map(g.members.map((m) => [m.memberId, { instance: m.groupInstanceId, partitions: owned.get(m.memberId) ?? [] }]));
    return true;
  }, 120_000, () => `${last}\n${procs.filter((p) => p.alive).map((p) => p.diagnostics()).join('\n')}`);
  return out;
}

/** A python member process and the assignment it last reported. */
class PythonMember {
  assigned: number[] | null = null;
  readonly proc: JsonLineProcess;

  constructor(instance: string, args: readonly string[], ledger: ProcessedLedger) {
    this.proc = new JsonLineProcess(
      `python ${instance}`,
      systemPython,
      args,
      (e: JsonEvent) => {
        if (e.ev === 'rec') ledger.record(Number(e['p']), BigInt(Number(e['o'])), String(e['v']));
        else if (e.ev === 'assigned') this.assigned = e['partitions'] as number[];
      },
      (e) => e.ev !== 'rec' && e.ev !== 'commit',
    );
  }
}

function checkLedger(ledger: ProcessedLedger, ends: readonly bigint[], label: string): void {
  for (const p of range(partitions)) assert.equal(ledger.firstGap(p, ends[p] as bigint), null, `${label}: partition ${p} has an offset never processed`);
  assert.deepEqual(ledger.conflicts, [], `${label}: an offset delivered with two different values`);
}

test('confluent-kafka-python static members: consume to the end with commits; a rolling restart causes no rebalance', { timeout: 600_000 }, async () => {
  const t0 = Date.now();
  const topic = 'py-static';
  const group = 'g-py-static';
  await createTopic(broker.bootstrap, topic, partitions);
  await produceKeyed(broker.bootstrap, topic, 6000, { prefix: 'py' });
  const ledger = new ProcessedLedger();
  const script = path.join(repoRoot(), 'test', 'e2e-groups', 'python', 'group_consumer.py');
  const members = new Map<string, PythonMember>();
  const start = (instance: string): PythonMember => {
    const m = new PythonMember(instance, [script, '--bootstrap', broker.bootstrap, '--topic', topic, '--group', group, '--instance-id', instance, '--session-timeout-ms', '30000'], ledger);
    procs.push(m.proc);
    members.set(instance, m);
    return m;
  };
  const instances = ['py-1', 'py-2'];
  for (const i of instances) start(i);
  const clientsAgree = (): boolean => [...members.values()].every((m) => m.assigned !== null);
  const initial = await stable(group, topic, 2, clientsAgree);
  const byInstance = new Map([...initial.values()].map((v) => [v.instance, v.partitions]));
  assert.deepEqual([...byInstance.keys()].sort(), instances);
  for (const [instance, m] of members) assert.deepEqual(m.assigned, byInstance.get(instance), `${instance}: own view of its assignment`);
  let ends = await waitCommittedToEnd(broker.bootstrap, group, topic, partitions);
  report.add(`python: 2 static members consumed 6000 records to the end in ${Date.now() - t0} ms: ${[...byInstance].map(([i, ps]) => `${i}=[${ps.join(',')}]`).join(' ')}`);

  const rebalancesBefore = rebalances(group);
  let produced = 6000;
  for (const instance of instances) {
    await produceKeyed(broker.bootstrap, topic, 1000, { prefix: 'py', first: produced });
    produced += 1000;
    const old = members.get(instance)!;
    old.proc.send('stop');
    assert.deepEqual(await old.proc.waitExit(), { code: 0, signal: null }, old.proc.diagnostics());
    const restarted = start(instance);
    await restarted.proc.waitFor(`${instance} restarted: assignment`, (e) => e.ev === 'assigned', 120_000);
    assert.deepEqual(restarted.assigned, byInstance.get(instance), `${instance} got other partitions back`);
    const now = await stable(group, topic, 2);
    assert.deepEqual(new Map([...now.values()].map((v) => [v.instance, v.partitions])), byInstance);
    assert.equal(rebalances(group), rebalancesBefore, `the coordinator completed a rebalance while ${instance} restarted`);
  }
  await produceKeyed(broker.bootstrap, topic, 1000, { prefix: 'py', first: produced });
  produced += 1000;
  ends = await waitCommittedToEnd(broker.bootstrap, group, topic, partitions);
  assert.equal(rebalances(group), rebalancesBefore, 'the coordinator completed a rebalance during the rolling restart');
  assert.equal(ends.reduce((a, b) => a + b, 0n), BigInt(produced));
  checkLedger(ledger, ends, 'python');
  // The members that were never restarted saw no revocation: each process was assigned once.
  for (const m of members.values()) assert.deepEqual(m.proc.events.filter((e) => e.ev === 'revoked' || e.ev === 'lost' || e.ev === 'assigned').map((e) => e.ev), ['assigned']);
  for (const m of members.values()) {
    m.proc.send('stop');
    assert.equal((await m.proc.waitExit()).code, 0);
  }
  const s = ledger.summary(partitions);
  report.add(`python: rolling restart of 2 static members, no rebalance; ${produced} records, ${s.reduce((a, x) => a + x.duplicates, 0)} redelivered; wall ${Date.now() - t0} ms`);
  assertNoBrokerErrors(broker.logs);
});

test('kcat -G: two members consume to the end with commits', { timeout: 600_000 }, async () => {
  const t0 = Date.now();
  const topic = 'kcat-group';
  const group = 'g-kcat';
  await createTopic(broker.bootstrap, topic, partitions);
  await produceKeyed(broker.bootstrap, topic, 6000, { prefix: 'kc' });
  const ledger = new ProcessedLedger();
  const kcat = (name: string): JsonLineProcess => {
    const p = new JsonLineProcess(
      `kcat ${name}`,
      kcatPath,
      // -u: unbuffered output, so a record's line is out before its auto-committed offset could be.
      ['-b', broker.bootstrap, '-G', group, '-J', '-q', '-u', '-X', 'auto.offset.reset=earliest', '-X', 'auto.commit.interval.ms=200', '-X', 'session.timeout.ms=10000', '-X', `client.id=kcat-${name}`, topic],
      (e) => {
        if (typeof e['partition'] === 'number') ledger.record(e['partition'], BigInt(Number(e['offset'])), String(e['payload']));
      },
      () => false,
    );
    procs.push(p);
    return p;
  };
  const a = kcat('a');
  const b = kcat('b');
  const owners = await stable(group, topic, 2);
  report.add(`kcat: Stable with 2 members after ${Date.now() - t0} ms: ${[...owners.values()].map((v) => `[${v.partitions.join(',')}]`).join(' ')}`);
  let ends = await waitCommittedToEnd(broker.bootstrap, group, topic, partitions);
  await produceKeyed(broker.bootstrap, topic, 2000, { prefix: 'kc', first: 6000 });
  ends = await waitCommittedToEnd(broker.bootstrap, group, topic, partitions);
  assert.equal(ends.reduce((x, y) => x + y, 0n), 8000n);
  // SIGTERM: kcat closes its consumer (final commit, LeaveGroup); the group empties.
  for (const p of [a, b]) assert.equal((await p.term()).code, 0, p.diagnostics());
  checkLedger(ledger, ends, 'kcat');
  await eventually('the kcat group to become Empty', async () => (await withAdmin(broker.bootstrap, (adm) => adm.describeGroup(group))).state === 'Empty');
  assert.deepEqual(await waitCommittedToEnd(broker.bootstrap, group, topic, partitions, 5000), ends);
  const s = ledger.summary(partitions);
  report.add(`kcat: 8000 records, ${s.reduce((x, y) => x + y.duplicates, 0)} redelivered; wall ${Date.now() - t0} ms`);
  assertNoBrokerErrors(broker.logs);
});
