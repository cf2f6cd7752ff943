// The file behind one index (.index, .timeindex, .txnindex). Node has no mmap,
// so the entries live in a Buffer (the pure index classes) and this wrapper
// appends each new entry through a LazyHandle, truncates, rewrites after a
// rebuild, and fsyncs. Files hold exactly the valid entries (no preallocation),
// which keeps the size check of a damaged index meaningful.
import { type HandleBudget, LazyHandle } from './file-handles.js';
import { readFileIfExists, unlinkIfExists, writeFileAtomic, writeFully } from './file-io.js';

export class IndexFile {
  private handle: LazyHandle;
  private dirty = false;

  constructor(
    readonly file: string,
    private readonly budget?: HandleBudget,
  ) {
    this.handle = new LazyHandle(file, budget);
  }

  /** The file's bytes, or null when it does not exist. */
  load(): Promise<Buffer | null> {
    return readFileIfExists(this.file);
  }

  /** Writes `entry` at byte `position` (the end of the valid entries). */
  append(entry: Buffer, position: number): Promise<void> {
    return this.handle.use(async (fh) => {
      this.dirty = true;
      await writeFully(fh, entry, position);
    });
  }

  truncate(size: number): Promise<void> {
    return this.handle.use(async (fh) => {
      this.dirty = true;
      await fh.truncate(size);
    });
  }

  /** Replaces the whole file (after a rebuild); atomic so a crash never leaves a half index. */
  async rewrite(bytes: Buffer): Promise<void> {
    await this.handle.closeIdle();
    await writeFileAtomic(this.file, bytes);
    this.dirty = false;
  }

  flush(): Promise<void> {
    if (!this.dirty) return Promise.resolve();
    return this.handle.use(async (fh) => {
      this.dirty = false;
      await fh.sync();
    });
  }

  /** Flushes pending entries, then releases the fd (it reopens on the next write). */
  async close(): Promise<void> {
    await this.flush();
    await this.handle.closeIdle();
  }

  /** Releases the fd without flushing. */
  async closeHandle(): Promise<void> {
    await this.handle.closeIdle();
  }

  async delete(): Promise<void> {
    await this.handle.close();
    await unlinkIfExists(this.file);
  }
}
