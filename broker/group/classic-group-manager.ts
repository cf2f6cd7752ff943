// The classic rebalance protocol (JoinGroup, SyncGroup, Heartbeat, LeaveGroup)
// over ClassicGroup, following Kafka's GroupMetadataManager: joins park until
// the join phase completes (everybody rejoined, the rebalance timeout, or the
// initial delay of a new group), the leader receives every member's metadata,
// followers' SyncGroup calls park until the leader's assignment is written to
// __consumer_offsets, and heartbeat/join/sync deadlines run on KeyedTimers.
// Assignment runs in the clients, so every client-side assignor works.
import type { Logger } from '../common/logger.js';
import type { Clock } from '../common/clock.js';
import { ErrorCode } from '../protocol/errors.js';
import { ClassicGroup, EMPTY_ASSIGNMENT, GroupMember, type JoinWaiter } from './classic-group.js';
import { emptyGroupRecord, groupMetadataRecord, joinError, syncError } from './results.js';
import type { GroupCoordinatorConfig } from './config.js';
import type { CoordinatorRecord, GroupMetadataSnapshot } from './group-records.js';
import { canRebalance } from './group-state.js';
import { heartbeatKey, joinKey, KeyedTimers, syncKey } from './keyed-timers.js';
import { appendErrorCode } from './offsets-topic.js';
import type {
  HeartbeatParams,
  JoinGroupParams,
  JoinGroupResult,
  LeaveGroupResult,
  LeavingMember,
  SyncGroupParams,
  SyncGroupResult,
} from './types.js';

/** Where group records go: encoded and appended, in order, to the group's partition. */
export interface GroupRecordSink {
  write(groupId: string, records: readonly CoordinatorRecord[]): Promise<void>;
  /** Settles after every write issued so far for the group's partition. */
  barrier(groupId: string): Promise<void>;
}

export interface ClassicGroupManagerDeps {
  readonly config: GroupCoordinatorConfig;
  readonly clock: Clock;
  readonly timers: KeyedTimers;
  readonly sink: GroupRecordSink;
  readonly log: Logger;
}

export class ClassicGroupManager {
  readonly groups = new Map<string, ClassicGroup>();
  /** Completed rebalances per group since this process started (Kafka's completed-rebalance count). */
  readonly completedRebalances = new Map<string, number>();
  private readonly config: GroupCoordinatorConfig;
  private readonly clock: Clock;
  private readonly timers: KeyedTimers;
  private readonly sink: GroupRecordSink;
  private readonly log: Logger;

  constructor(deps: ClassicGroupManagerDeps) {
    this.config = deps.config;
    this.clock = deps.clock;
    this.timers = deps.timers;
    this.sink = deps.sink;
    this.log = deps.log;
  }

  createGroup(groupId: string): ClassicGroup {
    const group = new ClassicGroup(groupId, { now: this.clock.now() });
    this.groups.set(groupId, group);
    return group;
  }

  // ================================================================ JoinGroup

  join(p: JoinGroupParams): Promise<JoinGroupResult> {
    return new Promise<JoinGroupResult>((resolve) => {
      const isUnknownMember = p.memberId === '';
      let group = this.groups.get(p.groupId);
      const isNewGroup = group === undefined;
      if (group === undefined) {
        if (!isUnknownMember) {
          resolve(joinError(p.memberId, ErrorCode.UNKNOWN_MEMBER_ID));
          return;
        }
        group = this.createGroup(p.groupId);
      }
      // Kafka writes the new group first so it exists after a restart.
      if (isNewGroup) this.persistInBackground(group, [emptyGroupRecord(group)]);
      if (!this.acceptJoiningMember(group, p.memberId)) {
        group.remove(p.memberId);
        resolve(joinError('', ErrorCode.GROUP_MAX_SIZE_REACHED));
      } else if (isUnknownMember) {
        this.joinNewMember(group, p, resolve);
      } else {
        this.joinExistingMember(group, p, resolve);
      }
    });
  }

  private acceptJoiningMember(group: ClassicGroup, memberId: string): boolean {
    const max = this.config.groupMaxSize;
    switch (group.state) {
      case 'Empty':
      case 'Dead':
        return true;
      case 'PreparingRebalance':
        return group.member(memberId)?.isAwaitingJoin === true || group.numAwaitingJoin < max;
      case 'CompletingRebalance':
      case 'Stable':
        return group.hasMember(memberId) || group.size < max;
    }
  }

  private joinNewMember(group: ClassicGroup, p: JoinGroupParams, resolve: JoinWaiter): void {
    if (group.state === 'Dead') {
      resolve(joinError('', ErrorCode.COORDINATOR_NOT_AVAILABLE));
      return;
    }
    if (!group.supportsProtocols(p.protocolType, p.protocols)) {
      resolve(joinError('', ErrorCode.INCONSISTENT_GROUP_PROTOCOL));
      return;
    }
    const newMemberId = group.generateMemberId(p.clientId, p.groupInstanceId);
    if (p.groupInstanceId !== null) {
      const existing = group.staticMemberId(p.groupInstanceId);
      if (existing !== undefined) {
        this.replaceStaticMember(group, p, p.groupInstanceId, existing, newMemberId, resolve);
      } else {
        this.addMemberThenRebalanceOrCompleteJoin(group, p, newMemberId, resolve);
      }
      return;
    }
    if (p.requireKnownMemberId) {
      // KIP-394: hand out the id first; the member must come back with it.
      group.addPendingMember(newMemberId);
      this.timers.schedule(heartbeatKey(group.groupId, newMemberId), p.sessionTimeoutMs, () =>
        this.expireHeartbeat(group.groupId, newMemberId),
      );
      resolve(joinError(newMemberId, ErrorCode.MEMBER_ID_REQUIRED));
      return;
    }
    this.addMemberThenRebalanceOrCompleteJoin(group, p, newMemberId, resolve);
  }

  private joinExistingMember(group: ClassicGroup, p: JoinGroupParams, resolve: JoinWaiter): void {
    if (group.state === 'Dead') {
      resolve(joinError(p.memberId, ErrorCode.COORDINATOR_NOT_AVAILABLE));
      return;
    }
    if (!group.supportsProtocols(p.protocolType, p.protocols)) {
      resolve(joinError(p.memberId, ErrorCode.INCONSISTENT_GROUP_PROTOCOL));
      return;
    }
    if (group.isPendingMember(p.memberId)) {
      if (p.groupInstanceId !== null) {
        // Pending ids are only handed to dynamic members (Kafka: IllegalStateException).
        resolve(joinError(p.memberId, ErrorCode.UNKNOWN_SERVER_ERROR));
        return;
      }
      this.addMemberThenRebalanceOrCompleteJoin(group, p, p.memberId, resolve);
      return;
    }
    const invalid = group.validateMember(p.memberId, p.groupInstanceId);
    const member = group.member(p.memberId);
    if (invalid !== ErrorCode.NONE || member === undefined) {
      resolve(joinError(p.memberId, invalid === ErrorCode.NONE ? ErrorCode.UNKNOWN_MEMBER_ID : invalid));
      return;
    }
    switch (group.state) {
      case 'PreparingRebalance':
        this.updateMemberThenRebalanceOrCompleteJoin(group, member, p, resolve);
        return;
      case 'CompletingRebalance':
        if (member.matches(p.protocols)) {
          // The member lost our JoinGroup answer: send the current generation again.
          resolve(this.currentGenerationResult(group, p.memberId, group.isLeader(p.memberId)));
        } else {
          this.updateMemberThenRebalanceOrCompleteJoin(group, member, p, resolve);
        }
        return;
      case 'Stable':
        // A rejoining leader forces a rebalance: that is how clients react to
        // metadata changes (new partitions) that do not change their subscription.
        if (group.isLeader(p.memberId) || !member.matches(p.protocols)) {
          this.updateMemberThenRebalanceOrCompleteJoin(group, member, p, resolve);
        } else {
          resolve(this.currentGenerationResult(group, p.memberId, false));
        }
        return;
      case 'Empty':
        resolve(joinError(p.memberId, ErrorCode.UNKNOWN_MEMBER_ID));
        return;
    }
  }

  private currentGenerationResult(group: ClassicGroup, memberId: string, withMembers: boolean): JoinGroupResult {
    return {
      errorCode: ErrorCode.NONE,
      generationId: group.generationId,
      protocolType: group.protocolType,
      protocolName: group.protocolName,
      leader: group.leaderId ?? '',
      skipAssignment: false,
      memberId,
      members: withMembers ? group.currentMemberMetadata() : [],
    };
  }

  private updateMemberThenRebalanceOrCompleteJoin(
    group: ClassicGroup,
    member: GroupMember,
    p: JoinGroupParams,
    resolve: JoinWaiter,
  ): void {
    group.updateMember(member, p.protocols, p.rebalanceTimeoutMs, p.sessionTimeoutMs, resolve);
    this.maybePrepareRebalanceOrCompleteJoin(group);
  }

  private addMemberThenRebalanceOrCompleteJoin(
    group: ClassicGroup,
    p: JoinGroupParams,
    memberId: string,
    resolve: JoinWaiter,
  ): void {
    const member = new GroupMember({
      memberId,
      groupInstanceId: p.groupInstanceId,
      clientId: p.clientId,
      clientHost: p.clientHost,
      rebalanceTimeoutMs: p.rebalanceTimeoutMs,
      sessionTimeoutMs: p.sessionTimeoutMs,
      protocolType: p.protocolType,
      protocols: p.protocols,
    });
    member.isNew = true;
    if (group.state === 'PreparingRebalance' && group.previousState === 'Empty') group.newMemberAdded = true;
    group.add(member, resolve);
    // A parked new member cannot heartbeat; bound its wait instead of its session.
    this.rescheduleHeartbeat(group, member, this.config.newMemberJoinTimeoutMs);
    this.maybePrepareRebalanceOrCompleteJoin(group);
  }

  /**
   * A known static member restarted (new member id, same instance id). In a
   * Stable group whose protocol stays the same it takes over its old
   * assignment without a rebalance once the group record is written.
   */
  private replaceStaticMember(
    group: ClassicGroup,
    p: JoinGroupParams,
    instanceId: string,
    oldMemberId: string,
    newMemberId: string,
    resolve: JoinWaiter,
  ): void {
    const currentLeader = group.leaderId;
    const member = group.replaceStaticMember(instanceId, oldMemberId, newMemberId);
    this.timers.cancel(heartbeatKey(group.groupId, oldMemberId));
    this.rescheduleHeartbeat(group, member);
    const previous = {
      protocols: member.protocols,
      rebalanceTimeoutMs: member.rebalanceTimeoutMs,
      sessionTimeoutMs: member.sessionTimeoutMs,
    };
    group.updateMember(member, p.protocols, p.rebalanceTimeoutMs, p.sessionTimeoutMs, resolve);
    switch (group.state) {
      case 'Stable': {
        if ((group.protocolName ?? '') !== group.selectProtocol()) {
          this.maybePrepareRebalanceOrCompleteJoin(group);
          return;
        }
        this.sink.write(group.groupId, [groupMetadataRecord(group)]).then(
          () => {
            if (p.supportsSkipAssignment) {
              const isLeader = group.isLeader(newMemberId);
              group.completeJoin(member, {
                ...this.currentGenerationResult(group, newMemberId, isLeader),
                skipAssignment: isLeader,
              });
            } else {
              // Older clients must not re-run the assignment: name the old leader id.
              group.completeJoin(member, {
                ...this.currentGenerationResult(group, newMemberId, false),
                leader: currentLeader ?? '',
              });
            }
          },
          (err: unknown) => {
            this.log.warn({ err, groupId: group.groupId, instanceId }, 'failed to persist static member replacement');
            const waiters = member.joinWaiters;
            member.joinWaiters = [];
            if (this.groups.get(group.groupId) === group && group.staticMemberId(instanceId) === newMemberId) {
              group.updateMember(member, previous.protocols, previous.rebalanceTimeoutMs, previous.sessionTimeoutMs, null);
              const restored = group.replaceStaticMember(instanceId, newMemberId, oldMemberId);
              this.timers.cancel(heartbeatKey(group.groupId, newMemberId));
              this.rescheduleHeartbeat(group, restored);
            }
            const result: JoinGroupResult = {
              ...this.currentGenerationResult(group, '', false),
              errorCode: appendErrorCode(err),
              leader: currentLeader ?? '',
            };
            for (const w of waiters) w(result);
          },
        );
        return;
      }
      case 'CompletingRebalance':
        // The leader may already be assigning to the old member id: start over.
        this.prepareRebalance(group);
        return;
      case 'PreparingRebalance':
        this.maybeCompleteJoinPhase(group);
        return;
      case 'Empty':
      case 'Dead':
        throw new Error(`Group ${group.groupId} in state ${group.state} cannot hold static member ${instanceId}`);
    }
  }

  // ================================================================ rebalance

  private maybePrepareRebalanceOrCompleteJoin(group: ClassicGroup): void {
    if (canRebalance(group.state)) this.prepareRebalance(group);
    else this.maybeCompleteJoinPhase(group);
  }

  prepareRebalance(group: ClassicGroup): void {
    if (group.state === 'CompletingRebalance') {
      // Members waiting in SyncGroup must rejoin.
      this.resetAndPropagateAssignmentWithError(group, ErrorCode.REBALANCE_IN_PROGRESS);
    }
    this.removeSyncExpiration(group);
    const isInitialRebalance = group.state === 'Empty';
    if (isInitialRebalance) {
      const delayMs = this.config.groupInitialRebalanceDelayMs;
      const remainingMs = Math.max(group.rebalanceTimeoutMs() - delayMs, 0);
      this.timers.schedule(joinKey(group.groupId), delayMs, () =>
        this.tryCompleteInitialRebalance(group.groupId, delayMs, remainingMs),
      );
    }
    group.transitionTo('PreparingRebalance', this.clock.now());
    if (!isInitialRebalance) this.maybeCompleteJoinElseSchedule(group);
  }

  private maybeCompleteJoinElseSchedule(group: ClassicGroup): void {
    if (group.hasAllMembersJoined()) {
      this.completeJoin(group);
    } else {
      this.timers.schedule(joinKey(group.groupId), group.rebalanceTimeoutMs(), () =>
        this.completeJoinById(group.groupId),
      );
    }
  }

  /** A new group waits `group.initial.rebalance.delay.ms`, extended while members keep arriving. */
  private tryCompleteInitialRebalance(groupId: string, delayMs: number, remainingMs: number): void {
    const group = this.groups.get(groupId);
    if (group === undefined) return;
    if (group.newMemberAdded && remainingMs !== 0) {
      group.newMemberAdded = false;
      const newDelayMs = Math.min(this.config.groupInitialRebalanceDelayMs, remainingMs);
      const newRemainingMs = Math.max(remainingMs - delayMs, 0);
      this.timers.schedule(joinKey(groupId), newDelayMs, () =>
        this.tryCompleteInitialRebalance(groupId, newDelayMs, newRemainingMs),
      );
    } else {
      this.completeJoin(group);
    }
  }

  private maybeCompleteJoinPhase(group: ClassicGroup): void {
    if (group.state !== 'PreparingRebalance') return;
    if (group.previousState === 'Empty') return; // the initial rebalance ends on its timer
    if (!group.hasAllMembersJoined()) return;
    this.completeJoin(group);
  }

  private completeJoinById(groupId: string): void {
    const group = this.groups.get(groupId);
    if (group !== undefined) this.completeJoin(group);
  }

  /**
   * Ends the join phase: dynamic members that did not rejoin are dropped, the
   * generation advances, and every parked JoinGroup is answered (the leader
   * with all members' metadata). Static members that did not rejoin stay.
   */
  private completeJoin(group: ClassicGroup): void {
    this.timers.cancel(joinKey(group.groupId));
    for (const m of group.notYetRejoinedMembers()) {
      if (m.isStatic) continue;
      group.remove(m.memberId);
      this.timers.cancel(heartbeatKey(group.groupId, m.memberId));
    }
    if (group.state === 'Dead') return;
    if (!group.maybeElectNewJoinedLeader() && group.size > 0) {
      // Nobody rejoined yet: wait another rebalance timeout for sessions to expire.
      this.timers.schedule(joinKey(group.groupId), group.rebalanceTimeoutMs(), () =>
        this.completeJoinById(group.groupId),
      );
      return;
    }
    this.initNextGeneration(group);
    if (group.state === 'Empty') {
      this.persistInBackground(group, [groupMetadataRecord(group)]);
      return;
    }
    this.completedRebalances.set(group.groupId, (this.completedRebalances.get(group.groupId) ?? 0) + 1);
    this.log.info(
      { groupId: group.groupId, generationId: group.generationId, protocol: group.protocolName, members: group.size, leaderId: group.leaderId },
      'group rebalance completed',
    );
    for (const m of group.allMembers()) {
      group.completeJoin(m, this.currentGenerationResult(group, m.memberId, group.isLeader(m.memberId)));
      this.rescheduleHeartbeat(group, m);
      m.isNew = false;
      group.addPendingSyncMember(m.memberId);
    }
    const generation = group.generationId;
    this.timers.schedule(syncKey(group.groupId), group.rebalanceTimeoutMs(), () =>
      this.expirePendingSync(group.groupId, generation),
    );
  }

  private initNextGeneration(group: ClassicGroup): void {
    group.generationId++;
    const now = this.clock.now();
    if (group.size > 0) {
      group.protocolName = group.selectProtocol();
      group.subscribedTopics = group.computeSubscribedTopics();
      group.transitionTo('CompletingRebalance', now);
    } else {
      group.protocolName = null;
      group.subscribedTopics = group.computeSubscribedTopics();
      group.transitionTo('Empty', now);
    }
    group.clearPendingSyncMembers();
  }

  /** Members that got their JoinGroup answer but never synced are removed, and the group rebalances. */
  private expirePendingSync(groupId: string, generation: number): void {
    const group = this.groups.get(groupId);
    if (group === undefined || group.generationId !== generation) return;
    switch (group.state) {
      case 'Dead':
      case 'Empty':
      case 'PreparingRebalance':
        return;
      case 'CompletingRebalance':
      case 'Stable':
        if (group.hasReceivedSyncFromAllMembers()) return;
        for (const memberId of group.allPendingSyncMembers()) {
          const member = group.member(memberId);
          if (member !== undefined) this.evict(group, member);
          else group.remove(memberId);
        }
        this.prepareRebalance(group);
        return;
    }
  }

  private removeSyncExpiration(group: ClassicGroup): void {
    group.clearPendingSyncMembers();
    this.timers.cancel(syncKey(group.groupId));
  }

  private removePendingSyncMember(group: ClassicGroup, memberId: string): void {
    group.removePendingSyncMember(memberId);
    switch (group.state) {
      case 'Dead':
      case 'Empty':
      case 'PreparingRebalance':
        this.timers.cancel(syncKey(group.groupId));
        return;
      case 'CompletingRebalance':
      case 'Stable':
        if (group.hasReceivedSyncFromAllMembers()) this.timers.cancel(syncKey(group.groupId));
        return;
    }
  }

  private resetAndPropagateAssignmentWithError(group: ClassicGroup, errorCode: number): void {
    for (const m of group.allMembers()) m.assignment = EMPTY_ASSIGNMENT;
    this.propagateAssignment(group, errorCode);
  }

  private propagateAssignment(group: ClassicGroup, errorCode: number): void {
    const ok = errorCode === ErrorCode.NONE;
    for (const m of group.allMembers()) {
      const answered = group.completeSync(m, {
        errorCode,
        protocolType: ok ? group.protocolType : null,
        protocolName: ok ? group.protocolName : null,
        assignment: m.assignment,
      });
      // Sessions of members parked in SyncGroup restart from their answer.
      if (answered) this.rescheduleHeartbeat(group, m);
    }
  }

  // ================================================================ SyncGroup

  sync(p: SyncGroupParams): Promise<SyncGroupResult> {
    return new Promise<SyncGroupResult>((resolve) => {
      const group = this.groups.get(p.groupId);
      if (group === undefined || group.state === 'Empty') {
        resolve(syncError(ErrorCode.UNKNOWN_MEMBER_ID));
        return;
      }
      const invalid = this.validateSync(group, p);
      const member = group.member(p.memberId);
      if (invalid !== ErrorCode.NONE || member === undefined) {
        resolve(syncError(invalid === ErrorCode.NONE ? ErrorCode.UNKNOWN_MEMBER_ID : invalid));
        return;
      }
      switch (group.state) {
        case 'Dead':
          resolve(syncError(ErrorCode.COORDINATOR_NOT_AVAILABLE));
          return;
        case 'PreparingRebalance':
          resolve(syncError(ErrorCode.REBALANCE_IN_PROGRESS));
          return;
        case 'CompletingRebalance':
          member.syncWaiters.push(resolve);
          this.removePendingSyncMember(group, p.memberId);
          if (group.isLeader(p.memberId)) this.completeAssignment(group, p);
          return;
        case 'Stable':
          this.removePendingSyncMember(group, p.memberId);
          resolve({
            errorCode: ErrorCode.NONE,
            protocolType: group.protocolType,
            protocolName: group.protocolName,
            assignment: member.assignment,
          });
          return;
      }
    });
  }

  private validateSync(group: ClassicGroup, p: SyncGroupParams): number {
    if (group.state === 'Dead') return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    const invalid = group.validateMember(p.memberId, p.groupInstanceId);
    if (invalid !== ErrorCode.NONE) return invalid;
    if (p.generationId !== group.generationId) return ErrorCode.ILLEGAL_GENERATION;
    const inconsistent = (requested: string | null, actual: string | null): boolean =>
      requested !== null && actual !== null && requested !== actual;
    if (inconsistent(p.protocolType, group.protocolType) || inconsistent(p.protocolName, group.protocolName)) {
      return ErrorCode.INCONSISTENT_GROUP_PROTOCOL;
    }
    return ErrorCode.NONE;
  }

  /** The leader's assignment: write it, then answer every parked SyncGroup and become Stable. */
  private completeAssignment(group: ClassicGroup, p: SyncGroupParams): void {
    const assignment = new Map<string, Buffer>();
    for (const a of p.assignments) assignment.set(a.memberId, a.assignment);
    for (const m of group.allMembers()) if (!assignment.has(m.memberId)) assignment.set(m.memberId, EMPTY_ASSIGNMENT);
    const stillCurrent = (): boolean =>
      this.groups.get(group.groupId) === group &&
      group.state === 'CompletingRebalance' &&
      group.generationId === p.generationId;
    this.sink.write(group.groupId, [groupMetadataRecord(group, assignment)]).then(
      () => {
        if (!stillCurrent()) return;
        for (const m of group.allMembers()) m.assignment = assignment.get(m.memberId) ?? EMPTY_ASSIGNMENT;
        this.propagateAssignment(group, ErrorCode.NONE);
        group.transitionTo('Stable', this.clock.now());
      },
      (err: unknown) => {
        this.log.warn({ err, groupId: group.groupId }, 'failed to persist group assignment');
        if (!stillCurrent()) return;
        this.resetAndPropagateAssignmentWithError(group, appendErrorCode(err));
        this.maybePrepareRebalanceOrCompleteJoin(group);
      },
    );
  }

  // ================================================================ Heartbeat

  heartbeat(p: HeartbeatParams): number {
    const group = this.groups.get(p.groupId);
    if (group === undefined) return ErrorCode.UNKNOWN_MEMBER_ID;
    if (group.state === 'Dead') return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    const invalid = group.validateMember(p.memberId, p.groupInstanceId);
    if (invalid !== ErrorCode.NONE) return invalid;
    if (p.generationId !== group.generationId) return ErrorCode.ILLEGAL_GENERATION;
    const member = group.member(p.memberId);
    if (member === undefined) return ErrorCode.UNKNOWN_MEMBER_ID;
    switch (group.state) {
      case 'Empty':
        return ErrorCode.UNKNOWN_MEMBER_ID;
      case 'PreparingRebalance':
        this.rescheduleHeartbeat(group, member);
        return ErrorCode.REBALANCE_IN_PROGRESS;
      case 'CompletingRebalance':
      case 'Stable':
        this.rescheduleHeartbeat(group, member);
        return ErrorCode.NONE;
    }
  }

  rescheduleHeartbeat(group: ClassicGroup, member: GroupMember, timeoutMs = member.sessionTimeoutMs): void {
    const groupId = group.groupId;
    const memberId = member.memberId;
    this.timers.schedule(heartbeatKey(groupId, memberId), timeoutMs, () => this.expireHeartbeat(groupId, memberId));
  }

  private expireHeartbeat(groupId: string, memberId: string): void {
    const group = this.groups.get(groupId);
    if (group === undefined || group.state === 'Dead') return;
    if (group.isPendingMember(memberId)) {
      group.remove(memberId);
      if (group.state === 'PreparingRebalance' && group.hasAllMembersJoined()) this.completeJoin(group);
      return;
    }
    const member = group.member(memberId);
    if (member === undefined || member.hasSatisfiedHeartbeat()) return;
    this.log.info({ groupId, memberId }, 'member session expired');
    this.removeMemberAndUpdateGroup(group, member);
  }

  private removeMemberAndUpdateGroup(group: ClassicGroup, member: GroupMember): void {
    this.evict(group, member);
    switch (group.state) {
      case 'Stable':
      case 'CompletingRebalance':
        this.maybePrepareRebalanceOrCompleteJoin(group);
        return;
      case 'PreparingRebalance':
        if (group.hasAllMembersJoined()) this.completeJoin(group);
        return;
      case 'Empty':
      case 'Dead':
        return;
    }
  }

  /** Removes a member; its parked calls answer UNKNOWN_MEMBER_ID so the client rejoins if alive. */
  private evict(group: ClassicGroup, member: GroupMember): void {
    this.timers.cancel(heartbeatKey(group.groupId, member.memberId));
    group.completeJoin(member, joinError('', ErrorCode.UNKNOWN_MEMBER_ID));
    group.completeSync(member, syncError(ErrorCode.UNKNOWN_MEMBER_ID));
    group.remove(member.memberId);
  }

  // ================================================================ LeaveGroup

  async leave(groupId: string, leaving: readonly LeavingMember[]): Promise<LeaveGroupResult> {
    const group = this.groups.get(groupId);
    if (group === undefined) return { errorCode: ErrorCode.UNKNOWN_MEMBER_ID, members: [] };
    if (group.state === 'Dead') return { errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE, members: [] };
    const members: LeaveGroupResult['members'] = [];
    let removed = 0;
    for (const l of leaving) {
      let errorCode: number = ErrorCode.NONE;
      if (l.memberId === '') {
        // Administrative removal by instance id (kafka-consumer-groups --delete-members style).
        const staticId = l.groupInstanceId === null ? undefined : group.staticMemberId(l.groupInstanceId);
        const member = staticId === undefined ? undefined : group.member(staticId);
        if (member === undefined) errorCode = ErrorCode.UNKNOWN_MEMBER_ID;
        else this.evict(group, member);
      } else if (group.isPendingMember(l.memberId)) {
        group.remove(l.memberId);
        this.timers.cancel(heartbeatKey(groupId, l.memberId));
      } else {
        errorCode = group.validateMember(l.memberId, l.groupInstanceId);
        const member = group.member(l.memberId);
        if (errorCode === ErrorCode.NONE && member !== undefined) this.evict(group, member);
      }
      if (errorCode === ErrorCode.NONE) removed++;
      members.push({ memberId: l.memberId, groupInstanceId: l.groupInstanceId, errorCode });
    }
    if (removed > 0) {
      switch (group.state) {
        case 'Stable':
        case 'CompletingRebalance':
          this.maybePrepareRebalanceOrCompleteJoin(group);
          break;
        case 'PreparingRebalance':
          this.maybeCompleteJoinPhase(group);
          break;
        case 'Empty':
          break;
      }
    }
    // Answer after what the leave wrote (an Empty group record) is in the log.
    await this.sink.barrier(groupId);
    return { errorCode: ErrorCode.NONE, members };
  }

  // ================================================================ loading / shutdown

  /** Replays a group metadata record: members come back Stable with their assignments. */
  loadGroup(groupId: string, snapshot: GroupMetadataSnapshot): void {
    this.groups.set(groupId, ClassicGroup.fromSnapshot(groupId, snapshot));
  }

  /** After loading: loaded members (of the groups `which` selects) must heartbeat within their session timeout. */
  startLoadedGroups(which: (groupId: string) => boolean = () => true): void {
    for (const group of this.groups.values()) {
      if (!which(group.groupId)) continue;
      for (const m of group.allMembers()) this.rescheduleHeartbeat(group, m);
      if (group.size > this.config.groupMaxSize) this.prepareRebalance(group);
    }
  }

  /** Answers every parked call with `errorCode` (NOT_COORDINATOR on shutdown) and stops all timers. */
  shutdown(errorCode: number): void {
    this.timers.cancelAll();
    for (const group of this.groups.values()) {
      for (const m of group.allMembers()) {
        group.completeJoin(m, joinError(m.memberId, errorCode));
        group.completeSync(m, syncError(errorCode));
      }
    }
  }

  /**
   * Drops the groups `which` selects (their coordinator partition went
   * elsewhere): parked calls are answered with `errorCode`, their timers stop.
   */
  unloadGroups(which: (groupId: string) => boolean, errorCode: number): void {
    for (const group of [...this.groups.values()]) {
      if (!which(group.groupId)) continue;
      this.timers.cancel(joinKey(group.groupId));
      this.timers.cancel(syncKey(group.groupId));
      for (const m of group.allMembers()) {
        this.timers.cancel(heartbeatKey(group.groupId, m.memberId));
        group.completeJoin(m, joinError(m.memberId, errorCode));
        group.completeSync(m, syncError(errorCode));
      }
      this.groups.delete(group.groupId);
      this.completedRebalances.delete(group.groupId);
    }
  }

  // ================================================================ online migration

  /**
   * The group became a consumer group (its records are written): parked
   * JoinGroup and SyncGroup calls answer REBALANCE_IN_PROGRESS so the members
   * rejoin the consumer group, and its timers stop.
   */
  releaseConverted(groupId: string): void {
    const group = this.groups.get(groupId);
    if (group === undefined) return;
    this.timers.cancel(joinKey(groupId));
    this.timers.cancel(syncKey(groupId));
    for (const m of group.allMembers()) {
      this.timers.cancel(heartbeatKey(groupId, m.memberId));
      group.completeJoin(m, joinError(m.memberId, ErrorCode.REBALANCE_IN_PROGRESS));
      group.completeSync(m, syncError(ErrorCode.REBALANCE_IN_PROGRESS));
    }
    this.groups.delete(groupId);
  }

  /** A consumer group became this classic group (its record is written): sessions start and, unless told otherwise, the members rebalance. */
  adoptConverted(group: ClassicGroup, rebalance = true): void {
    this.groups.set(group.groupId, group);
    for (const m of group.allMembers()) this.rescheduleHeartbeat(group, m);
    if (rebalance) this.prepareRebalance(group);
  }

  private persistInBackground(group: ClassicGroup, records: CoordinatorRecord[]): void {
    this.sink.write(group.groupId, records).catch((err: unknown) => {
      this.log.warn({ err, groupId: group.groupId }, 'failed to persist group metadata');
    });
  }
}
