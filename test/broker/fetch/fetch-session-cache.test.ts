import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../../../broker/common/clock.js';
import { FetchSessionCache, NEVER_ANSWERED, nextEpoch, type CachedPartition } from '../../../broker/fetch/fetch-session-cache.js';
import { ZERO_UUID } from '../../../broker/protocol/reader.js';

const EVICTION_MS = 120_000;

function partitions(n: number, topic = 't'): CachedPartition[] {
  return Array.from({ length: n }, (_, partition) => ({
    topic,
    topicId: ZERO_UUID,
    partition,
    request: { partition, currentLeaderEpoch: -1, fetchOffset: 0n, lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: 1 << 20 },
    answered: { ...NEVER_ANSWERED },
  }));
}

/** Ids 1, 2, 3... in creation order (random() values that map to them). */
function sequentialIds(): () => number {
  let next = 0;
  return () => next++ / 2_147_483_647;
}

function cache(maxSlots: number, clock = new ManualClock()): { cache: FetchSessionCache; clock: ManualClock } {
  return { cache: new FetchSessionCache({ maxSlots, clock, evictionMs: EVICTION_MS, random: sequentialIds() }), clock };
}

describe('nextEpoch', () => {
  it('counts up from 1, wraps from INT32_MAX to 1, and stays final below 0', () => {
    assert.equal(nextEpoch(0), 1);
    assert.equal(nextEpoch(41), 42);
    assert.equal(nextEpoch(2_147_483_647), 1);
    assert.equal(nextEpoch(-1), -1);
  });
});

describe('FetchSessionCache', () => {
  it('creates sessions with positive unique ids at epoch 1, holding the partitions in order', () => {
    // A random source that repeats itself: the cache draws again rather than reuse an id.
    const values = [0, 0, 0.5];
    const c = new FetchSessionCache({ maxSlots: 10, clock: new ManualClock(), random: () => values.shift() ?? 0.25 });
    const a = c.maybeCreate(false, partitions(3));
    const b = c.maybeCreate(false, partitions(1));
    assert.ok(a !== undefined && b !== undefined);
    assert.ok(a.id > 0 && b.id > 0 && a.id !== b.id);
    assert.equal(a.epoch, 1);
    assert.deepEqual([...a.partitions.values()].map((p) => p.partition), [0, 1, 2]);
    assert.equal(c.size, 2);
    assert.equal(c.totalPartitions, 4);
  });

  it('creates nothing with 0 slots', () => {
    const { cache: c } = cache(0);
    assert.equal(c.maybeCreate(false, partitions(5)), undefined);
    assert.equal(c.size, 0);
  });

  it('full: refuses a new session while every session is recent', () => {
    const { cache: c, clock } = cache(2);
    c.maybeCreate(false, partitions(1));
    c.maybeCreate(false, partitions(1));
    clock.advance(EVICTION_MS);
    assert.equal(c.maybeCreate(false, partitions(50)), undefined, 'sessions created and used within evictionMs are kept');
    assert.equal(c.size, 2);
    assert.equal(c.evictions, 0);
  });

  it('full: evicts the least recently used session once it has been idle longer than evictionMs', () => {
    const { cache: c, clock } = cache(2);
    const a = c.maybeCreate(false, partitions(5));
    const b = c.maybeCreate(false, partitions(5));
    assert.ok(a !== undefined && b !== undefined);
    clock.advance(EVICTION_MS / 2);
    c.touch(a);
    clock.advance(EVICTION_MS / 2 + 1);
    // b is idle for evictionMs + 1 and a is not: b goes, even for a smaller newcomer.
    const n = c.maybeCreate(false, partitions(1));
    assert.ok(n !== undefined);
    assert.equal(c.get(b.id), undefined);
    assert.ok(c.get(a.id) !== undefined);
    assert.equal(c.evictions, 1);
  });

  it('full, nothing idle: a larger session evicts the smallest one created more than evictionMs ago', () => {
    const { cache: c, clock } = cache(3);
    const small = c.maybeCreate(false, partitions(2));
    const big = c.maybeCreate(false, partitions(10));
    clock.advance(EVICTION_MS + 1);
    const young = c.maybeCreate(false, partitions(1));
    assert.ok(small !== undefined && big !== undefined && young !== undefined);
    c.touch(small);
    c.touch(big);
    // The smallest old session has 2 partitions: a newcomer of 2 does not beat it, one of 3 does.
    assert.equal(c.maybeCreate(false, partitions(2)), undefined);
    const n = c.maybeCreate(false, partitions(3));
    assert.ok(n !== undefined);
    assert.equal(c.get(small.id), undefined);
    assert.ok(c.get(big.id) !== undefined);
    assert.ok(c.get(young.id) !== undefined, 'a session younger than evictionMs is never evicted for size');
  });

  it('touch makes a session the most recently used; remove frees its slot', () => {
    const { cache: c, clock } = cache(2);
    const a = c.maybeCreate(false, partitions(1));
    const b = c.maybeCreate(false, partitions(1));
    assert.ok(a !== undefined && b !== undefined);
    clock.advance(EVICTION_MS + 1);
    c.touch(a);
    // Both old, a used just now: the idle one (b) is evicted.
    assert.ok(c.maybeCreate(false, partitions(1)) !== undefined);
    assert.equal(c.get(b.id), undefined);
    assert.ok(c.get(a.id) !== undefined);
    assert.equal(c.remove(a.id), true);
    assert.equal(c.remove(a.id), false);
    assert.equal(c.size, 1);
  });
});
