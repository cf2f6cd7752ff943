// One client connection to one Kafka broker (Sediment or Apache Kafka), for the
// operator's CLI. Requests are pipelined and answered by correlation id; the
// first thing sent is ApiVersions, and every later request uses the highest
// version both our generated codecs and the broker support.
import net from 'node:net';
import { decodeResponse, encodeRequestMessage } from '../protocol/frame.js';
import { ErrorCode, KafkaError, errorName } from '../protocol/errors.js';
import { ApiKey, apis, type ApiDescriptor, type ApiVersionsResponse } from '../protocol/messages/index.js';

export interface VersionRange {
  readonly min: number;
  readonly max: number;
}

/** The version to use: the highest both sides support inside `want`, or null when there is none. */
export function pickVersion(ours: VersionRange, theirs: VersionRange | undefined, want: Partial<VersionRange> = {}): number | null {
  if (theirs === undefined) return null;
  const lo = Math.max(ours.min, theirs.min, want.min ?? 0);
  const hi = Math.min(ours.max, theirs.max, want.max ?? Number.MAX_SAFE_INTEGER);
  return hi >= lo ? hi : null;
}

/** Splits a byte stream into frame payloads (size prefix removed). */
export class FrameReader {
  private chunks: Buffer[] = [];
  private buffered = 0;

  push(chunk: Buffer): Buffer[] {
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    const out: Buffer[] = [];
    for (;;) {
      if (this.buffered < 4) break;
      const head = this.chunks.length === 1 ? (this.chunks[0] as Buffer) : Buffer.concat(this.chunks);
      this.chunks = [head];
      const size = head.readInt32BE(0);
      if (size < 0) throw new Error(`negative frame size ${size}`);
      if (head.length < 4 + size) break;
      out.push(head.subarray(4, 4 + size));
      const rest = head.subarray(4 + size);
      this.chunks = rest.length > 0 ? [rest] : [];
      this.buffered = rest.length;
    }
    return out;
  }
}

interface Pending {
  readonly apiKey: number;
  readonly version: number;
  resolve(payload: Buffer): void;
  reject(err: Error): void;
}

export interface ConnectionOptions {
  readonly clientId?: string;
  /** Per request, and for connecting. */
  readonly timeoutMs?: number;
}

export class BrokerConnection {
  private readonly pending = new Map<number, Pending>();
  private readonly frames = new FrameReader();
  private nextCorrelationId = 1;
  private closedError: Error | null = null;
  private versions = new Map<number, VersionRange>();

  private constructor(
    private readonly socket: net.Socket,
    readonly address: string,
    private readonly options: Required<ConnectionOptions>,
  ) {
    socket.on('data', (chunk: Buffer) => {
      let payloads: Buffer[];
      try {
        payloads = this.frames.push(chunk);
      } catch (e) {
        this.fail(e instanceof Error ? e : new Error(String(e)));
        return;
      }
      for (const p of payloads) this.onFrame(p);
    });
    socket.on('error', (e) => this.fail(new Error(`connection to ${address}: ${e.message}`, { cause: e })));
    socket.on('close', () => this.fail(new Error(`connection to ${address} closed`)));
  }

  /** Connects and negotiates API versions. */
  static async connect(host: string, port: number, options: ConnectionOptions = {}): Promise<BrokerConnection> {
    const opts: Required<ConnectionOptions> = { clientId: options.clientId ?? 'sediment-cli', timeoutMs: options.timeoutMs ?? 30_000 };
    const address = `${host}:${port}`;
    const socket = await new Promise<net.Socket>((resolve, reject) => {
      const s = net.connect({ host, port });
      const timer = setTimeout(() => {
        s.destroy();
        reject(new Error(`cannot connect to ${address}: timed out after ${opts.timeoutMs} ms`));
      }, opts.timeoutMs);
      s.once('connect', () => {
        clearTimeout(timer);
        s.removeAllListeners('error');
        resolve(s);
      });
      s.once('error', (e) => {
        clearTimeout(timer);
        reject(new Error(`cannot connect to ${address}: ${e.message}`, { cause: e }));
      });
    });
    socket.setNoDelay(true);
    const conn = new BrokerConnection(socket, address, opts);
    try {
      await conn.negotiate();
    } catch (e) {
      conn.close();
      throw e;
    }
    return conn;
  }

  /** The broker's supported range for an API, if it supports it at all. */
  supported(apiKey: number): VersionRange | undefined {
    return this.versions.get(apiKey);
  }

  /** The version `send` would use for `api` within `want`, or null. */
  versionFor(api: ApiDescriptor<unknown, unknown>, want: Partial<VersionRange> = {}): number | null {
    return pickVersion(api.validVersions, this.versions.get(api.apiKey), want);
  }

  /**
   * Sends one request at the highest common version (within `want`) and
   * resolves with the decoded response. `build` receives the chosen version.
   */
  async send<Req, Res>(
    api: ApiDescriptor<Req, Res>,
    build: (version: number) => Req,
    want: Partial<VersionRange> = {},
  ): Promise<{ version: number; body: Res }> {
    const version = pickVersion(api.validVersions, this.versions.get(api.apiKey), want);
    if (version === null) {
      const theirs = this.versions.get(api.apiKey);
      const range = theirs === undefined ? 'does not support it' : `supports v${theirs.min}-v${theirs.max}`;
      const needed = want.min !== undefined ? ` (need v${want.min}+)` : '';
      throw new KafkaError(ErrorCode.UNSUPPORTED_VERSION, `broker ${this.address} ${range} for ${api.name}${needed}`);
    }
    const payload = await this.roundTrip(api, version, build(version));
    return { version, body: decodeResponse(payload, api, version).body };
  }

  close(): void {
    this.fail(new Error(`connection to ${this.address} closed by client`));
    this.socket.destroy();
  }

  private async negotiate(): Promise<void> {
    // v3 is flexible and answered by every broker since Kafka 2.4; a broker
    // that does not know it answers in v0 with UNSUPPORTED_VERSION.
    const request = { clientSoftwareName: 'sediment-cli', clientSoftwareVersion: '0.1.0' };
    let res: ApiVersionsResponse;
    const payload = await this.roundTrip(apis.ApiVersions, 3, request);
    // The error code is the first body field in every version (header v0 is 4 bytes).
    if (payload.length >= 6 && payload.readInt16BE(4) === ErrorCode.UNSUPPORTED_VERSION) {
      res = decodeResponse(await this.roundTrip(apis.ApiVersions, 0, request), apis.ApiVersions, 0).body;
    } else {
      res = decodeResponse(payload, apis.ApiVersions, 3).body;
    }
    if (res.errorCode !== ErrorCode.NONE) {
      throw new KafkaError(res.errorCode, `ApiVersions to ${this.address} failed: ${errorName(res.errorCode)}`);
    }
    this.versions = new Map(res.apiKeys.map((k) => [k.apiKey, { min: k.minVersion, max: k.maxVersion }]));
    if (!this.versions.has(ApiKey.Metadata)) throw new Error(`broker ${this.address} does not support Metadata`);
  }

  private roundTrip<Req>(api: ApiDescriptor<Req, unknown>, version: number, body: Req): Promise<Buffer> {
    if (this.closedError !== null) return Promise.reject(this.closedError);
    const correlationId = this.nextCorrelationId++;
    const chunks = encodeRequestMessage(api, version, correlationId, this.options.clientId, body);
    return new Promise<Buffer>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(correlationId);
        reject(new KafkaError(ErrorCode.REQUEST_TIMED_OUT, `${api.name} to ${this.address} timed out after ${this.options.timeoutMs} ms`));
      }, this.options.timeoutMs);
      this.pending.set(correlationId, {
        apiKey: api.apiKey,
        version,
        resolve: (p) => {
          clearTimeout(timer);
          resolve(p);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      for (const c of chunks) this.socket.write(c);
    });
  }

  private onFrame(payload: Buffer): void {
    if (payload.length < 4) {
      this.fail(new Error(`short response frame from ${this.address}`));
      return;
    }
    const correlationId = payload.readInt32BE(0);
    const p = this.pending.get(correlationId);
    if (p === undefined) {
      this.fail(new Error(`response from ${this.address} with unknown correlation id ${correlationId}`));
      return;
    }
    this.pending.delete(correlationId);
    p.resolve(payload);
  }

  private fail(err: Error): void {
    if (this.closedError === null) this.closedError = err;
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
  }
}
