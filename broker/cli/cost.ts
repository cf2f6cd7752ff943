// `sediment cost`: what a workload costs per month with no tiering and with
// local retentions of 1 hour, 1 day, 7 days (and any --local-retention), priced
// from a shipped or given price sheet. Prints a table, or JSON (--json), and
// can write a self-contained HTML report with charts (--html FILE).
// `--from-metrics URL` measures the workload from a running broker's
// Prometheus endpoint instead of --ingress, and shows the measured object
// store traffic projected to a month next to the model's prediction.
import { readFile, writeFile } from 'node:fs/promises';
import { systemClock, type Clock } from '../common/clock.js';
import { renderHtmlReport } from '../cost/html-report.js';
import { MetricsUnavailableError, measureFromMetrics, formatProjection, projectionJson, type MetricsProjection } from '../cost/from-metrics.js';
import { MetricsParseError } from '../cost/prometheus.js';
import type { Scenario, Workload } from '../cost/model.js';
import { DEFAULT_WORKLOAD, STANDARD_SCENARIOS, WorkloadError } from '../cost/model.js';
import type { PriceKey, PriceSheet } from '../cost/price-sheet.js';
import { BUILTIN_SHEETS, PRICE_KEYS, PriceSheetError, SHEET_ALIASES, builtinSheet, isPriceKey, parsePriceSheet, selectPrices } from '../cost/price-sheet.js';
import { buildReport, costJson, formatCostTable } from '../cost/report.js';
import { UnitError, formatDuration, parseDuration, parseRate, parseShare, parseSize } from '../cost/units.js';
import type { CliIo, OptionSpecs, ParsedArgs } from './args.js';
import { UsageError, parseArgs, parseIntStrict, parseKeyValue, processIo, usageText } from './args.js';

const SPECS: OptionSpecs = {
  ingress: { kind: 'value', arg: 'rate', help: 'bytes produced per second, e.g. 10MiB/s, 50MB/s, 2TB/day' },
  retention: { kind: 'value', arg: 'duration', help: 'total retention (retention.ms), e.g. 30d, 1y' },
  'local-retention': { kind: 'multi', arg: 'duration', help: 'another local (hot) retention to price besides 1h, 1d and 7d' },
  'replication-factor': { kind: 'value', arg: 'n', help: `copies on broker disks (default ${DEFAULT_WORKLOAD.replicationFactor})` },
  partitions: { kind: 'value', arg: 'n', help: `partitions over all topics (default ${DEFAULT_WORKLOAD.partitions})` },
  'segment-size': { kind: 'value', arg: 'size', help: 'segment.bytes (default 1GiB)' },
  'segment-ms': { kind: 'value', arg: 'duration', help: 'segment.ms (default 7d)' },
  'remote-read-share': { kind: 'value', arg: 'share', help: `share of consumed bytes read below the local tier (default ${DEFAULT_WORKLOAD.remoteReadShare})` },
  'read-fanout': { kind: 'value', arg: 'n', help: `times each byte is consumed (default ${DEFAULT_WORKLOAD.readFanout})` },
  'chunk-size': { kind: 'value', arg: 'size', help: 'rsm.config.chunk.size.bytes (default 1MiB)' },
  'chunks-per-get': { kind: 'value', arg: 'n', help: 'rsm.config.chunk.cache.fetch.chunks: chunks per read-ahead GET (default 8)' },
  'multipart-threshold': { kind: 'value', arg: 'size', help: 'rsm.config.s3.multipart.threshold.bytes (default 32MiB)' },
  'part-size': { kind: 'value', arg: 'size', help: 'rsm.config.s3.part.size.bytes (default 8MiB)' },
  'disk-headroom': { kind: 'value', arg: 'share', help: `share of each disk kept free (default ${DEFAULT_WORKLOAD.diskHeadroom})` },
  'txn-share': { kind: 'value', arg: 'share', help: 'share of segments with aborted transactions (default 0)' },
  'replica-moves': { kind: 'value', arg: 'share', help: `share of local replica data moved between brokers per month (default ${DEFAULT_WORKLOAD.replicaMoveShare})` },
  'consumer-in-rack-share': {
    kind: 'value',
    arg: 'share',
    help: "share of consumed bytes read in the consumer's own zone (default 1/3: leaders over three zones; 1: fetching from the closest replica, KIP-392, with a replica in every zone)",
  },
  'batch-size': { kind: 'value', arg: 'size', help: 'average record batch size (default 16KiB)' },
  sheet: { kind: 'value', arg: 'name|file', help: `price sheet: ${Object.keys(SHEET_ALIASES).join(', ')} (default aws), a sheet id, or a JSON file` },
  'storage-class': { kind: 'value', arg: 'id', help: "object storage class of the sheet (default: the sheet's)" },
  disk: { kind: 'value', arg: 'id', help: "broker disk of the sheet (default: the sheet's)" },
  price: { kind: 'multi', arg: 'key=value', help: `override a price: ${PRICE_KEYS.join(', ')}` },
  'list-sheets': { kind: 'flag', help: 'print the shipped price sheets and exit' },
  json: { kind: 'flag', help: 'print JSON: one object per scenario, dollars per month' },
  html: { kind: 'value', arg: 'file', help: 'also write a self-contained HTML report with charts' },
  'from-metrics': { kind: 'value', arg: 'url', help: "measure the workload from a broker's Prometheus endpoint (e.g. http://127.0.0.1:9644/metrics)" },
  sample: { kind: 'value', arg: 'duration', help: 'with --from-metrics: scrape twice this far apart (default: once, averaged since the broker started)' },
  help: { kind: 'flag', help: 'show this help' },
};

const USAGE = usageText('usage: sediment cost --ingress <rate> --retention <duration> [options]\n       sediment cost --from-metrics <url> --retention <duration> [options]', SPECS);

function opt<T>(a: ParsedArgs, name: string, parse: (s: string, what: string) => T): T | undefined {
  const v = a.value(name);
  return v === undefined ? undefined : parse(v, `--${name}`);
}

async function loadSheet(name: string | undefined): Promise<PriceSheet> {
  const n = name ?? 'aws';
  const builtin = builtinSheet(n);
  if (builtin !== undefined) return builtin;
  if (!n.endsWith('.json')) {
    throw new UsageError(`unknown price sheet '${n}': use one of ${[...Object.keys(SHEET_ALIASES), ...BUILTIN_SHEETS.keys()].join(', ')}, or a .json file`);
  }
  let text: string;
  try {
    text = await readFile(n, 'utf8');
  } catch (e) {
    throw new UsageError(`cannot read price sheet ${n}: ${(e as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new UsageError(`price sheet ${n} is not JSON: ${(e as Error).message}`);
  }
  return parsePriceSheet(json, n);
}

function priceOverrides(a: ParsedArgs): Partial<Record<PriceKey, number>> {
  const out: Partial<Record<PriceKey, number>> = {};
  for (const kv of a.all('price')) {
    const [k, v] = parseKeyValue(kv, '--price');
    if (!isPriceKey(k)) throw new UsageError(`--price: unknown key '${k}'; known: ${PRICE_KEYS.join(', ')}`);
    const n = Number(v);
    if (v.trim() === '' || !Number.isFinite(n) || n < 0) throw new UsageError(`--price ${k}: want a number >= 0, got '${v}'`);
    out[k] = n;
  }
  return out;
}

/** What --from-metrics measured, used where the matching option is absent. */
export interface MeasuredInputs {
  readonly ingressBytesPerSec?: number;
  readonly segmentBytes?: number;
  readonly remoteReadShare?: number;
}

/** The workload from the options, falling back on measured values, then on the defaults. */
export function workloadFromArgs(a: ParsedArgs, measured: MeasuredInputs = {}): Workload {
  const ingress = opt(a, 'ingress', parseRate) ?? measured.ingressBytesPerSec;
  if (ingress === undefined) throw new UsageError('--ingress is required (or --from-metrics)');
  const retentionMs = opt(a, 'retention', parseDuration);
  if (retentionMs === undefined) throw new UsageError('--retention is required');
  const d = DEFAULT_WORKLOAD;
  return {
    ingressBytesPerSec: ingress,
    retentionMs,
    replicationFactor: opt(a, 'replication-factor', (s, w) => parseIntStrict(s, w, 1, 100)) ?? d.replicationFactor,
    partitions: opt(a, 'partitions', (s, w) => parseIntStrict(s, w, 1, 10_000_000)) ?? d.partitions,
    segmentBytes: opt(a, 'segment-size', parseSize) ?? measured.segmentBytes ?? d.segmentBytes,
    segmentMs: opt(a, 'segment-ms', parseDuration) ?? d.segmentMs,
    remoteReadShare: opt(a, 'remote-read-share', parseShare) ?? measured.remoteReadShare ?? d.remoteReadShare,
    readFanout: opt(a, 'read-fanout', parseShare) ?? d.readFanout,
    chunkSizeBytes: opt(a, 'chunk-size', parseSize) ?? d.chunkSizeBytes,
    chunksPerGet: opt(a, 'chunks-per-get', (s, w) => parseIntStrict(s, w, 1, 1024)) ?? d.chunksPerGet,
    multipartThresholdBytes: opt(a, 'multipart-threshold', parseSize) ?? d.multipartThresholdBytes,
    partSizeBytes: opt(a, 'part-size', parseSize) ?? d.partSizeBytes,
    diskHeadroom: opt(a, 'disk-headroom', parseShare) ?? d.diskHeadroom,
    txnIndexShare: opt(a, 'txn-share', parseShare) ?? d.txnIndexShare,
    indexIntervalBytes: d.indexIntervalBytes,
    batchBytes: opt(a, 'batch-size', parseSize) ?? d.batchBytes,
    orphanSweepIntervalMs: d.orphanSweepIntervalMs,
    orphanFullSweepIntervalMs: d.orphanFullSweepIntervalMs,
    replicaMoveShare: opt(a, 'replica-moves', parseShare) ?? d.replicaMoveShare,
    consumerInRackShare: opt(a, 'consumer-in-rack-share', parseShare) ?? d.consumerInRackShare,
  };
}

export function scenariosFromArgs(a: ParsedArgs): Scenario[] {
  const extra = a.all('local-retention').map((t) => {
    const ms = parseDuration(t, '--local-retention');
    if (!(ms > 0)) throw new UsageError(`--local-retention must be > 0, got '${t}'`);
    return { name: `local ${formatDuration(ms)}`, localRetentionMs: ms };
  });
  return [...STANDARD_SCENARIOS, ...extra];
}

function listSheets(): string {
  const out: string[] = [];
  for (const s of BUILTIN_SHEETS.values()) {
    const alias = Object.entries(SHEET_ALIASES).find(([, id]) => id === s.id)?.[0];
    out.push(`${s.id}${alias === undefined ? '' : ` (${alias})`}: ${s.provider} ${s.region}, recorded ${s.date}`);
    for (const [id, c] of Object.entries(s.storageClasses)) {
      out.push(`  storage class ${id}${id === s.defaultStorageClass ? ' (default)' : ''}: ${c.name}, $${c.gbMonth}/GiB-month, PUT $${c.putPer1000}/1000, GET $${c.getPer1000}/1000`);
    }
    for (const [id, d] of Object.entries(s.disks)) out.push(`  disk ${id}${id === s.defaultDisk ? ' (default)' : ''}: ${d.name}, $${d.gbMonth}/GiB-month`);
    out.push(`  cross-AZ $${s.network.crossAzPerGB}/GiB; sources: ${s.sources.join(' ')}`);
  }
  return out.join('\n') + '\n';
}

export async function runCost(args: readonly string[], io: CliIo = processIo, fetchImpl: typeof fetch = fetch, clock: Clock = systemClock): Promise<number> {
  let a: ParsedArgs;
  try {
    a = parseArgs(args, SPECS);
  } catch (e) {
    if (e instanceof UsageError) {
      io.err(`sediment cost: ${e.message}\n${USAGE}`);
      return 1;
    }
    throw e;
  }
  if (a.has('help')) {
    io.out(USAGE);
    return 0;
  }
  if (a.has('list-sheets')) {
    io.out(listSheets());
    return 0;
  }
  try {
    const sheet = await loadSheet(a.value('sheet'));
    const storageClass = a.value('storage-class');
    const disk = a.value('disk');
    const selection = selectPrices(sheet, {
      ...(storageClass === undefined ? {} : { storageClass }),
      ...(disk === undefined ? {} : { disk }),
      overrides: priceOverrides(a),
    });
    let projection: MetricsProjection | undefined;
    const metricsUrl = a.value('from-metrics');
    if (metricsUrl !== undefined) {
      const sampleMs = opt(a, 'sample', parseDuration);
      projection = await measureFromMetrics(metricsUrl, { ...(sampleMs === undefined ? {} : { sampleMs }), fetchImpl, clock });
    } else if (a.has('sample')) {
      throw new UsageError('--sample goes with --from-metrics');
    }
    const workload = workloadFromArgs(a, projection?.measured);
    const report = buildReport(workload, scenariosFromArgs(a), selection);
    const html = a.value('html');
    if (html !== undefined) await writeFile(html, renderHtmlReport(report));
    if (a.has('json')) {
      const scenarios = costJson(report);
      io.out(JSON.stringify(projection === undefined ? scenarios : { scenarios, measured: projectionJson(projection, report) }, null, 2) + '\n');
    } else {
      if (projection !== undefined) io.out(formatProjection(projection, report) + '\n');
      io.out(formatCostTable(report));
      if (html !== undefined) io.out(`\nHTML report written to ${html}\n`);
    }
    return 0;
  } catch (e) {
    if (
      e instanceof UsageError ||
      e instanceof UnitError ||
      e instanceof WorkloadError ||
      e instanceof PriceSheetError ||
      e instanceof MetricsUnavailableError ||
      e instanceof MetricsParseError
    ) {
      io.err(`sediment cost: ${e.message}\n`);
      return 1;
    }
    throw e;
  }
}
