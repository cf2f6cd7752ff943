// The `.log` file of one segment: positional appends, reads of byte ranges,
// truncation, fsync, over a LazyHandle (bounded open files). Reads may be in
// flight when retention deletes the segment: the fd closes only once the last
// one has finished (an unlinked file stays readable through an open fd); a read
// that starts after close fails with SegmentClosedError and the caller looks
// the offset up again.
import { promises as fsp } from 'node:fs';
import { DELETED_SUFFIX } from './file-names.js';
import { isNotFound, readFully, readFullySync, unlinkIfExists, writeFully, writevFully } from '../common/file-io.js';
import { type HandleBudget, LazyHandle, SegmentClosedError } from './file-handles.js';

export { SegmentClosedError };

export class SegmentFile {
  private readonly handle: LazyHandle;
  private dirty = false;

  constructor(path: string, budget?: HandleBudget) {
    this.handle = new LazyHandle(path, budget);
  }

  get file(): string {
    return this.handle.path;
  }

  write(buf: Buffer, position: number): Promise<void> {
    return this.handle.use(async (fh) => {
      this.dirty = true;
      await writeFully(fh, buf, position);
    });
  }

  /** Several buffers back to back at `position`, in one writev where possible. */
  writev(bufs: readonly Buffer[], position: number): Promise<void> {
    return this.handle.use(async (fh) => {
      this.dirty = true;
      await writevFully(fh, bufs, position);
    });
  }

  /** Up to `length` bytes at `position` (fewer only at end of file); into `into` (at least `length` long) when given. */
  read(position: number, length: number, into?: Buffer): Promise<Buffer> {
    return this.handle.use((fh) => readFully(fh, position, length, into));
  }

  /** read() for bytes in the page cache: the pread runs on this thread, not the libuv pool (recent-writes.ts says when). */
  readResident(position: number, length: number, into?: Buffer): Promise<Buffer> {
    return this.handle.use(async (fh) => readFullySync(fh.fd, position, length, into));
  }

  /** Runs `fn` with the open descriptor, which stays open until it returns (synchronous work only). */
  withFd<T>(fn: (fd: number) => T): Promise<T> {
    return this.handle.use(async (fh) => fn(fh.fd));
  }

  truncate(size: number): Promise<void> {
    return this.handle.use(async (fh) => {
      this.dirty = true;
      await fh.truncate(size);
    });
  }

  size(): Promise<number> {
    return this.handle.use(async (fh) => (await fh.stat()).size);
  }

  /** fsync when something was written since the last one (through any fd of the file). */
  flush(): Promise<void> {
    if (!this.dirty) return Promise.resolve();
    return this.handle.use(async (fh) => {
      this.dirty = false;
      await fh.sync();
    });
  }

  /** Stops new I/O; the fd closes when in-flight reads and writes finish. */
  close(): Promise<void> {
    return this.handle.close();
  }

  /** Releases the fd while keeping the file usable (it reopens on demand). */
  closeIdle(): Promise<void> {
    return this.handle.closeIdle();
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
    this.handle.path = renamed;
  }
}
