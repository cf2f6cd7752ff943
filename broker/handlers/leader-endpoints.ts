// KIP-951: the NodeEndpoints a Produce, Fetch, ShareFetch or ShareAcknowledge
// response carries for the current leaders it names, so the client connects to
// them without a metadata round trip. In a cluster, the endpoints of the
// brokers this broker's image shows registered (an unregistered one is left
// out, as Kafka's metadata cache has no node for it); the single broker is its
// own advertised listener (what Metadata answers for it).
import type { BrokerContext } from '../broker-context.js';

/** A NodeEndpoint of Produce, Fetch, ShareFetch and ShareAcknowledge responses (the same fields in each). */
export interface LeaderEndpoint {
  readonly nodeId: number;
  readonly host: string;
  readonly port: number;
  readonly rack: string | null;
}

export type LeaderEndpointSource = Pick<BrokerContext, 'cluster' | 'nodeId' | 'advertised'>;

/** The endpoints of the given leader ids, once each, in first-seen order; unknown leaders (-1) and unregistered brokers are skipped. */
export function leaderEndpoints(broker: LeaderEndpointSource, leaderIds: Iterable<number>): LeaderEndpoint[] {
  const out: LeaderEndpoint[] = [];
  for (const id of new Set(leaderIds)) {
    if (id < 0) continue;
    const e = endpointOf(broker, id);
    if (e !== undefined) out.push({ nodeId: e.nodeId, host: e.host, port: e.port, rack: e.rack });
  }
  return out;
}

function endpointOf(broker: LeaderEndpointSource, id: number): LeaderEndpoint | undefined {
  if (broker.cluster != null) return broker.cluster.endpoint(id);
  return id === broker.nodeId ? { nodeId: id, host: broker.advertised.host, port: broker.advertised.port, rack: null } : undefined;
}
