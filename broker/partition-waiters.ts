// Long-poll support for Fetch: a fetch with too few bytes registers interest in
// its partitions and wakes when any of them is appended to (or on timeout).
import { systemScheduler, type Scheduler } from './common/scheduler.js';

export class PartitionWaiters {
  private readonly waiters = new Map<string, Set<() => void>>();

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
    });
  }

  notify(topic: string, partition: number): void {
    const set = this.waiters.get(PartitionWaiters.key(topic, partition));
    if (set === undefined) return;
    for (const fn of [...set]) fn();
  }
}
