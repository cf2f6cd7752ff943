// The replication picture the metrics and the console read: per partition the
// replicas, ISR, leader and epochs from the cluster image, and, where this
// broker knows them, log end offsets and the high watermark (its own log; for
// the partitions it leads, each follower's LEO as its fetches report it).
// Structural, so broker/metrics and broker/http need no import of metadata/:
// broker/cluster/replication-part.ts builds it from the image and the
// ReplicaManager. The counts are pure functions of it, as Kafka computes its
// ReplicaManager gauges:
//   UnderReplicatedPartitions   led partitions whose ISR is smaller than the replica set
//   UnderMinIsrPartitionCount   led partitions whose ISR is below min.insync.replicas
//   OfflinePartitionsCount      partitions without a leader (the controller reports it; 0 elsewhere)
import type { ReplicationEvent } from '../replica/replication-events.js';

export interface ReplicatedPartition {
  readonly topic: string;
  readonly partition: number;
  readonly replicas: readonly number[];
  readonly isr: readonly number[];
  /** -1: offline. */
  readonly leader: number;
  readonly leaderEpoch: number;
  readonly partitionEpoch: number;
}

/** What this broker knows of a partition's progress. */
export interface ReplicaProgress {
  /** This broker's high watermark of the partition (the leader's is the committed one). */
  readonly highWatermark: bigint;
  /** LEO per replica id: this broker's own, plus each follower's where this broker leads (-1: not fetched yet this term). */
  readonly logEndOffsets: ReadonlyMap<number, bigint>;
}

export interface ReplicationPart {
  readonly nodeId: number;
  /** Every partition of the cluster image, in topic then partition order. */
  partitions(): readonly ReplicatedPartition[];
  isController(): boolean;
  minInsyncReplicas(topic: string): number;
  /** Undefined when this broker holds no log of the partition. */
  progress(topic: string, partition: number): ReplicaProgress | undefined;
  /** Subscribes to ISR changes and follower lag (the ReplicaManager's events). */
  onEvent(listener: (e: ReplicationEvent) => void): void;
}

export interface ReplicationCounts {
  readonly leaderCount: number;
  readonly underReplicated: number;
  readonly underMinIsr: number;
  /** Partitions without a leader, counted by the controller only (Kafka's OfflinePartitionsCount is a controller metric). */
  readonly offline: number;
}

export function replicationCounts(part: ReplicationPart): ReplicationCounts {
  let leaderCount = 0;
  let underReplicated = 0;
  let underMinIsr = 0;
  let offline = 0;
  for (const p of part.partitions()) {
    if (p.leader < 0) offline++;
    if (p.leader !== part.nodeId) continue;
    leaderCount++;
    if (p.isr.length < p.replicas.length) underReplicated++;
    if (p.isr.length < part.minInsyncReplicas(p.topic)) underMinIsr++;
  }
  return { leaderCount, underReplicated, underMinIsr, offline: part.isController() ? offline : 0 };
}

/** ISR shrink/expand totals and the latest lag of each follower, kept from the ReplicaManager's events. */
export class ReplicationEventStats {
  isrShrinks = 0;
  isrExpands = 0;
  /** Truncations of this broker's logs as a follower (KIP-101/279). */
  truncations = 0;
  /** Record bytes this broker appended as a follower, per topic (Kafka's FetcherStats BytesPerSec). */
  readonly fetchedBytes = new Map<string, number>();
  private readonly lags = new Map<string, { topic: string; partition: number; replica: number; lag: bigint }>();

  observe(e: ReplicationEvent): void {
    switch (e.type) {
      case 'isr-shrink':
        this.isrShrinks++;
        // A follower out of the ISR keeps its lag entry: it is still a replica and still behind.
        return;
      case 'isr-expand':
        this.isrExpands++;
        return;
      case 'follower-lag':
        this.lags.set(`${e.topic}\u0000${e.partition}\u0000${e.replicaId}`, { topic: e.topic, partition: e.partition, replica: e.replicaId, lag: e.lag });
        return;
      case 'role':
        // A new leader term (or losing leadership) makes the old term's follower lags stale.
        for (const [k, v] of this.lags) if (v.topic === e.topic && v.partition === e.partition) this.lags.delete(k);
        return;
      case 'truncated':
        this.truncations++;
        return;
      case 'follower-fetched':
        if (e.appendedBytes > 0) this.fetchedBytes.set(e.topic, (this.fetchedBytes.get(e.topic) ?? 0) + e.appendedBytes);
        return;
      case 'high-watermark':
        return;
    }
  }

  /** The latest lag (leader LEO minus fetch offset) of each follower of the partitions this broker leads. */
  followerLags(): ReadonlyArray<{ topic: string; partition: number; replica: number; lag: bigint }> {
    return [...this.lags.values()];
  }
}
