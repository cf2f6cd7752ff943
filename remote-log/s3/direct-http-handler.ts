// An HTTP/1.1 request handler for @aws-sdk/client-s3 (the SDK's `requestHandler`
// extension point: the SDK still builds, signs and parses every request) that
// reads each connection into one reused buffer (net's `onread`) instead of a
// fresh 64 KiB Buffer per socket read, and lets the reader of a response body
// take the bytes straight from that buffer (DirectBody.drainInto): a ranged GET
// costs one copy into its destination, no per-read allocation, stream event or
// HTTP-parser callback. That halves the CPU per MiB of a cold remote read
// (docs/tiering-benchmarks.md). Bodies can also be read as an ordinary Readable,
// which the SDK does for error responses.
import net from 'node:net';
import { Readable } from 'node:stream';
import tls from 'node:tls';
import type { HttpHandlerOptions, HttpRequest, HttpResponse, RequestHandler } from '@smithy/types';
import type { BodyFraming, ResponseHead } from './http1-response.js';
import { ChunkedDecoder, HttpProtocolError, bodyFraming, parseResponseHead, queryString } from './http1-response.js';

export interface DirectHttpHandlerOptions {
  /** TCP (and TLS) connect timeout. Default 10 s. */
  readonly connectionTimeoutMs?: number;
  /** Connections per origin; more requests wait for one. Default 64. */
  readonly maxSockets?: number;
  /** An idle kept-alive connection is closed after this long. Default 10 s. */
  readonly idleTimeoutMs?: number;
  /** Bytes of each connection's read buffer. Default 256 KiB. */
  readonly readBufferBytes?: number;
  /** Extra TLS options for https endpoints (e.g. `ca`). */
  readonly tls?: tls.ConnectionOptions;
}

/** The body of a response from DirectHttpHandler: a Readable, or drained synchronously through drainInto. */
export class DirectBody extends Readable {
  private sink: ((bytes: Buffer) => void) | undefined;
  private settled = false;
  private failure: Error | undefined;
  private waiter: { resolve: () => void; reject: (e: Error) => void } | undefined;

  constructor(
    private readonly onPull: () => void,
    private readonly onAbandon: () => void,
  ) {
    super();
  }

  /**
   * Hands every further byte of the body to `sink`, in order, as views valid
   * only during the call (copy what you keep); bytes that arrived before are
   * handed over first. Resolves when the body is complete, rejects when the
   * connection fails or the request is aborted.
   */
  drainInto(sink: (bytes: Buffer) => void): Promise<void> {
    try {
      for (let b = this.read() as Buffer | null; b !== null; b = this.read() as Buffer | null) sink(b);
    } catch (e) {
      const error = e instanceof Error ? e : new Error(String(e));
      this.abandon(error);
      return Promise.reject(error);
    }
    this.sink = sink;
    if (this.settled) return this.failure === undefined ? Promise.resolve() : Promise.reject(this.failure);
    this.onPull();
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject };
    });
  }

  /** From the connection: the next bytes (a view into its read buffer). False asks it to pause. */
  deliver(bytes: Buffer): boolean {
    if (this.sink !== undefined) {
      this.sink(bytes);
      return true;
    }
    return this.push(Buffer.from(bytes));
  }

  /** From the connection: the body is complete. */
  complete(): void {
    if (this.settled) return;
    this.settled = true;
    this.push(null);
    this.waiter?.resolve();
  }

  /** From the connection: the body will not complete. */
  fail(error: Error): void {
    if (this.settled) return;
    this.settled = true;
    this.failure = error;
    // drainInto's promise carries the error; a stream reader gets it as 'error' when it listens (else the
    // stream just closes before its end, which readers see as a premature close): never an uncaught 'error'.
    this.waiter?.reject(error);
    this.destroy(this.waiter === undefined && this.listenerCount('error') > 0 ? error : undefined);
  }

  override _read(): void {
    this.onPull();
  }

  /** Its reader gives up: drainInto rejects with `reason`, the connection is closed (the rest of the body would block it). */
  abandon(reason: Error): void {
    this.giveUp(reason);
    this.destroy();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    // After a complete body (auto-destroy on end) there is nothing to give up: build no error then.
    if (!this.settled) this.giveUp(error ?? connectionError('response body destroyed before its end', 'ECONNABORTED'));
    callback(error);
  }

  private giveUp(reason: Error): void {
    if (this.settled) return;
    this.settled = true;
    this.failure = reason;
    this.waiter?.reject(reason);
    this.onAbandon();
  }
}

interface Exchange {
  readonly method: string;
  readonly resolve: (r: { response: HttpResponse }) => void;
  readonly reject: (e: Error) => void;
  head: Buffer | undefined;
  body: DirectBody | undefined;
  framing: BodyFraming | undefined;
  remaining: number;
  chunked: ChunkedDecoder | undefined;
  closes: boolean;
  /** Any response byte arrived (a failure before that on a reused connection is a stale keep-alive). */
  answered: boolean;
  /** Called once when the exchange ends, either way, before the connection is reused. */
  readonly onDone: () => void;
}

function abortError(signal: AbortSignal | { reason?: unknown } | undefined): Error {
  const e = new Error(`request aborted${signal?.reason instanceof Error ? `: ${signal.reason.message}` : ''}`);
  e.name = 'AbortError';
  return e;
}

function connectionError(message: string, code: string, cause?: unknown): Error {
  const e = new Error(message, cause === undefined ? undefined : { cause }) as Error & { code: string };
  e.code = code;
  return e;
}

function isAborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}

const HEADER_SAFE = /^[^\r\n]*$/;

/** One kept-alive connection: one exchange at a time. */
class Connection {
  readonly socket: net.Socket;
  private exchange: Exchange | undefined;
  private readonly buffer: Buffer;
  private dead = false;
  private paused = false;
  reused = false;

  constructor(
    readonly origin: Origin,
    private readonly options: Required<Omit<DirectHttpHandlerOptions, 'tls'>> & { tls?: tls.ConnectionOptions },
  ) {
    this.buffer = Buffer.allocUnsafe(options.readBufferBytes);
    const onread = {
      buffer: this.buffer,
      callback: (n: number, buf: Uint8Array): boolean => this.onBytes(Buffer.from(buf.buffer, buf.byteOffset, n)),
    };
    this.socket =
      origin.protocol === 'https:'
        ? // Node's tls.connect takes onread like net.connect; its type definitions omit it.
          tls.connect({ ...options.tls, host: origin.hostname, port: origin.port, onread, ...(net.isIP(origin.hostname) === 0 ? { servername: origin.hostname } : {}) } as tls.ConnectionOptions)
        : net.connect({ host: origin.hostname, port: origin.port, onread });
    this.socket.setNoDelay(true);
    const connectTimer = setTimeout(() => this.close(connectionError(`connect to ${origin.key} timed out after ${options.connectionTimeoutMs} ms`, 'ETIMEDOUT')), options.connectionTimeoutMs);
    this.socket.once(origin.protocol === 'https:' ? 'secureConnect' : 'connect', () => clearTimeout(connectTimer));
    this.socket.on('error', (e) => {
      clearTimeout(connectTimer);
      this.close(e);
    });
    this.socket.on('close', () => {
      clearTimeout(connectTimer);
      this.close(connectionError(`connection to ${origin.key} closed`, 'ECONNRESET'));
    });
    this.socket.on('timeout', () => this.close(connectionError('idle', 'ETIMEDOUT')));
    // A body delimited by the end of the connection is complete when the peer ends it.
    this.socket.on('end', () => {
      const ex = this.exchange;
      if (ex?.framing?.kind === 'close') {
        this.exchange = undefined;
        ex.onDone();
        ex.body?.complete();
      }
      this.close(connectionError(`connection to ${origin.key} ended by the peer`, 'ECONNRESET'));
    });
  }

  get alive(): boolean {
    return !this.dead;
  }

  send(request: HttpRequest, exchange: Exchange): void {
    this.exchange = exchange;
    this.socket.setTimeout(0);
    const q = queryString(request.query as Record<string, string | string[] | null> | undefined);
    let head = `${request.method} ${request.path}${q === '' ? '' : `?${q}`} HTTP/1.1\r\n`;
    for (const [name, value] of Object.entries(request.headers)) {
      if (!HEADER_SAFE.test(name) || !HEADER_SAFE.test(value)) throw new TypeError(`header ${name} holds a line break`);
      head += `${name}: ${value}\r\n`;
    }
    const body: unknown = request.body;
    if (body === undefined || body === null || body === '') {
      this.socket.write(`${head}\r\n`);
    } else if (typeof body === 'string' || body instanceof Uint8Array) {
      this.socket.cork();
      this.socket.write(`${head}\r\n`);
      this.socket.write(body);
      this.socket.uncork();
    } else if (body instanceof Readable) {
      this.socket.write(`${head}\r\n`);
      body.on('error', (e) => this.close(e));
      body.pipe(this.socket, { end: false });
    } else {
      throw new TypeError(`unsupported request body type ${Object.prototype.toString.call(body)}`);
    }
  }

  /** Resumes reading after a body consumer caught up. */
  pull(): void {
    if (this.paused && !this.dead) {
      this.paused = false;
      this.socket.resume();
    }
  }

  close(error: Error): void {
    if (this.dead) return;
    this.dead = true;
    this.socket.destroy();
    this.origin.forget(this);
    const ex = this.exchange;
    this.exchange = undefined;
    if (ex === undefined) return;
    ex.onDone();
    if (ex.body !== undefined) ex.body.fail(error);
    else {
      (error as Error & { staleKeepAlive?: boolean }).staleKeepAlive = this.reused && !ex.answered;
      ex.reject(error);
    }
  }

  /** Bytes from the socket, a view into the read buffer valid during the call. False pauses the socket. */
  private onBytes(bytes: Buffer): boolean {
    try {
      return this.take(bytes);
    } catch (e) {
      this.close(e instanceof Error ? e : new HttpProtocolError(String(e)));
      return false;
    }
  }

  private take(bytes: Buffer): boolean {
    let rest = bytes;
    for (;;) {
      const ex = this.exchange;
      if (ex === undefined) {
        if (rest.length > 0) throw new HttpProtocolError(`${rest.length} bytes from ${this.origin.key} outside any response`);
        return true;
      }
      ex.answered = true;
      if (ex.framing === undefined) {
        const all = ex.head === undefined ? Buffer.from(rest) : Buffer.concat([ex.head, rest]);
        const head = parseResponseHead(all);
        if (head === undefined) {
          ex.head = all;
          return true;
        }
        rest = all.subarray(head.length);
        ex.head = undefined;
        // Interim responses (100 Continue) precede the real one.
        if (head.statusCode >= 100 && head.statusCode < 200) continue;
        this.begin(ex, head);
      }
      const body = ex.body as DirectBody;
      const framing = ex.framing as BodyFraming;
      if (framing.kind === 'length') {
        const take = Math.min(ex.remaining, rest.length);
        const wantMore = take === 0 || body.deliver(rest.subarray(0, take));
        ex.remaining -= take;
        rest = rest.subarray(take);
        if (ex.remaining > 0) return this.pauseUnless(wantMore);
      } else if (framing.kind === 'chunked') {
        const used = (ex.chunked as ChunkedDecoder).push(rest);
        rest = rest.subarray(used);
        if (!(ex.chunked as ChunkedDecoder).done) return true;
      } else if (framing.kind === 'close') {
        return this.pauseUnless(rest.length === 0 || body.deliver(rest));
      }
      this.finish(ex);
      if (rest.length === 0) return true;
    }
  }

  private pauseUnless(wantMore: boolean): boolean {
    if (!wantMore) this.paused = true;
    return wantMore;
  }

  private begin(ex: Exchange, head: ResponseHead): void {
    const framing = bodyFraming(ex.method, head);
    const body = new DirectBody(
      () => this.pull(),
      () => this.close(connectionError('response body abandoned by its reader', 'ECONNABORTED')),
    );
    ex.framing = framing;
    ex.body = body;
    ex.closes = head.closes || framing.kind === 'close';
    if (framing.kind === 'length') ex.remaining = framing.length;
    if (framing.kind === 'chunked') ex.chunked = new ChunkedDecoder((b) => body.deliver(b));
    ex.resolve({ response: { statusCode: head.statusCode, reason: head.reason, headers: head.headers, body } });
  }

  private finish(ex: Exchange): void {
    this.exchange = undefined;
    ex.onDone();
    ex.body?.complete();
    if (ex.closes) this.close(connectionError('closed after the response', 'ECONNRESET'));
    else this.origin.release(this);
  }

  /** Parked in the idle pool. */
  idle(): void {
    this.reused = true;
    this.socket.setTimeout(this.options.idleTimeoutMs);
  }
}

/** The connections to one scheme://host:port. */
class Origin {
  readonly key: string;
  private readonly idleConnections: Connection[] = [];
  private readonly waiting: Array<(c: Connection | undefined) => void> = [];
  private open = 0;

  constructor(
    readonly protocol: string,
    readonly hostname: string,
    readonly port: number,
    private readonly options: ConstructorParameters<typeof Connection>[1],
  ) {
    this.key = `${protocol}//${hostname}:${port}`;
  }

  /** An idle connection, a new one, or (at maxSockets) the next one released. */
  acquire(fresh: boolean): Promise<Connection> | Connection {
    if (!fresh) {
      for (let c = this.idleConnections.pop(); c !== undefined; c = this.idleConnections.pop()) if (c.alive) return c;
    }
    if (this.open < this.options.maxSockets) {
      this.open++;
      return new Connection(this, this.options);
    }
    return new Promise<Connection | undefined>((resolve) => this.waiting.push(resolve)).then((c) => c ?? this.acquire(fresh));
  }

  release(c: Connection): void {
    const next = this.waiting.shift();
    if (next !== undefined) {
      next(c);
      return;
    }
    c.idle();
    this.idleConnections.push(c);
  }

  forget(c: Connection): void {
    const i = this.idleConnections.indexOf(c);
    if (i >= 0) this.idleConnections.splice(i, 1);
    this.open--;
    // A waiter gets to open a connection of its own.
    this.waiting.shift()?.(undefined);
  }

  destroy(): void {
    for (const c of [...this.idleConnections]) c.close(connectionError('handler destroyed', 'ECONNABORTED'));
  }
}

export class DirectHttpHandler implements RequestHandler<HttpRequest, HttpResponse, HttpHandlerOptions> {
  private readonly options: ConstructorParameters<typeof Connection>[1];
  private readonly origins = new Map<string, Origin>();

  constructor(options: DirectHttpHandlerOptions = {}) {
    this.options = {
      connectionTimeoutMs: options.connectionTimeoutMs ?? 10_000,
      maxSockets: options.maxSockets ?? 64,
      idleTimeoutMs: options.idleTimeoutMs ?? 10_000,
      readBufferBytes: options.readBufferBytes ?? 256 * 1024,
      ...(options.tls === undefined ? {} : { tls: options.tls }),
    };
  }

  async handle(request: HttpRequest, handlerOptions: HttpHandlerOptions = {}): Promise<{ response: HttpResponse }> {
    try {
      return await this.attempt(request, handlerOptions, false);
    } catch (e) {
      // A kept-alive connection the server had just closed: safe to resend an idempotent request once, on a new one.
      const idempotent = request.method === 'GET' || request.method === 'HEAD';
      if (idempotent && (e as { staleKeepAlive?: boolean }).staleKeepAlive === true) return this.attempt(request, handlerOptions, true);
      throw e;
    }
  }

  private async attempt(request: HttpRequest, handlerOptions: HttpHandlerOptions, fresh: boolean): Promise<{ response: HttpResponse }> {
    const signal = handlerOptions.abortSignal as AbortSignal | undefined;
    if (isAborted(signal)) throw abortError(signal);
    const origin = this.origin(request);
    const connection = await origin.acquire(fresh);
    if (isAborted(signal)) {
      origin.release(connection);
      throw abortError(signal);
    }
    const onAbort = (): void => connection.close(abortError(signal));
    signal?.addEventListener('abort', onAbort, { once: true });
    return new Promise<{ response: HttpResponse }>((resolve, reject) => {
      const exchange: Exchange = {
        method: request.method,
        resolve,
        reject,
        head: undefined,
        body: undefined,
        framing: undefined,
        remaining: 0,
        chunked: undefined,
        closes: false,
        answered: false,
        // Until the body is done, aborting closes the connection; never after, when it may serve another request.
        onDone: () => signal?.removeEventListener('abort', onAbort),
      };
      try {
        connection.send(request, exchange);
      } catch (e) {
        connection.close(e instanceof Error ? e : new Error(String(e)));
      }
    });
  }

  private origin(request: HttpRequest): Origin {
    const protocol = request.protocol === 'https:' || request.protocol === 'https' ? 'https:' : 'http:';
    const port = request.port ?? (protocol === 'https:' ? 443 : 80);
    const key = `${protocol}//${request.hostname}:${port}`;
    let origin = this.origins.get(key);
    if (origin === undefined) {
      // The SDK keeps an IPv6 literal in brackets ([::1]); sockets want the bare address.
      const host = /^\[.*\]$/.test(request.hostname) ? request.hostname.slice(1, -1) : request.hostname;
      origin = new Origin(protocol, host, port, this.options);
      this.origins.set(key, origin);
    }
    return origin;
  }

  updateHttpClientConfig(key: keyof DirectHttpHandlerOptions, value: DirectHttpHandlerOptions[typeof key]): void {
    (this.options as Record<string, unknown>)[key] = value;
  }

  httpHandlerConfigs(): DirectHttpHandlerOptions {
    return { ...this.options };
  }

  destroy(): void {
    for (const origin of this.origins.values()) origin.destroy();
    this.origins.clear();
  }
}

