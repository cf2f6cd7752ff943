// `sediment cost --from-metrics URL`: the workload measured from a running
// broker's Prometheus counters. One scrape divides each counter by the time
// since the broker started (process_start_time_seconds); with a sample period
// two scrapes are taken and the difference is divided by the time between them.
// The measured rates become model inputs (ingress, segment size, remote read
// share) and are projected to a month of object store traffic and its price.
import type { Clock } from '../common/clock.js';
import { systemClock } from '../common/clock.js';
import { GIB, MONTH_SECONDS, segmentUpload, DEFAULT_WORKLOAD } from './model.js';
import type { Sample } from './prometheus.js';
import { parsePrometheusText, sumFirst } from './prometheus.js';
import type { CostReport } from './report.js';
import { formatBytes, formatCount, formatDollars, formatDuration } from './units.js';

/** The counters read (broker/metrics/), each by the names it may carry (first present wins). */
export const METRIC_NAMES = {
  bytesIn: ['sediment_bytes_in_total'],
  bytesOut: ['sediment_bytes_out_total'],
  copyBytes: ['sediment_remote_copy_bytes_total'],
  /** Segment copies started. */
  copyRequests: ['sediment_remote_copy_requests_total'],
  fetchBytes: ['sediment_remote_fetch_bytes_total'],
  fetchRequests: ['sediment_remote_fetch_requests_total'],
  /** Ranged GETs of data chunks (reads and read-ahead). */
  chunkFetches: ['sediment_remote_chunk_fetches_total'],
  /** Remote indexes fetched (GETs of index objects). */
  indexFetches: ['sediment_remote_index_cache_misses_total'],
  startTime: ['process_start_time_seconds'],
} as const;

type Counter = Exclude<keyof typeof METRIC_NAMES, 'startTime'>;
const COUNTERS: readonly Counter[] = ['bytesIn', 'bytesOut', 'copyBytes', 'copyRequests', 'fetchBytes', 'fetchRequests', 'chunkFetches', 'indexFetches'];

export interface MeasuredWorkload {
  /** Seconds the rates are averaged over. */
  readonly windowSeconds: number;
  readonly ingressBytesPerSec: number;
  readonly bytesOutPerSec?: number;
  readonly copyBytesPerSec?: number;
  /** Segments copied per second. */
  readonly copySegmentsPerSec?: number;
  readonly fetchBytesPerSec?: number;
  readonly fetchRequestsPerSec?: number;
  /** GETs per second: data chunks plus index objects (manifests are not counted by the broker). */
  readonly getRequestsPerSec?: number;
  /** Average size of the copied segments. */
  readonly segmentBytes?: number;
  /** Remote fetch bytes over bytes out. */
  readonly remoteReadShare?: number;
  /** Which metric name each counter was read from. */
  readonly metricNames: Readonly<Partial<Record<Counter, string>>>;
}

export interface MetricsProjection {
  readonly url: string;
  readonly measured: MeasuredWorkload;
}

export class MetricsUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'MetricsUnavailableError';
  }
}

export interface MeasureOptions {
  /** Scrape twice this many milliseconds apart; absent: once, averaged since the broker started. */
  readonly sampleMs?: number;
  readonly fetchImpl?: typeof fetch;
  readonly clock?: Clock;
  readonly sleep?: (ms: number) => Promise<void>;
}

async function scrape(url: string, fetchImpl: typeof fetch): Promise<Sample[]> {
  let res: Response;
  try {
    res = await fetchImpl(url, { signal: AbortSignal.timeout(10_000), headers: { accept: 'text/plain' } });
  } catch (e) {
    throw new MetricsUnavailableError(`cannot reach ${url}: ${(e as Error).message}`, { cause: e });
  }
  if (!res.ok) throw new MetricsUnavailableError(`${url} answered HTTP ${res.status}`);
  return parsePrometheusText(await res.text());
}

function counters(samples: readonly Sample[]): { values: Partial<Record<Counter, number>>; names: Partial<Record<Counter, string>> } {
  const values: Partial<Record<Counter, number>> = {};
  const names: Partial<Record<Counter, string>> = {};
  for (const c of COUNTERS) {
    const found = sumFirst(samples, METRIC_NAMES[c]);
    if (found !== undefined) {
      values[c] = found.value;
      names[c] = found.name;
    }
  }
  return { values, names };
}

/** Rates from counter values over a window (pure; exported for tests). */
export function measuredFrom(
  values: Readonly<Partial<Record<Counter, number>>>,
  before: Readonly<Partial<Record<Counter, number>>>,
  windowSeconds: number,
  names: Readonly<Partial<Record<Counter, string>>>,
): MeasuredWorkload {
  if (!(windowSeconds > 0)) throw new MetricsUnavailableError('the measuring window is empty (the broker just started?)');
  const rate = (c: Counter): number | undefined => {
    const v = values[c];
    if (v === undefined) return undefined;
    return Math.max(0, v - (before[c] ?? 0)) / windowSeconds;
  };
  const ingress = rate('bytesIn');
  if (ingress === undefined) throw new MetricsUnavailableError(`no bytes-in counter (looked for ${METRIC_NAMES.bytesIn.join(', ')})`);
  const copyBytes = rate('copyBytes');
  const copySegments = rate('copyRequests');
  const fetchBytes = rate('fetchBytes');
  const bytesOut = rate('bytesOut');
  const out: { -readonly [K in keyof MeasuredWorkload]: MeasuredWorkload[K] } = { windowSeconds, ingressBytesPerSec: ingress, metricNames: names };
  if (bytesOut !== undefined) out.bytesOutPerSec = bytesOut;
  if (copyBytes !== undefined) out.copyBytesPerSec = copyBytes;
  if (copySegments !== undefined) out.copySegmentsPerSec = copySegments;
  if (fetchBytes !== undefined) out.fetchBytesPerSec = fetchBytes;
  const fetchRequests = rate('fetchRequests');
  if (fetchRequests !== undefined) out.fetchRequestsPerSec = fetchRequests;
  const chunkFetches = rate('chunkFetches');
  if (chunkFetches !== undefined) out.getRequestsPerSec = chunkFetches + (rate('indexFetches') ?? 0);
  if (copyBytes !== undefined && copySegments !== undefined && copySegments > 0) out.segmentBytes = copyBytes / copySegments;
  if (fetchBytes !== undefined && bytesOut !== undefined && bytesOut > 0) out.remoteReadShare = Math.min(1, fetchBytes / bytesOut);
  return out;
}

export async function measureFromMetrics(url: string, options: MeasureOptions = {}): Promise<MetricsProjection> {
  const fetchImpl = options.fetchImpl ?? fetch;
  const clock = options.clock ?? systemClock;
  if (options.sampleMs !== undefined) {
    if (!(options.sampleMs > 0)) throw new MetricsUnavailableError('the sample period must be > 0');
    const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
    const t0 = clock.now();
    const first = counters(await scrape(url, fetchImpl));
    await sleep(options.sampleMs);
    const second = counters(await scrape(url, fetchImpl));
    const window = (clock.now() - t0) / 1000;
    return { url, measured: measuredFrom(second.values, first.values, window, second.names) };
  }
  const samples = await scrape(url, fetchImpl);
  const start = sumFirst(samples, METRIC_NAMES.startTime);
  if (start === undefined) {
    throw new MetricsUnavailableError(`${url} has no process_start_time_seconds: pass --sample <duration> to measure over a period instead`);
  }
  const { values, names } = counters(samples);
  return { url, measured: measuredFrom(values, {}, clock.now() / 1000 - start.value, names) };
}

/** The measured object store traffic of a month: copies, uploads and reads, with the request counts they imply. */
export interface MonthlyProjection {
  readonly ingressGiB: number;
  readonly copiedGiB: number;
  readonly segmentsCopied: number;
  readonly putRequests: number;
  readonly remoteReadGiB: number;
  readonly remoteReads: number;
  /** GETs counted by the broker (chunks and indexes). */
  readonly getRequests: number;
  /** Dollars, at the report's prices. */
  readonly putCost: number;
  readonly getCost: number;
  /** Bucket growth per month priced as one month of storage. */
  readonly addedStorageCost: number;
}

export function projectMonth(p: MetricsProjection, r: CostReport): MonthlyProjection {
  const m = p.measured;
  const prices = r.selection.prices;
  const segmentsCopied = (m.copySegmentsPerSec ?? 0) * MONTH_SECONDS;
  const segBytes = m.segmentBytes ?? r.workload.segmentBytes;
  const perSegment = segmentUpload(segBytes, { ...DEFAULT_WORKLOAD, ...r.workload });
  const putRequests = segmentsCopied * perSegment.putRequests;
  const copiedGiB = ((m.copyBytesPerSec ?? 0) * MONTH_SECONDS) / GIB;
  const getRequests = (m.getRequestsPerSec ?? 0) * MONTH_SECONDS;
  return {
    ingressGiB: (m.ingressBytesPerSec * MONTH_SECONDS) / GIB,
    copiedGiB,
    segmentsCopied,
    putRequests,
    remoteReadGiB: ((m.fetchBytesPerSec ?? 0) * MONTH_SECONDS) / GIB,
    remoteReads: (m.fetchRequestsPerSec ?? 0) * MONTH_SECONDS,
    getRequests,
    putCost: (putRequests * prices['object.putPer1000']) / 1000,
    getCost: (getRequests * prices['object.getPer1000']) / 1000,
    addedStorageCost: copiedGiB * prices['object.gbMonth'],
  };
}

export function formatProjection(p: MetricsProjection, r: CostReport): string {
  const m = p.measured;
  const month = projectMonth(p, r);
  const rate = (v: number | undefined): string => (v === undefined ? 'n/a' : `${formatBytes(v)}/s`);
  const lines = [
    `measured from ${p.url} over ${formatDuration(Math.round(m.windowSeconds) * 1000)}:`,
    `  bytes in ${rate(m.ingressBytesPerSec)}, bytes out ${rate(m.bytesOutPerSec)}`,
    `  remote copy ${rate(m.copyBytesPerSec)} in ${m.copySegmentsPerSec === undefined ? 'n/a' : `${(m.copySegmentsPerSec * 3600).toFixed(2)} segments/h`}` +
      `${m.segmentBytes === undefined ? '' : ` (average segment ${formatBytes(m.segmentBytes)})`}`,
    `  remote fetch ${rate(m.fetchBytesPerSec)}${m.remoteReadShare === undefined ? '' : ` (${(m.remoteReadShare * 100).toFixed(1)}% of bytes out)`}`,
    `projected to a month: ${formatBytes(month.ingressGiB * GIB)} in, ${formatBytes(month.copiedGiB * GIB)} copied in ${formatCount(month.segmentsCopied)} segments ` +
      `(${formatCount(month.putRequests)} PUT requests, ${formatDollars(month.putCost)}), ${formatBytes(month.remoteReadGiB * GIB)} read back ` +
      `(${formatCount(month.getRequests)} GET requests, ${formatDollars(month.getCost)}); ` +
      `the bucket grows by ${formatBytes(month.copiedGiB * GIB)} (${formatDollars(month.addedStorageCost)} per month of keeping it)`,
  ];
  return lines.join('\n') + '\n';
}

export function projectionJson(p: MetricsProjection, r: CostReport): unknown {
  const month = projectMonth(p, r);
  return { url: p.url, ...p.measured, month };
}
