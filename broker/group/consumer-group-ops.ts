// The coordinator's KIP-848 entry points that touch both kinds of group:
// ConsumerGroupHeartbeat (an empty classic group id becomes a consumer
// group), ConsumerGroupDescribe, the conversion of an empty consumer group
// back to classic, deleting a consumer group and expiring its offsets. The
// GroupCoordinator owns the state (both group maps, the offsets, the lock per
// group and the __consumer_offsets writer) and hands it over here.
import type { Clock } from '../common/clock.js';
import type { Logger } from '../common/logger.js';
import { ErrorCode } from '../protocol/errors.js';
import type { ClassicGroup } from './classic-group.js';
import type { ConsumerGroup } from './consumer/consumer-group.js';
import type { ConsumerGroupManager } from './consumer/consumer-group-manager.js';
import { consumerGroupNotFound, describeConsumerGroup } from './consumer/consumer-answers.js';
import { encodeConsumerGroupRecord } from './consumer/consumer-records.js';
import type { ConsumerHeartbeatParams, ConsumerHeartbeatResult, ConsumerTopicsView, DescribedConsumerGroup } from './consumer/types.js';
import { encodeCoordinatorRecord } from './group-records.js';
import type { KeyedMutex } from './keyed-mutex.js';
import { offsetTombstone } from './offset-rules.js';
import { isOffsetExpired, type OffsetStore } from './offset-store.js';
import { appendErrorCode, type OffsetsTopicRecord } from './offsets-topic.js';

export interface ConsumerGroupOpsDeps {
  readonly consumer: ConsumerGroupManager;
  readonly classicGroups: Map<string, ClassicGroup>;
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
  constructor(private readonly d: ConsumerGroupOpsDeps) {}

  /**
   * ConsumerGroupHeartbeat. A group id held by an empty classic group (or a
   * simple one, offsets only) becomes a consumer group, keeping its offsets;
   * a classic group with members answers GROUP_ID_NOT_FOUND (no online
   * migration yet).
   */
  async heartbeat(p: ConsumerHeartbeatParams): Promise<ConsumerHeartbeatResult> {
    const unavailable = this.d.unavailable(p.groupId);
    if (unavailable !== ErrorCode.NONE) return fail(unavailable);
    const invalid = this.d.consumer.validate(p);
    if (invalid !== null) return invalid;
    return this.d.locks.run(p.groupId, async () => {
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
    });
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
