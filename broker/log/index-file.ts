// The file behind one index (.index, .timeindex, .txnindex). Node has no mmap,
// so the entries live in a Buffer (the pure index classes) and this wrapper
// appends each new entry through its own fd, truncates, rewrites after a
// rebuild, and fsyncs. Files hold exactly the valid entries (no preallocation),
// which keeps the size check of a damaged index meaningful.
import { promises as fsp } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { READ_WRITE_CREATE, readFileIfExists, unlinkIfExists, writeFileAtomic, writeFully } from './file-io.js';

export class IndexFile {
  private fh: FileHandle | null = null;
  private dirty = false;

  constructor(public file: string) {}

  /** The file's bytes, or null when it does not exist. */
  load(): Promise<Buffer | null> {
    return readFileIfExists(this.file);
  }

  private async handle(): Promise<FileHandle> {
    if (this.fh === null) this.fh = await fsp.open(this.file, READ_WRITE_CREATE, 0o644);
    return this.fh;
  }

  /** Writes `entry` at byte `position` (the end of the valid entries). */
  async append(entry: Buffer, position: number): Promise<void> {
    const fh = await this.handle();
    await writeFully(fh, entry, position);
    this.dirty = true;
  }

  async truncate(size: number): Promise<void> {
    const fh = await this.handle();
    await fh.truncate(size);
    this.dirty = true;
  }

  /** Replaces the whole file (after a rebuild); atomic so a crash never leaves a half index. */
  async rewrite(bytes: Buffer): Promise<void> {
    await this.closeHandle();
    await writeFileAtomic(this.file, bytes);
    this.dirty = false;
  }

  async flush(): Promise<void> {
    if (this.fh !== null && this.dirty) {
      this.dirty = false;
      await this.fh.sync();
    }
  }

  /** Flushes pending entries, then releases the fd (it is reopened on the next write). */
  async close(): Promise<void> {
    await this.flush();
    await this.closeHandle();
  }

  async closeHandle(): Promise<void> {
    const fh = this.fh;
    this.fh = null;
    if (fh !== null) await fh.close();
  }

  async delete(): Promise<void> {
    await this.closeHandle();
    await unlinkIfExists(this.file);
  }
}
