// Partition reassignments (KIP-455) in a cluster: whichever broker receives
// AlterPartitionReassignments decides the partition's next state from its
// image (metadata/cluster/reassignment.ts) and writes it to the metadata store
// by compare-and-swap on the partition's epochs, as Kafka's broker forwards the
// request to its controller; the controller completes the reassignment once
// the target replicas are in the ISR. A write fenced by a newer state is
// decided again from the state the store returned. The answer waits until this
// broker's image shows the change, so a ListPartitionReassignments sent next
// to the same broker sees it. ListPartitionReassignments reads the image.
import type { MetadataImage } from '../../metadata/cluster/image.js';
import { StalePartitionUpdateError } from '../../metadata/cluster/errors.js';
import { planReassignment } from '../../metadata/cluster/reassignment.js';
import { isReassigning, type PartitionState } from '../../metadata/cluster/records.js';
import type { ClusterMetadataStore } from '../../metadata/cluster/store.js';
import { ErrorCode, KafkaError } from '../protocol/errors.js';
import type { OngoingReassignment, PartitionReassignments } from '../broker-context.js';
import type { TopicSync } from './topic-sync.js';

export interface ClusterReassignmentsOptions {
  readonly store: ClusterMetadataStore;
  readonly image: MetadataImage;
  readonly sync: Pick<TopicSync, 'waitFor'>;
  /** unclean.leader.election.enable of the broker (a topic's own setting wins). */
  readonly uncleanLeaderElectionEnable: boolean;
  readonly visibleWithinMs: number;
}

/** Re-decisions after a fenced write before giving up (each one follows a change by someone else). */
const MAX_ATTEMPTS = 10;

export class ClusterReassignments implements PartitionReassignments {
  constructor(private readonly o: ClusterReassignmentsOptions) {}

  async alter(topic: string, partition: number, target: readonly number[] | null, allowReplicationFactorChange: boolean): Promise<void> {
    const { image, store } = this.o;
    const t = image.topic(topic);
    if (t === undefined) throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `Unable to find a topic named ${topic}.`);
    let state = image.partition(t.topicId, partition);
    if (state === undefined) throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `Unable to find partition ${topic}:${partition}.`);
    const unclean = t.configs['unclean.leader.election.enable'];
    const ctx = {
      registered: new Set(image.brokers().map((b) => b.nodeId)),
      canLead: (id: number) => {
        const b = image.broker(id);
        return b !== undefined && b.inControlledShutdown !== true;
      },
      uncleanLeaderElectionEnable: unclean === undefined ? this.o.uncleanLeaderElectionEnable : unclean === 'true',
      allowReplicationFactorChange,
    };
    const ref = { topicId: t.topicId, partition };
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const proposal = planReassignment(state, target, ctx);
      if (proposal === null) return;
      let written: PartitionState;
      try {
        written = await store.alterPartition(ref, { leaderEpoch: state.leaderEpoch, partitionEpoch: state.partitionEpoch }, proposal);
      } catch (e) {
        if (!(e instanceof StalePartitionUpdateError)) throw e;
        state = e.current; // the leader changed the ISR, or the controller moved on: decide again
        continue;
      }
      const epoch = written.partitionEpoch;
      await this.o.sync.waitFor(
        () => image.topic(topic)?.topicId !== t.topicId || (image.partition(t.topicId, partition)?.partitionEpoch ?? -1) >= epoch,
        this.o.visibleWithinMs,
        `reassign ${topic}-${partition}`,
      );
      return;
    }
    throw new KafkaError(ErrorCode.REQUEST_TIMED_OUT, `Could not reassign ${topic}-${partition}: the partition kept changing (${MAX_ATTEMPTS} attempts)`);
  }

  list(topics: ReadonlyArray<{ readonly name: string; readonly partitionIndexes: readonly number[] }> | null): Array<{ name: string; partitions: OngoingReassignment[] }> {
    const { image } = this.o;
    const wanted = topics ?? image.topics().map((t) => ({ name: t.name, partitionIndexes: image.partitions(t.topicId).map((_, i) => i) }));
    const out: Array<{ name: string; partitions: OngoingReassignment[] }> = [];
    for (const w of wanted) {
      const t = image.topic(w.name);
      if (t === undefined) continue;
      const partitions: OngoingReassignment[] = [];
      for (const i of w.partitionIndexes) {
        const s = image.partition(t.topicId, i);
        if (s === undefined || !isReassigning(s)) continue;
        partitions.push({ partitionIndex: i, replicas: [...s.replicas], addingReplicas: [...(s.addingReplicas ?? [])], removingReplicas: [...(s.removingReplicas ?? [])] });
      }
      if (partitions.length > 0) out.push({ name: w.name, partitions });
    }
    return out;
  }
}

/**
 * The single broker: it is the only replica of every partition, so a valid
 * target ([this node]) changes nothing and there is never a reassignment to
 * cancel or list; anything else is refused as Kafka refuses it.
 */
export class SingleBrokerReassignments implements PartitionReassignments {
  constructor(
    private readonly nodeId: number,
    private readonly partitionCount: (topic: string) => number | undefined,
  ) {}

  async alter(topic: string, partition: number, target: readonly number[] | null, allowReplicationFactorChange: boolean): Promise<void> {
    const count = this.partitionCount(topic);
    if (count === undefined) throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `Unable to find a topic named ${topic}.`);
    if (partition < 0 || partition >= count) throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `Unable to find partition ${topic}:${partition}.`);
    const state: PartitionState = { replicas: [this.nodeId], leader: this.nodeId, leaderEpoch: 0, isr: [this.nodeId], partitionEpoch: 0 };
    const ctx = { registered: new Set([this.nodeId]), canLead: () => true, uncleanLeaderElectionEnable: false, allowReplicationFactorChange };
    if (planReassignment(state, target, ctx) !== null) throw new KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, `Unexpected reassignment of ${topic}-${partition} on a single broker`);
  }

  list(): Array<{ name: string; partitions: OngoingReassignment[] }> {
    return [];
  }
}
