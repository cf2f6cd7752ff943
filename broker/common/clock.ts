// Time is injected so tests are deterministic: production code reads `Clock`,
// tests drive a `ManualClock`.

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

export class ManualClock implements Clock {
  private listeners: Array<(now: number) => void> = [];

  constructor(private current = 1_700_000_000_000) {}

  now(): number {
    return this.current;
  }

  set(ms: number): void {
    this.current = ms;
    for (const l of this.listeners) l(ms);
  }

  advance(ms: number): void {
    this.set(this.current + ms);
  }

  /** Called after every change of time (ManualScheduler fires due timers from here). */
  onChange(listener: (now: number) => void): void {
    this.listeners.push(listener);
  }
}
