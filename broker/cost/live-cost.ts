// The cost report for the live workload: GET /v1/cost on the broker's HTTP
// listener (the console's cost panel reads it). The workload comes from the
// broker itself: the ingress from its bytes-in counter since the route was
// created (at broker start), the partitions, retention and segment size from
// its user topics, and the tiered topics' configured local retention as one
// more scenario. Query parameters override: sheet, storageClass, disk,
// retention, replicationFactor (default 1: one Sediment broker),
// remoteReadShare, and consumerInRackShare (consumer reads in their own zone).
import type { Clock } from '../common/clock.js';
import { systemClock } from '../common/clock.js';
import type { LogConfig } from '../../metadata/log-config.js';
import { METRIC_NAMES } from './from-metrics.js';
import type { Scenario, Workload } from './model.js';
import { DAY_MS, DEFAULT_WORKLOAD, STANDARD_SCENARIOS, WorkloadError } from './model.js';
import { PriceSheetError, builtinSheet, selectPrices } from './price-sheet.js';
import { parsePrometheusText, sumFirst } from './prometheus.js';
import { buildReport, costJson } from './report.js';
import { UnitError, formatDuration, parseDuration, parseShare } from './units.js';

/** One user topic as the cost model needs it. */
export interface LiveTopic {
  readonly name: string;
  readonly partitions: number;
  readonly config: Pick<LogConfig, 'retentionMs' | 'segmentBytes' | 'segmentMs' | 'indexIntervalBytes' | 'remoteStorageEnable' | 'localRetentionMs'>;
}

export interface LiveCostSource {
  /** The broker's Prometheus text (its own registry). */
  metricsText(): Promise<string>;
  /** The user topics (internal ones left out). */
  topics(): readonly LiveTopic[];
  /** rsm.config.* values the model reads. */
  readonly rsm?: { readonly chunkSizeBytes: number; readonly chunksPerGet: number; readonly multipartThresholdBytes: number; readonly partSizeBytes: number };
  readonly clock?: Clock;
}

export interface LiveCostResponse {
  readonly status: number;
  readonly contentType: string;
  readonly body: string;
}

const JSON_TYPE = 'application/json; charset=utf-8';

/** Retention when no topic has a finite one: a year. */
const UNLIMITED_RETENTION_MS = 365 * DAY_MS;

/** The model's workload from the live topics and the measured ingress (pure). */
export function liveWorkload(topics: readonly LiveTopic[], ingressBytesPerSec: number, rsm?: LiveCostSource['rsm']): { workload: Workload; configuredLocal: number[] } {
  const partitions = topics.reduce((a, t) => a + t.partitions, 0);
  const finite = topics.map((t) => t.config.retentionMs).filter((r) => r > 0);
  const retentionMs = finite.length === 0 ? (topics.length === 0 ? 7 * DAY_MS : UNLIMITED_RETENTION_MS) : Math.max(...finite);
  // Partition-weighted averages: a topic with more partitions holds more of the segments.
  const weighted = (f: (t: LiveTopic) => number, fallback: number): number =>
    partitions === 0 ? fallback : topics.reduce((a, t) => a + f(t) * t.partitions, 0) / partitions;
  const configuredLocal = [
    ...new Set(
      topics
        .filter((t) => t.config.remoteStorageEnable === true)
        .map((t) => t.config.localRetentionMs ?? -2)
        .filter((ms) => ms > 0 && ms < retentionMs),
    ),
  ];
  return {
    workload: {
      ...DEFAULT_WORKLOAD,
      ingressBytesPerSec,
      retentionMs,
      replicationFactor: 1,
      partitions: Math.max(1, partitions),
      segmentBytes: weighted((t) => t.config.segmentBytes, DEFAULT_WORKLOAD.segmentBytes),
      segmentMs: weighted((t) => t.config.segmentMs, DEFAULT_WORKLOAD.segmentMs),
      indexIntervalBytes: weighted((t) => t.config.indexIntervalBytes, DEFAULT_WORKLOAD.indexIntervalBytes),
      ...(rsm === undefined ? {} : { chunkSizeBytes: rsm.chunkSizeBytes, chunksPerGet: rsm.chunksPerGet, multipartThresholdBytes: rsm.multipartThresholdBytes, partSizeBytes: rsm.partSizeBytes }),
    },
    configuredLocal,
  };
}

/** A GET handler for /v1/cost (query parameters as URLSearchParams). */
export function createLiveCostRoute(source: LiveCostSource): (query: URLSearchParams) => Promise<LiveCostResponse> {
  const clock = source.clock ?? systemClock;
  const since = clock.now();
  return async (query) => {
    try {
      const samples = parsePrometheusText(await source.metricsText());
      const windowSeconds = Math.max(1, (clock.now() - since) / 1000);
      const bytesIn = sumFirst(samples, METRIC_NAMES.bytesIn)?.value ?? 0;
      const bytesOut = sumFirst(samples, METRIC_NAMES.bytesOut)?.value ?? 0;
      const fetched = sumFirst(samples, METRIC_NAMES.fetchBytes)?.value ?? 0;
      const { workload: base, configuredLocal } = liveWorkload(source.topics(), bytesIn / windowSeconds, source.rsm);
      const num = (name: string, parse: (s: string, what: string) => number): number | undefined => {
        const v = query.get(name);
        return v === null || v === '' ? undefined : parse(v, name);
      };
      const rf = num('replicationFactor', (s) => Number(s));
      const workload: Workload = {
        ...base,
        retentionMs: num('retention', parseDuration) ?? base.retentionMs,
        replicationFactor: rf ?? base.replicationFactor,
        remoteReadShare: num('remoteReadShare', parseShare) ?? (bytesOut > 0 ? Math.min(1, fetched / bytesOut) : base.remoteReadShare),
        consumerInRackShare: num('consumerInRackShare', parseShare) ?? base.consumerInRackShare,
      };
      const scenarios: Scenario[] = [
        ...STANDARD_SCENARIOS,
        ...configuredLocal.map((ms) => ({ name: `configured local ${formatDuration(ms)}`, localRetentionMs: ms })),
      ];
      const sheet = builtinSheet(query.get('sheet') ?? 'aws');
      if (sheet === undefined) throw new PriceSheetError(`unknown price sheet '${query.get('sheet')}'`);
      const storageClass = query.get('storageClass');
      const disk = query.get('disk');
      const selection = selectPrices(sheet, { ...(storageClass === null ? {} : { storageClass }), ...(disk === null ? {} : { disk }) });
      const report = buildReport(workload, scenarios, selection);
      const body = {
        measured: { windowSeconds, ingressBytesPerSec: workload.ingressBytesPerSec, bytesOutPerSec: bytesOut / windowSeconds, remoteFetchBytesPerSec: fetched / windowSeconds },
        workload: {
          partitions: workload.partitions,
          retentionMs: workload.retentionMs,
          segmentBytes: workload.segmentBytes,
          replicationFactor: workload.replicationFactor,
          remoteReadShare: workload.remoteReadShare,
          consumerInRackShare: workload.consumerInRackShare,
        },
        priceSheet: { id: sheet.id, date: sheet.date, storageClass: selection.storageClass, disk: selection.disk, sources: sheet.sources },
        scenarios: costJson(report),
      };
      return { status: 200, contentType: JSON_TYPE, body: JSON.stringify(body) };
    } catch (e) {
      if (e instanceof UnitError || e instanceof WorkloadError || e instanceof PriceSheetError) {
        return { status: 400, contentType: JSON_TYPE, body: JSON.stringify({ error: e.message }) };
      }
      throw e;
    }
  };
}

/** The user topics of a broker in the shape the route needs, from the topic store's records and effective log configs. */
export function liveTopicsFrom(
  records: ReadonlyArray<{ readonly name: string; readonly partitionCount: number }>,
  logConfig: (name: string) => LiveTopic['config'],
  isInternal: (name: string) => boolean,
): LiveTopic[] {
  return records.filter((r) => !isInternal(r.name)).map((r) => ({ name: r.name, partitions: r.partitionCount, config: logConfig(r.name) }));
}
