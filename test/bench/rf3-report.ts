// Pure: the figures of the replication-factor-3 section of `npm run bench`
// (three Sediment brokers over etcd against three Apache Kafka KRaft nodes),
// from the per-round measurements of each cluster, and the Markdown that goes
// into docs/benchmarks.md between the RF3_MARKERS.
import { cpuKey, markdownTable, workloadLabel, type FigureRow, type Workload } from './bench-report.js';
import type { Compression } from './load.js';
import type { ConsumerSummary, ProducerSummary } from './perf-output.js';
import { spread, type Spread } from './perf-output.js';

export const RF3_WORKLOADS: readonly Workload[] = [
  { compression: 'none', acks: 'all' },
  { compression: 'lz4', acks: 'all' },
];
export const RF3_COMPRESSIONS: readonly Compression[] = ['none', 'lz4'];
export const RF3_REPLICATION_FACTOR = 3;
export const RF3_MIN_INSYNC_REPLICAS = 2;
/** Seconds of the idle CPU window (no client running) after the warm-up. */
export const IDLE_WINDOW_S = 5;

/** Everything measured on one three-broker cluster; arrays hold one entry per round. */
export interface Rf3Results {
  readonly produce: Map<string, ProducerSummary[]>;
  readonly consume: Map<Compression, ConsumerSummary[]>;
  /** CPU ms per MiB of record payload, summed over the three broker processes; keys cpuKey(phase, workload or codec). */
  readonly brokerCpuMsPerMiB: Map<string, number[]>;
  /** Sediment only: its etcd's CPU ms per MiB (not in the broker sum; Kafka's controllers are inside its JVMs). */
  readonly etcdCpuMsPerMiB: Map<string, number[]>;
  /** 1-minute load average at the start of each measured run. */
  readonly load1: number[];
  /** CPU ms per second of the three broker processes while no client runs (after the warm-up). */
  readonly idleCpuMsPerSec: number[];
}

export function emptyRf3Results(): Rf3Results {
  return { produce: new Map(), consume: new Map(), brokerCpuMsPerMiB: new Map(), etcdCpuMsPerMiB: new Map(), load1: [], idleCpuMsPerSec: [] };
}

/** CPU milliseconds per MiB (2^20 bytes) of record payload. */
export function cpuMsPerMiB(cpuSeconds: number, records: number, recordSize: number): number {
  return (cpuSeconds * 1000) / ((records * recordSize) / 1048576);
}

function spreadOf<T>(list: readonly T[] | undefined, pick: (t: T) => number): Spread | undefined {
  return list === undefined || list.length === 0 ? undefined : spread(list.map(pick));
}

export function rf3FigureRows(sediment: Rf3Results | undefined, kafka: Rf3Results | undefined): FigureRow[] {
  const rows: FigureRow[] = [];
  const row = (figure: string, workload: string, unit: string, higherIsBetter: boolean, decimals: number, s: Spread | undefined, k: Spread | undefined, noRatio = false): void => {
    rows.push({ figure, workload, unit, higherIsBetter, decimals, sediment: s, kafka: k, noRatio });
  };
  for (const [unit, pick, decimals] of [['MiB/s', (p: ProducerSummary) => p.mbPerSec, 1], ['records/s', (p: ProducerSummary) => p.recordsPerSec, 0]] as const) {
    for (const w of RF3_WORKLOADS) {
      const key = workloadLabel(w);
      row('produce', key, unit, true, decimals, spreadOf(sediment?.produce.get(key), pick), spreadOf(kafka?.produce.get(key), pick));
    }
  }
  for (const [unit, pick, decimals] of [['MiB/s', (c: ConsumerSummary) => c.fetchMbPerSec, 1], ['records/s', (c: ConsumerSummary) => c.fetchRecordsPerSec, 0]] as const) {
    for (const c of RF3_COMPRESSIONS) row('consume', c, unit, true, decimals, spreadOf(sediment?.consume.get(c), pick), spreadOf(kafka?.consume.get(c), pick));
  }
  const cpuRows = (figure: string, pick: (r: Rf3Results) => Map<string, number[]>, withKafka: boolean): void => {
    for (const w of RF3_WORKLOADS) {
      const key = cpuKey('produce', workloadLabel(w));
      row(`${figure}, produce`, workloadLabel(w), 'ms/MiB', false, 1, spreadOf(sediment === undefined ? undefined : pick(sediment).get(key), (x) => x), withKafka ? spreadOf(kafka === undefined ? undefined : pick(kafka).get(key), (x) => x) : undefined);
    }
    for (const c of RF3_COMPRESSIONS) {
      const key = cpuKey('consume', c);
      row(`${figure}, consume`, c, 'ms/MiB', false, 1, spreadOf(sediment === undefined ? undefined : pick(sediment).get(key), (x) => x), withKafka ? spreadOf(kafka === undefined ? undefined : pick(kafka).get(key), (x) => x) : undefined);
    }
  };
  cpuRows('broker CPU (3 processes)', (r) => r.brokerCpuMsPerMiB, true);
  cpuRows('etcd CPU (Sediment only)', (r) => r.etcdCpuMsPerMiB, false);
  row(`broker CPU at idle (3 processes)`, `${IDLE_WINDOW_S} s after the warm-up`, 'ms/s', false, 1, spreadOf(sediment?.idleCpuMsPerSec, (x) => x), spreadOf(kafka?.idleCpuMsPerSec, (x) => x));
  row('load average (1 min) at run start', 'all runs', '', false, 1, spreadOf(sediment?.load1, (x) => x), spreadOf(kafka?.load1, (x) => x), true);
  return rows;
}

export interface Rf3ReportInput {
  readonly command: string;
  readonly startedAt: Date;
  readonly minutes: number;
  readonly rounds: number;
  readonly records: number;
  readonly recordSize: number;
  readonly partitions: number;
  readonly batchSize: number;
  readonly lingerMs: number;
  readonly cpus: number;
  readonly kafkaVersion: string;
  readonly kafkaHeap: string;
  readonly loadStart: string;
  readonly loadEnd: string;
  readonly sediment: Rf3Results | undefined;
  readonly kafka: Rf3Results | undefined;
}

export function rf3Report(r: Rf3ReportInput): string {
  const table = markdownTable(rf3FigureRows(r.sediment, r.kafka), { sediment: 'Sediment x3', kafka: 'Kafka x3' });
  const loads = [...(r.sediment?.load1 ?? []), ...(r.kafka?.load1 ?? [])];
  const maxLoad = loads.length === 0 ? 0 : Math.max(...loads);
  const loaded = maxLoad > r.cpus;
  return [
    `## Replication factor 3: results of ${r.startedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC`,
    '',
    `Command: \`${r.command}\` (${r.rounds} round${r.rounds === 1 ? '' : 's'} per figure, ${r.minutes.toFixed(1)} minutes in all).`,
    '',
    `Clusters, one after the other on the same ${r.cpus} cores: three Sediment brokers over one etcd, then three Apache Kafka ${r.kafkaVersion} nodes in KRaft combined mode ` +
      `(broker and controller in each JVM, -Xmx${r.kafkaHeap}). Each round: a peak produce (acks=all, idempotent) of ${r.records.toLocaleString('en-US')} records of ${r.recordSize} bytes ` +
      `per codec into a fresh topic of ${r.partitions} partitions, replication.factor=${RF3_REPLICATION_FACTOR}, min.insync.replicas=${RF3_MIN_INSYNC_REPLICAS} ` +
      `(created with the ISR full before the run), batch.size=${r.batchSize}, linger.ms=${r.lingerMs}; then a consume of that round's topic per codec with a fresh group. ` +
      'The clients bootstrap from all three brokers. An unmeasured warm-up (a third of a run per codec, consumed back) precedes the rounds on each cluster. ' +
      'Broker CPU: user + system time of the three broker processes, summed, per MiB of record payload (each MiB is written three times and fetched twice by followers); ' +
      `it includes what the brokers spend when idle (replica fetch polling, heartbeats, controllers), measured on its own over ${IDLE_WINDOW_S} s with no client after the warm-up.`,
    '',
    `Load average (1/5/15 min): ${r.loadStart} at the start, ${r.loadEnd} at the end; the 1-minute figure at each run's start is in the last row. ` +
      `Three brokers (each with its own event loop or JVM threads), etcd for Sediment, and the producer or consumer JVM share ${r.cpus} cores: ` +
      'replication and the client compete for the same CPU, so records/s is what the whole machine sustains, client included, not what three brokers on their own cores would do; ' +
      'broker CPU per MiB is less sensitive to the sharing (time spent waiting for a core is not charged), though context switches and cache misses still grow with it. ' +
      (loaded
        ? `The load average went above the core count (max ${maxLoad.toFixed(1)} at a run start): other work shared the cores, so these figures are noisy and the ratios are indicative only.`
        : 'The load average stayed at or below the core count at the runs\' starts.'),
    '',
    table,
    '',
  ].join('\n');
}

export type Sections = { readonly single: boolean; readonly rf3: boolean };

/** `--section single|rf3|all`, `--only-rf3` (= rf3), `--no-rf3` (= single); all when none is given. */
export function resolveSections(section: string | null, onlyRf3: boolean, noRf3: boolean): Sections {
  const given = [section !== null, onlyRf3, noRf3].filter(Boolean).length;
  if (given > 1) throw new Error('give one of --section, --only-rf3, --no-rf3');
  if (onlyRf3) return { single: false, rf3: true };
  if (noRf3) return { single: true, rf3: false };
  switch (section ?? 'all') {
    case 'all': return { single: true, rf3: true };
    case 'single': return { single: true, rf3: false };
    case 'rf3': return { single: false, rf3: true };
    default: throw new Error(`--section ${section}: single, rf3 or all`);
  }
}
