// A cluster of `sediment start` processes sharing one real etcd (test/support/
// etcd.ts) under a key prefix of its own: node ids 1..N on free loopback ports,
// each with its own log dir. Brokers are SedimentProcess children, so a test
// can kill -9 one and start it again on the same port and data.
import { AdminClient, type ClusterMetadata } from '../../broker/cli/admin-client.js';
import { BrokerConnection } from '../../broker/cli/broker-connection.js';
import { isRetriable } from '../../broker/protocol/errors.js';
import { apis } from '../../broker/protocol/messages/index.js';
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

/** Where produceTo sends its batch, and how. */
export interface ProduceTarget {
  readonly topic: string;
  readonly partition?: number;
  readonly acks: number;
  readonly timeoutMs?: number;
  /** Highest Produce version to send (12 unless told). */
  readonly maxVersion?: number;
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

  /** A connection to one broker alone (no routing). */
  async connect(nodeId: number): Promise<BrokerConnection> {
    const [host, port] = this.broker(nodeId).bootstrap.split(':');
    return BrokerConnection.connect(host!, Number(port));
  }

  /** One Produce of a built batch straight to `nodeId` (no routing, no retry): the partition's error code, as the broker answered it. */
  async produceTo(nodeId: number, target: ProduceTarget, records: Buffer): Promise<number> {
    const conn = await this.connect(nodeId);
    try {
      const { body } = await conn.send(
        apis.Produce,
        () => ({ transactionalId: null, acks: target.acks, timeoutMs: target.timeoutMs ?? 10_000, topicData: [{ name: target.topic, topicId: '', partitionData: [{ index: target.partition ?? 0, records }] }] }),
        { max: target.maxVersion ?? 12 },
      );
      return body.responses[0]!.partitionResponses[0]!.errorCode;
    } finally {
      conn.close();
    }
  }

  /**
   * produceTo, sent again while the answer is retriable (a broker whose image
   * or log is a moment behind the one that answered Metadata), as a client
   * retries, for up to `timeoutMs`: the last error code.
   */
  async produceRetrying(nodeId: number, target: ProduceTarget, records: Buffer, timeoutMs = 10_000, intervalMs = 100): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const code = await this.produceTo(nodeId, target, records);
      if (!isRetriable(code) || Date.now() >= deadline) return code;
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
