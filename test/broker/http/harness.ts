// A real broker in this process with its HTTP listener on an ephemeral port,
// as broker.ts wires it (BrokerMetrics over the broker's parts, the dispatcher
// observed and its Produce/Fetch handlers instrumented). With `routes`, a
// second HTTP server over the same parts and metrics serves them too (the
// broker's own has none), and the tests talk to that one.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Kafka, logLevel, type Admin } from 'kafkajs';
import { Broker } from '../../../broker/broker.js';
import { BrokerConfig } from '../../../broker/config.js';
import { startHttpServer, type HttpRoute, type HttpServerHandle } from '../../../broker/http/http-server.js';
import { silentLogger } from '../../../broker/common/logger.js';
import type { BrokerMetrics } from '../../../broker/metrics/broker-metrics.js';
import type { BrokerParts } from '../../../broker/metrics/broker-view.js';

export const host = '127.0.0.1';

export interface TestBroker {
  readonly broker: Broker;
  readonly parts: BrokerParts;
  readonly metrics: BrokerMetrics;
  readonly http: HttpServerHandle;
  /** host:port of the broker's Kafka listener. */
  readonly bootstrap: string;
  /** http://127.0.0.1:<port> */
  readonly baseUrl: string;
  readonly dataDir: string;
  kafka(clientId?: string): Kafka;
  close(): Promise<void>;
}

/** Broker settings for tiering into the default file:// store under the log dir. */
export const tieringOverrides: Readonly<Record<string, string>> = {
  'remote.log.storage.system.enable': 'true',
  'remote.log.manager.task.interval.ms': '500',
  'log.retention.check.interval.ms': '200',
};

/** A tiered topic with ~100 kB segments and a 1 s local retention. */
export const tieredTopicConfigs: Readonly<Record<string, string>> = {
  'remote.storage.enable': 'true',
  'internal.segment.bytes': '100000',
  'local.retention.ms': '1000',
};

export async function startTestBroker(
  overrides: Readonly<Record<string, string>> = {},
  options: { readonly routes?: Readonly<Record<string, HttpRoute>> } = {},
): Promise<TestBroker> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'sediment-http-'));
  const log = silentLogger();
  const config = BrokerConfig.fromProperties({
    'log.dirs': dataDir,
    listeners: `PLAINTEXT://${host}:0`,
    'http.listeners': `http://${host}:0`,
    'group.initial.rebalance.delay.ms': '0',
    'offsets.topic.num.partitions': '3',
    ...overrides,
  });
  const broker = await Broker.start(config, { log });
  const cleanups: Array<() => Promise<void>> = [async () => broker.stop()];
  const close = async (): Promise<void> => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    if (broker.http === null || broker.http.port === 0) throw new Error('the broker started no HTTP listener');
    const parts: BrokerParts = { topics: broker.topics, groups: broker.context.groups, remoteLogManager: broker.remoteLogManager };
    const metrics = broker.http.metrics;
    let http: HttpServerHandle = broker.http;
    if (options.routes !== undefined) {
      const extra = await startHttpServer({ ...parts, metrics, listeners: [{ host, port: 0 }], logger: log, routes: options.routes });
      cleanups.push(() => extra.stop());
      http = extra;
    }
    const bootstrap = `${host}:${broker.port}`;
    return {
      broker,
      parts,
      metrics,
      http,
      bootstrap,
      baseUrl: `http://${host}:${http.port}`,
      dataDir,
      kafka: (clientId = 'http-test') => new Kafka({ clientId, brokers: [bootstrap], logLevel: logLevel.NOTHING }),
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

export async function createTopic(admin: Admin, topic: string, numPartitions: number, configs: Readonly<Record<string, string>> = {}): Promise<void> {
  await admin.createTopics({
    topics: [{ topic, numPartitions, replicationFactor: 1, configEntries: Object.entries(configs).map(([name, value]) => ({ name, value })) }],
    waitForLeaders: true,
  });
}

/** `count` messages of `size` bytes to one partition, in batches of `batch`. */
export async function produce(t: TestBroker, topic: string, partition: number, count: number, size: number, batch = 50): Promise<void> {
  const producer = t.kafka('http-test-producer').producer({ allowAutoTopicCreation: false });
  await producer.connect();
  try {
    for (let i = 0; i < count; i += batch) {
      const n = Math.min(batch, count - i);
      await producer.send({
        topic,
        acks: -1,
        messages: Array.from({ length: n }, (_, k) => ({ partition, key: `k${i + k}`, value: `${i + k}:`.padEnd(size, 'x') })),
      });
    }
  } finally {
    await producer.disconnect();
  }
}

export async function getJson<T>(t: TestBroker, pathAndQuery: string): Promise<T> {
  const res = await fetch(t.baseUrl + pathAndQuery);
  if (!res.ok) throw new Error(`${pathAndQuery}: HTTP ${res.status}`);
  return (await res.json()) as T;
}

/** Polls `probe` (every 50 ms) until it returns a value other than undefined; fails after `timeoutMs`. */
export async function eventually<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** One sample of the Prometheus text: the value of `name{labels}` (labels matched as a subset), or undefined. */
export function sample(text: string, name: string, labels: Readonly<Record<string, string | number>> = {}): number | undefined {
  const found = samples(text, name).filter((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === String(v)));
  if (found.length === 0) return undefined;
  return found.reduce((n, s) => n + s.value, 0);
}

/** Every sample of a metric name, with its labels. */
export function samples(text: string, name: string): Array<{ labels: Record<string, string>; value: number }> {
  const out: Array<{ labels: Record<string, string>; value: number }> = [];
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || line === '') continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$/.exec(line);
    if (m === null || m[1] !== name) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[3] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1] as string] = (l[2] as string).replace(/\\(.)/g, '$1');
    out.push({ labels, value: Number(m[4]) });
  }
  return out;
}
