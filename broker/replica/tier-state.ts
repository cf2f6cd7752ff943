// A follower whose fetch offset is below its leader's local log start gets
// OFFSET_MOVED_TO_TIERED_STORAGE: the records it lacks are only in the remote
// tier. As Kafka's ReplicaFetcherTierStateMachine it asks the leader for its
// local log start (ListOffsets -4), takes from the remote log metadata the
// segment ending just below it, fetches that segment's uploaded leader-epoch
// checkpoint and producer snapshot, empties its log and starts it there with
// that history and producer state (PartitionLog.startFromRemoteState), then
// fetches from the leader as usual. Offsets below are served by the remote
// tier, and as leader later it continues the idempotent producers' sequences.
import type { RemoteAuxState } from '../../remote-log/read/aux-state.js';
import type { PartitionLog } from '../log/partition-log.js';
import { parseLeaderEpochCheckpoint } from '../log/leader-epoch-cache.js';
import { decodeProducerSnapshot } from '../log/producer-snapshots.js';
import { ErrorCode, KafkaError } from '../protocol/errors.js';

/** What replication reaches of the RemoteLogManager. */
export interface ReplicaRemoteTier {
  /** The remote state to start a follower's log from (RemoteLogManager.remoteAuxState). */
  remoteAuxState(log: PartitionLog, leaderLocalLogStartOffset: bigint, leaderEpoch: number): Promise<RemoteAuxState>;
  /** The first offset the remote tier holds, or null (the partition's log start is the smaller of it and the local one). */
  logStartOffset(log: PartitionLog): bigint | null;
}

/** The leader's local log start and its leader epoch (ListOffsets -4). */
export interface LeaderLocalStart {
  readonly offset: bigint;
  readonly leaderEpoch: number;
}

/** Builds the follower's state from the remote tier; resolves to the offset its log now starts (and fetches) at. */
export async function buildRemoteLogAuxState(log: PartitionLog, leader: LeaderLocalStart, tier: ReplicaRemoteTier): Promise<bigint> {
  const aux = await tier.remoteAuxState(log, leader.offset, leader.leaderEpoch);
  const epochs = parseLeaderEpochCheckpoint(aux.leaderEpochCheckpoint.toString('utf8'));
  if (epochs === null) throw new KafkaError(ErrorCode.CORRUPT_MESSAGE, `the remote leader-epoch checkpoint of ${log.topic}-${log.partition} below ${leader.offset} is not readable`);
  const producers = aux.producerSnapshot.length === 0 ? [] : decodeProducerSnapshot(aux.producerSnapshot);
  await log.startFromRemoteState(aux.nextOffset, epochs, producers);
  return aux.nextOffset;
}

/** The partition's log start over both tiers. */
export function logStartOverTiers(log: PartitionLog, tier: ReplicaRemoteTier | null): bigint {
  const remote = tier?.logStartOffset(log) ?? null;
  return remote !== null && remote < log.logStartOffset ? remote : log.logStartOffset;
}
