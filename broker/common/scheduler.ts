// Timers are injected like time: `systemScheduler` wraps Node's timers,
// `ManualScheduler` fires due timers when its ManualClock advances.
import type { ManualClock } from './clock.js';

export interface TimerHandle {
  readonly id: number;
}

export interface Scheduler {
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

let nextTimerId = 1;

export const systemScheduler: Scheduler = (() => {
  const timers = new Map<number, NodeJS.Timeout>();
  return {
    setTimeout(fn: () => void, ms: number): TimerHandle {
      const id = nextTimerId++;
      const t = setTimeout(() => {
        timers.delete(id);
        fn();
      }, Math.max(0, ms));
      t.unref();
      timers.set(id, t);
      return { id };
    },
    clearTimeout(handle: TimerHandle): void {
      const t = timers.get(handle.id);
      if (t !== undefined) clearTimeout(t);
      timers.delete(handle.id);
    },
  };
})();

export class ManualScheduler implements Scheduler {
  private readonly timers = new Map<number, { due: number; fn: () => void }>();

  constructor(private readonly clock: ManualClock) {
    clock.onChange((now) => this.runDue(now));
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const id = nextTimerId++;
    this.timers.set(id, { due: this.clock.now() + Math.max(0, ms), fn });
    return { id };
  }

  clearTimeout(handle: TimerHandle): void {
    this.timers.delete(handle.id);
  }

  get pending(): number {
    return this.timers.size;
  }

  /** Fires every timer due at or before `now`, earliest first, including ones scheduled while firing. */
  private runDue(now: number): void {
    for (;;) {
      let next: [number, { due: number; fn: () => void }] | null = null;
      for (const entry of this.timers) if (entry[1].due <= now && (next === null || entry[1].due < next[1].due)) next = entry;
      if (next === null) return;
      this.timers.delete(next[0]);
      next[1].fn();
    }
  }
}
