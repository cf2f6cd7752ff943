import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Workload } from '../../../broker/cost/model.js';
import {
  DAY_MS,
  DEFAULT_WORKLOAD,
  GIB,
  HOUR_MS,
  MIB,
  MONTH_SECONDS,
  STANDARD_SCENARIOS,
  WorkloadError,
  applicableScenarios,
  costOverRetention,
  costScenario,
  costScenarios,
  dataUploadRequests,
  effectiveSegmentBytes,
  remoteReadRequests,
  segmentUpload,
  sweepLists,
} from '../../../broker/cost/model.js';
import { builtinSheet, selectPrices } from '../../../broker/cost/price-sheet.js';

const aws = builtinSheet('aws');
assert.ok(aws !== undefined);
const standard = selectPrices(aws).prices;

function workload(over: Partial<Workload> = {}): Workload {
  return { ...DEFAULT_WORKLOAD, ingressBytesPerSec: 10 * MIB, retentionMs: 30 * DAY_MS, ...over };
}

const close = (actual: number, expected: number, rel = 1e-9): void => {
  assert.ok(Math.abs(actual - expected) <= Math.abs(expected) * rel + 1e-9, `${actual} is not ${expected}`);
};

describe('uploads of one segment', () => {
  it('one PutObject up to the multipart threshold, then create + one part per part size + complete', () => {
    assert.equal(dataUploadRequests(32 * MIB, 32 * MIB, 8 * MIB), 1);
    assert.equal(dataUploadRequests(32 * MIB + 1, 32 * MIB, 8 * MIB), 2 + 5);
    assert.equal(dataUploadRequests(GIB, 32 * MIB, 8 * MIB), 2 + 128);
    assert.equal(dataUploadRequests(0, 32 * MIB, 8 * MIB), 1);
  });

  it('writes data, offset index, time index, snapshot, leader-epoch checkpoint and manifest (6 objects) without aborted transactions', () => {
    const u = segmentUpload(GIB, DEFAULT_WORKLOAD);
    assert.equal(u.objects, 6);
    assert.equal(u.putRequests, 130 + 5);
    assert.equal(u.deleteRequests, 1, 'every copy first deletes a previous manifest');
    const withTxn = segmentUpload(MIB, { ...DEFAULT_WORKLOAD, txnIndexShare: 1 });
    assert.equal(withTxn.objects, 7);
    assert.equal(withTxn.putRequests, 1 + 6);
  });

  it('stores the data plus its indexes (20 bytes per index entry) and small objects', () => {
    // 16 KiB batches over a 4 KiB interval: every batch gets an entry.
    const u = segmentUpload(GIB, DEFAULT_WORKLOAD);
    const entries = GIB / (16 * 1024);
    assert.ok(u.storedBytes > GIB + entries * 20 && u.storedBytes < GIB + entries * 20 + 20_000, String(u.storedBytes));
    // 1 KiB batches: an entry every 5th batch (more than 4096 bytes since the last one).
    const small = segmentUpload(5 * 1024 * 1000, { ...DEFAULT_WORKLOAD, batchBytes: 1024 });
    assert.ok(small.storedBytes - 5 * 1024 * 1000 > 1000 * 20 && small.storedBytes - 5 * 1024 * 1000 < 1000 * 20 + 1000);
  });
});

describe('reads below the local tier', () => {
  it('cost one GET per chunk (one chunk per GET) plus the manifest and offset index of each segment', () => {
    assert.equal(remoteReadRequests(GIB, GIB, MIB), 1024 + 2);
    assert.equal(remoteReadRequests(2 * GIB, GIB, 4 * MIB), 512 + 4);
    assert.equal(remoteReadRequests(0, GIB, MIB), 0);
    // A segment of 2.5 chunks takes 3 chunk GETs.
    assert.equal(remoteReadRequests(10 * MIB, 2.5 * MIB, MIB), 4 * (3 + 2));
  });

  it('read ahead in GETs of several chunks after the first chunk', () => {
    // 1024 chunks: the first alone, 1023 in GETs of 2 (512), manifest and index.
    assert.equal(remoteReadRequests(GIB, GIB, MIB, 2), 1 + 512 + 2);
    assert.equal(remoteReadRequests(GIB, GIB, MIB, 8), 1 + 128 + 2);
    // 48 chunks in GETs of 2, as the calibration on MinIO counted: 1 + 24 + 2 per segment.
    assert.equal(remoteReadRequests(8 * 48 * MIB, 48 * MIB, MIB, 2), 8 * 27);
    assert.equal(remoteReadRequests(MIB, MIB, MIB, 2), 3, 'a one-chunk segment');
  });
});

describe('scenarios', () => {
  it('no tiering provisions retention x RF x ingress over the free-space headroom, and writes nothing to the bucket', () => {
    const w = workload();
    const c = costScenario(w, { name: 'no tiering', localRetentionMs: null }, standard);
    const local = 10 * MIB * 30 * 86_400 + w.partitions * w.segmentBytes;
    close(c.quantities.localBytes, local);
    close(c.quantities.provisionedDiskGiB, (local * 3) / 0.7 / GIB);
    close(c.components.brokerDisk, ((local * 3) / 0.7 / GIB) * 0.08);
    assert.equal(c.components.objectStorage, 0);
    assert.equal(c.components.putListRequests, 0);
    assert.equal(c.components.getRequests, 0);
    // Replication to two followers, replica moves, and the two thirds of the consumed bytes read in another zone.
    close(c.components.crossAz, ((2 * 10 * MIB * MONTH_SECONDS) / GIB + (0.1 * local * 3) / GIB + ((10 * MIB * MONTH_SECONDS) / GIB) * (2 / 3)) * 0.02);
    close(c.total, c.components.brokerDisk + c.components.crossAz);
  });

  it('counts the consumed bytes read across zones: all but the in-rack share, times the fan-out; fetching from the closest replica (share 1) saves them', () => {
    const consumed = (10 * MIB * MONTH_SECONDS * 2) / GIB;
    const leaders = costScenario(workload({ readFanout: 2, consumerInRackShare: 0.25 }), { name: 'no tiering', localRetentionMs: null }, standard);
    close(leaders.quantities.consumerCrossAzGiB, consumed * 0.75);
    const closest = costScenario(workload({ readFanout: 2, consumerInRackShare: 1 }), { name: 'no tiering', localRetentionMs: null }, standard);
    assert.equal(closest.quantities.consumerCrossAzGiB, 0);
    close(leaders.components.crossAz - closest.components.crossAz, consumed * 0.75 * 0.02);
    close(leaders.total - closest.total, consumed * 0.75 * 0.02);
    // The same in every scenario: tiering does not change where consumers read.
    const tiered = costScenario(workload({ readFanout: 2, consumerInRackShare: 0.25 }), { name: 'local 1d', localRetentionMs: DAY_MS }, standard, 0);
    close(tiered.quantities.consumerCrossAzGiB, leaders.quantities.consumerCrossAzGiB);
    assert.throws(() => costScenario(workload({ consumerInRackShare: 1.5 }), STANDARD_SCENARIOS[0]!, standard), /consumer in-rack share/);
  });

  it('tiering keeps the local retention on disk and the whole retention in the bucket, once', () => {
    const w = workload();
    const [base, ...tiered] = costScenarios(w, STANDARD_SCENARIOS, standard);
    assert.ok(base !== undefined);
    assert.deepEqual(
      tiered.map((t) => t.scenario),
      ['local 7d', 'local 1d', 'local 1h'],
    );
    const day = tiered.find((t) => t.scenario === 'local 1d');
    assert.ok(day !== undefined);
    close(day.quantities.localBytes, 10 * MIB * 86_400 + w.partitions * w.segmentBytes);
    const retained = 10 * MIB * 30 * 86_400;
    assert.ok(day.quantities.remoteBytes > retained && day.quantities.remoteBytes < retained * 1.01);
    // Stored for the month: the data written in a month, kept for 30 days (of a 30.4-day month).
    close(day.quantities.billedObjectGiBMonths, (day.quantities.segmentsPerMonth * (segmentUpload(GIB, w).smallObjectSizes.reduce((a, b) => a + b, 0) + GIB)) / GIB * ((30 * DAY_MS) / (MONTH_SECONDS * 1000)), 1e-6);
    close(day.savingVsNoTiering, base.total - day.total);
    close(day.savingShare, (base.total - day.total) / base.total);
    assert.ok(day.total < base.total, 'a month kept on S3 is cheaper than on three gp3 copies');
    // Replication of the ingress is the same; only the replica moves shrink with the local data.
    close(day.quantities.replicationGiB, base.quantities.replicationGiB);
    assert.ok(day.quantities.replicaMoveGiB < base.quantities.replicaMoveGiB / 20);
  });

  it('counts PUTs per segment, DELETEs per copy and expiry, LISTs per orphan sweep and per expiry', () => {
    const w = workload({ partitions: 4 });
    const c = costScenario(w, { name: 'local 1h', localRetentionMs: HOUR_MS }, standard, 0);
    const segments = (10 * MIB * MONTH_SECONDS) / GIB;
    close(c.quantities.segmentsPerMonth, segments);
    close(c.quantities.putRequests, segments * 135);
    close(c.quantities.deleteRequests, segments * (1 + 7));
    // 30 days at 10 MiB/s = 25,312.5 segments of 1 GiB, 6,328 per partition, 37,969 objects each:
    // a full sweep (once a day) lists 38 pages per partition and 152 for the whole bucket; the
    // other sweeps, every 5 minutes, one page per partition (what follows its highest finished segment).
    const sweeps = (MONTH_SECONDS * 1000) / (5 * 60_000);
    const fullSweeps = (MONTH_SECONDS * 1000) / DAY_MS;
    // Plus one ListMultipartUploads per expired segment.
    close(c.quantities.listRequests, (sweeps - fullSweeps) * 4 + fullSweeps * (4 * 38 + 152) + segments);
    close(c.components.putListRequests, (c.quantities.putRequests * 0.005 + c.quantities.listRequests * 0.005) / 1000);
  });

  it('sweeps incrementally: the issue 16 workload lists at least 10x less than listing everything every sweep', () => {
    // sediment cost --ingress 50MB/s --retention 30d --local-retention 1d --chunk-size 4MiB --remote-read-share 0.1
    const w: Workload = { ...DEFAULT_WORKLOAD, ingressBytesPerSec: 50e6, retentionMs: 30 * DAY_MS, chunkSizeBytes: 4 * MIB, remoteReadShare: 0.1 };
    const c = costScenario(w, { name: 'local 1d', localRetentionMs: DAY_MS }, standard, 0);
    const objects = ((50e6 * 30 * DAY_MS) / 1000 / GIB) * c.quantities.objectsPerSegment;
    const lists = sweepLists(w, objects);
    assert.equal(lists.incrementalSweep, 12);
    // 120,699 segments of 6 objects: 61 pages per partition, 725 for the bucket.
    assert.equal(lists.fullSweep, 12 * 61 + 725);
    const everySweepFull = ((MONTH_SECONDS * 1000) / (5 * 60_000)) * lists.fullSweep + c.quantities.segmentsPerMonth;
    close(everySweepFull, 12.9e6, 0.01);
    assert.ok(c.quantities.listRequests * 10 <= everySweepFull, `${c.quantities.listRequests} LISTs a month against ${everySweepFull} before`);
    close(c.quantities.listRequests, 271_000, 0.01);
    // A full sweep at every sweep is the old behaviour.
    assert.equal(sweepLists({ ...w, orphanFullSweepIntervalMs: 1 }, objects).perMonth, ((MONTH_SECONDS * 1000) / (5 * 60_000)) * lists.fullSweep);
  });

  it('prices S3 Standard storage by its volume tiers past 50 TB, and flat when the class has none', () => {
    // 50 MB/s for 30 days: about 118 TiB in the bucket, across the 50 TB boundary.
    const w: Workload = { ...DEFAULT_WORKLOAD, ingressBytesPerSec: 50e6, retentionMs: 30 * DAY_MS };
    const c = costScenario(w, { name: 'local 1d', localRetentionMs: DAY_MS }, standard, 0);
    const gb = c.quantities.billedObjectGiBMonths;
    assert.ok(gb > 51_200 && gb < 512_000, `${gb} GiB-months`);
    close(c.components.objectStorage, 51_200 * 0.023 + (gb - 51_200) * 0.022);
    assert.deepEqual(c.objectStorageBands.map((b) => b.gb > 0), [true, true, false]);
    const flat = costScenario(w, { name: 'local 1d', localRetentionMs: DAY_MS }, selectPrices(aws, { overrides: { 'object.gbMonth': 0.023 } }).prices, 0);
    close(flat.components.objectStorage, gb * 0.023);
    assert.deepEqual(flat.objectStorageBands, []);
    // Below 50 TB the tiers change nothing.
    const small = costScenario({ ...w, ingressBytesPerSec: 10e6 }, { name: 'local 1d', localRetentionMs: DAY_MS }, standard, 0);
    close(small.components.objectStorage, small.quantities.billedObjectGiBMonths * 0.023);
  });

  it('prices GETs and retrieval of the reads below the local tier', () => {
    const w = workload({ remoteReadShare: 0.5, readFanout: 2 });
    const ia = selectPrices(aws, { storageClass: 'standard-ia' }).prices;
    const c = costScenario(w, { name: 'local 1h', localRetentionMs: HOUR_MS }, ia, 0);
    const readBytes = 10 * MIB * MONTH_SECONDS * 2 * 0.5;
    close(c.quantities.remoteReadGiB, readBytes / GIB);
    // Per 1 GiB segment: the first 1 MiB chunk, the other 1023 in GETs of 8, manifest and offset index.
    close(c.quantities.getRequests, (readBytes / GIB) * (1 + 128 + 2));
    close(c.components.getRequests, (c.quantities.getRequests * 0.001) / 1000);
    close(c.components.retrieval, (readBytes / GIB) * 0.01);
  });

  it('bills the minimum storage duration and the minimum object size of infrequent-access classes', () => {
    const w = workload({ retentionMs: 7 * DAY_MS });
    const gir = selectPrices(aws, { storageClass: 'glacier-ir' }).prices;
    const std = costScenario(w, { name: 'local 1h', localRetentionMs: HOUR_MS }, standard, 0);
    const glacier = costScenario(w, { name: 'local 1h', localRetentionMs: HOUR_MS }, gir, 0);
    // Glacier IR bills 90 days for data deleted after 7, and 128 KiB for each small object.
    const ratio = glacier.quantities.billedObjectGiBMonths / std.quantities.billedObjectGiBMonths;
    assert.ok(ratio > 90 / 7 && ratio < (90 / 7) * 1.001, String(ratio));
  });

  it('fills a segment with whole batches only', () => {
    assert.equal(effectiveSegmentBytes(workload({ segmentBytes: 1000, batchBytes: 300 })), 900);
    assert.equal(effectiveSegmentBytes(workload({ segmentBytes: 1000, batchBytes: 3000 })), 1000);
  });

  it('rolls slow partitions by segment.ms: more, smaller segments', () => {
    const w = workload({ ingressBytesPerSec: 1024, partitions: 100, segmentMs: DAY_MS });
    assert.equal(effectiveSegmentBytes(w), (1024 / 100) * 86_400);
    const c = costScenario(w, { name: 'local 1h', localRetentionMs: HOUR_MS }, standard, 0);
    close(c.quantities.segmentsPerMonth, (100 * MONTH_SECONDS) / 86_400);
  });

  it('drops tiered scenarios whose local retention is not below the total retention, and duplicates', () => {
    const w = workload({ retentionMs: 3 * DAY_MS });
    const s = applicableScenarios(w, [...STANDARD_SCENARIOS, { name: 'local 1d again', localRetentionMs: DAY_MS }, { name: 'local 3d', localRetentionMs: 3 * DAY_MS }]);
    assert.deepEqual(
      s.map((x) => x.name),
      ['local 1d', 'local 1h'],
    );
  });

  it('a zero ingress costs nothing', () => {
    const w = workload({ ingressBytesPerSec: 0 });
    for (const c of costScenarios(w, STANDARD_SCENARIOS, standard)) assert.equal(c.total, 0, c.scenario);
  });

  it('refuses impossible inputs with a message naming them', () => {
    assert.throws(() => costScenario(workload({ diskHeadroom: 1 }), STANDARD_SCENARIOS[0]!, standard), (e: unknown) => e instanceof WorkloadError && /headroom/.test(e.message));
    assert.throws(() => costScenario(workload({ partitions: 0 }), STANDARD_SCENARIOS[0]!, standard), /partitions/);
    assert.throws(() => costScenario(workload({ remoteReadShare: 1.5 }), STANDARD_SCENARIOS[0]!, standard), /remote read share/);
    assert.throws(() => costScenario(workload({ retentionMs: 0 }), STANDARD_SCENARIOS[0]!, standard), /retention/);
  });

  it('cost over retention grows with retention, far faster without tiering', () => {
    const w = workload();
    const points = costOverRetention(w, STANDARD_SCENARIOS, standard, [7 * DAY_MS, 30 * DAY_MS, 365 * DAY_MS]);
    const series = (name: string): number[] => points.map((p) => p.totals[name] ?? Number.NaN);
    const none = series('no tiering');
    const hour = series('local 1h');
    assert.ok(none[0]! < none[1]! && none[1]! < none[2]!);
    assert.ok(hour[0]! < hour[1]! && hour[1]! < hour[2]!);
    assert.ok(none[2]! - none[0]! > 3 * (hour[2]! - hour[0]!));
    assert.equal(points[0]?.totals['local 7d'], undefined, 'local 7d does not apply to a 7-day retention');
  });
});
