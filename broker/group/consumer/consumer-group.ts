// A KIP-848 consumer group as data: its members (each with its epoch,
// reconciliation state and current assignment), the group epoch, the target
// assignment and its epoch, the resolved regular expressions, and which
// member epoch holds each partition. Pure: no timers and no I/O; the manager
// copies a group, changes the copy and keeps it once its records are written.
// A member that joined through JoinGroup (a classic member, during an online
// migration) carries its classic metadata; the others have none.
import type { GroupProtocol } from '../types.js';

/** ConsumerGroupMemberMetadataValue.ClassicMemberMetadata: how a classic member joined. */
export interface ClassicMemberMetadata {
  readonly sessionTimeoutMs: number;
  readonly supportedProtocols: readonly GroupProtocol[];
}

/** Kafka's MemberState, with its int8 record values. */
export type MemberState = 'unrevoked_partitions' | 'unreleased_partitions' | 'stable' | 'unknown';

export const memberStateCode: Readonly<Record<MemberState, number>> = {
  unrevoked_partitions: 0,
  unreleased_partitions: 1,
  stable: 2,
  unknown: 127,
};

export function memberStateFromCode(code: number): MemberState {
  switch (code) {
    case 0:
      return 'unrevoked_partitions';
    case 1:
      return 'unreleased_partitions';
    case 2:
      return 'stable';
    default:
      return 'unknown';
  }
}

/** topic id -> partition -> the epoch the member got it at (KIP-1251 commit fencing). */
export type Assignment = ReadonlyMap<string, ReadonlyMap<number, number>>;

/** topic id -> partitions. */
export type Target = ReadonlyMap<string, ReadonlySet<number>>;

export const EMPTY_ASSIGNMENT: Assignment = new Map();
export const EMPTY_TARGET: Target = new Map();

export interface ConsumerMember {
  readonly memberId: string;
  readonly instanceId: string | null;
  readonly rackId: string | null;
  readonly clientId: string;
  readonly clientHost: string;
  readonly subscribedTopicNames: readonly string[];
  readonly subscribedTopicRegex: string | null;
  readonly serverAssignor: string | null;
  readonly rebalanceTimeoutMs: number;
  readonly memberEpoch: number;
  readonly previousMemberEpoch: number;
  readonly state: MemberState;
  readonly assigned: Assignment;
  readonly pendingRevocation: Assignment;
  /** Set for a member using the classic protocol (JoinGroup/SyncGroup/Heartbeat); null for a ConsumerGroupHeartbeat member. */
  readonly classic: ClassicMemberMetadata | null;
}

export interface ResolvedRegex {
  readonly topics: readonly string[];
  readonly version: bigint;
  readonly timestampMs: number;
}

export type ConsumerGroupState = 'Empty' | 'Assigning' | 'Reconciling' | 'Stable' | 'Dead';

export const LEAVE_GROUP_MEMBER_EPOCH = -1;
export const LEAVE_GROUP_STATIC_MEMBER_EPOCH = -2;

export function newMember(memberId: string): ConsumerMember {
  return {
    memberId,
    instanceId: null,
    rackId: null,
    clientId: '',
    clientHost: '',
    subscribedTopicNames: [],
    subscribedTopicRegex: null,
    serverAssignor: null,
    rebalanceTimeoutMs: -1,
    memberEpoch: 0,
    previousMemberEpoch: 0,
    state: 'stable',
    assigned: EMPTY_ASSIGNMENT,
    pendingRevocation: EMPTY_ASSIGNMENT,
    classic: null,
  };
}

export class ConsumerGroup {
  groupEpoch = 0;
  metadataHash = 0n;
  targetEpoch = 0;
  readonly members = new Map<string, ConsumerMember>();
  readonly target = new Map<string, Target>();
  readonly resolvedRegexes = new Map<string, ResolvedRegex>();
  /** instance id -> member id. */
  private readonly staticMembers = new Map<string, string>();
  /** topic id -> partition -> epoch of the member that holds it (assigned or pending revocation). */
  private readonly partitionEpochs = new Map<string, Map<number, number>>();
  /** Set by DeleteGroups and by a conversion to a classic group. */
  dead = false;

  constructor(readonly groupId: string) {}

  clone(): ConsumerGroup {
    const g = new ConsumerGroup(this.groupId);
    g.groupEpoch = this.groupEpoch;
    g.metadataHash = this.metadataHash;
    g.targetEpoch = this.targetEpoch;
    for (const [k, v] of this.members) g.members.set(k, v);
    for (const [k, v] of this.target) g.target.set(k, v);
    for (const [k, v] of this.resolvedRegexes) g.resolvedRegexes.set(k, v);
    for (const [k, v] of this.staticMembers) g.staticMembers.set(k, v);
    for (const [k, v] of this.partitionEpochs) g.partitionEpochs.set(k, new Map(v));
    g.dead = this.dead;
    return g;
  }

  get state(): ConsumerGroupState {
    if (this.dead) return 'Dead';
    if (this.members.size === 0) return 'Empty';
    if (this.groupEpoch > this.targetEpoch) return 'Assigning';
    for (const m of this.members.values()) {
      if (m.state !== 'stable' || m.memberEpoch !== this.targetEpoch) return 'Reconciling';
    }
    return 'Stable';
  }

  memberIdForInstance(instanceId: string): string | undefined {
    return this.staticMembers.get(instanceId);
  }

  /** -1 when no member holds the partition. */
  currentPartitionEpoch(topicId: string, partition: number): number {
    return this.partitionEpochs.get(topicId)?.get(partition) ?? -1;
  }

  /** Adds or replaces a member, keeping the partition owners and the static index in step. */
  updateMember(m: ConsumerMember): void {
    const old = this.members.get(m.memberId);
    if (old !== undefined) this.releasePartitions(old);
    this.members.set(m.memberId, m);
    if (old?.instanceId != null && old.instanceId !== m.instanceId && this.staticMembers.get(old.instanceId) === m.memberId) {
      this.staticMembers.delete(old.instanceId);
    }
    if (m.instanceId !== null) this.staticMembers.set(m.instanceId, m.memberId);
    this.holdPartitions(m);
  }

  removeMember(memberId: string): ConsumerMember | undefined {
    const old = this.members.get(memberId);
    if (old === undefined) return undefined;
    this.releasePartitions(old);
    this.members.delete(memberId);
    this.target.delete(memberId);
    if (old.instanceId !== null && this.staticMembers.get(old.instanceId) === memberId) this.staticMembers.delete(old.instanceId);
    return old;
  }

  private holdPartitions(m: ConsumerMember): void {
    for (const a of [m.assigned, m.pendingRevocation]) {
      for (const [topicId, ps] of a) {
        let byPartition = this.partitionEpochs.get(topicId);
        if (byPartition === undefined) {
          byPartition = new Map();
          this.partitionEpochs.set(topicId, byPartition);
        }
        for (const p of ps.keys()) byPartition.set(p, m.memberEpoch);
      }
    }
  }

  private releasePartitions(m: ConsumerMember): void {
    for (const a of [m.assigned, m.pendingRevocation]) {
      for (const [topicId, ps] of a) {
        const byPartition = this.partitionEpochs.get(topicId);
        if (byPartition === undefined) continue;
        for (const p of ps.keys()) byPartition.delete(p);
        if (byPartition.size === 0) this.partitionEpochs.delete(topicId);
      }
    }
  }

  /** How many members use the classic protocol. */
  classicMemberCount(): number {
    let n = 0;
    for (const m of this.members.values()) if (m.classic !== null) n++;
    return n;
  }

  /** Kafka's allMembersUseClassicProtocolExcept: `memberId` is the only member on the consumer protocol. */
  allMembersUseClassicProtocolExcept(memberId: string): boolean {
    const m = this.members.get(memberId);
    return m !== undefined && m.classic === null && this.classicMemberCount() === this.members.size - 1;
  }

  /**
   * Whether a classic member with this protocol type and these protocol names
   * may join: the type is "consumer" and one name is supported by every
   * classic member already in (any name when there is none).
   */
  supportsClassicProtocols(protocolType: string, names: readonly string[]): boolean {
    if (protocolType !== 'consumer' || names.length === 0) return false;
    const classic = [...this.members.values()].filter((m) => m.classic !== null);
    if (classic.length === 0) return true;
    return names.some((name) => classic.every((m) => m.classic!.supportedProtocols.some((p) => p.name === name)));
  }

  /** Whether a partition of the member's target that it does not have yet is still held by another member. */
  waitingOnUnreleasedPartition(m: ConsumerMember): boolean {
    const target = this.target.get(m.memberId);
    if (target === undefined) return false;
    for (const [topicId, ps] of target) {
      const mine = m.assigned.get(topicId);
      for (const p of ps) {
        if (mine?.has(p) === true) continue;
        if (this.currentPartitionEpoch(topicId, p) !== -1) return true;
      }
    }
    return false;
  }

  /** Every partition held by two members at once (must never happen; tests check it). */
  doubleOwned(): string[] {
    const seen = new Map<string, string>();
    const doubles: string[] = [];
    for (const m of this.members.values()) {
      for (const a of [m.assigned, m.pendingRevocation]) {
        for (const [topicId, ps] of a) {
          for (const p of ps.keys()) {
            const k = `${topicId}:${p}`;
            if (seen.has(k) && seen.get(k) !== m.memberId) doubles.push(k);
            seen.set(k, m.memberId);
          }
        }
      }
    }
    return doubles;
  }
}

export function targetSize(t: Target): number {
  let n = 0;
  for (const ps of t.values()) n += ps.size;
  return n;
}

export function sameTarget(a: Target, b: Target): boolean {
  if (targetSize(a) !== targetSize(b)) return false;
  for (const [topicId, ps] of a) {
    const other = b.get(topicId);
    if (other === undefined) return false;
    for (const p of ps) if (!other.has(p)) return false;
  }
  return true;
}

/** Partitions of an assignment, without their epochs. */
export function partitionsOf(a: Assignment): Target {
  const t = new Map<string, Set<number>>();
  for (const [topicId, ps] of a) t.set(topicId, new Set(ps.keys()));
  return t;
}
