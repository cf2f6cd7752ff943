// kafkajs members (each in its own process) share a topic while a producer
// keeps writing keyed records.
// 1. Three members on six partitions: one leaves, one is SIGKILLed (the
//    coordinator notices by the session timeout), one joins.
// 2. The rebalance timeout: a member stuck in processing (no heartbeats, no
//    rejoin) is removed when a rebalance outlasts its rebalance timeout, well
//    before its session timeout; it rejoins as a new member once unstuck.
// After each change the group settles with every partition owned by exactly one
// live member (as the coordinator describes it and as the members report it),
// every committed offset covers only processed records, and the new owners
// catch up past where the log ended at the change. At the end committed == log
// end and every offset of every partition was processed at least once.
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
  waitCommittedToEnd,
  withAdmin,
} from './support.js';

const memberProgram = path.join(here, 'programs', 'kafkajs-member.js');

let broker: SedimentProcess;
const report = new Report();
const scenarios: Scenario[] = [];

interface MemberOptions {
  readonly sessionTimeoutMs: number;
  readonly rebalanceTimeoutMs?: number;
  /** Commit on this timer instead of after every batch. */
  readonly commitIntervalMs?: number;
}

/** A member process and what it last reported. */
class Member {
  memberId: string | null = null;
  partitions: number[] = [];
  readonly crashes: string[] = [];
  readonly proc: JsonLineProcess;

  constructor(readonly name: string, s: Scenario, o: MemberOptions) {
    const args = [memberProgram, '--bootstrap', broker.bootstrap, '--group', s.group, '--topic', s.topic, '--client-id', `member-${name}`, '--session-timeout', String(o.sessionTimeoutMs)];
    if (o.rebalanceTimeoutMs !== undefined) args.push('--rebalance-timeout', String(o.rebalanceTimeoutMs));
    if (o.commitIntervalMs !== undefined) args.push('--commit-interval', String(o.commitIntervalMs));
    this.proc = new JsonLineProcess(
      `member ${name}`,
      process.execPath,
      args,
      (e) => {
        if (e.ev === 'rec') s.ledger.record(Number(e['p']), BigInt(String(e['o'])), String(e['v']));
        else if (e.ev === 'join') {
          this.memberId = String(e['memberId']);
          this.partitions = (e['partitions'] as number[]).slice();
        } else if (e.ev === 'crash') this.crashes.push(String(e['error']));
      },
      (e) => e.ev !== 'rec' && e.ev !== 'commit',
    );
  }
}

/** One group on one topic with a continuous producer. */
class Scenario {
  readonly ledger = new ProcessedLedger();
  readonly members: Member[] = [];
  producer: ContinuousProducer | null = null;

  constructor(readonly topic: string, readonly group: string, readonly partitions: number) {
    scenarios.push(this);
  }

  async start(): Promise<void> {
    await createTopic(broker.bootstrap, this.topic, this.partitions);
    this.producer = new ContinuousProducer(broker.bootstrap, this.topic, { keys: 600, batch: 20, pauseMs: 10 });
    await this.producer.start();
  }

  spawn(name: string, o: MemberOptions): Member {
    const m = new Member(name, this, o);
    this.members.push(m);
    return m;
  }

  /**
   * Waits until the coordinator describes a Stable group whose members are exactly
   * `live`, each with the partitions it reported itself, and every partition has one owner.
   */
  async settle(step: string, live: readonly Member[], timeoutMs = 90_000): Promise<number> {
    const started = Date.now();
    let last = '';
    await eventually(
      `the group to settle after: ${step}`,
      async () => {
        const g = await withAdmin(broker.bootstrap, (a) => a.describeGroup(this.group));
        const owned = assignments(g, this.topic);
        last = `${g.state} ${JSON.stringify([...owned])}; members report ${JSON.stringify(live.map((m) => [m.memberId, m.partitions]))}`;
        if (g.state !== 'Stable') return false;
        const ids = live.map((m) => m.memberId);
        if (owned.size !== live.length || !ids.every((id) => id !== null && owned.has(id))) return false;
        if (!live.every((m) => JSON.stringify(owned.get(m.memberId as string)) === JSON.stringify(m.partitions))) return false;
        return ownershipProblem(owned, this.partitions) === null;
      },
      timeoutMs,
      () => last,
    );
    for (const m of this.members) assert.deepEqual(m.crashes, [], `${m.name} crashed`);
    const ms = Date.now() - started;
    report.add(`${this.group}: ${step.padEnd(40)} settled in ${String(ms).padStart(5)} ms: ${live.map((m) => `${m.name}=[${m.partitions.join(',')}]`).join(' ')}`);
    // The owners' assignments, as the members themselves report them, cover each partition once.
    assert.equal(ownershipProblem(new Map(live.map((m) => [m.name, m.partitions])), this.partitions), null);
    return ms;
  }

  /** Every committed offset covers only processed records (no committed record skipped). */
  async checkCommitted(step: string): Promise<void> {
    const committed = await withAdmin(broker.bootstrap, (a) => committedOffsets(a, this.group, this.topic, this.partitions));
    for (const p of range(this.partitions)) {
      const c = committed[p] as bigint;
      // The record lines are in the members' stdout pipes before the commit; let them arrive.
      await eventually(`${step}: processed offsets of partition ${p} to reach its committed offset ${c}`, () => this.ledger.contiguousEnd(p) >= c, 10_000, () =>
        `contiguous end ${this.ledger.contiguousEnd(p)}`,
      );
    }
  }

  /** The live owners consume past the log end as it was when the group settled. */
  async progress(step: string): Promise<void> {
    const ends = await withAdmin(broker.bootstrap, (a) => logEndOffsets(a, this.topic, this.partitions));
    for (const p of range(this.partitions)) {
      await eventually(`${step}: partition ${p} consumed to ${ends[p]}`, () => this.ledger.contiguousEnd(p) >= (ends[p] as bigint), 60_000, () =>
        `contiguous end ${this.ledger.contiguousEnd(p)}; ${this.members.map((m) => m.proc.diagnostics()).join('\n')}`,
      );
    }
  }

  async afterChange(step: string): Promise<void> {
    await this.progress(step);
    await this.checkCommitted(step);
  }

  /** Stops the producer; committed == log end; every offset and every acknowledged record processed. */
  async finish(): Promise<bigint[]> {
    const producer = this.producer as ContinuousProducer;
    await producer.stop();
    this.producer = null;
    const ends = await waitCommittedToEnd(broker.bootstrap, this.group, this.topic, this.partitions, 60_000);
    for (const p of range(this.partitions)) assert.equal(this.ledger.firstGap(p, ends[p] as bigint), null, `partition ${p}: offset never processed`);
    assert.deepEqual(this.ledger.conflicts, [], 'an offset delivered with two different values');
    const seen = this.ledger.allValues();
    const missing = [...producer.acked.keys()].filter((v) => !seen.has(v));
    assert.deepEqual(missing.slice(0, 10), [], `${missing.length} acknowledged records never processed`);
    for (const s of this.ledger.summary(this.partitions)) {
      report.add(`${this.group}: partition ${s.partition}: log end ${ends[s.partition]}, processed offsets 0..${s.max} (${s.distinct} distinct, ${s.deliveries} deliveries, ${s.duplicates} redelivered)`);
    }
    report.add(`${this.group}: ${producer.count} records acknowledged`);
    return ends;
  }
}

before(async () => {
  requireTools(['kafkajs']);
  broker = await startSediment();
});

after(async () => {
  for (const s of scenarios) {
    await s.producer?.stop().catch(() => undefined);
    for (const m of s.members) if (m.proc.alive) await m.proc.kill();
  }
  await broker?.close();
  report.print('kafkajs membership changes (continuous produce):');
});

test('three kafkajs members: leave, kill, join; one owner per partition, nothing lost or skipped', { timeout: 600_000 }, async () => {
  const t0 = Date.now();
  const s = new Scenario('membership', 'g-membership', 6);
  await s.start();
  const sessionTimeoutMs = 6000;
  const a = s.spawn('a', { sessionTimeoutMs });
  const b = s.spawn('b', { sessionTimeoutMs });
  // c commits only every 2 s, so its kill leaves processed but uncommitted records for the next owner.
  const c = s.spawn('c', { sessionTimeoutMs, commitIntervalMs: 2000 });
  await s.settle('a, b, c joined', [a, b, c]);
  await s.afterChange('a, b, c');

  assert.deepEqual(await a.proc.term(), { code: 0, signal: null }, a.proc.diagnostics());
  await s.settle('a left (LeaveGroup)', [b, c]);
  await s.afterChange('after a left');

  const killedAt = Date.now();
  assert.equal((await c.proc.kill()).signal, 'SIGKILL');
  await s.settle('c killed (session timeout)', [b]);
  // The coordinator waits out the session timeout before it drops c.
  assert.ok(Date.now() - killedAt >= sessionTimeoutMs - 1000, `c dropped after ${Date.now() - killedAt} ms`);
  await s.afterChange('after c was killed');

  const d = s.spawn('d', { sessionTimeoutMs });
  await s.settle('d joined', [b, d]);
  await s.afterChange('after d joined');

  await s.finish();
  await b.proc.term();
  await d.proc.term();
  assertNoBrokerErrors(broker.logs);
  report.add(`g-membership: wall ${Date.now() - t0} ms`);
});

test('rebalance timeout: a stuck member is removed after its rebalance timeout, not its session timeout', { timeout: 600_000 }, async () => {
  const t0 = Date.now();
  const s = new Scenario('rebalance-timeout', 'g-rebalance-timeout', 4);
  await s.start();
  const timeouts = { sessionTimeoutMs: 45_000, rebalanceTimeoutMs: 8000 };
  const a = s.spawn('a', timeouts);
  await s.settle('a joined', [a]);
  await s.afterChange('a alone');

  // a's next message takes 25 s: no heartbeat, no rejoin meanwhile.
  a.proc.send('block 25000');
  await a.proc.next('a blocked', (e) => e.ev === 'blocked');
  const joinedAt = Date.now();
  const b = s.spawn('b', timeouts);
  const ms = await s.settle('b joined while a is stuck', [b], 60_000);
  const dropped = Date.now() - joinedAt;
  assert.ok(dropped >= timeouts.rebalanceTimeoutMs - 1000, `a was dropped ${dropped} ms after b joined, before its rebalance timeout`);
  assert.ok(a.proc.events.every((e) => e.ev !== 'unblocked'), 'a was unblocked before the coordinator dropped it');
  assert.ok(ms < timeouts.sessionTimeoutMs);
  await s.afterChange('b alone');

  // Unstuck, a finds out it was removed and joins again as a new member.
  const oldId = a.memberId;
  await a.proc.next('a unblocked', (e) => e.ev === 'unblocked', 60_000);
  await s.settle('a back after it was unstuck', [a, b]);
  assert.notEqual(a.memberId, oldId, 'a rejoined under its old member id');
  await s.afterChange('a and b');

  await s.finish();
  await a.proc.term();
  await b.proc.term();
  assertNoBrokerErrors(broker.logs);
  report.add(`g-rebalance-timeout: a dropped ${dropped} ms after b joined (rebalance timeout ${timeouts.rebalanceTimeoutMs} ms, session timeout ${timeouts.sessionTimeoutMs} ms); wall ${Date.now() - t0} ms`);
});
