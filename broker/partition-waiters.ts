// Long-poll support for Fetch: a fetch with too few bytes registers interest in
// its partitions and wakes when any of them is appended to (or on timeout).
import { systemScheduler, type Scheduler } from './common/scheduler.js';

export class PartitionWaiters {
  private readonly waiters = new Map<string, Set<() => void>>();
  private waiting = 0;
  private parkedListeners: Array<(keys: readonly string[]) => void> = [];

  constructor(private readonly scheduler: Scheduler = systemScheduler) {}

  static key(topic: string, partition: number): string {
    return `${topic}\u0000${partition}`;
  }

  /** Resolves on the first append to any of the keys, on timeout, or on abort. */
  wait(keys: readonly string[], timeoutMs: number, signal?: AbortSignal): Promise<void> {
    if (timeoutMs <= 0 || keys.length === 0) return Promise.resolve();
    return new Promise((resolve) => {
      let done = false;
      const finish = (): void => {
        if (done) return;
        done = true;
        this.waiting--;
        this.scheduler.clearTimeout(timer);
        signal?.removeEventListener('abort', finish);
        for (const k of keys) {
          const set = this.waiters.get(k);
          set?.delete(finish);
          if (set?.size === 0) this.waiters.delete(k);
        }
        resolve();
      };
      const timer = this.scheduler.setTimeout(finish, timeoutMs);
      signal?.addEventListener('abort', finish);
      for (const k of keys) {
        let set = this.waiters.get(k);
        if (set === undefined) this.waiters.set(k, (set = new Set()));
        set.add(finish);
      }
      this.waiting++;
      const listeners = this.parkedListeners;
      this.parkedListeners = [];
      for (const l of listeners) l(keys);
    });
  }

  /** Waits still parked (not yet woken, timed out or aborted). */
  get pending(): number {
    return this.waiting;
  }

  /**
   * Resolves with the keys of the next wait to park. Tests await it to know a
   * long poll is parked before they append, so the append proves the wake-up
   * rather than racing the fetch to the partition.
   */
  nextParked(): Promise<readonly string[]> {
    return new Promise((resolve) => this.parkedListeners.push(resolve));
  }

  notify(topic: string, partition: number): void {
    const set = this.waiters.get(PartitionWaiters.key(topic, partition));
    if (set === undefined) return;
    for (const fn of [...set]) fn();
  }
}
