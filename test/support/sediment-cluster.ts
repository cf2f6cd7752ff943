// A cluster of `sediment start` processes sharing one real etcd (test/support/
// etcd.ts) under a key prefix of its own: node ids 1..N on free loopback ports,
// each with its own log dir. Brokers are SedimentProcess children, so a test
// can kill -9 one and start it again on the same port and data.
import { AdminClient, type ClusterMetadata } from '../../broker/cli/admin-client.js';
import type { EtcdServer } from './etcd.js';
import { startSediment, type SedimentProcess } from './sediment.js';

export interface ClusterOptions {
  readonly etcd: EtcdServer;
  readonly brokers: number;
  /** Key prefix in etcd (one per cluster). */
  readonly prefix: string;
  readonly overrides?: Readonly<Record<string, string>>;
  /** Overrides of one broker on top of `overrides` (e.g. its broker.rack). */
  readonly brokerOverrides?: (nodeId: number) => Readonly<Record<string, string>>;
  /** Node flags of one broker's process (e.g. `--cpu-prof`). */
  readonly brokerNodeArgs?: (nodeId: number) => readonly string[];
}

export class SedimentCluster {
  constructor(
    readonly brokers: readonly SedimentProcess[],
    readonly prefix: string,
  ) {}

  /** node id -> process (node ids are 1..N). */
  broker(nodeId: number): SedimentProcess {
    const b = this.brokers[nodeId - 1];
    if (b === undefined) throw new Error(`no broker ${nodeId}`);
    return b;
  }

  /** host:port of every running broker, comma-separated. */
  get bootstrap(): string {
    return this.brokers.filter((b) => b.alive).map((b) => b.bootstrap).join(',');
  }

  /** Metadata as one broker answers it (that broker alone: no routing). */
  async metadataFrom(nodeId: number, topics: readonly string[] | null = null): Promise<ClusterMetadata> {
    const admin = await AdminClient.connect(this.broker(nodeId).bootstrap);
    try {
      return await admin.metadata(topics);
    } finally {
      admin.close();
    }
  }

  /**
   * Asks `nodeId` for metadata until `done` holds (the cluster converges
   * through etcd watches: there is no single event to await from outside),
   * every `intervalMs`, failing after `timeoutMs` with the last answer.
   */
  async untilMetadata(nodeId: number, topics: readonly string[] | null, done: (md: ClusterMetadata) => boolean, timeoutMs: number, what: string, intervalMs = 100): Promise<ClusterMetadata> {
    const deadline = Date.now() + timeoutMs;
    let last: ClusterMetadata | string = 'no answer';
    for (;;) {
      try {
        const md = await this.metadataFrom(nodeId, topics);
        if (done(md)) return md;
        last = md;
      } catch (e) {
        last = e instanceof Error ? e.message : String(e);
      }
      if (Date.now() >= deadline) throw new Error(`${what}: not within ${timeoutMs} ms; last answer from node ${nodeId}: ${JSON.stringify(last)}`);
      await new Promise((r) => setTimeout(r, intervalMs));
    }
  }

  async close(): Promise<void> {
    for (const b of this.brokers) await b.close().catch(() => undefined);
  }
}

/** Starts N brokers one after another (each registered before the next starts). */
export async function startSedimentCluster(options: ClusterOptions): Promise<SedimentCluster> {
  const started: SedimentProcess[] = [];
  try {
    for (let id = 1; id <= options.brokers; id++) {
      started.push(
        await startSediment({
          overrides: {
            'node.id': String(id),
            'etcd.connect': `${options.etcd.endpoint}${options.prefix}`,
            ...options.overrides,
            ...options.brokerOverrides?.(id),
          },
          nodeArgs: options.brokerNodeArgs?.(id) ?? [],
        }),
      );
    }
  } catch (e) {
    for (const b of started) await b.close().catch(() => undefined);
    throw e;
  }
  return new SedimentCluster(started, options.prefix);
}
