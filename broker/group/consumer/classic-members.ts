// Classic-protocol members inside a KIP-848 consumer group (online migration,
// Kafka's classicGroupJoinToConsumerGroup / SyncToConsumerGroup /
// HeartbeatToConsumerGroup / LeaveToConsumerGroup). A classic member's
// JoinGroup is answered at once, without a join barrier: its subscription and
// owned partitions (from the embedded ConsumerProtocol subscription) update
// it like a heartbeat would, the server-side assignor computes the target,
// and the member reconciles towards it (revoking first, taking partitions only
// once free). The generation it is given is its member epoch; SyncGroup
// answers its assigned partitions as a ConsumerProtocol Assignment; Heartbeat
// answers REBALANCE_IN_PROGRESS whenever it has to rejoin to move on. It has a
// session timeout of its own, and must rejoin and sync within its rebalance
// timeout. Callers serialize join and leave per group (the coordinator's lock).
import { ErrorCode } from '../../protocol/errors.js';
import { joinError, syncError } from '../results.js';
import type { HeartbeatParams, JoinGroupParams, JoinGroupResult, LeaveGroupResult, LeavingMember, SyncGroupParams, SyncGroupResult } from '../types.js';
import { assignmentVersionOf, decodeClassicSubscription, encodeClassicAssignment, ownedByTopicId, type ClassicSubscription } from './classic-protocol.js';
import { newMember, type ConsumerGroup, type ConsumerMember } from './consumer-group.js';
import {
  classicJoinKey,
  classicSyncKey,
  currentAssignmentRecord,
  memberMetadataRecord,
  memberTombstones,
  type ConsumerGroupManager,
} from './consumer-group-manager.js';
import type { ConsumerGroupRecord } from './consumer-records.js';
import { reconcile } from './reconcile.js';
import { metadataHashOf, subscribedTopicIdsOf, subscribedTopicNamesOf } from './target.js';

function sameStrings(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  const s = new Set(a);
  return b.every((x) => s.has(x));
}

/** Kafka's validateConsumerGroupMember: by instance id when given, else by member id. */
function findMember(group: ConsumerGroup, memberId: string, instanceId: string | null): ConsumerMember | number {
  if (instanceId === null) return group.members.get(memberId) ?? ErrorCode.UNKNOWN_MEMBER_ID;
  const id = group.memberIdForInstance(instanceId);
  const m = id === undefined ? undefined : group.members.get(id);
  if (m === undefined) return ErrorCode.UNKNOWN_MEMBER_ID;
  if (m.memberId !== memberId) return ErrorCode.FENCED_INSTANCE_ID;
  return m;
}

/**
 * Decides whether a classic static member replacing the last member on the
 * consumer protocol downgrades the group instead (and does it, writing
 * `after` as a classic group); false to go on as a consumer group.
 */
export type ReplacementDowngrade = (before: ConsumerGroup, after: ConsumerGroup, replacedMemberId: string, subscriptionChanged: boolean) => Promise<boolean>;

export class ClassicMemberOps {
  constructor(
    private readonly cg: ConsumerGroupManager,
    private readonly replacementDowngrade: ReplacementDowngrade | null = null,
  ) {}

  /** JoinGroup to a consumer group with members (under the group's lock). */
  async join(group: ConsumerGroup, p: JoinGroupParams): Promise<JoinGroupResult> {
    const groupId = group.groupId;
    const isUnknown = p.memberId === '';
    const memberId = isUnknown ? this.cg.newMemberId() : p.memberId;
    const known = group.members.has(memberId) || (p.groupInstanceId !== null && group.memberIdForInstance(p.groupInstanceId) !== undefined);
    if (!known && group.members.size >= this.cg.config.maxSize) return joinError(memberId, ErrorCode.GROUP_MAX_SIZE_REACHED);
    if (!group.supportsClassicProtocols(p.protocolType, p.protocols.map((x) => x.name))) return joinError(memberId, ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
    if (isUnknown && p.requireKnownMemberId && p.groupInstanceId === null) {
      // KIP-394, as for classic groups: the member comes back with this id.
      return joinError(memberId, ErrorCode.MEMBER_ID_REQUIRED);
    }
    let subscription: ClassicSubscription;
    try {
      subscription = decodeClassicSubscription(p.protocols[0]!.metadata);
    } catch {
      return joinError(memberId, ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
    }

    const work = group.clone();
    const records: ConsumerGroupRecord[] = [];
    // 1. The member: new, known, or a static member taking over its instance id (with its assignment, from epoch 0).
    let member: ConsumerMember;
    let previous: ConsumerMember | null = null;
    let replaced: ConsumerMember | null = null;
    const staticId = p.groupInstanceId === null ? undefined : work.memberIdForInstance(p.groupInstanceId);
    const staticOwner = staticId === undefined ? undefined : work.members.get(staticId);
    if (staticOwner !== undefined) {
      if (!isUnknown && staticOwner.memberId !== memberId) return joinError(memberId, ErrorCode.FENCED_INSTANCE_ID);
      member = { ...staticOwner, memberId, memberEpoch: 0, previousMemberEpoch: 0 };
      previous = staticOwner;
      if (staticOwner.memberId !== memberId) replaced = staticOwner;
    } else {
      const existing = work.members.get(memberId);
      member = existing ?? newMember(memberId);
      previous = existing ?? null;
    }
    const updated: ConsumerMember = {
      ...member,
      instanceId: p.groupInstanceId ?? member.instanceId,
      rackId: subscription.rackId ?? member.rackId,
      rebalanceTimeoutMs: p.rebalanceTimeoutMs,
      serverAssignor: null,
      subscribedTopicNames: [...subscription.topics],
      subscribedTopicRegex: null,
      clientId: p.clientId,
      clientHost: p.clientHost,
      classic: { sessionTimeoutMs: p.sessionTimeoutMs, supportedProtocols: p.protocols.map((x) => ({ name: x.name, metadata: x.metadata })) },
    };
    if (replaced !== null) {
      const target = work.target.get(replaced.memberId);
      work.removeMember(replaced.memberId);
      records.push(...memberTombstones(groupId, replaced.memberId));
      if (target !== undefined) {
        work.target.set(memberId, target);
        records.push({ type: 'targetMember', groupId, memberId, value: target });
      }
    }
    records.push(memberMetadataRecord(groupId, updated));
    work.updateMember(updated);

    // 2. The group epoch moves when the subscription or the subscribed topics change.
    const topics = this.cg.topics();
    const subscriptionChanged = previous === null || previous.subscribedTopicRegex !== null || !sameStrings(previous.subscribedTopicNames, updated.subscribedTopicNames);
    const regexChanged = this.cg.refreshRegexes(work, topics, records);
    const hash = metadataHashOf(subscribedTopicNamesOf(work), topics);
    if (subscriptionChanged || regexChanged || hash !== work.metadataHash) {
      work.groupEpoch += 1;
      work.metadataHash = hash;
      records.push({ type: 'groupMetadata', groupId, value: { epoch: work.groupEpoch, metadataHash: hash } });
    }
    // 3. A newer group epoch needs a new target assignment.
    if (work.groupEpoch > work.targetEpoch) this.cg.assign(work, topics, records);
    // 4. Reconciliation, with the partitions the member says it owns.
    const current = work.members.get(memberId)!;
    const reconciled = reconcile({
      member: current,
      targetEpoch: work.targetEpoch,
      target: work.target.get(memberId) ?? new Map(),
      subscribedTopicIds: subscribedTopicIdsOf(work, current, topics),
      currentPartitionEpoch: (t, q) => work.currentPartitionEpoch(t, q),
      owned: ownedByTopicId(subscription.ownedPartitions, topics),
    });
    work.updateMember(reconciled);
    records.push(currentAssignmentRecord(groupId, reconciled));
    const answer: JoinGroupResult = {
      errorCode: ErrorCode.NONE,
      generationId: reconciled.memberEpoch,
      protocolType: 'consumer',
      protocolName: p.protocols[0]!.name,
      // No leader: the assignment is the coordinator's.
      leader: '',
      skipAssignment: false,
      memberId,
      members: [],
    };

    // 5. Kafka's downgrade when the last consumer-protocol member, a static one, is replaced by this classic member.
    if (replaced !== null && this.replacementDowngrade !== null && (await this.replacementDowngrade(group, work, replaced.memberId, subscriptionChanged))) return answer;

    await this.cg.sink.write(groupId, records);
    this.cg.groups.set(groupId, work);
    if (replaced !== null) this.cg.cancelMemberTimers(groupId, replaced.memberId);
    this.cg.timers.cancel(classicJoinKey(groupId, memberId));
    this.cg.scheduleSession(groupId, memberId);
    this.cg.scheduleFence(classicSyncKey(groupId, memberId), p.rebalanceTimeoutMs, groupId, memberId, 'classic member did not sync within its rebalance timeout');
    this.cg.log.debug({ groupId, memberId, epoch: reconciled.memberEpoch, state: reconciled.state, groupEpoch: work.groupEpoch }, 'classic member joined the consumer group');
    return answer;
  }

  /** SyncGroup of a classic member: its assigned partitions, once it caught up with the group epoch. */
  sync(group: ConsumerGroup, p: SyncGroupParams): SyncGroupResult {
    const found = findMember(group, p.memberId, p.groupInstanceId);
    if (typeof found === 'number') return syncError(found);
    const member = found;
    if (member.classic === null) return syncError(ErrorCode.UNKNOWN_MEMBER_ID);
    if (p.generationId !== member.memberEpoch) return syncError(ErrorCode.ILLEGAL_GENERATION);
    const protocolName = member.classic.supportedProtocols[0]?.name ?? '';
    if ((p.protocolType !== null && p.protocolType !== 'consumer') || (p.protocolName !== null && p.protocolName !== protocolName)) {
      return syncError(ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
    }
    if (this.mustRejoinBeforeSync(group, member)) return syncError(ErrorCode.REBALANCE_IN_PROGRESS);
    this.cg.timers.cancel(classicSyncKey(group.groupId, member.memberId));
    this.cg.scheduleSession(group.groupId, member.memberId);
    return {
      errorCode: ErrorCode.NONE,
      protocolType: 'consumer',
      protocolName,
      assignment: encodeClassicAssignment(member.assigned, this.cg.topics(), assignmentVersionOf(member.classic)),
    };
  }

  /** Heartbeat of a classic member: REBALANCE_IN_PROGRESS when it must rejoin to make progress. */
  heartbeat(group: ConsumerGroup, p: HeartbeatParams): number {
    const found = findMember(group, p.memberId, p.groupInstanceId);
    if (typeof found === 'number') return found;
    const member = found;
    if (member.classic === null) return ErrorCode.UNKNOWN_MEMBER_ID;
    if (p.generationId !== member.memberEpoch) return ErrorCode.ILLEGAL_GENERATION;
    this.cg.scheduleSession(group.groupId, member.memberId);
    // Rejoin when the group epoch moved on, when partitions are to be revoked,
    // or when the partitions it waits for are free.
    const rejoin =
      member.memberEpoch < group.groupEpoch ||
      member.state === 'unrevoked_partitions' ||
      (member.state === 'unreleased_partitions' && !group.waitingOnUnreleasedPartition(member));
    if (!rejoin) return ErrorCode.NONE;
    this.scheduleJoinTimeoutIfAbsent(group, member);
    return ErrorCode.REBALANCE_IN_PROGRESS;
  }

  /** LeaveGroup for classic members of a consumer group (under the group's lock). */
  async leave(group: ConsumerGroup, leaving: readonly LeavingMember[]): Promise<LeaveGroupResult> {
    const groupId = group.groupId;
    const work = group.clone();
    const records: ConsumerGroupRecord[] = [];
    const removed: string[] = [];
    const members: LeaveGroupResult['members'] = [];
    for (const l of leaving) {
      let errorCode: number = ErrorCode.NONE;
      let member: ConsumerMember | undefined;
      if (l.groupInstanceId === null) {
        member = work.members.get(l.memberId);
        if (member === undefined) errorCode = ErrorCode.UNKNOWN_MEMBER_ID;
      } else {
        const id = work.memberIdForInstance(l.groupInstanceId);
        member = id === undefined ? undefined : work.members.get(id);
        if (member === undefined) errorCode = ErrorCode.UNKNOWN_MEMBER_ID;
        // An empty member id is an administrative removal by instance id.
        else if (l.memberId !== '' && member.memberId !== l.memberId) errorCode = ErrorCode.FENCED_INSTANCE_ID;
      }
      if (errorCode === ErrorCode.NONE && member !== undefined && member.classic === null) errorCode = ErrorCode.UNKNOWN_MEMBER_ID;
      if (errorCode === ErrorCode.NONE && member !== undefined) {
        work.removeMember(member.memberId);
        records.push(...memberTombstones(groupId, member.memberId));
        removed.push(member.memberId);
      }
      members.push({ memberId: member?.memberId ?? l.memberId, groupInstanceId: l.groupInstanceId, errorCode });
    }
    if (removed.length > 0) {
      const topics = this.cg.topics();
      this.cg.refreshRegexes(work, topics, records);
      work.groupEpoch += 1;
      work.metadataHash = metadataHashOf(subscribedTopicNamesOf(work), topics);
      records.push({ type: 'groupMetadata', groupId, value: { epoch: work.groupEpoch, metadataHash: work.metadataHash } });
      await this.cg.sink.write(groupId, records);
      this.cg.groups.set(groupId, work);
      for (const id of removed) this.cg.cancelMemberTimers(groupId, id);
    }
    return { errorCode: ErrorCode.NONE, members };
  }

  /** Kafka's throwIfRebalanceInProgress: a newer group epoch means rejoin first, unless partitions are still being revoked. */
  private mustRejoinBeforeSync(group: ConsumerGroup, member: ConsumerMember): boolean {
    if (group.groupEpoch <= member.memberEpoch || member.state === 'unrevoked_partitions') return false;
    this.scheduleJoinTimeoutIfAbsent(group, member);
    return true;
  }

  private scheduleJoinTimeoutIfAbsent(group: ConsumerGroup, member: ConsumerMember): void {
    const key = classicJoinKey(group.groupId, member.memberId);
    if (this.cg.timers.has(key)) return;
    this.cg.scheduleFence(key, member.rebalanceTimeoutMs, group.groupId, member.memberId, 'classic member did not rejoin within its rebalance timeout');
  }
}
