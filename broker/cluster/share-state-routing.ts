// Where a share-partition leader's persister (broker/share/share-persister.ts)
// sends its share-state requests in a cluster: the key's share coordinator is
// the leader of its __share_group_state partition (as FindCoordinator key type
// 2 answers, creating the topic on first need); this broker's own keys go to
// its local share coordinator, the others over one pipelined connection per
// broker (opened on first use, dropped when it fails) as Kafka's inter-broker
// InitializeShareGroupState / ReadShareGroupState / WriteShareGroupState /
// DeleteShareGroupState / ReadShareGroupStateSummary.
import type { Logger } from 'pino';
import { InterBrokerConnections } from './inter-broker-connections.js';
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
  private readonly connections: InterBrokerConnections;
  private readonly channels = new Map<number, ShareStateChannel>();

  constructor(private readonly o: ShareStateRoutingOptions) {
    this.connections = new InterBrokerConnections({
      endpoint: (nodeId) => o.endpoint(nodeId),
      clientId: `sediment-share-persister-${o.nodeId}`,
      timeoutMs: o.requestTimeoutMs,
      codes: { stopping: ErrorCode.COORDINATOR_NOT_AVAILABLE, unreachable: ErrorCode.COORDINATOR_NOT_AVAILABLE },
      onConnectFailed: (nodeId, err) => o.log.warn({ nodeId, err: err instanceof Error ? err.message : String(err) }, 'could not connect to the share coordinator'),
    });
  }

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
    this.connections.close();
  }

  private async send<Req, Res>(nodeId: number, api: ApiDescriptor<Req, Res>, req: Req): Promise<Res> {
    const conn = await this.connections.get(nodeId);
    try {
      return (await conn.send(api, () => req)).body;
    } catch (err) {
      if (err instanceof KafkaError && err.code === ErrorCode.UNSUPPORTED_VERSION) throw err;
      this.connections.drop(nodeId, conn);
      throw new KafkaError(ErrorCode.COORDINATOR_NOT_AVAILABLE, `${api.name} to node ${nodeId} failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

}
