// A read-only view of the broker for the HTTP endpoints and the metrics: the
// partitions (both tiers), the consumer groups with their lag, and tiering's
// progress. Everything is read from live state when asked; nothing here is
// cached or counted. The parts are structural subsets of BrokerTopics,
// GroupCoordinator and RemoteLogManager, so tests may pass smaller ones.
import type { ReplicatedPartition, ReplicationPart } from './replication-view.js';
import type { PartitionView } from '../broker-context.js';
import type { GroupCoordinator } from '../group/group-coordinator.js';
import type { LogSegment } from '../log/log-segment.js';
import type { PartitionLog } from '../log/partition-log.js';
import type { TopicRecord } from '../../metadata/topics.js';
import type { RemoteLogManager } from '../../remote-log/remote-log-manager.js';
import { RemoteLogMetadataNotReadyError } from '../../metadata/remote-log-metadata/errors.js';

export interface TopicsPart {
  readonly store: { list(): readonly TopicRecord[]; getById(topicId: string): TopicRecord | undefined };
  partition(topic: string, partition: number): Pick<PartitionView, 'logStartOffset'> | undefined;
  partitionLog(topic: string, partition: number): PartitionLog | undefined;
  isInternal(name: string): boolean;
}

export type GroupsPart = Pick<GroupCoordinator, 'isLoaded' | 'listGroups' | 'describeGroups' | 'fetchOffsets' | 'rebalanceCounts'>;

export type TieringPart = Pick<RemoteLogManager, 'partitionStats' | 'cacheStats' | 'readerStats' | 'lastError' | 'remoteSegments'>;

/** The broker parts the view reads. */
export interface BrokerParts {
  readonly topics: TopicsPart;
  readonly groups: GroupsPart;
  /** Null when tiered storage is off (remote.log.storage.system.enable=false). */
  readonly remoteLogManager: TieringPart | null;
  /** The fetch session cache (absent: no fetch session metrics). */
  readonly fetchSessions?: FetchSessionsPart;
  /** Replication in a cluster (absent for the single broker: no replication metrics or console columns). */
  readonly replication?: ReplicationPart;
}

/** What the metrics read of the fetch session cache. */
export interface FetchSessionsPart {
  readonly size: number;
  readonly totalPartitions: number;
  readonly evictions: number;
  readonly incrementalFetches: number;
}

export type SegmentTier = 'remote' | 'local' | 'active';

/** A segment, or a run of adjacent segments of one tier merged for drawing. */
export interface SegmentBlock {
  readonly tier: SegmentTier;
  readonly baseOffset: bigint;
  /** Inclusive; below baseOffset for an empty active segment. */
  readonly endOffset: bigint;
  readonly sizeBytes: number;
  /** How many segments the block stands for. */
  readonly count: number;
  /** Remote segments: the metadata state (COPY_SEGMENT_STARTED, COPY_SEGMENT_FINISHED, DELETE_SEGMENT_STARTED). */
  readonly state?: string;
}

export interface PartitionSnapshot {
  readonly topic: string;
  readonly partition: number;
  readonly topicId: string;
  readonly internal: boolean;
  /** remote.storage.enable on the topic. */
  readonly tiered: boolean;
  /** ListOffsets -2: the earliest offset held by either tier. */
  readonly logStartOffset: bigint;
  /** ListOffsets -4. */
  readonly localLogStartOffset: bigint;
  readonly highWatermark: bigint;
  readonly lastStableOffset: bigint;
  readonly logEndOffset: bigint;
  /** Local segments, the active one included. */
  readonly localSegments: number;
  readonly localBytes: number;
  /** Finished remote segments and their bytes. */
  readonly remoteSegments: number;
  readonly remoteBytes: number;
  /** ListOffsets -5: -1 when nothing is remote. */
  readonly highestRemoteOffset: bigint;
  /** Present when asked for: the log across the tiers, at most `maxBlocks` blocks per tier. */
  readonly segments?: readonly SegmentBlock[];
  /** In a cluster: the partition's replication picture as this broker sees it. */
  readonly replication?: ReplicationSnapshot;
  /** True while this broker has not loaded the partition's remote log metadata yet (its remote figures are then 0 / -1). */
  readonly remoteMetadataLoading?: true;
}

export interface ReplicaSnapshot {
  readonly nodeId: number;
  readonly inSync: boolean;
  /** Known for this broker's own replica, and for every follower where this broker leads; null otherwise (-1: no fetch yet in this leader term). */
  readonly logEndOffset: bigint | null;
}

export interface ReplicationSnapshot {
  /** -1: offline. */
  readonly leader: number;
  readonly leaderEpoch: number;
  readonly partitionEpoch: number;
  readonly isr: readonly number[];
  /** In replica order (the first is the preferred leader). */
  readonly replicas: readonly ReplicaSnapshot[];
}

/** The replication picture of one partition, or undefined outside a cluster or for a partition the image does not have. */
function replicationSnapshot(part: ReplicationPart, byKey: ReadonlyMap<string, ReplicatedPartition>, topic: string, partition: number): ReplicationSnapshot | undefined {
  const p = byKey.get(`${topic}\u0000${partition}`);
  if (p === undefined) return undefined;
  const progress = part.progress(topic, partition);
  return {
    leader: p.leader,
    leaderEpoch: p.leaderEpoch,
    partitionEpoch: p.partitionEpoch,
    isr: p.isr,
    replicas: p.replicas.map((nodeId) => ({ nodeId, inSync: p.isr.includes(nodeId), logEndOffset: progress?.logEndOffsets.get(nodeId) ?? null })),
  };
}

export interface PartitionQuery {
  readonly topic?: string;
  /** Include the segment blocks (the console's picture). */
  readonly segments?: boolean;
  /** Blocks per tier at most (adjacent segments are merged beyond it); default 120. */
  readonly maxBlocks?: number;
  /** Leave out internal topics (__consumer_offsets, __remote_log_metadata). */
  readonly excludeInternal?: boolean;
}

interface OpenPartition {
  readonly record: TopicRecord;
  readonly partition: number;
  readonly log: PartitionLog;
}

/** Every partition with a local log here, in topic then partition order. */
function openPartitions(topics: TopicsPart, filter: { topic?: string; excludeInternal?: boolean } = {}): OpenPartition[] {
  const out: OpenPartition[] = [];
  const records = [...topics.store.list()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const record of records) {
    if (filter.topic !== undefined && record.name !== filter.topic) continue;
    if (filter.excludeInternal === true && topics.isInternal(record.name)) continue;
    for (let p = 0; p < record.partitionCount; p++) {
      const log = topics.partitionLog(record.name, p);
      if (log !== undefined) out.push({ record, partition: p, log });
    }
  }
  return out;
}

/**
 * `read()`, or `fallback` while the partition's remote log metadata is not
 * loaded (in a cluster it comes from a metadata partition another broker may
 * lead): the console and the metrics show the partition meanwhile instead of failing.
 */
function unlessLoading<T>(read: () => T, fallback: T, loading: { seen: boolean }): T {
  try {
    return read();
  } catch (e) {
    if (!(e instanceof RemoteLogMetadataNotReadyError)) throw e;
    loading.seen = true;
    return fallback;
  }
}

export function partitionSnapshots(parts: BrokerParts, query: PartitionQuery = {}): PartitionSnapshot[] {
  const rlm = parts.remoteLogManager;
  const repl = parts.replication;
  const byKey = new Map((repl?.partitions() ?? []).map((p) => [`${p.topic}\u0000${p.partition}`, p] as const));
  return openPartitions(parts.topics, query).map(({ record, partition, log }) => {
    const loading = { seen: false };
    const stats = unlessLoading(() => rlm?.partitionStats(log), undefined, loading);
    const replication = repl === undefined ? undefined : replicationSnapshot(repl, byKey, record.name, partition);
    const closed = log.closedSegments();
    const snapshot: PartitionSnapshot = {
      topic: record.name,
      partition,
      topicId: record.topicId,
      internal: parts.topics.isInternal(record.name),
      tiered: log.currentConfig.remoteStorageEnable === true,
      logStartOffset: unlessLoading(() => parts.topics.partition(record.name, partition)?.logStartOffset, undefined, loading) ?? log.logStartOffset,
      localLogStartOffset: log.localLogStartOffset,
      highWatermark: log.highWatermark,
      lastStableOffset: log.lastStableOffset,
      logEndOffset: log.logEndOffset,
      localSegments: closed.length + 1,
      localBytes: log.size,
      remoteSegments: stats?.remoteSegmentCount ?? 0,
      remoteBytes: stats?.remoteLogSizeBytes ?? 0,
      highestRemoteOffset: stats?.highestRemoteOffset ?? -1n,
      ...(replication === undefined ? {} : { replication }),
      ...(loading.seen ? { remoteMetadataLoading: true as const } : {}),
    };
    if (query.segments !== true) return snapshot;
    const max = query.maxBlocks ?? 120;
    const remote = (unlessLoading(() => rlm?.remoteSegments(log), undefined, loading) ?? []).map((s) => ({
      tier: 'remote' as const,
      baseOffset: s.startOffset,
      endOffset: s.endOffset,
      sizeBytes: s.segmentSizeInBytes,
      count: 1,
      state: s.state,
    }));
    const local = closed.map((s) => localBlock(s, 'local'));
    return { ...snapshot, segments: [...mergeBlocks(remote, max), ...mergeBlocks(local, max), localBlock(log.activeSegment(), 'active')] };
  });
}

function localBlock(s: LogSegment, tier: SegmentTier): SegmentBlock {
  return { tier, baseOffset: s.baseOffset, endOffset: s.nextOffset - 1n, sizeBytes: s.size, count: 1 };
}

/**
 * At most `max` blocks: runs of adjacent blocks are merged (a merged remote run
 * keeps a state only when all its segments share it).
 */
export function mergeBlocks(blocks: readonly SegmentBlock[], max: number): SegmentBlock[] {
  if (blocks.length <= max) return [...blocks];
  const per = Math.ceil(blocks.length / Math.max(1, max));
  const out: SegmentBlock[] = [];
  for (let i = 0; i < blocks.length; i += per) {
    const run = blocks.slice(i, i + per);
    const first = run[0] as SegmentBlock;
    const last = run[run.length - 1] as SegmentBlock;
    const states = new Set(run.map((b) => b.state));
    const state = states.size === 1 ? first.state : undefined;
    out.push({
      tier: first.tier,
      baseOffset: first.baseOffset,
      endOffset: last.endOffset,
      sizeBytes: run.reduce((n, b) => n + b.sizeBytes, 0),
      count: run.reduce((n, b) => n + b.count, 0),
      ...(state === undefined ? {} : { state }),
    });
  }
  return out;
}

// ---------------------------------------------------------------- groups

export interface GroupPartitionLag {
  readonly topic: string;
  readonly partition: number;
  readonly committedOffset: bigint;
  /** The partition's high watermark (what ListOffsets latest answers), -1 when the partition is not here. */
  readonly highWatermark: bigint;
  /** highWatermark - committedOffset (never negative); null when unknown. */
  readonly lag: bigint | null;
}

export interface GroupSnapshot {
  readonly groupId: string;
  readonly state: string;
  readonly protocolType: string;
  readonly protocol: string;
  readonly members: number;
  /** Rebalances the group completed since the broker started. */
  readonly rebalances: number;
  readonly partitions: readonly GroupPartitionLag[];
  readonly totalLag: bigint;
  readonly maxLag: bigint;
}

/** Every group with its committed offsets and lag (empty while __consumer_offsets is loading). */
export function groupSnapshots(parts: BrokerParts, filter: { groupId?: string } = {}): GroupSnapshot[] {
  const groups = parts.groups;
  if (!groups.isLoaded) return [];
  const listed = groups.listGroups().groups.filter((g) => filter.groupId === undefined || g.groupId === filter.groupId);
  if (listed.length === 0) return [];
  listed.sort((a, b) => (a.groupId < b.groupId ? -1 : a.groupId > b.groupId ? 1 : 0));
  const ids = listed.map((g) => g.groupId);
  const described = new Map(groups.describeGroups(ids).map((d) => [d.groupId, d]));
  const offsets = new Map(groups.fetchOffsets(ids.map((groupId) => ({ groupId, topics: null }))).map((o) => [o.groupId, o]));
  const rebalances = groups.rebalanceCounts();
  return listed.map((g) => {
    const d = described.get(g.groupId);
    const partitions: GroupPartitionLag[] = [];
    for (const t of offsets.get(g.groupId)?.topics ?? []) {
      for (const p of t.partitions) {
        if (p.errorCode !== 0) continue;
        const log = parts.topics.partitionLog(t.name, p.partitionIndex);
        const hw = log?.highWatermark ?? -1n;
        const lag = log === undefined || p.committedOffset < 0n ? null : hw > p.committedOffset ? hw - p.committedOffset : 0n;
        partitions.push({ topic: t.name, partition: p.partitionIndex, committedOffset: p.committedOffset, highWatermark: hw, lag });
      }
    }
    partitions.sort((a, b) => (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : a.partition - b.partition));
    let totalLag = 0n;
    let maxLag = 0n;
    for (const p of partitions) {
      if (p.lag === null) continue;
      totalLag += p.lag;
      if (p.lag > maxLag) maxLag = p.lag;
    }
    return {
      groupId: g.groupId,
      state: g.groupState,
      protocolType: g.protocolType,
      protocol: d?.protocolData ?? '',
      members: d?.members.length ?? 0,
      rebalances: rebalances.get(g.groupId) ?? 0,
      partitions,
      totalLag,
      maxLag,
    };
  });
}

// ---------------------------------------------------------------- tiering

export interface TieringPartition {
  readonly topic: string;
  readonly partition: number;
  readonly tiered: boolean;
  readonly copyLagSegments: number;
  readonly copyLagBytes: number;
  readonly deleteLagSegments: number;
  readonly deleteLagBytes: number;
  readonly remoteSegments: number;
  readonly remoteBytes: number;
  /** Local bytes not yet remote, the active segment included. */
  readonly onlyLocalBytes: number;
  readonly highestRemoteOffset: bigint;
  readonly remoteLogStartOffset: bigint | null;
  readonly copyRequests: number;
  readonly copyBytes: number;
  readonly copyErrors: number;
  readonly fetchRequests: number;
  readonly fetchBytes: number;
  readonly fetchErrors: number;
  readonly deleteRequests: number;
  readonly deleteErrors: number;
  /** The last task run's first failure, null after a clean run. */
  readonly lastError: string | null;
}

export interface TieringSnapshot {
  /** Tiered storage is on for the broker. */
  readonly enabled: boolean;
  readonly readerQueueDepth: number;
  readonly chunkCache: { readonly hits: number; readonly misses: number; readonly bytes: number; readonly entries: number; readonly evictions: number; readonly fetches: number; readonly fetchedBytes: number };
  readonly indexCache: { readonly hits: number; readonly misses: number; readonly bytes: number; readonly entries: number; readonly evictions: number };
  readonly totals: { readonly copyLagSegments: number; readonly copyLagBytes: number; readonly deleteLagSegments: number; readonly deleteLagBytes: number; readonly remoteSegments: number; readonly remoteBytes: number };
  /** Partitions of tiered topics, and of topics that still hold remote data. */
  readonly partitions: readonly TieringPartition[];
}

/** The RemoteLogManager's per-partition numbers, keyed by the open logs (untiered partitions without remote data left out). */
export function tieringPartitions(parts: BrokerParts, filter: { topic?: string } = {}): TieringPartition[] {
  const rlm = parts.remoteLogManager;
  if (rlm === null) return [];
  const out: TieringPartition[] = [];
  for (const { record, partition, log } of openPartitions(parts.topics, { ...filter, excludeInternal: true })) {
    const tiered = log.currentConfig.remoteStorageEnable === true;
    const s = unlessLoading(() => rlm.partitionStats(log), undefined, { seen: false });
    if (s === undefined || (!tiered && s.remoteSegmentCount === 0)) continue;
    const err = rlm.lastError(log);
    out.push({
      topic: record.name,
      partition,
      tiered,
      copyLagSegments: tiered ? s.copyLagSegments : 0,
      copyLagBytes: tiered ? s.copyLagBytes : 0,
      deleteLagSegments: s.deleteLagSegments,
      deleteLagBytes: s.deleteLagBytes,
      remoteSegments: s.remoteSegmentCount,
      remoteBytes: s.remoteLogSizeBytes,
      onlyLocalBytes: s.onlyLocalBytes,
      highestRemoteOffset: s.highestRemoteOffset,
      remoteLogStartOffset: s.remoteLogStartOffset,
      copyRequests: s.copyRequests,
      copyBytes: s.copyBytes,
      copyErrors: s.copyErrors,
      fetchRequests: s.fetchRequests,
      fetchBytes: s.fetchBytes,
      fetchErrors: s.fetchErrors,
      deleteRequests: s.deleteRequests,
      deleteErrors: s.deleteErrors,
      lastError: err === undefined || err === null ? null : err instanceof Error ? err.message : String(err),
    });
  }
  return out;
}

export function tieringSnapshot(parts: BrokerParts): TieringSnapshot {
  const rlm = parts.remoteLogManager;
  const partitions = tieringPartitions(parts);
  const sum = (f: (p: TieringPartition) => number): number => partitions.reduce((n, p) => n + f(p), 0);
  const caches = rlm?.cacheStats();
  const c = caches?.chunks;
  const i = caches?.indexes;
  return {
    enabled: rlm !== null,
    readerQueueDepth: rlm?.readerStats().inFlight ?? 0,
    chunkCache: {
      hits: c?.hits ?? 0,
      misses: c?.misses ?? 0,
      bytes: c?.bytes ?? 0,
      entries: c?.entries ?? 0,
      evictions: c?.evictions ?? 0,
      fetches: c?.fetches ?? 0,
      fetchedBytes: c?.fetchedBytes ?? 0,
    },
    indexCache: { hits: i?.hits ?? 0, misses: i?.misses ?? 0, bytes: i?.bytes ?? 0, entries: i?.entries ?? 0, evictions: i?.evictions ?? 0 },
    totals: {
      copyLagSegments: sum((p) => p.copyLagSegments),
      copyLagBytes: sum((p) => p.copyLagBytes),
      deleteLagSegments: sum((p) => p.deleteLagSegments),
      deleteLagBytes: sum((p) => p.deleteLagBytes),
      remoteSegments: sum((p) => p.remoteSegments),
      remoteBytes: sum((p) => p.remoteBytes),
    },
    partitions,
  };
}

/** Open partitions (for metrics that read every log). */
export function eachPartitionLog(parts: BrokerParts): { topic: string; partition: number; log: PartitionLog }[] {
  return openPartitions(parts.topics).map((p) => ({ topic: p.record.name, partition: p.partition, log: p.log }));
}
