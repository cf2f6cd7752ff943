// Where a follower truncates when its leader reports a diverging epoch in a
// Fetch answer (KIP-101 / KIP-279, as Kafka's fetchers do since 2.7 with
// LastFetchedEpoch in Fetch v12+ instead of a separate OffsetForLeaderEpoch
// round trip): Kafka's AbstractFetcherThread.getOffsetTruncationState. Pure.

export interface EpochEndOffset {
  readonly epoch: number;
  readonly endOffset: bigint;
}

export interface TruncationDecision {
  readonly offset: bigint;
  /** False: truncated to the follower's own end of an older epoch; the next fetch asks again. */
  readonly complete: boolean;
}

/**
 * `leader` is the divergingEpoch of the leader's answer; `followerEndOffsetFor`
 * the follower's own epoch lookup (largest epoch <= the asked one and where it
 * ends); `followerLogEnd` and `followerHighWatermark` its log end and HW.
 */
export function truncationOffset(
  leader: EpochEndOffset,
  followerEndOffsetFor: (epoch: number) => EpochEndOffset,
  followerLogEnd: bigint,
  followerHighWatermark: bigint,
): TruncationDecision {
  const min = (a: bigint, b: bigint): bigint => (a < b ? a : b);
  // The leader knows no end for the epoch: nothing above the HW can be trusted.
  if (leader.endOffset < 0n) return { offset: min(followerHighWatermark, followerLogEnd), complete: true };
  if (leader.epoch < 0) return { offset: min(leader.endOffset, followerLogEnd), complete: true };
  const ours = followerEndOffsetFor(leader.epoch);
  if (ours.epoch < 0 || ours.endOffset < 0n) return { offset: min(leader.endOffset, followerLogEnd), complete: true };
  if (ours.epoch === leader.epoch) return { offset: min(leader.endOffset, ours.endOffset), complete: true };
  // We have no such epoch: cut to the end of our largest older one, and ask again from there.
  return { offset: min(ours.endOffset, followerLogEnd), complete: false };
}
