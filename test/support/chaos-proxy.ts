// A loopback TCP proxy between Kafka clients and a broker that injects
// connection faults at request boundaries. Its main use: close the client's
// connection after the broker has answered a Produce request, without passing
// the answer on, so the client retries a batch the broker already appended;
// an idempotent producer must then leave no duplicates.
//
// Clients must stay on the proxy after bootstrap, so the broker has to advertise
// the proxy's address: for the reference Kafka pass `proxyAdvertisedPort` to
// startKafkaReference and target its `externalListener`; for Sediment set
// advertised.listeners to the proxy's port.
import net from 'node:net';
import type { HostPort } from './kafka-reference.js';

export type FaultAction =
  /** Pass the request on and its response back. */
  | 'forward'
  /** Close both sides without sending the request to the broker. */
  | 'close-before-forward'
  /** Send the request, wait for the broker's response, then close both sides without delivering it. */
  | 'close-after-response';

export interface RequestInfo {
  readonly apiKey: number;
  readonly apiVersion: number;
  readonly correlationId: number;
  readonly connectionId: number;
  /** 1-based count of requests with this apiKey through the proxy so far. */
  readonly nthOfApi: number;
  /** Produce with acks=0 gets no response. */
  readonly expectsResponse: boolean;
}

export type FaultPlan = (request: RequestInfo) => FaultAction;

/** One request and the response the broker sent for it: whole frames, 4-byte size prefix included. */
export interface Exchange {
  readonly request: RequestInfo;
  readonly requestFrame: Buffer;
  readonly responseFrame: Buffer;
}

export interface ChaosProxyOptions {
  readonly target: HostPort;
  /** Listening port on 127.0.0.1; free by default. */
  readonly port?: number;
  readonly fault?: FaultPlan;
  /** Sees every answered request, in order per connection (dropped responses included). */
  readonly onExchange?: (exchange: Exchange) => void;
  /** Replaces a response frame before the client sees it (onExchange still sees the broker's). */
  readonly rewriteResponse?: (request: RequestInfo, frame: Buffer) => Buffer;
}

export interface ChaosProxyStats {
  connections: number;
  requests: Map<number, number>;
  faults: number;
  faultsByApi: Map<number, number>;
}

export interface ChaosProxy {
  readonly host: string;
  readonly port: number;
  readonly address: string;
  readonly stats: ChaosProxyStats;
  setFault(plan: FaultPlan): void;
  close(): Promise<void>;
}

export const ApiKey = { produce: 0, fetch: 1, listOffsets: 2, metadata: 3, apiVersions: 18, initProducerId: 22 } as const;

/**
 * Fault every n-th request of `apiKey` counted from when the plan is set (n, 2n, ...;
 * with `fromFirst`, 1, n+1, 2n+1, ... so that even a run of a single request is
 * faulted), at most `limit` times.
 */
export function everyNth(apiKey: number, n: number, action: FaultAction = 'close-after-response', limit = Infinity, fromFirst = false): FaultPlan {
  let seen = 0;
  let injected = 0;
  return (r) => {
    if (r.apiKey !== apiKey) return 'forward';
    seen++;
    const due = fromFirst ? (seen - 1) % n === 0 : seen % n === 0;
    if (!due || injected >= limit) return 'forward';
    injected++;
    return action;
  };
}

function readUnsignedVarint(buf: Buffer, offset: number): [number, number] {
  let value = 0;
  let shift = 0;
  for (let o = offset; o < buf.length && shift <= 28; o++) {
    const b = buf[o]!;
    value |= (b & 0x7f) << shift;
    if ((b & 0x80) === 0) return [value >>> 0, o + 1];
    shift += 7;
  }
  throw new RangeError('bad varint');
}

/** Produce v9+ uses the flexible request header (v2) and compact strings. */
function produceAcks(frame: Buffer, apiVersion: number): number {
  // frame: apiKey(2) apiVersion(2) correlationId(4) clientId(int16 string) ...
  let o = 8;
  const clientIdLen = frame.readInt16BE(o);
  o += 2 + Math.max(0, clientIdLen);
  if (apiVersion >= 9) {
    let tags: number;
    [tags, o] = readUnsignedVarint(frame, o);
    for (let t = 0; t < tags; t++) {
      let size: number;
      [, o] = readUnsignedVarint(frame, o);
      [size, o] = readUnsignedVarint(frame, o);
      o += size;
    }
    let txnLen: number;
    [txnLen, o] = readUnsignedVarint(frame, o);
    o += Math.max(0, txnLen - 1);
  } else if (apiVersion >= 3) {
    const txnLen = frame.readInt16BE(o);
    o += 2 + Math.max(0, txnLen);
  }
  return frame.readInt16BE(o);
}

const noFrame = Buffer.alloc(0);

export async function startChaosProxy(options: ChaosProxyOptions): Promise<ChaosProxy> {
  let plan: FaultPlan = options.fault ?? (() => 'forward');
  const stats: ChaosProxyStats = { connections: 0, requests: new Map(), faults: 0, faultsByApi: new Map() };
  const sockets = new Set<net.Socket>();
  let nextConnectionId = 0;

  const server = net.createServer((client) => {
    const connectionId = ++nextConnectionId;
    stats.connections++;
    const upstream = net.connect(options.target);
    sockets.add(client);
    sockets.add(upstream);
    const closeBoth = (): void => {
      client.destroy();
      upstream.destroy();
    };
    client.on('close', () => {
      sockets.delete(client);
      upstream.destroy();
    });
    upstream.on('close', () => {
      sockets.delete(upstream);
      client.destroy();
    });
    client.on('error', closeBoth);
    upstream.on('error', closeBoth);
    // Responses come back in request order; each entry says whether to drop it.
    const pending: Array<{ correlationId: number; drop: boolean; info: RequestInfo; requestFrame: Buffer }> = [];

    let inBuf: Buffer = Buffer.alloc(0);
    client.on('data', (chunk: Buffer) => {
      inBuf = inBuf.length === 0 ? chunk : Buffer.concat([inBuf, chunk]);
      while (inBuf.length >= 4) {
        const size = inBuf.readInt32BE(0);
        if (size < 8 || inBuf.length < 4 + size) {
          if (size < 8) {
            // Not a request we can read: pass bytes through untouched.
            upstream.write(inBuf);
            inBuf = Buffer.alloc(0);
          }
          return;
        }
        const frame = inBuf.subarray(0, 4 + size);
        inBuf = inBuf.subarray(4 + size);
        const body = frame.subarray(4);
        const apiKey = body.readInt16BE(0);
        const apiVersion = body.readInt16BE(2);
        const correlationId = body.readInt32BE(4);
        const nthOfApi = (stats.requests.get(apiKey) ?? 0) + 1;
        stats.requests.set(apiKey, nthOfApi);
        let expectsResponse = true;
        if (apiKey === ApiKey.produce) {
          try {
            expectsResponse = produceAcks(body, apiVersion) !== 0;
          } catch {
            expectsResponse = true;
          }
        }
        const info: RequestInfo = { apiKey, apiVersion, correlationId, connectionId, nthOfApi, expectsResponse };
        const action = plan(info);
        if (action !== 'forward') {
          stats.faults++;
          stats.faultsByApi.set(apiKey, (stats.faultsByApi.get(apiKey) ?? 0) + 1);
        }
        if (action === 'close-before-forward') {
          closeBoth();
          return;
        }
        upstream.write(frame);
        if (!expectsResponse) {
          if (action === 'close-after-response') {
            upstream.end(() => closeBoth());
            return;
          }
          continue;
        }
        pending.push({ correlationId, drop: action === 'close-after-response', info, requestFrame: options.onExchange === undefined ? noFrame : Buffer.from(frame) });
      }
    });

    let outBuf: Buffer = Buffer.alloc(0);
    upstream.on('data', (chunk: Buffer) => {
      outBuf = outBuf.length === 0 ? chunk : Buffer.concat([outBuf, chunk]);
      while (outBuf.length >= 8) {
        const size = outBuf.readInt32BE(0);
        if (outBuf.length < 4 + size) return;
        const frame = outBuf.subarray(0, 4 + size);
        outBuf = outBuf.subarray(4 + size);
        const correlationId = frame.readInt32BE(4);
        const idx = pending.findIndex((p) => p.correlationId === correlationId);
        const entry = idx >= 0 ? pending.splice(idx, 1)[0] : undefined;
        if (entry !== undefined && options.onExchange !== undefined) {
          options.onExchange({ request: entry.info, requestFrame: entry.requestFrame, responseFrame: Buffer.from(frame) });
        }
        if (entry?.drop === true) {
          closeBoth();
          return;
        }
        client.write(entry !== undefined && options.rewriteResponse !== undefined ? options.rewriteResponse(entry.info, Buffer.from(frame)) : frame);
      }
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const addr = server.address();
  if (addr === null || typeof addr === 'string') throw new Error('chaos proxy: no address');
  return {
    host: '127.0.0.1',
    port: addr.port,
    address: `127.0.0.1:${addr.port}`,
    stats,
    setFault(p: FaultPlan): void {
      plan = p;
    },
    close(): Promise<void> {
      for (const s of sockets) s.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
