// KIP-392 (fetch from the closest replica): the leader's choice of a replica
// a consumer should fetch from, as Kafka's ReplicaManager.findPreferredReadReplica
// with the selector of replica.selector.class. Pure: the leader's view of its
// replicas comes in as data.
// - No selector configured (null, Kafka's default): the leader serves every
//   consumer, preferred_read_replica is -1.
// - RackAwareReplicaSelector: among the leader and the followers that are in
//   the ISR and whose log holds the fetch offset (log start <= offset <= LEO),
//   those in the client's rack; the leader if it is one of them, else the one
//   with the largest log end offset. No client rack, or none in it: the leader.
// - The answer is -1 when the choice is the leader itself.

import { RACK_AWARE_REPLICA_SELECTOR } from '../../metadata/broker-config-defs.js';

export { RACK_AWARE_REPLICA_SELECTOR };

export type ReplicaSelectorKind = 'none' | 'rack-aware';

/** replica.selector.class to a selector; undefined for a class Sediment does not have. */
export function replicaSelectorKind(className: string | null): ReplicaSelectorKind | undefined {
  if (className === null || className === '') return 'none';
  if (className === RACK_AWARE_REPLICA_SELECTOR) return 'rack-aware';
  return undefined;
}

export interface ReplicaView {
  readonly replicaId: number;
  /** The broker's broker.rack, null when unset or unknown. */
  readonly rack: string | null;
  readonly logStartOffset: bigint;
  /** The leader's knowledge of the replica's log end offset (-1 before its first fetch). */
  readonly logEndOffset: bigint;
  readonly inSync: boolean;
}

export interface PreferredReadReplicaInput {
  readonly selector: ReplicaSelectorKind;
  readonly leaderId: number;
  /** Every replica including the leader. */
  readonly replicas: readonly ReplicaView[];
  /** Fetch v11+ rack_id ('' when the client sets none). */
  readonly clientRack: string;
  readonly fetchOffset: bigint;
}

/** The replica a consumer should fetch from, or -1 for the leader itself. */
export function preferredReadReplica(i: PreferredReadReplicaInput): number {
  if (i.selector === 'none' || i.clientRack === '') return -1;
  const eligible = i.replicas.filter(
    (r) => r.replicaId === i.leaderId || (r.inSync && r.logStartOffset <= i.fetchOffset && r.logEndOffset >= i.fetchOffset),
  );
  const inRack = eligible.filter((r) => r.rack === i.clientRack);
  if (inRack.length === 0 || inRack.some((r) => r.replicaId === i.leaderId)) return -1;
  let best = inRack[0]!;
  for (const r of inRack) if (r.logEndOffset > best.logEndOffset) best = r;
  return best.replicaId;
}
