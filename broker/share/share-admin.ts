// The admin side of share groups (KIP-932): ListGroups entries, deletion,
// and the start offsets of share-partitions (Describe/Alter/DeleteShareGroupOffsets),
// as kafka-share-groups.sh uses them. Offsets here are share-partition start
// offsets (SPSO) from the persisted state; lag counts the records at or above
// the start that are not yet acknowledged or archived, up to the high watermark.
// Deletion, alteration and deletion of offsets go through the group's
// ShareGroupStatePartitionMetadata record as Kafka's do (share-group-coordinator.ts);
// each operation needs the group's __consumer_offsets partition served here.
import { ErrorCode, KafkaError } from '../protocol/errors.js';
import type { ShareBrokerPort } from './share-ports.js';
import type { ShareGroupCoordinator } from './share-group-coordinator.js';
import type { SharePartitionManager, ShareStatePersister } from './share-partition-manager.js';
import type { ShareGroupConfigs } from './share-group-configs.js';

/** The share-group parts the admin operations use. */
export interface ShareAdminParts {
  readonly coordinator: ShareGroupCoordinator;
  readonly partitions: SharePartitionManager;
  readonly persister: ShareStatePersister;
  readonly configs: ShareGroupConfigs;
}

export interface ShareOffsetAnswer {
  readonly partition: number;
  readonly startOffset: bigint;
  readonly leaderEpoch: number;
  readonly lag: bigint;
  readonly errorCode: number;
  readonly errorMessage: string | null;
}

const DONE_STATES = new Set([2, 4]);

export class ShareAdmin {
  constructor(
    private readonly share: ShareAdminParts,
    private readonly broker: ShareBrokerPort,
  ) {}

  /** ListGroups entries of share groups (group type "share", protocol type "share"). */
  list(statesFilter: readonly string[], typesFilter: readonly string[]): { groupId: string; protocolType: string; groupState: string; groupType: string }[] {
    if (typesFilter.length > 0 && !typesFilter.some((t) => t.trim().toLowerCase() === 'share')) return [];
    const states = new Set(statesFilter.map((s) => s.trim().toLowerCase()));
    return this.share.coordinator.allGroups()
      .filter((g) => states.size === 0 || states.has(g.state.toLowerCase()))
      .map((g) => ({ groupId: g.groupId, protocolType: 'share', groupState: g.state, groupType: 'share' }));
  }

  isShareGroup(groupId: string): boolean {
    return this.share.coordinator.group(groupId) !== undefined;
  }

  /**
   * DeleteGroups for a share group, as Kafka 4.3's deleteShareGroups then
   * deleteGroups: empty only; its initialized and initializing topics are
   * recorded deleting, the share coordinator deletes their state
   * (DeleteShareGroupState; what the persister holds besides, from before the
   * records were kept, goes too), and only then the group's records are
   * tombstoned and its configs go. A failed state delete answers its error and
   * leaves the group (with its deleting topics) in place.
   */
  async deleteGroup(groupId: string): Promise<number> {
    const c = this.share.coordinator;
    try {
      c.requireAvailable(groupId);
    } catch (err) {
      return (err as KafkaError).code;
    }
    const g = c.group(groupId);
    if (g === undefined) return ErrorCode.GROUP_ID_NOT_FOUND;
    if (g.members.size > 0) return ErrorCode.NON_EMPTY_GROUP;
    await c.initialized(groupId);
    const toDelete = g.stateMetadata.markAllDeleting((topicId) => this.partitionCount(topicId));
    try {
      await c.record(g);
      const partitions = toDelete.flatMap((t) => t.partitions.map((partition) => ({ topicId: t.topicId, partition })));
      for (const p of this.withState(partitions, await this.share.persister.partitionsOf(groupId))) await this.share.partitions.forget(groupId, p.topicId, p.partition);
      await c.deleteGroup(groupId);
    } catch (err) {
      return err instanceof KafkaError ? err.code : ErrorCode.UNKNOWN_SERVER_ERROR;
    }
    await this.share.configs.forget(groupId);
    return ErrorCode.NONE;
  }

  private partitionCount(topicId: string): number | undefined {
    const name = this.broker.topicName(topicId);
    return name === undefined ? undefined : this.broker.topicByName(name)?.partitionCount;
  }

  private withState(...lists: { topicId: string; partition: number }[][]): { topicId: string; partition: number }[] {
    const out = new Map<string, { topicId: string; partition: number }>();
    for (const l of lists) for (const p of l) out.set(`${p.topicId}:${p.partition}`, p);
    return [...out.values()];
  }

  private async answer(groupId: string, topicId: string, partition: number): Promise<ShareOffsetAnswer> {
    const name = this.broker.topicName(topicId);
    const view = name === undefined ? undefined : this.broker.partition(name, partition);
    // What this broker holds is current only while it leads the partition (in a cluster the state may have moved on).
    const leads = name !== undefined && this.broker.notLeader(name, partition) === null;
    const live = leads ? this.share.partitions.loaded(groupId, topicId, partition) : undefined;
    const state = live?.persistedState() ?? (await this.share.persister.read(groupId, topicId, partition));
    if (state === null) return { partition, startOffset: -1n, leaderEpoch: -1, lag: -1n, errorCode: 0, errorMessage: null };
    let done = 0n;
    for (const b of state.stateBatches) if (DONE_STATES.has(b.deliveryState)) done += b.lastOffset - b.firstOffset + 1n;
    const hw = view?.highWatermark ?? -1n;
    const lag = hw < 0n ? -1n : hw - state.startOffset - done < 0n ? 0n : hw - state.startOffset - done;
    return { partition, startOffset: state.startOffset, leaderEpoch: view?.leaderEpoch ?? 0, lag, errorCode: 0, errorMessage: null };
  }

  /** DescribeShareGroupOffsets for one group: the named topics (null: every share-partition with state). */
  async describeOffsets(groupId: string, topics: readonly { topicName: string; partitions: readonly number[] }[] | null): Promise<{ topicName: string; topicId: string; partitions: ShareOffsetAnswer[] }[]> {
    this.share.coordinator.requireAvailable(groupId);
    if (!this.isShareGroup(groupId) && (await this.share.persister.partitionsOf(groupId)).length === 0) {
      throw new KafkaError(ErrorCode.GROUP_ID_NOT_FOUND, `Group ${groupId} not found.`);
    }
    const out: { topicName: string; topicId: string; partitions: ShareOffsetAnswer[] }[] = [];
    if (topics === null) {
      const byTopic = new Map<string, number[]>();
      for (const p of await this.share.persister.partitionsOf(groupId)) byTopic.set(p.topicId, [...(byTopic.get(p.topicId) ?? []), p.partition]);
      for (const [topicId, ps] of byTopic) {
        const topicName = this.broker.topicName(topicId);
        if (topicName === undefined) continue;
        out.push({ topicName, topicId, partitions: await Promise.all(ps.sort((a, b) => a - b).map((p) => this.answer(groupId, topicId, p))) });
      }
      return out.sort((a, b) => (a.topicName < b.topicName ? -1 : 1));
    }
    for (const t of topics) {
      const d = this.broker.topicByName(t.topicName);
      if (d === undefined) {
        out.push({ topicName: t.topicName, topicId: 'AAAAAAAAAAAAAAAAAAAAAA', partitions: t.partitions.map((partition) => ({ partition, startOffset: -1n, leaderEpoch: -1, lag: -1n, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: `Topic ${t.topicName} does not exist` })) });
        continue;
      }
      out.push({ topicName: t.topicName, topicId: d.topicId, partitions: await Promise.all(t.partitions.map((p) => this.answer(groupId, d.topicId, p))) });
    }
    return out;
  }

  private requireEmpty(groupId: string): void {
    const g = this.share.coordinator.group(groupId);
    if (g !== undefined && g.members.size > 0) throw new KafkaError(ErrorCode.NON_EMPTY_GROUP, `The share group ${groupId} is not empty.`);
    if (g === undefined && this.broker.otherGroupExists(groupId)) throw new KafkaError(ErrorCode.GROUP_ID_NOT_FOUND, `Group ${groupId} is not a share group.`);
  }

  /**
   * AlterShareGroupOffsets, as Kafka's alterShareGroupOffsets and
   * persisterInitialize: for an empty (or new) share group, the named
   * partitions are recorded initializing, the share coordinator initialises
   * their state at the group epoch and the new start offset
   * (InitializeShareGroupState: no in-flight records), and those it answered
   * are recorded initialized (a failed one leaves the initializing set and
   * answers its error). A start below the log start moves up to it.
   */
  async alterOffsets(groupId: string, topics: readonly { topicName: string; partitions: readonly { partitionIndex: number; startOffset: bigint }[] }[]): Promise<{ topicName: string; topicId: string; partitions: { partitionIndex: number; errorCode: number; errorMessage: string | null }[] }[]> {
    const c = this.share.coordinator;
    c.requireAvailable(groupId);
    this.requireEmpty(groupId);
    const group = c.getOrCreate(groupId);
    await c.initialized(groupId);
    await c.removeDeletedTopics(group);
    const out: { topicName: string; topicId: string; partitions: { partitionIndex: number; errorCode: number; errorMessage: string | null }[] }[] = [];
    const todo: { topicId: string; topicName: string; partition: number; start: bigint; answer: { partitionIndex: number; errorCode: number; errorMessage: string | null } }[] = [];
    for (const t of topics) {
      const d = this.broker.topicByName(t.topicName);
      const partitions = [];
      for (const p of t.partitions) {
        const answer = { partitionIndex: p.partitionIndex, errorCode: 0, errorMessage: null as string | null };
        partitions.push(answer);
        if (d === undefined || p.partitionIndex < 0 || p.partitionIndex >= d.partitionCount) {
          answer.errorCode = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
          answer.errorMessage = `Unknown partition ${t.topicName}-${p.partitionIndex}`;
          continue;
        }
        const logStart = this.broker.partition(t.topicName, p.partitionIndex)?.logStartOffset ?? 0n;
        todo.push({ topicId: d.topicId, topicName: t.topicName, partition: p.partitionIndex, start: p.startOffset < logStart ? logStart : p.startOffset, answer });
      }
      out.push({ topicName: t.topicName, topicId: d?.topicId ?? 'AAAAAAAAAAAAAAAAAAAAAA', partitions });
    }
    if (todo.length === 0) return out;
    const now = c.now;
    for (const x of todo) group.stateMetadata.markInitializing(x.topicId, x.topicName, [x.partition], now);
    try {
      await c.record(group);
    } catch (err) {
      for (const x of todo) group.stateMetadata.markUninitialized(x.topicId, [x.partition]);
      throw err;
    }
    await Promise.all(todo.map(async (x) => {
      try {
        await this.share.partitions.initialize(groupId, x.topicId, x.partition, group.groupEpoch, x.start);
        group.stateMetadata.markInitialized(x.topicId, x.topicName, [x.partition], c.now);
      } catch (err) {
        const e = err instanceof KafkaError ? err : new KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, (err as Error).message);
        group.stateMetadata.markUninitialized(x.topicId, [x.partition]);
        x.answer.errorCode = e.code;
        x.answer.errorMessage = e.message;
      }
    }));
    // The state is there now: as Kafka answers once the share coordinator did, a failed record write is only logged (a later change writes the sets again).
    await c.record(group).catch(() => undefined);
    return out;
  }

  /**
   * DeleteShareGroupOffsets, as Kafka's initiateDeleteShareGroupOffsets,
   * persister deleteState and completeDeleteShareGroupOffsets: for an empty
   * share group, each named topic with initialized partitions (or already
   * deleting) is recorded deleting, the share coordinator deletes the state
   * of those partitions, and the topics whose state went leave the deleting
   * set in a second record. A topic the group has no initialized state for
   * answers UNKNOWN_TOPIC_OR_PARTITION "There is no offset information to delete.".
   */
  async deleteOffsets(groupId: string, topicNames: readonly string[]): Promise<{ topicName: string; topicId: string; errorCode: number; errorMessage: string | null }[]> {
    const c = this.share.coordinator;
    c.requireAvailable(groupId);
    if (!this.isShareGroup(groupId)) throw new KafkaError(ErrorCode.GROUP_ID_NOT_FOUND, `Group ${groupId} not found.`);
    this.requireEmpty(groupId);
    const g = c.group(groupId)!;
    await c.initialized(groupId);
    await c.removeDeletedTopics(g);
    type Row = { topicName: string; topicId: string; errorCode: number; errorMessage: string | null };
    const refused: Row[] = [];
    const eligible: { topicName: string; topicId: string; partitions: number[] }[] = [];
    for (const topicName of topicNames) {
      const d = this.broker.topicByName(topicName);
      if (d === undefined) {
        refused.push({ topicName, topicId: 'AAAAAAAAAAAAAAAAAAAAAA', errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: 'This server does not host this topic-partition.' });
        continue;
      }
      const partitions = g.stateMetadata.markTopicDeleting(d.topicId, topicName, d.partitionCount);
      if (partitions === null) {
        refused.push({ topicName, topicId: 'AAAAAAAAAAAAAAAAAAAAAA', errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: 'There is no offset information to delete.' });
        continue;
      }
      eligible.push({ topicName, topicId: d.topicId, partitions });
    }
    if (eligible.length === 0) return refused;
    await c.record(g);
    const done: Row[] = [];
    const failed: Row[] = [];
    for (const t of eligible) {
      let error: KafkaError | null = null;
      for (const partition of t.partitions) {
        try {
          await this.share.partitions.forget(groupId, t.topicId, partition);
        } catch (err) {
          error ??= err instanceof KafkaError ? err : new KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, (err as Error).message);
        }
      }
      if (error === null) done.push({ topicName: t.topicName, topicId: t.topicId, errorCode: 0, errorMessage: null });
      else failed.push({ topicName: t.topicName, topicId: t.topicId, errorCode: error.code, errorMessage: error.message });
    }
    if (done.length > 0) {
      g.stateMetadata.completeDeleting(done.map((r) => r.topicId));
      await c.record(g);
    }
    return [...done, ...refused, ...failed];
  }
}
