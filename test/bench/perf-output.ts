// Pure parsing of Kafka's load generators' output and the statistics the
// benchmark reports (median with min-max spread). No I/O: tested with text.
//
// Both tools count "MB" as 1024 * 1024 bytes (MiB); the benchmark keeps their
// figures as printed so a reader can compare them with any other run of the tools.

/** The summary line org.apache.kafka.tools.ProducerPerformance prints last. */
export interface ProducerSummary {
  readonly records: number;
  readonly recordsPerSec: number;
  readonly mbPerSec: number;
  readonly avgLatencyMs: number;
  readonly maxLatencyMs: number;
  readonly p50Ms: number;
  readonly p95Ms: number;
  readonly p99Ms: number;
  readonly p999Ms: number;
}

const NUM = '([0-9]+(?:[.,][0-9]+)?)';
const producerSummaryRe = new RegExp(
  `${NUM} records sent, ${NUM} records/sec \\(${NUM} MB/sec\\), ${NUM} ms avg latency, ${NUM} ms max latency, ` +
    `${NUM} ms 50th, ${NUM} ms 95th, ${NUM} ms 99th, ${NUM} ms 99\\.9th`,
);

function num(s: string | undefined): number {
  if (s === undefined) throw new Error('missing number');
  return Number(s.replace(',', '.'));
}

/**
 * The final summary of a ProducerPerformance run (the interim window lines have
 * no percentiles). Throws when there is none, e.g. the tool failed.
 */
export function parseProducerSummary(stdout: string): ProducerSummary {
  let found: RegExpExecArray | null = null;
  for (const line of stdout.split('\n')) {
    const m = producerSummaryRe.exec(line);
    if (m !== null) found = m;
  }
  if (found === null) throw new Error(`no ProducerPerformance summary line in output:\n${stdout.slice(-2000)}`);
  const g = found.slice(1).map(num);
  return {
    records: g[0]!,
    recordsPerSec: g[1]!,
    mbPerSec: g[2]!,
    avgLatencyMs: g[3]!,
    maxLatencyMs: g[4]!,
    p50Ms: g[5]!,
    p95Ms: g[6]!,
    p99Ms: g[7]!,
    p999Ms: g[8]!,
  };
}

/** The result row of org.apache.kafka.tools.ConsumerPerformance (no --show-detailed-stats). */
export interface ConsumerSummary {
  readonly mb: number;
  readonly records: number;
  /** Whole run, group join included. */
  readonly mbPerSec: number;
  readonly rebalanceMs: number;
  readonly fetchMs: number;
  /** Fetch phase only: the time from the first assignment to the last record. */
  readonly fetchMbPerSec: number;
  readonly fetchRecordsPerSec: number;
}

/**
 * Finds the header line ("start.time, end.time, data.consumed.in.MB, ...") and
 * reads the row under it by column name, so a column reorder does not mislead.
 */
export function parseConsumerSummary(stdout: string): ConsumerSummary {
  const lines = stdout.split('\n').map((l) => l.trim()).filter((l) => l !== '');
  const headerAt = lines.findIndex((l) => l.startsWith('start.time,'));
  // The row starts with the start date; a WARNING (e.g. the tool's timeout) may come first.
  const row = headerAt < 0 ? undefined : lines.slice(headerAt + 1).find((l) => /^\d{4}-\d{2}-\d{2} /.test(l));
  if (row === undefined) throw new Error(`no ConsumerPerformance result in output:\n${stdout.slice(-2000)}`);
  const names = lines[headerAt]!.split(',').map((s) => s.trim());
  const values = row.split(',').map((s) => s.trim());
  if (values.length !== names.length) throw new Error(`ConsumerPerformance row has ${values.length} fields, header ${names.length}: ${row}`);
  const col = (name: string): number => {
    const i = names.indexOf(name);
    if (i < 0) throw new Error(`ConsumerPerformance output has no ${name} column`);
    const v = Number(values[i]);
    if (!Number.isFinite(v)) throw new Error(`ConsumerPerformance ${name} is not a number: ${values[i]}`);
    return v;
  };
  return {
    mb: col('data.consumed.in.MB'),
    records: col('data.consumed.in.nMsg'),
    mbPerSec: col('MB.sec'),
    rebalanceMs: col('rebalance.time.ms'),
    fetchMs: col('fetch.time.ms'),
    fetchMbPerSec: col('fetch.MB.sec'),
    fetchRecordsPerSec: col('fetch.nMsg.sec'),
  };
}

/** Median and spread of repeated measurements of one figure. */
export interface Spread {
  readonly median: number;
  readonly min: number;
  readonly max: number;
  readonly n: number;
}

export function spread(values: readonly number[]): Spread {
  if (values.length === 0) throw new Error('spread of no values');
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  const median = s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
  return { median, min: s[0]!, max: s[s.length - 1]!, n: s.length };
}

/** The q-quantile (0..1) of values, nearest rank. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) throw new Error('quantile of no values');
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))]!;
}

/** Reads VmRSS and VmHWM (kB) from a /proc/<pid>/status text; bytes, or null when absent. */
export function parseProcStatusMemory(status: string): { rssBytes: number | null; hwmBytes: number | null } {
  const kb = (key: string): number | null => {
    const m = new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status);
    return m === null ? null : Number(m[1]) * 1024;
  };
  return { rssBytes: kb('VmRSS'), hwmBytes: kb('VmHWM') };
}

/**
 * User + system CPU time of a process from its /proc/<pid>/stat line, in clock
 * ticks (all threads: a JVM's GC and I/O threads, node's libuv threadpool).
 * The command name may hold spaces and parentheses, so fields are counted from
 * the last ')'.
 */
export function parseProcStatCpuTicks(stat: string): number {
  const { user, system } = parseProcStatUserSystemTicks(stat);
  return user + system;
}

/** The value of an unlabelled sample `name value` in a Prometheus text exposition, or null. */
export function parsePromSample(text: string, name: string): number | null {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name} `)) continue;
    const v = Number(line.slice(name.length + 1).trim().split(' ')[0]);
    return Number.isFinite(v) ? v : null;
  }
  return null;
}

/**
 * The sum of every sample of `name` in a Prometheus text exposition, labelled or
 * not, whose labels include all of `match` (e.g. { api: 'Fetch' }); 0 when none.
 */
export function sumPromSamples(text: string, name: string, match: Readonly<Record<string, string>> = {}): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const rest = line.slice(name.length);
    let labels = '';
    let value: string;
    if (rest.startsWith('{')) {
      const close = rest.indexOf('}');
      if (close < 0) continue;
      labels = rest.slice(1, close);
      value = rest.slice(close + 1);
    } else if (rest.startsWith(' ')) value = rest;
    else continue;
    if (!Object.entries(match).every(([k, v]) => labels.split(',').includes(`${k}="${v}"`))) continue;
    const v = Number(value.trim().split(' ')[0]);
    if (Number.isFinite(v)) sum += v;
  }
  return sum;
}

/** /proc/<pid>/stat utime and stime apart, in clock ticks (fields counted from the last ')', as parseProcStatCpuTicks says). */
export function parseProcStatUserSystemTicks(stat: string): { user: number; system: number } {
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Fields 14 (utime) and 15 (stime) of proc(5); `rest` starts at field 3.
  const user = Number(rest[11]);
  const system = Number(rest[12]);
  if (!Number.isFinite(user) || !Number.isFinite(system)) throw new Error(`unreadable /proc/<pid>/stat: ${stat.slice(0, 200)}`);
  return { user, system };
}

/**
 * The shares of the samples in a `perf report --no-children --sort sym --stdio`
 * text (lines `  21.28%  [k] _copy_to_iter`), in percent: the kernel's copy
 * into user memory (`_copy_to_iter`: a read or pread), its copy from user
 * memory (`_copy_from_iter`: a write to a socket or file), the rest of the
 * kernel (`[k]`), and user space (`[.]`).
 */
export function perfCopySplit(reportText: string): [number, number, number, number] {
  let toIter = 0;
  let fromIter = 0;
  let kernel = 0;
  let user = 0;
  for (const line of reportText.split('\n')) {
    const m = /^\s*([\d.]+)%\s+\[([k.])\]\s+(\S+)/.exec(line);
    if (m === null) continue;
    const pct = Number(m[1]);
    if (m[2] === '.') user += pct;
    else if (m[3] === '_copy_to_iter') toIter += pct;
    else if (m[3] === '_copy_from_iter') fromIter += pct;
    else kernel += pct;
  }
  return [toIter, fromIter, kernel, user];
}
