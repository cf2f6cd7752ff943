// Three Apache Kafka 4.x nodes in KRaft mode for the RF 3 benchmark: each JVM is
// broker and controller (combined mode, as config/server.properties of the
// distribution with a three-voter static quorum), on free loopback ports, log
// dirs formatted with one shared cluster id. Internal topics get replication
// factor 3, as in a production cluster of three.
import { freePort, randomClusterId, startKafkaReference, type KafkaReference } from '../support/kafka-reference.js';

export interface KafkaCluster {
  /** host:port of every node, comma-separated. */
  readonly bootstrap: string;
  readonly nodes: readonly KafkaReference[];
  stop(): Promise<void>;
}

/** server.properties entries of node `nodeId` (1-based) of a combined-mode cluster; pure. */
export function kraftNodeOverrides(host: string, nodeId: number, brokerPorts: readonly number[], controllerPorts: readonly number[]): Record<string, string> {
  const brokerPort = brokerPorts[nodeId - 1];
  const controllerPort = controllerPorts[nodeId - 1];
  if (brokerPort === undefined || controllerPort === undefined) throw new Error(`no ports for node ${nodeId}`);
  const n = controllerPorts.length;
  const isr = String(Math.min(2, n));
  return {
    'process.roles': 'broker,controller',
    'node.id': String(nodeId),
    'controller.quorum.voters': controllerPorts.map((p, i) => `${i + 1}@${host}:${p}`).join(','),
    listeners: `PLAINTEXT://${host}:${brokerPort},CONTROLLER://${host}:${controllerPort}`,
    'advertised.listeners': `PLAINTEXT://${host}:${brokerPort}`,
    'offsets.topic.replication.factor': String(n),
    'transaction.state.log.replication.factor': String(n),
    'transaction.state.log.min.isr': isr,
    'share.coordinator.state.topic.replication.factor': String(n),
    'share.coordinator.state.topic.min.isr': isr,
  };
}

/**
 * Starts the nodes together: none answers Metadata before a quorum of
 * controllers has elected a leader, so they cannot be started one by one.
 */
export async function startKafkaCluster(options: { readonly nodes?: number; readonly heap?: string } = {}): Promise<KafkaCluster> {
  const host = '127.0.0.1';
  const count = options.nodes ?? 3;
  const brokerPorts: number[] = [];
  const controllerPorts: number[] = [];
  for (let i = 0; i < count; i++) {
    brokerPorts.push(await freePort());
    controllerPorts.push(await freePort());
  }
  const clusterId = randomClusterId();
  const results = await Promise.allSettled(
    brokerPorts.map((port, i) =>
      startKafkaReference({ heap: options.heap ?? '1G', port, clusterId, startTimeoutMs: 120_000, overrides: kraftNodeOverrides(host, i + 1, brokerPorts, controllerPorts) }),
    ),
  );
  const nodes = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  // SIGKILL, then stop() to remove the dirs: a controlled shutdown of all nodes at
  // once waits for a controller quorum that is shutting down too (30 s each, to no end).
  const stop = async (): Promise<void> => {
    await Promise.all(nodes.map(async (k) => {
      await k.kill();
      await k.stop();
    }));
  };
  if (failed !== undefined) {
    await stop();
    throw failed.reason;
  }
  return { bootstrap: nodes.map((k) => k.bootstrap).join(','), nodes, stop };
}
