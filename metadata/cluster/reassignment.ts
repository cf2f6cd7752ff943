// Partition reassignment (Kafka's KIP-455, as KRaft's ReplicationControlManager,
// PartitionReassignmentReplicas and PartitionReassignmentRevert decide it) as
// pure functions over a partition's state. The writer applies the proposals
// with alterPartition, compare-and-swap on the epochs it read, so a decision
// made on a stale state is refused, never applied.
//
// - Start (target replicas given): replicas become the target followed by the
//   current replicas the target drops (removingReplicas); the target's new
//   members are addingReplicas. They join as followers, catch up and enter the
//   ISR through the leader's ISR expansion. A target equal to the current
//   replicas is no change.
// - Complete (the controller, whenever the image shows it is possible): once
//   the ISR without the removing replicas is non-empty and holds every target
//   replica, replicas = the target, the ISR loses the removing replicas and
//   the reassignment fields are cleared. The leader stays if it is in the
//   target and may lead (registered, not shutting down); else the first such
//   target replica in the new ISR leads. The leader epoch rises when the
//   leader changes or any replica leaves (Kafka fences the removed replicas'
//   fetches so). With no target replica able to lead, completion waits.
//   A start whose ISR already allows it completes at once (e.g. a reorder, or
//   lowering the replication factor).
// - Cancel (target null): NO_REASSIGNMENT_IN_PROGRESS with none; else the
//   replicas and ISR lose the adding replicas and the removing ones stay. An
//   ISR left empty takes the first remaining replica, which is an unclean
//   election: refused (INVALID_REPLICA_ASSIGNMENT) unless
//   unclean.leader.election.enable. A leader that was being added gives way
//   to the first remaining ISR replica that may lead.
// One departure from Kafka: a new reassignment replaces the one in progress
// (Kafka keeps the old adding/removing lists when the new ones are empty,
// which can complete to another set than the one asked for).
import { ErrorCode, KafkaError } from '../../broker/protocol/errors.js';
import type { MetadataImage } from './image.js';
import type { PartitionChange } from './leader-election.js';
import { isReassigning, type PartitionProposal, type PartitionState } from './records.js';

export interface ReassignmentContext {
  /** Registered broker ids (a target must name only these). */
  readonly registered: ReadonlySet<number>;
  /** Whether a broker may become leader: registered and not in controlled shutdown. */
  readonly canLead: (nodeId: number) => boolean;
  readonly uncleanLeaderElectionEnable: boolean;
  /** AlterPartitionReassignments v1 AllowReplicationFactorChange (true before v1). */
  readonly allowReplicationFactorChange: boolean;
}

/** The replicas a partition had before its reassignment (Kafka's originalReplicas). */
export function originalReplicas(state: PartitionState): number[] {
  const adding = state.addingReplicas ?? [];
  return state.replicas.filter((r) => !adding.includes(r));
}

/** The replicas a partition will have once its reassignment completes. */
export function targetReplicas(state: PartitionState): number[] {
  const removing = state.removingReplicas ?? [];
  return state.replicas.filter((r) => !removing.includes(r));
}

/** Kafka's validateManualPartitionAssignment: non-empty, distinct, registered. */
export function checkTarget(target: readonly number[], registered: ReadonlySet<number>): void {
  if (target.length === 0) throw new KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, 'The manual partition assignment includes an empty replica list.');
  const sorted = [...target].sort((a, b) => a - b);
  sorted.forEach((id, i) => {
    if (!registered.has(id)) throw new KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, `The manual partition assignment includes broker ${id}, but no such broker is registered.`);
    if (i > 0 && sorted[i - 1] === id) throw new KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, `The manual partition assignment includes the broker ${id} more than once.`);
  });
}

/**
 * AlterPartitionReassignments for one partition: the next state to propose,
 * or null when nothing changes. KafkaError for a refused request.
 */
export function planReassignment(state: PartitionState, target: readonly number[] | null, ctx: ReassignmentContext): PartitionProposal | null {
  return target === null ? planCancel(state, ctx) : planStart(state, target, ctx);
}

function planStart(state: PartitionState, target: readonly number[], ctx: ReassignmentContext): PartitionProposal | null {
  checkTarget(target, ctx.registered);
  if (!ctx.allowReplicationFactorChange && target.length !== originalReplicas(state).length) {
    throw new KafkaError(
      ErrorCode.INVALID_REPLICATION_FACTOR,
      `The replication factor is changed from ${originalReplicas(state).length} to ${target.length} but AllowReplicationFactorChange is false.`,
    );
  }
  const current = state.replicas;
  const removing = current.filter((r) => !target.includes(r)).sort((a, b) => a - b);
  const adding = target.filter((r) => !current.includes(r)).sort((a, b) => a - b);
  const replicas = [...target, ...removing];
  const started: PartitionProposal = { replicas, leader: state.leader, leaderEpoch: state.leaderEpoch, isr: state.isr, addingReplicas: adding, removingReplicas: removing };
  const completed = completion({ ...state, ...started }, ctx.canLead);
  const next = completed ?? started;
  if (sameList(next.replicas, current) && !isReassigning(next) && !isReassigning(state) && next.leader === state.leader && sameList(next.isr, state.isr)) return null;
  return next;
}

function planCancel(state: PartitionState, ctx: ReassignmentContext): PartitionProposal {
  if (!isReassigning(state)) throw new KafkaError(ErrorCode.NO_REASSIGNMENT_IN_PROGRESS, 'No partition reassignment is in progress.');
  const adding = state.addingReplicas ?? [];
  const replicas = originalReplicas(state);
  let isr = state.isr.filter((r) => !adding.includes(r));
  let unclean = false;
  if (isr.length === 0) {
    const first = replicas[0];
    if (first === undefined) throw new KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, 'Invalid replica assignment: addingReplicas contains all replicas.');
    if (!ctx.uncleanLeaderElectionEnable) {
      throw new KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, 'Unable to revert the partition assignment because it would require an unclean leader election.');
    }
    isr = [first];
    unclean = true;
  }
  let leader = state.leader;
  if (!isr.includes(leader)) leader = replicas.find((r) => isr.includes(r) && (unclean || ctx.canLead(r))) ?? -1;
  const shrinks = state.replicas.some((r) => !replicas.includes(r));
  const leaderEpoch = leader !== state.leader || shrinks ? state.leaderEpoch + 1 : state.leaderEpoch;
  return { replicas, leader, leaderEpoch, isr, addingReplicas: [], removingReplicas: [] };
}

/** The completed state of a partition whose reassignment can complete now, or null (Kafka's maybeCompleteReassignment). */
export function completion(state: PartitionState, canLead: (nodeId: number) => boolean): PartitionProposal | null {
  if (!isReassigning(state)) return null;
  const removing = state.removingReplicas ?? [];
  const isr = state.isr.filter((r) => !removing.includes(r));
  const replicas = state.replicas.filter((r) => !removing.includes(r));
  if (isr.length === 0 || replicas.length === 0 || !replicas.every((r) => isr.includes(r))) return null;
  const leader = isr.includes(state.leader) && canLead(state.leader) ? state.leader : replicas.find((r) => isr.includes(r) && canLead(r));
  if (leader === undefined) return null;
  const shrinks = state.replicas.some((r) => !replicas.includes(r));
  const leaderEpoch = leader !== state.leader || shrinks ? state.leaderEpoch + 1 : state.leaderEpoch;
  return { replicas, leader, leaderEpoch, isr, addingReplicas: [], removingReplicas: [] };
}

/** Every partition of the image whose reassignment can complete (the controller's pass). */
export function planReassignmentCompletions(image: MetadataImage): PartitionChange[] {
  const canLead = (id: number): boolean => {
    const b = image.broker(id);
    return b !== undefined && b.inControlledShutdown !== true;
  };
  const out: PartitionChange[] = [];
  for (const t of image.topics()) {
    image.partitions(t.topicId).forEach((state, partition) => {
      if (state === undefined) return;
      const proposal = completion(state, canLead);
      if (proposal === null) return;
      out.push({
        topic: t.name,
        ref: { topicId: t.topicId, partition },
        expected: { leaderEpoch: state.leaderEpoch, partitionEpoch: state.partitionEpoch },
        proposal,
        reason: 'reassignment-completed',
      });
    });
  }
  return out;
}

function sameList(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
