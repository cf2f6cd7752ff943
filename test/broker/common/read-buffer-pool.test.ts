import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_POOLED_BYTES, MIN_POOLED_BYTES, ReadBufferPool } from '../../../broker/common/read-buffer-pool.js';

describe('ReadBufferPool', () => {
  it('hands out power-of-two classes and reuses a released buffer for the next lease', () => {
    const pool = new ReadBufferPool();
    const a = pool.lease();
    const buf = a.take(1_048_576 + 16)!;
    assert.equal(buf.length, 2 * 1_048_576);
    a.release();
    assert.equal(pool.retained, 2 * 1_048_576);
    const b = pool.lease();
    assert.equal(b.take(1_500_000), buf, 'the same memory comes back');
    assert.equal(pool.retained, 0);
  });

  it('a buffer is not handed out again while its lease is unreleased', () => {
    const pool = new ReadBufferPool();
    const a = pool.lease();
    const first = a.take(100_000)!;
    const second = pool.lease().take(100_000)!;
    assert.notEqual(first, second);
  });

  it('small and huge reads are not pooled', () => {
    const pool = new ReadBufferPool();
    const lease = pool.lease();
    assert.equal(lease.take(MIN_POOLED_BYTES - 1), undefined);
    assert.equal(lease.take(MAX_POOLED_BYTES + 1), undefined);
    lease.release();
    assert.equal(pool.retained, 0);
  });

  it('release is once: a second release gives nothing back twice, and a released lease hands out nothing', () => {
    const pool = new ReadBufferPool();
    const lease = pool.lease();
    lease.take(MIN_POOLED_BYTES);
    lease.release();
    lease.release();
    assert.equal(pool.retained, MIN_POOLED_BYTES);
    assert.equal(lease.take(MIN_POOLED_BYTES), undefined);
    // Two leases taking the one idle buffer cannot both get it.
    const x = pool.lease().take(MIN_POOLED_BYTES);
    const y = pool.lease().take(MIN_POOLED_BYTES);
    assert.notEqual(x, y);
  });

  it('keeps at most maxRetainedBytes idle', () => {
    const pool = new ReadBufferPool(3 * MIN_POOLED_BYTES);
    const lease = pool.lease();
    for (let i = 0; i < 5; i++) lease.take(MIN_POOLED_BYTES);
    lease.release();
    assert.equal(pool.retained, 3 * MIN_POOLED_BYTES);
  });

  it('runs what was deferred once, at release, and refuses to defer after it', () => {
    const lease = new ReadBufferPool().lease();
    const ran: string[] = [];
    assert.equal(lease.defer(() => ran.push('a')), true);
    assert.equal(lease.defer(() => ran.push('b')), true);
    assert.equal(ran.length, 0);
    lease.release();
    lease.release();
    assert.deepEqual([...ran], ['a', 'b']);
    const late = (): void => {
      ran.push('late');
    };
    assert.equal(lease.defer(late), false);
    assert.deepEqual([...ran], ['a', 'b']);
  });
});
