// Pure: turns the per-run measurements of both brokers into the figures the
// benchmark reports (median of N with min-max spread, ratio Sediment/Kafka) and
// renders them as a Markdown table, printed and written to docs/benchmarks.md.
import type { Acks, Compression } from './load.js';
import type { ConsumerSummary, ProducerSummary } from './perf-output.js';
import { spread, type Spread } from './perf-output.js';

export interface Workload {
  readonly compression: Compression;
  readonly acks: Acks;
}

export function workloadLabel(w: Workload): string {
  return `${w.compression}, acks=${w.acks}`;
}

/** Everything measured on one broker. Arrays hold one entry per run. */
export interface BrokerResults {
  readonly peak: Map<string, ProducerSummary[]>;
  readonly latency: Map<string, ProducerSummary[]>;
  readonly consume: Map<Compression, ConsumerSummary[]>;
  /** Broker CPU ms per MiB of record payload, keyed cpuKey('produce', workload) / cpuKey('consume', codec). */
  readonly cpuMsPerMiB: Map<string, number[]>;
  /** Sediment's event-loop lag during each fixed-rate run, per workload. */
  readonly loopLag: Map<string, Array<{ p99: number; max: number }>>;
  peakRssBytes: number;
}

export function cpuKey(phase: 'produce' | 'consume', what: string): string {
  return `${phase}|${what}`;
}

export function emptyResults(): BrokerResults {
  return { peak: new Map(), latency: new Map(), consume: new Map(), cpuMsPerMiB: new Map(), loopLag: new Map(), peakRssBytes: 0 };
}

export function record<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list === undefined) map.set(key, [value]);
  else list.push(value);
}

export interface FigureRow {
  readonly figure: string;
  readonly workload: string;
  readonly unit: string;
  /** For the reader: whether a ratio above 1 is good. */
  readonly higherIsBetter: boolean;
  readonly decimals: number;
  readonly sediment: Spread | undefined;
  readonly kafka: Spread | undefined;
  /** A condition of the run rather than a figure of either broker (load average): no ratio. */
  readonly noRatio?: boolean;
}

function spreadOf<T>(list: readonly T[] | undefined, pick: (t: T) => number): Spread | undefined {
  return list === undefined || list.length === 0 ? undefined : spread(list.map(pick));
}

export function figureRows(workloads: readonly Workload[], sediment: BrokerResults | undefined, kafka: BrokerResults | undefined): FigureRow[] {
  const rows: FigureRow[] = [];
  const producerRow = (
    figure: string,
    unit: string,
    source: 'peak' | 'latency',
    pick: (s: ProducerSummary) => number,
    higherIsBetter: boolean,
    decimals: number,
  ): void => {
    for (const w of workloads) {
      const key = workloadLabel(w);
      rows.push({
        figure,
        workload: key,
        unit,
        higherIsBetter,
        decimals,
        sediment: spreadOf(sediment?.[source].get(key), pick),
        kafka: spreadOf(kafka?.[source].get(key), pick),
      });
    }
  };
  producerRow('produce', 'MB/s', 'peak', (s) => s.mbPerSec, true, 1);
  producerRow('produce', 'records/s', 'peak', (s) => s.recordsPerSec, true, 0);
  const compressions = [...new Set(workloads.map((w) => w.compression))];
  for (const c of compressions) {
    rows.push({
      figure: 'consume',
      workload: c,
      unit: 'MB/s',
      higherIsBetter: true,
      decimals: 1,
      sediment: spreadOf(sediment?.consume.get(c), (s) => s.fetchMbPerSec),
      kafka: spreadOf(kafka?.consume.get(c), (s) => s.fetchMbPerSec),
    });
  }
  for (const c of compressions) {
    rows.push({
      figure: 'consume',
      workload: c,
      unit: 'records/s',
      higherIsBetter: true,
      decimals: 0,
      sediment: spreadOf(sediment?.consume.get(c), (s) => s.fetchRecordsPerSec),
      kafka: spreadOf(kafka?.consume.get(c), (s) => s.fetchRecordsPerSec),
    });
  }
  producerRow('latency p50', 'ms', 'latency', (s) => s.p50Ms, false, 0);
  producerRow('latency p99', 'ms', 'latency', (s) => s.p99Ms, false, 0);
  producerRow('latency p99.9', 'ms', 'latency', (s) => s.p999Ms, false, 0);
  for (const [figure, pick] of [['event-loop delay p99 (how late; idle: 0)', (l: { p99: number }) => l.p99], ['event-loop delay max (how late; idle: 0)', (l: { max: number }) => l.max]] as const) {
    for (const w of workloads) {
      const key = workloadLabel(w);
      rows.push({ figure, workload: key, unit: 'ms', higherIsBetter: false, decimals: 0, sediment: spreadOf(sediment?.loopLag.get(key), pick), kafka: spreadOf(kafka?.loopLag.get(key), pick) });
    }
  }
  for (const w of workloads) {
    const key = cpuKey('produce', workloadLabel(w));
    rows.push({ figure: 'broker CPU, produce', workload: workloadLabel(w), unit: 'ms/MiB', higherIsBetter: false, decimals: 1, sediment: spreadOf(sediment?.cpuMsPerMiB.get(key), (x) => x), kafka: spreadOf(kafka?.cpuMsPerMiB.get(key), (x) => x) });
  }
  for (const c of compressions) {
    const key = cpuKey('consume', c);
    rows.push({ figure: 'broker CPU, consume', workload: c, unit: 'ms/MiB', higherIsBetter: false, decimals: 1, sediment: spreadOf(sediment?.cpuMsPerMiB.get(key), (x) => x), kafka: spreadOf(kafka?.cpuMsPerMiB.get(key), (x) => x) });
  }
  const mib = (r: BrokerResults | undefined): Spread | undefined =>
    r === undefined || r.peakRssBytes === 0 ? undefined : spread([r.peakRssBytes / (1024 * 1024)]);
  rows.push({ figure: 'peak RSS', workload: 'whole run', unit: 'MiB', higherIsBetter: false, decimals: 0, sediment: mib(sediment), kafka: mib(kafka) });
  return rows;
}

function fmt(v: number, decimals: number): string {
  return v.toLocaleString('en-US', { minimumFractionDigits: decimals, maximumFractionDigits: decimals });
}

function cell(s: Spread | undefined, decimals: number): string {
  if (s === undefined) return '-';
  if (s.n === 1) return fmt(s.median, decimals);
  return `${fmt(s.median, decimals)} (${fmt(s.min, decimals)}-${fmt(s.max, decimals)})`;
}

function ratio(row: FigureRow): string {
  if (row.noRatio === true || row.sediment === undefined || row.kafka === undefined || row.kafka.median === 0) return '-';
  return `${(row.sediment.median / row.kafka.median).toFixed(2)}x`;
}

export function markdownTable(rows: readonly FigureRow[], names: { readonly sediment: string; readonly kafka: string } = { sediment: 'Sediment', kafka: 'Kafka' }): string {
  const lines = [
    `| figure | workload | unit | ${names.sediment} median (min-max) | ${names.kafka} median (min-max) | Sediment/Kafka |`,
    '| --- | --- | --- | ---: | ---: | ---: |',
  ];
  for (const r of rows) {
    lines.push(`| ${r.figure} | ${r.workload} | ${r.unit} | ${cell(r.sediment, r.decimals)} | ${cell(r.kafka, r.decimals)} | ${ratio(r)} |`);
  }
  return lines.join('\n');
}

export const DOC_BEGIN = '<!-- bench:begin (generated by npm run bench; edits inside are overwritten) -->';
export const DOC_END = '<!-- bench:end -->';

export interface DocMarkers {
  readonly begin: string;
  readonly end: string;
}

/** The single-broker section's markers. */
export const SINGLE_MARKERS: DocMarkers = { begin: DOC_BEGIN, end: DOC_END };
/** The replication-factor-3 section's markers. */
export const RF3_MARKERS: DocMarkers = {
  begin: '<!-- bench-rf3:begin (generated by npm run bench; edits inside are overwritten) -->',
  end: '<!-- bench-rf3:end -->',
};

/**
 * Replaces one generated section of docs/benchmarks.md, keeping what is written
 * around it (analysis, profiles, the other section) by hand; a missing file or
 * section gets a new one at the end.
 */
export function spliceGenerated(existing: string | null, generated: string, markers: DocMarkers = SINGLE_MARKERS): string {
  const section = `${markers.begin}\n${generated.trimEnd()}\n${markers.end}`;
  if (existing === null) return `# Benchmarks\n\n${section}\n`;
  const b = existing.indexOf(markers.begin);
  const e = existing.indexOf(markers.end, b < 0 ? 0 : b);
  if (b < 0 || e < b) return `${existing.trimEnd()}\n\n${section}\n`;
  return existing.slice(0, b) + section + existing.slice(e + markers.end.length);
}

/**
 * Broker CPU per MiB consumed, run k of Sediment against run k of Kafka, per
 * codec, to two decimals, and how many of those pairs Sediment is at or below
 * Kafka in (issue 16's criterion: every one). Null without both brokers.
 */
export function consumeCpuPairs(codecs: readonly Compression[], sediment: BrokerResults | undefined, kafka: BrokerResults | undefined): string | null {
  if (sediment === undefined || kafka === undefined) return null;
  const columns = codecs.map((c) => ({ c, s: sediment.cpuMsPerMiB.get(cpuKey('consume', c)) ?? [], k: kafka.cpuMsPerMiB.get(cpuKey('consume', c)) ?? [] }));
  const runs = Math.max(0, ...columns.map((col) => Math.min(col.s.length, col.k.length)));
  if (runs === 0) return null;
  let pairs = 0;
  let atOrBelow = 0;
  const lines = [
    `| run | ${columns.map((col) => `${col.c}: Sediment | ${col.c}: Kafka`).join(' | ')} |`,
    `| ---: | ${columns.map(() => '---: | ---:').join(' | ')} |`,
  ];
  for (let i = 0; i < runs; i++) {
    const cells = columns.map((col) => {
      const s = col.s[i];
      const k = col.k[i];
      if (s === undefined || k === undefined) return '- | -';
      pairs++;
      const ok = s <= k;
      if (ok) atOrBelow++;
      return `${ok ? s.toFixed(2) : `**${s.toFixed(2)}**`} | ${k.toFixed(2)}`;
    });
    lines.push(`| ${i + 1} | ${cells.join(' | ')} |`);
  }
  return [
    `Broker CPU per MiB consumed, run by run (ms/MiB; run k of each broker; bold: Sediment above Kafka): Sediment at or below Kafka in ${atOrBelow} of ${pairs} pairs.`,
    '',
    ...lines,
  ].join('\n');
}
