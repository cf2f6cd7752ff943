// A directory as the object store: the embedded default, so tiering works with
// nothing else installed. A key is a relative path under the root. Writes go to
// a temporary file that is fsynced and renamed into place (then the directory
// is fsynced), so a reader sees the old object or the new one, never a torn
// one, and a crash leaves at most a stray temporary file, which listing skips.
import { randomBytes } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';
import { mkdir, open, readdir, rename, rm, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { ByteRange, ObjectBody, ObjectInfo, ObjectStore, PieceListener, PieceTargets } from '../objects/object-store.js';
import { clampRange, pieceBuffer } from '../objects/object-store.js';
import { RemoteResourceNotFoundError, RemoteStorageError, throwIfAborted } from '../remote-storage.js';

const TMP_MARKER = '.sediment-tmp-';

function errnoCode(e: unknown): string | undefined {
  return typeof e === 'object' && e !== null && 'code' in e ? String((e as { code: unknown }).code) : undefined;
}

export interface FileSystemObjectStoreOptions {
  /** fsync files and directories on put (default true; tests may turn it off for speed). */
  readonly fsync?: boolean;
}

export class FileSystemObjectStore implements ObjectStore {
  readonly description: string;
  readonly root: string;
  private readonly fsync: boolean;

  constructor(root: string, options: FileSystemObjectStoreOptions = {}) {
    this.root = path.resolve(root);
    this.description = `file://${this.root}`;
    this.fsync = options.fsync ?? true;
  }

  /** The file holding `key`; refuses keys that would escape the root. */
  pathOf(key: string): string {
    if (key === '' || key.startsWith('/') || key.split('/').some((p) => p === '' || p === '.' || p === '..')) {
      throw new RangeError(`invalid object key ${JSON.stringify(key)}`);
    }
    return path.join(this.root, ...key.split('/'));
  }

  async put(key: string, body: ObjectBody, signal?: AbortSignal): Promise<void> {
    throwIfAborted(signal, `put ${key}`);
    const file = this.pathOf(key);
    const dir = path.dirname(file);
    const tmp = `${file}${TMP_MARKER}${randomBytes(6).toString('hex')}`;
    let handle: FileHandle | undefined;
    try {
      await mkdir(dir, { recursive: true });
      handle = await open(tmp, 'w');
      if (Buffer.isBuffer(body)) {
        await handle.writeFile(body);
      } else {
        for await (const piece of body) {
          throwIfAborted(signal, `put ${key}`);
          await handle.write(piece);
        }
      }
      throwIfAborted(signal, `put ${key}`);
      if (this.fsync) await handle.sync();
      await handle.close();
      handle = undefined;
      await rename(tmp, file);
      if (this.fsync) await this.syncDir(dir);
    } catch (e) {
      await handle?.close().catch(() => {});
      await unlink(tmp).catch(() => {});
      throw this.wrap(e, `put ${key}`);
    }
  }

  async get(key: string, range?: ByteRange, signal?: AbortSignal): Promise<Buffer> {
    const [bytes] = await this.readPieces(key, range, (length) => [length], signal);
    return bytes ?? Buffer.alloc(0);
  }

  async getPieces(key: string, range: ByteRange, lengths: readonly number[], signal?: AbortSignal, onPiece?: PieceListener, targets?: PieceTargets): Promise<Buffer[]> {
    return this.readPieces(key, range, () => lengths, signal, onPiece, targets);
  }

  /** Reads the (clamped) range into fresh (or lent) buffers of the lengths `cut` gives for its size, stopping at the end of the file. */
  private async readPieces(
    key: string,
    range: ByteRange | undefined,
    cut: (length: number) => readonly number[],
    signal?: AbortSignal,
    onPiece?: PieceListener,
    targets?: PieceTargets,
  ): Promise<Buffer[]> {
    throwIfAborted(signal, `get ${key}`);
    let handle: FileHandle | undefined;
    try {
      handle = await open(this.pathOf(key), 'r');
      const { size } = await handle.stat();
      const { start, end } = clampRange(size, range);
      const out: Buffer[] = [];
      let position = start;
      for (const n of cut(end - start)) {
        if (position >= end) break;
        const buf = pieceBuffer(targets, out.length, Math.min(n, end - position));
        let filled = 0;
        while (filled < buf.length) {
          throwIfAborted(signal, `get ${key}`);
          const { bytesRead } = await handle.read(buf, filled, buf.length - filled, position + filled);
          if (bytesRead === 0) break;
          filled += bytesRead;
        }
        out.push(filled === buf.length ? buf : buf.subarray(0, filled));
        if (filled < n) break;
        onPiece?.(out.length - 1, buf);
        position += filled;
      }
      return out;
    } catch (e) {
      if (errnoCode(e) === 'ENOENT') throw new RemoteResourceNotFoundError(`${this.description}/${key} does not exist`, { cause: e });
      throw this.wrap(e, `get ${key}`);
    } finally {
      await handle?.close().catch(() => {});
    }
  }

  async delete(key: string, signal?: AbortSignal): Promise<void> {
    throwIfAborted(signal, `delete ${key}`);
    try {
      await unlink(this.pathOf(key));
    } catch (e) {
      if (errnoCode(e) === 'ENOENT') return;
      throw this.wrap(e, `delete ${key}`);
    }
  }

  async list(prefix: string, signal?: AbortSignal, startAfter?: string): Promise<ObjectInfo[]> {
    throwIfAborted(signal, `list ${prefix}`);
    // Walk only the directory the prefix names (its part up to the last '/').
    const slash = prefix.lastIndexOf('/');
    const dirKey = slash < 0 ? '' : prefix.slice(0, slash);
    const out: ObjectInfo[] = [];
    const walk = async (relDir: string): Promise<void> => {
      throwIfAborted(signal, `list ${prefix}`);
      const abs = relDir === '' ? this.root : this.pathOf(relDir);
      let entries;
      try {
        entries = await readdir(abs, { withFileTypes: true });
      } catch (e) {
        if (errnoCode(e) === 'ENOENT' || errnoCode(e) === 'ENOTDIR') return;
        throw this.wrap(e, `list ${prefix}`);
      }
      for (const entry of entries) {
        const key = relDir === '' ? entry.name : `${relDir}/${entry.name}`;
        if (entry.isDirectory()) {
          if (prefix.startsWith(`${key}/`) || key.startsWith(prefix) || `${key}/`.startsWith(prefix)) await walk(key);
        } else if (entry.isFile() && key.startsWith(prefix) && (startAfter === undefined || key > startAfter) && !entry.name.includes(TMP_MARKER)) {
          try {
            const st = await stat(path.join(abs, entry.name));
            out.push({ key, size: st.size, lastModified: st.mtimeMs });
          } catch (e) {
            if (errnoCode(e) !== 'ENOENT') throw this.wrap(e, `list ${prefix}`);
          }
        }
      }
    };
    await walk(dirKey);
    return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  async close(): Promise<void> {}

  /** Removes the whole root (tests). */
  async destroy(): Promise<void> {
    await rm(this.root, { recursive: true, force: true });
  }

  private async syncDir(dir: string): Promise<void> {
    const h = await open(dir, 'r');
    try {
      await h.sync();
    } finally {
      await h.close();
    }
  }

  private wrap(e: unknown, what: string): RemoteStorageError {
    if (e instanceof RemoteStorageError) return e;
    return new RemoteStorageError(`${what} in ${this.description}: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
  }
}
