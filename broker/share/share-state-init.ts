// Which share-partitions of a share group have their state initialised with
// the share coordinator, as Kafka's GroupMetadataManager keeps it in
// ShareGroupStatePartitionMetadata (KIP-932): initializing topics (partitions
// whose InitializeShareGroupState is in flight, with the time it started),
// initialized topics, and deleting topics. On every heartbeat the group
// coordinator initialises each partition of a subscribed topic that is
// neither initialized nor initializing since less than
// group.share.initialize.retry.interval.ms (Kafka's
// maybeCreateInitializeShareGroupStateRequest): at the group epoch and at
// start offset -1 (PartitionFactory.UNINITIALIZED_START_OFFSET), so the
// share-partition resolves share.auto.offset.reset when it first loads. A
// partition added to a topic is initialised the same way; a deleted topic
// leaves the sets. Pure: the caller does the persister calls.
import type { ShareGroupStatePartitionMetadataValue } from '../protocol/messages/records/share-group-state-partition-metadata-value.js';

/** Kafka's PartitionFactory.UNINITIALIZED_START_OFFSET. */
export const UNINITIALIZED_START_OFFSET = -1n;

/** Kafka's ShareGroup.InitMapValue: a topic's partitions and when they entered the set. */
export interface InitTopic {
  readonly name: string;
  readonly partitions: ReadonlySet<number>;
  readonly timestamp: number;
}

export class ShareStatePartitionMetadata {
  readonly initializing = new Map<string, InitTopic>();
  readonly initialized = new Map<string, InitTopic>();
  /** topic id -> name */
  readonly deleting = new Map<string, string>();

  /** Kafka's ShareGroupStatePartitionMetadataValue for this state (topics by id order, partitions sorted). */
  toRecord(): ShareGroupStatePartitionMetadataValue {
    const infos = (m: ReadonlyMap<string, InitTopic>): ShareGroupStatePartitionMetadataValue['initializedTopics'] =>
      [...m].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([topicId, t]) => ({ topicId, topicName: t.name, partitions: [...t.partitions].sort((x, y) => x - y) }));
    return {
      initializingTopics: infos(this.initializing),
      initializedTopics: infos(this.initialized),
      deletingTopics: [...this.deleting].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([topicId, topicName]) => ({ topicId, topicName })),
    };
  }

  /** Replay of a ShareGroupStatePartitionMetadata record: its sets replace these, timestamped `now` (as Kafka's replay does). */
  load(v: ShareGroupStatePartitionMetadataValue, now: number): void {
    this.initializing.clear();
    this.initialized.clear();
    this.deleting.clear();
    for (const t of v.initializingTopics) this.initializing.set(t.topicId, { name: t.topicName, partitions: new Set(t.partitions), timestamp: now });
    for (const t of v.initializedTopics) this.initialized.set(t.topicId, { name: t.topicName, partitions: new Set(t.partitions), timestamp: now });
    for (const t of v.deletingTopics) this.deleting.set(t.topicId, t.topicName);
  }

  /** Whether nothing is recorded (Kafka writes no record for a group that never had any). */
  get isEmpty(): boolean {
    return this.initializing.size === 0 && this.initialized.size === 0 && this.deleting.size === 0;
  }

  /** A key that changes whenever the record would. */
  fingerprint(): string {
    return JSON.stringify(this.toRecord());
  }

  /**
   * DeleteShareGroupOffsets of one topic (Kafka's sharePartitionsEligibleForOffsetDeletion):
   * a topic with initialized partitions leaves the initialized set for the
   * deleting set and those partitions are to delete; a topic already deleting
   * is deleted again, every partition of it (`partitionCount`). null: nothing
   * to delete (only initializing, or unknown to the group). The initializing set stays.
   */
  markTopicDeleting(topicId: string, name: string, partitionCount: number): number[] | null {
    const done = this.initialized.get(topicId);
    if (done !== undefined) {
      this.initialized.delete(topicId);
      this.deleting.set(topicId, name);
      return [...done.partitions].sort((a, b) => a - b);
    }
    if (this.deleting.has(topicId)) return Array.from({ length: partitionCount }, (_, p) => p);
    return null;
  }

  /**
   * DeleteGroups of a share group (Kafka's shareGroupBuildPartitionDeleteRequest):
   * every initialized and initializing topic moves to deleting; returns the
   * partitions whose state the share coordinator must delete (deleting topics:
   * every partition, by `partitionCount`).
   */
  markAllDeleting(partitionCount: (topicId: string) => number | undefined): { topicId: string; partitions: number[] }[] {
    const out = new Map<string, Set<number>>();
    const add = (topicId: string, ps: Iterable<number>): void => {
      const have = out.get(topicId) ?? new Set<number>();
      for (const p of ps) have.add(p);
      out.set(topicId, have);
    };
    for (const topicId of this.deleting.keys()) add(topicId, Array.from({ length: partitionCount(topicId) ?? 0 }, (_, p) => p));
    for (const m of [this.initialized, this.initializing]) {
      for (const [topicId, t] of m) {
        add(topicId, t.partitions);
        this.deleting.set(topicId, t.name);
      }
      m.clear();
    }
    return [...out].map(([topicId, ps]) => ({ topicId, partitions: [...ps].sort((a, b) => a - b) }));
  }

  /** Kafka's completeDeleteShareGroupOffsets: topics whose state is deleted leave the deleting set. */
  completeDeleting(topicIds: Iterable<string>): void {
    for (const id of topicIds) this.deleting.delete(id);
  }

  /** Topics that no longer exist (or were recreated under a new id) leave every set; returns whether any did. */
  removeDeletedTopics(exists: (topicId: string) => boolean): boolean {
    let changed = false;
    for (const m of [this.initialized, this.initializing, this.deleting]) {
      for (const topicId of [...m.keys()]) {
        if (!exists(topicId)) {
          m.delete(topicId);
          changed = true;
        }
      }
    }
    return changed;
  }

  /** Every partition that may hold state (initialized or initializing): what a delete must remove. */
  partitionsWithState(): { topicId: string; partition: number }[] {
    const out = new Map<string, { topicId: string; partition: number }>();
    for (const m of [this.initialized, this.initializing]) {
      for (const [topicId, t] of m) for (const partition of t.partitions) out.set(`${topicId}:${partition}`, { topicId, partition });
    }
    return [...out.values()];
  }

  private static add(m: Map<string, InitTopic>, topicId: string, name: string, partitions: Iterable<number>, now: number): void {
    const have = m.get(topicId);
    m.set(topicId, { name, partitions: new Set([...(have?.partitions ?? []), ...partitions]), timestamp: now });
  }

  private static remove(m: Map<string, InitTopic>, topicId: string, partitions: Iterable<number>): void {
    const have = m.get(topicId);
    if (have === undefined) return;
    const left = new Set(have.partitions);
    for (const p of partitions) left.delete(p);
    if (left.size === 0) m.delete(topicId);
    else m.set(topicId, { ...have, partitions: left });
  }

  /** Kafka's addInitializingTopicsRecords. */
  markInitializing(topicId: string, name: string, partitions: readonly number[], now: number): void {
    ShareStatePartitionMetadata.add(this.initializing, topicId, name, partitions, now);
  }

  /** Kafka's initializeShareGroupState: the partitions move from initializing to initialized. */
  markInitialized(topicId: string, name: string, partitions: readonly number[], now: number): void {
    ShareStatePartitionMetadata.remove(this.initializing, topicId, partitions);
    ShareStatePartitionMetadata.add(this.initialized, topicId, name, partitions, now);
  }

  /** Kafka's uninitializeShareGroupState: a failed initialisation leaves the initializing set (retried on a later heartbeat). */
  markUninitialized(topicId: string, partitions: readonly number[]): void {
    ShareStatePartitionMetadata.remove(this.initializing, topicId, partitions);
  }

  /** DeleteShareGroupOffsets / a deleted state: the topic's partitions leave both sets. */
  forgetTopic(topicId: string): void {
    this.initializing.delete(topicId);
    this.initialized.delete(topicId);
    this.deleting.delete(topicId);
  }

  /**
   * The partitions a heartbeat initialises, and marks them initializing
   * (Kafka's maybeCreateInitializeShareGroupStateRequest). `subscribed`: the
   * subscribed topics that exist, by id. A topic that no longer exists (or was
   * recreated with a new id) leaves the sets first.
   */
  plan(subscribed: ReadonlyMap<string, { name: string; partitionCount: number }>, exists: (topicId: string) => boolean, now: number, retryIntervalMs: number): { topicId: string; name: string; partitions: number[] }[] {
    this.removeDeletedTopics(exists);
    const out: { topicId: string; name: string; partitions: number[] }[] = [];
    for (const [topicId, t] of [...subscribed].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      const done = this.initialized.get(topicId)?.partitions;
      const pending = this.initializing.get(topicId);
      const pendingFresh = pending !== undefined && now - pending.timestamp < retryIntervalMs ? pending.partitions : undefined;
      const partitions: number[] = [];
      for (let p = 0; p < t.partitionCount; p++) if (done?.has(p) !== true && pendingFresh?.has(p) !== true) partitions.push(p);
      if (partitions.length === 0) continue;
      this.markInitializing(topicId, t.name, partitions, now);
      out.push({ topicId, name: t.name, partitions });
    }
    return out;
  }
}
