// Where a share-partition leader's persister (broker/share/share-persister.ts)
// sends its share-state requests in a cluster: the key's share coordinator is
// the leader of its __share_group_state partition (as FindCoordinator key type
// 2 answers, creating the topic on first need); this broker's own keys go to
// its local share coordinator, the others over one pipelined connection per
// broker (opened on first use, dropped when it fails) as Kafka's inter-broker
// InitializeShareGroupState / ReadShareGroupState / WriteShareGroupState /
// DeleteShareGroupState / ReadShareGroupStateSummary.
import type { Logger } from 'pino';
import { BrokerConnection } from '../cli/broker-connection.js';
import { apis, type ApiDescriptor } from '../protocol/messages/index.js';
import { ErrorCode, KafkaError } from '../protocol/errors.js';
import type { PersisterRouting } from '../share/share-persister.js';
import type { ShareStateChannel } from '../share/share-state-service.js';
import type { NodeEndpoint } from './cluster-view.js';

export interface ShareStateRoutingOptions {
  readonly nodeId: number;
  /** FindCoordinator's answer for a share-partition key (null: none yet). */
  readonly coordinatorFor: (key: string) => NodeEndpoint | null;
  readonly endpoint: (nodeId: number) => NodeEndpoint | undefined;
  readonly local: ShareStateChannel;
  readonly candidates: PersisterRouting['candidates'];
  /** request.timeout.ms of the inter-broker calls. */
  readonly requestTimeoutMs: number;
  readonly log: Logger;
}

export class ShareStateRouting implements PersisterRouting {
  private readonly connections = new Map<number, Promise<BrokerConnection>>();
  private readonly channels = new Map<number, ShareStateChannel>();
  private closed = false;

  constructor(private readonly o: ShareStateRoutingOptions) {}

  coordinatorOf(key: string): number | null {
    return this.o.coordinatorFor(key)?.nodeId ?? null;
  }

  candidates(): readonly { readonly topicId: string; readonly partitionCount: number }[] {
    return this.o.candidates();
  }

  channel(nodeId: number): ShareStateChannel {
    if (nodeId === this.o.nodeId) return this.o.local;
    let ch = this.channels.get(nodeId);
    if (ch === undefined) {
      const send = <Req, Res>(api: ApiDescriptor<Req, Res>, req: Req): Promise<Res> => this.send(nodeId, api, req);
      ch = {
        initialize: (req) => send(apis.InitializeShareGroupState, req),
        read: (req) => send(apis.ReadShareGroupState, req),
        write: (req) => send(apis.WriteShareGroupState, req),
        delete: (req) => send(apis.DeleteShareGroupState, req),
        summary: (req) => send(apis.ReadShareGroupStateSummary, req),
      };
      this.channels.set(nodeId, ch);
    }
    return ch;
  }

  close(): void {
    this.closed = true;
    for (const c of this.connections.values()) c.then((conn) => conn.close(), () => undefined);
    this.connections.clear();
  }

  private async send<Req, Res>(nodeId: number, api: ApiDescriptor<Req, Res>, req: Req): Promise<Res> {
    const conn = await this.connection(nodeId);
    try {
      return (await conn.send(api, () => req)).body;
    } catch (err) {
      if (err instanceof KafkaError && err.code === ErrorCode.UNSUPPORTED_VERSION) throw err;
      this.drop(nodeId, conn);
      throw new KafkaError(ErrorCode.COORDINATOR_NOT_AVAILABLE, `${api.name} to node ${nodeId} failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  private connection(nodeId: number): Promise<BrokerConnection> {
    if (this.closed) return Promise.reject(new KafkaError(ErrorCode.COORDINATOR_NOT_AVAILABLE, 'this broker is stopping'));
    const existing = this.connections.get(nodeId);
    if (existing !== undefined) return existing;
    const endpoint = this.o.endpoint(nodeId);
    if (endpoint === undefined) return Promise.reject(new KafkaError(ErrorCode.COORDINATOR_NOT_AVAILABLE, `node ${nodeId} is not registered`));
    const p = BrokerConnection.connect(endpoint.host, endpoint.port, { clientId: `sediment-share-persister-${this.o.nodeId}`, timeoutMs: this.o.requestTimeoutMs });
    this.connections.set(nodeId, p);
    p.catch((err: unknown) => {
      if (this.connections.get(nodeId) === p) this.connections.delete(nodeId);
      this.o.log.warn({ nodeId, err: err instanceof Error ? err.message : String(err) }, 'could not connect to the share coordinator');
    });
    return p.catch((err: unknown) => {
      throw new KafkaError(ErrorCode.COORDINATOR_NOT_AVAILABLE, `cannot reach node ${nodeId}: ${err instanceof Error ? err.message : String(err)}`);
    });
  }

  private drop(nodeId: number, conn: BrokerConnection): void {
    const current = this.connections.get(nodeId);
    if (current === undefined) return;
    void current.then((c) => {
      if (c === conn && this.connections.get(nodeId) === current) {
        this.connections.delete(nodeId);
        c.close();
      }
    }, () => undefined);
  }
}
