// The file behind one index (.index, .timeindex, .txnindex). Node has no mmap,
// so the entries live in a Buffer (the pure index classes, which every lookup
// reads) and this wrapper brings the file up to date with them: `writeTail`
// writes what changed since the last call in one positional write (and cuts
// the file when the index shrank), `rewrite` replaces the file after a
// rebuild, `flush` fsyncs. Files hold exactly the valid entries (no
// preallocation), which keeps the size check of a damaged index meaningful.
// The offset and time indexes reach the file at flush, roll and close only
// (Kafka's mmap'd indexes reach the disk lazily too); a crash loses at most the
// tail of indexes past the recovery point, which the log loader rebuilds.
import type { FileHandle } from 'node:fs/promises';
import { type HandleBudget, LazyHandle } from './file-handles.js';
import { readFileIfExists, unlinkIfExists, writeFileAtomic, writeFully } from '../common/file-io.js';
import type { IndexTail } from './abstract-index.js';

export class IndexFile {
  private handle: LazyHandle;
  private dirty = false;
  /** File length once every queued write has landed (set when the write is queued). */
  private planned = 0;
  /**
   * Writes, truncations and fsyncs, in call order. A failure sticks: every later
   * operation rejects with it (an index that missed a write must never be
   * fsynced as complete) until `rewrite` replaces the file.
   */
  private queue: Promise<void> = Promise.resolve();

  constructor(
    readonly file: string,
    private readonly budget?: HandleBudget,
  ) {
    this.handle = new LazyHandle(file, budget);
  }

  /** Bytes the file holds (or will once queued writes land). */
  get writtenBytes(): number {
    return this.planned;
  }

  /** The file's bytes, or null when it does not exist. Later tail writes continue after them. */
  async load(): Promise<Buffer | null> {
    const bytes = await readFileIfExists(this.file);
    this.planned = bytes?.length ?? 0;
    return bytes;
  }

  /** Writes `entry` at byte `position` (the end of the valid entries) now: the txn index, whose entries are rare. */
  append(entry: Buffer, position: number): Promise<void> {
    this.planned = Math.max(this.planned, position + entry.length);
    return this.enqueue((fh) => writeFully(fh, entry, position));
  }

  /**
   * Brings the file up to the in-memory index: `tail` (from the index's
   * takeUnwritten()) goes in one positional write, and the file is cut when the
   * index got shorter. Resolves when the bytes are in the file (not fsynced).
   */
  writeTail(tail: IndexTail): Promise<void> {
    const before = this.planned;
    this.planned = tail.size;
    if (tail.bytes.length === 0 && before === tail.size) return this.queue;
    return this.enqueue(async (fh) => {
      if (tail.bytes.length > 0) await writeFully(fh, tail.bytes, tail.from);
      if (before > tail.size) await fh.truncate(tail.size);
    });
  }

  truncate(size: number): Promise<void> {
    this.planned = size;
    return this.enqueue((fh) => fh.truncate(size));
  }

  private enqueue(op: (fh: FileHandle) => Promise<void>): Promise<void> {
    const run = this.queue.then(() =>
      this.handle.use(async (fh) => {
        this.dirty = true;
        await op(fh);
      }),
    );
    this.queue = run;
    return run;
  }

  /** Replaces the whole file (after a rebuild); atomic so a crash never leaves a half index. */
  async rewrite(bytes: Buffer): Promise<void> {
    // Queued writes go to the old file's fd; they must be done before it closes.
    await this.queue.catch(() => undefined);
    this.planned = bytes.length;
    await this.handle.closeIdle();
    await writeFileAtomic(this.file, bytes);
    this.dirty = false;
    this.queue = Promise.resolve();
  }

  /** fsyncs what was written, after the writes queued before it. */
  flush(): Promise<void> {
    const run = this.queue.then(async () => {
      if (!this.dirty) return;
      await this.handle.use(async (fh) => {
        this.dirty = false;
        await fh.sync();
      });
    });
    this.queue = run;
    return run;
  }

  /** Flushes pending entries, then releases the fd (it reopens on the next write). */
  async close(): Promise<void> {
    await this.flush();
    await this.handle.closeIdle();
  }

  /** Releases the fd without flushing (queued writes still finish first). */
  async closeHandle(): Promise<void> {
    await this.queue.catch(() => undefined);
    await this.handle.closeIdle();
  }

  async delete(): Promise<void> {
    await this.queue.catch(() => undefined);
    await this.handle.close();
    await unlinkIfExists(this.file);
  }
}
