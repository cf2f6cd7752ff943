// When the bytes of one segment file were written, coarsely: enough to tell a
// read of what was written in the last few seconds from an older one. A read
// of recent bytes is served from the page cache (Linux writes dirty pages back
// only after vm.dirty_expire_centisecs, 30 s by default, and cannot drop them
// before), so it can be a synchronous pread on the event loop: the same copy
// the libuv thread pool would make, without handing the read to a pool thread
// and waking the event loop for its completion (futex and eventfd round trips
// that cost about as much CPU as the copy of a 1 MiB read; issue 16). Older
// bytes may need the disk and keep going through the pool. A wrong guess costs
// only time, never data: the bytes read are the same either way. Pure.

/** Writes closer together than this share one mark. */
export const MARK_INTERVAL_MS = 1000;

interface Mark {
  /** Every byte at or after `position` was written at `time` or later. */
  readonly time: number;
  readonly position: number;
}

export class RecentWrites {
  private marks: Mark[] = [];

  constructor(readonly windowMs: number) {}

  /** A write starting at `position` (appends only ever go at the end). */
  noteWrite(position: number, now: number): void {
    const last = this.marks[this.marks.length - 1];
    if (last !== undefined && position < last.position) this.marks = []; // the file was cut: marks above it no longer hold
    else if (last !== undefined && now - last.time < MARK_INTERVAL_MS) return;
    this.marks.push({ time: now, position });
    this.dropOld(now);
  }

  /** The lowest position whose bytes were all written within the window before `now`; Infinity when none was. */
  hotFrom(now: number): number {
    this.dropOld(now);
    return this.marks[0]?.position ?? Infinity;
  }

  /** Forgets every mark: after a truncation or a rewrite nothing is known to be recent. */
  clear(): void {
    this.marks = [];
  }

  private dropOld(now: number): void {
    let drop = 0;
    while (drop < this.marks.length && (this.marks[drop] as Mark).time < now - this.windowMs) drop++;
    if (drop > 0) this.marks.splice(0, drop);
  }
}
