// The seeded fault schedule of one trial: pure (no I/O, no clock), so a seed
// printed by a failed run rebuilds exactly the same schedule. A schedule is a
// list of timed steps (kill -9, restart, SIGSTOP, SIGCONT, cut and heal of the
// link between two brokers) over a fixed trial length; every fault it opens it
// also closes before the end, so the trial's heal phase starts from a cluster
// whose processes all run and whose links are all up.

/** mulberry32: a small, fast 32-bit PRNG; the same seed gives the same stream. */
export class Rng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** Integer in [lo, hi]. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  pick<T>(items: readonly T[]): T {
    const item = items[Math.floor(this.next() * items.length)];
    if (item === undefined) throw new RangeError('pick from an empty list');
    return item;
  }
}

/** Trial i of a run seeded S: trial 0 has seed S itself, so `--seed <trial seed> --trials 1` repeats one trial. */
export function trialSeed(runSeed: number, trial: number): number {
  return (runSeed + Math.imul(trial, 0x9e3779b9)) >>> 0;
}

export type FaultStep =
  | { readonly atMs: number; readonly kind: 'kill' | 'restart' | 'pause' | 'resume'; readonly node: number }
  | { readonly atMs: number; readonly kind: 'cut' | 'heal'; readonly a: number; readonly b: number };

export interface Schedule {
  readonly seed: number;
  /** Tiering on (file:// store, small segments) in this trial. */
  readonly tiering: boolean;
  readonly durationMs: number;
  readonly steps: readonly FaultStep[];
}

export interface ScheduleOptions {
  readonly nodes: readonly number[];
  readonly durationMs: number;
  /** Faults last this long (ms), uniformly. */
  readonly minFaultMs?: number;
  readonly maxFaultMs?: number;
  /** At most this many brokers killed or paused at once (links cut come on top). */
  readonly maxDown?: number;
  /** One trial in `tieringEvery` (on average) runs with tiering on. */
  readonly tieringEvery?: number;
}

type Fault = { kind: 'kill' | 'pause'; node: number; endMs: number } | { kind: 'cut'; a: number; b: number; endMs: number };

function closing(f: Fault, atMs: number): FaultStep {
  if (f.kind === 'cut') return { atMs, kind: 'heal', a: f.a, b: f.b };
  return { atMs, kind: f.kind === 'kill' ? 'restart' : 'resume', node: f.node };
}

/** A schedule for one trial: faults start one after another at random gaps, may overlap, and all end by `durationMs`. */
export function makeSchedule(seed: number, o: ScheduleOptions): Schedule {
  const rng = new Rng(seed);
  const minFault = o.minFaultMs ?? 2000;
  const maxFault = o.maxFaultMs ?? 8000;
  const maxDown = o.maxDown ?? 2;
  const tiering = rng.next() < 1 / (o.tieringEvery ?? 3);
  const steps: FaultStep[] = [];
  let active: Fault[] = [];
  let t = rng.int(500, 2000);
  while (t < o.durationMs - minFault) {
    // Close the faults that have ended by now, in end order.
    for (const f of [...active].sort((x, y) => x.endMs - y.endMs)) {
      if (f.endMs <= t) steps.push(closing(f, f.endMs));
    }
    active = active.filter((f) => f.endMs > t);
    const down = new Set(active.flatMap((f) => (f.kind === 'cut' ? [] : [f.node])));
    const cut = new Set(active.flatMap((f) => (f.kind === 'cut' ? [`${f.a}-${f.b}`] : [])));
    const endMs = Math.min(o.durationMs, t + rng.int(minFault, maxFault));
    const kind = rng.pick(['kill', 'kill', 'pause', 'cut', 'cut'] as const);
    if (kind === 'cut') {
      const pairs = o.nodes.flatMap((a, i) => o.nodes.slice(i + 1).map((b) => [a, b] as const)).filter(([a, b]) => !cut.has(`${a}-${b}`));
      if (pairs.length > 0) {
        const [a, b] = rng.pick(pairs);
        active.push({ kind: 'cut', a, b, endMs });
        steps.push({ atMs: t, kind: 'cut', a, b });
      }
    } else {
      const up = o.nodes.filter((n) => !down.has(n));
      if (down.size < maxDown && up.length > 0) {
        const node = rng.pick(up);
        active.push({ kind, node, endMs });
        steps.push({ atMs: t, kind, node });
      }
    }
    // Usually wait for some of the fault to pass; sometimes start the next one while it lasts.
    t += rng.next() < 0.3 ? rng.int(500, 1500) : rng.int(minFault, maxFault);
  }
  for (const f of [...active].sort((x, y) => x.endMs - y.endMs)) steps.push(closing(f, Math.min(f.endMs, o.durationMs)));
  steps.sort((x, y) => x.atMs - y.atMs);
  return { seed, tiering, durationMs: o.durationMs, steps };
}

export function describeStep(s: FaultStep): string {
  const at = `${(s.atMs / 1000).toFixed(1)}s`;
  return 'node' in s ? `${at} ${s.kind} ${s.node}` : `${at} ${s.kind} ${s.a}<->${s.b}`;
}

/** Faults the schedule injects (kills, pauses, cuts; their ends are not counted). */
export function faultCount(s: Schedule): number {
  return s.steps.filter((x) => x.kind === 'kill' || x.kind === 'pause' || x.kind === 'cut').length;
}
