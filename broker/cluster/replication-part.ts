// The replication picture of one broker of a cluster, for the metrics and the
// console (broker/metrics/replication-view.ts): partitions, replicas, ISR,
// leader and epochs from the cluster image; high watermark and log end offsets
// from this broker's logs and, for the partitions it leads, from the
// ReplicaManager's follower states.
import type { ReplicatedPartition, ReplicationPart, ReplicaProgress } from '../metrics/replication-view.js';
import type { ReplicaManager } from '../replica/replica-manager.js';
import type { ReplicationEvent } from '../replica/replication-events.js';
import type { BrokerTopics } from '../topic-service.js';

/** What this reads of the cluster image (MetadataImage has it; structural so broker/ adds no import of metadata/). */
export interface ImageReader {
  topics(): ReadonlyArray<{ readonly name: string; readonly topicId: string; readonly configs: Readonly<Record<string, string>> }>;
  topic(name: string): { readonly configs: Readonly<Record<string, string>> } | undefined;
  partitions(topicId: string): ReadonlyArray<Omit<ReplicatedPartition, 'topic' | 'partition'> | undefined>;
  readonly controllerId: number;
}

export interface ReplicationPartOptions {
  readonly nodeId: number;
  readonly image: ImageReader;
  readonly manager: Pick<ReplicaManager, 'leaderState' | 'onEvent'>;
  readonly local: { readonly store: Pick<BrokerTopics['store'], 'get' | 'logConfig'>; partitionLog: BrokerTopics['partitionLog'] };
  /** min.insync.replicas of the broker, for topics this broker has no record of. */
  readonly defaultMinIsr: number;
}

export function replicationPart(o: ReplicationPartOptions): ReplicationPart {
  const { image, manager, local } = o;
  return {
    nodeId: o.nodeId,
    partitions(): ReplicatedPartition[] {
      const out: ReplicatedPartition[] = [];
      for (const t of image.topics()) {
        image.partitions(t.topicId).forEach((s, partition) => {
          if (s !== undefined) out.push({ topic: t.name, partition, replicas: s.replicas, isr: s.isr, leader: s.leader, leaderEpoch: s.leaderEpoch, partitionEpoch: s.partitionEpoch });
        });
      }
      return out;
    },
    isController: () => image.controllerId === o.nodeId,
    minInsyncReplicas(topic: string): number {
      // The topic's own setting where this broker has it, else the cluster's topic config, else the broker default.
      if (local.store.get(topic) !== undefined) return local.store.logConfig(topic).minInSyncReplicas;
      const configured = Number(image.topic(topic)?.configs['min.insync.replicas']);
      return Number.isInteger(configured) && configured > 0 ? configured : o.defaultMinIsr;
    },
    progress(topic: string, partition: number): ReplicaProgress | undefined {
      const log = local.partitionLog(topic, partition);
      if (log === undefined) return undefined;
      const logEndOffsets = new Map<number, bigint>([[o.nodeId, log.logEndOffset]]);
      const led = manager.leaderState(topic, partition);
      if (led !== undefined) for (const f of led.state.allFollowers()) logEndOffsets.set(f.replicaId, f.logEndOffset);
      return { highWatermark: log.highWatermark, logEndOffsets };
    },
    onEvent: (listener: (e: ReplicationEvent) => void) => manager.onEvent(listener),
  };
}
