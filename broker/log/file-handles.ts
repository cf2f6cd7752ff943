// Bounded open files. Each segment file and index file holds a LazyHandle: the
// fd opens on first use and may be closed again by the HandleBudget when too
// many are open (least recently used first, never one with I/O in flight); the
// next use reopens it. Closing for good (segment closed or deleted) waits for
// in-flight I/O, so a read racing a deletion finishes through its fd.
import { promises as fsp } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { READ_WRITE_CREATE } from '../common/file-io.js';

export class SegmentClosedError extends Error {
  override name = 'SegmentClosedError';
}

export class HandleBudget {
  /** Open handles, least recently used first (Map keeps insertion order). */
  private readonly open = new Map<LazyHandle, true>();

  constructor(readonly maxOpen: number) {}

  get openCount(): number {
    return this.open.size;
  }

  touched(h: LazyHandle): void {
    if (this.open.delete(h)) this.open.set(h, true);
  }

  opened(h: LazyHandle): void {
    this.open.set(h, true);
    if (this.open.size <= this.maxOpen) return;
    for (const other of this.open.keys()) {
      if (this.open.size <= this.maxOpen) break;
      if (other !== h && other.releaseIfIdle()) this.open.delete(other);
    }
  }

  closed(h: LazyHandle): void {
    this.open.delete(h);
  }

  /**
   * A handle's I/O finished: if the budget was exceeded while handles were busy
   * (none could be closed then), close idle ones now, least recently used first.
   */
  settled(): void {
    if (this.open.size <= this.maxOpen) return;
    for (const other of this.open.keys()) {
      if (this.open.size <= this.maxOpen) break;
      if (other.releaseIfIdle()) this.open.delete(other);
    }
  }
}

/** Shared by logs that are not given their own budget. */
export const defaultHandleBudget = new HandleBudget(512);

export class LazyHandle {
  private fh: FileHandle | null = null;
  private opening: Promise<FileHandle> | null = null;
  private inflight = 0;
  private closedForGood = false;
  private closeWaiters: Array<() => void> = [];

  constructor(
    public path: string,
    private readonly budget: HandleBudget = defaultHandleBudget,
  ) {}

  get isClosed(): boolean {
    return this.closedForGood;
  }

  private async handle(): Promise<FileHandle> {
    if (this.fh !== null) return this.fh;
    if (this.opening === null) {
      this.opening = fsp.open(this.path, READ_WRITE_CREATE, 0o644).then(
        (fh) => {
          this.fh = fh;
          this.opening = null;
          this.budget.opened(this);
          return fh;
        },
        (e: unknown) => {
          this.opening = null;
          throw e;
        },
      );
    }
    return this.opening;
  }

  /** Runs `fn` with the open fd; SegmentClosedError once closed for good. */
  async use<T>(fn: (fh: FileHandle) => Promise<T>): Promise<T> {
    if (this.closedForGood) throw new SegmentClosedError(`${this.path} is closed`);
    this.inflight++;
    try {
      const fh = await this.handle();
      this.budget.touched(this);
      return await fn(fh);
    } finally {
      this.inflight--;
      if (this.inflight === 0 && this.closedForGood) await this.release();
      else if (this.inflight === 0) this.budget.settled();
    }
  }

  /** Budget eviction: closes the fd if nothing is using it. */
  releaseIfIdle(): boolean {
    if (this.inflight > 0 || this.fh === null || this.opening !== null) return false;
    const fh = this.fh;
    this.fh = null;
    void fh.close().catch(() => undefined);
    return true;
  }

  private async release(): Promise<void> {
    const fh = this.fh ?? (this.opening !== null ? await this.opening.catch(() => null) : null);
    this.fh = null;
    this.budget.closed(this);
    if (fh !== null) await fh.close();
    const waiters = this.closeWaiters;
    this.closeWaiters = [];
    for (const w of waiters) w();
  }

  /** Closes the fd now if idle; it reopens on the next use. */
  async closeIdle(): Promise<void> {
    if (this.inflight > 0 || this.closedForGood) return;
    const fh = this.fh ?? (this.opening !== null ? await this.opening.catch(() => null) : null);
    if (this.inflight > 0 || fh === null) return;
    this.fh = null;
    this.budget.closed(this);
    await fh.close();
  }

  /** Closes for good once in-flight I/O has finished. */
  async close(): Promise<void> {
    if (this.closedForGood) return;
    this.closedForGood = true;
    if (this.inflight === 0) {
      await this.release();
      return;
    }
    await new Promise<void>((resolve) => this.closeWaiters.push(resolve));
  }
}
