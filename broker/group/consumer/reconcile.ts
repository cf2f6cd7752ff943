// A member's reconciliation towards its target assignment (Kafka's
// CurrentAssignmentBuilder). The rule that keeps one owner per partition: a
// member gives up partitions first (UNREVOKED_PARTITIONS, at its current
// epoch, until a heartbeat's owned partitions no longer list them), and only
// takes a partition once no other member holds it (UNRELEASED_PARTITIONS,
// retried on each heartbeat). Pure.
import type { Assignment, ConsumerMember, MemberState, Target } from './consumer-group.js';

export interface ReconcileInput {
  readonly member: ConsumerMember;
  readonly targetEpoch: number;
  readonly target: Target;
  /** Topic ids the member subscribes to now (by name or through its resolved regex). */
  readonly subscribedTopicIds: ReadonlySet<string>;
  /** The epoch of the member holding a partition, -1 when free. */
  readonly currentPartitionEpoch: (topicId: string, partition: number) => number;
  /** topic id -> partitions, from the heartbeat; null when the member did not send them. */
  readonly owned: ReadonlyMap<string, readonly number[]> | null;
}

/** The member's next state, or the same object when it cannot move on. */
export function reconcile(input: ReconcileInput): ConsumerMember {
  const m = input.member;
  switch (m.state) {
    case 'stable':
      if (m.memberEpoch !== input.targetEpoch) return computeNext(input, m.memberEpoch, m.assigned);
      return dropUnsubscribed(input);
    case 'unrevoked_partitions':
      if (ownsAny(input.owned, m.pendingRevocation)) return dropUnsubscribed(input);
      return computeNext(input, m.memberEpoch, m.assigned);
    case 'unreleased_partitions':
      return computeNext(input, m.memberEpoch, m.assigned);
    case 'unknown':
      return computeNext(input, input.targetEpoch, m.assigned);
  }
}

/** Whether the member still owns one of `a`; without owned partitions it is assumed to. */
export function ownsAny(owned: ReadonlyMap<string, readonly number[]> | null, a: Assignment): boolean {
  if (owned === null) return true;
  for (const [topicId, ps] of owned) {
    const pending = a.get(topicId);
    if (pending === undefined) continue;
    for (const p of ps) if (pending.has(p)) return true;
  }
  return false;
}

function mutable(a: Assignment): Map<string, Map<number, number>> {
  const out = new Map<string, Map<number, number>>();
  for (const [t, ps] of a) out.set(t, new Map(ps));
  return out;
}

function withState(
  m: ConsumerMember,
  state: MemberState,
  epoch: number,
  assigned: Assignment,
  pendingRevocation: Assignment,
): ConsumerMember {
  const epochChanged = epoch !== m.memberEpoch;
  return {
    ...m,
    state,
    memberEpoch: epoch,
    previousMemberEpoch: epochChanged ? m.memberEpoch : m.previousMemberEpoch,
    assigned,
    pendingRevocation,
  };
}

/**
 * A stable member whose subscription dropped topics gives them back without a
 * new target (Kafka's updateCurrentAssignment): they move to pending revocation.
 */
function dropUnsubscribed(input: ReconcileInput): ConsumerMember {
  const m = input.member;
  let changed = false;
  const assigned = mutable(m.assigned);
  const pending = mutable(m.pendingRevocation);
  for (const [topicId, ps] of m.assigned) {
    if (input.subscribedTopicIds.has(topicId)) continue;
    changed = true;
    assigned.delete(topicId);
    const into = pending.get(topicId) ?? new Map<number, number>();
    for (const [p, e] of ps) into.set(p, e);
    pending.set(topicId, into);
  }
  if (!changed) return m;
  if (pending.size > 0 && ownsAny(input.owned, pending)) {
    return withState(m, 'unrevoked_partitions', m.memberEpoch, assigned, pending);
  }
  return withState(m, m.state, m.memberEpoch, assigned, m.pendingRevocation);
}

function computeNext(input: ReconcileInput, memberEpoch: number, current: Assignment): ConsumerMember {
  const m = input.member;
  let hasUnreleased = false;
  const newAssigned = new Map<string, Map<number, number>>();
  const newPending = new Map<string, Map<number, number>>();
  const toAssign = new Map<string, number[]>();
  const topicIds = new Set([...input.target.keys(), ...current.keys()]);
  for (const topicId of topicIds) {
    const target = input.subscribedTopicIds.has(topicId) ? (input.target.get(topicId) ?? new Set<number>()) : new Set<number>();
    const cur = current.get(topicId) ?? new Map<number, number>();
    const kept = new Map<number, number>();
    const revoke = new Map<number, number>();
    for (const [p, e] of cur) (target.has(p) ? kept : revoke).set(p, e);
    const ownPending = m.pendingRevocation.get(topicId);
    const assign: number[] = [];
    for (const p of target) {
      if (kept.has(p)) continue;
      // A partition this member itself still has pending revocation is not someone else's.
      if (input.currentPartitionEpoch(topicId, p) !== -1 && ownPending?.has(p) !== true) {
        hasUnreleased = true;
        continue;
      }
      assign.push(p);
    }
    if (kept.size > 0) newAssigned.set(topicId, kept);
    if (revoke.size > 0) newPending.set(topicId, revoke);
    if (assign.length > 0) toAssign.set(topicId, assign);
  }
  if (newPending.size > 0 && ownsAny(input.owned, newPending)) {
    return withState(m, 'unrevoked_partitions', memberEpoch, newAssigned, newPending);
  }
  for (const [topicId, ps] of toAssign) {
    const into = newAssigned.get(topicId) ?? new Map<number, number>();
    for (const p of ps) into.set(p, input.targetEpoch);
    newAssigned.set(topicId, into);
  }
  const state: MemberState = hasUnreleased ? 'unreleased_partitions' : 'stable';
  return withState(m, state, input.targetEpoch, newAssigned, new Map());
}
