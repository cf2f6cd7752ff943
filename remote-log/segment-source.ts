// Reading what a copy uploads: a segment file on disk (by path) or bytes the
// caller already holds. Data is read in fixed-size chunks so a 1 GiB segment
// never sits in memory whole.
import { open, readFile } from 'node:fs/promises';
import type { SegmentSource } from './remote-storage.js';
import { RemoteAbortedError, RemoteStorageError } from './remote-storage.js';

function describe(source: SegmentSource): string {
  return typeof source === 'string' ? source : `<${source.length} bytes in memory>`;
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

/** Yields `chunkSize`-byte pieces of the source (the last may be shorter). */
export async function* readChunks(
  source: SegmentSource,
  chunkSize: number,
  what: string,
  signal?: AbortSignal,
): AsyncGenerator<Buffer> {
  if (typeof source !== 'string') {
    for (let pos = 0; pos < source.length; pos += chunkSize) {
      if (signal?.aborted) throw new RemoteAbortedError(`reading ${what}: aborted`, { cause: signal.reason });
      yield source.subarray(pos, Math.min(pos + chunkSize, source.length));
    }
    return;
  }
  let handle;
  try {
    handle = await open(source, 'r');
  } catch (e) {
    throw new RemoteStorageError(`reading ${what} from ${describe(source)}: ${(e as Error).message}`, { cause: e });
  }
  try {
    for (;;) {
      if (signal?.aborted) throw new RemoteAbortedError(`reading ${what}: aborted`, { cause: signal.reason });
      const buf = Buffer.allocUnsafe(chunkSize);
      let filled = 0;
      while (filled < chunkSize) {
        let n: number;
        try {
          ({ bytesRead: n } = await handle.read(buf, filled, chunkSize - filled, null));
        } catch (e) {
          throw new RemoteStorageError(`reading ${what} from ${source}: ${(e as Error).message}`, { cause: e });
        }
        if (n === 0) break;
        filled += n;
      }
      if (filled > 0) yield filled === chunkSize ? buf : buf.subarray(0, filled);
      if (filled < chunkSize) return;
    }
  } finally {
    await handle.close();
  }
}
