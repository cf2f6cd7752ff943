import assert from 'node:assert/strict';
import { readFile, readdir, rm, stat, truncate } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { ManualClock } from '../../../broker/common/clock.js';
import { logConfig } from '../../../metadata/log-config.js';
import { LogManager, type LogManagerOptions } from '../../../broker/log/log-manager.js';
import { ManualScheduler } from '../../../broker/common/scheduler.js';
import { batch, readAll, tempDir, values } from './helpers.js';

const client = { leaderEpoch: 0, isFromClient: true };

describe('LogManager', () => {
  let root: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => ({ dir: root, cleanup } = await tempDir()));
  afterEach(async () => cleanup());

  function options(clock: ManualClock, extra: Partial<LogManagerOptions> = {}): LogManagerOptions {
    return {
      logDirs: [path.join(root, 'd1'), path.join(root, 'd2')],
      clock,
      scheduler: new ManualScheduler(clock),
      configFor: () => logConfig({ segmentBytes: 500, retentionMs: 60_000 }),
      retentionCheckIntervalMs: 10_000,
      flushCheckIntervalMs: 1000,
      checkpointIntervalMs: 5000,
      ...extra,
    };
  }

  it('spreads partitions over log dirs, checkpoints, and reloads after a clean shutdown', async () => {
    const clock = new ManualClock();
    const mgr = await LogManager.startup(options(clock));
    const a = await mgr.getOrCreateLog('orders', 0, 'id-orders');
    const b = await mgr.getOrCreateLog('orders', 1, 'id-orders');
    assert.notEqual(path.dirname(a.dir), path.dirname(b.dir));
    assert.equal(await mgr.getOrCreateLog('orders', 0, 'id-orders'), a);
    for (let i = 0; i < 10; i++) await a.append(batch({ valueSize: 100, tag: `x${i}` }), client);
    await b.append(batch({ tag: 'y' }), client);
    await mgr.shutdown();
    const d1 = path.dirname(a.dir);
    assert.ok((await readdir(d1)).includes('.kafka_cleanshutdown'));
    const rp = await readFile(path.join(d1, 'recovery-point-offset-checkpoint'), 'utf8');
    assert.equal(rp, '0\n1\norders 0 10\n');
    assert.equal(await readFile(path.join(a.dir, 'partition.metadata'), 'utf8'), 'version: 0\ntopic_id: id-orders\n');

    const again = await LogManager.startup(options(clock));
    assert.ok(!(await readdir(d1)).includes('.kafka_cleanshutdown'), 'the marker goes once loaded');
    const a2 = again.getLog('orders', 0);
    assert.ok(a2);
    assert.equal(a2.topicId, 'id-orders');
    assert.equal(a2.logEndOffset, 10n);
    assert.equal(values(await readAll(a2)).length, 10);
    assert.equal(again.getLog('orders', 1)?.logEndOffset, 1n);
    await again.shutdown();
  });

  it('recovers a torn tail after an unclean stop', async () => {
    const clock = new ManualClock();
    const mgr = await LogManager.startup(options(clock));
    const log = await mgr.getOrCreateLog('t', 0, 'id');
    for (let i = 0; i < 3; i++) await log.append(batch({ count: 2 }), client);
    await mgr.checkpoint();
    const file = log.activeSegment().files.log;
    await log.closeHandles();
    await truncate(file, (await stat(file)).size - 3);
    const again = await LogManager.startup(options(clock));
    assert.equal(again.getLog('t', 0)?.logEndOffset, 4n);
    await again.shutdown();
  });

  it('runs retention, flush and checkpoints on its scheduler', async () => {
    const clock = new ManualClock();
    const mgr = await LogManager.startup(options(clock));
    const log = await mgr.getOrCreateLog('t', 0, 'id');
    for (let i = 0; i < 8; i++) await log.append(batch({ valueSize: 100, timestamp: clock.now() }), client);
    const segs = log.closedSegments().length;
    assert.ok(segs >= 2);
    clock.advance(9_000);
    await mgr.settled();
    assert.equal(log.logStartOffset, 0n, 'no retention check yet');
    assert.ok(log.recoveryPoint > 0n, 'flush.ms is not set, but rolled segments were fsynced');
    clock.advance(61_000);
    await mgr.settled();
    assert.equal(log.logStartOffset, 8n);
    assert.equal(log.closedSegments().length, 0);
    clock.advance(5_000);
    await mgr.settled();
    const rp = await readFile(path.join(path.dirname(log.dir), 'recovery-point-offset-checkpoint'), 'utf8');
    assert.match(rp, /^0\n1\nt 0 \d+\n$/);
    await mgr.shutdown();
  });

  it('a partition directory without a topic id (a crash before partition.metadata was written) takes the id the broker knows its topic by', async () => {
    const clock = new ManualClock();
    const mgr = await LogManager.startup(options(clock));
    const log = await mgr.getOrCreateLog('orders', 0, 'id-orders');
    await log.append(batch({ tag: 'kept' }), client);
    await mgr.shutdown();
    await rm(path.join(log.dir, 'partition.metadata'));
    const blind = await LogManager.startup(options(clock));
    assert.equal(blind.getLog('orders', 0)?.topicId, '', 'without topicIdOf the id stays unknown');
    await blind.shutdown();
    const again = await LogManager.startup(options(clock, { topicIdOf: (topic) => (topic === 'orders' ? 'id-orders' : undefined) }));
    const reloaded = again.getLog('orders', 0);
    assert.equal(reloaded?.topicId, 'id-orders');
    assert.equal(reloaded.logEndOffset, 1n);
    assert.equal(await readFile(path.join(log.dir, 'partition.metadata'), 'utf8'), 'version: 0\ntopic_id: id-orders\n');
    await again.shutdown();
  });

  it('never reuses the directory of a deleted topic with the same name', async () => {
    const clock = new ManualClock();
    const mgr = await LogManager.startup(options(clock, { shouldLoad: (_t, _p, id) => id !== 'old-id' }));
    const old = await mgr.getOrCreateLog('reborn', 0, 'old-id');
    await old.append(batch({}), client);
    await mgr.shutdown();
    const again = await LogManager.startup(options(clock, { shouldLoad: (_t, _p, id) => id !== 'old-id' }));
    assert.equal(again.getLog('reborn', 0), undefined);
    const fresh = await again.getOrCreateLog('reborn', 0, 'new-id');
    assert.equal(fresh.logEndOffset, 0n);
    assert.equal(fresh.topicId, 'new-id');
    await again.shutdown();
  });

  it('keeps open files within maxOpenFiles, reopening on demand', async () => {
    const clock = new ManualClock();
    const mgr = await LogManager.startup(options(clock, { maxOpenFiles: 6 }));
    const logs = await Promise.all([0, 1, 2, 3].map((p) => mgr.getOrCreateLog('many', p, 'id')));
    for (let i = 0; i < 12; i++) for (const log of logs) await log.append(batch({ valueSize: 100, tag: `m${i}` }), client);
    assert.ok(logs.every((l) => l.closedSegments().length >= 2));
    for (let round = 0; round < 2; round++) {
      for (const log of logs) {
        assert.equal(values(await readAll(log)).length, 12);
        assert.ok(mgr.openFiles <= 6, `open files: ${mgr.openFiles}`);
      }
    }
    await Promise.all(logs.map((l) => readAll(l)));
    assert.ok(mgr.openFiles <= 6);
    await mgr.shutdown();
  });

  it('deletes a partition directory', async () => {
    const clock = new ManualClock();
    const mgr = await LogManager.startup(options(clock));
    const log = await mgr.getOrCreateLog('gone', 3, 'id');
    await log.append(batch({}), client);
    assert.equal(await mgr.deleteLog('gone', 3), true);
    assert.equal(mgr.getLog('gone', 3), undefined);
    const left = [...(await readdir(path.join(root, 'd1'))), ...(await readdir(path.join(root, 'd2')))];
    assert.ok(!left.some((n) => n.startsWith('gone-3')), left.join(','));
    await mgr.shutdown();
  });
});
