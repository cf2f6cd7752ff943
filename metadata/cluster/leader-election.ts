// The controller's leadership decisions as pure functions over a MetadataImage:
// given who is registered (live), which partitions need a new leader or a
// smaller ISR, and what each one's next state is. The controller applies them
// with alterPartition (compare-and-swap on the epochs it read here), so a
// decision made on a stale image is refused by the store, never applied.
//
// The rules are Kafka's (KRaft's PartitionChangeBuilder):
// - a leader whose broker is gone is replaced by the first replica, in replica
//   order, that is live and in the ISR; the leader epoch rises by one;
// - with no such replica and unclean.leader.election.enable=false, the
//   partition goes offline: leader -1, leader epoch + 1, and the ISR keeps its
//   last members (never empty), so the partition comes back when one of them
//   returns; with unclean election, the first live replica leads, alone in the ISR;
// - a live leader's ISR loses the members that are gone (no epoch change);
// - preferred leader election moves leadership to the first replica when it
//   is live, in the ISR and not the leader;
// - controlled shutdown (a broker whose registration is inControlledShutdown)
//   is Kafka's too: such a broker is never chosen as a new leader; a partition
//   it leads moves to the first other live ISR replica (leader epoch + 1) and
//   drops it from the ISR; where no other ISR replica is live it keeps leading
//   (nothing can move: the partition goes offline when the broker stops); where
//   it is a follower it leaves the ISR (if others remain).
import type { MetadataImage } from './image.js';
import type { PartitionProposal, PartitionState, TopicPartitionRef } from './records.js';

export interface PartitionChange {
  readonly topic: string;
  readonly ref: TopicPartitionRef;
  /** The epochs the change is based on (alterPartition's compare). */
  readonly expected: { readonly leaderEpoch: number; readonly partitionEpoch: number };
  readonly proposal: PartitionProposal;
  readonly reason: 'leader-gone' | 'offline' | 'back-online' | 'isr-shrink' | 'preferred' | 'controlled-shutdown' | 'reassignment-completed';
}

export interface ElectionOptions {
  readonly uncleanLeaderElectionEnable: boolean;
}

/** The next state of one partition given the live brokers, or null when it needs no change. */
export function electLeader(
  state: PartitionState,
  live: ReadonlySet<number>,
  options: ElectionOptions,
  /** Live brokers in controlled shutdown: never chosen as leader, leaving ISRs. */
  shuttingDown: ReadonlySet<number> = new Set(),
): { proposal: PartitionProposal; reason: PartitionChange['reason'] } | null {
  const liveIsr = state.isr.filter((r) => live.has(r));
  if (state.leader !== -1 && live.has(state.leader)) {
    if (shuttingDown.has(state.leader)) {
      const next = state.replicas.find((r) => r !== state.leader && live.has(r) && !shuttingDown.has(r) && state.isr.includes(r));
      if (next !== undefined) {
        return {
          proposal: { replicas: state.replicas, leader: next, leaderEpoch: state.leaderEpoch + 1, isr: liveIsr.filter((r) => !shuttingDown.has(r)) },
          reason: 'controlled-shutdown',
        };
      }
    }
    // Followers shutting down leave the ISR (the leader stays in it).
    const isr = liveIsr.filter((r) => r === state.leader || !shuttingDown.has(r));
    if (isr.length === state.isr.length) return null;
    const reason = isr.length < liveIsr.length ? 'controlled-shutdown' : 'isr-shrink';
    return { proposal: { replicas: state.replicas, leader: state.leader, leaderEpoch: state.leaderEpoch, isr }, reason };
  }
  const wasOnline = state.leader !== -1;
  const clean =
    state.replicas.find((r) => live.has(r) && !shuttingDown.has(r) && state.isr.includes(r)) ??
    state.replicas.find((r) => live.has(r) && state.isr.includes(r));
  if (clean !== undefined) {
    return {
      proposal: { replicas: state.replicas, leader: clean, leaderEpoch: state.leaderEpoch + 1, isr: liveIsr },
      reason: wasOnline ? 'leader-gone' : 'back-online',
    };
  }
  if (options.uncleanLeaderElectionEnable) {
    const any = state.replicas.find((r) => live.has(r));
    if (any !== undefined) {
      return { proposal: { replicas: state.replicas, leader: any, leaderEpoch: state.leaderEpoch + 1, isr: [any] }, reason: wasOnline ? 'leader-gone' : 'back-online' };
    }
  }
  if (!wasOnline) return null; // already offline, nobody to bring it back
  return { proposal: { replicas: state.replicas, leader: -1, leaderEpoch: state.leaderEpoch + 1, isr: state.isr }, reason: 'offline' };
}

/** Every partition whose leader or ISR must change because brokers came or went. */
export function planLeaderChanges(image: MetadataImage, options: ElectionOptions): PartitionChange[] {
  const live = new Set(image.brokers().map((b) => b.nodeId));
  const shuttingDown = new Set(image.brokers().filter((b) => b.inControlledShutdown === true).map((b) => b.nodeId));
  const out: PartitionChange[] = [];
  for (const t of image.topics()) {
    image.partitions(t.topicId).forEach((state, partition) => {
      if (state === undefined) return;
      const next = electLeader(state, live, options, shuttingDown);
      if (next === null) return;
      out.push({
        topic: t.name,
        ref: { topicId: t.topicId, partition },
        expected: { leaderEpoch: state.leaderEpoch, partitionEpoch: state.partitionEpoch },
        ...next,
      });
    });
  }
  return out;
}

/** Partitions whose preferred (first) replica is live and in the ISR but does not lead. */
export function planPreferredLeaders(image: MetadataImage): PartitionChange[] {
  const live = new Set(image.brokers().filter((b) => b.inControlledShutdown !== true).map((b) => b.nodeId));
  const out: PartitionChange[] = [];
  for (const t of image.topics()) {
    image.partitions(t.topicId).forEach((state, partition) => {
      if (state === undefined) return;
      const preferred = state.replicas[0];
      if (preferred === undefined || preferred === state.leader || !live.has(preferred) || !state.isr.includes(preferred)) return;
      // Only from a live leader: an offline or orphaned partition is planLeaderChanges' to fix.
      if (state.leader === -1 || !live.has(state.leader)) return;
      out.push({
        topic: t.name,
        ref: { topicId: t.topicId, partition },
        expected: { leaderEpoch: state.leaderEpoch, partitionEpoch: state.partitionEpoch },
        proposal: { replicas: state.replicas, leader: preferred, leaderEpoch: state.leaderEpoch + 1, isr: state.isr },
        reason: 'preferred',
      });
    });
  }
  return out;
}

/** The states of a new topic's (or the new) partitions: first replica leads, every replica in the ISR, epoch 0. */
export function initialProposals(assignment: readonly (readonly number[])[]): PartitionProposal[] {
  return assignment.map((replicas) => ({ replicas: [...replicas], leader: replicas[0] ?? -1, leaderEpoch: 0, isr: [...replicas] }));
}
