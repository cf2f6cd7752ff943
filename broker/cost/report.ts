// The cost report as the terminal table and as JSON. Pure: strings in, strings out.
import { formatTable } from '../common/text-table.js';
import type { ComponentName, RetentionPoint, ScenarioCost, Workload } from './model.js';
import { COMPONENT_LABELS, COMPONENT_NAMES, GIB, costOverRetention, costScenarios, crossAzGiB, retentionSeries } from './model.js';
import type { Scenario } from './model.js';
import type { PriceSelection } from './price-sheet.js';
import { formatBytes, formatCount, formatDollars, formatDuration } from './units.js';
import type { TierBand } from './volume-tiers.js';

export interface CostReport {
  readonly workload: Workload;
  readonly selection: PriceSelection;
  readonly scenarios: readonly ScenarioCost[];
  readonly overRetention: readonly RetentionPoint[];
  /** Tiered scenarios dropped because their local retention is not below the total retention. */
  readonly skipped: readonly Scenario[];
}

export function buildReport(workload: Workload, scenarios: readonly Scenario[], selection: PriceSelection): CostReport {
  const costs = costScenarios(workload, scenarios, selection.prices);
  const kept = new Set(costs.map((c) => c.scenario));
  return {
    workload,
    selection,
    scenarios: costs,
    overRetention: costOverRetention(workload, scenarios, selection.prices, retentionSeries(workload.retentionMs)),
    skipped: scenarios.filter((s) => s.localRetentionMs !== null && !kept.has(s.name)),
  };
}

/** One line per input, as the table's preamble (and the HTML report's). */
export function describeInputs(r: CostReport): Array<[string, string]> {
  const w = r.workload;
  const s = r.selection;
  return [
    ['ingress', `${formatBytes(w.ingressBytesPerSec)}/s (${formatBytes(w.ingressBytesPerSec * 86_400)}/day)`],
    ['total retention', formatDuration(w.retentionMs)],
    ['replication factor', String(w.replicationFactor)],
    ['partitions', String(w.partitions)],
    ['segment size', `${formatBytes(w.segmentBytes)} (segment.ms ${formatDuration(w.segmentMs)})`],
    ['reads', `fan-out ${w.readFanout}, ${(w.remoteReadShare * 100).toFixed(1)}% of consumed bytes below the local tier, chunks of ${formatBytes(w.chunkSizeBytes)}, ${w.chunksPerGet} per read-ahead GET`],
    ['uploads', `multipart above ${formatBytes(w.multipartThresholdBytes)}, parts of ${formatBytes(w.partSizeBytes)}`],
    ['disk headroom', `${(w.diskHeadroom * 100).toFixed(0)}% kept free`],
    ['replica moves', `${(w.replicaMoveShare * 100).toFixed(0)}% of local replica data per month`],
    ['consumer zones', `${(w.consumerInRackShare * 100).toFixed(0)}% of consumed bytes read in the consumer's own zone`],
    [
      'prices',
      `${s.sheet.provider} ${s.sheet.region}: ${s.sheet.storageClasses[s.storageClass]?.name ?? s.storageClass}, ${s.sheet.disks[s.disk]?.name ?? s.disk} ` +
        `(sheet ${s.sheet.id}, ${s.sheet.date}${s.overridden.length > 0 ? `; overridden: ${s.overridden.join(', ')}` : ''})`,
    ],
  ];
}

/** A price per GiB-month, to the tenth of a cent it is quoted in. */
export function formatRate(dollarsPerGiB: number): string {
  return `$${Number(dollarsPerGiB.toFixed(4))}`;
}

/** "first 50.0 TiB", "next 450 TiB", "over 500 TiB". */
export function tierLabel(band: TierBand, index: number): string {
  if (band.toGB === null) return index === 0 ? 'every GiB' : `over ${formatBytes(band.fromGB * GIB)}`;
  return index === 0 ? `first ${formatBytes(band.toGB * GIB)}` : `next ${formatBytes((band.toGB - band.fromGB) * GIB)}`;
}

export interface VolumeTierView {
  /** The schedule in one line: "first 50.0 TiB $0.023, next 450 TiB $0.022, over 500 TiB $0.021 per GiB-month". */
  readonly schedule: string;
  readonly bands: readonly TierBand[];
  readonly header: readonly string[];
  /** Per tiered scenario: the volume and cost in each tier, and the storage total. */
  readonly rows: ReadonlyArray<readonly string[]>;
}

/** The object storage volume tiers and how each scenario's bucket falls in them; undefined when storage is priced flat. */
export function volumeTierView(r: CostReport): VolumeTierView | undefined {
  const priced = r.scenarios.filter((c) => c.localRetentionMs !== null && c.objectStorageBands.length > 0);
  const first = priced[0];
  if (first === undefined) return undefined;
  const bands = first.objectStorageBands;
  const schedule = `${bands.map((b, i) => `${tierLabel(b, i)} ${formatRate(b.gbMonth)}`).join(', ')} per GiB-month`;
  const header = ['SCENARIO', 'BILLED', ...bands.map((b, i) => tierLabel(b, i).replace(/^[a-z ]+/, (w) => w.toUpperCase())), 'OBJECT STORAGE'];
  const rows = priced.map((c) => [
    c.scenario,
    formatBytes(c.quantities.billedObjectGiBMonths * GIB),
    ...c.objectStorageBands.map((b) => (b.gb > 0 ? `${formatBytes(b.gb * GIB)} ${formatDollars(b.cost)}` : '-')),
    formatDollars(c.components.objectStorage),
  ]);
  return { schedule, bands, header, rows };
}

function money(c: ScenarioCost, k: ComponentName): string {
  return formatDollars(c.components[k]);
}

/** The terminal report: inputs, cost per component and scenario, then the counted quantities. */
export function formatCostTable(r: CostReport): string {
  const inputs = describeInputs(r);
  const width = Math.max(...inputs.map(([k]) => k.length));
  const head = inputs.map(([k, v]) => `${k.padEnd(width)}  ${v}`).join('\n');
  const costHeader = ['SCENARIO', ...COMPONENT_NAMES.map((k) => COMPONENT_LABELS[k].toUpperCase()), 'TOTAL/MONTH', 'SAVING'];
  const costRows = r.scenarios.map((c) => [
    c.scenario,
    ...COMPONENT_NAMES.map((k) => money(c, k)),
    formatDollars(c.total),
    c.localRetentionMs === null ? '-' : `${formatDollars(c.savingVsNoTiering)} (${(c.savingShare * 100).toFixed(0)}%)`,
  ]);
  const qHeader = ['SCENARIO', 'LOCAL/REPLICA', 'DISK PROVISIONED', 'IN BUCKET', 'SEGMENTS/MONTH', 'PUT', 'LIST', 'DELETE', 'GET', 'CROSS-AZ'];
  const qRows = r.scenarios.map((c) => {
    const q = c.quantities;
    return [
      c.scenario,
      formatBytes(q.localBytes),
      formatBytes(q.provisionedDiskGiB * GIB),
      formatBytes(q.remoteBytes),
      formatCount(q.segmentsPerMonth),
      formatCount(q.putRequests),
      formatCount(q.listRequests),
      formatCount(q.deleteRequests),
      formatCount(q.getRequests),
      formatBytes(crossAzGiB(q) * GIB),
    ];
  });
  const skipped =
    r.skipped.length === 0 ? '' : `\nskipped (local retention not below the total retention): ${r.skipped.map((s) => s.name).join(', ')}\n`;
  const tiers = volumeTierView(r);
  const tierText =
    tiers === undefined
      ? ''
      : `\nobject storage by volume tier (${r.selection.sheet.storageClasses[r.selection.storageClass]?.name ?? r.selection.storageClass}: ${tiers.schedule})\n${formatTable(tiers.header, tiers.rows)}`;
  const closest = closestReplicaNote(r);
  return `${head}\n\ncost per month (USD)\n${formatTable(costHeader, costRows)}${closest === null ? '' : `${closest}\n`}\nper month\n${formatTable(qHeader, qRows)}${tierText}${skipped}`;
}

/**
 * What fetching from the closest replica (KIP-392) saves: the consumer reads
 * that cross zones, the same in every scenario; null when none do or cross-zone
 * traffic is free.
 */
export function closestReplicaNote(r: CostReport): string | null {
  const first = r.scenarios[0];
  const price = r.selection.prices['network.crossAzPerGB'];
  if (first === undefined || first.quantities.consumerCrossAzGiB <= 0 || price <= 0) return null;
  const gib = first.quantities.consumerCrossAzGiB;
  return `consumer reads across zones: ${formatBytes(gib * GIB)} a month (${formatDollars(gib * price)}), saved by fetching from the closest replica (KIP-392: --consumer-in-rack-share 1)`;
}

/** `--json`: one object per scenario with its components and `total`, in dollars per month. */
export function costJson(r: CostReport): unknown[] {
  const round = (v: number): number => Math.round(v * 100) / 100;
  return r.scenarios.map((c) => ({
    scenario: c.scenario,
    localRetentionMs: c.localRetentionMs,
    components: Object.fromEntries(COMPONENT_NAMES.map((k) => [k, round(c.components[k])])),
    total: round(c.total),
    savingVsNoTiering: round(c.savingVsNoTiering),
    savingPercent: Math.round(c.savingShare * 1000) / 10,
    quantities: {
      localBytesPerReplica: Math.round(c.quantities.localBytes),
      provisionedDiskGiB: round(c.quantities.provisionedDiskGiB),
      remoteBytes: Math.round(c.quantities.remoteBytes),
      billedObjectGiBMonths: round(c.quantities.billedObjectGiBMonths),
      segmentsPerMonth: Math.round(c.quantities.segmentsPerMonth),
      objectsPerSegment: c.quantities.objectsPerSegment,
      putRequests: Math.round(c.quantities.putRequests),
      listRequests: Math.round(c.quantities.listRequests),
      deleteRequests: Math.round(c.quantities.deleteRequests),
      getRequests: Math.round(c.quantities.getRequests),
      remoteReadGiB: round(c.quantities.remoteReadGiB),
      replicationGiB: round(c.quantities.replicationGiB),
      replicaMoveGiB: round(c.quantities.replicaMoveGiB),
      consumerCrossAzGiB: round(c.quantities.consumerCrossAzGiB),
    },
    currency: r.selection.sheet.currency,
    priceSheet: { id: r.selection.sheet.id, date: r.selection.sheet.date, storageClass: r.selection.storageClass, disk: r.selection.disk },
  }));
}
