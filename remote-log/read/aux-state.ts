// What a follower below its leader's local log start needs from the remote
// tier to start there (Kafka's ReplicaFetcherTierStateMachine.buildRemoteLogAuxState):
// the remote segment that ends just below the leader's local log start, in
// the leader's lineage, and that segment's uploaded leader-epoch checkpoint
// and producer snapshot. The follower then empties its log, starts it at the
// segment's end + 1 with that epoch history and producer state, and fetches
// from there: every offset below is served by the remote tier.
import type { RemoteLogSegmentMetadata } from '../../metadata/remote-log-metadata/types.js';

/** The epoch in force at `offset` in a segment's epochs (undefined when the segment does not reach it). */
function epochAt(segment: RemoteLogSegmentMetadata, offset: bigint): number | undefined {
  let epoch: number | undefined;
  for (const e of segment.segmentLeaderEpochs) if (e.startOffset <= offset) epoch = e.leaderEpoch;
  return epoch;
}

/**
 * Among `segments` (the partition's, any state), the finished one holding
 * `leaderLocalLogStartOffset - 1` whose epoch there is the largest not above
 * `leaderEpoch` (the leader's epoch at its local log start: its lineage has
 * no later epoch at that offset; a segment of a diverged, later epoch is not
 * it). Undefined when the metadata has none (not caught up yet, or nothing
 * below the leader's local start is remote).
 */
export function auxStateSegment(segments: readonly RemoteLogSegmentMetadata[], leaderLocalLogStartOffset: bigint, leaderEpoch: number): RemoteLogSegmentMetadata | undefined {
  const previous = leaderLocalLogStartOffset - 1n;
  let best: { segment: RemoteLogSegmentMetadata; epoch: number } | undefined;
  for (const s of segments) {
    if (s.state !== 'COPY_SEGMENT_FINISHED' || s.startOffset > previous || s.endOffset < previous) continue;
    const epoch = epochAt(s, previous);
    if (epoch === undefined || (leaderEpoch >= 0 && epoch > leaderEpoch)) continue;
    if (best === undefined || epoch > best.epoch || (epoch === best.epoch && s.eventTimestampMs > best.segment.eventTimestampMs)) best = { segment: s, epoch };
  }
  return best?.segment;
}

/** The remote state a follower starts from (buffers as uploaded; the local log parses them). */
export interface RemoteAuxState {
  /** Where the follower's log starts: the remote segment's end + 1. */
  readonly nextOffset: bigint;
  /** The segment's leader-epoch checkpoint (Kafka's text format). */
  readonly leaderEpochCheckpoint: Buffer;
  /** The producer snapshot taken at the segment's end. */
  readonly producerSnapshot: Buffer;
}
