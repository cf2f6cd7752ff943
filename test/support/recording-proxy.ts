// A loopback proxy that records every request/response pair between real
// clients and a broker (normally the reference Apache Kafka), and writes golden
// response frames for the protocol codec tests:
//   test/golden/kafka-responses/<api>-v<version>.bin          response frame
//   test/golden/kafka-responses/<api>-v<version>.request.bin  the request it answered
//   test/golden/kafka-responses/index.json                    who produced each file
// Frames are stored as on the wire, 4-byte size prefix included (like the
// request captures in test/golden/<client>/): a response is size, header
// (correlation id, plus tagged fields in flexible versions; ApiVersions always
// uses header v0), body. Per api/version the largest response
// under the size limit is kept (so a Fetch sample carries records), one without
// error codes where there is one; existing files are never overwritten.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { startChaosProxy, type ChaosProxy, type ChaosProxyOptions, type Exchange } from './chaos-proxy.js';
import type { HostPort } from './kafka-reference.js';
import { apiRegistry } from '../../broker/protocol/messages/index.js';
import { decodeResponse, payloadOf } from '../../broker/protocol/frame.js';

/** Kafka API names by key, from the generated message registry. */
function apiName(apiKey: number): string | undefined {
  return apiRegistry.get(apiKey)?.name;
}

export function apiFileName(apiKey: number): string {
  const name = apiName(apiKey);
  if (name === undefined) return `api${apiKey}`;
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
    .replace(/([A-Z])([A-Z][a-z])/g, '$1-$2')
    .toLowerCase();
}

export interface RecordedExchange extends Exchange {
  /** Label of the client that sent the request (set with RecordingProxy.label). */
  readonly client: string;
}

export interface RecordingProxy {
  readonly proxy: ChaosProxy;
  readonly address: string;
  readonly exchanges: RecordedExchange[];
  /** Labels the exchanges recorded from now on. */
  label(client: string): void;
  close(): Promise<void>;
}

/**
 * Records every answered request through a chaos proxy without faults. The
 * golden capture (test/broker/protocol/golden/capture.ts) passes rewriteResponse
 * to narrow ApiVersions answers; the recorded frame stays the broker's.
 */
export async function startRecordingProxy(options: {
  target: HostPort;
  port?: number;
  rewriteResponse?: ChaosProxyOptions['rewriteResponse'];
}): Promise<RecordingProxy> {
  const exchanges: RecordedExchange[] = [];
  let client = 'unknown';
  const proxy = await startChaosProxy({
    target: options.target,
    ...(options.port === undefined ? {} : { port: options.port }),
    ...(options.rewriteResponse === undefined ? {} : { rewriteResponse: options.rewriteResponse }),
    onExchange: (e) => exchanges.push({ ...e, client }),
  });
  return {
    proxy,
    address: proxy.address,
    exchanges,
    label(c: string): void {
      client = c;
    },
    close: () => proxy.close(),
  };
}

export interface GoldenIndexEntry {
  readonly file: string;
  readonly requestFile: string;
  readonly apiKey: number;
  readonly api: string;
  readonly apiVersion: number;
  readonly client: string;
  readonly broker: string;
  readonly bytes: number;
}

/** Whether any errorCode in the decoded response is non-zero (a response that does not decode counts as one). */
function carriesError(e: RecordedExchange): boolean {
  const api = apiRegistry.get(e.request.apiKey);
  if (api === undefined) return true;
  let body: unknown;
  try {
    body = decodeResponse(payloadOf([e.responseFrame]), api, e.request.apiVersion).body;
  } catch {
    return true;
  }
  const walk = (v: unknown): boolean => {
    if (Array.isArray(v)) return v.some(walk);
    if (v === null || typeof v !== 'object' || Buffer.isBuffer(v)) return false;
    return Object.entries(v).some(([k, x]) => ((k === 'errorCode' || k === 'acknowledgeErrorCode') && x !== 0) || walk(x));
  };
  return walk(body);
}

/**
 * Writes one response (and its request) per api/version not yet in `dir`: the
 * largest one not above `maxBytes`, preferring answers without any error code
 * (a coordinator still loading, an id not yet allocated are moments of the run,
 * not what the API answers).
 */
export function saveGoldenResponses(exchanges: readonly RecordedExchange[], dir: string, options: { broker: string; maxBytes?: number }): GoldenIndexEntry[] {
  mkdirSync(dir, { recursive: true });
  const indexFile = path.join(dir, 'index.json');
  const index: GoldenIndexEntry[] = existsSync(indexFile) ? (JSON.parse(readFileSync(indexFile, 'utf8')) as GoldenIndexEntry[]) : [];
  const written: GoldenIndexEntry[] = [];
  const maxBytes = options.maxBytes ?? 64 * 1024;
  const best = new Map<string, { e: RecordedExchange; clean: boolean }>();
  for (const e of exchanges) {
    if (e.responseFrame.length > maxBytes) continue;
    const key = `${e.request.apiKey}/${e.request.apiVersion}`;
    const clean = !carriesError(e);
    const current = best.get(key);
    const better = current === undefined || (clean && !current.clean) || (clean === current.clean && e.responseFrame.length > current.e.responseFrame.length);
    if (better) best.set(key, { e, clean });
  }
  for (const { e } of best.values()) {
    const base = `${apiFileName(e.request.apiKey)}-v${e.request.apiVersion}`;
    const file = `${base}.bin`;
    const requestFile = `${base}.request.bin`;
    if (existsSync(path.join(dir, file))) continue;
    writeFileSync(path.join(dir, file), e.responseFrame);
    writeFileSync(path.join(dir, requestFile), e.requestFrame);
    const entry: GoldenIndexEntry = {
      file,
      requestFile,
      apiKey: e.request.apiKey,
      api: apiName(e.request.apiKey) ?? `api${e.request.apiKey}`,
      apiVersion: e.request.apiVersion,
      client: e.client,
      broker: options.broker,
      bytes: e.responseFrame.length,
    };
    index.push(entry);
    written.push(entry);
  }
  index.sort((a, b) => a.apiKey - b.apiKey || a.apiVersion - b.apiVersion);
  writeFileSync(indexFile, `${JSON.stringify(index, null, 2)}\n`);
  return written;
}
