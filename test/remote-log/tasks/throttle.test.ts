// The byte-rate throttle on a manual clock.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../../../broker/common/clock.js';
import { ManualScheduler } from '../../../broker/common/scheduler.js';
import { ByteRateThrottle } from '../../../remote-log/tasks/throttle.js';

const setup = (rate: number) => {
  const clock = new ManualClock(0);
  const scheduler = new ManualScheduler(clock);
  return { clock, scheduler, throttle: new ByteRateThrottle(rate, clock, scheduler) };
};
const tick = () => new Promise((r) => setImmediate(r));

describe('ByteRateThrottle', () => {
  it('is a no-op when unlimited (<= 0 or Long.MAX)', async () => {
    for (const rate of [0, -1, Number.MAX_SAFE_INTEGER, 9223372036854775807]) {
      const { throttle } = setup(rate);
      assert.equal(throttle.limited, false);
      await throttle.acquire(1e12);
      assert.equal(throttle.delayMs(), 0);
    }
  });

  it('lets a burst through, then holds the average rate, even for units larger than the burst', async () => {
    const { clock, scheduler, throttle } = setup(1000);
    await throttle.acquire(5000); // 1000 in the bucket: 4000 of debt
    assert.equal(throttle.delayMs(), 4000);
    let done = false;
    const next = throttle.acquire(10).then(() => (done = true));
    await tick();
    assert.equal(done, false);
    assert.equal(scheduler.pending, 1);
    clock.advance(3999);
    await tick();
    assert.equal(done, false);
    clock.advance(1);
    await next;
    assert.equal(throttle.throttledMs, 4000);
  });

  it('refills up to one second of rate when idle', () => {
    const { clock, throttle } = setup(1000);
    throttle.record(1000);
    clock.advance(60_000);
    throttle.record(1500);
    assert.equal(throttle.delayMs(), 500, 'the bucket held 1000, not 60000');
  });

  it('an abort ends a throttled wait', async () => {
    const { throttle, scheduler } = setup(100);
    throttle.record(1000);
    const c = new AbortController();
    const p = throttle.waitForCapacity(c.signal);
    await tick();
    c.abort();
    await assert.rejects(p, { name: 'RemoteAbortedError' });
    assert.equal(scheduler.pending, 0);
  });
});
