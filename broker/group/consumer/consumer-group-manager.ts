// The KIP-848 consumer groups of one coordinator: ConsumerGroupHeartbeat
// (join, heartbeat, leave, static membership), the target assignment by the
// server-side assignor, each member's reconciliation, the session and
// rebalance timeouts, and the replay of the groups' records at start-up.
//
// Each heartbeat works on a copy of its group: the records the change needs
// are appended to `__consumer_offsets` first, and only then does the copy
// replace the group, so what a client is told is always what a restart
// rebuilds. Callers serialize calls per group (the coordinator's lock).
import type { Clock } from '../../common/clock.js';
import type { Logger } from '../../common/logger.js';
import { ErrorCode } from '../../protocol/errors.js';
import type { KeyedTimers } from '../keyed-timers.js';
import { assignors as assignorTable } from './assignors.js';
import type { ConsumerGroupConfig } from './config.js';
import {
  ConsumerGroup,
  EMPTY_ASSIGNMENT,
  LEAVE_GROUP_MEMBER_EPOCH,
  LEAVE_GROUP_STATIC_MEMBER_EPOCH,
  newMember,
  partitionsOf,
  sameTarget,
  type Assignment,
  type ConsumerMember,
  type Target,
} from './consumer-group.js';
import type { ConsumerGroupRecord } from './consumer-records.js';
import type { OffsetsTopicRecord } from '../offsets-topic.js';
import { sameClassicMetadata } from './classic-protocol.js';
import { reconcile } from './reconcile.js';
import { compileSubscriptionRegex, resolveRegex, sameTopics } from './regex.js';
import type { ConsumerHeartbeatParams, ConsumerHeartbeatResult, ConsumerTopicsView, TopicPartitionsParam } from './types.js';
import { computeTargetAssignment, memberTopicNames, metadataHashOf, subscribedTopicIdsOf, subscribedTopicNamesOf } from './target.js';

export interface ConsumerRecordSink {
  /**
   * Appends the group's records to its __consumer_offsets partition, after
   * `prefix` (records already encoded: a conversion's classic tombstone) in
   * the same append; resolves once durable.
   */
  write(groupId: string, records: readonly ConsumerGroupRecord[], prefix?: readonly OffsetsTopicRecord[]): Promise<void>;
  /** Runs `fn` under the group's lock (timer expiries). */
  locked(groupId: string, fn: () => Promise<void>): Promise<void>;
}

export interface ConsumerGroupManagerOptions {
  readonly config: ConsumerGroupConfig;
  readonly clock: Clock;
  readonly timers: KeyedTimers;
  readonly sink: ConsumerRecordSink;
  readonly topics: () => ConsumerTopicsView;
  readonly newMemberId: () => string;
  readonly log: Logger;
}

const sessionKey = (groupId: string, memberId: string): string => `cg-session\u0000${groupId}\u0000${memberId}`;
const rebalanceKey = (groupId: string, memberId: string): string => `cg-rebalance\u0000${groupId}\u0000${memberId}`;
/** A classic member told to rejoin must do so within its rebalance timeout. */
export const classicJoinKey = (groupId: string, memberId: string): string => `cg-join\u0000${groupId}\u0000${memberId}`;
/** A classic member that got its JoinGroup answer must send SyncGroup within its rebalance timeout. */
export const classicSyncKey = (groupId: string, memberId: string): string => `cg-sync\u0000${groupId}\u0000${memberId}`;

/** A group converted from a classic group, with the records that create it, for the heartbeat that upgrades it. */
export interface ConvertedGroup {
  readonly group: ConsumerGroup;
  readonly records: readonly ConsumerGroupRecord[];
  /** Written first, in the same append: the classic group's tombstone. */
  readonly prefix: readonly OffsetsTopicRecord[];
}

/** Decides, when `memberId` is fenced, whether the group downgrades to a classic group instead (and does it); false to fence as usual. */
export type DowngradeHook = (group: ConsumerGroup, memberId: string) => Promise<boolean>;

function failure(errorCode: number, errorMessage: string | null = null): ConsumerHeartbeatResult {
  return { errorCode, errorMessage, memberId: null, memberEpoch: 0, heartbeatIntervalMs: 0, assignment: null };
}

function ownedMap(tps: readonly TopicPartitionsParam[] | null): Map<string, readonly number[]> | null {
  if (tps === null) return null;
  const m = new Map<string, number[]>();
  for (const tp of tps) m.set(tp.topicId, [...(m.get(tp.topicId) ?? []), ...tp.partitions]);
  return m;
}

function isSubset(owned: ReadonlyMap<string, readonly number[]> | null, assigned: Assignment): boolean {
  if (owned === null) return false;
  for (const [topicId, ps] of owned) {
    const a = assigned.get(topicId);
    for (const p of ps) if (a?.has(p) !== true) return false;
  }
  return true;
}

function assignmentOut(a: Assignment): TopicPartitionsParam[] {
  return [...a].map(([topicId, ps]) => ({ topicId, partitions: [...ps.keys()].sort((x, y) => x - y) }));
}

function sameStrings(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  const s = new Set(a);
  return b.every((x) => s.has(x));
}

function metadataChanged(a: ConsumerMember, b: ConsumerMember): boolean {
  return (
    a.instanceId !== b.instanceId ||
    a.rackId !== b.rackId ||
    a.clientId !== b.clientId ||
    a.clientHost !== b.clientHost ||
    a.subscribedTopicRegex !== b.subscribedTopicRegex ||
    a.rebalanceTimeoutMs !== b.rebalanceTimeoutMs ||
    a.serverAssignor !== b.serverAssignor ||
    !sameClassicMetadata(a.classic, b.classic) ||
    !sameStrings(a.subscribedTopicNames, b.subscribedTopicNames)
  );
}

function assignmentChanged(a: ConsumerMember, b: ConsumerMember): boolean {
  return (
    a.memberEpoch !== b.memberEpoch ||
    a.previousMemberEpoch !== b.previousMemberEpoch ||
    a.state !== b.state ||
    a.assigned !== b.assigned ||
    a.pendingRevocation !== b.pendingRevocation
  );
}

export const memberMetadataRecord = (groupId: string, m: ConsumerMember): ConsumerGroupRecord => ({
  type: 'memberMetadata',
  groupId,
  memberId: m.memberId,
  value: {
    instanceId: m.instanceId,
    rackId: m.rackId,
    clientId: m.clientId,
    clientHost: m.clientHost,
    subscribedTopicNames: m.subscribedTopicNames,
    subscribedTopicRegex: m.subscribedTopicRegex,
    rebalanceTimeoutMs: m.rebalanceTimeoutMs,
    serverAssignor: m.serverAssignor,
    classic: m.classic,
  },
});

export const currentAssignmentRecord = (groupId: string, m: ConsumerMember): ConsumerGroupRecord => ({
  type: 'currentAssignment',
  groupId,
  memberId: m.memberId,
  value: { memberEpoch: m.memberEpoch, previousMemberEpoch: m.previousMemberEpoch, state: m.state, assigned: m.assigned, pendingRevocation: m.pendingRevocation },
});

/** The tombstones that remove a member, in Kafka's order. */
export function memberTombstones(groupId: string, memberId: string): ConsumerGroupRecord[] {
  return [
    { type: 'currentAssignment', groupId, memberId, value: null },
    { type: 'targetMember', groupId, memberId, value: null },
    { type: 'memberMetadata', groupId, memberId, value: null },
  ];
}

export class ConsumerGroupManager {
  readonly groups = new Map<string, ConsumerGroup>();
  readonly config: ConsumerGroupConfig;
  readonly clock: Clock;
  readonly timers: KeyedTimers;
  readonly sink: ConsumerRecordSink;
  readonly topics: () => ConsumerTopicsView;
  readonly newMemberId: () => string;
  readonly log: Logger;
  /** Set by the coordinator: the online downgrade check of a fenced member (group.consumer.migration.policy). */
  downgrade: DowngradeHook | null = null;

  constructor(o: ConsumerGroupManagerOptions) {
    this.config = o.config;
    this.clock = o.clock;
    this.timers = o.timers;
    this.sink = o.sink;
    this.topics = o.topics;
    this.newMemberId = o.newMemberId;
    this.log = o.log;
  }

  get heartbeatIntervalMs(): number {
    return this.config.heartbeatIntervalMs;
  }

  /** Kafka's throwIfConsumerGroupHeartbeatRequestIsInvalid, plus the assignor and regex checks. */
  validate(p: ConsumerHeartbeatParams): ConsumerHeartbeatResult | null {
    const invalid = (message: string): ConsumerHeartbeatResult => failure(ErrorCode.INVALID_REQUEST, message);
    if (p.groupId === '') return invalid("GroupId can't be empty.");
    if (p.apiVersion >= 1 && p.memberId === '') return invalid("MemberId can't be empty.");
    if (p.instanceId !== null && p.instanceId === '') return invalid("InstanceId can't be empty.");
    if (p.rackId !== null && p.rackId === '') return invalid("RackId can't be empty.");
    if (p.memberEpoch === 0) {
      if (p.rebalanceTimeoutMs === -1) return invalid('RebalanceTimeoutMs must be provided in first request.');
      if (p.topicPartitions === null || p.topicPartitions.length > 0) return invalid('TopicPartitions must be empty when (re-)joining.');
      if (p.subscribedTopicNames === null && p.subscribedTopicRegex === null) {
        return invalid('SubscribedTopicNames or SubscribedTopicRegex must be set in first request.');
      }
    } else if (p.memberEpoch === LEAVE_GROUP_STATIC_MEMBER_EPOCH) {
      if (p.instanceId === null) return invalid("InstanceId can't be null.");
    } else if (p.memberEpoch < LEAVE_GROUP_STATIC_MEMBER_EPOCH) {
      return invalid(`MemberEpoch is invalid: ${p.memberEpoch}.`);
    }
    if (p.serverAssignor !== null && !this.config.assignors.includes(p.serverAssignor)) {
      return failure(ErrorCode.UNSUPPORTED_ASSIGNOR, `ServerAssignor ${p.serverAssignor} is not supported. Supported assignors: ${this.config.assignors.join(', ')}.`);
    }
    if (p.subscribedTopicRegex !== null && p.subscribedTopicRegex !== '') {
      const compiled = compileSubscriptionRegex(p.subscribedTopicRegex);
      if (typeof compiled === 'string') return failure(ErrorCode.INVALID_REGULAR_EXPRESSION, compiled);
    }
    return null;
  }

  /** One ConsumerGroupHeartbeat, already validated, under the group's lock. */
  async heartbeat(p: ConsumerHeartbeatParams, converted?: ConvertedGroup): Promise<ConsumerHeartbeatResult> {
    if (p.memberEpoch === LEAVE_GROUP_MEMBER_EPOCH || p.memberEpoch === LEAVE_GROUP_STATIC_MEMBER_EPOCH) return this.leave(p);
    const existingGroup = converted?.group ?? this.groups.get(p.groupId);
    if (existingGroup === undefined && p.memberEpoch !== 0) {
      return failure(ErrorCode.GROUP_ID_NOT_FOUND, `Consumer group ${p.groupId} not found.`);
    }
    const work = existingGroup?.clone() ?? new ConsumerGroup(p.groupId);
    const records: ConsumerGroupRecord[] = [...(converted?.records ?? [])];
    const owned = ownedMap(p.topicPartitions);
    const memberId = p.memberId === '' ? this.newMemberId() : p.memberId;

    // 1. The member: new, rejoining, a static member taking over its instance id, or known.
    let member: ConsumerMember;
    let isNew = false;
    let replaced: ConsumerMember | null = null;
    const staticId = p.instanceId === null ? undefined : work.memberIdForInstance(p.instanceId);
    const staticOwner = staticId === undefined ? undefined : work.members.get(staticId);
    if (p.memberEpoch === 0) {
      if (staticOwner !== undefined && staticOwner.memberId !== memberId) {
        if (staticOwner.memberEpoch !== LEAVE_GROUP_STATIC_MEMBER_EPOCH) {
          return failure(ErrorCode.UNRELEASED_INSTANCE_ID, `Static member ${staticOwner.memberId} with instance id ${p.instanceId ?? ''} is not released yet.`);
        }
        replaced = staticOwner;
        member = { ...staticOwner, memberId, memberEpoch: 0, previousMemberEpoch: 0 };
      } else {
        const known = work.members.get(memberId);
        if (known === undefined) {
          if (work.members.size >= this.config.maxSize) {
            return failure(ErrorCode.GROUP_MAX_SIZE_REACHED, `The consumer group has reached its maximum capacity of ${this.config.maxSize} members.`);
          }
          member = newMember(memberId);
          isNew = true;
        } else {
          // A rejoin owns nothing (its request said so): it starts again from epoch 0.
          member = { ...known, memberEpoch: 0, previousMemberEpoch: 0, state: 'stable', assigned: EMPTY_ASSIGNMENT, pendingRevocation: EMPTY_ASSIGNMENT };
        }
      }
    } else {
      const known = work.members.get(memberId);
      if (p.instanceId !== null) {
        if (staticOwner === undefined) return failure(ErrorCode.UNKNOWN_MEMBER_ID, `Instance id ${p.instanceId} is unknown.`);
        if (staticOwner.memberId !== memberId) return failure(ErrorCode.FENCED_INSTANCE_ID, `Instance id ${p.instanceId} is in use by another member.`);
      }
      if (known === undefined) return failure(ErrorCode.UNKNOWN_MEMBER_ID, `Member ${memberId} is not a member of group ${p.groupId}.`);
      if (p.memberEpoch > known.memberEpoch) {
        return failure(ErrorCode.FENCED_MEMBER_EPOCH, `The consumer group member has a greater member epoch (${p.memberEpoch}) than the one known by the group coordinator (${known.memberEpoch}). The member must abandon all its partitions and rejoin.`);
      }
      if (p.memberEpoch < known.memberEpoch && (p.memberEpoch !== known.previousMemberEpoch || !isSubset(owned, known.assigned))) {
        return failure(ErrorCode.FENCED_MEMBER_EPOCH, `The consumer group member has a smaller member epoch (${p.memberEpoch}) than the one known by the group coordinator (${known.memberEpoch}). The member must abandon all its partitions and rejoin.`);
      }
      member = known;
    }

    // 2. What the request changes.
    const regex = p.subscribedTopicRegex === null ? member.subscribedTopicRegex : p.subscribedTopicRegex === '' ? null : p.subscribedTopicRegex;
    const updated: ConsumerMember = {
      ...member,
      instanceId: p.instanceId ?? member.instanceId,
      rackId: p.rackId ?? member.rackId,
      clientId: p.clientId,
      clientHost: p.clientHost,
      rebalanceTimeoutMs: p.rebalanceTimeoutMs === -1 ? member.rebalanceTimeoutMs : p.rebalanceTimeoutMs,
      serverAssignor: p.serverAssignor ?? member.serverAssignor,
      subscribedTopicNames: p.subscribedTopicNames === null ? member.subscribedTopicNames : [...p.subscribedTopicNames],
      subscribedTopicRegex: regex,
    };
    const previous = replaced ?? (isNew ? null : member);
    const subscriptionChanged =
      previous === null || previous.subscribedTopicRegex !== updated.subscribedTopicRegex || !sameStrings(previous.subscribedTopicNames, updated.subscribedTopicNames);
    if (replaced !== null) {
      const target = work.target.get(replaced.memberId);
      work.removeMember(replaced.memberId);
      records.push(...memberTombstones(p.groupId, replaced.memberId));
      if (target !== undefined) {
        work.target.set(memberId, target);
        records.push({ type: 'targetMember', groupId: p.groupId, memberId, value: target });
      }
    }
    if (previous === null || replaced !== null || metadataChanged(previous, updated)) records.push(memberMetadataRecord(p.groupId, updated));
    work.updateMember(updated);

    // 3. The group epoch moves when a subscription or the subscribed topics change.
    const topics = this.topics();
    const regexChanged = this.refreshRegexes(work, topics, records);
    const hash = metadataHashOf(subscribedTopicNamesOf(work), topics);
    if (subscriptionChanged || regexChanged || hash !== work.metadataHash) {
      work.groupEpoch += 1;
      work.metadataHash = hash;
      records.push({ type: 'groupMetadata', groupId: p.groupId, value: { epoch: work.groupEpoch, metadataHash: hash } });
    }

    // 4. A newer group epoch needs a new target assignment.
    if (work.groupEpoch > work.targetEpoch) this.assign(work, topics, records);

    // 5. The member's reconciliation towards its target.
    const current = work.members.get(memberId)!;
    const reconciled = reconcile({
      member: current,
      targetEpoch: work.targetEpoch,
      target: work.target.get(memberId) ?? new Map(),
      subscribedTopicIds: subscribedTopicIdsOf(work, current, topics),
      currentPartitionEpoch: (t, q) => work.currentPartitionEpoch(t, q),
      owned,
    });
    if (reconciled !== current || previous === null || replaced !== null || p.memberEpoch === 0) {
      work.updateMember(reconciled);
      records.push(currentAssignmentRecord(p.groupId, reconciled));
    }

    try {
      await this.sink.write(p.groupId, records, converted?.prefix);
    } catch (err) {
      this.log.warn({ err, groupId: p.groupId }, 'failed to persist consumer group heartbeat');
      throw err;
    }
    this.groups.set(p.groupId, work);
    if (converted !== undefined) {
      // The classic members now heartbeat the consumer group, each within its own session timeout.
      for (const id of converted.group.members.keys()) if (id !== memberId) this.scheduleSession(p.groupId, id);
    }
    if (reconciled.memberEpoch !== member.memberEpoch || reconciled.state !== member.state || records.length > 0) {
      this.log.debug(
        { groupId: p.groupId, memberId, epoch: reconciled.memberEpoch, state: reconciled.state, groupEpoch: work.groupEpoch, sent: p.memberEpoch, owned: p.topicPartitions?.length ?? null },
        'consumer group member updated',
      );
    }
    if (replaced !== null) this.cancelMemberTimers(p.groupId, replaced.memberId);
    this.scheduleSession(p.groupId, memberId);
    this.trackRebalanceTimeout(p.groupId, member, reconciled);
    const sendAssignment = p.memberEpoch === 0 || p.topicPartitions !== null || !sameTarget(partitionsOf(member.assigned), partitionsOf(reconciled.assigned));
    return {
      errorCode: ErrorCode.NONE,
      errorMessage: null,
      memberId,
      memberEpoch: reconciled.memberEpoch,
      heartbeatIntervalMs: this.config.heartbeatIntervalMs,
      assignment: sendAssignment ? assignmentOut(reconciled.assigned) : null,
    };
  }

  /** Resolves every regex in use; writes what changed and drops the unused. Returns whether any resolution changed. */
  refreshRegexes(work: ConsumerGroup, topics: ConsumerTopicsView, records: ConsumerGroupRecord[]): boolean {
    const inUse = new Set<string>();
    for (const m of work.members.values()) if (m.subscribedTopicRegex !== null) inUse.add(m.subscribedTopicRegex);
    let changed = false;
    for (const regex of inUse) {
      const matched = resolveRegex(regex, topics);
      const before = work.resolvedRegexes.get(regex);
      if (before !== undefined && sameTopics(before.topics, matched)) continue;
      const resolved = { topics: matched, version: (before?.version ?? 0n) + 1n, timestampMs: this.clock.now() };
      work.resolvedRegexes.set(regex, resolved);
      records.push({ type: 'regex', groupId: work.groupId, regex, value: resolved });
      changed = true;
    }
    for (const regex of [...work.resolvedRegexes.keys()]) {
      if (inUse.has(regex)) continue;
      work.resolvedRegexes.delete(regex);
      records.push({ type: 'regex', groupId: work.groupId, regex, value: null });
    }
    return changed;
  }

  /** The preferred assignor: the one most members asked for, else the first configured. */
  assignorOf(group: ConsumerGroup): string {
    const counts = new Map<string, number>();
    for (const m of group.members.values()) if (m.serverAssignor !== null) counts.set(m.serverAssignor, (counts.get(m.serverAssignor) ?? 0) + 1);
    let best: string | null = null;
    for (const [name, n] of counts) if (best === null || n > (counts.get(best) ?? 0)) best = name;
    return best ?? this.config.assignors[0] ?? 'uniform';
  }

  assign(work: ConsumerGroup, topics: ConsumerTopicsView, records: ConsumerGroupRecord[]): void {
    const name = this.assignorOf(work);
    const assignor = assignorTable.get(name) ?? assignorTable.get('uniform')!;
    const next = computeTargetAssignment(work, topics, assignor);
    for (const [memberId, target] of next) {
      const before = work.target.get(memberId);
      if (before !== undefined && sameTarget(before, target)) continue;
      work.target.set(memberId, target);
      records.push({ type: 'targetMember', groupId: work.groupId, memberId, value: target });
    }
    work.targetEpoch = work.groupEpoch;
    records.push({ type: 'targetMetadata', groupId: work.groupId, value: { assignmentEpoch: work.targetEpoch, timestampMs: this.clock.now() } });
  }

  /** Epoch -1 (leave) or -2 (a static member leaving for now, keeping its partitions until its session ends). */
  private async leave(p: ConsumerHeartbeatParams): Promise<ConsumerHeartbeatResult> {
    const group = this.groups.get(p.groupId);
    if (group === undefined) return failure(ErrorCode.GROUP_ID_NOT_FOUND, `Consumer group ${p.groupId} not found.`);
    let member: ConsumerMember | undefined;
    if (p.instanceId !== null) {
      const id = group.memberIdForInstance(p.instanceId);
      member = id === undefined ? undefined : group.members.get(id);
      if (member === undefined) return failure(ErrorCode.UNKNOWN_MEMBER_ID, `Instance id ${p.instanceId} is unknown.`);
      if (member.memberId !== p.memberId) return failure(ErrorCode.FENCED_INSTANCE_ID, `Instance id ${p.instanceId} is in use by another member.`);
    } else {
      member = group.members.get(p.memberId);
      if (member === undefined) return failure(ErrorCode.UNKNOWN_MEMBER_ID, `Member ${p.memberId} is not a member of group ${p.groupId}.`);
    }
    const done: ConsumerHeartbeatResult = { errorCode: ErrorCode.NONE, errorMessage: null, memberId: member.memberId, memberEpoch: p.memberEpoch, heartbeatIntervalMs: 0, assignment: null };
    if (p.memberEpoch === LEAVE_GROUP_STATIC_MEMBER_EPOCH) {
      const work = group.clone();
      // Kept, with its partitions at assignment epoch 0, for the instance that comes back.
      const kept = new Map<string, Map<number, number>>();
      for (const [t, ps] of member.assigned) kept.set(t, new Map([...ps.keys()].map((q) => [q, 0])));
      const left: ConsumerMember = { ...member, memberEpoch: LEAVE_GROUP_STATIC_MEMBER_EPOCH, previousMemberEpoch: member.memberEpoch, state: 'stable', assigned: kept, pendingRevocation: EMPTY_ASSIGNMENT };
      work.updateMember(left);
      await this.sink.write(p.groupId, [currentAssignmentRecord(p.groupId, left)]);
      this.groups.set(p.groupId, work);
      this.timers.cancel(rebalanceKey(p.groupId, member.memberId));
      this.scheduleSession(p.groupId, member.memberId);
      return done;
    }
    await this.fenceMember(p.groupId, member.memberId);
    return done;
  }

  /**
   * Fences a member that left, or whose session, rebalance, join or sync
   * timeout expired: the group downgrades to a classic group when it was the
   * last member on the consumer protocol and the policy allows, else the
   * member is removed.
   */
  async fenceMember(groupId: string, memberId: string): Promise<void> {
    const group = this.groups.get(groupId);
    if (group?.members.has(memberId) !== true) return;
    if (this.downgrade !== null && (await this.downgrade(group, memberId))) return;
    await this.removeMembers(groupId, [memberId]);
  }

  /** Fences members: tombstones their records, frees their partitions and bumps the group epoch. */
  async removeMembers(groupId: string, memberIds: readonly string[]): Promise<void> {
    const group = this.groups.get(groupId);
    if (group === undefined) return;
    const work = group.clone();
    const records: ConsumerGroupRecord[] = [];
    for (const id of memberIds) {
      if (work.removeMember(id) === undefined) continue;
      records.push(...memberTombstones(groupId, id));
    }
    if (records.length === 0) return;
    const topics = this.topics();
    this.refreshRegexes(work, topics, records);
    work.groupEpoch += 1;
    work.metadataHash = metadataHashOf(subscribedTopicNamesOf(work), topics);
    records.push({ type: 'groupMetadata', groupId, value: { epoch: work.groupEpoch, metadataHash: work.metadataHash } });
    await this.sink.write(groupId, records);
    this.groups.set(groupId, work);
    for (const id of memberIds) this.cancelMemberTimers(groupId, id);
  }

  /** The member's session: group.consumer.session.timeout.ms, or the session timeout a classic member joined with. */
  scheduleSession(groupId: string, memberId: string): void {
    const classic = this.groups.get(groupId)?.members.get(memberId)?.classic ?? null;
    const timeoutMs = classic?.sessionTimeoutMs ?? this.config.sessionTimeoutMs;
    this.scheduleFence(sessionKey(groupId, memberId), timeoutMs, groupId, memberId, 'consumer group member session expired');
  }

  /** Runs `fenceMember` after `delayMs` unless the key is scheduled again or cancelled first. */
  scheduleFence(key: string, delayMs: number, groupId: string, memberId: string, reason: string): void {
    this.timers.schedule(key, delayMs, () => {
      void this.sink.locked(groupId, async () => {
        if (this.groups.get(groupId)?.members.has(memberId) !== true) return;
        this.log.info({ groupId, memberId }, reason);
        await this.fenceMember(groupId, memberId).catch((err: unknown) => this.log.warn({ err, groupId, memberId }, 'failed to fence member'));
      });
    });
  }

  /** A member asked to revoke has its rebalance timeout to do it, from the moment it was asked. */
  private trackRebalanceTimeout(groupId: string, before: ConsumerMember, after: ConsumerMember): void {
    const key = rebalanceKey(groupId, after.memberId);
    // Classic members have join and sync timeouts instead.
    if (after.state !== 'unrevoked_partitions' || after.classic !== null) {
      this.timers.cancel(key);
      return;
    }
    if (before.state === 'unrevoked_partitions' && before.memberEpoch === after.memberEpoch && this.timers.has(key)) return;
    const epoch = after.memberEpoch;
    this.timers.schedule(key, after.rebalanceTimeoutMs, () => {
      void this.sink.locked(groupId, async () => {
        const m = this.groups.get(groupId)?.members.get(after.memberId);
        if (m === undefined || m.state !== 'unrevoked_partitions' || m.memberEpoch !== epoch) return;
        this.log.info({ groupId, memberId: m.memberId }, 'consumer group member did not revoke within its rebalance timeout');
        await this.fenceMember(groupId, m.memberId).catch((err: unknown) => this.log.warn({ err, groupId }, 'failed to fence member'));
      });
    });
  }

  cancelMemberTimers(groupId: string, memberId: string): void {
    this.timers.cancel(sessionKey(groupId, memberId));
    this.timers.cancel(rebalanceKey(groupId, memberId));
    this.timers.cancel(classicJoinKey(groupId, memberId));
    this.timers.cancel(classicSyncKey(groupId, memberId));
  }

  /** After the replay: every loaded member gets a full session to come back, as in Kafka. */
  startLoadedGroups(which: (groupId: string) => boolean = () => true): void {
    for (const g of this.groups.values()) if (which(g.groupId)) for (const id of g.members.keys()) this.scheduleSession(g.groupId, id);
  }

  /** Drops a group from memory and its timers (DeleteGroups, conversion); the caller writes the tombstones. */
  forget(groupId: string): void {
    const g = this.groups.get(groupId);
    if (g === undefined) return;
    for (const id of g.members.keys()) this.cancelMemberTimers(groupId, id);
    g.dead = true;
    this.groups.delete(groupId);
  }

  /** The tombstones that delete an (empty) group: its regexes, target metadata and group metadata. */
  groupTombstones(groupId: string): ConsumerGroupRecord[] {
    const g = this.groups.get(groupId);
    const records: ConsumerGroupRecord[] = [];
    if (g !== undefined) {
      for (const id of g.members.keys()) records.push(...memberTombstones(groupId, id));
      for (const regex of g.resolvedRegexes.keys()) records.push({ type: 'regex', groupId, regex, value: null });
    }
    records.push({ type: 'targetMetadata', groupId, value: null }, { type: 'groupMetadata', groupId, value: null });
    return records;
  }

  // ================================================================ replay

  replay(r: ConsumerGroupRecord): void {
    if (r.type === 'partitionMetadata') return;
    let g = this.groups.get(r.groupId);
    if (g === undefined) {
      // A tombstone of a group we do not hold changes nothing.
      if (r.value === null) return;
      g = new ConsumerGroup(r.groupId);
      this.groups.set(r.groupId, g);
    }
    switch (r.type) {
      case 'groupMetadata':
        if (r.value === null) {
          this.groups.delete(r.groupId);
          return;
        }
        g.groupEpoch = r.value.epoch;
        g.metadataHash = r.value.metadataHash;
        return;
      case 'memberMetadata': {
        if (r.value === null) {
          g.removeMember(r.memberId);
          return;
        }
        const m = g.members.get(r.memberId) ?? newMember(r.memberId);
        g.updateMember({ ...m, ...r.value, subscribedTopicNames: [...r.value.subscribedTopicNames] });
        return;
      }
      case 'targetMetadata':
        if (r.value !== null) g.targetEpoch = r.value.assignmentEpoch;
        return;
      case 'targetMember':
        if (r.value === null) g.target.delete(r.memberId);
        else g.target.set(r.memberId, r.value);
        return;
      case 'currentAssignment': {
        if (r.value === null) return;
        const m = g.members.get(r.memberId) ?? newMember(r.memberId);
        g.updateMember({ ...m, ...r.value });
        return;
      }
      case 'regex':
        if (r.value === null) g.resolvedRegexes.delete(r.regex);
        else g.resolvedRegexes.set(r.regex, r.value);
        return;
    }
  }

  /** Whether a member subscribes to the topic (OffsetDelete refuses its offsets). */
  isSubscribedToTopic(group: ConsumerGroup, topic: string): boolean {
    for (const m of group.members.values()) if (memberTopicNames(group, m).includes(topic)) return true;
    return false;
  }

  /** The target of a member, for describe. */
  targetOf(group: ConsumerGroup, memberId: string): Target {
    return group.target.get(memberId) ?? new Map();
  }
}
