// Kafka's rules for offset commits and offset expiry of classic groups, and
// the offset tombstone record. Pure.
import { ErrorCode } from '../protocol/errors.js';
import type { ClassicGroup } from './classic-group.js';
import type { CoordinatorRecord, OffsetAndMetadata } from './group-records.js';
import type { OffsetStore } from './offset-store.js';
import type { OffsetCommitParams, OffsetFetchGroupParams, OffsetFetchGroupResult } from './types.js';

/** OffsetFetch of one group: every committed offset (topics null) or the requested partitions, -1 where none. */
export function groupOffsets(offsets: OffsetStore, g: OffsetFetchGroupParams, known: boolean): OffsetFetchGroupResult {
  if (g.topics === null) {
    const byTopic = new Map<string, OffsetFetchGroupResult['topics'][number]>();
    if (known) {
      for (const o of offsets.list(g.groupId)) {
        let t = byTopic.get(o.topic);
        if (t === undefined) {
          t = { name: o.topic, partitions: [] };
          byTopic.set(o.topic, t);
        }
        t.partitions.push({
          partitionIndex: o.partition,
          committedOffset: o.value.committedOffset,
          committedLeaderEpoch: o.value.leaderEpoch,
          metadata: o.value.metadata,
          errorCode: ErrorCode.NONE,
        });
      }
    }
    return { groupId: g.groupId, errorCode: ErrorCode.NONE, topics: [...byTopic.values()] };
  }
  return {
    groupId: g.groupId,
    errorCode: ErrorCode.NONE,
    topics: g.topics.map((t) => ({
      name: t.name,
      partitions: t.partitionIndexes.map((partitionIndex) => {
        const o = known ? offsets.get(g.groupId, t.name, partitionIndex) : undefined;
        return {
          partitionIndex,
          committedOffset: o?.committedOffset ?? -1n,
          committedLeaderEpoch: o?.leaderEpoch ?? -1,
          metadata: o?.metadata ?? '',
          errorCode: ErrorCode.NONE,
        };
      }),
    })),
  };
}

export function offsetTombstone(groupId: string, topic: string, partition: number): CoordinatorRecord {
  return { type: 'offsetCommit', groupId, topic, partition, value: null };
}

/** Kafka's ClassicGroup.validateOffsetCommit. */
export function validateOffsetCommit(group: ClassicGroup, p: OffsetCommitParams): number {
  if (group.state === 'Dead') return ErrorCode.COORDINATOR_NOT_AVAILABLE;
  // Generation -1 comes from admin tools and consumers outside group management.
  if (p.generationId < 0 && group.state === 'Empty') return ErrorCode.NONE;
  if (p.generationId >= 0 || p.memberId !== '' || p.groupInstanceId !== null) {
    const invalid = group.validateMember(p.memberId, p.groupInstanceId);
    if (invalid !== ErrorCode.NONE) return invalid;
    if (p.generationId !== group.generationId) return ErrorCode.ILLEGAL_GENERATION;
  } else if (group.state !== 'Empty') {
    return ErrorCode.UNKNOWN_MEMBER_ID;
  }
  if (group.state === 'CompletingRebalance') return ErrorCode.REBALANCE_IN_PROGRESS;
  return ErrorCode.NONE;
}

/** Kafka's offsetExpirationCondition: which timestamp an offset's retention counts from, or null (never). */
export function expirationBase(group: ClassicGroup): ((o: OffsetAndMetadata) => number) | null {
  if (group.protocolType !== null) {
    if (group.state === 'Empty') {
      const since = group.stateTimestamp;
      return (o) => since ?? o.commitTimestampMs;
    }
    if (group.usesConsumerProtocol() && group.subscribedTopics !== null && group.state === 'Stable') {
      return (o) => o.commitTimestampMs;
    }
    return null;
  }
  return (o) => o.commitTimestampMs;
}
