// One client connection: framing, processing in arrival order with answers
// strictly in request order, and the close rules: an oversized or malformed
// frame closes this connection only.
//
// Kafka mutes a channel while one of its requests is in flight, so requests on a
// connection are handled one at a time; so are they here, with one exception:
// up to MAX_PIPELINED_PRODUCE consecutive Produce requests are in flight at once.
// A producer keeps several Produce requests outstanding on its one connection
// (max.in.flight.requests.per.connection, 5 by default); handling them one at a
// time idles that connection for every append's file I/O, which in Node runs on
// the threadpool. Appends keep arrival order because Dispatcher.process and the
// Produce handler call PartitionLog.append synchronously, before their first
// await (the log groups concurrent appends in that order), so idempotent
// sequence checks see batches as Kafka would. Any other request waits for the
// Produce requests before it, and holds back the requests after it, as before.
// A Produce pipelined behind one that closes the connection may already have
// been appended, unanswered, as with any request in flight when a connection drops.
import { takeRelease } from './response-release.js';
import { FileRecords, type OutputChunk } from '../protocol/record-parts.js';
import { releaseRegion, sendBuffer, sendfileSupport, sendRegion, socketFd, type SendfileBinding } from '../common/sendfile.js';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import { FrameSplitter, FrameTooLargeError, InvalidFrameSizeError } from './frame-splitter.js';
import { CloseConnectionError } from '../common/errors.js';

export interface FrameContext {
  readonly connectionId: number;
  readonly clientHost: string;
  readonly log: Logger;
  readonly signal: AbortSignal;
  /** Present when this connection sends file regions (FileRecords) with sendfile(2). */
  readonly sendfile?: SendfileBinding;
}

/** Turns one request frame into response chunks (size prefix included), or null for no response. */
export interface RequestProcessor {
  process(frame: Buffer, ctx: FrameContext): Promise<OutputChunk[] | null>;
}

/** How long a closing connection may take to flush the responses already written. */
const CLOSE_GRACE_MS = 5000;

const EMPTY = Buffer.alloc(0);

const PRODUCE_API_KEY = 0;
/** Produce requests one connection may have in flight (the Java producer's max.in.flight default). */
export const MAX_PIPELINED_PRODUCE = 5;

type Settled = { readonly ok: true; readonly out: OutputChunk[] | null } | { readonly ok: false; readonly err: unknown };

interface InFlight {
  readonly produce: boolean;
  readonly result: Promise<Settled>;
}


export class Connection {
  private readonly splitter: FrameSplitter;
  private readonly queue: Buffer[] = [];
  private readonly inFlight: InFlight[] = [];
  private processing = false;
  private closed = false;
  private readonly abort = new AbortController();
  private readonly ctx: FrameContext;
  /** Responses with file regions are written one piece after another: the tail of that chain, while one is. */
  private sending: Promise<void> | null = null;
  /** Stops file sends: the socket closed, the grace period ran out, or a send failed (the stream is broken). */
  private readonly sendAbort = new AbortController();

  constructor(
    private readonly socket: Socket,
    readonly id: number,
    maxFrameBytes: number,
    private readonly processor: RequestProcessor,
    log: Logger,
    private readonly onClose: (c: Connection) => void,
  ) {
    this.splitter = new FrameSplitter(maxFrameBytes);
    const clientHost = socket.remoteAddress ?? 'unknown';
    const sendfile = sendfileSupport !== null && socketFd(socket) !== null ? sendfileSupport : null;
    this.ctx = {
      connectionId: id,
      clientHost,
      log: log.child({ conn: id, client: `${clientHost}:${socket.remotePort}` }),
      signal: this.abort.signal,
      ...(sendfile === null ? {} : { sendfile }),
    };
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('error', (err) => this.ctx.log.debug({ err }, 'socket error'));
    socket.on('close', () => {
      this.sendAbort.abort();
      this.cleanup();
    });
  }

  /**
   * Closes this connection. Responses already written are flushed first (as
   * Kafka has sent every earlier answer before it reads the next request, a
   * client must get them); nothing more is read, and the socket is destroyed
   * once flushed, or after a grace period if the peer does not read.
   */
  close(reason: string): void {
    if (this.closed) return;
    this.ctx.log.info({ reason }, 'closing connection');
    const socket = this.socket;
    socket.pause();
    socket.removeAllListeners('data');
    const flush = (): void => {
      if (socket.destroyed || socket.writableLength === 0) {
        socket.destroy();
      } else {
        const timer = setTimeout(() => socket.destroy(), CLOSE_GRACE_MS);
        timer.unref();
        socket.end(() => {
          clearTimeout(timer);
          socket.destroy();
        });
      }
    };
    if (this.sending === null) {
      flush();
    } else {
      // Answers with file regions still being sent go out first, within the same grace period.
      const timer = setTimeout(() => {
        this.sendAbort.abort();
        socket.destroy();
      }, CLOSE_GRACE_MS);
      timer.unref();
      void this.sending.then(() => {
        clearTimeout(timer);
        flush();
      });
    }
    this.cleanup();
  }

  private cleanup(): void {
    if (this.closed) return;
    this.closed = true;
    this.abort.abort();
    this.queue.length = 0;
    this.onClose(this);
  }

  private onData(chunk: Buffer): void {
    if (this.closed) return;
    let frames: Buffer[];
    try {
      frames = this.splitter.push(chunk);
    } catch (err) {
      if (err instanceof FrameTooLargeError || err instanceof InvalidFrameSizeError) {
        this.ctx.log.warn({ err: err.message }, 'rejecting frame');
        this.close(err.message);
        return;
      }
      throw err;
    }
    if (frames.length === 0) return;
    this.queue.push(...frames);
    // Back-pressure: stop reading while requests queue up behind a slow one.
    if (this.queue.length > 64) this.socket.pause();
    if (!this.processing) void this.drain();
    else this.pump();
  }

  /**
   * Starts the request at the head of the queue if nothing is in flight, or if
   * it is a Produce request and only (fewer than MAX_PIPELINED_PRODUCE) Produce
   * requests are. Returns whether it started one.
   */
  private startNext(): boolean {
    const frame = this.queue[0];
    if (frame === undefined || this.closed) return false;
    const produce = frame.length >= 2 && frame.readInt16BE(0) === PRODUCE_API_KEY;
    if (this.inFlight.length > 0 && (!produce || this.inFlight.length >= MAX_PIPELINED_PRODUCE || !this.inFlight.every((f) => f.produce))) {
      return false;
    }
    this.queue.shift();
    let pending: Promise<OutputChunk[] | null>;
    try {
      pending = this.processor.process(frame, this.ctx);
    } catch (err) {
      pending = Promise.reject(err);
    }
    const result = pending.then(
      (out): Settled => ({ ok: true, out }),
      (err: unknown): Settled => ({ ok: false, err }),
    );
    this.inFlight.push({ produce, result });
    return true;
  }

  private pump(): void {
    while (this.startNext()) {
      // one more request started
    }
    if (this.queue.length < 16 && this.socket.isPaused()) this.socket.resume();
  }

  /** Answers the requests in flight in request order, starting queued ones as the rules allow. */
  private async drain(): Promise<void> {
    this.processing = true;
    try {
      while (!this.closed) {
        this.pump();
        const head = this.inFlight[0];
        if (head === undefined) break;
        const settled = await head.result;
        this.inFlight.shift();
        if (!settled.ok) {
          const err = settled.err;
          const reason = err instanceof CloseConnectionError ? err.message : `internal error: ${(err as Error).message}`;
          if (!(err instanceof CloseConnectionError)) this.ctx.log.error({ err }, 'request processing failed');
          this.close(reason);
          return;
        }
        if (settled.out !== null && !this.closed) this.write(settled.out);
      }
    } finally {
      this.processing = false;
    }
  }

  private write(chunks: OutputChunk[]): void {
    if (this.sending !== null || chunks.some((c) => c instanceof FileRecords)) {
      this.sendInOrder(chunks);
      return;
    }
    this.writeBuffers(chunks as Buffer[], takeRelease(chunks));
  }

  /**
   * Writes a response that holds file regions, after every response before it
   * has reached the kernel: its buffers with send(2), its regions with
   * sendfile(2), straight to the socket's descriptor (nothing else writes to it
   * meanwhile: later responses wait for this one). A failed send closes the
   * connection and sends nothing more (the client would read a broken frame).
   * A close for another reason lets the answers already written go out first,
   * as with buffers. Regions are released whatever happens.
   */
  private sendInOrder(chunks: OutputChunk[]): void {
    const release = takeRelease(chunks);
    const previous = this.sending ?? Promise.resolve();
    const binding = this.ctx.sendfile!;
    const fd = (): number | null => (this.socket.destroyed ? null : socketFd(this.socket));
    const sent = previous.then(async () => {
      const signal = this.sendAbort.signal;
      let i = 0;
      try {
        if (signal.aborted) throw new Error('an earlier send failed or the connection closed');
        // Responses written through the socket before this one must be in the kernel first.
        if (this.socket.writableLength > 0) await new Promise<void>((resolve, reject) => this.socket.write(EMPTY, (err) => (err == null ? resolve() : reject(err))));
        for (; i < chunks.length; i++) {
          const c = chunks[i]!;
          if (c instanceof FileRecords) {
            await sendRegion(binding, fd, c, signal);
            releaseRegion(c);
          } else {
            await sendBuffer(binding, fd, c, i < chunks.length - 1, signal);
          }
        }
        release?.();
      } catch (err) {
        for (; i < chunks.length; i++) {
          const c = chunks[i]!;
          if (c instanceof FileRecords) releaseRegion(c);
        }
        if (!signal.aborted) {
          this.sendAbort.abort();
          this.ctx.log.debug({ err: (err as Error).message }, 'file send failed');
        }
        this.close(`file send failed: ${(err as Error).message}`);
      }
    });
    this.sending = sent;
    void sent.then(() => {
      if (this.sending === sent) this.sending = null;
    });
  }

  private writeBuffers(chunks: Buffer[], release: (() => void) | undefined): void {
    // Called once the last chunk (and so every one before it) has left for the kernel, or the write failed.
    const done = release === undefined ? undefined : (err?: Error | null): void => {
      // A failed write may leave the bytes with the socket until it is destroyed: drop, never reuse.
      if (err === undefined || err === null) release();
    };
    if (chunks.length === 1) {
      this.socket.write(chunks[0]!, done);
      return;
    }
    this.socket.cork();
    for (let i = 0; i < chunks.length; i++) this.socket.write(chunks[i]!, i === chunks.length - 1 ? done : undefined);
    process.nextTick(() => this.socket.uncork());
  }
}
