import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PartitionWaiters } from '../../broker/partition-waiters.js';
import { ManualClock } from '../../broker/common/clock.js';
import { ManualScheduler } from '../../broker/common/scheduler.js';

test('a waiter wakes on an append to one of its partitions, not on others', async () => {
  const clock = new ManualClock();
  const w = new PartitionWaiters(new ManualScheduler(clock));
  let woke = false;
  const p = w.wait([PartitionWaiters.key('a', 0), PartitionWaiters.key('b', 1)], 5000).then(() => (woke = true));
  w.notify('a', 1);
  await Promise.resolve();
  assert.equal(woke, false);
  w.notify('b', 1);
  await p;
  assert.equal(woke, true);
});

test('a waiter wakes at its timeout', async () => {
  const clock = new ManualClock();
  const w = new PartitionWaiters(new ManualScheduler(clock));
  let woke = false;
  const p = w.wait([PartitionWaiters.key('a', 0)], 500).then(() => (woke = true));
  clock.advance(499);
  await Promise.resolve();
  assert.equal(woke, false);
  clock.advance(1);
  await p;
  assert.equal(woke, true);
});

test('a waiter wakes when its connection goes away', async () => {
  const w = new PartitionWaiters(new ManualScheduler(new ManualClock()));
  const ac = new AbortController();
  const p = w.wait([PartitionWaiters.key('a', 0)], 60000, ac.signal);
  ac.abort();
  await p;
});
