// Reading what a copy uploads: a segment file on disk (by path) or bytes the
// caller already holds. Data is read in fixed-size chunks so a 1 GiB segment
// never sits in memory whole.
import { open, readFile, stat } from 'node:fs/promises';
import type { BufferLender } from './object-store.js';
import { handedOverPieces } from './object-store.js';
import type { SegmentSource } from '../remote-storage.js';
import { RemoteAbortedError, RemoteStorageError } from '../remote-storage.js';

function describe(source: SegmentSource): string {
  return typeof source === 'string' ? source : `<${source.length} bytes in memory>`;
}

/** The source's size, or undefined when a file cannot be stat'ed (reading it will report why). */
export async function sourceSize(source: SegmentSource): Promise<number | undefined> {
  if (typeof source !== 'string') return source.length;
  try {
    return (await stat(source)).size;
  } catch {
    return undefined;
  }
}

export async function readWhole(source: SegmentSource, what: string, signal?: AbortSignal): Promise<Buffer> {
  if (typeof source !== 'string') return source;
  try {
    return await readFile(source, { signal });
  } catch (e) {
    if (signal?.aborted) throw new RemoteAbortedError(`reading ${what}: aborted`, { cause: signal.reason });
    throw new RemoteStorageError(`reading ${what} from ${source}: ${(e as Error).message}`, { cause: e });
  }
}

/**
 * Yields `chunkSize`-byte pieces of the source (the last may be shorter). A
 * file is read `blockSize` bytes at a time (rounded to whole chunks) into one
 * reused buffer, and the pieces are views into it: a piece is only valid until
 * the next is requested (the ObjectBody contract), and a 1 GiB segment costs
 * one allocation instead of a thousand.
 *
 * With `lender` (whose buffers hold a whole block), each block is read into a
 * buffer taken from it instead, and its pieces are handed over
 * (handedOverPieces): the consumer may keep that buffer and upload from it
 * without copying; this generator never touches a block again once it has
 * yielded a piece of it.
 */
export async function* readChunks(
  source: SegmentSource,
  chunkSize: number,
  what: string,
  signal?: AbortSignal,
  blockSize = chunkSize,
  lender?: BufferLender,
): AsyncGenerator<Buffer> {
  if (typeof source !== 'string') {
    for (let pos = 0; pos < source.length; pos += chunkSize) {
      if (signal?.aborted) throw new RemoteAbortedError(`reading ${what}: aborted`, { cause: signal.reason });
      yield source.subarray(pos, Math.min(pos + chunkSize, source.length));
    }
    return;
  }
  const block = Math.max(1, Math.floor(blockSize / chunkSize)) * chunkSize;
  let handle;
  try {
    handle = await open(source, 'r');
  } catch (e) {
    throw new RemoteStorageError(`reading ${what} from ${describe(source)}: ${(e as Error).message}`, { cause: e });
  }
  const lend = lender !== undefined && lender.bufferSize >= block ? lender : undefined;
  let buf = lend === undefined ? Buffer.allocUnsafeSlow(block) : lend.take();
  // Whether `buf` is still this generator's to give back (no piece of it yielded yet).
  let owned = lend !== undefined;
  try {
    for (;;) {
      if (signal?.aborted) throw new RemoteAbortedError(`reading ${what}: aborted`, { cause: signal.reason });
      let filled = 0;
      while (filled < block) {
        let n: number;
        try {
          ({ bytesRead: n } = await handle.read(buf, filled, block - filled, null));
        } catch (e) {
          throw new RemoteStorageError(`reading ${what} from ${source}: ${(e as Error).message}`, { cause: e });
        }
        if (n === 0) break;
        filled += n;
      }
      if (filled > 0 && lend !== undefined) owned = false;
      for (let pos = 0; pos < filled; pos += chunkSize) {
        const piece = buf.subarray(pos, Math.min(pos + chunkSize, filled));
        if (lend !== undefined) handedOverPieces.add(piece);
        yield piece;
      }
      if (filled < block) return;
      if (lend !== undefined) {
        buf = lend.take();
        owned = true;
      }
    }
  } finally {
    if (owned) lend?.give(buf);
    await handle.close();
  }
}
