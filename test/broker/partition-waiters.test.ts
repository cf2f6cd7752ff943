// Each case reads the wait's state after letting every pending callback run
// (setImmediate drains the microtask queue), so a wait that should have woken
// and did not fails the assertion instead of hanging the test.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PartitionWaiters } from '../../broker/partition-waiters.js';
import { ManualClock } from '../../broker/common/clock.js';
import { ManualScheduler } from '../../broker/common/scheduler.js';

/** 'woken' or 'parked', once everything already queued has run. */
async function state(p: Promise<void>): Promise<'woken' | 'parked'> {
  let woken = false;
  void p.then(() => (woken = true));
  await new Promise((resolve) => setImmediate(resolve));
  return woken ? 'woken' : 'parked';
}

test('a waiter wakes on an append to one of its partitions, not on others', async () => {
  const clock = new ManualClock();
  const scheduler = new ManualScheduler(clock);
  const w = new PartitionWaiters(scheduler);
  const p = w.wait([PartitionWaiters.key('a', 0), PartitionWaiters.key('b', 1)], 5000);
  assert.equal(w.pending, 1);
  w.notify('a', 1);
  w.notify('c', 0);
  assert.equal(await state(p), 'parked', 'an append to a partition it does not wait on');
  w.notify('b', 1);
  assert.equal(await state(p), 'woken', 'an append to b-1');
  assert.equal(w.pending, 0);
  assert.equal(scheduler.pending, 0, 'its timeout is cancelled');
});

test('a waiter wakes at its timeout, not before', async () => {
  const clock = new ManualClock();
  const scheduler = new ManualScheduler(clock);
  const w = new PartitionWaiters(scheduler);
  const p = w.wait([PartitionWaiters.key('a', 0)], 500);
  clock.advance(499);
  assert.equal(await state(p), 'parked', 'at 499 ms of 500');
  clock.advance(1);
  assert.equal(await state(p), 'woken', 'at 500 ms');
  assert.equal(w.pending, 0);
  w.notify('a', 0);
  assert.equal(w.pending, 0, 'a later append finds nobody waiting');
});

test('a waiter wakes when its connection goes away, and only then', async () => {
  const scheduler = new ManualScheduler(new ManualClock());
  const w = new PartitionWaiters(scheduler);
  const ac = new AbortController();
  const p = w.wait([PartitionWaiters.key('a', 0)], 60000, ac.signal);
  assert.equal(await state(p), 'parked');
  ac.abort();
  assert.equal(await state(p), 'woken');
  assert.equal(w.pending, 0);
  assert.equal(scheduler.pending, 0, 'its timeout is cancelled');
});

test('nothing to wait for (no keys, no time) resolves at once without parking', async () => {
  const w = new PartitionWaiters(new ManualScheduler(new ManualClock()));
  assert.equal(await state(w.wait([], 5000)), 'woken');
  assert.equal(await state(w.wait([PartitionWaiters.key('a', 0)], 0)), 'woken');
  assert.equal(w.pending, 0);
});

test('nextParked resolves with the keys of the next wait to park', async () => {
  const w = new PartitionWaiters(new ManualScheduler(new ManualClock()));
  const parked = w.nextParked();
  const p = w.wait([PartitionWaiters.key('a', 0)], 1000);
  assert.deepEqual(await parked, [PartitionWaiters.key('a', 0)]);
  w.notify('a', 0);
  assert.equal(await state(p), 'woken');
});
