// The compare-and-swap rule of a partition change, shared by both stores so
// they fence alike (Kafka's AlterPartition validation, reduced to what the
// store can know). Pure.
import { ErrorCode, KafkaError } from '../../broker/protocol/errors.js';
import { StalePartitionUpdateError } from './errors.js';
import { isReassigning, type PartitionProposal, type PartitionState, type TopicPartitionRef } from './records.js';

/** The state that replaces `current`, or the error that refuses the change. */
export function nextPartitionState(
  ref: TopicPartitionRef,
  current: PartitionState,
  expected: { readonly leaderEpoch: number; readonly partitionEpoch: number },
  proposal: PartitionProposal,
): PartitionState {
  const where = `${ref.topicId}-${ref.partition}`;
  if (expected.leaderEpoch !== current.leaderEpoch) {
    throw new StalePartitionUpdateError(
      ErrorCode.FENCED_LEADER_EPOCH,
      current,
      `Partition ${where}: the change is based on leader epoch ${expected.leaderEpoch}, the current one is ${current.leaderEpoch}`,
    );
  }
  if (expected.partitionEpoch !== current.partitionEpoch) {
    throw new StalePartitionUpdateError(
      ErrorCode.INVALID_UPDATE_VERSION,
      current,
      `Partition ${where}: the change is based on partition epoch ${expected.partitionEpoch}, the current one is ${current.partitionEpoch}`,
    );
  }
  checkProposal(where, proposal);
  const keepsReassignment = proposal.addingReplicas === undefined && proposal.removingReplicas === undefined;
  if (keepsReassignment && isReassigning(current) && !sameList(proposal.replicas, current.replicas)) {
    // A leader or ISR change made without knowing of the reassignment would undo it.
    throw new KafkaError(
      ErrorCode.INVALID_REQUEST,
      `Partition ${where}: replicas [${proposal.replicas.join(',')}] differ from [${current.replicas.join(',')}] while a reassignment is in progress; a reassignment change must name its adding and removing replicas`,
    );
  }
  if (proposal.leaderEpoch < current.leaderEpoch) {
    throw new KafkaError(ErrorCode.INVALID_REQUEST, `Partition ${where}: leader epoch ${proposal.leaderEpoch} is below the current ${current.leaderEpoch}`);
  }
  if (proposal.leader !== current.leader && proposal.leaderEpoch === current.leaderEpoch) {
    throw new KafkaError(ErrorCode.INVALID_REQUEST, `Partition ${where}: a new leader (${proposal.leader}) needs a leader epoch above ${current.leaderEpoch}`);
  }
  const reassignment = keepsReassignment ? current : proposal;
  return withReassignment({ ...copy(proposal), partitionEpoch: current.partitionEpoch + 1 }, reassignment.addingReplicas ?? [], reassignment.removingReplicas ?? []);
}

function withReassignment(state: PartitionState, adding: readonly number[], removing: readonly number[]): PartitionState {
  if (adding.length === 0 && removing.length === 0) return state;
  return { ...state, addingReplicas: [...adding], removingReplicas: [...removing] };
}

function sameList(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** A new partition's first state. */
export function initialPartitionState(where: string, proposal: PartitionProposal): PartitionState {
  checkProposal(where, proposal);
  if (isReassigning(proposal)) throw new KafkaError(ErrorCode.INVALID_REQUEST, `Partition ${where}: a new partition cannot start with a reassignment`);
  return { ...copy(proposal), partitionEpoch: 0 };
}

function copy(p: PartitionProposal): PartitionProposal {
  return { replicas: [...p.replicas], leader: p.leader, leaderEpoch: p.leaderEpoch, isr: [...p.isr] };
}

function checkProposal(where: string, p: PartitionProposal): void {
  if (p.replicas.length === 0) throw new KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, `Partition ${where}: no replicas`);
  if (new Set(p.replicas).size !== p.replicas.length) {
    throw new KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, `Partition ${where}: duplicate replicas in [${p.replicas.join(',')}]`);
  }
  for (const r of p.isr) {
    if (!p.replicas.includes(r)) throw new KafkaError(ErrorCode.INVALID_REQUEST, `Partition ${where}: ISR member ${r} is not a replica`);
  }
  if (p.leader !== -1 && !p.isr.includes(p.leader)) {
    throw new KafkaError(ErrorCode.INVALID_REQUEST, `Partition ${where}: leader ${p.leader} is not in the ISR [${p.isr.join(',')}]`);
  }
  if (!Number.isInteger(p.leaderEpoch) || p.leaderEpoch < 0) throw new KafkaError(ErrorCode.INVALID_REQUEST, `Partition ${where}: bad leader epoch ${p.leaderEpoch}`);
  const adding = p.addingReplicas ?? [];
  const removing = p.removingReplicas ?? [];
  for (const r of [...adding, ...removing]) {
    if (!p.replicas.includes(r)) throw new KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, `Partition ${where}: reassigned replica ${r} is not in the replicas [${p.replicas.join(',')}]`);
    if (adding.includes(r) && removing.includes(r)) throw new KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, `Partition ${where}: replica ${r} is both added and removed`);
  }
}
