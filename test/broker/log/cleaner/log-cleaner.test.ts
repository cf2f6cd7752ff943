// The log cleaner on real partition logs: what a consumer reading from offset 0
// rebuilds, tombstones and their horizon, the active segment, the compaction
// lags and dirty ratio, transactions, the checkpoint and the periodic task.
import assert from 'node:assert/strict';
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { ManualClock } from '../../../../broker/common/clock.js';
import { CLEANER_OFFSET_CHECKPOINT } from '../../../../broker/log/cleaner/cleaner-checkpoint.js';
import { logConfig } from '../../../../metadata/log-config.js';
import { LogManager } from '../../../../broker/log/log-manager.js';
import type { PartitionLog } from '../../../../broker/log/partition-log.js';
import { buildEndTxnMarkerBatch, decodeRecordBatches } from '../../../../broker/protocol/record-batch.js';
import { ManualScheduler } from '../../../../broker/common/scheduler.js';
import { readAll, tempDir } from '../helpers.js';
import { COMPACT, T0, appendKeyed, cleanerFor, isStrictlyIncreasing, keyed, openCompacted, readBack } from './helpers.js';

const DAY = 86_400_000;

/** Ten rounds of updates of k0..k19, one record per batch, then tombstones for k3 and k7. */
async function fillKeyed(log: PartitionLog, rounds = 10): Promise<void> {
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < 20; i++) await appendKeyed(log, [[`k${i}`, `v${r}-${i}`]], { timestamp: T0 + r * 1000 + i });
  }
  await appendKeyed(log, [['k3', null]], { timestamp: T0 + 50_000 });
  await appendKeyed(log, [['k7', null]], { timestamp: T0 + 50_001 });
}

describe('LogCleaner', () => {
  let root: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => ({ dir: root, cleanup } = await tempDir('sediment-cleaner-')));
  afterEach(async () => cleanup());

  it('keeps the latest value of every live key, with gaps in offsets, and no deleted key', async () => {
    const { log, clock } = await openCompacted(root);
    await fillKeyed(log);
    await log.roll();
    await appendKeyed(log, [['k1', 'active-1']], { timestamp: T0 + 60_000 });
    const before = await readBack(log);
    const activeFile = log.activeSegment().files.log;
    const activeBytes = await readFile(activeFile);
    const sizeBefore = log.size;
    const closedBefore = log.closedSegments().length;
    assert.ok(closedBefore >= 3, `several closed segments (${closedBefore})`);

    const { cleaner } = cleanerFor(() => [log], clock);
    const stats = await cleaner.cleanNow(log);
    assert.equal(stats.endOffset, log.activeSegment().baseOffset);
    assert.ok(stats.messagesRetained < stats.messagesRead);

    const after = await readBack(log, 0n);
    assert.deepEqual([...after.table].sort(), [...before.table].sort(), 'a consumer from offset 0 rebuilds the same table');
    assert.equal(after.table.get('k1'), 'active-1');
    assert.equal(after.table.get('k0'), 'v9-0');
    assert.ok(!after.table.has('k3') && !after.table.has('k7'), 'deleted keys stay deleted');
    assert.ok(isStrictlyIncreasing(after.offsets), 'order kept');
    assert.ok(after.offsets.length < Number(log.logEndOffset), 'offsets have gaps');
    assert.deepEqual(after.tombstones.sort(), ['k3', 'k7'], 'tombstones stay until delete.retention.ms');
    assert.ok(log.size < sizeBefore / 3, `${log.size} bytes after, ${sizeBefore} before`);
    assert.deepEqual(await readFile(activeFile), activeBytes, 'the active segment is untouched');
    // Only the latest record of each key (below the active segment) is left there.
    const closedRecords = after.offsets.filter((o) => o < log.activeSegment().baseOffset);
    assert.equal(closedRecords.length, 20, '18 live keys + 2 tombstones');

    // A fetch at a removed offset starts at the batch holding the next retained one
    // (possibly after emptied batches, which a consumer steps over by their last offset).
    const removed = 5n;
    assert.ok(!after.offsets.includes(removed));
    const r = await log.read(removed, 1 << 20, { maxOffset: log.highWatermark, minOneBatch: true });
    assert.ok(r.records.length > 0 && r.firstOffset !== null);
    const firstBatch = decodeRecordBatches(Buffer.concat(r.records))[0];
    assert.ok(firstBatch !== undefined && firstBatch.header.baseOffset + BigInt(firstBatch.header.lastOffsetDelta) >= removed);
    const fromGap = decodeRecordBatches(Buffer.concat(await readAll(log, removed))).flatMap((b) => b.records.map((x) => x.offset));
    assert.equal(fromGap[0], after.offsets.find((o) => o > removed));

    // Fetches step over the batches the cleaner emptied (segment ends), even with a small maxBytes:
    // a response made only of them would stall consumers that advance on records (kafkajs).
    assert.ok(after.batches.every((b) => b.records.length > 0), 'no emptied batch reaches a reader while records follow');
    for (const seg of log.closedSegments()) {
      const res = await log.read(seg.nextOffset - 1n, 100, { maxOffset: log.highWatermark, minOneBatch: true });
      const batches = decodeRecordBatches(Buffer.concat(res.records));
      assert.ok((batches[0]?.records.length ?? 0) > 0, `records after the end of segment ${seg.baseOffset}`);
      assert.equal(res.firstOffset, batches[0]?.header.baseOffset);
    }

    // Past delete.retention.ms (counted from that first clean) the tombstones go too.
    clock.advance(DAY + 1);
    await cleaner.cleanNow(log);
    const later = await readBack(log, 0n);
    assert.deepEqual([...later.table].sort(), [...before.table].sort());
    assert.deepEqual(later.tombstones, []);
    for (const b of later.batches) for (const rec of b.records) assert.ok(!['k3', 'k7'].includes(rec.key?.toString() ?? ''), 'no trace of deleted keys');

    // And the cleaned log reloads the same.
    await log.close();
    const { log: again } = await openCompacted(root, {}, { clock });
    assert.deepEqual([...(await readBack(again, 0n)).table].sort(), [...before.table].sort());
    assert.equal(again.logEndOffset, log.logEndOffset);
    await again.close();
  });

  it('leaves segments younger than min.compaction.lag.ms alone', async () => {
    const { log, clock } = await openCompacted(root, { minCompactionLagMs: 3_600_000 });
    clock.set(T0 + 10 * 3_600_000);
    // Old updates, then recent ones, each group in its own segments.
    for (let r = 0; r < 6; r++) for (let i = 0; i < 10; i++) await appendKeyed(log, [[`k${i}`, `old${r}`]], { timestamp: T0 + r });
    await log.roll();
    const youngFrom = log.logEndOffset;
    for (let r = 0; r < 6; r++) for (let i = 0; i < 10; i++) await appendKeyed(log, [[`k${i}`, `new${r}`]], { timestamp: clock.now() - 1000 });
    await log.roll();
    const young = log.closedSegments().filter((s) => s.baseOffset >= youngFrom);
    const youngBytes = await Promise.all(young.map((s) => readFile(s.files.log)));

    const { cleaner } = cleanerFor(() => [log], clock);
    const stats = await cleaner.cleanNow(log);
    assert.equal(stats.endOffset, youngFrom, 'cleaning stops at the first young segment');
    for (const [i, s] of young.entries()) assert.deepEqual(await readFile(s.files.log), youngBytes[i]);
    const after = await readBack(log, 0n);
    // The young values are not in the map yet: the old part keeps its own latest value per key.
    assert.equal(after.offsets.filter((o) => o < youngFrom).length, 10, 'old part compacted on its own');
    assert.equal(after.offsets.filter((o) => o >= youngFrom).length, 60, 'young duplicates still there');
    assert.equal(after.table.get('k4'), 'new5');

    // Once the lag has passed they are cleaned as well.
    clock.advance(3_600_000);
    const second = await cleaner.cleanNow(log);
    assert.equal(second.endOffset, log.activeSegment().baseOffset);
    assert.equal((await readBack(log, 0n)).offsets.length, 10);
  });

  it('cleans by dirty ratio, or by max.compaction.lag.ms whatever the ratio, and checkpoints the first dirty offset', async () => {
    const { log, clock } = await openCompacted(root, { minCleanableDirtyRatio: 0.5 });
    clock.set(T0);
    await fillKeyed(log);
    await log.roll();
    const { cleaner } = cleanerFor(() => [log], clock);
    const first = await cleaner.runOnce();
    assert.ok(first !== null, 'a never cleaned log is all dirty');
    const cp = await readFile(path.join(root, CLEANER_OFFSET_CHECKPOINT), 'utf8');
    assert.equal(cp, `0\n1\ntopic 0 ${first.endOffset}\n`);

    // A little dirt on a larger clean part: below the ratio.
    for (let i = 0; i < 3; i++) await appendKeyed(log, [[`k${i}`, `late-${i}`]], { timestamp: T0 + 100_000 });
    await log.roll();
    const ltc = await cleaner.toClean(log);
    assert.ok(ltc.cleanableRatio > 0 && ltc.cleanableRatio < 0.5, `ratio ${ltc.cleanableRatio}`);
    assert.equal(await cleaner.runOnce(), null);

    // max.compaction.lag.ms: the dirty segment's first batch is older than the lag.
    log.updateConfig(logConfig({ ...COMPACT, segmentBytes: 4096, indexIntervalBytes: 256, maxCompactionLagMs: 60_000 }));
    clock.set(T0 + 100_000 + 60_001);
    const forced = await cleaner.runOnce();
    assert.ok(forced !== null);
    assert.equal((await readBack(log, 0n)).table.get('k2'), 'late-2');
    assert.equal(await cleaner.runOnce(), null, 'nothing dirty left');
  });

  it('removes a quiet log tombstones once their horizon passes (no new writes needed)', async () => {
    const { log, clock } = await openCompacted(root, { deleteRetentionMs: 1000 });
    clock.set(T0);
    await appendKeyed(log, [['a', '1'], ['b', '1']]);
    await appendKeyed(log, [['a', null]]);
    await log.roll();
    const { cleaner } = cleanerFor(() => [log], clock);
    assert.ok((await cleaner.runOnce()) !== null);
    assert.deepEqual((await readBack(log, 0n)).tombstones, ['a']);
    assert.equal(await cleaner.runOnce(), null, 'not before the horizon');
    clock.advance(1001);
    assert.ok((await cleaner.runOnce()) !== null, 'the due horizon makes the log cleanable');
    const rb = await readBack(log, 0n);
    assert.deepEqual(rb.tombstones, []);
    assert.deepEqual([...rb.table], [['b', '1']]);
  });

  it('drops aborted transactional data, keeps committed data, and removes markers once their data is gone', async () => {
    const { log, clock } = await openCompacted(root, { deleteRetentionMs: 1000 });
    clock.set(T0);
    const broker = { leaderEpoch: 0, isFromClient: false };
    const txn = (pid: bigint, seq: number, records: Array<[string, string]>): Buffer =>
      keyed(records, { producerId: pid, producerEpoch: 0, baseSequence: seq, transactional: true });
    const marker = (pid: bigint, type: 'ABORT' | 'COMMIT'): Buffer =>
      buildEndTxnMarkerBatch({ type, coordinatorEpoch: 0, producerId: pid, producerEpoch: 0, timestamp: T0 });
    await log.append(txn(1n, 0, [['a', 'aborted'], ['b', 'aborted']]), broker);
    await log.append(txn(2n, 0, [['a', 'committed']]), broker);
    await log.append(marker(1n, 'ABORT'), broker);
    await log.append(marker(2n, 'COMMIT'), broker);
    await appendKeyed(log, [['c', 'plain']]);
    await log.append(txn(1n, 2, [['b', 'committed']]), broker);
    await log.append(marker(1n, 'COMMIT'), broker);
    await log.roll();
    assert.equal(log.collectAbortedTransactions(0n, log.logEndOffset).length, 1);

    const { cleaner } = cleanerFor(() => [log], clock);
    await cleaner.cleanNow(log);
    const once = await readBack(log, 0n);
    assert.deepEqual([...once.table].sort(), [['a', 'committed'], ['b', 'committed'], ['c', 'plain']]);
    const values = once.batches.flatMap((b) => b.records.map((r) => r.value?.toString()));
    assert.ok(!values.includes('aborted'), 'aborted records are gone');
    const markers = (rb: typeof once): number => rb.batches.filter((b) => (b.header.attributes & 0x20) !== 0 && b.records.length > 0).length;
    assert.equal(markers(once), 3, 'markers stay while their transactions still had data in the cleaned range');
    assert.equal(log.collectAbortedTransactions(0n, log.logEndOffset).length, 1, 'the retained ABORT keeps its txn index entry');

    // Next round: the aborted transaction has no data left, so its marker gets a horizon; past it, it goes.
    await cleaner.cleanNow(log);
    clock.advance(1001);
    await cleaner.cleanNow(log);
    const later = await readBack(log, 0n);
    assert.deepEqual([...later.table].sort(), [['a', 'committed'], ['b', 'committed'], ['c', 'plain']]);
    const abortMarkers = later.batches.filter((b) => (b.header.attributes & 0x20) !== 0 && b.records[0]?.key?.readInt16BE(2) === 0);
    assert.equal(abortMarkers.length, 0, 'the ABORT marker is gone');
    assert.equal(log.collectAbortedTransactions(0n, log.logEndOffset).length, 0);
  });

  it("keeps an active producer's last batch as a bare header so its sequence survives", async () => {
    const { log, clock } = await openCompacted(root);
    clock.set(T0);
    await log.append(keyed([['x', 'from-9']], { producerId: 9n, producerEpoch: 0, baseSequence: 0 }), { leaderEpoch: 0, isFromClient: true });
    await appendKeyed(log, [['x', 'plain']]);
    await log.roll();
    const { cleaner } = cleanerFor(() => [log], clock);
    await cleaner.cleanNow(log);
    const rb = await readBack(log, 0n);
    assert.deepEqual([...rb.table], [['x', 'plain']]);
    const stored = (await Promise.all(log.closedSegments().map((sg) => readFile(sg.files.log)))).flatMap((b) => decodeRecordBatches(b));
    const kept = stored.find((b) => b.header.producerId === 9n);
    assert.ok(kept !== undefined, 'the batch of producer 9 is still there');
    assert.equal(kept.records.length, 0);
    assert.equal(kept.header.baseOffset, 0n);
    // A retry of that batch is still recognised as a duplicate.
    const dup = await log.append(keyed([['x', 'from-9']], { producerId: 9n, producerEpoch: 0, baseSequence: 0 }), { leaderEpoch: 0, isFromClient: true });
    assert.equal(dup.duplicate, true);
  });

  it('does not let retention.ms delete a compact-only log, but does for compact,delete', async () => {
    const { log, clock } = await openCompacted(root, { retentionMs: 1000 });
    await fillKeyed(log, 2);
    await log.roll();
    clock.advance(10 * DAY);
    const r = await log.applyRetention(clock.now());
    assert.equal(r.deletedSegments, 0);
    log.updateConfig(logConfig({ ...COMPACT, cleanupPolicy: { compact: true, delete: true }, retentionMs: 1000, segmentBytes: 4096 }));
    assert.ok((await log.applyRetention(clock.now())).deletedSegments > 0);
  });

  it('runs on its scheduler: a quiet topic rolls on segment.ms (LogManager) and then gets cleaned', async () => {
    const clock = new ManualClock(T0);
    const scheduler = new ManualScheduler(clock);
    const mgr = await LogManager.startup({
      logDirs: [root],
      clock,
      scheduler,
      configFor: () => logConfig({ ...COMPACT, segmentMs: 60_000 }),
      flushCheckIntervalMs: 1000,
    });
    const log = await mgr.getOrCreateLog('offsets', 0, 'id');
    for (let i = 0; i < 50; i++) await appendKeyed(log, [[`g${i % 5}`, `${i}`]], { timestamp: clock.now() });
    const { cleaner } = cleanerFor(() => mgr.allLogs(), clock, { enable: true, backoffMs: 5000 });
    clock.advance(1);
    await cleaner.settled();
    assert.equal(cleaner.lastStats, null, 'everything is in the active segment: nothing to clean');
    clock.advance(61_000); // segment.ms passes: LogManager's flush task rolls the quiet segment
    await mgr.settled();
    assert.equal(log.closedSegments().length, 1);
    clock.advance(5000); // the cleaner's backoff
    await cleaner.settled();
    assert.ok(cleaner.lastStats !== null);
    assert.deepEqual(
      [...(await readBack(log, 0n)).table].sort(),
      [['g0', '45'], ['g1', '46'], ['g2', '47'], ['g3', '48'], ['g4', '49']],
    );
    assert.equal((await readBack(log, 0n)).offsets.length, 5);
    await cleaner.stop();
    await mgr.shutdown();
  });

  it('a round racing DeleteRecords gives up on segments that went, and the log stays valid', async () => {
    const { log, clock } = await openCompacted(root, { cleanupPolicy: { compact: true, delete: true } });
    await fillKeyed(log);
    await log.roll();
    const cut = (log.closedSegments()[3] as { baseOffset: bigint }).baseOffset;
    const expected = [...(await readBack(log, cut)).table].sort();
    let deleting: Promise<bigint> | null = null;
    // Once the first group is swapped (the hook runs under the log lock), DeleteRecords queues behind it.
    const { cleaner } = cleanerFor(() => [log], clock, {}, () => {
      deleting ??= log.deleteRecordsBefore(cut);
    });
    const outcome = await cleaner.cleanNow(log).then(
      () => 'cleaned',
      (e: Error) => e.name,
    );
    await deleting;
    assert.ok(['CleaningAbortedError', 'SegmentClosedError'].includes(outcome), outcome);
    assert.equal(log.isOffline, false);
    assert.equal(log.logStartOffset, cut);
    assert.deepEqual((await readdir(log.dir)).filter((n) => n.endsWith('.cleaned') || n.endsWith('.swap')), []);
    const rb = await readBack(log);
    assert.ok(isStrictlyIncreasing(rb.offsets) && (rb.offsets[0] ?? cut) >= cut);
    assert.deepEqual([...rb.table].sort(), expected);
    await cleaner.cleanNow(log);
    assert.deepEqual([...(await readBack(log)).table].sort(), expected);
  });

  it('stop() abandons a round and leaves no .cleaned file', async () => {
    const { log, clock } = await openCompacted(root);
    await fillKeyed(log);
    await log.roll();
    const { cleaner } = cleanerFor(() => [log], clock);
    const before = await readBack(log, 0n);
    const running = cleaner.cleanNow(log);
    await cleaner.stop();
    await assert.rejects(running, { name: 'CleaningAbortedError' });
    assert.deepEqual((await readdir(log.dir)).filter((n) => n.endsWith('.cleaned') || n.endsWith('.swap')), []);
    assert.deepEqual([...(await readBack(log, 0n)).table].sort(), [...before.table].sort());
  });
});
