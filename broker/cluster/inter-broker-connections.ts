// One connection per broker for the requests a broker sends to another
// (transaction markers, the share-state persister, the cluster-wide remote log
// metadata): opened on first use, forgotten when it fails to open, dropped
// when a request on it fails, all closed with the owner.
import { KafkaError } from '../protocol/errors.js';
import { BrokerConnection } from '../cli/broker-connection.js';

export interface InterBrokerConnectionsOptions {
  /** The node's endpoint, or undefined when it is not registered. */
  readonly endpoint: (nodeId: number) => { readonly host: string; readonly port: number } | undefined;
  readonly clientId: string;
  readonly timeoutMs: number;
  /** What the caller's client gets: while this broker stops, and for a node not registered or not reachable. */
  readonly codes: { readonly stopping: number; readonly unreachable: number };
  /** Told when a connection could not be opened (for the log). */
  readonly onConnectFailed?: (nodeId: number, err: unknown) => void;
}

export class InterBrokerConnections {
  private readonly connections = new Map<number, Promise<BrokerConnection>>();
  private closed = false;

  constructor(private readonly o: InterBrokerConnectionsOptions) {}

  get(nodeId: number): Promise<BrokerConnection> {
    if (this.closed) return Promise.reject(new KafkaError(this.o.codes.stopping, 'this broker is stopping'));
    const existing = this.connections.get(nodeId);
    if (existing !== undefined) return existing;
    const endpoint = this.o.endpoint(nodeId);
    if (endpoint === undefined) return Promise.reject(new KafkaError(this.o.codes.unreachable, `node ${nodeId} is not registered`));
    const p = BrokerConnection.connect(endpoint.host, endpoint.port, { clientId: this.o.clientId, timeoutMs: this.o.timeoutMs });
    this.connections.set(nodeId, p);
    p.catch((err: unknown) => {
      if (this.connections.get(nodeId) === p) this.connections.delete(nodeId);
      this.o.onConnectFailed?.(nodeId, err);
    });
    return p.catch((err: unknown) => {
      throw new KafkaError(this.o.codes.unreachable, `cannot reach node ${nodeId}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    });
  }

  /** A request on `conn` failed: the next get() opens a new connection (unless another replaced it already). */
  drop(nodeId: number, conn: BrokerConnection): void {
    const current = this.connections.get(nodeId);
    if (current === undefined) return;
    void current.then((c) => {
      if (c === conn && this.connections.get(nodeId) === current) {
        this.connections.delete(nodeId);
        c.close();
      }
    }, () => undefined);
  }

  close(): void {
    this.closed = true;
    for (const c of this.connections.values()) c.then((conn) => conn.close(), () => undefined);
    this.connections.clear();
  }
}
