// The coordinator's KIP-848 entry points that touch both kinds of group:
// ConsumerGroupHeartbeat (an empty classic group id becomes a consumer
// group; a classic group with members is upgraded online, see migration.ts),
// the online downgrade when the last consumer-protocol member is fenced,
// the classic calls (JoinGroup, SyncGroup, Heartbeat, LeaveGroup) to a
// consumer group id,
// ConsumerGroupDescribe, the conversion of an empty consumer group back to
// classic, deleting a consumer group and expiring its offsets. The
// GroupCoordinator owns the state (both group maps, the offsets, the lock per
// group and the __consumer_offsets writer) and hands it over here.
import type { Clock } from '../common/clock.js';
import type { Logger } from '../common/logger.js';
import { ErrorCode } from '../protocol/errors.js';
import type { ClassicGroup } from './classic-group.js';
import type { ClassicGroupManager } from './classic-group-manager.js';
import { groupMetadataRecord, joinError, syncError } from './results.js';
import { ClassicMemberOps } from './consumer/classic-members.js';
import type { HeartbeatParams, JoinGroupParams, JoinGroupResult, LeaveGroupResult, LeavingMember, SyncGroupParams, SyncGroupResult } from './types.js';
import { classicGroupFromConsumer, consumerGroupFromClassic, downgradeRefusal, replacementDowngradeRefusal, upgradeRefusal } from './migration.js';
import type { ConsumerGroup } from './consumer/consumer-group.js';
import type { ConsumerGroupManager } from './consumer/consumer-group-manager.js';
import { consumerGroupNotFound, describeConsumerGroup } from './consumer/consumer-answers.js';
import { encodeConsumerGroupRecord } from './consumer/consumer-records.js';
import { memberTombstones } from './consumer/consumer-group-manager.js';
import type { ConsumerHeartbeatParams, ConsumerHeartbeatResult, ConsumerTopicsView, DescribedConsumerGroup } from './consumer/types.js';
import { encodeCoordinatorRecord } from './group-records.js';
import type { KeyedMutex } from './keyed-mutex.js';
import { offsetTombstone } from './offset-rules.js';
import { isOffsetExpired, type OffsetStore } from './offset-store.js';
import { appendErrorCode, type OffsetsTopicRecord } from './offsets-topic.js';

export interface ConsumerGroupOpsDeps {
  readonly consumer: ConsumerGroupManager;
  readonly classicGroups: Map<string, ClassicGroup>;
  readonly classic: ClassicGroupManager;
  /** group.max.size: a downgraded group may not exceed it. */
  readonly classicMaxSize: number;
  /** Settles after every write issued so far to the group's partition. */
  readonly barrier: (groupId: string) => Promise<void>;
  readonly offsets: OffsetStore;
  readonly locks: KeyedMutex;
  /** Appends to the group's partition of __consumer_offsets, in call order. */
  readonly append: (groupId: string, records: readonly OffsetsTopicRecord[]) => Promise<void>;
  readonly topics: () => ConsumerTopicsView;
  /** NONE when calls for the group can be served (its partition is loaded here), else the code to answer. */
  readonly unavailable: (groupId: string) => number;
  readonly clock: Clock;
  readonly offsetsRetentionMs: number;
  readonly logger: Logger;
}

function fail(errorCode: number, errorMessage: string | null = null): ConsumerHeartbeatResult {
  return { errorCode, errorMessage, memberId: null, memberEpoch: 0, heartbeatIntervalMs: 0, assignment: null };
}

export class ConsumerGroupOps {
  /** Classic-protocol members of consumer groups (online migration). */
  private readonly classicMembers: ClassicMemberOps;

  constructor(private readonly d: ConsumerGroupOpsDeps) {
    d.consumer.downgrade = (group, memberId) => this.maybeDowngrade(group, memberId);
    this.classicMembers = new ClassicMemberOps(d.consumer, (before, after, replacedId, subscriptionChanged) => this.maybeDowngradeOnReplacement(before, after, replacedId, subscriptionChanged));
  }

  /**
   * JoinGroup to a consumer group id (under the group's lock): a group with
   * members answers the classic member itself; an empty one gives its id to
   * a classic group (null: the classic coordinator takes the join).
   */
  classicJoin(p: JoinGroupParams): Promise<JoinGroupResult | null> {
    return this.d.locks.run(p.groupId, async (): Promise<JoinGroupResult | null> => {
      const group = this.d.consumer.groups.get(p.groupId);
      if (group === undefined) return null;
      if (group.members.size > 0) {
        try {
          return await this.classicMembers.join(group, p);
        } catch (err) {
          this.d.logger.warn({ err, groupId: p.groupId }, 'failed to persist classic member join');
          return joinError(p.memberId, appendErrorCode(err));
        }
      }
      const dropped = await this.dropEmptyGroup(p.groupId);
      return dropped === ErrorCode.NONE ? null : joinError(p.memberId, dropped);
    });
  }

  /** SyncGroup to a consumer group (null when the id is not one). */
  classicSync(p: SyncGroupParams): SyncGroupResult | null {
    const group = this.d.consumer.groups.get(p.groupId);
    if (group === undefined) return null;
    if (group.members.size === 0) return syncError(ErrorCode.UNKNOWN_MEMBER_ID);
    return this.classicMembers.sync(group, p);
  }

  /** Heartbeat to a consumer group (null when the id is not one). */
  classicHeartbeat(p: HeartbeatParams): number | null {
    const group = this.d.consumer.groups.get(p.groupId);
    return group === undefined ? null : this.classicMembers.heartbeat(group, p);
  }

  /** LeaveGroup to a consumer group, under its lock (null when the id is no longer one). */
  classicLeave(groupId: string, members: readonly LeavingMember[]): Promise<LeaveGroupResult | null> {
    return this.d.locks.run(groupId, async (): Promise<LeaveGroupResult | null> => {
      const group = this.d.consumer.groups.get(groupId);
      if (group === undefined) return null;
      try {
        return await this.classicMembers.leave(group, members);
      } catch (err) {
        this.d.logger.warn({ err, groupId }, 'failed to persist classic member leave');
        return { errorCode: appendErrorCode(err), members: [] };
      }
    });
  }

  /**
   * ConsumerGroupHeartbeat. A group id held by an empty classic group (or a
   * simple one, offsets only) becomes a consumer group, keeping its offsets.
   * A classic group with members is upgraded when a member joins (epoch 0)
   * and group.consumer.migration.policy allows it, else the answer is
   * GROUP_ID_NOT_FOUND, as in Kafka.
   */
  async heartbeat(p: ConsumerHeartbeatParams): Promise<ConsumerHeartbeatResult> {
    const unavailable = this.d.unavailable(p.groupId);
    if (unavailable !== ErrorCode.NONE) return fail(unavailable);
    const invalid = this.d.consumer.validate(p);
    if (invalid !== null) return invalid;
    return this.d.locks.run(p.groupId, async () => {
      const classic = this.d.classicGroups.get(p.groupId);
      if (classic !== undefined && classic.state !== 'Dead' && classic.state !== 'Empty' && p.memberEpoch === 0) return this.upgrade(classic, p);
      return this.heartbeatLocked(p);
    });
  }

  /** Under the group's lock: the heartbeat, after an empty classic group with the id gave it up. */
  private async heartbeatLocked(p: ConsumerHeartbeatParams): Promise<ConsumerHeartbeatResult> {
    const classic = this.d.classicGroups.get(p.groupId);
    if (classic !== undefined && classic.state !== 'Dead') {
      if (classic.state !== 'Empty' || p.memberEpoch !== 0) return fail(ErrorCode.GROUP_ID_NOT_FOUND, `Group ${p.groupId} is not a consumer group.`);
      try {
        await this.d.append(p.groupId, [encodeCoordinatorRecord({ type: 'groupMetadata', groupId: p.groupId, value: null })]);
      } catch (err) {
        return fail(appendErrorCode(err));
      }
      this.d.classicGroups.delete(p.groupId);
      this.d.logger.info({ groupId: p.groupId }, 'converted the empty classic group to a consumer group');
    }
    try {
      return await this.d.consumer.heartbeat(p);
    } catch (err) {
      return fail(appendErrorCode(err));
    }
  }

  /**
   * Under the group's lock: the classic group becomes a consumer group in
   * the same append as the joining member's heartbeat (the classic tombstone,
   * then the consumer group's records). Writes already queued for the
   * classic group land first, so the snapshot holds every assignment its
   * members were given.
   */
  private async upgrade(classic: ClassicGroup, p: ConsumerHeartbeatParams): Promise<ConsumerHeartbeatResult> {
    const groupId = p.groupId;
    const refusal = upgradeRefusal(classic, this.d.consumer.config.migrationPolicy, this.d.consumer.config.maxSize);
    if (refusal !== null) {
      this.d.logger.info({ groupId, reason: refusal }, 'cannot upgrade the classic group to a consumer group');
      return fail(ErrorCode.GROUP_ID_NOT_FOUND, `Group ${groupId} is not a consumer group.`);
    }
    await this.d.barrier(groupId);
    const current = this.d.classicGroups.get(groupId);
    // The group emptied while earlier writes landed: the ordinary path.
    if (current === undefined || current.state === 'Dead' || current.state === 'Empty') return this.heartbeatLocked(p);
    let converted: ReturnType<typeof consumerGroupFromClassic>;
    try {
      converted = consumerGroupFromClassic(current, this.d.topics());
    } catch (err) {
      this.d.logger.warn({ err, groupId }, 'cannot upgrade the classic group: malformed embedded consumer protocol');
      return fail(ErrorCode.GROUP_ID_NOT_FOUND, `Cannot upgrade the classic group ${groupId} to consumer group because the embedded consumer protocol is malformed.`);
    }
    const prefix = [encodeCoordinatorRecord({ type: 'groupMetadata', groupId, value: null })];
    let result: ConsumerHeartbeatResult;
    try {
      result = await this.d.consumer.heartbeat(p, { group: converted.group, records: converted.records, prefix });
    } catch (err) {
      return fail(appendErrorCode(err));
    }
    if (this.d.consumer.groups.has(groupId)) {
      this.d.classic.releaseConverted(groupId);
      this.d.logger.info({ groupId, members: converted.group.members.size, epoch: converted.group.groupEpoch }, 'upgraded the classic group to a consumer group');
    }
    return result;
  }

  /**
   * The fencing of `memberId`, the last member on the consumer protocol,
   * downgrades the group when the policy allows (under the group's lock):
   * the consumer group's tombstones and the classic group's record in one
   * append, then the classic group rebalances.
   */
  private async maybeDowngrade(group: ConsumerGroup, memberId: string): Promise<boolean> {
    const groupId = group.groupId;
    const refusal = downgradeRefusal(group, memberId, this.d.consumer.config.migrationPolicy, this.d.classicMaxSize);
    if (refusal !== null) {
      if (group.allMembersUseClassicProtocolExcept(memberId) && group.members.size > 1) this.d.logger.info({ groupId, reason: refusal }, 'cannot downgrade the consumer group to a classic group');
      return false;
    }
    let classic: ClassicGroup;
    try {
      classic = classicGroupFromConsumer(group, memberId, this.d.topics(), this.d.clock.now());
    } catch (err) {
      this.d.logger.warn({ err, groupId }, 'cannot downgrade the consumer group: malformed embedded consumer protocol');
      return false;
    }
    const records = [...this.d.consumer.groupTombstones(groupId).map(encodeConsumerGroupRecord), encodeCoordinatorRecord(groupMetadataRecord(classic))];
    await this.d.append(groupId, records);
    this.d.consumer.forget(groupId);
    this.d.classic.adoptConverted(classic);
    this.d.logger.info({ groupId, members: classic.size, generationId: classic.generationId }, 'downgraded the consumer group to a classic group');
    return true;
  }

  /**
   * A classic static member took over the instance id of the last member on
   * the consumer protocol (under the group's lock): when the policy allows,
   * the group as it is after the join (`after`, the joining member holding
   * the replaced one's target) becomes a classic group; it rebalances only
   * if the subscription changed (KAFKA-19546).
   */
  private async maybeDowngradeOnReplacement(before: ConsumerGroup, after: ConsumerGroup, replacedId: string, subscriptionChanged: boolean): Promise<boolean> {
    const groupId = before.groupId;
    const refusal = replacementDowngradeRefusal(before, replacedId, this.d.consumer.config.migrationPolicy, this.d.classicMaxSize);
    if (refusal !== null) {
      if (before.allMembersUseClassicProtocolExcept(replacedId)) this.d.logger.info({ groupId, reason: refusal }, 'cannot downgrade the consumer group to a classic group');
      return false;
    }
    let classic: ClassicGroup;
    try {
      classic = classicGroupFromConsumer(after, replacedId, this.d.topics(), this.d.clock.now());
    } catch (err) {
      this.d.logger.warn({ err, groupId }, 'cannot downgrade the consumer group: malformed embedded consumer protocol');
      return false;
    }
    const joined = [...after.members.keys()].filter((id) => !before.members.has(id));
    const records = [
      ...joined.flatMap((id) => memberTombstones(groupId, id)).map(encodeConsumerGroupRecord),
      ...this.d.consumer.groupTombstones(groupId).map(encodeConsumerGroupRecord),
      encodeCoordinatorRecord(groupMetadataRecord(classic)),
    ];
    await this.d.append(groupId, records);
    this.d.consumer.forget(groupId);
    for (const id of joined) this.d.consumer.cancelMemberTimers(groupId, id);
    this.d.classic.adoptConverted(classic, subscriptionChanged);
    this.d.logger.info({ groupId, members: classic.size, generationId: classic.generationId, rebalance: subscriptionChanged }, 'downgraded the consumer group to a classic group (static member replaced)');
    return true;
  }

  describe(groupIds: readonly string[]): DescribedConsumerGroup[] {
    return groupIds.map((groupId) => {
      const unavailable = this.d.unavailable(groupId);
      if (unavailable !== ErrorCode.NONE) return { ...consumerGroupNotFound(groupId, ''), errorCode: unavailable, errorMessage: null, groupState: '' };
      if (groupId === '') return { ...consumerGroupNotFound(groupId, ''), errorCode: ErrorCode.INVALID_GROUP_ID, errorMessage: null, groupState: '' };
      const g = this.d.consumer.groups.get(groupId);
      if (g !== undefined) return describeConsumerGroup(g, this.d.consumer.assignorOf(g), this.d.topics());
      if (this.d.classicGroups.has(groupId)) return consumerGroupNotFound(groupId, `Group ${groupId} is not a consumer group.`);
      return consumerGroupNotFound(groupId, `Group ${groupId} not found.`);
    });
  }

  /** Under the group's lock: an empty consumer group is deleted so a classic group can take its id. */
  async dropEmptyGroup(groupId: string): Promise<number> {
    const g = this.d.consumer.groups.get(groupId);
    if (g === undefined) return ErrorCode.NONE;
    if (g.members.size > 0) return ErrorCode.INCONSISTENT_GROUP_PROTOCOL;
    try {
      await this.d.append(groupId, this.d.consumer.groupTombstones(groupId).map(encodeConsumerGroupRecord));
    } catch (err) {
      return appendErrorCode(err);
    }
    this.d.consumer.forget(groupId);
    return ErrorCode.NONE;
  }

  /** Deletes an empty consumer group and the given offsets (DeleteGroups, expiry): gone from memory at once, tombstones after. */
  async removeGroup(group: ConsumerGroup, offsets: readonly { topic: string; partition: number }[]): Promise<void> {
    const groupId = group.groupId;
    const records = [
      ...offsets.map((o) => encodeCoordinatorRecord(offsetTombstone(groupId, o.topic, o.partition))),
      ...this.d.consumer.groupTombstones(groupId).map(encodeConsumerGroupRecord),
    ];
    this.d.consumer.forget(groupId);
    this.d.offsets.removeGroup(groupId);
    await this.d.append(groupId, records);
  }

  /** Kafka's consumer group rule: offsets of topics no member subscribes to expire from their commit time; then an empty group goes. */
  async expireOffsets(group: ConsumerGroup, active: boolean): Promise<void> {
    if (!active) return;
    const groupId = group.groupId;
    const now = this.d.clock.now();
    const expired: { topic: string; partition: number }[] = [];
    let allExpired = true;
    for (const o of this.d.offsets.list(groupId)) {
      if (!this.d.consumer.isSubscribedToTopic(group, o.topic) && isOffsetExpired(o.value, o.value.commitTimestampMs, now, this.d.offsetsRetentionMs)) {
        expired.push({ topic: o.topic, partition: o.partition });
      } else {
        allExpired = false;
      }
    }
    try {
      if (allExpired && group.state === 'Empty') {
        this.d.logger.info({ groupId, offsets: expired.length }, 'expiring empty consumer group');
        await this.removeGroup(group, expired);
      } else if (expired.length > 0) {
        await this.d.append(groupId, expired.map((x) => encodeCoordinatorRecord(offsetTombstone(groupId, x.topic, x.partition))));
        for (const x of expired) this.d.offsets.remove(groupId, x.topic, x.partition);
      }
    } catch (err) {
      this.d.logger.warn({ err, groupId }, 'failed to persist offset expiry');
    }
  }
}
