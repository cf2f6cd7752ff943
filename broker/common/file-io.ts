// Thin file I/O every layer may use: positional reads and writes that loop
// until done, atomic replacement (tmp + fsync + rename + directory fsync), and
// missing-file tolerant helpers. The log, the metadata files (meta.properties,
// the topic store) and the producer-id block all replace files through
// writeFileAtomic here, so a crash leaves the old or the new content, never a mix.
import { constants as fsConstants, promises as fsp, readSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';

/** Left by an interrupted atomic write; the log loader removes such files at load. */
export const TMP_SUFFIX = '.tmp';

/** O_RDWR | O_CREAT, never O_APPEND (positional writes must land where asked). */
export const READ_WRITE_CREATE = fsConstants.O_RDWR | fsConstants.O_CREAT;

export async function writeFully(fh: FileHandle, buf: Buffer, position: number): Promise<void> {
  let done = 0;
  while (done < buf.length) {
    const { bytesWritten } = await fh.write(buf, done, buf.length - done, position + done);
    if (bytesWritten <= 0) throw new Error(`short write at ${position + done}`);
    done += bytesWritten;
  }
}

/** Writes `bufs` back to back at `position` with as few writev calls as the kernel allows. */
export async function writevFully(fh: FileHandle, bufs: readonly Buffer[], position: number): Promise<void> {
  if (bufs.length === 1) return writeFully(fh, bufs[0] as Buffer, position);
  let pending = bufs.filter((b) => b.length > 0);
  let pos = position;
  while (pending.length > 0) {
    const { bytesWritten } = await fh.writev(pending, pos);
    if (bytesWritten <= 0) throw new Error(`short write at ${pos}`);
    pos += bytesWritten;
    let skip = bytesWritten;
    const rest: Buffer[] = [];
    for (const b of pending) {
      if (skip >= b.length) skip -= b.length;
      else {
        rest.push(skip > 0 ? b.subarray(skip) : b);
        skip = 0;
      }
    }
    pending = rest;
  }
}

/** Reads up to `length` bytes at `position`; shorter only at end of file. */
export async function readFully(fh: FileHandle, position: number, length: number, into?: Buffer): Promise<Buffer> {
  if (into !== undefined && into.length < length) throw new RangeError(`readFully: a ${into.length}-byte buffer for ${length} bytes`);
  const buf = into ?? Buffer.allocUnsafe(length);
  let done = 0;
  while (done < length) {
    const { bytesRead } = await fh.read(buf, done, length - done, position + done);
    if (bytesRead === 0) break;
    done += bytesRead;
  }
  return done === buf.length ? buf : buf.subarray(0, done);
}

/**
 * readFully with pread(2) on the calling thread: for bytes known to be in the
 * page cache (broker/log/recent-writes.ts), where handing the read to the
 * libuv pool costs more than the copy. Blocks until the bytes are read.
 */
export function readFullySync(fd: number, position: number, length: number, into?: Buffer): Buffer {
  if (into !== undefined && into.length < length) throw new RangeError(`readFullySync: a ${into.length}-byte buffer for ${length} bytes`);
  const buf = into ?? Buffer.allocUnsafe(length);
  let done = 0;
  while (done < length) {
    const n = readSync(fd, buf, done, length - done, position + done);
    if (n === 0) break;
    done += n;
  }
  return done === buf.length ? buf : buf.subarray(0, done);
}

export async function readFileIfExists(file: string): Promise<Buffer | null> {
  try {
    return await fsp.readFile(file);
  } catch (e) {
    if (isNotFound(e)) return null;
    throw e;
  }
}

export async function unlinkIfExists(file: string): Promise<boolean> {
  try {
    await fsp.unlink(file);
    return true;
  } catch (e) {
    if (isNotFound(e)) return false;
    throw e;
  }
}

export async function fileExists(file: string): Promise<boolean> {
  try {
    await fsp.stat(file);
    return true;
  } catch (e) {
    if (isNotFound(e)) return false;
    throw e;
  }
}

export function isNotFound(e: unknown): boolean {
  return typeof e === 'object' && e !== null && (e as { code?: unknown }).code === 'ENOENT';
}

export async function fsyncDir(dir: string): Promise<void> {
  const fh = await fsp.open(dir, fsConstants.O_RDONLY);
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/**
 * Replaces `file` with `data` so a crash leaves either the old or the new
 * contents: write `file.tmp`, fsync it, rename over `file`, fsync the directory.
 */
export async function writeFileAtomic(file: string, data: Buffer | string): Promise<void> {
  const tmp = file + TMP_SUFFIX;
  const fh = await fsp.open(tmp, fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_TRUNC);
  try {
    await writeFully(fh, typeof data === 'string' ? Buffer.from(data, 'utf8') : data, 0);
    await fh.sync();
  } finally {
    await fh.close();
  }
  try {
    await fsp.rename(tmp, file);
  } catch (e) {
    await fsp.rm(tmp, { force: true });
    throw e;
  }
  await fsyncDir(path.dirname(file));
}
