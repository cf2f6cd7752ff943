// Pure parsing of HTTP/1.1 responses for the direct S3 read transport
// (direct-http-handler.ts): the status line and headers, how the body is
// framed (RFC 9112 section 6.3), and the chunked transfer coding. No I/O.

/** A response the peer framed wrongly (or too large a head): the connection cannot be trusted further. */
export class HttpProtocolError extends Error {
  override readonly name = 'HttpProtocolError';
  /** Transport failures are retried like a reset connection. */
  readonly code = 'ECONNRESET';
}

export interface ResponseHead {
  readonly statusCode: number;
  readonly reason: string;
  /** Names lower-cased; repeated fields joined with ", ". */
  readonly headers: Record<string, string>;
  /** HTTP/1.0, or `Connection: close`: the connection ends with this response. */
  readonly closes: boolean;
  /** Bytes of the head, the blank line included. */
  readonly length: number;
}

/** Larger heads are refused (S3's are a few hundred bytes). */
export const MAX_HEAD_BYTES = 64 * 1024;

const CRLFCRLF = Buffer.from('\r\n\r\n');

/**
 * The response head at the start of `bytes`, or undefined while it is
 * incomplete. Throws HttpProtocolError on a malformed or oversized head.
 */
export function parseResponseHead(bytes: Buffer): ResponseHead | undefined {
  const end = bytes.indexOf(CRLFCRLF);
  if (end < 0) {
    if (bytes.length > MAX_HEAD_BYTES) throw new HttpProtocolError(`response head larger than ${MAX_HEAD_BYTES} bytes`);
    return undefined;
  }
  if (end > MAX_HEAD_BYTES) throw new HttpProtocolError(`response head larger than ${MAX_HEAD_BYTES} bytes`);
  const lines = bytes.subarray(0, end).toString('latin1').split('\r\n');
  const status = /^HTTP\/1\.([01]) (\d{3})(?: (.*))?$/.exec(lines[0] ?? '');
  if (status === null) throw new HttpProtocolError(`malformed status line: ${JSON.stringify((lines[0] ?? '').slice(0, 80))}`);
  const headers: Record<string, string> = {};
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i] as string;
    const colon = line.indexOf(':');
    if (colon <= 0) throw new HttpProtocolError(`malformed header line: ${JSON.stringify(line.slice(0, 80))}`);
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    const prior = headers[name];
    headers[name] = prior === undefined ? value : `${prior}, ${value}`;
  }
  const connection = (headers['connection'] ?? '').toLowerCase();
  const http10 = status[1] === '0';
  return {
    statusCode: Number(status[2]),
    reason: status[3] ?? '',
    headers,
    closes: http10 ? !/\bkeep-alive\b/.test(connection) : /\bclose\b/.test(connection),
    length: end + CRLFCRLF.length,
  };
}

export type BodyFraming =
  | { readonly kind: 'none' }
  | { readonly kind: 'length'; readonly length: number }
  | { readonly kind: 'chunked' }
  /** Until the peer closes the connection. */
  | { readonly kind: 'close' };

/** How the body of a response to `method` with `head` is delimited. */
export function bodyFraming(method: string, head: ResponseHead): BodyFraming {
  const s = head.statusCode;
  if (method === 'HEAD' || (s >= 100 && s < 200) || s === 204 || s === 304) return { kind: 'none' };
  const te = head.headers['transfer-encoding'];
  if (te !== undefined) {
    if (/(?:^|,)\s*chunked\s*$/i.test(te)) return { kind: 'chunked' };
    return { kind: 'close' };
  }
  const cl = head.headers['content-length'];
  if (cl !== undefined) {
    if (!/^\d+$/.test(cl) || !Number.isSafeInteger(Number(cl))) throw new HttpProtocolError(`invalid Content-Length ${JSON.stringify(cl)}`);
    const length = Number(cl);
    return length === 0 ? { kind: 'none' } : { kind: 'length', length };
  }
  return { kind: 'close' };
}

const enum ChunkedState {
  Size,
  Data,
  DataEnd,
  Trailer,
  Done,
}

/** Longest chunk-size line (with extensions) or trailer line accepted. */
const MAX_LINE = 4096;

/**
 * Decodes the chunked transfer coding incrementally: push() takes the next
 * bytes of the connection and hands the chunk data to `onData` (views valid
 * during the call); it returns how many bytes it consumed, fewer than given
 * only once the body has ended (the rest belongs to whatever follows).
 */
export class ChunkedDecoder {
  private state = ChunkedState.Size;
  private line = '';
  private remaining = 0;

  constructor(private readonly onData: (bytes: Buffer) => void) {}

  get done(): boolean {
    return this.state === ChunkedState.Done;
  }

  push(bytes: Buffer): number {
    let at = 0;
    while (at < bytes.length && this.state !== ChunkedState.Done) {
      if (this.state === ChunkedState.Data) {
        const take = Math.min(this.remaining, bytes.length - at);
        this.onData(bytes.subarray(at, at + take));
        at += take;
        this.remaining -= take;
        if (this.remaining === 0) this.state = ChunkedState.DataEnd;
        continue;
      }
      const nl = bytes.indexOf(0x0a, at);
      const stop = nl < 0 ? bytes.length : nl + 1;
      this.line += bytes.toString('latin1', at, stop);
      at = stop;
      if (this.line.length > MAX_LINE) throw new HttpProtocolError('chunked body: line too long');
      if (nl < 0) break;
      const line = this.line.endsWith('\r\n') ? this.line.slice(0, -2) : this.line.slice(0, -1);
      this.line = '';
      this.onLine(line);
    }
    return at;
  }

  private onLine(line: string): void {
    switch (this.state) {
      case ChunkedState.Size: {
        const m = /^([0-9a-fA-F]{1,12})[ \t]*(?:;.*)?$/.exec(line);
        if (m === null) throw new HttpProtocolError(`chunked body: bad chunk size line ${JSON.stringify(line.slice(0, 40))}`);
        this.remaining = parseInt(m[1] as string, 16);
        this.state = this.remaining === 0 ? ChunkedState.Trailer : ChunkedState.Data;
        return;
      }
      case ChunkedState.DataEnd:
        if (line !== '') throw new HttpProtocolError('chunked body: chunk data not followed by CRLF');
        this.state = ChunkedState.Size;
        return;
      case ChunkedState.Trailer:
        if (line === '') this.state = ChunkedState.Done;
        return;
      default:
        return;
    }
  }
}

/** `encodeURIComponent` plus the characters RFC 3986 reserves that it leaves alone, as S3 signs them. */
export function escapeQueryComponent(s: string): string {
  return encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** The query string of a request (without '?'); a null value is a bare name, an array repeats the name. */
export function queryString(query: Record<string, string | string[] | null> | undefined): string {
  if (query === undefined) return '';
  const parts: string[] = [];
  for (const name of Object.keys(query).sort()) {
    const value = query[name];
    const key = escapeQueryComponent(name);
    if (value === null || value === undefined) parts.push(key);
    else if (Array.isArray(value)) for (const v of value) parts.push(`${key}=${escapeQueryComponent(v)}`);
    else parts.push(`${key}=${escapeQueryComponent(value)}`);
  }
  return parts.join('&');
}
