// Share group membership (KIP-932): ShareGroupHeartbeat and ShareGroupDescribe,
// as Kafka's GroupMetadataManager serves them for share groups.
// A member joins with epoch 0 and its subscribed topic names, then heartbeats
// with the epoch it was given; epoch -1 leaves. The group epoch moves on every
// change of membership, subscriptions or subscribed topics' partition counts,
// and at the next heartbeat of a member (as Kafka, which computes it only in a
// heartbeat: after a leave it waits for one) the simple assignor computes the
// target assignment, which members take at once (share-partitions need no
// revocation: several members may share one). A member that misses group.share.session.timeout.ms is removed
// and the records it holds are released. States: Empty, Stable (Dead once
// deleted).
// What persists, in the group's partition of __consumer_offsets (Kafka's
// records, share-group-records.ts): the group epoch (ShareGroupMetadata) and
// which share-partitions have state with the share coordinator
// (ShareGroupStatePartitionMetadata: initializing, initialized, deleting),
// written whenever they change and tombstoned when the group is deleted. They
// are replayed when the partition loads (a restart, or this broker becoming
// the coordinator), so initialised partitions are not initialised again and
// are assigned on a member's first heartbeat. Members and assignments are not
// persisted: a member unknown after a load gets UNKNOWN_MEMBER_ID and rejoins
// (the client does this by itself). A group whose partition is not served here
// answers NOT_COORDINATOR (COORDINATOR_LOAD_IN_PROGRESS while it loads).
// Every heartbeat initialises, with the share coordinator, the state of the
// subscribed partitions the group has not initialised yet (share-state-init.ts),
// asynchronously to the heartbeat as Kafka's GroupCoordinatorService.persisterInitialize
// is: the partitions are recorded initializing, then InitializeShareGroupState,
// then recorded initialized. Only initialised partitions are assigned: a member
// gets a new partition on the heartbeat after its initialisation, so no
// share-partition loads before its state exists.
import type { Clock } from '../common/clock.js';
import type { Scheduler } from '../common/scheduler.js';
import { KeyedTimers } from '../group/keyed-timers.js';
import { ErrorCode, KafkaError } from '../protocol/errors.js';
import { assignSimple } from './simple-assignor.js';
import { ShareStatePartitionMetadata, UNINITIALIZED_START_OFFSET } from './share-state-init.js';
import { appendErrorCode } from '../group/offsets-topic.js';
import { decodeShareGroupRecord, encodeShareGroupRecord, type EncodedRecord } from './share-group-records.js';

export interface ShareTopicsPort {
  byName(name: string): { topicId: string; partitionCount: number } | undefined;
  nameOf(topicId: string): string | undefined;
}

export interface ShareGroupConfig {
  sessionTimeoutMs(groupId: string): number;
  heartbeatIntervalMs(groupId: string): number;
  readonly maxSize: number;
}

export interface ShareMember {
  readonly memberId: string;
  memberEpoch: number;
  /** The epoch before the last one given: a heartbeat whose answer was lost still counts. */
  previousMemberEpoch: number;
  clientId: string;
  clientHost: string;
  rackId: string | null;
  subscribedTopicNames: string[];
  /** topic id -> partitions */
  assignment: Map<string, number[]>;
  /** The assignment last sent to the member, to send only changes. */
  sentAssignment: string;
}

export type ShareGroupState = 'Empty' | 'Stable';

export class ShareGroup {
  groupEpoch = 0;
  assignmentEpoch = 0;
  readonly members = new Map<string, ShareMember>();
  /** What the last assignment was computed from: subscribed topics and their partition counts. */
  metadataKey = '';
  /** Which share-partitions have state with the share coordinator (Kafka's ShareGroupStatePartitionMetadata). */
  readonly stateMetadata = new ShareStatePartitionMetadata();
  /** The InitializeShareGroupState calls and record writes in flight. */
  readonly initializations = new Set<Promise<void>>();
  /** What the log holds (or a write in flight carries): the group epoch, and the state metadata's fingerprint. */
  writtenEpoch = -1;
  writtenMetadata = new ShareStatePartitionMetadata().fingerprint();

  constructor(readonly groupId: string) {}

  get state(): ShareGroupState {
    return this.members.size === 0 ? 'Empty' : 'Stable';
  }

  /** Every subscribed topic-partition of the group (whether assigned or not). */
  subscribedTopicNames(): Set<string> {
    return new Set([...this.members.values()].flatMap((m) => m.subscribedTopicNames));
  }
}

export interface HeartbeatParams {
  readonly groupId: string;
  readonly memberId: string;
  readonly memberEpoch: number;
  readonly rackId: string | null;
  readonly subscribedTopicNames: readonly string[] | null;
  readonly clientId: string;
  readonly clientHost: string;
}

export interface HeartbeatResult {
  readonly memberId: string;
  readonly memberEpoch: number;
  readonly heartbeatIntervalMs: number;
  /** null: unchanged since the last answer. */
  readonly assignment: { topicId: string; partitions: number[] }[] | null;
}

/** One partition's answer to an initialisation. */
export interface InitializeOutcome {
  readonly topicId: string;
  readonly partition: number;
  readonly errorCode: number;
  readonly errorMessage: string | null;
}

/** The share coordinator as the group coordinator reaches it: InitializeShareGroupState of a group's partitions. */
export interface ShareStateInitializer {
  initialize(groupId: string, stateEpoch: number, startOffset: bigint, topics: readonly { topicId: string; partitions: readonly number[] }[]): Promise<InitializeOutcome[]>;
}

/** Where the group's records go: its partition of __consumer_offsets (the group coordinator's). */
export interface ShareGroupRecordSink {
  /** Appends in call order; resolves once durable (replicated, in a cluster). */
  append(groupId: string, records: readonly EncodedRecord[]): Promise<void>;
  /** NONE when the group's partition is served here and loaded, else its error code. */
  availability(groupId: string): number;
}

export interface ShareGroupCoordinatorOptions {
  readonly clock: Clock;
  readonly scheduler: Scheduler;
  readonly topics: ShareTopicsPort;
  readonly config: ShareGroupConfig;
  /** A group id used by a classic or consumer group cannot name a share group. */
  readonly otherGroupExists: (groupId: string) => boolean;
  /** Called when a member leaves or is removed: its acquired records go back. */
  readonly onMemberRemoved: (groupId: string, memberId: string) => void;
  readonly stateInitializer: ShareStateInitializer;
  /** group.share.initialize.retry.interval.ms: an initialisation older than this is started again. */
  readonly initializeRetryIntervalMs: number;
  readonly onInitializeError: (groupId: string, err: unknown) => void;
  /** Absent: records are not kept, every group is served (unit tests of membership alone). */
  readonly records?: ShareGroupRecordSink;
}

const LEAVE_EPOCH = -1;

function assignmentKey(a: ReadonlyMap<string, readonly number[]>): string {
  return [...a].sort(([x], [y]) => (x < y ? -1 : 1)).map(([t, ps]) => `${t}:${[...ps].sort((p, q) => p - q).join(',')}`).join(';');
}

export class ShareGroupCoordinator {
  private readonly groups = new Map<string, ShareGroup>();
  private readonly timers: KeyedTimers;

  private readonly records: ShareGroupRecordSink | null;

  constructor(private readonly options: ShareGroupCoordinatorOptions) {
    this.timers = new KeyedTimers(options.scheduler);
    this.records = options.records ?? null;
  }

  /** Throws NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS unless the group's partition is served here. */
  requireAvailable(groupId: string): void {
    const code = this.records?.availability(groupId) ?? ErrorCode.NONE;
    if (code !== ErrorCode.NONE) throw new KafkaError(code, code === ErrorCode.COORDINATOR_LOAD_IN_PROGRESS ? `The coordinator is loading group ${groupId}.` : `This broker is not the coordinator of group ${groupId}.`);
  }

  /**
   * Replay of a share-group record of __consumer_offsets (the group
   * coordinator's load): ShareGroupMetadata gives the group and its epoch,
   * ShareGroupStatePartitionMetadata its state sets; tombstones remove them.
   */
  replay(key: Buffer, value: Buffer | null): void {
    const r = decodeShareGroupRecord(key, value);
    switch (r.type) {
      case 'groupMetadata': {
        if (r.value === null) {
          const g = this.groups.get(r.groupId);
          if (g !== undefined) this.forgetGroup(g);
          return;
        }
        const g = this.getOrCreate(r.groupId);
        g.groupEpoch = Math.max(g.groupEpoch, r.value.epoch);
        g.assignmentEpoch = g.groupEpoch;
        g.writtenEpoch = g.groupEpoch;
        return;
      }
      case 'statePartitionMetadata': {
        if (r.value === null) {
          const g = this.groups.get(r.groupId);
          if (g === undefined) return;
          g.stateMetadata.load({ initializingTopics: [], initializedTopics: [], deletingTopics: [] }, this.options.clock.now());
          g.writtenMetadata = g.stateMetadata.fingerprint();
          return;
        }
        const g = this.getOrCreate(r.groupId);
        g.stateMetadata.load(r.value, this.options.clock.now());
        g.writtenMetadata = g.stateMetadata.fingerprint();
        return;
      }
      case 'other':
        return;
    }
  }

  /** The groups for which `owns` holds are no longer coordinated here (their partition moved or unloaded). */
  unload(owns: (groupId: string) => boolean): void {
    for (const g of [...this.groups.values()]) if (owns(g.groupId)) this.forgetGroup(g);
  }

  private forgetGroup(g: ShareGroup): void {
    for (const memberId of g.members.keys()) this.timers.cancel(this.sessionKey(g.groupId, memberId));
    this.groups.delete(g.groupId);
  }

  /** Writes the group's ShareGroupStatePartitionMetadata if it changed since the last write. */
  recordStateMetadata(g: ShareGroup): Promise<void> {
    if (this.records === null) return Promise.resolve();
    const fp = g.stateMetadata.fingerprint();
    if (fp === g.writtenMetadata) return Promise.resolve();
    g.writtenMetadata = fp;
    return this.append(g, [encodeShareGroupRecord({ type: 'statePartitionMetadata', groupId: g.groupId, value: g.stateMetadata.toRecord() })], () => {
      if (g.writtenMetadata === fp) g.writtenMetadata = '\u0000';
    });
  }

  /** Writes the group epoch if it moved since the last write. */
  private recordEpoch(g: ShareGroup): Promise<void> {
    const epoch = g.groupEpoch;
    if (this.records === null || epoch === g.writtenEpoch) return Promise.resolve();
    g.writtenEpoch = epoch;
    return this.append(g, [encodeShareGroupRecord({ type: 'groupMetadata', groupId: g.groupId, value: { epoch } })], () => {
      if (g.writtenEpoch === epoch) g.writtenEpoch = -1;
    });
  }

  private append(g: ShareGroup, records: readonly EncodedRecord[], onFailure: () => void): Promise<void> {
    if (this.records === null) return Promise.resolve();
    return this.records.append(g.groupId, records).catch((err: unknown) => {
      // The log does not have it: the next change writes the whole value again.
      onFailure();
      throw new KafkaError(appendErrorCode(err), `writing the records of share group ${g.groupId} failed: ${(err as Error).message}`, { cause: err });
    });
  }

  /** Writes what changed (epoch, state metadata) in the background; a failure is logged and written again on the next change. */
  private recordChanges(g: ShareGroup): void {
    if (this.records === null) return;
    const run = Promise.all([this.recordEpoch(g), this.recordStateMetadata(g)]).then(() => undefined);
    const tracked = run.catch((err: unknown) => this.options.onInitializeError(g.groupId, err)).finally(() => g.initializations.delete(tracked));
    g.initializations.add(tracked);
  }

  group(groupId: string): ShareGroup | undefined {
    return this.groups.get(groupId);
  }

  allGroups(): ShareGroup[] {
    return [...this.groups.values()];
  }

  /** Creates an empty group (AlterShareGroupOffsets on a new group id). */
  getOrCreate(groupId: string): ShareGroup {
    let g = this.groups.get(groupId);
    if (g === undefined) this.groups.set(groupId, (g = new ShareGroup(groupId)));
    return g;
  }

  heartbeat(p: HeartbeatParams): HeartbeatResult {
    if (p.groupId === '') throw new KafkaError(ErrorCode.INVALID_REQUEST, 'GroupId can\'t be empty.');
    if (p.memberId === '') throw new KafkaError(ErrorCode.INVALID_REQUEST, 'MemberId can\'t be empty.');
    if (p.memberEpoch < LEAVE_EPOCH) throw new KafkaError(ErrorCode.INVALID_REQUEST, `MemberEpoch is ${p.memberEpoch}, should be -1, 0 or positive.`);
    if (p.memberEpoch === 0 && (p.subscribedTopicNames === null || p.subscribedTopicNames.length === 0)) {
      throw new KafkaError(ErrorCode.INVALID_REQUEST, 'SubscribedTopicNames must be set in first request.');
    }
    if (!this.groups.has(p.groupId) && this.options.otherGroupExists(p.groupId)) {
      throw new KafkaError(ErrorCode.GROUP_ID_NOT_FOUND, `Group ${p.groupId} is not a share group.`);
    }
    this.requireAvailable(p.groupId);
    const interval = this.options.config.heartbeatIntervalMs(p.groupId);
    if (p.memberEpoch === LEAVE_EPOCH) {
      const g = this.groups.get(p.groupId);
      if (g === undefined || !g.members.has(p.memberId)) throw new KafkaError(ErrorCode.UNKNOWN_MEMBER_ID, `Member ${p.memberId} is not a member of group ${p.groupId}.`);
      this.removeMember(g, p.memberId);
      return { memberId: p.memberId, memberEpoch: LEAVE_EPOCH, heartbeatIntervalMs: 0, assignment: null };
    }
    const g = this.getOrCreate(p.groupId);
    let member = g.members.get(p.memberId);
    let changed = false;
    if (p.memberEpoch === 0) {
      if (member === undefined) {
        if (g.members.size >= this.options.config.maxSize) throw new KafkaError(ErrorCode.GROUP_MAX_SIZE_REACHED, `The share group has reached its maximum capacity of ${this.options.config.maxSize} members.`);
        member = { memberId: p.memberId, memberEpoch: 0, previousMemberEpoch: -1, clientId: p.clientId, clientHost: p.clientHost, rackId: p.rackId, subscribedTopicNames: [], assignment: new Map(), sentAssignment: '\u0000' };
        g.members.set(p.memberId, member);
        changed = true;
      }
      // A rejoin (after a restart of the client's session) gets its assignment again.
      member.sentAssignment = '\u0000';
    } else {
      if (member === undefined) throw new KafkaError(ErrorCode.UNKNOWN_MEMBER_ID, `Member ${p.memberId} is not a member of group ${p.groupId}.`);
      if (p.memberEpoch !== member.memberEpoch && p.memberEpoch !== member.previousMemberEpoch) throw new KafkaError(ErrorCode.FENCED_MEMBER_EPOCH, `The share group member has a different epoch (${member.memberEpoch}) than the one in the request (${p.memberEpoch}).`);
    }
    member.clientId = p.clientId;
    member.clientHost = p.clientHost;
    if (p.rackId !== null) member.rackId = p.rackId;
    if (p.subscribedTopicNames !== null) {
      const names = [...new Set(p.subscribedTopicNames)].sort();
      if (names.join('\u0000') !== member.subscribedTopicNames.join('\u0000')) {
        member.subscribedTopicNames = names;
        changed = true;
      }
    }
    if (this.refreshAssignment(g, changed)) changed = true;
    this.maybeInitializeState(g);
    this.recordChanges(g);
    if (member.memberEpoch !== g.assignmentEpoch) {
      member.previousMemberEpoch = member.memberEpoch;
      member.memberEpoch = g.assignmentEpoch;
    }
    // An answer to the previous epoch must carry the assignment again.
    if (p.memberEpoch !== member.memberEpoch) member.sentAssignment = '\u0000';
    this.timers.schedule(this.sessionKey(g.groupId, member.memberId), this.options.config.sessionTimeoutMs(g.groupId), () => this.expire(g.groupId, member.memberId));
    const key = assignmentKey(member.assignment);
    let assignment: HeartbeatResult['assignment'] = null;
    if (key !== member.sentAssignment) {
      member.sentAssignment = key;
      assignment = [...member.assignment].map(([topicId, partitions]) => ({ topicId, partitions: [...partitions] }));
    }
    return { memberId: member.memberId, memberEpoch: member.memberEpoch, heartbeatIntervalMs: interval, assignment };
  }

  /** Deletes an empty group (DeleteGroups): tombstones for its records, then it goes; NON_EMPTY_GROUP while it has members. */
  async deleteGroup(groupId: string): Promise<void> {
    const g = this.groups.get(groupId);
    if (g === undefined) throw new KafkaError(ErrorCode.GROUP_ID_NOT_FOUND, `Group ${groupId} not found.`);
    if (g.members.size > 0) throw new KafkaError(ErrorCode.NON_EMPTY_GROUP, `Group ${groupId} is not empty.`);
    await this.initialized(groupId);
    await this.append(g, [
      encodeShareGroupRecord({ type: 'statePartitionMetadata', groupId, value: null }),
      encodeShareGroupRecord({ type: 'groupMetadata', groupId, value: null }),
    ], () => undefined);
    if (this.groups.get(groupId) === g) this.forgetGroup(g);
  }

  close(): void {
    this.timers.cancelAll();
  }

  /** The group's epoch and state metadata reach the log (an admin operation's changes); rejects with the append's error code. */
  async record(g: ShareGroup): Promise<void> {
    await Promise.all([this.recordEpoch(g), this.recordStateMetadata(g)]);
  }

  /** Topics deleted since the group recorded them leave its state metadata, and the change is written (Kafka's maybeCleanupShareGroupState). */
  async removeDeletedTopics(g: ShareGroup): Promise<void> {
    if (g.stateMetadata.removeDeletedTopics((id) => this.options.topics.nameOf(id) !== undefined)) await this.recordStateMetadata(g);
  }

  /** A topic was deleted: the groups that recorded it drop it (Kafka's maybeCleanupShareGroupState on a metadata update). */
  topicDeleted(topicId: string): void {
    for (const g of this.groups.values()) {
      const m = g.stateMetadata;
      if (!m.initialized.has(topicId) && !m.initializing.has(topicId) && !m.deleting.has(topicId)) continue;
      const run = this.removeDeletedTopics(g);
      const tracked = run.catch((err: unknown) => this.options.onInitializeError(g.groupId, err)).finally(() => g.initializations.delete(tracked));
      g.initializations.add(tracked);
    }
  }

  get now(): number {
    return this.options.clock.now();
  }

  /** Resolves once the group's initialisations in flight are done (tests, admin operations). */
  async initialized(groupId: string): Promise<void> {
    const g = this.groups.get(groupId);
    while (g !== undefined && g.initializations.size > 0) await Promise.all([...g.initializations]);
  }

  /**
   * Kafka's maybeCreateInitializeShareGroupStateRequest and persisterInitialize:
   * the subscribed partitions not initialised yet become initializing, and the
   * share coordinator initialises them at the group epoch and start offset -1;
   * those it answered without error become initialized, the others leave the
   * initializing set (a later heartbeat tries again).
   */
  private maybeInitializeState(g: ShareGroup): void {
    const subscribed = new Map<string, { name: string; partitionCount: number }>();
    for (const name of g.subscribedTopicNames()) {
      const d = this.options.topics.byName(name);
      if (d !== undefined) subscribed.set(d.topicId, { name, partitionCount: d.partitionCount });
    }
    const now = this.options.clock.now();
    const plan = g.stateMetadata.plan(subscribed, (id) => this.options.topics.nameOf(id) !== undefined, now, this.options.initializeRetryIntervalMs);
    if (plan.length === 0) return;
    const stateEpoch = g.groupEpoch;
    // Recorded initializing before the share coordinator is asked (Kafka writes it with the heartbeat's records).
    const recorded = this.records === null ? null : this.recordStateMetadata(g);
    const run = (async () => {
      try {
        if (recorded !== null) await recorded;
      } catch (err) {
        for (const t of plan) g.stateMetadata.markUninitialized(t.topicId, t.partitions);
        this.options.onInitializeError(g.groupId, err);
        return;
      }
      let outcomes: InitializeOutcome[];
      try {
        outcomes = await this.options.stateInitializer.initialize(g.groupId, stateEpoch, UNINITIALIZED_START_OFFSET, plan.map((t) => ({ topicId: t.topicId, partitions: t.partitions })));
      } catch (err) {
        for (const t of plan) g.stateMetadata.markUninitialized(t.topicId, t.partitions);
        this.options.onInitializeError(g.groupId, err);
        await this.recordStateMetadata(g);
        return;
      }
      const at = this.options.clock.now();
      for (const t of plan) {
        const ok = t.partitions.filter((p) => outcomes.some((o) => o.topicId === t.topicId && o.partition === p && o.errorCode === ErrorCode.NONE));
        const failed = t.partitions.filter((p) => !ok.includes(p));
        if (ok.length > 0) g.stateMetadata.markInitialized(t.topicId, t.name, ok, at);
        if (failed.length > 0) g.stateMetadata.markUninitialized(t.topicId, failed);
      }
      await this.recordStateMetadata(g);
      const errors = outcomes.filter((o) => o.errorCode !== ErrorCode.NONE);
      if (errors.length > 0) this.options.onInitializeError(g.groupId, new KafkaError(errors[0]!.errorCode, `InitializeShareGroupState of ${errors.length} partition(s) failed: ${errors[0]!.errorMessage ?? errors[0]!.errorCode}`));
    })();
    const tracked = run.catch((err: unknown) => this.options.onInitializeError(g.groupId, err)).finally(() => g.initializations.delete(tracked));
    g.initializations.add(tracked);
  }

  private sessionKey(groupId: string, memberId: string): string {
    return `share-session\u0000${groupId}\u0000${memberId}`;
  }

  private expire(groupId: string, memberId: string): void {
    const g = this.groups.get(groupId);
    if (g === undefined || !g.members.has(memberId)) return;
    this.removeMember(g, memberId);
  }

  /**
   * A leave or an expired session moves the group epoch on; the target assignment
   * follows at the next heartbeat of a member, as Kafka computes it only in a
   * heartbeat (so an emptied group keeps its last assignment epoch, one behind).
   */
  private removeMember(g: ShareGroup, memberId: string): void {
    this.timers.cancel(this.sessionKey(g.groupId, memberId));
    g.members.delete(memberId);
    g.metadataKey = this.metadataKeyOf(g);
    g.groupEpoch++;
    this.recordChanges(g);
    this.options.onMemberRemoved(g.groupId, memberId);
  }

  /** Only partitions whose state is initialised are assigned (Kafka's initialized topics): their initialisation moves the epoch on. */
  private assignable(g: ShareGroup, topicId: string, partitionCount: number): number[] {
    return [...(g.stateMetadata.initialized.get(topicId)?.partitions ?? [])].filter((p) => p < partitionCount).sort((x, y) => x - y);
  }

  private metadataKeyOf(g: ShareGroup): string {
    return [...g.subscribedTopicNames()].sort().map((t) => {
      const d = this.options.topics.byName(t);
      return d === undefined ? `${t}:-` : `${t}:${d.topicId}:${d.partitionCount}:${this.assignable(g, d.topicId, d.partitionCount).join(',')}`;
    }).join(';');
  }

  /**
   * Moves the group epoch on when membership or topic metadata changed, and
   * recomputes the target assignment when the group epoch is ahead of it;
   * returns whether it did.
   */
  private refreshAssignment(g: ShareGroup, membershipChanged: boolean): boolean {
    const topics = [...g.subscribedTopicNames()].sort();
    const metadataKey = this.metadataKeyOf(g);
    if (membershipChanged || metadataKey !== g.metadataKey) {
      g.metadataKey = metadataKey;
      g.groupEpoch++;
    }
    if (g.groupEpoch === g.assignmentEpoch) return false;
    const assignable = (topicId: string, partitionCount: number): number[] => this.assignable(g, topicId, partitionCount);
    const members = [...g.members.values()].map((m) => ({
      memberId: m.memberId,
      topicIds: m.subscribedTopicNames.map((n) => this.options.topics.byName(n)?.topicId).filter((id): id is string => id !== undefined),
      current: m.assignment,
    }));
    const allowed = new Map<string, number[]>();
    for (const t of topics) {
      const d = this.options.topics.byName(t);
      if (d !== undefined) allowed.set(d.topicId, assignable(d.topicId, d.partitionCount));
    }
    const target = assignSimple(members, (id) => allowed.get(id) ?? []);
    for (const m of g.members.values()) m.assignment = target.get(m.memberId) ?? new Map();
    g.assignmentEpoch = g.groupEpoch;
    return true;
  }
}
