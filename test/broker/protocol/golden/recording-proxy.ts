// A TCP proxy that records Kafka frames in both directions: every request a
// client sends and the response the broker returns, keyed by API and version.
// Used by capture.ts to produce the golden files; not part of the broker.
import net from 'node:net';
import { decodeRequestHeader, decodeResponse, encodeResponseMessage, payloadOf } from '../../../../broker/protocol/frame.js';
import { apiRegistry, apis, ApiKey } from '../../../../broker/protocol/messages/index.js';

export interface CapturedFrame {
  /** Which client program was running when the frame was seen. */
  client: string;
  apiKey: number;
  apiVersion: number;
  direction: 'request' | 'response';
  /** The whole frame, size prefix included, exactly as on the wire. */
  frame: Buffer;
}

/** Splits a byte stream into size-prefixed frames. */
class FrameSplitter {
  private pending: Buffer[] = [];
  private pendingBytes = 0;

  push(chunk: Buffer, onFrame: (frame: Buffer) => void): void {
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    for (;;) {
      if (this.pendingBytes < 4) return;
      const head = this.pending.length === 1 ? (this.pending[0] as Buffer) : Buffer.concat(this.pending);
      this.pending = [head];
      const size = head.readInt32BE(0);
      if (this.pendingBytes < 4 + size) return;
      onFrame(Buffer.from(head.subarray(0, 4 + size)));
      const rest = head.subarray(4 + size);
      this.pending = rest.length > 0 ? [rest] : [];
      this.pendingBytes = rest.length;
    }
  }
}

export class RecordingProxy {
  readonly frames: CapturedFrame[] = [];
  /** Set before running each client program. */
  client = 'unknown';
  private server: net.Server | null = null;
  private readonly sockets = new Set<net.Socket>();

  /**
   * With clampVersions, ApiVersions answers are rewritten to the ranges our
   * generated codecs know (stable versions only), so newer clients (the Java 4.1
   * client) pick versions we can decode; the recorded frame stays the broker's.
   */
  constructor(
    private readonly listenPort: number,
    private readonly target: { host: string; port: number },
    private readonly clampVersions = false,
  ) {}

  async start(): Promise<void> {
    this.server = net.createServer((downstream) => this.handle(downstream));
    await new Promise<void>((resolve, reject) => {
      this.server?.once('error', reject);
      this.server?.listen(this.listenPort, '127.0.0.1', () => resolve());
    });
  }

  private handle(downstream: net.Socket): void {
    const upstream = net.connect(this.target.port, this.target.host);
    this.sockets.add(downstream);
    this.sockets.add(upstream);
    const inflight = new Map<number, { apiKey: number; apiVersion: number; client: string }>();
    const requests = new FrameSplitter();
    const responses = new FrameSplitter();
    downstream.on('data', (chunk: Buffer) => {
      requests.push(chunk, (frame) => {
        const h = decodeRequestHeader(frame.subarray(4), 1);
        inflight.set(h.correlationId, { apiKey: h.apiKey, apiVersion: h.apiVersion, client: this.client });
        this.frames.push({ client: this.client, apiKey: h.apiKey, apiVersion: h.apiVersion, direction: 'request', frame });
      });
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      responses.push(chunk, (frame) => {
        const correlationId = frame.readInt32BE(4);
        const req = inflight.get(correlationId);
        let out = frame;
        if (req !== undefined) {
          inflight.delete(correlationId);
          this.frames.push({ client: req.client, apiKey: req.apiKey, apiVersion: req.apiVersion, direction: 'response', frame });
          if (this.clampVersions && req.apiKey === ApiKey.ApiVersions) out = clampApiVersions(frame, req.apiVersion);
        }
        downstream.write(out);
      });
    });
    const close = (): void => {
      downstream.destroy();
      upstream.destroy();
      this.sockets.delete(downstream);
      this.sockets.delete(upstream);
    };
    downstream.on('close', close);
    upstream.on('close', close);
    downstream.on('error', close);
    upstream.on('error', close);
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

/** Rewrites an ApiVersions response frame to the API ranges our codecs support. */
function clampApiVersions(frame: Buffer, version: number): Buffer {
  const v = apis.ApiVersions.validVersions;
  if (version < v.min || version > v.max) return frame;
  const { header, body } = decodeResponse(payloadOf([frame]), apis.ApiVersions, version);
  if (body.errorCode !== 0) return frame;
  body.apiKeys = body.apiKeys.flatMap((k) => {
    const ours = apiRegistry.get(k.apiKey);
    if (ours === undefined) return [];
    const oursMax = ours.validVersions.max - (ours.latestVersionUnstable ? 1 : 0);
    const minVersion = Math.max(k.minVersion, ours.validVersions.min);
    const maxVersion = Math.min(k.maxVersion, oursMax);
    return minVersion <= maxVersion ? [{ ...k, minVersion, maxVersion }] : [];
  });
  return Buffer.concat(encodeResponseMessage(apis.ApiVersions, version, header.correlationId, body));
}
