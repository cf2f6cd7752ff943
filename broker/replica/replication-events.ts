// What broker/replica/ publishes for metrics and the console (ReplicaManager
// onEvent): role changes, high watermark moves, ISR changes, each follower's
// lag as its leader sees it, and follower truncations. Plain data.

export type ReplicationEvent =
  | { readonly type: 'role'; readonly topic: string; readonly partition: number; readonly role: 'leader' | 'follower' | 'offline'; readonly leaderEpoch: number }
  | { readonly type: 'high-watermark'; readonly topic: string; readonly partition: number; readonly highWatermark: bigint }
  | { readonly type: 'isr-shrink' | 'isr-expand'; readonly topic: string; readonly partition: number; readonly isr: readonly number[]; readonly changed: readonly number[]; readonly partitionEpoch: number }
  /** Leader side, on each fetch of a follower: the leader's LEO minus the follower's fetch offset. */
  | { readonly type: 'follower-lag'; readonly topic: string; readonly partition: number; readonly replicaId: number; readonly lag: bigint }
  /** Follower side, after each fetch answer: its LEO and HW after it, and the record bytes it appended. */
  | { readonly type: 'follower-fetched'; readonly topic: string; readonly partition: number; readonly logEndOffset: bigint; readonly highWatermark: bigint; readonly appendedBytes: number }
  | { readonly type: 'truncated'; readonly topic: string; readonly partition: number; readonly from: bigint; readonly to: bigint };
