// One classic consumer group's in-memory state: members, static instance ids,
// members awaiting JoinGroup/SyncGroup answers, protocol votes, generation and
// leader. Pure data and bookkeeping (Kafka's ClassicGroup/ClassicGroupMember);
// the rebalance protocol that drives it lives in classic-group-manager.ts.
import { randomUUID } from 'node:crypto';
import { ErrorCode } from '../protocol/errors.js';
import { subscribedTopicsOf, type GroupMetadataSnapshot } from './group-records.js';
import { canTransition, IllegalGroupTransitionError, type GroupState } from './group-state.js';
import type { GroupProtocol, JoinGroupMember, JoinGroupResult, SyncGroupResult } from './types.js';

export const EMPTY_ASSIGNMENT: Buffer = Buffer.alloc(0);

export type JoinWaiter = (result: JoinGroupResult) => void;
export type SyncWaiter = (result: SyncGroupResult) => void;

export interface GroupMemberInit {
  memberId: string;
  groupInstanceId: string | null;
  clientId: string;
  clientHost: string;
  rebalanceTimeoutMs: number;
  sessionTimeoutMs: number;
  protocolType: string;
  protocols: readonly GroupProtocol[];
  assignment?: Buffer;
}

export class GroupMember {
  readonly memberId: string;
  readonly groupInstanceId: string | null;
  readonly clientId: string;
  readonly clientHost: string;
  readonly protocolType: string;
  rebalanceTimeoutMs: number;
  sessionTimeoutMs: number;
  protocols: readonly GroupProtocol[];
  assignment: Buffer;
  /** Joined but no JoinGroup answer yet: it may expire even while awaiting join. */
  isNew = false;
  /** Parked JoinGroup calls; a resent join joins the same answer instead of orphaning the first. */
  joinWaiters: JoinWaiter[] = [];
  syncWaiters: SyncWaiter[] = [];

  constructor(init: GroupMemberInit) {
    this.memberId = init.memberId;
    this.groupInstanceId = init.groupInstanceId;
    this.clientId = init.clientId;
    this.clientHost = init.clientHost;
    this.protocolType = init.protocolType;
    this.rebalanceTimeoutMs = init.rebalanceTimeoutMs;
    this.sessionTimeoutMs = init.sessionTimeoutMs;
    this.protocols = init.protocols;
    this.assignment = init.assignment ?? EMPTY_ASSIGNMENT;
  }

  get isAwaitingJoin(): boolean {
    return this.joinWaiters.length > 0;
  }

  get isAwaitingSync(): boolean {
    return this.syncWaiters.length > 0;
  }

  get isStatic(): boolean {
    return this.groupInstanceId !== null;
  }

  /** Members parked in a rebalance count as alive; new members must finish joining first. */
  hasSatisfiedHeartbeat(): boolean {
    if (this.isNew) return false;
    return this.isAwaitingJoin || this.isAwaitingSync;
  }

  /** Same protocols, same order, same metadata bytes. */
  matches(protocols: readonly GroupProtocol[]): boolean {
    if (protocols.length !== this.protocols.length) return false;
    return protocols.every((p, i) => {
      const mine = this.protocols[i];
      return mine !== undefined && mine.name === p.name && mine.metadata.equals(p.metadata);
    });
  }

  /** The member's most preferred protocol among the candidates. */
  vote(candidates: ReadonlySet<string>): string {
    for (const p of this.protocols) if (candidates.has(p.name)) return p.name;
    throw new Error(`Member ${this.memberId} supports none of the candidate protocols`);
  }

  metadataFor(protocolName: string): Buffer {
    const p = this.protocols.find((x) => x.name === protocolName);
    if (p === undefined) throw new Error(`Member ${this.memberId} does not support protocol ${protocolName}`);
    return p.metadata;
  }
}

export class ClassicGroup {
  state: GroupState;
  /** Kafka starts groups with previous state Dead; an initial rebalance is one whose previous state is Empty. */
  previousState: GroupState = 'Dead';
  /** When the group entered its current state (ms); null for groups loaded from old records. */
  stateTimestamp: number | null;
  protocolType: string | null;
  protocolName: string | null;
  generationId: number;
  leaderId: string | null;
  /** The initial rebalance is extended while new members keep arriving. */
  newMemberAdded = false;
  /** Topics the members subscribe to, when the protocol is "consumer" and parseable. */
  subscribedTopics: ReadonlySet<string> | null = null;

  private readonly members = new Map<string, GroupMember>();
  private readonly staticMembers = new Map<string, string>();
  private readonly pendingJoinMembers = new Set<string>();
  private readonly pendingSyncMembers = new Set<string>();
  private readonly supportedProtocols = new Map<string, number>();

  constructor(
    readonly groupId: string,
    init: {
      state?: GroupState;
      now: number | null;
      generationId?: number;
      protocolType?: string | null;
      protocolName?: string | null;
      leaderId?: string | null;
    },
  ) {
    this.state = init.state ?? 'Empty';
    this.stateTimestamp = init.now;
    this.generationId = init.generationId ?? 0;
    this.protocolType = init.protocolType ?? null;
    this.protocolName = init.protocolName ?? null;
    this.leaderId = init.leaderId ?? null;
  }

  /** A group as replayed from its last GroupMetadata record: Stable with its members, or Empty. */
  static fromSnapshot(groupId: string, snapshot: GroupMetadataSnapshot): ClassicGroup {
    const group = new ClassicGroup(groupId, {
      state: snapshot.members.length === 0 ? 'Empty' : 'Stable',
      now: snapshot.currentStateTimestampMs,
      generationId: snapshot.generationId,
      protocolType: snapshot.protocolType === '' ? null : snapshot.protocolType,
      protocolName: snapshot.protocolName,
      leaderId: snapshot.leaderId,
    });
    for (const m of snapshot.members) {
      const member = new GroupMember({
        memberId: m.memberId,
        groupInstanceId: m.groupInstanceId,
        clientId: m.clientId,
        clientHost: m.clientHost,
        rebalanceTimeoutMs: m.rebalanceTimeoutMs,
        sessionTimeoutMs: m.sessionTimeoutMs,
        protocolType: snapshot.protocolType,
        protocols: [{ name: snapshot.protocolName ?? '', metadata: m.subscription }],
        assignment: m.assignment,
      });
      group.add(member, null);
    }
    group.leaderId = snapshot.leaderId;
    group.subscribedTopics = group.computeSubscribedTopics();
    return group;
  }

  /** The only place a group changes state. */
  transitionTo(target: GroupState, now: number): void {
    if (!canTransition(this.state, target)) throw new IllegalGroupTransitionError(this.groupId, this.state, target);
    this.previousState = this.state;
    this.state = target;
    this.stateTimestamp = now;
  }

  // ------------------------------------------------------------ members

  get size(): number {
    return this.members.size;
  }

  allMembers(): GroupMember[] {
    return [...this.members.values()];
  }

  hasMember(memberId: string): boolean {
    return this.members.has(memberId);
  }

  member(memberId: string): GroupMember | undefined {
    return this.members.get(memberId);
  }

  isLeader(memberId: string): boolean {
    return this.leaderId === memberId;
  }

  staticMemberId(groupInstanceId: string): string | undefined {
    return this.staticMembers.get(groupInstanceId);
  }

  generateMemberId(clientId: string, groupInstanceId: string | null): string {
    return `${groupInstanceId ?? clientId}-${randomUUID()}`;
  }

  add(member: GroupMember, waiter: JoinWaiter | null): void {
    if (member.groupInstanceId !== null) {
      if (this.staticMembers.has(member.groupInstanceId)) {
        throw new Error(`Static member ${member.groupInstanceId} is already a member of ${this.groupId}`);
      }
      this.staticMembers.set(member.groupInstanceId, member.memberId);
    }
    if (this.members.size === 0) this.protocolType = member.protocolType;
    if (this.protocolType !== member.protocolType) throw new Error('Group and member protocol types differ');
    if (!this.supportsProtocols(member.protocolType, member.protocols)) {
      throw new Error('None of the member protocols is supported by the group');
    }
    if (this.leaderId === null) this.leaderId = member.memberId;
    this.members.set(member.memberId, member);
    this.countProtocols(member, 1);
    if (waiter !== null) member.joinWaiters.push(waiter);
    this.pendingJoinMembers.delete(member.memberId);
  }

  remove(memberId: string): void {
    const removed = this.members.get(memberId);
    if (removed !== undefined) {
      this.members.delete(memberId);
      this.countProtocols(removed, -1);
      if (removed.groupInstanceId !== null) this.staticMembers.delete(removed.groupInstanceId);
    }
    if (this.isLeader(memberId)) {
      const next = this.members.keys().next();
      this.leaderId = next.done === true ? null : next.value;
    }
    this.pendingJoinMembers.delete(memberId);
    this.pendingSyncMembers.delete(memberId);
  }

  /** New protocols and timeouts; a non-null waiter parks the member in the join phase. */
  updateMember(
    member: GroupMember,
    protocols: readonly GroupProtocol[],
    rebalanceTimeoutMs: number,
    sessionTimeoutMs: number,
    waiter: JoinWaiter | null,
  ): void {
    this.countProtocols(member, -1);
    member.protocols = protocols;
    this.countProtocols(member, 1);
    member.rebalanceTimeoutMs = rebalanceTimeoutMs;
    member.sessionTimeoutMs = sessionTimeoutMs;
    if (waiter !== null) member.joinWaiters.push(waiter);
  }

  /**
   * A static member restarted with a new member id: the old id is fenced
   * (its parked calls answer FENCED_INSTANCE_ID) and the new id takes over its
   * place, leadership and assignment.
   */
  replaceStaticMember(groupInstanceId: string, oldMemberId: string, newMemberId: string): GroupMember {
    const old = this.members.get(oldMemberId);
    if (old === undefined) throw new Error(`Cannot replace unknown member ${oldMemberId}`);
    this.members.delete(oldMemberId);
    this.completeJoin(old, {
      errorCode: ErrorCode.FENCED_INSTANCE_ID,
      generationId: -1,
      protocolType: null,
      protocolName: null,
      leader: '',
      skipAssignment: false,
      memberId: oldMemberId,
      members: [],
    });
    this.completeSync(old, {
      errorCode: ErrorCode.FENCED_INSTANCE_ID,
      protocolType: null,
      protocolName: null,
      assignment: EMPTY_ASSIGNMENT,
    });
    const replacement = new GroupMember({
      memberId: newMemberId,
      groupInstanceId: old.groupInstanceId,
      clientId: old.clientId,
      clientHost: old.clientHost,
      rebalanceTimeoutMs: old.rebalanceTimeoutMs,
      sessionTimeoutMs: old.sessionTimeoutMs,
      protocolType: old.protocolType,
      protocols: old.protocols,
      assignment: old.assignment,
    });
    this.members.set(newMemberId, replacement);
    if (this.isLeader(oldMemberId)) this.leaderId = newMemberId;
    this.staticMembers.set(groupInstanceId, newMemberId);
    return replacement;
  }

  /** Unknown instance id -> UNKNOWN_MEMBER_ID; instance id owned by another member id -> FENCED_INSTANCE_ID. */
  validateMember(memberId: string, groupInstanceId: string | null): number {
    if (groupInstanceId !== null) {
      const existing = this.staticMembers.get(groupInstanceId);
      if (existing === undefined) return ErrorCode.UNKNOWN_MEMBER_ID;
      if (existing !== memberId) return ErrorCode.FENCED_INSTANCE_ID;
    }
    return this.members.has(memberId) ? ErrorCode.NONE : ErrorCode.UNKNOWN_MEMBER_ID;
  }

  // ------------------------------------------------------------ join / sync bookkeeping

  isPendingMember(memberId: string): boolean {
    return this.pendingJoinMembers.has(memberId);
  }

  addPendingMember(memberId: string): void {
    this.pendingJoinMembers.add(memberId);
  }

  get numAwaitingJoin(): number {
    let n = 0;
    for (const m of this.members.values()) if (m.isAwaitingJoin) n++;
    return n;
  }

  hasAllMembersJoined(): boolean {
    return this.members.size === this.numAwaitingJoin && this.pendingJoinMembers.size === 0;
  }

  notYetRejoinedMembers(): GroupMember[] {
    return this.allMembers().filter((m) => !m.isAwaitingJoin);
  }

  addPendingSyncMember(memberId: string): void {
    this.pendingSyncMembers.add(memberId);
  }

  removePendingSyncMember(memberId: string): void {
    this.pendingSyncMembers.delete(memberId);
  }

  hasReceivedSyncFromAllMembers(): boolean {
    return this.pendingSyncMembers.size === 0;
  }

  allPendingSyncMembers(): string[] {
    return [...this.pendingSyncMembers];
  }

  clearPendingSyncMembers(): void {
    this.pendingSyncMembers.clear();
  }

  completeJoin(member: GroupMember, result: JoinGroupResult): boolean {
    if (!member.isAwaitingJoin) return false;
    const waiters = member.joinWaiters;
    member.joinWaiters = [];
    for (const w of waiters) w(result);
    return true;
  }

  completeSync(member: GroupMember, result: SyncGroupResult): boolean {
    if (!member.isAwaitingSync) return false;
    const waiters = member.syncWaiters;
    member.syncWaiters = [];
    for (const w of waiters) w(result);
    return true;
  }

  /** The largest rebalance timeout of the members bounds the join and sync phases. */
  rebalanceTimeoutMs(): number {
    let max = 0;
    for (const m of this.members.values()) max = Math.max(max, m.rebalanceTimeoutMs);
    return max;
  }

  /** Keeps the current leader if it rejoined, else picks a rejoined member; false when nobody rejoined. */
  maybeElectNewJoinedLeader(): boolean {
    if (this.leaderId === null) return false;
    const leader = this.members.get(this.leaderId);
    if (leader !== undefined && leader.isAwaitingJoin) return true;
    for (const m of this.members.values()) {
      if (m.isAwaitingJoin) {
        this.leaderId = m.memberId;
        return true;
      }
    }
    return false;
  }

  // ------------------------------------------------------------ protocols

  private countProtocols(member: GroupMember, delta: 1 | -1): void {
    for (const p of member.protocols) {
      this.supportedProtocols.set(p.name, (this.supportedProtocols.get(p.name) ?? 0) + delta);
    }
  }

  private candidateProtocols(): Set<string> {
    const out = new Set<string>();
    for (const [name, count] of this.supportedProtocols) if (count === this.members.size) out.add(name);
    return out;
  }

  /** Whether a joining member could be admitted: some protocol every current member also supports. */
  supportsProtocols(protocolType: string, protocols: readonly GroupProtocol[]): boolean {
    if (this.state === 'Empty') return protocolType.length > 0 && protocols.length > 0;
    if (this.protocolType !== protocolType) return false;
    return protocols.some((p) => (this.supportedProtocols.get(p.name) ?? 0) === this.members.size);
  }

  /** Every member votes for its preferred protocol among those all support; most votes wins. */
  selectProtocol(): string {
    if (this.members.size === 0) throw new Error(`Cannot select a protocol for empty group ${this.groupId}`);
    const candidates = this.candidateProtocols();
    const votes = new Map<string, number>();
    for (const m of this.members.values()) {
      const choice = m.vote(candidates);
      votes.set(choice, (votes.get(choice) ?? 0) + 1);
    }
    let best: string | null = null;
    let bestVotes = -1;
    for (const [name, n] of votes) {
      if (n > bestVotes) {
        best = name;
        bestVotes = n;
      }
    }
    if (best === null) throw new Error(`No protocol selected for ${this.groupId}`);
    return best;
  }

  /** Members as the leader's JoinGroup answer lists them (metadata for the selected protocol). */
  currentMemberMetadata(): JoinGroupMember[] {
    const protocol = this.protocolName;
    if (protocol === null) return [];
    return this.allMembers().map((m) => ({
      memberId: m.memberId,
      groupInstanceId: m.groupInstanceId,
      metadata: m.metadataFor(protocol),
    }));
  }

  /** The assignment of every member, as persisted in the group metadata record. */
  groupAssignment(): Map<string, Buffer> {
    const out = new Map<string, Buffer>();
    for (const m of this.members.values()) out.set(m.memberId, m.assignment);
    return out;
  }

  usesConsumerProtocol(): boolean {
    return this.protocolType === 'consumer';
  }

  /**
   * The union of the members' subscribed topics for "consumer" groups (an
   * empty set when there are no members); null when unknown.
   */
  computeSubscribedTopics(): ReadonlySet<string> | null {
    if (!this.usesConsumerProtocol()) return null;
    if (this.members.size === 0) return new Set();
    const protocol = this.protocolName;
    if (protocol === null) return null;
    const topics = new Set<string>();
    for (const m of this.members.values()) {
      const parsed = subscribedTopicsOf(m.metadataFor(protocol));
      if (parsed === null) return null;
      for (const t of parsed) topics.add(t);
    }
    return topics;
  }

  /** Kafka: unknown subscriptions count as subscribed only for "consumer" groups. */
  isSubscribedToTopic(topic: string): boolean {
    if (this.subscribedTopics !== null) return this.subscribedTopics.has(topic);
    return this.usesConsumerProtocol();
  }
}
