// `npm run fault -- --trials N --seed S [--duration-ms D] [--partitions P]
// [--producers K] [--rate R] [--isr-wait-ms W] [--keep]`: runs N trials of the fault checker
// (trial.ts), trial i seeded trialSeed(S, i) (trial 0 is S itself, so a failed
// trial is repeated with `--seed <its seed> --trials 1`), and prints the
// figures docs/fault-testing.md records: trials, faults injected, acknowledged
// records, losses, duplicates. Exits 1 when any trial failed, naming the seeds.
import { FaultCluster } from './fault-cluster.js';
import { makeSchedule, trialSeed } from './schedule.js';
import { runTrial, trialPassed, type TrialOptions, type TrialResult } from './trial.js';
import { buildWorkload } from './workload.js';

export interface RunOptions {
  readonly trials: number;
  readonly seed: number;
  readonly durationMs: number;
  readonly partitions: number;
  readonly producers: number;
  readonly rate: number;
  readonly keep: boolean;
  readonly isrWaitMs: number;
  readonly log: (line: string) => void;
}

export interface RunSummary {
  readonly seed: number;
  readonly trials: number;
  readonly faults: number;
  readonly acknowledged: number;
  readonly losses: number;
  readonly duplicates: number;
  readonly failedSeeds: readonly number[];
  readonly results: readonly TrialResult[];
  readonly ms: number;
}

export async function runFaults(o: RunOptions): Promise<RunSummary> {
  const started = Date.now();
  const bin = buildWorkload();
  const trialOptions: TrialOptions = { workloadBin: bin, partitions: o.partitions, producers: o.producers, rate: o.rate, keep: o.keep, isrWaitMs: o.isrWaitMs, log: o.log };
  const results: TrialResult[] = [];
  o.log(`fault run: seed ${o.seed}, ${o.trials} trials of ${o.durationMs} ms`);
  for (let i = 0; i < o.trials; i++) {
    const seed = trialSeed(o.seed, i);
    const schedule = makeSchedule(seed, { nodes: [1, 2, 3], durationMs: o.durationMs });
    o.log(`[${i + 1}/${o.trials}]`);
    try {
      results.push(await runTrial(schedule, trialOptions));
    } catch (e) {
      // A trial that could not run (harness error, broker refusing the topic) is a failed trial, with its seed.
      const why = e instanceof Error ? (e.stack ?? e.message) : String(e);
      o.log(`  trial ${seed} could not complete: ${why}`);
      results.push({
        seed,
        tiering: schedule.tiering,
        faults: 0,
        verdict: { acknowledged: 0, losses: 0, duplicates: 0, findings: [] },
        findings: [{ kind: 'harness', partition: -1, detail: `trial did not complete: ${why.split('\n')[0] ?? why}` }],
        failedRecords: 0,
        unfinishedRecords: 0,
        ms: 0,
        dir: '',
      });
    }
  }
  const sum = (f: (r: TrialResult) => number): number => results.reduce((n, r) => n + f(r), 0);
  const summary: RunSummary = {
    seed: o.seed,
    trials: results.length,
    faults: sum((r) => r.faults),
    acknowledged: sum((r) => r.verdict.acknowledged),
    losses: sum((r) => r.verdict.losses),
    duplicates: sum((r) => r.verdict.duplicates),
    failedSeeds: results.filter((r) => !trialPassed(r)).map((r) => r.seed),
    results,
    ms: Date.now() - started,
  };
  o.log(
    `fault run seed ${summary.seed}: ${summary.trials} trials (${results.filter((r) => r.tiering).length} with tiering), ${summary.faults} faults injected, ` +
      `${summary.acknowledged} acknowledged records, ${summary.losses} lost, ${summary.duplicates} duplicated; ` +
      `${summary.failedSeeds.length} trials failed${summary.failedSeeds.length > 0 ? ` (seeds ${summary.failedSeeds.join(', ')})` : ''}; ${(summary.ms / 1000).toFixed(0)} s`,
  );
  const kinds = new Map<string, number>();
  for (const r of results) for (const f of [...r.findings, ...r.verdict.findings]) kinds.set(f.kind, (kinds.get(f.kind) ?? 0) + 1);
  if (kinds.size > 0) o.log(`findings by kind: ${[...kinds].map(([k, n]) => `${k} ${n}`).join(', ')}`);
  for (const r of results.filter((x) => !trialPassed(x))) {
    const first = [...r.findings, ...r.verdict.findings][0];
    o.log(`  failed seed ${r.seed}${r.tiering ? ' (tiering)' : ''}: ${first === undefined ? '' : `[${first.kind}] ${first.detail.slice(0, 200)}`}`);
  }
  return summary;
}

function parseArgs(argv: readonly string[]): Omit<RunOptions, 'log'> {
  const get = (name: string): string | undefined => {
    const i = argv.indexOf(`--${name}`);
    return i === -1 ? undefined : argv[i + 1];
  };
  const int = (name: string, dflt: number): number => {
    const v = get(name);
    if (v === undefined) return dflt;
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0) throw new Error(`--${name} wants a non-negative integer, got ${v}`);
    return n;
  };
  return {
    trials: int('trials', 20),
    seed: int('seed', Math.floor(Math.random() * 2 ** 31)),
    durationMs: int('duration-ms', 45_000),
    partitions: int('partitions', 3),
    producers: int('producers', 2),
    rate: int('rate', 200),
    keep: argv.includes('--keep'),
    isrWaitMs: int('isr-wait-ms', 90_000),
  };
}

if (process.argv[1]?.endsWith('fault-run.js')) {
  // Ctrl-C or SIGTERM: stop the brokers and etcd and remove the namespaces before exiting.
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.once(sig, () => {
      console.log(`${sig}: closing ${FaultCluster.open.size} cluster(s)`);
      void Promise.all([...FaultCluster.open].map((c) => c.close().catch(() => undefined))).finally(() => process.exit(130));
    });
  }
  const options = parseArgs(process.argv.slice(2));
  const log = (line: string): void => console.log(line);
  runFaults({ ...options, log }).then(
    (s) => process.exit(s.failedSeeds.length === 0 ? 0 : 1),
    (e: unknown) => {
      console.error(e);
      process.exit(2);
    },
  );
}
