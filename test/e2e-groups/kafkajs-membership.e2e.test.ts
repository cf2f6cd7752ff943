// Three kafkajs members (each in its own process) share a six-partition topic
// while a producer keeps writing keyed records. One member leaves, one is
// SIGKILLed (the coordinator notices by the session timeout), one joins. After
// each change the group settles with every partition owned by exactly one live
// member (as the coordinator describes it and as the members report it), every
// committed offset covers only processed records, and the new owners catch up
// past where the log ended at the change. At the end committed == log end and
// every offset of every partition was processed at least once.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { createTopic } from '../clients/common.js';
import { startSediment, type SedimentProcess } from '../support/sediment.js';
import { requireTools } from '../support/tools.js';
import { assertNoBrokerErrors } from '../e2e/helpers.js';
import {
  assignments,
  committedOffsets,
  ContinuousProducer,
  eventually,
  here,
  JsonLineProcess,
  logEndOffsets,
  ownershipProblem,
  ProcessedLedger,
  range,
  Report,
  withAdmin,
} from './support.js';

const topic = 'membership';
const group = 'g-membership';
const partitions = 6;
const sessionTimeoutMs = 6000;
const memberProgram = path.join(here, 'programs', 'kafkajs-member.js');

let broker: SedimentProcess;
const ledger = new ProcessedLedger();
const report = new Report();
let producer: ContinuousProducer;

interface Member {
  readonly name: string;
  readonly proc: JsonLineProcess;
  readonly memberId: string | null;
  readonly partitions: readonly number[];
  readonly crashes: readonly string[];
}

const members: Member[] = [];

/** A member process; `commitIntervalMs` makes it commit on a timer instead of after every batch. */
function spawnMember(name: string, commitIntervalMs?: number): Member {
  const state = { memberId: null as string | null, partitions: [] as number[], crashes: [] as string[] };
  const args = [memberProgram, broker.bootstrap, group, topic, `member-${name}`, String(sessionTimeoutMs)];
  if (commitIntervalMs !== undefined) args.push(String(commitIntervalMs));
  const proc = new JsonLineProcess(
    `member ${name}`,
    process.execPath,
    args,
    (e) => {
      if (e.ev === 'rec') ledger.record(Number(e['p']), BigInt(String(e['o'])), String(e['v']));
      else if (e.ev === 'join') {
        state.memberId = String(e['memberId']);
        state.partitions = (e['partitions'] as number[]).slice();
      } else if (e.ev === 'crash') state.crashes.push(String(e['error']));
    },
    (e) => e.ev !== 'rec' && e.ev !== 'commit',
  );
  const m: Member = {
    name,
    proc,
    get memberId() { return state.memberId; },
    get partitions() { return state.partitions; },
    get crashes() { return state.crashes; },
  };
  members.push(m);
  return m;
}

/**
 * Waits until the coordinator describes a Stable group whose members are exactly
 * `live`, each with the partitions it reported itself, and every partition has one owner.
 */
async function settle(step: string, live: readonly Member[]): Promise<void> {
  const started = Date.now();
  let last = '';
  await eventually(
    `the group to settle after: ${step}`,
    async () => {
      const g = await withAdmin(broker.bootstrap, (a) => a.describeGroup(group));
      const owned = assignments(g, topic);
      last = `${g.state} ${JSON.stringify([...owned])}; members report ${JSON.stringify(live.map((m) => [m.memberId, m.partitions]))}`;
      if (g.state !== 'Stable') return false;
      const ids = live.map((m) => m.memberId);
      if (ids.includes(null) || owned.size !== live.length || !ids.every((id) => id !== null && owned.has(id))) return false;
      if (!live.every((m) => JSON.stringify(owned.get(m.memberId as string)) === JSON.stringify(m.partitions))) return false;
      return ownershipProblem(owned, partitions) === null;
    },
    90_000,
    () => last,
  );
  for (const m of members) assert.deepEqual(m.crashes, [], `${m.name} crashed`);
  report.add(`${step.padEnd(34)} settled in ${String(Date.now() - started).padStart(5)} ms: ${live.map((m) => `${m.name}=[${m.partitions.join(',')}]`).join(' ')}`);
  // The owners' assignments, as the members themselves report them, cover each partition once.
  assert.equal(ownershipProblem(new Map(live.map((m) => [m.name, m.partitions])), partitions), null);
}

/** Every committed offset covers only processed records (no committed record skipped). */
async function checkCommitted(step: string): Promise<void> {
  const committed = await withAdmin(broker.bootstrap, (a) => committedOffsets(a, group, topic, partitions));
  for (const p of range(partitions)) {
    const c = committed[p] as bigint;
    // The record lines are in the members' stdout pipes before the commit; let them arrive.
    await eventually(`${step}: processed offsets of partition ${p} to reach its committed offset ${c}`, () => ledger.contiguousEnd(p) >= c, 10_000, () =>
      `contiguous end ${ledger.contiguousEnd(p)}`,
    );
  }
}

/** The live owners consume past the log end as it was when the group settled. */
async function progress(step: string): Promise<void> {
  const ends = await withAdmin(broker.bootstrap, (a) => logEndOffsets(a, topic, partitions));
  for (const p of range(partitions)) {
    await eventually(`${step}: partition ${p} consumed to ${ends[p]}`, () => ledger.contiguousEnd(p) >= (ends[p] as bigint), 60_000, () =>
      `contiguous end ${ledger.contiguousEnd(p)}; ${members.map((m) => m.proc.diagnostics()).join('\n')}`,
    );
  }
}

before(async () => {
  requireTools(['kafkajs']);
  broker = await startSediment();
  await createTopic(broker.bootstrap, topic, partitions);
  producer = new ContinuousProducer(broker.bootstrap, topic, { keys: 600, batch: 20, pauseMs: 10 });
  await producer.start();
});

after(async () => {
  for (const m of members) if (m.proc.alive) await m.proc.kill();
  await broker?.close();
  report.print('kafkajs membership changes (3 members, 6 partitions, continuous produce):');
});

test('three kafkajs members: leave, kill, join; one owner per partition, nothing lost or skipped', { timeout: 600_000 }, async () => {
  const t0 = Date.now();
  const a = spawnMember('a');
  const b = spawnMember('b');
  // c commits only every 2 s, so its kill leaves processed but uncommitted records for the next owner.
  const c = spawnMember('c', 2000);
  await settle('a, b, c joined', [a, b, c]);
  await progress('a, b, c');
  await checkCommitted('a, b, c');

  assert.deepEqual(await a.proc.term(), { code: 0, signal: null }, a.proc.diagnostics());
  await settle('a left (LeaveGroup)', [b, c]);
  await progress('after a left');
  await checkCommitted('after a left');

  const killedAt = Date.now();
  assert.equal((await c.proc.kill()).signal, 'SIGKILL');
  await settle('c killed (session timeout)', [b]);
  // The coordinator waits out the session timeout before it drops c.
  assert.ok(Date.now() - killedAt >= sessionTimeoutMs - 1000, `c dropped after ${Date.now() - killedAt} ms`);
  await progress('after c was killed');
  await checkCommitted('after c was killed');

  const d = spawnMember('d');
  await settle('d joined', [b, d]);
  await progress('after d joined');
  await checkCommitted('after d joined');

  await producer.stop();
  const ends = await withAdmin(broker.bootstrap, (adm) => logEndOffsets(adm, topic, partitions));
  let committed: bigint[] = [];
  await eventually('committed offsets to reach the log end', async () => {
    committed = await withAdmin(broker.bootstrap, (adm) => committedOffsets(adm, group, topic, partitions));
    return committed.every((o, p) => o === ends[p]);
  }, 60_000, () => `committed ${committed.join(',')} log end ${ends.join(',')}`);

  for (const p of range(partitions)) assert.equal(ledger.firstGap(p, ends[p] as bigint), null, `partition ${p}: offset never processed`);
  assert.deepEqual(ledger.conflicts, [], 'an offset delivered with two different values');
  const seen = ledger.allValues();
  const missing = [...producer.acked.keys()].filter((v) => !seen.has(v));
  assert.deepEqual(missing.slice(0, 10), [], `${missing.length} acknowledged records never processed`);

  await b.proc.term();
  await d.proc.term();
  assertNoBrokerErrors(broker.logs);
  const summary = ledger.summary(partitions);
  for (const s of summary) {
    report.add(`partition ${s.partition}: log end ${ends[s.partition]}, processed offsets 0..${s.max} (${s.distinct} distinct, ${s.deliveries} deliveries, ${s.duplicates} redelivered)`);
  }
  report.add(`${producer.count} records acknowledged; wall ${Date.now() - t0} ms`);
});
