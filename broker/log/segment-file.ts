// The `.log` file of one segment: positional appends, reads of byte ranges,
// truncation, fsync. Reads may be in flight when retention deletes the segment,
// so the fd closes only once the last read has finished (an unlinked file stays
// readable through an open fd); a read that starts after close fails with
// SegmentClosedError and the caller looks the offset up again.
import { promises as fsp } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { DELETED_SUFFIX } from './file-names.js';
import { READ_WRITE_CREATE, isNotFound, readFully, unlinkIfExists, writeFully, writevFully } from './file-io.js';

export class SegmentClosedError extends Error {
  override name = 'SegmentClosedError';
}

export class SegmentFile {
  private fh: FileHandle | null = null;
  private opening: Promise<FileHandle> | null = null;
  private inflight = 0;
  private closed = false;
  private closeWaiters: Array<() => void> = [];
  private dirty = false;

  constructor(private path: string) {}

  get file(): string {
    return this.path;
  }


  private async handle(): Promise<FileHandle> {
    if (this.fh !== null) return this.fh;
    if (this.opening === null) {
      this.opening = fsp.open(this.file, READ_WRITE_CREATE, 0o644).then((fh) => {
        this.fh = fh;
        this.opening = null;
        return fh;
      });
    }
    return this.opening;
  }

  private async use<T>(fn: (fh: FileHandle) => Promise<T>): Promise<T> {
    if (this.closed) throw new SegmentClosedError(`${this.file} is closed`);
    this.inflight++;
    try {
      return await fn(await this.handle());
    } finally {
      this.inflight--;
      if (this.inflight === 0 && this.closed) await this.release();
    }
  }

  write(buf: Buffer, position: number): Promise<void> {
    return this.use(async (fh) => {
      await writeFully(fh, buf, position);
      this.dirty = true;
    });
  }

  /** Several buffers back to back at `position`, in one writev where possible. */
  writev(bufs: readonly Buffer[], position: number): Promise<void> {
    return this.use(async (fh) => {
      await writevFully(fh, bufs, position);
      this.dirty = true;
    });
  }

  /** Up to `length` bytes at `position` (fewer only at end of file). */
  read(position: number, length: number): Promise<Buffer> {
    return this.use((fh) => readFully(fh, position, length));
  }

  truncate(size: number): Promise<void> {
    return this.use(async (fh) => {
      await fh.truncate(size);
      this.dirty = true;
    });
  }

  async size(): Promise<number> {
    return this.use(async (fh) => (await fh.stat()).size);
  }

  flush(): Promise<void> {
    if (!this.dirty) return Promise.resolve();
    return this.use(async (fh) => {
      this.dirty = false;
      await fh.sync();
    });
  }

  private async release(): Promise<void> {
    const fh = this.fh ?? (this.opening !== null ? await this.opening : null);
    this.fh = null;
    if (fh !== null) await fh.close();
    const waiters = this.closeWaiters;
    this.closeWaiters = [];
    for (const w of waiters) w();
  }

  /** Stops new I/O; the fd closes when in-flight reads and writes finish. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.inflight === 0) {
      await this.release();
      return;
    }
    await new Promise<void>((resolve) => this.closeWaiters.push(resolve));
  }

  /** Unlinks the file now; in-flight reads still complete through the open fd. */
  async delete(): Promise<void> {
    await unlinkIfExists(this.file);
    await this.close();
  }

  /**
   * First step of a deletion that survives a crash: the `.log` is renamed to
   * `<name>.deleted` (atomic), so a restart never loads it again; `delete()` then
   * removes the renamed file.
   */
  async markDeleted(): Promise<void> {
    const renamed = this.file + DELETED_SUFFIX;
    try {
      await fsp.rename(this.file, renamed);
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
    this.path = renamed;
  }
}
