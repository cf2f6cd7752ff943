// KIP-1023, follower fetch from the last tiered offset
// (follower.fetch.last.tiered.offset.enable, default false). A follower whose
// log is empty (a replica added by reassignment, or a replaced disk) of a
// tiered, non-compacted topic whose leader holds records does not copy the
// leader's whole local log: it asks the leader for its earliest offset not yet
// uploaded (ListOffsets -6, EARLIEST_PENDING_UPLOAD), builds its leader-epoch
// history and producer state from the remote segment ending just below it
// (tier-state.ts) and fetches from there. Offsets below are served by the
// remote tier. Pure: the fetcher supplies the state and does the I/O.
import type { LeaderLocalStart } from './tier-state.js';

export interface LastTieredOffsetState {
  /** follower.fetch.last.tiered.offset.enable */
  readonly enabled: boolean;
  /** The topic's remote.storage.enable, with tiering on at this broker. */
  readonly remoteStorageEnabled: boolean;
  /** cleanup.policy includes compact. */
  readonly compacted: boolean;
  /** The follower's log end offset. */
  readonly replicaEndOffset: bigint;
  /** The leader's end offset as the follower last learnt it. */
  readonly leaderEndOffset: bigint;
}

/** Kafka's ReplicaFetcherThread.shouldFetchFromLastTieredOffset. */
export function shouldFetchFromLastTieredOffset(s: LastTieredOffsetState): boolean {
  return s.enabled && s.remoteStorageEnabled && !s.compacted && s.replicaEndOffset === 0n && s.leaderEndOffset !== 0n;
}

/**
 * Where an empty follower starts, given the leader's earliest pending upload
 * offset (-6; offset -1 when the leader does not know it) and, when the fetch
 * was answered OFFSET_MOVED_TO_TIERED_STORAGE, its local log start (-4).
 * Null: fetch from the follower's log end as usual (nothing is tiered below
 * the pending offset that the follower could skip). The pending offset is at
 * least the local log start whenever known, so it is taken first; unknown,
 * the local start is.
 */
export function lastTieredStart(replicaEndOffset: bigint, pending: LeaderLocalStart, localStart: LeaderLocalStart | null): LeaderLocalStart | null {
  if (pending.offset > replicaEndOffset && (localStart === null || pending.offset >= localStart.offset)) return pending;
  if (localStart !== null && localStart.offset > replicaEndOffset) return localStart;
  return null;
}
