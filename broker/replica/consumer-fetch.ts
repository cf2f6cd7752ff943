// Who serves a consumer's Fetch of one partition (KIP-392), as Kafka's
// ReplicaManager.readFromLog and Partition.localLogWithEpochOrThrow decide it.
// Pure: the broker's standing for the partition comes in as data.
// - Not a replica here (no log, or the partition is offline): NOT_LEADER_OR_FOLLOWER.
// - The request's current_leader_epoch (-1: not sent) against this broker's
//   epoch of the partition: older -> FENCED_LEADER_EPOCH, newer ->
//   UNKNOWN_LEADER_EPOCH (the client refreshes its metadata).
// - A follower serves consumers only from Fetch v11 on (the version with
//   rack_id: Kafka's FetchParams.fetchOnlyLeader is true without client
//   metadata), up to its own high watermark; older versions get
//   NOT_LEADER_OR_FOLLOWER. Any v11+ consumer fetch is served, directed there
//   by the leader or not, with or without a replica.selector.class here.
// - The leader reads, unless (v11+) its replica selector prefers another
//   replica for this fetch: then that replica's id goes back as
//   preferred_read_replica, with no records and no error.

import { ErrorCode } from '../protocol/errors.js';

/** Fetch v11 added rack_id and preferred_read_replica; Kafka builds client metadata from it on. */
export const FIRST_CLIENT_METADATA_VERSION = 11;

export type ConsumerFetchStanding = 'leader' | 'follower' | 'not-replica';

export interface ConsumerFetchInput {
  readonly standing: ConsumerFetchStanding;
  /** This broker's leader epoch of the partition (its metadata image's). */
  readonly leaderEpoch: number;
  /** The request's current_leader_epoch, -1 when the client sent none. */
  readonly currentLeaderEpoch: number;
  readonly apiVersion: number;
  /** The leader's choice for this fetch (replica-selector.ts): -1 for itself. Asked only when it matters. */
  readonly preferredReadReplica: () => number;
}

export type ConsumerFetchDecision =
  | { readonly kind: 'read' }
  | { readonly kind: 'redirect'; readonly preferredReadReplica: number }
  | { readonly kind: 'error'; readonly errorCode: number };

const READ: ConsumerFetchDecision = { kind: 'read' };

export function consumerFetchDecision(i: ConsumerFetchInput): ConsumerFetchDecision {
  if (i.standing === 'not-replica') return { kind: 'error', errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER };
  if (i.currentLeaderEpoch >= 0 && i.currentLeaderEpoch < i.leaderEpoch) return { kind: 'error', errorCode: ErrorCode.FENCED_LEADER_EPOCH };
  if (i.currentLeaderEpoch > i.leaderEpoch) return { kind: 'error', errorCode: ErrorCode.UNKNOWN_LEADER_EPOCH };
  const clientMetadata = i.apiVersion >= FIRST_CLIENT_METADATA_VERSION;
  if (i.standing === 'follower') return clientMetadata ? READ : { kind: 'error', errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER };
  if (!clientMetadata) return READ;
  const preferred = i.preferredReadReplica();
  return preferred >= 0 ? { kind: 'redirect', preferredReadReplica: preferred } : READ;
}
