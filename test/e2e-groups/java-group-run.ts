// One run of Java group members against one broker while a producer writes:
// the members started, the group settling after each step (every partition
// owned once, the members' own views matching the coordinator's), and the
// replay of every member's callbacks proving no partition ever had two owners.
// Shared by the cooperative-sticky (classic), KIP-848 (consumer) and online
// migration tests.
import assert from 'node:assert/strict';
import type { SedimentProcess } from '../support/sediment.js';
import { JavaMember } from './java-member.js';
import { assignments, eventually, ownershipProblem, ProcessedLedger, Report, withAdmin } from './support.js';

export interface JavaGroupRunOptions {
  readonly broker: SedimentProcess;
  readonly classDir: string;
  readonly topic: string;
  readonly group: string;
  readonly sessionTimeoutMs: number;
  readonly partitions: number;
  /** group.protocol of every member (default classic). */
  readonly protocol?: 'classic' | 'consumer';
}

export class JavaGroupRun {
  readonly ledger = new ProcessedLedger();
  readonly report = new Report();
  readonly members: JavaMember[] = [];
  /** Monotonic time (ns) each killed member died: its partitions are free from then on. */
  private readonly killedAt = new Map<JavaMember, bigint>();
  /** The topic's partition count now (tests add partitions). */
  partitions: number;

  constructor(private readonly o: JavaGroupRunOptions) {
    this.partitions = o.partitions;
  }

  /** Starts a member; `protocolOverride` (online migration runs) replaces the run's group.protocol for it. */
  start(name: string, protocolOverride?: 'classic' | 'consumer'): JavaMember {
    const { classDir, broker, topic, group, sessionTimeoutMs } = this.o;
    const protocol = protocolOverride ?? this.o.protocol;
    const m = new JavaMember({ classDir, bootstrap: broker.bootstrap, topic, group, sessionTimeoutMs, ledger: this.ledger, name, ...(protocol === undefined ? {} : { protocol }) });
    this.members.push(m);
    return m;
  }

  /** SIGKILLs a member, noting when it died. */
  async kill(m: JavaMember): Promise<void> {
    const t = process.hrtime.bigint();
    await m.proc.kill();
    this.killedAt.set(m, t);
  }

  async killAll(): Promise<void> {
    for (const m of this.members) if (m.proc.alive) await m.proc.kill();
  }

  diagnostics(): string {
    const coordinator = this.o.broker.logs.lines.filter((l) => l['component'] === 'group-coordinator').map((l) => JSON.stringify(l));
    return ['--- coordinator log:', ...coordinator.slice(-30), ...this.members.filter((m) => m.proc.alive).map((m) => m.proc.diagnostics())].join('\n');
  }

  /** Waits for a Stable group of `live` whose members' own views match the coordinator's. */
  async settle(step: string, live: readonly JavaMember[]): Promise<void> {
    const t = Date.now();
    let last = '';
    await eventually(`the group to settle after: ${step}`, async () => {
      for (const m of live) if (!m.proc.alive) throw new Error(`${m.name} exited:\n${m.proc.diagnostics()}`);
      const g = await withAdmin(this.o.broker.bootstrap, (a) => a.describeGroup(this.o.group));
      const owned = assignments(g, this.o.topic);
      last = `${g.state} ${JSON.stringify([...owned])}; members say ${JSON.stringify(live.map((m) => [m.status?.['memberId'], m.partitions]))}`;
      if (g.state !== 'Stable' || g.members.length !== live.length || ownershipProblem(owned, this.partitions) !== null) return false;
      if (new Set(live.map((m) => m.status?.['gen'])).size !== 1) return false;
      return live.every((m) => {
        const id = m.status?.['memberId'];
        return typeof id === 'string' && JSON.stringify(owned.get(id)) === JSON.stringify(m.partitions);
      });
    }, 120_000, () => `${last}\n${this.diagnostics()}`);
    for (const m of this.members) assert.deepEqual(m.errors, [], `${m.name} failed`);
    this.report.add(`${step.padEnd(36)} settled in ${String(Date.now() - t).padStart(5)} ms: ${live.map((m) => `${m.name}=[${m.partitions.join(',')}]`).join(' ')}`);
  }

  /**
   * Replays every member's callbacks (and deaths) in monotonic time order: no
   * partition ever has two owners. Incremental callbacks carry only the change:
   * assigned = partitions added, revoked = partitions taken away.
   */
  checkNeverTwoOwners(): number {
    type Step = { t: bigint; member: JavaMember; kind: 'assigned' | 'revoked' | 'lost' | 'died'; partitions: number[] };
    const steps: Step[] = [];
    for (const m of this.members) {
      // Every callback, those of close() included: a stopping member revokes before it leaves.
      for (const e of m.callbacks) steps.push({ t: BigInt(String(e['t'])), member: m, kind: e.ev as Step['kind'], partitions: e['partitions'] as number[] });
      const died = this.killedAt.get(m);
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
}
