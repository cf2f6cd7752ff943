// The admin side of share groups (KIP-932): ListGroups entries, deletion,
// and the start offsets of share-partitions (Describe/Alter/DeleteShareGroupOffsets),
// as kafka-share-groups.sh uses them. Offsets here are share-partition start
// offsets (SPSO) from the persisted state; lag counts the records at or above
// the start that are not yet acknowledged or archived, up to the high watermark.
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

  /** DeleteGroups for a share group: empty only; its share-partition state and configs go too. */
  async deleteGroup(groupId: string): Promise<number> {
    const g = this.share.coordinator.group(groupId);
    if (g === undefined) return ErrorCode.GROUP_ID_NOT_FOUND;
    if (g.members.size > 0) return ErrorCode.NON_EMPTY_GROUP;
    // Kafka deletes the initialized and initializing partitions of ShareGroupStatePartitionMetadata; what the persister finds goes too.
    await this.share.coordinator.initialized(groupId);
    for (const p of this.withState(g.stateMetadata.partitionsWithState(), await this.share.persister.partitionsOf(groupId))) await this.share.partitions.forget(groupId, p.topicId, p.partition);
    this.share.coordinator.deleteGroup(groupId);
    await this.share.configs.forget(groupId);
    return ErrorCode.NONE;
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

  /** AlterShareGroupOffsets: new start offsets for an empty (or new) share group. */
  async alterOffsets(groupId: string, topics: readonly { topicName: string; partitions: readonly { partitionIndex: number; startOffset: bigint }[] }[]): Promise<{ topicName: string; topicId: string; partitions: { partitionIndex: number; errorCode: number; errorMessage: string | null }[] }[]> {
    this.requireEmpty(groupId);
    const group = this.share.coordinator.getOrCreate(groupId);
    await this.share.coordinator.initialized(groupId);
    const out = [];
    for (const t of topics) {
      const d = this.broker.topicByName(t.topicName);
      const partitions = [];
      for (const p of t.partitions) {
        if (d === undefined || p.partitionIndex < 0 || p.partitionIndex >= d.partitionCount) {
          partitions.push({ partitionIndex: p.partitionIndex, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: `Unknown partition ${t.topicName}-${p.partitionIndex}` });
          continue;
        }
        const view = this.broker.partition(t.topicName, p.partitionIndex);
        const logStart = view?.logStartOffset ?? 0n;
        // Kafka moves a start offset below the log start up to it.
        const start = p.startOffset < logStart ? logStart : p.startOffset;
        try {
          await this.share.partitions.resetStart(groupId, d.topicId, p.partitionIndex, start);
          // The state is there now: a heartbeat does not initialise it again (Kafka records it initialized).
          this.share.coordinator.markInitialized(group, d.topicId, t.topicName, [p.partitionIndex]);
          partitions.push({ partitionIndex: p.partitionIndex, errorCode: 0, errorMessage: null });
        } catch (err) {
          const e = err instanceof KafkaError ? err : new KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, (err as Error).message);
          partitions.push({ partitionIndex: p.partitionIndex, errorCode: e.code, errorMessage: e.message });
        }
      }
      out.push({ topicName: t.topicName, topicId: d?.topicId ?? 'AAAAAAAAAAAAAAAAAAAAAA', partitions });
    }
    return out;
  }

  /** DeleteShareGroupOffsets: the state of every partition of the named topics goes (the group must be empty). */
  async deleteOffsets(groupId: string, topicNames: readonly string[]): Promise<{ topicName: string; topicId: string; errorCode: number; errorMessage: string | null }[]> {
    if (!this.isShareGroup(groupId)) throw new KafkaError(ErrorCode.GROUP_ID_NOT_FOUND, `Group ${groupId} not found.`);
    this.requireEmpty(groupId);
    const g = this.share.coordinator.group(groupId)!;
    await this.share.coordinator.initialized(groupId);
    const have = this.withState(g.stateMetadata.partitionsWithState(), await this.share.persister.partitionsOf(groupId));
    const out = [];
    for (const topicName of topicNames) {
      const d = this.broker.topicByName(topicName);
      if (d === undefined) {
        out.push({ topicName, topicId: 'AAAAAAAAAAAAAAAAAAAAAA', errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: `Topic ${topicName} does not exist` });
        continue;
      }
      for (const p of have.filter((x) => x.topicId === d.topicId)) await this.share.partitions.forget(groupId, p.topicId, p.partition);
      g.stateMetadata.forgetTopic(d.topicId);
      out.push({ topicName, topicId: d.topicId, errorCode: 0, errorMessage: null });
    }
    return out;
  }
}
