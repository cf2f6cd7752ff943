// A crash mid-clean leaves the log valid: the swap is stopped after each of its
// file operations in turn (the step hook throws, the log's handles are dropped
// without a flush), the partition is reopened with full recovery, and the
// reloaded log must hold every latest value, in order, with no cleaner files
// left. Both a one-segment swap and a swap merging several segments are cut at
// every step.
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { ManualClock } from '../../../../broker/common/clock.js';
import { logConfig, type LogConfig } from '../../../../metadata/log-config.js';
import { ErrorCode, KafkaError } from '../../../../broker/protocol/errors.js';
import type { PartitionLog } from '../../../../broker/log/partition-log.js';
import { tempDir } from '../helpers.js';
import { COMPACT, T0, appendKeyed, cleanerFor, filesEnding, isStrictlyIncreasing, openCompacted, readBack } from './helpers.js';

const WRITE_CONFIG: Partial<LogConfig> = { segmentBytes: 2048, indexIntervalBytes: 128 };

async function build(dir: string): Promise<{ log: PartitionLog; clock: ManualClock; expected: [string, string][] }> {
  const { log, clock } = await openCompacted(dir, WRITE_CONFIG);
  clock.set(T0);
  for (let r = 0; r < 5; r++) for (let i = 0; i < 16; i++) await appendKeyed(log, [[`k${i}`, `v${r}-${i}`]], { timestamp: T0 + r * 100 + i });
  await appendKeyed(log, [['k5', null]]);
  await log.roll();
  await appendKeyed(log, [['k0', 'in-active']]);
  const expected = [...(await readBack(log, 0n)).table].sort();
  return { log, clock, expected };
}

/** Reconfigures so the next round merges the (small) cleaned segments into one group. */
function mergeConfig(log: PartitionLog): void {
  log.updateConfig(logConfig({ ...COMPACT, ...WRITE_CONFIG, segmentBytes: 1 << 20 }));
}

class SimulatedCrash extends Error {}

async function stepsOfRound(dir: string, merge: boolean): Promise<string[]> {
  const { log, clock } = await build(dir);
  const steps: string[] = [];
  if (merge) {
    await cleanerFor(() => [log], clock).cleaner.cleanNow(log);
    mergeConfig(log);
  }
  await cleanerFor(() => [log], clock, {}, (s) => void steps.push(s)).cleaner.cleanNow(log);
  await log.close();
  return steps;
}

async function checkReloaded(dir: string, clock: ManualClock, expected: [string, string][], what: string): Promise<void> {
  const { log } = await openCompacted(dir, WRITE_CONFIG, { clock, cleanShutdown: false });
  try {
    const rb = await readBack(log, 0n);
    assert.deepEqual([...rb.table].sort(), expected, `${what}: every latest value, no deleted key`);
    assert.ok(isStrictlyIncreasing(rb.offsets), `${what}: offsets in order`);
    for (const suffix of ['.cleaned', '.swap', '.deleted']) assert.deepEqual(await filesEnding(log.dir, suffix), [], `${what}: no ${suffix} file left`);
    // The reloaded log cleans normally afterwards.
    mergeConfig(log);
    await cleanerFor(() => [log], clock).cleaner.cleanNow(log);
    const clean = await readBack(log, 0n);
    assert.deepEqual([...clean.table].sort(), expected, `${what}: after a full clean`);
    assert.equal(clean.offsets.filter((o) => o < log.activeSegment().baseOffset).length, 16, `${what}: 15 live keys + 1 tombstone below the active segment`);
  } finally {
    await log.close();
  }
}

describe('cleaner swap crash safety', () => {
  let root: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => ({ dir: root, cleanup } = await tempDir('sediment-swap-')));
  afterEach(async () => cleanup());

  for (const merge of [false, true]) {
    const kind = merge ? 'a swap merging several segments' : 'one-segment swaps';
    it(`recovers from a crash after every file operation of ${kind}`, async () => {
      const steps = await stepsOfRound(path.join(root, 'count'), merge);
      assert.ok(steps.length >= 12, `${steps.length} steps`);
      if (merge) assert.ok(steps.filter((s) => s.startsWith('mark ')).length > 1, 'the round merges segments');
      for (let k = 1; k <= steps.length; k++) {
        const dir = path.join(root, `crash-${k}`);
        const { log, clock, expected } = await build(dir);
        if (merge) {
          await cleanerFor(() => [log], clock).cleaner.cleanNow(log);
          mergeConfig(log);
        }
        let n = 0;
        const crashing = cleanerFor(() => [log], clock, {}, () => {
          n++;
          if (n === k) throw new SimulatedCrash(`crash after step ${k}: ${steps[k - 1]}`);
        });
        // The log goes offline with a storage error whose cause is the crash (a TypeError from a bug is not one).
        await assert.rejects(
          crashing.cleaner.cleanNow(log),
          (e: unknown) =>
            e instanceof KafkaError && e.code === ErrorCode.KAFKA_STORAGE_ERROR && e.cause instanceof SimulatedCrash && e.cause.message.startsWith(`crash after step ${k}: `),
        );
        assert.ok(log.isOffline, 'a failed swap takes the log offline');
        await log.closeHandles();
        await checkReloaded(dir, clock, expected, `crash after step ${k} (${steps[k - 1]})`);
      }
    });
  }

  it('a crash while the cleaned files are being written leaves only .cleaned leftovers, removed at load', async () => {
    const { log, clock, expected } = await build(root);
    const before = await readBack(log, 0n);
    // What an interrupted writer leaves: a partial `.cleaned` log next to the live segments.
    await writeFile(path.join(log.dir, '00000000000000000000.log.cleaned'), Buffer.alloc(100, 7));
    await writeFile(path.join(log.dir, '00000000000000000000.index.cleaned'), Buffer.alloc(8));
    await log.closeHandles();
    await checkReloaded(root, clock, expected, 'leftover .cleaned');
    assert.ok(before.offsets.length > 0);
  });
});
