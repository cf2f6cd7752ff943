// Committed offsets in memory: group -> topic -> partition -> offset. Pure
// data; what reaches this map has already been written to __consumer_offsets.
import type { OffsetAndMetadata } from './group-records.js';

export interface StoredOffset {
  readonly topic: string;
  readonly partition: number;
  readonly value: OffsetAndMetadata;
}

export class OffsetStore {
  private readonly byGroup = new Map<string, Map<string, Map<number, OffsetAndMetadata>>>();

  get(groupId: string, topic: string, partition: number): OffsetAndMetadata | undefined {
    return this.byGroup.get(groupId)?.get(topic)?.get(partition);
  }

  put(groupId: string, topic: string, partition: number, value: OffsetAndMetadata): void {
    let topics = this.byGroup.get(groupId);
    if (topics === undefined) {
      topics = new Map();
      this.byGroup.set(groupId, topics);
    }
    let partitions = topics.get(topic);
    if (partitions === undefined) {
      partitions = new Map();
      topics.set(topic, partitions);
    }
    partitions.set(partition, value);
  }

  remove(groupId: string, topic: string, partition: number): boolean {
    const topics = this.byGroup.get(groupId);
    const partitions = topics?.get(topic);
    if (topics === undefined || partitions === undefined || !partitions.delete(partition)) return false;
    if (partitions.size === 0) topics.delete(topic);
    if (topics.size === 0) this.byGroup.delete(groupId);
    return true;
  }

  removeGroup(groupId: string): void {
    this.byGroup.delete(groupId);
  }

  hasOffsets(groupId: string): boolean {
    return this.byGroup.has(groupId);
  }

  /** Every committed offset of the group, topics and partitions in commit order. */
  list(groupId: string): StoredOffset[] {
    const out: StoredOffset[] = [];
    const topics = this.byGroup.get(groupId);
    if (topics === undefined) return out;
    for (const [topic, partitions] of topics) {
      for (const [partition, value] of partitions) out.push({ topic, partition, value });
    }
    return out;
  }

  groupIds(): string[] {
    return [...this.byGroup.keys()];
  }
}

/**
 * Kafka's OffsetExpirationCondition: an explicit expire timestamp (old
 * OffsetCommit versions) wins; otherwise the offset expires `retentionMs`
 * after `baseTimestampMs` (when the group became Empty, or the commit time).
 */
export function isOffsetExpired(
  offset: OffsetAndMetadata,
  baseTimestampMs: number,
  nowMs: number,
  retentionMs: number,
): boolean {
  if (offset.expireTimestampMs !== null) return nowMs >= offset.expireTimestampMs;
  return nowMs - baseTimestampMs >= retentionMs;
}
