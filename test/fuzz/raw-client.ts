// One fuzz exchange over a fresh TCP connection: send bytes, then watch what
// the broker does. Outcomes: it answered (as many frames as expected), it
// closed the connection, or it stayed silent until the timeout (a request still
// waiting, e.g. a long-poll Fetch, or an incomplete frame).
import net from 'node:net';

export type OutcomeKind = 'response' | 'closed' | 'silent' | 'refused';

export interface Outcome {
  readonly kind: OutcomeKind;
  /** Response payloads (size prefix removed) received before the outcome. */
  readonly frames: Buffer[];
  /** Bytes after the last whole frame (a torn response is a broker bug). */
  readonly leftover: number;
  readonly ms: number;
}

export interface ExchangeOptions {
  /** Resolve as 'response' once this many frames arrived (default 1). */
  readonly expectFrames?: number;
  readonly timeoutMs: number;
  /** End our side after writing (the broker sees EOF). */
  readonly halfClose?: boolean;
  /** Write each chunk separately, yielding to the event loop in between. */
  readonly separateWrites?: boolean;
}

/** Splits size-prefixed frames; a negative size from the broker marks the stream broken. */
class Frames {
  private buf: Buffer = Buffer.alloc(0);
  readonly frames: Buffer[] = [];
  broken = false;

  push(chunk: Buffer): void {
    this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
    while (!this.broken && this.buf.length >= 4) {
      const size = this.buf.readInt32BE(0);
      if (size < 0) {
        this.broken = true;
        return;
      }
      if (this.buf.length < 4 + size) return;
      this.frames.push(this.buf.subarray(4, 4 + size));
      this.buf = this.buf.subarray(4 + size);
    }
  }

  get leftover(): number {
    return this.buf.length;
  }
}

export function exchange(port: number, chunks: readonly Buffer[], options: ExchangeOptions): Promise<Outcome> {
  const started = performance.now();
  const expect = options.expectFrames ?? 1;
  return new Promise((resolve) => {
    const frames = new Frames();
    let connected = false;
    let done = false;
    const socket = net.connect({ host: '127.0.0.1', port });
    const finish = (kind: OutcomeKind): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ kind, frames: frames.frames, leftover: frames.leftover, ms: performance.now() - started });
    };
    const timer = setTimeout(() => finish('silent'), options.timeoutMs);
    socket.on('connect', () => {
      connected = true;
      void (async () => {
        for (const c of chunks) {
          if (done) return;
          socket.write(c);
          if (options.separateWrites === true) await new Promise((r) => setImmediate(r));
        }
        if (options.halfClose === true && !done) socket.end();
      })();
    });
    socket.on('data', (b: Buffer) => {
      frames.push(b);
      if (expect > 0 && frames.frames.length >= expect) finish('response');
    });
    socket.on('error', () => finish(connected ? 'closed' : 'refused'));
    socket.on('close', () => finish(connected ? 'closed' : 'refused'));
  });
}
