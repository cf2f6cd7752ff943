// The classic group coordinator: the one object handlers talk to. It gates
// every call on the load of __consumer_offsets (COORDINATOR_LOAD_IN_PROGRESS
// until replayed), validates group ids and session timeouts, runs the
// rebalance protocol through ClassicGroupManager, and owns committed offsets:
// every commit, deletion and expiry is appended to the group's partition of
// __consumer_offsets before it is acknowledged or visible.
import type { Clock } from '../common/clock.js';
import { systemClock } from '../common/clock.js';
import { silentLogger, type Logger } from '../common/logger.js';
import { ErrorCode } from '../protocol/errors.js';
import { systemScheduler, type Scheduler, type TimerHandle } from '../common/scheduler.js';
import type { ClassicGroup } from './classic-group.js';
import { ClassicGroupManager, type GroupRecordSink } from './classic-group-manager.js';
import { describeClassicGroup, joinError, syncError } from './results.js';
import { defaultGroupCoordinatorConfig, type GroupCoordinatorConfig } from './config.js';
import {
  decodeCoordinatorRecord,
  encodeCoordinatorRecord,
  type CoordinatorRecord,
  type OffsetAndMetadata,
} from './group-records.js';
import { parseGroupState, type GroupState } from './group-state.js';
import { InflightWrites, KeyedMutex } from './keyed-mutex.js';
import { KeyedTimers } from './keyed-timers.js';
import { PendingTxnOffsets, acceptTxnOffsets } from './txn-offsets.js';
import { expirationBase, groupOffsets, offsetTombstone, validateOffsetCommit } from './offset-rules.js';
import { isOffsetExpired, OffsetStore } from './offset-store.js';
import { appendErrorCode, OffsetsTopicWriter, partitionForGroup, type CommittedWait, type OffsetsTopicLog, type OffsetsTopicRecord } from './offsets-topic.js';
import { randomBytes } from 'node:crypto';
import { decodeVersioned } from '../protocol/messages/records/frame.js';
import { defaultConsumerGroupConfig, type ConsumerGroupConfig } from './consumer/config.js';
import { ConsumerGroupManager } from './consumer/consumer-group-manager.js';
import { ConsumerGroupOps } from './consumer-group-ops.js';
import { decodeConsumerGroupRecord, encodeConsumerGroupRecord, isConsumerGroupRecordType } from './consumer/consumer-records.js';
import {
  committedPartitionIds,
  describeAsClassic,
  validateConsumerOffsetCommit,
  validateConsumerOffsetFetch,
} from './consumer/consumer-answers.js';
import { noTopics, type ConsumerHeartbeatParams, type ConsumerHeartbeatResult, type ConsumerTopicsView, type DescribedConsumerGroup } from './consumer/types.js';
import type {
  DeleteGroupsResult,
  DescribedGroup,
  HeartbeatParams,
  JoinGroupParams,
  JoinGroupResult,
  LeaveGroupResult,
  LeavingMember,
  ListGroupsResult,
  OffsetCommitParams,
  OffsetCommitResult,
  OffsetDeleteParams,
  OffsetDeleteResult,
  OffsetFetchGroupParams,
  OffsetFetchGroupResult,
  SyncGroupParams,
  SyncGroupResult,
} from './types.js';

export interface GroupCoordinatorOptions {
  readonly log: OffsetsTopicLog;
  /**
   * In a cluster: this coordinator serves only the __consumer_offsets
   * partitions it is told to load (loadPartition, when this broker becomes
   * their leader) and drops them again (unloadPartition). Alone (false), it
   * loads every partition at start().
   */
  readonly partitioned?: boolean;
  /** In a cluster: an append is answered once the ISR has it (acks=all); a failure reaches the client as COORDINATOR_NOT_AVAILABLE / NOT_COORDINATOR. */
  readonly committed?: CommittedWait;
  readonly config?: Partial<GroupCoordinatorConfig>;
  readonly clock?: Clock;
  readonly scheduler?: Scheduler;
  readonly logger?: Logger;
  /** KIP-848 settings (group.consumer.*). */
  readonly consumerConfig?: Partial<ConsumerGroupConfig>;
  /** The topics consumer groups subscribe to (names, ids, partition counts). */
  readonly topics?: () => ConsumerTopicsView;
  /** Member ids for ConsumerGroupHeartbeat v0 joins without one. */
  readonly newMemberId?: () => string;
}

/**
 * Share groups (KIP-932, broker/share/) keep their records in __consumer_offsets
 * through this coordinator: it replays the records of their key types to the
 * listener as it loads a partition, and tells it when a partition's groups go.
 */
export interface ShareGroupRecordListener {
  /** A record of a share-group key type (value null: tombstone), in log order. */
  replay(key: Buffer, value: Buffer | null): void;
  /** The groups for which `owns` holds are no longer served here (their partition unloaded). */
  unload(owns: (groupId: string) => boolean): void;
}

/** Kafka's share-group record types: ShareGroupMetadata (11) to ShareGroupStatePartitionMetadata (15). */
export const SHARE_GROUP_RECORD_TYPES: ReadonlySet<number> = new Set([11, 12, 13, 14, 15]);

type Phase = 'loading' | 'active' | 'closed';
/** A __consumer_offsets partition this coordinator serves (partitioned mode). */
type PartitionLoad = { readonly state: 'loading' | 'loaded'; readonly token: number };

export class GroupCoordinator {
  readonly config: GroupCoordinatorConfig;
  private readonly clock: Clock;
  private readonly scheduler: Scheduler;
  private readonly logger: Logger;
  private readonly log: OffsetsTopicLog;
  private readonly writer: OffsetsTopicWriter;
  private readonly timers: KeyedTimers;
  private readonly manager: ClassicGroupManager;
  /** KIP-848 consumer groups; a group id names a classic group or a consumer group, never both. */
  readonly consumer: ConsumerGroupManager;
  readonly consumerConfig: ConsumerGroupConfig;
  private readonly topicsView: () => ConsumerTopicsView;
  private readonly consumerOps: ConsumerGroupOps;
  private readonly offsets = new OffsetStore();
  private readonly pendingTxnOffsets = new PendingTxnOffsets();
  private readonly locks = new KeyedMutex();
  private readonly inflightCommits = new InflightWrites();
  private phase: Phase = 'loading';
  private expiryTimer: TimerHandle | null = null;
  private expiryRun: Promise<void> | null = null;
  private readonly partitioned: boolean;
  private readonly owned = new Map<number, PartitionLoad>();
  private nextLoadToken = 1;
  private shareListener: ShareGroupRecordListener | null = null;
  /** Share-group records replayed before a listener was attached (the broker starts share groups after this coordinator). */
  private shareBacklog: { key: Buffer; value: Buffer | null }[] = [];

  constructor(options: GroupCoordinatorOptions) {
    this.config = { ...defaultGroupCoordinatorConfig, ...options.config };
    this.clock = options.clock ?? systemClock;
    this.scheduler = options.scheduler ?? systemScheduler;
    this.logger = options.logger ?? silentLogger();
    this.log = options.log;
    this.partitioned = options.partitioned ?? false;
    this.writer = new OffsetsTopicWriter(options.log, {}, options.committed);
    this.timers = new KeyedTimers(this.scheduler);
    const sink: GroupRecordSink = {
      write: (groupId, records) => this.write(groupId, records),
      barrier: (groupId) => this.writer.barrier(this.partitionFor(groupId)),
    };
    this.manager = new ClassicGroupManager({
      config: this.config,
      clock: this.clock,
      timers: this.timers,
      sink,
      log: this.logger,
    });
    this.consumerConfig = { ...defaultConsumerGroupConfig, ...options.consumerConfig };
    this.topicsView = options.topics ?? (() => noTopics);
    this.consumer = new ConsumerGroupManager({
      config: this.consumerConfig,
      clock: this.clock,
      timers: this.timers,
      sink: {
        write: (groupId, records, prefix) => this.writer.append(this.partitionFor(groupId), [...(prefix ?? []), ...records.map(encodeConsumerGroupRecord)]),
        locked: (groupId, fn) => this.locks.run(groupId, fn),
      },
      topics: this.topicsView,
      newMemberId: options.newMemberId ?? (() => randomBytes(16).toString('base64url')),
      log: this.logger,
    });
    this.consumerOps = new ConsumerGroupOps({
      consumer: this.consumer,
      classicGroups: this.manager.groups,
      classic: this.manager,
      classicMaxSize: this.config.groupMaxSize,
      barrier: (groupId) => this.writer.barrier(this.partitionFor(groupId)),
      offsets: this.offsets,
      locks: this.locks,
      append: (groupId, records) => this.writer.append(this.partitionFor(groupId), records),
      topics: this.topicsView,
      unavailable: (groupId) => this.unavailable(groupId),
      clock: this.clock,
      offsetsRetentionMs: this.config.offsetsRetentionMs,
      logger: this.logger,
    });
  }

  /** The __consumer_offsets partition that holds the group's records. */
  partitionFor(groupId: string): number {
    return partitionForGroup(groupId, this.config.offsetsTopicNumPartitions);
  }

  get isLoaded(): boolean {
    return this.phase === 'active';
  }

  /**
   * Replays every partition of __consumer_offsets (tombstones delete), then
   * starts the loaded members' session timers and the offset expiry task.
   * Until it resolves, every call answers COORDINATOR_LOAD_IN_PROGRESS.
   */
  async start(): Promise<void> {
    if (this.phase !== 'loading') throw new Error(`GroupCoordinator cannot start when ${this.phase}`);
    if (this.partitioned) {
      // Partitions come with leadership (loadPartition); until then every group answers NOT_COORDINATOR.
      this.phase = 'active';
      this.scheduleExpiry();
      return;
    }
    let records = 0;
    for (let p = 0; p < this.config.offsetsTopicNumPartitions; p++) records += await this.replayPartition(p, () => true);
    if ((this.phase as Phase) === 'closed') return;
    // Offsets replayed before their consumer group's records made an empty simple classic group for it.
    for (const groupId of this.consumer.groups.keys()) {
      if (this.manager.groups.get(groupId)?.state === 'Empty') this.manager.groups.delete(groupId);
    }
    this.manager.startLoadedGroups();
    this.consumer.startLoadedGroups();
    this.phase = 'active';
    this.scheduleExpiry();
    this.logger.info({ groups: this.manager.groups.size, records }, 'group coordinator loaded');
  }

  /** Replays one partition's records while `current()` holds; returns how many records it read. */
  private async replayPartition(p: number, current: () => boolean): Promise<number> {
    let records = 0;
    for await (const raw of this.log.readAll(p)) {
      if (!current()) break;
      records++;
      if (raw.producerId !== undefined && raw.marker !== undefined) {
        this.replayTxnEnd(raw.producerId, raw.marker === 'COMMIT');
        continue;
      }
      let record: CoordinatorRecord;
      try {
        record = decodeCoordinatorRecord(raw);
        if (record.type === 'unknown' && SHARE_GROUP_RECORD_TYPES.has(record.keyVersion) && raw.producerId === undefined) {
          this.replayShare(raw.key, raw.value);
          continue;
        }
        if (record.type === 'unknown' && isConsumerGroupRecordType(record.keyVersion) && raw.producerId === undefined) {
          this.consumer.replay(decodeConsumerGroupRecord(record.keyVersion, decodeVersioned(raw.key).body, raw.value));
          continue;
        }
      } catch (err) {
        this.logger.warn({ err, partition: p }, 'skipping undecodable __consumer_offsets record');
        continue;
      }
      if (raw.producerId !== undefined) {
        // A TxnOffsetCommit: pending until its transaction's marker.
        if (record.type === 'offsetCommit' && record.value !== null) {
          this.pendingTxnOffsets.add(raw.producerId, record.groupId, { topic: record.topic, partition: record.partition, value: record.value });
        }
        continue;
      }
      this.replay(record);
    }
    return records;
  }

  /**
   * Partitioned mode: this broker became the leader of __consumer_offsets
   * partition `p`. Its groups answer COORDINATOR_LOAD_IN_PROGRESS until the
   * partition is replayed, then are served (members must heartbeat within
   * their session timeout, as after Kafka's load). Resolves when loaded, or
   * when unloaded meanwhile.
   */
  async loadPartition(p: number): Promise<void> {
    if (!this.partitioned || this.phase === 'closed' || this.owned.has(p)) return;
    const token = this.nextLoadToken++;
    this.owned.set(p, { state: 'loading', token });
    const current = (): boolean => this.owned.get(p)?.token === token && this.phase !== 'closed';
    let records = 0;
    try {
      records = await this.replayPartition(p, current);
    } catch (err) {
      this.logger.warn({ err, partition: p }, 'could not load __consumer_offsets partition; its groups stay unavailable');
      if (current()) this.owned.delete(p);
      this.dropPartitionGroups(p);
      throw err;
    }
    if (!current()) {
      // Unloaded while replaying: drop what the replay added after the unload.
      this.dropPartitionGroups(p);
      return;
    }
    const ofPartition = (groupId: string): boolean => this.partitionFor(groupId) === p;
    // As after a full load: offsets replayed before their consumer group's records made an empty simple classic group.
    for (const groupId of this.consumer.groups.keys()) {
      if (ofPartition(groupId) && this.manager.groups.get(groupId)?.state === 'Empty') this.manager.groups.delete(groupId);
    }
    this.manager.startLoadedGroups(ofPartition);
    this.consumer.startLoadedGroups(ofPartition);
    this.owned.set(p, { state: 'loaded', token });
    this.logger.info({ partition: p, records }, 'group coordinator loaded __consumer_offsets partition');
  }

  /**
   * Partitioned mode: leadership of partition `p` went (or this broker lost
   * its cluster session). Its groups are dropped from memory, parked joins
   * and syncs are answered NOT_COORDINATOR, and later calls get
   * NOT_COORDINATOR, so clients find the new coordinator.
   */
  unloadPartition(p: number): void {
    if (!this.owned.delete(p)) return;
    this.dropPartitionGroups(p);
    this.logger.info({ partition: p }, 'group coordinator unloaded __consumer_offsets partition');
  }

  /** The partitions loaded or loading (partitioned mode), for tests and tools. */
  ownedPartitions(): ReadonlyMap<number, 'loading' | 'loaded'> {
    return new Map([...this.owned].map(([p, l]) => [p, l.state] as const));
  }

  private dropPartitionGroups(p: number): void {
    const ofPartition = (groupId: string): boolean => this.partitionFor(groupId) === p;
    this.shareListener?.unload(ofPartition);
    this.manager.unloadGroups(ofPartition, ErrorCode.NOT_COORDINATOR);
    for (const groupId of [...this.consumer.groups.keys()]) if (ofPartition(groupId)) this.consumer.forget(groupId);
    for (const groupId of this.offsets.groupIds()) if (ofPartition(groupId)) this.offsets.removeGroup(groupId);
    this.pendingTxnOffsets.dropGroups(ofPartition);
  }

  /** Share groups attach here: what was replayed so far reaches the listener at once, later loads as they come. */
  attachShareGroups(listener: ShareGroupRecordListener): void {
    this.shareListener = listener;
    const backlog = this.shareBacklog;
    this.shareBacklog = [];
    for (const r of backlog) listener.replay(r.key, r.value);
  }

  private replayShare(key: Buffer, value: Buffer | null): void {
    if (this.shareListener === null) this.shareBacklog.push({ key, value });
    else this.shareListener.replay(key, value);
  }

  /** Appends share-group records to the group's partition, in call order; resolves once durable (replicated, in a cluster). */
  appendShareRecords(groupId: string, records: readonly OffsetsTopicRecord[]): Promise<void> {
    return this.writer.append(this.partitionFor(groupId), records);
  }

  /** NONE when a share group's calls can be served here, else NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS. */
  shareGroupAvailability(groupId: string): number {
    return this.unavailable(groupId);
  }

  /** Stops timers and answers parked joins/syncs with NOT_COORDINATOR. */
  async close(): Promise<void> {
    this.phase = 'closed';
    if (this.expiryTimer !== null) this.scheduler.clearTimeout(this.expiryTimer);
    this.expiryTimer = null;
    this.manager.shutdown(ErrorCode.NOT_COORDINATOR);
    await this.expiryRun;
    for (let p = 0; p < this.config.offsetsTopicNumPartitions; p++) await this.writer.barrier(p);
  }

  private replay(record: CoordinatorRecord): void {
    switch (record.type) {
      case 'offsetCommit':
        if (record.value === null) {
          this.offsets.remove(record.groupId, record.topic, record.partition);
        } else {
          // Offsets committed outside group management create a "simple" group, as in Kafka.
          if (!this.manager.groups.has(record.groupId) && !this.consumer.groups.has(record.groupId)) this.manager.createGroup(record.groupId);
          this.offsets.put(record.groupId, record.topic, record.partition, record.value);
        }
        return;
      case 'groupMetadata':
        if (record.value === null) this.manager.groups.delete(record.groupId);
        else if (this.consumer.groups.has(record.groupId)) {
          // Written by a classic rebalance that raced the group's upgrade (it landed after the conversion): the consumer group stands, as in memory.
          this.logger.debug({ groupId: record.groupId }, 'ignoring a classic group record of a consumer group');
        } else this.manager.loadGroup(record.groupId, record.value);
        return;
      case 'unknown':
        this.logger.debug({ keyVersion: record.keyVersion }, 'ignoring non-classic group record');
        return;
    }
  }

  /** A transaction's marker: its pending offsets become committed, or are dropped. */
  private replayTxnEnd(producerId: bigint, committed: boolean): void {
    const byGroup = this.pendingTxnOffsets.take(producerId);
    if (!committed) return;
    for (const [groupId, offsets] of byGroup) {
      for (const o of offsets) this.replay({ type: 'offsetCommit', groupId, topic: o.topic, partition: o.partition, value: o.value });
    }
  }

  private write(groupId: string, records: readonly CoordinatorRecord[]): Promise<void> {
    return this.writer.append(this.partitionFor(groupId), records.map(encodeCoordinatorRecord));
  }

  /**
   * NONE when calls for the group can be served, else the code its answer
   * carries. Without a group id (ListGroups): whether every partition served is loaded.
   */
  private unavailable(groupId?: string): number {
    switch (this.phase) {
      case 'loading':
        return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS;
      case 'closed':
        return ErrorCode.NOT_COORDINATOR;
      case 'active':
        break;
    }
    if (!this.partitioned) return ErrorCode.NONE;
    if (groupId === undefined) {
      for (const l of this.owned.values()) if (l.state === 'loading') return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS;
      return ErrorCode.NONE;
    }
    switch (this.owned.get(this.partitionFor(groupId))?.state) {
      case 'loaded':
        return ErrorCode.NONE;
      case 'loading':
        return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS;
      case undefined:
        return ErrorCode.NOT_COORDINATOR;
    }
  }

  /** Whether the group's partition is served here and loaded (always, alone). */
  private servesGroup(groupId: string): boolean {
    return !this.partitioned || this.owned.get(this.partitionFor(groupId))?.state === 'loaded';
  }

  // ================================================================ membership

  async joinGroup(p: JoinGroupParams): Promise<JoinGroupResult> {
    const unavailable = this.unavailable(p.groupId);
    if (unavailable !== ErrorCode.NONE) return joinError(p.memberId, unavailable);
    if (p.groupId === '') return joinError(p.memberId, ErrorCode.INVALID_GROUP_ID);
    if (
      p.sessionTimeoutMs < this.config.groupMinSessionTimeoutMs ||
      p.sessionTimeoutMs > this.config.groupMaxSessionTimeoutMs
    ) {
      return joinError(p.memberId, ErrorCode.INVALID_SESSION_TIMEOUT);
    }
    if (this.consumer.groups.has(p.groupId)) {
      const answered = await this.consumerOps.classicJoin(p);
      if (answered !== null) return answered;
    }
    return this.manager.join(p);
  }

  async syncGroup(p: SyncGroupParams): Promise<SyncGroupResult> {
    const unavailable = this.unavailable(p.groupId);
    if (unavailable !== ErrorCode.NONE) return syncError(unavailable);
    if (p.groupId === '') return syncError(ErrorCode.INVALID_GROUP_ID);
    return this.consumerOps.classicSync(p) ?? this.manager.sync(p);
  }

  heartbeat(p: HeartbeatParams): number {
    const unavailable = this.unavailable(p.groupId);
    if (unavailable !== ErrorCode.NONE) return unavailable;
    if (p.groupId === '') return ErrorCode.INVALID_GROUP_ID;
    return this.consumerOps.classicHeartbeat(p) ?? this.manager.heartbeat(p);
  }

  async leaveGroup(groupId: string, members: readonly LeavingMember[]): Promise<LeaveGroupResult> {
    const unavailable = this.unavailable(groupId);
    if (unavailable !== ErrorCode.NONE) return { errorCode: unavailable, members: [] };
    if (groupId === '') return { errorCode: ErrorCode.INVALID_GROUP_ID, members: [] };
    if (this.consumer.groups.has(groupId)) {
      const answered = await this.consumerOps.classicLeave(groupId, members);
      if (answered !== null) return answered;
    }
    return this.manager.leave(groupId, members);
  }

  // ================================================================ consumer groups (KIP-848)

  /** ConsumerGroupHeartbeat (see ConsumerGroupOps.heartbeat). */
  consumerGroupHeartbeat(p: ConsumerHeartbeatParams): Promise<ConsumerHeartbeatResult> {
    return this.consumerOps.heartbeat(p);
  }

  /** ConsumerGroupDescribe: GROUP_ID_NOT_FOUND for unknown and classic groups (the admin client then asks DescribeGroups). */
  consumerGroupDescribe(groupIds: readonly string[]): DescribedConsumerGroup[] {
    return this.consumerOps.describe(groupIds);
  }

  // ================================================================ offsets

  async commitOffsets(p: OffsetCommitParams): Promise<OffsetCommitResult> {
    const allWith = (errorCode: number): OffsetCommitResult => ({
      topics: p.topics.map((t) => ({
        name: t.name,
        partitions: t.partitions.map((x) => ({ partitionIndex: x.partitionIndex, errorCode })),
      })),
    });
    const unavailable = this.unavailable(p.groupId);
    if (unavailable !== ErrorCode.NONE) return allWith(unavailable);
    if (p.groupId === '') return allWith(ErrorCode.INVALID_GROUP_ID);
    const staged = await this.locks.run(p.groupId, async (): Promise<{ result: OffsetCommitResult; applied: Promise<void> }> => {
      const rejected = (errorCode: number) => ({ result: allWith(errorCode), applied: Promise.resolve() });
      const consumerGroup = this.consumer.groups.get(p.groupId);
      let classicGroup = this.manager.groups.get(p.groupId);
      let created = false;
      if (consumerGroup !== undefined) {
        const partitions = committedPartitionIds(this.topicsView(), p.topics);
        const invalid = validateConsumerOffsetCommit(consumerGroup, { memberId: p.memberId, memberEpoch: p.generationId, apiVersion: p.apiVersion ?? 9, transactional: false }, partitions);
        if (invalid !== ErrorCode.NONE) return rejected(invalid);
      } else {
        if (classicGroup === undefined) {
          if (p.generationId >= 0) {
            return rejected(p.groupIdNotFoundSupported ? ErrorCode.GROUP_ID_NOT_FOUND : ErrorCode.ILLEGAL_GENERATION);
          }
          // Admin tools and assign()-based consumers commit into a "simple" group.
          classicGroup = this.manager.createGroup(p.groupId);
          created = true;
        }
        const invalid = validateOffsetCommit(classicGroup, p);
        if (invalid !== ErrorCode.NONE) return rejected(invalid);
        if (classicGroup.state === 'Stable' || classicGroup.state === 'PreparingRebalance') {
          // A commit keeps the member's session alive, as in Kafka.
          const member = classicGroup.member(p.memberId);
          if (member !== undefined) this.manager.rescheduleHeartbeat(classicGroup, member);
        }
      }
      const group = classicGroup;
      const now = this.clock.now();
      const expireTimestampMs = p.retentionTimeMs === -1 ? null : now + p.retentionTimeMs;
      const result: OffsetCommitResult = { topics: [] };
      const accepted: { topic: string; partition: number; value: OffsetAndMetadata; response: { errorCode: number } }[] = [];
      for (const t of p.topics) {
        const partitions: { partitionIndex: number; errorCode: number }[] = [];
        result.topics.push({ name: t.name, partitions });
        for (const x of t.partitions) {
          const metadata = x.committedMetadata ?? '';
          const response = { partitionIndex: x.partitionIndex, errorCode: ErrorCode.NONE as number };
          partitions.push(response);
          if (metadata.length > this.config.offsetMetadataMaxBytes) {
            response.errorCode = ErrorCode.OFFSET_METADATA_TOO_LARGE;
            continue;
          }
          accepted.push({
            topic: t.name,
            partition: x.partitionIndex,
            value: { committedOffset: x.committedOffset, leaderEpoch: x.committedLeaderEpoch, metadata, commitTimestampMs: now, expireTimestampMs },
            response,
          });
        }
      }
      const dropIfUnused = (): void => {
        if (created && group !== undefined && group.state === 'Empty' && !this.offsets.hasOffsets(p.groupId) && this.manager.groups.get(p.groupId) === group && !this.inflightCommits.has(p.groupId)) {
          this.manager.groups.delete(p.groupId);
        }
      };
      if (accepted.length === 0) {
        dropIfUnused();
        return { result, applied: Promise.resolve() };
      }
      // Queued under the lock (records land in lock order), written after it (one group's commits share appends).
      const written = this.write(p.groupId, accepted.map((a) => ({ type: 'offsetCommit', groupId: p.groupId, topic: a.topic, partition: a.partition, value: a.value })));
      // Writes settle in call order, so these run in lock order too.
      const applied = written.then(
        () => {
          this.inflightCommits.end(p.groupId);
          for (const a of accepted) this.offsets.put(p.groupId, a.topic, a.partition, a.value);
        },
        (err: unknown) => {
          this.inflightCommits.end(p.groupId);
          this.logger.warn({ err, groupId: p.groupId }, 'failed to persist offset commit');
          const code = appendErrorCode(err);
          for (const a of accepted) a.response.errorCode = code;
          dropIfUnused();
        },
      );
      this.inflightCommits.begin(p.groupId, applied);
      return { result, applied };
    });
    await staged.applied;
    return staged.result;
  }

  /**
   * TxnOffsetCommit: validated as a commit (generation -1 skips the member
   * checks, as Kafka does for transactional commits), written to the group's
   * partition as a transactional batch of the producer, then held pending
   * until the transaction's marker (`completeTxnOffsets`, or the replay).
   */
  async txnCommitOffsets(p: OffsetCommitParams & { readonly producerId: bigint; readonly producerEpoch: number }): Promise<OffsetCommitResult> {
    const allWith = (errorCode: number): OffsetCommitResult => ({
      topics: p.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((x) => ({ partitionIndex: x.partitionIndex, errorCode })) })),
    });
    const unavailable = this.unavailable(p.groupId);
    if (unavailable !== ErrorCode.NONE) return allWith(unavailable);
    if (p.groupId === '') return allWith(ErrorCode.INVALID_GROUP_ID);
    const group = this.manager.groups.get(p.groupId);
    const consumerGroup = this.consumer.groups.get(p.groupId);
    if (consumerGroup !== undefined) {
      const partitions = committedPartitionIds(this.topicsView(), p.topics);
      const invalid = validateConsumerOffsetCommit(consumerGroup, { memberId: p.memberId, memberEpoch: p.generationId, apiVersion: p.apiVersion ?? 9, transactional: true }, partitions);
      if (invalid !== ErrorCode.NONE) return allWith(invalid);
    } else if (group !== undefined && p.generationId >= 0) {
      const invalid = validateOffsetCommit(group, p);
      if (invalid !== ErrorCode.NONE) return allWith(invalid);
    } else if (group === undefined && p.generationId >= 0) {
      return allWith(ErrorCode.ILLEGAL_GENERATION);
    }
    const { result, accepted } = acceptTxnOffsets(p, this.clock.now(), this.config.offsetMetadataMaxBytes);
    if (accepted.length === 0) return result;
    try {
      // Written as a transactional batch of the producer: the transaction's marker in this partition decides it.
      const records = accepted.map((a) => encodeCoordinatorRecord({ type: 'offsetCommit', groupId: p.groupId, topic: a.topic, partition: a.partition, value: a.value }));
      await this.writer.appendTransactional(this.partitionFor(p.groupId), records, { producerId: p.producerId, producerEpoch: p.producerEpoch });
    } catch (err) {
      this.logger.warn({ err, groupId: p.groupId }, 'failed to persist transactional offset commit');
      const code = appendErrorCode(err);
      for (const t of result.topics) for (const x of t.partitions) if (x.errorCode === ErrorCode.NONE) x.errorCode = code;
      return result;
    }
    for (const a of accepted) this.pendingTxnOffsets.add(p.producerId, p.groupId, a);
    return result;
  }

  /**
   * The end of a producer's transaction, once its marker is in the group's
   * partition: its pending offsets become committed, or are dropped.
   */
  async completeTxnOffsets(producerId: bigint, committed: boolean): Promise<void> {
    this.replayTxnEnd(producerId, committed);
  }

  /** Whether an open transaction holds an offset for the partition (OffsetFetch requireStable). */
  hasPendingTxnOffset(groupId: string, topic: string, partition: number): boolean {
    return this.pendingTxnOffsets.isPending(groupId, topic, partition);
  }

  /** OffsetFetch for one or more groups; an unknown group answers -1 for every partition, without error. */
  fetchOffsets(groups: readonly OffsetFetchGroupParams[]): OffsetFetchGroupResult[] {
    return groups.map((g) => {
      const unavailable = this.unavailable(g.groupId);
      if (unavailable !== ErrorCode.NONE) return { groupId: g.groupId, errorCode: unavailable, topics: [] };
      if (g.groupId === '') return { groupId: g.groupId, errorCode: ErrorCode.INVALID_GROUP_ID, topics: [] };
      const consumerGroup = this.consumer.groups.get(g.groupId);
      if (consumerGroup !== undefined) {
        const invalid = validateConsumerOffsetFetch(consumerGroup, g.memberId ?? null, g.memberEpoch ?? -1);
        if (invalid !== ErrorCode.NONE) return { groupId: g.groupId, errorCode: invalid, topics: [] };
        return groupOffsets(this.offsets, g, true);
      }
      const group = this.manager.groups.get(g.groupId);
      return groupOffsets(this.offsets, g, group !== undefined && group.state !== 'Dead');
    });
  }

  /** OffsetDelete: only for Empty groups, or for topics a "consumer" group is not subscribed to. */
  async deleteOffsets(p: OffsetDeleteParams): Promise<OffsetDeleteResult> {
    const unavailable = this.unavailable(p.groupId);
    if (unavailable !== ErrorCode.NONE) return { errorCode: unavailable, topics: [] };
    if (p.groupId === '') return { errorCode: ErrorCode.INVALID_GROUP_ID, topics: [] };
    return this.locks.run(p.groupId, async () => {
      await this.inflightCommits.settled(p.groupId);
      const consumerGroup = this.consumer.groups.get(p.groupId);
      const group = consumerGroup === undefined ? this.manager.groups.get(p.groupId) : { state: consumerGroup.state, isSubscribedToTopic: (topic: string) => this.consumer.isSubscribedToTopic(consumerGroup, topic), usesConsumerProtocol: () => true };
      if (group === undefined || group.state === 'Dead') return { errorCode: ErrorCode.GROUP_ID_NOT_FOUND, topics: [] };
      if (group.state !== 'Empty' && !group.usesConsumerProtocol()) {
        return { errorCode: ErrorCode.NON_EMPTY_GROUP, topics: [] };
      }
      const result: OffsetDeleteResult = { errorCode: ErrorCode.NONE, topics: [] };
      const tombstones: { topic: string; partition: number }[] = [];
      for (const t of p.topics) {
        const subscribed = group.isSubscribedToTopic(t.name);
        result.topics.push({
          name: t.name,
          partitions: t.partitionIndexes.map((partitionIndex) => {
            if (subscribed) return { partitionIndex, errorCode: ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC };
            if (this.offsets.get(p.groupId, t.name, partitionIndex) !== undefined) {
              tombstones.push({ topic: t.name, partition: partitionIndex });
            }
            return { partitionIndex, errorCode: ErrorCode.NONE };
          }),
        });
      }
      if (tombstones.length === 0) return result;
      try {
        await this.write(p.groupId, tombstones.map((x) => offsetTombstone(p.groupId, x.topic, x.partition)));
      } catch (err) {
        this.logger.warn({ err, groupId: p.groupId }, 'failed to persist offset deletion');
        return { errorCode: appendErrorCode(err), topics: [] };
      }
      for (const x of tombstones) this.offsets.remove(p.groupId, x.topic, x.partition);
      return result;
    });
  }

  // ================================================================ groups

  describeGroups(groupIds: readonly string[]): DescribedGroup[] {
    return groupIds.map((groupId) => {
      const unavailable = this.unavailable(groupId);
      const described: DescribedGroup = {
        errorCode: ErrorCode.NONE,
        groupId,
        groupState: 'Dead',
        protocolType: '',
        protocolData: '',
        members: [],
      };
      if (unavailable !== ErrorCode.NONE) return { ...described, errorCode: unavailable, groupState: '' };
      if (groupId === '') return { ...described, errorCode: ErrorCode.INVALID_GROUP_ID, groupState: '' };
      const consumerGroup = this.consumer.groups.get(groupId);
      if (consumerGroup !== undefined) return describeAsClassic(consumerGroup, this.consumer.assignorOf(consumerGroup), this.topicsView());
      const group = this.manager.groups.get(groupId);
      return group === undefined ? described : describeClassicGroup(group);
    });
  }

  /** ListGroups; `statesFilter` compares case-insensitively, `typesFilter` matches "classic" only. */
  listGroups(statesFilter: readonly string[] = [], typesFilter: readonly string[] = []): ListGroupsResult {
    const unavailable = this.unavailable();
    if (unavailable !== ErrorCode.NONE) return { errorCode: unavailable, groups: [] };
    const types = new Set(typesFilter.map((t) => t.trim().toLowerCase()));
    const states = new Set(statesFilter.map((s) => parseGroupState(s)));
    const stateNames = new Set(statesFilter.map((s) => s.trim().toLowerCase()));
    const groups: ListGroupsResult['groups'] = [];
    if (types.size === 0 || types.has('classic')) {
      for (const g of this.manager.groups.values()) {
        if (g.state === 'Dead' || !this.servesGroup(g.groupId) || (statesFilter.length > 0 && !states.has(g.state))) continue;
        groups.push({ groupId: g.groupId, protocolType: g.protocolType ?? '', groupState: g.state, groupType: 'classic' });
      }
    }
    if (types.size === 0 || types.has('consumer')) {
      for (const g of this.consumer.groups.values()) {
        if (!this.servesGroup(g.groupId) || (statesFilter.length > 0 && !stateNames.has(g.state.toLowerCase()))) continue;
        groups.push({ groupId: g.groupId, protocolType: 'consumer', groupState: g.state, groupType: 'consumer' });
      }
    }
    return { errorCode: ErrorCode.NONE, groups };
  }

  /** DeleteGroups: Empty groups only; their offsets and metadata are tombstoned. */
  async deleteGroups(groupIds: readonly string[]): Promise<DeleteGroupsResult[]> {
    return Promise.all(
      groupIds.map(async (groupId): Promise<DeleteGroupsResult> => {
        const unavailable = this.unavailable(groupId);
        if (unavailable !== ErrorCode.NONE) return { groupId, errorCode: unavailable };
        if (groupId === '') return { groupId, errorCode: ErrorCode.INVALID_GROUP_ID };
        return this.locks.run(groupId, async () => {
          await this.inflightCommits.settled(groupId);
          const consumerGroup = this.consumer.groups.get(groupId);
          if (consumerGroup !== undefined) {
            if (consumerGroup.state !== 'Empty') return { groupId, errorCode: ErrorCode.NON_EMPTY_GROUP };
            try {
              await this.consumerOps.removeGroup(consumerGroup, this.offsets.list(groupId));
            } catch (err) {
              this.logger.warn({ err, groupId }, 'failed to persist group deletion');
              return { groupId, errorCode: appendErrorCode(err) };
            }
            return { groupId, errorCode: ErrorCode.NONE };
          }
          const group = this.manager.groups.get(groupId);
          if (group === undefined || group.state === 'Dead') return { groupId, errorCode: ErrorCode.GROUP_ID_NOT_FOUND };
          if (group.state !== 'Empty') return { groupId, errorCode: ErrorCode.NON_EMPTY_GROUP };
          try {
            await this.removeGroup(group, this.offsets.list(groupId));
          } catch (err) {
            this.logger.warn({ err, groupId }, 'failed to persist group deletion');
            return { groupId, errorCode: appendErrorCode(err) };
          }
          return { groupId, errorCode: ErrorCode.NONE };
        });
      }),
    );
  }

  /**
   * Marks the group Dead and drops it (and its offsets) from memory at once,
   * so concurrent joins see COORDINATOR_NOT_AVAILABLE and then a fresh group;
   * the tombstones follow in the same partition, after anything queued before.
   */
  private removeGroup(group: ClassicGroup, offsets: readonly { topic: string; partition: number }[]): Promise<void> {
    const groupId = group.groupId;
    group.transitionTo('Dead', this.clock.now());
    this.manager.groups.delete(groupId);
    this.manager.completedRebalances.delete(groupId);
    this.offsets.removeGroup(groupId);
    return this.write(groupId, [
      ...offsets.map((o) => offsetTombstone(groupId, o.topic, o.partition)),
      { type: 'groupMetadata', groupId, value: null },
    ]);
  }

  // ================================================================ expiry

  private scheduleExpiry(): void {
    this.expiryTimer = this.scheduler.setTimeout(() => {
      this.expiryTimer = null;
      const run = this.expireOffsets().finally(() => {
        if (this.expiryRun === run) this.expiryRun = null;
        if (this.phase === 'active') this.scheduleExpiry();
      });
      this.expiryRun = run;
    }, this.config.offsetsRetentionCheckIntervalMs);
  }

  /**
   * One pass of `offsets.retention.minutes`: offsets of Empty groups expire
   * that long after the group became Empty (simple groups: after the commit;
   * Stable "consumer" groups: unsubscribed topics after the commit). An Empty
   * group left without offsets is deleted. Runs every
   * `offsets.retention.check.interval.ms`; exposed for tests and tools.
   */
  async expireOffsets(): Promise<void> {
    if (this.phase !== 'active') return;
    const ids = new Set([...this.manager.groups.keys(), ...this.consumer.groups.keys(), ...this.offsets.groupIds()]);
    for (const groupId of ids) {
      if (!this.servesGroup(groupId)) continue;
      await this.locks.run(groupId, () => this.expireGroupOffsets(groupId));
    }
  }

  private async expireGroupOffsets(groupId: string): Promise<void> {
    await this.inflightCommits.settled(groupId);
    const consumerGroup = this.consumer.groups.get(groupId);
    if (consumerGroup !== undefined) return this.consumerOps.expireOffsets(consumerGroup, this.phase === 'active' && this.servesGroup(groupId));
    const group = this.manager.groups.get(groupId);
    if (group === undefined || group.state === 'Dead' || this.phase !== 'active' || !this.servesGroup(groupId)) return;
    const base = expirationBase(group);
    if (base === null) return;
    const now = this.clock.now();
    const expired: { topic: string; partition: number }[] = [];
    let allExpired = true;
    for (const o of this.offsets.list(groupId)) {
      if (!group.isSubscribedToTopic(o.topic) && isOffsetExpired(o.value, base(o.value), now, this.config.offsetsRetentionMs)) {
        expired.push({ topic: o.topic, partition: o.partition });
      } else {
        allExpired = false;
      }
    }
    try {
      if (allExpired && group.state === 'Empty') {
        this.logger.info({ groupId, offsets: expired.length }, 'expiring empty group');
        await this.removeGroup(group, expired);
      } else if (expired.length > 0) {
        await this.write(groupId, expired.map((x) => offsetTombstone(groupId, x.topic, x.partition)));
        for (const x of expired) this.offsets.remove(groupId, x.topic, x.partition);
      }
    } catch (err) {
      this.logger.warn({ err, groupId }, 'failed to persist offset expiry');
    }
  }

  // ================================================================ introspection

  /** The group's state, or null when there is no such group. */
  groupState(groupId: string): GroupState | null {
    return this.manager.groups.get(groupId)?.state ?? null;
  }

  /** Rebalances each group completed since this process started (metrics). */
  rebalanceCounts(): ReadonlyMap<string, number> {
    return this.manager.completedRebalances;
  }

  /** Generation, leader and member ids of a group (tests, CLI diagnostics). */
  groupSummary(
    groupId: string,
  ): { state: GroupState; generationId: number; leaderId: string | null; protocolName: string | null; memberIds: string[] } | null {
    const g = this.manager.groups.get(groupId);
    if (g === undefined) return null;
    return {
      state: g.state,
      generationId: g.generationId,
      leaderId: g.leaderId,
      protocolName: g.protocolName,
      memberIds: g.allMembers().map((m) => m.memberId),
    };
  }
}
