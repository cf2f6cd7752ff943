// sendfile(2) from Node, through the small native addon in broker/native/
// (built by `npm run build:native`, part of `npm run build`). Record bytes in
// the page cache go straight into a socket's buffer, one copy, as Kafka's
// FileRecords.writeTo does, instead of a pread into a buffer and a write from
// it. Without the addon (no C toolchain where the broker was built), or with
// SEDIMENT_SENDFILE=0, `sendfileSupport` is null and callers keep reading into
// buffers: the bytes sent are the same either way.
//
// The sends run on the event loop, as the pread they replace does
// (broker/log/recent-writes.ts says which reads may), one non-blocking
// sendfile after another, waiting for the socket to drain in between through
// libuv's poll.
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { FileRecords } from '../protocol/record-parts.js';

export interface SendfileBinding {
  dup(fd: number): number;
  close(fd: number): void;
  /** Bytes sent, 0 when the socket's buffer is full; throws on errors. */
  sendfile(outFd: number, inFd: number, position: number, count: number): number;
  /** Bytes of buffer[offset..] sent (MSG_MORE when `more`), fewer when the socket's buffer is full; throws on errors. */
  send(fd: number, buffer: Buffer, offset: number, more: boolean): number;
  /** Calls back once `fd` can be written (with an Error if polling failed); returns a cancel function. */
  whenWritable(fd: number, callback: (err?: Error) => void): () => void;
}

/** Where `npm run build:native` leaves the addon, from dist/broker/common or broker/common. */
function candidates(): string[] {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const rel = path.join('broker', 'native', 'build', 'Release', 'sendfile.node');
  return [path.resolve(here, '..', '..', '..', rel), path.resolve(here, '..', '..', rel)];
}

function load(env: NodeJS.ProcessEnv): SendfileBinding | null {
  if (env['SEDIMENT_SENDFILE'] === '0' || process.platform !== 'linux') return null;
  const require = createRequire(import.meta.url);
  for (const file of candidates()) {
    try {
      return require(file) as SendfileBinding;
    } catch {
      // Not built there; try the next place.
    }
  }
  return null;
}

/** The addon, or null when record bytes must be read into buffers. */
export const sendfileSupport: SendfileBinding | null = load(process.env);

/** Closes descriptors of file regions dropped without being sent (a failed handler, say). */
const unsent = new FinalizationRegistry<number>((fd) => {
  try {
    sendfileSupport?.close(fd);
  } catch {
    // Already closed.
  }
});

/**
 * `length` bytes at `position` of the file open as `fd`, as FileRecords with a
 * descriptor of their own (a dup: the region outlives the segment's handle
 * and a retention deletion). releaseRegion closes it; a region dropped
 * unreleased has it closed when collected.
 */
export function fileRegion(binding: SendfileBinding, fd: number, position: number, length: number): FileRecords {
  const region = new FileRecords(binding.dup(fd), position, length);
  unsent.register(region, region.fd, region);
  return region;
}

/** Closes the region's descriptor: after it was sent, or when it will not be. */
export function releaseRegion(region: FileRecords): void {
  if (!unsent.unregister(region)) return; // released already
  try {
    sendfileSupport?.close(region.fd);
  } catch {
    // Nothing more to do for a descriptor that would not close.
  }
}

/** The file descriptor of a connected TCP socket, or null when Node does not expose one. */
export function socketFd(socket: object): number | null {
  const fd = (socket as { _handle?: { fd?: unknown } })._handle?.fd;
  return typeof fd === 'number' && fd >= 0 ? fd : null;
}

/**
 * Sends the region's bytes to a socket, waiting for it to drain whenever its
 * buffer is full. `outFd` gives the socket's descriptor before every sendfile,
 * or null once it is closed: a descriptor number is reused as soon as it is
 * closed, so a stale one must never be written to. Rejects then, on a socket
 * error, on `signal` (the connection closed), or when the file ends first (it
 * was cut under the read; Kafka fails such a send too). The caller releases
 * the region.
 */
export function sendRegion(binding: SendfileBinding, outFd: () => number | null, region: FileRecords, signal: AbortSignal): Promise<void> {
  return sendAll(binding, outFd, region.length, signal, (fd, done) => binding.sendfile(fd, region.fd, region.position + done, region.length - done));
}

/**
 * Sends `buffer` to a socket as sendRegion sends a region (the same rules for
 * `outFd` and `signal`), flagged MSG_MORE when more bytes of the response follow.
 */
export function sendBuffer(binding: SendfileBinding, outFd: () => number | null, buffer: Buffer, more: boolean, signal: AbortSignal): Promise<void> {
  return sendAll(binding, outFd, buffer.length, signal, (fd, done) => binding.send(fd, buffer, done, more));
}

/** Calls `step` (bytes sent of the `length - done` left, 0 when the socket is full) until all `length` are sent. */
async function sendAll(binding: SendfileBinding, outFd: () => number | null, length: number, signal: AbortSignal, step: (fd: number, done: number) => number): Promise<void> {
  let done = 0;
  while (done < length) {
    const fd = signal.aborted ? null : outFd();
    if (fd === null) throw new Error('connection closed during a file send');
    const n = step(fd, done);
    done += n;
    if (done < length && n === 0) await writable(binding, fd, signal);
  }
}

function writable(binding: SendfileBinding, fd: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      cancel();
      reject(new Error('connection closed during a file send'));
    };
    // Polls a dup of `fd`, so a socket closed meanwhile leaves nothing stale behind.
    const cancel = binding.whenWritable(fd, (err) => {
      signal.removeEventListener('abort', onAbort);
      if (err !== undefined) reject(err);
      else resolve();
    });
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
