// A byte-rate throttle (token bucket) on an injected clock and scheduler, for
// remote.log.manager.copy.max.bytes.per.second and
// remote.log.manager.fetch.max.bytes.per.second. The bucket may go into debt:
// a caller waits until the debt is paid, then takes what it needs at once, so a
// segment larger than the burst still passes and the average rate holds.
import type { Clock } from '../../broker/common/clock.js';
import type { Scheduler } from '../../broker/common/scheduler.js';
import { RemoteAbortedError } from '../remote-storage.js';

export class ByteRateThrottle {
  /** False when the rate is unbounded (<= 0, or Kafka's Long.MAX_VALUE default). */
  readonly limited: boolean;
  private readonly capacity: number;
  private tokens: number;
  private last: number;
  private waitedMs = 0;

  /**
   * @param bytesPerSecond the average rate; <= 0 or >= 2^53 means unlimited.
   * @param burstMs how many milliseconds of rate the bucket holds when idle.
   */
  constructor(
    readonly bytesPerSecond: number,
    private readonly clock: Clock,
    private readonly scheduler: Scheduler,
    burstMs = 1000,
  ) {
    this.limited = Number.isFinite(bytesPerSecond) && bytesPerSecond > 0 && bytesPerSecond < Number.MAX_SAFE_INTEGER;
    this.capacity = this.limited ? Math.max(1, (bytesPerSecond * burstMs) / 1000) : 0;
    this.tokens = this.capacity;
    this.last = clock.now();
  }

  /** Waits until the bucket is out of debt, then takes `bytes` (possibly going into debt). */
  async acquire(bytes: number, signal?: AbortSignal): Promise<void> {
    if (!this.limited) return;
    await this.waitForCapacity(signal);
    this.tokens -= bytes;
  }

  /** Accounts for bytes already moved (reads are charged after the fact). */
  record(bytes: number): void {
    if (!this.limited) return;
    this.refill();
    this.tokens -= bytes;
  }

  /** Resolves once the bucket is out of debt. */
  async waitForCapacity(signal?: AbortSignal): Promise<void> {
    if (!this.limited) return;
    for (;;) {
      if (signal?.aborted) throw new RemoteAbortedError('throttled wait: aborted', { cause: signal.reason });
      const delay = this.delayMs();
      if (delay === 0) return;
      this.waitedMs += delay;
      await this.sleep(delay, signal);
    }
  }

  /** Milliseconds until the bucket is out of debt (0: now). */
  delayMs(): number {
    if (!this.limited) return 0;
    this.refill();
    if (this.tokens >= 0) return 0;
    return Math.max(1, Math.ceil((-this.tokens * 1000) / this.bytesPerSecond));
  }

  /** Total milliseconds callers were told to wait (a throttle-time metric). */
  get throttledMs(): number {
    return this.waitedMs;
  }

  private refill(): void {
    const now = this.clock.now();
    const elapsed = now - this.last;
    if (elapsed > 0) {
      this.tokens = Math.min(this.capacity, this.tokens + (elapsed * this.bytesPerSecond) / 1000);
      this.last = now;
    }
  }

  private sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        this.scheduler.clearTimeout(handle);
        reject(new RemoteAbortedError('throttled wait: aborted', { cause: signal?.reason }));
      };
      const handle = this.scheduler.setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}
