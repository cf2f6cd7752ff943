// The cost model behind `sediment cost`: what a month of a workload costs with
// no tiering and with a given local (hot) retention, priced from a price sheet.
// Pure arithmetic, no I/O. The request counts follow what Sediment's tiered
// storage actually does (remote-log/objects/object-remote-storage.ts, s3/s3-object-store.ts,
// chunk-cache.ts, remote-log-manager.ts):
//   copy of one segment: DELETE of a previous manifest, then PUTs of the data
//     (one PutObject, or above rsm.config.s3.multipart.threshold.bytes
//     CreateMultipartUpload + one UploadPart per rsm.config.s3.part.size.bytes
//     + CompleteMultipartUpload), offset index, time index, transaction index
//     (only when the segment has aborted transactions), producer snapshot,
//     leader-epoch checkpoint, and last the manifest;
//   expiration of one segment: 7 DELETEs (manifest first, then every kind) and
//     a ListMultipartUploads of the data key (uploads a crash left open are aborted);
//   orphan sweep (remote-log/tasks/orphan-sweeper.ts): every 5 minutes a LIST of
//     each partition's keys after its highest finished segment (one page: a
//     copy finishes before its partition's sweep runs); once a day (and after
//     each start) a LIST of every partition's whole prefix and one of the whole
//     bucket instead (1,000 keys per LIST page);
//   remote read of a segment from its start: one ranged GET for its first chunk
//     (the reader positions on a batch header), then read-ahead GETs of
//     rsm.config.chunk.cache.fetch.chunks chunks each, plus the manifest and the
//     offset index of each segment read (cold caches).
// Cross-zone traffic: replication to RF - 1 followers, replica moves, and the
//   consumed bytes a consumer reads from a broker in another zone: all but
//   consumerInRackShare of them. Consumers reading from leaders spread over
//   three zones read a third in their own zone; fetching from the closest
//   replica (KIP-392: replica.selector.class, client.rack) with a replica in
//   every consumer's zone reads all of them there.
// Sizes: GiB = 2^30 bytes; a month is 730 hours, as cloud price lists use.
import type { EffectivePrices } from './price-sheet.js';
import { tieredStorageCost, type TierBand } from './volume-tiers.js';

export const GIB = 1024 ** 3;
export const MIB = 1024 ** 2;
export const HOURS_PER_MONTH = 730;
export const MONTH_SECONDS = HOURS_PER_MONTH * 3600;
export const MONTH_MS = MONTH_SECONDS * 1000;
export const HOUR_MS = 3_600_000;
export const DAY_MS = 24 * HOUR_MS;

/** S3 lists at most 1,000 keys per ListObjectsV2 page. */
export const LIST_PAGE_KEYS = 1000;
/** Objects of a segment the expiration deletes (every kind, present or not). */
export const DELETES_PER_EXPIRED_SEGMENT = 7;
/** The ListMultipartUploads of the data key with which a deletion aborts uploads left open. */
export const UPLOAD_LISTS_PER_EXPIRED_SEGMENT = 1;
/** Offset index entry: 4-byte relative offset + 4-byte position. */
export const OFFSET_INDEX_ENTRY_BYTES = 8;
/** Time index entry: 8-byte timestamp + 4-byte relative offset. */
export const TIME_INDEX_ENTRY_BYTES = 12;
/** Manifest without its chunk CRCs, leader-epoch checkpoint and an empty producer snapshot, about. */
export const SMALL_OBJECTS_BASE_BYTES = 700;
/** Each data chunk adds its CRC (decimal, comma) to the manifest, about. */
export const MANIFEST_BYTES_PER_CHUNK = 11;

export interface Workload {
  /** Bytes produced per second (before replication), all partitions together. */
  readonly ingressBytesPerSec: number;
  /** retention.ms: how long data is kept over both tiers. */
  readonly retentionMs: number;
  /** Copies of each partition on broker disks. */
  readonly replicationFactor: number;
  readonly partitions: number;
  /** segment.bytes. */
  readonly segmentBytes: number;
  /** segment.ms: a partition too slow to fill a segment rolls it after this long. */
  readonly segmentMs: number;
  /** Share (0..1) of consumed bytes that are read below the local tier (tiered scenarios). */
  readonly remoteReadShare: number;
  /** How many times each produced byte is consumed (consumer groups reading everything). */
  readonly readFanout: number;
  /** rsm.config.chunk.size.bytes: the unit of ranged GETs. */
  readonly chunkSizeBytes: number;
  /** rsm.config.chunk.cache.fetch.chunks: chunks one read-ahead GET carries. */
  readonly chunksPerGet: number;
  /** rsm.config.s3.multipart.threshold.bytes. */
  readonly multipartThresholdBytes: number;
  /** rsm.config.s3.part.size.bytes. */
  readonly partSizeBytes: number;
  /** Share (0..<1) of each broker disk kept free. */
  readonly diskHeadroom: number;
  /** Share (0..1) of segments holding aborted transactions (they carry a transaction index object). */
  readonly txnIndexShare: number;
  /** index.interval.bytes. */
  readonly indexIntervalBytes: number;
  /** Average record batch size as produced (sets how many index entries a segment has). */
  readonly batchBytes: number;
  /** How often each partition's new objects are listed for orphans. */
  readonly orphanSweepIntervalMs: number;
  /** How often the sweep lists every object instead (rsm.config.orphan.full.sweep.interval.ms). */
  readonly orphanFullSweepIntervalMs: number;
  /** Share of the replicated local data copied to another broker per month (replacements, reassignments). */
  readonly replicaMoveShare: number;
  /** Share (0..1) of consumed bytes read from a broker in the consumer's own zone (the rest crosses zones). */
  readonly consumerInRackShare: number;
}

export const DEFAULT_WORKLOAD: Omit<Workload, 'ingressBytesPerSec' | 'retentionMs'> = {
  replicationFactor: 3,
  partitions: 12,
  segmentBytes: 1024 * MIB,
  segmentMs: 7 * DAY_MS,
  remoteReadShare: 0.05,
  readFanout: 1,
  chunkSizeBytes: MIB,
  chunksPerGet: 8,
  multipartThresholdBytes: 32 * MIB,
  partSizeBytes: 8 * MIB,
  diskHeadroom: 0.3,
  txnIndexShare: 0,
  indexIntervalBytes: 4096,
  batchBytes: 16 * 1024,
  orphanSweepIntervalMs: 5 * 60_000,
  orphanFullSweepIntervalMs: DAY_MS,
  replicaMoveShare: 0.1,
  // Leaders over three zones and no replica.selector.class: one read in three stays in the consumer's zone.
  consumerInRackShare: 1 / 3,
};

/** A local retention to price; null = no tiering (everything on broker disks for the whole retention). */
export interface Scenario {
  readonly name: string;
  readonly localRetentionMs: number | null;
}

export const STANDARD_SCENARIOS: readonly Scenario[] = [
  { name: 'no tiering', localRetentionMs: null },
  { name: 'local 1h', localRetentionMs: HOUR_MS },
  { name: 'local 1d', localRetentionMs: DAY_MS },
  { name: 'local 7d', localRetentionMs: 7 * DAY_MS },
];

export type ComponentName = 'brokerDisk' | 'objectStorage' | 'putListRequests' | 'getRequests' | 'retrieval' | 'crossAz';

export const COMPONENT_NAMES: readonly ComponentName[] = ['brokerDisk', 'objectStorage', 'putListRequests', 'getRequests', 'retrieval', 'crossAz'];

export const COMPONENT_LABELS: Readonly<Record<ComponentName, string>> = {
  brokerDisk: 'broker disk',
  objectStorage: 'object storage',
  putListRequests: 'PUT/LIST requests',
  getRequests: 'GET requests',
  retrieval: 'retrieval',
  crossAz: 'cross-AZ traffic',
};

/** The counted quantities of one month, before prices. */
export interface Quantities {
  /** Bytes on one replica's disks (data kept locally, active segments included). */
  readonly localBytes: number;
  /** Disk provisioned over all replicas, headroom included. */
  readonly provisionedDiskGiB: number;
  /** Bytes in the bucket (data, indexes, small objects). */
  readonly remoteBytes: number;
  /** GiB-months billed (minimum object size and minimum storage duration applied). */
  readonly billedObjectGiBMonths: number;
  /** Segments copied (and expired) per month. */
  readonly segmentsPerMonth: number;
  readonly objectsPerSegment: number;
  readonly putRequests: number;
  readonly listRequests: number;
  readonly deleteRequests: number;
  readonly getRequests: number;
  /** GiB read from the object store per month. */
  readonly remoteReadGiB: number;
  /** GiB replicated from leaders to followers per month. */
  readonly replicationGiB: number;
  /** GiB copied to new replicas per month. */
  readonly replicaMoveGiB: number;
  /** GiB consumers read from brokers in other zones per month (what fetching from the closest replica saves). */
  readonly consumerCrossAzGiB: number;
}

export interface ScenarioCost {
  readonly scenario: string;
  readonly localRetentionMs: number | null;
  readonly quantities: Quantities;
  /** Dollars per month by component. */
  readonly components: Readonly<Record<ComponentName, number>>;
  /** The object storage bill tier by tier (empty when the class is priced flat). */
  readonly objectStorageBands: readonly TierBand[];
  /** Dollars per month. */
  readonly total: number;
  /** Dollars per month saved against no tiering (negative: tiering costs more). */
  readonly savingVsNoTiering: number;
  /** Saving as a share of the no-tiering total (0 when that is 0). */
  readonly savingShare: number;
}

export class WorkloadError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WorkloadError';
  }
}

/** Throws a WorkloadError naming the first out-of-range input. */
export function validateWorkload(w: Workload): void {
  const check = (ok: boolean, what: string): void => {
    if (!ok) throw new WorkloadError(what);
  };
  const finite = (v: number): boolean => Number.isFinite(v);
  check(finite(w.ingressBytesPerSec) && w.ingressBytesPerSec >= 0, `ingress must be >= 0 bytes/s (got ${w.ingressBytesPerSec})`);
  check(finite(w.retentionMs) && w.retentionMs > 0, `retention must be > 0 (got ${w.retentionMs} ms)`);
  check(Number.isInteger(w.replicationFactor) && w.replicationFactor >= 1, `replication factor must be an integer >= 1 (got ${w.replicationFactor})`);
  check(Number.isInteger(w.partitions) && w.partitions >= 1, `partitions must be an integer >= 1 (got ${w.partitions})`);
  check(finite(w.segmentBytes) && w.segmentBytes >= 1, `segment size must be >= 1 byte (got ${w.segmentBytes})`);
  check(finite(w.segmentMs) && w.segmentMs >= 1, `segment.ms must be >= 1 (got ${w.segmentMs})`);
  check(w.remoteReadShare >= 0 && w.remoteReadShare <= 1, `remote read share must be within [0, 1] (got ${w.remoteReadShare})`);
  check(finite(w.readFanout) && w.readFanout >= 0, `read fan-out must be >= 0 (got ${w.readFanout})`);
  check(finite(w.chunkSizeBytes) && w.chunkSizeBytes >= 1, `chunk size must be >= 1 byte (got ${w.chunkSizeBytes})`);
  check(Number.isInteger(w.chunksPerGet) && w.chunksPerGet >= 1, `chunks per GET must be an integer >= 1 (got ${w.chunksPerGet})`);
  check(finite(w.multipartThresholdBytes) && w.multipartThresholdBytes >= 0, `multipart threshold must be >= 0 (got ${w.multipartThresholdBytes})`);
  check(finite(w.partSizeBytes) && w.partSizeBytes >= 1, `part size must be >= 1 byte (got ${w.partSizeBytes})`);
  check(w.diskHeadroom >= 0 && w.diskHeadroom < 1, `disk headroom must be within [0, 1) (got ${w.diskHeadroom})`);
  check(w.txnIndexShare >= 0 && w.txnIndexShare <= 1, `transaction index share must be within [0, 1] (got ${w.txnIndexShare})`);
  check(finite(w.indexIntervalBytes) && w.indexIntervalBytes >= 0, `index interval must be >= 0 (got ${w.indexIntervalBytes})`);
  check(finite(w.batchBytes) && w.batchBytes >= 1, `batch size must be >= 1 byte (got ${w.batchBytes})`);
  check(finite(w.orphanSweepIntervalMs) && w.orphanSweepIntervalMs > 0, `orphan sweep interval must be > 0 (got ${w.orphanSweepIntervalMs})`);
  check(finite(w.orphanFullSweepIntervalMs) && w.orphanFullSweepIntervalMs > 0, `full orphan sweep interval must be > 0 (got ${w.orphanFullSweepIntervalMs})`);
  check(finite(w.replicaMoveShare) && w.replicaMoveShare >= 0, `replica move share must be >= 0 (got ${w.replicaMoveShare})`);
  check(w.consumerInRackShare >= 0 && w.consumerInRackShare <= 1, `consumer in-rack share must be within [0, 1] (got ${w.consumerInRackShare})`);
}

/** PUT-class requests that upload a data object of `bytes` (multipart above the threshold). */
export function dataUploadRequests(bytes: number, multipartThresholdBytes: number, partSizeBytes: number): number {
  if (bytes <= multipartThresholdBytes) return 1;
  return 2 + Math.ceil(bytes / partSizeBytes);
}

/** Offset plus time index bytes for `bytes` of data written in batches of `batchBytes`. */
export function indexBytesFor(bytes: number, indexIntervalBytes: number, batchBytes: number): number {
  // An entry goes in before a batch once more than index.interval.bytes were appended since the last one.
  const batchesPerEntry = Math.max(1, Math.floor(indexIntervalBytes / batchBytes) + 1);
  const entries = bytes / (batchBytes * batchesPerEntry);
  return entries * (OFFSET_INDEX_ENTRY_BYTES + TIME_INDEX_ENTRY_BYTES);
}

/** What the copy of one segment of `bytes` writes: requests and bytes. */
export interface SegmentUpload {
  /** PUT-class requests (data, multipart parts, indexes, snapshot, checkpoint, manifest). */
  readonly putRequests: number;
  /** The DELETE of a previous manifest that starts every copy. */
  readonly deleteRequests: number;
  /** Objects stored. */
  readonly objects: number;
  /** Bytes stored over all its objects. */
  readonly storedBytes: number;
  /** Bytes of the objects other than the data (for minimum-size billing). */
  readonly smallObjectSizes: readonly number[];
}

export function segmentUpload(
  bytes: number,
  w: Pick<Workload, 'multipartThresholdBytes' | 'partSizeBytes' | 'txnIndexShare' | 'indexIntervalBytes' | 'batchBytes' | 'chunkSizeBytes'>,
): SegmentUpload {
  // index, timeindex, snapshot, leader-epoch-checkpoint, manifest; a txnindex on the share of segments with aborts.
  const smallObjects = 5 + w.txnIndexShare;
  const indexBytes = indexBytesFor(bytes, w.indexIntervalBytes, w.batchBytes);
  const smallBytes = SMALL_OBJECTS_BASE_BYTES + MANIFEST_BYTES_PER_CHUNK * Math.ceil(bytes / w.chunkSizeBytes);
  return {
    putRequests: dataUploadRequests(bytes, w.multipartThresholdBytes, w.partSizeBytes) + smallObjects,
    deleteRequests: 1,
    objects: 1 + smallObjects,
    storedBytes: bytes + indexBytes + smallBytes,
    smallObjectSizes: [indexBytes / 2, indexBytes / 2, smallBytes / 3, smallBytes / 3, smallBytes / 3],
  };
}

/**
 * GETs to read `bytes` below the local tier from segments of `segmentBytes`,
 * read whole from their start: the first chunk alone, the other chunks (the
 * last one short) in read-ahead GETs of `chunksPerGet`, the manifest and the
 * offset index (caches cold: the data is older than what they hold).
 */
export function remoteReadRequests(bytes: number, segmentBytes: number, chunkSizeBytes: number, chunksPerGet = 1): number {
  if (bytes <= 0) return 0;
  const segmentsRead = bytes / segmentBytes;
  const chunks = Math.ceil(segmentBytes / chunkSizeBytes);
  return segmentsRead * (1 + Math.ceil((chunks - 1) / chunksPerGet) + 2);
}

/** The LISTs of the orphan sweep (remote-log/tasks/orphan-sweeper.ts). */
export interface SweepLists {
  /** One sweep of every partition listing only keys after its highest finished segment. */
  readonly incrementalSweep: number;
  /** One sweep listing every partition's whole prefix, plus the whole bucket once. */
  readonly fullSweep: number;
  /** A month of sweeps: full ones every full interval, incremental ones the rest of the time. */
  readonly perMonth: number;
}

/** LIST requests of the orphan sweep over `partitions` holding `objects` objects in all. */
export function sweepLists(w: Pick<Workload, 'partitions' | 'orphanSweepIntervalMs' | 'orphanFullSweepIntervalMs'>, objects: number): SweepLists {
  const pagesOf = (keys: number): number => Math.max(1, Math.ceil(keys / LIST_PAGE_KEYS));
  const incrementalSweep = w.partitions;
  const fullSweep = w.partitions * pagesOf(objects / w.partitions) + pagesOf(objects);
  const sweeps = MONTH_MS / w.orphanSweepIntervalMs;
  const fullSweeps = Math.min(sweeps, MONTH_MS / Math.max(w.orphanFullSweepIntervalMs, w.orphanSweepIntervalMs));
  return { incrementalSweep, fullSweep, perMonth: (sweeps - fullSweeps) * incrementalSweep + fullSweeps * fullSweep };
}

/**
 * The segment size partitions really roll at: the whole batches that fit in
 * segment.bytes (a batch is never split), or what segment.ms lets a slow
 * partition fill.
 */
export function effectiveSegmentBytes(w: Workload): number {
  const perPartition = w.ingressBytesPerSec / w.partitions;
  const bySize = w.batchBytes <= w.segmentBytes ? Math.floor(w.segmentBytes / w.batchBytes) * w.batchBytes : w.segmentBytes;
  return Math.max(1, Math.min(bySize, (perPartition * w.segmentMs) / 1000));
}

/** Consumed bytes a month that a consumer reads from a broker in another zone. */
export function consumerCrossAzBytes(w: Pick<Workload, 'ingressBytesPerSec' | 'readFanout' | 'consumerInRackShare'>): number {
  return w.ingressBytesPerSec * MONTH_SECONDS * w.readFanout * (1 - w.consumerInRackShare);
}

/** Every GiB crossing zones in a month: replication, replica moves, consumer reads. */
export function crossAzGiB(q: Pick<Quantities, 'replicationGiB' | 'replicaMoveGiB' | 'consumerCrossAzGiB'>): number {
  return q.replicationGiB + q.replicaMoveGiB + q.consumerCrossAzGiB;
}

function quantities(w: Workload, localRetentionMs: number | null, prices: EffectivePrices): Quantities {
  const rate = w.ingressBytesPerSec;
  const monthBytes = rate * MONTH_SECONDS;
  const seg = effectiveSegmentBytes(w);
  // Each partition also holds its active segment (half full on average) and, as
  // retention deletes whole segments, half a segment past the retention.
  const segmentSlack = rate > 0 ? w.partitions * seg : 0;
  const localMs = localRetentionMs === null ? w.retentionMs : Math.min(localRetentionMs, w.retentionMs);
  const localBytes = (rate * localMs) / 1000 + segmentSlack;
  const provisionedDiskGiB = (localBytes * w.replicationFactor) / (1 - w.diskHeadroom) / GIB;
  const replicationGiB = (monthBytes * (w.replicationFactor - 1)) / GIB;
  const replicaMoveGiB = (w.replicaMoveShare * localBytes * w.replicationFactor) / GIB;
  const consumerCrossAzGiB = consumerCrossAzBytes(w) / GIB;
  if (localRetentionMs === null || rate === 0) {
    return {
      localBytes,
      provisionedDiskGiB,
      remoteBytes: 0,
      billedObjectGiBMonths: 0,
      segmentsPerMonth: 0,
      objectsPerSegment: 0,
      putRequests: 0,
      listRequests: 0,
      deleteRequests: 0,
      getRequests: 0,
      remoteReadGiB: 0,
      replicationGiB,
      replicaMoveGiB,
      consumerCrossAzGiB,
    };
  }
  const upload = segmentUpload(seg, w);
  const segmentsPerMonth = monthBytes / seg;
  // The bucket holds the whole retention (segments are copied soon after they roll).
  const storedSegments = (rate * w.retentionMs) / 1000 / seg;
  const remoteBytes = storedSegments * upload.storedBytes;
  const minObject = prices['object.minObjectBytes'];
  const billedPerSegment =
    Math.max(seg, minObject) + upload.smallObjectSizes.reduce((a, s) => a + Math.max(s, minObject), 0) + w.txnIndexShare * minObject;
  // An object deleted before the class's minimum storage duration is billed for the minimum.
  const minStorageMs = prices['object.minStorageDays'] * DAY_MS;
  const billedLifetimeMs = Math.max(w.retentionMs, minStorageMs);
  const billedObjectGiBMonths = ((segmentsPerMonth * billedPerSegment) / GIB) * (billedLifetimeMs / MONTH_MS);
  const objectsPerSegment = upload.objects;
  const listRequests = sweepLists(w, storedSegments * objectsPerSegment).perMonth + segmentsPerMonth * UPLOAD_LISTS_PER_EXPIRED_SEGMENT;
  const remoteReadBytes = monthBytes * w.readFanout * w.remoteReadShare;
  return {
    localBytes,
    provisionedDiskGiB,
    remoteBytes,
    billedObjectGiBMonths,
    segmentsPerMonth,
    objectsPerSegment,
    putRequests: segmentsPerMonth * upload.putRequests,
    listRequests,
    deleteRequests: segmentsPerMonth * (upload.deleteRequests + DELETES_PER_EXPIRED_SEGMENT),
    getRequests: remoteReadRequests(remoteReadBytes, seg, w.chunkSizeBytes, w.chunksPerGet),
    remoteReadGiB: remoteReadBytes / GIB,
    replicationGiB,
    replicaMoveGiB,
    consumerCrossAzGiB,
  };
}

/** The storage bill: by the class's volume tiers when it has them, else flat. */
export function objectStorageCost(billedGiBMonths: number, p: EffectivePrices): { cost: number; bands: readonly TierBand[] } {
  const tiers = p['object.gbMonthTiers'];
  if (tiers === undefined) return { cost: billedGiBMonths * p['object.gbMonth'], bands: [] };
  return tieredStorageCost(billedGiBMonths, tiers);
}

function price(q: Quantities, p: EffectivePrices, storage: number): Record<ComponentName, number> {
  return {
    brokerDisk: q.provisionedDiskGiB * p['disk.gbMonth'],
    objectStorage: storage,
    putListRequests:
      (q.putRequests * p['object.putPer1000'] + q.listRequests * p['object.listPer1000'] + q.deleteRequests * p['object.deletePer1000']) / 1000,
    getRequests: (q.getRequests * p['object.getPer1000']) / 1000,
    retrieval: q.remoteReadGiB * p['object.retrievalPerGB'],
    crossAz: crossAzGiB(q) * p['network.crossAzPerGB'],
  };
}

/** One scenario's monthly cost (its saving fields are relative to `baseline`, or zero without one). */
export function costScenario(w: Workload, scenario: Scenario, prices: EffectivePrices, baseline?: number): ScenarioCost {
  validateWorkload(w);
  const q = quantities(w, scenario.localRetentionMs, prices);
  const storage = objectStorageCost(q.billedObjectGiBMonths, prices);
  const components = price(q, prices, storage.cost);
  const total = COMPONENT_NAMES.reduce((a, c) => a + components[c], 0);
  const saving = baseline === undefined ? 0 : baseline - total;
  return {
    scenario: scenario.name,
    localRetentionMs: scenario.localRetentionMs,
    quantities: q,
    components,
    objectStorageBands: storage.bands,
    total,
    savingVsNoTiering: saving,
    savingShare: baseline === undefined || baseline === 0 ? 0 : saving / baseline,
  };
}

/**
 * Every scenario whose local retention is below the total retention (Kafka
 * refuses local.retention.ms above retention.ms), with no tiering first as the
 * baseline of the savings.
 */
export function costScenarios(w: Workload, scenarios: readonly Scenario[], prices: EffectivePrices): ScenarioCost[] {
  const baseline = costScenario(w, { name: 'no tiering', localRetentionMs: null }, prices);
  const out: ScenarioCost[] = [{ ...baseline, savingVsNoTiering: 0, savingShare: 0 }];
  for (const s of applicableScenarios(w, scenarios)) {
    if (s.localRetentionMs === null) continue;
    out.push(costScenario(w, s, prices, baseline.total));
  }
  return out;
}

/** The tiered scenarios that make sense for the retention (local retention below it), deduplicated by retention. */
export function applicableScenarios(w: Pick<Workload, 'retentionMs'>, scenarios: readonly Scenario[]): Scenario[] {
  const seen = new Set<number>();
  const out: Scenario[] = [];
  for (const s of scenarios) {
    if (s.localRetentionMs === null) continue;
    if (s.localRetentionMs <= 0 || s.localRetentionMs >= w.retentionMs || seen.has(s.localRetentionMs)) continue;
    seen.add(s.localRetentionMs);
    out.push(s);
  }
  return out.sort((a, b) => (b.localRetentionMs ?? 0) - (a.localRetentionMs ?? 0));
}

export interface RetentionPoint {
  readonly retentionMs: number;
  /** Total dollars per month by scenario name (absent where the scenario does not apply). */
  readonly totals: Readonly<Record<string, number>>;
}

/** Total cost of each scenario as the total retention grows (the line chart). */
export function costOverRetention(w: Workload, scenarios: readonly Scenario[], prices: EffectivePrices, retentionsMs: readonly number[]): RetentionPoint[] {
  return retentionsMs.map((retentionMs) => {
    const wr = { ...w, retentionMs };
    const totals: Record<string, number> = {};
    for (const s of costScenarios(wr, scenarios, prices)) totals[s.scenario] = s.total;
    return { retentionMs, totals };
  });
}

/** Retention lengths for the line chart: from a day up to past the chosen retention. */
export function retentionSeries(retentionMs: number): number[] {
  const base = [1, 3, 7, 14, 30, 60, 90, 180, 365, 730].map((d) => d * DAY_MS);
  const out = base.filter((r) => r <= Math.max(retentionMs * 2, 30 * DAY_MS));
  if (!out.includes(retentionMs)) out.push(retentionMs);
  return out.sort((a, b) => a - b);
}
