// The broker's HTTP listener (`http.listeners`, default http://127.0.0.1:9644),
// read-only, on node:http:
//   GET /                       the console (console-page.ts)
//   GET /metrics                Prometheus text exposition (the broker's own registry)
//   GET /v1/partitions[?topic=T][&segments=1]
//                               [{ topic, partition, logStartOffset, localLogStartOffset,
//                                  highWatermark, lastStableOffset, localSegments, localBytes,
//                                  remoteSegments, remoteBytes, ... }] (what `sediment topics
//                                  --describe` reads); segments=1 adds the log across the tiers;
//                                  in a cluster, replication: { leader, leaderEpoch, partitionEpoch,
//                                  isr, replicas: [{ nodeId, inSync, logEndOffset }] }
//   GET /v1/groups[?group=G]    groups with committed offsets, lag per partition, max lag
//   GET /v1/tiering             copy and delete lag, remote sizes, counters, caches
//   GET /healthz                "ok"
// plus any route the caller adds (`routes`, e.g. /v1/cost). Int64 values are
// JSON numbers while exact, decimal strings beyond 2^53. Other methods get 405,
// unknown paths 404, a failure 500 with { error }.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { HttpListenerConfig } from '../config.js';
import { groupSnapshots, partitionSnapshots, tieringSnapshot, type BrokerParts } from '../metrics/broker-view.js';
import { BrokerMetrics } from '../metrics/broker-metrics.js';
import { CONSOLE_HTML } from './console-page.js';
import { toJson } from './json.js';

export interface HttpResponse {
  readonly status: number;
  readonly contentType: string;
  readonly body: string | Buffer;
}

/** A route's answer to a GET (the query string parsed). */
export type HttpRoute = (query: URLSearchParams) => Promise<HttpResponse> | HttpResponse;

export interface HttpServerOptions extends BrokerParts {
  /** Where to listen; port 0 binds an ephemeral port. An empty list starts nothing. */
  readonly listeners: readonly HttpListenerConfig[];
  readonly logger: Logger;
  /** The broker's metrics (the dispatcher's observer feeds it); built from the parts when absent. */
  readonly metrics?: BrokerMetrics;
  /** More GET routes by path (e.g. '/v1/cost'); they win over the built-in ones. */
  readonly routes?: Readonly<Record<string, HttpRoute>>;
}

export interface HttpServerHandle {
  /** The bound port of the first listener (0 when there is none). */
  readonly port: number;
  /** Bound ports, one per listener. */
  readonly ports: readonly number[];
  readonly metrics: BrokerMetrics;
  /** Stops listening and closes open connections (keep-alive ones included). */
  stop(): Promise<void>;
}

const JSON_TYPE = 'application/json; charset=utf-8';

function json(value: unknown, status = 200): HttpResponse {
  return { status, contentType: JSON_TYPE, body: toJson(value) };
}

function flag(query: URLSearchParams, name: string): boolean {
  const v = query.get(name);
  return v !== null && v !== '0' && v !== 'false';
}

function optional(query: URLSearchParams, name: string): string | undefined {
  return query.get(name) ?? undefined;
}

/** The built-in GET routes over the broker's parts. */
export function builtInRoutes(parts: BrokerParts, metrics: BrokerMetrics): Record<string, HttpRoute> {
  return {
    '/': () => ({ status: 200, contentType: 'text/html; charset=utf-8', body: CONSOLE_HTML }),
    '/metrics': async () => ({ status: 200, contentType: metrics.contentType, body: await metrics.scrape() }),
    '/healthz': () => ({ status: 200, contentType: 'text/plain; charset=utf-8', body: 'ok\n' }),
    '/v1/partitions': (q) => {
      const topic = optional(q, 'topic');
      return json(
        partitionSnapshots(parts, {
          ...(topic === undefined ? {} : { topic }),
          segments: flag(q, 'segments'),
          excludeInternal: flag(q, 'excludeInternal'),
        }),
      );
    },
    '/v1/groups': (q) => {
      const groupId = optional(q, 'group');
      return json(groupSnapshots(parts, groupId === undefined ? {} : { groupId }));
    },
    '/v1/tiering': () => json(tieringSnapshot(parts)),
  };
}

export async function startHttpServer(options: HttpServerOptions): Promise<HttpServerHandle> {
  const parts: BrokerParts = {
    topics: options.topics,
    groups: options.groups,
    remoteLogManager: options.remoteLogManager,
    ...(options.replication === undefined ? {} : { replication: options.replication }),
  };
  const metrics = options.metrics ?? new BrokerMetrics(parts);
  const routes = new Map(Object.entries({ ...builtInRoutes(parts, metrics), ...options.routes }));
  const log = options.logger;

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const route = routes.get(url.pathname.length > 1 ? url.pathname.replace(/\/+$/, '') : url.pathname);
    let answer: HttpResponse;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      answer = json({ error: `method ${req.method ?? ''} not allowed` }, 405);
    } else if (route === undefined) {
      answer = json({ error: `no such path: ${url.pathname}` }, 404);
    } else {
      try {
        answer = await route(url.searchParams);
      } catch (err) {
        log.warn({ err, path: url.pathname }, 'http request failed');
        answer = json({ error: err instanceof Error ? err.message : String(err) }, 500);
      }
    }
    const body = typeof answer.body === 'string' ? Buffer.from(answer.body, 'utf8') : answer.body;
    res.writeHead(answer.status, {
      'content-type': answer.contentType,
      'content-length': body.length,
      'cache-control': 'no-store',
      ...(answer.status === 405 ? { allow: 'GET, HEAD' } : {}),
    });
    res.end(req.method === 'HEAD' ? undefined : body);
  };

  const servers: http.Server[] = [];
  const ports: number[] = [];
  const stop = async (): Promise<void> => {
    await Promise.all(
      servers.map(
        (s) =>
          new Promise<void>((resolve) => {
            s.close(() => resolve());
            s.closeAllConnections();
          }),
      ),
    );
    servers.length = 0;
  };
  try {
    for (const l of options.listeners) {
      const server = http.createServer((req, res) => {
        handle(req, res).catch((err: unknown) => {
          log.warn({ err }, 'http response failed');
          res.destroy();
        });
      });
      server.keepAliveTimeout = 5_000;
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(l.port, l.host === '' ? undefined : l.host, () => {
          server.off('error', reject);
          resolve();
        });
      });
      server.on('error', (err) => log.warn({ err }, 'http listener error'));
      servers.push(server);
      ports.push((server.address() as AddressInfo).port);
    }
  } catch (err) {
    await stop();
    throw err;
  }
  if (servers.length > 0) {
    const urls = options.listeners.map((l, i) => `http://${l.host.includes(':') ? `[${l.host}]` : l.host}:${ports[i] ?? l.port}`);
    log.info({ http: urls }, 'http listener started');
  }
  return { port: ports[0] ?? 0, ports, metrics, stop };
}
