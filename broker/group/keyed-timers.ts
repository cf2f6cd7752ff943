// Timers addressed by a string key over the injected Scheduler: scheduling a
// key again replaces its previous timer (Kafka's coordinator timer semantics,
// used for heartbeat, join and sync deadlines).
import type { Scheduler, TimerHandle } from '../common/scheduler.js';

export class KeyedTimers {
  private readonly timers = new Map<string, TimerHandle>();

  constructor(private readonly scheduler: Scheduler) {}

  schedule(key: string, delayMs: number, fn: () => void): void {
    this.cancel(key);
    const handle = this.scheduler.setTimeout(() => {
      if (this.timers.get(key) !== handle) return;
      this.timers.delete(key);
      fn();
    }, delayMs);
    this.timers.set(key, handle);
  }

  cancel(key: string): void {
    const handle = this.timers.get(key);
    if (handle === undefined) return;
    this.scheduler.clearTimeout(handle);
    this.timers.delete(key);
  }

  has(key: string): boolean {
    return this.timers.has(key);
  }

  cancelAll(): void {
    for (const handle of this.timers.values()) this.scheduler.clearTimeout(handle);
    this.timers.clear();
  }

  get size(): number {
    return this.timers.size;
  }
}

export const heartbeatKey = (groupId: string, memberId: string): string => `heartbeat\u0000${groupId}\u0000${memberId}`;
export const joinKey = (groupId: string): string => `join\u0000${groupId}`;
export const syncKey = (groupId: string): string => `sync\u0000${groupId}`;
