// The broker's Prometheus metrics, on a registry of its own (never the global
// one, so several brokers can run in one process). Most values are read from
// live state at scrape time: the partition logs, the RemoteLogManager's
// partitionStats/cacheStats/readerStats, the group coordinator's offsets and
// rebalance counts. Request latency and traffic are counted as requests pass
// (RequestMetrics). Node's runtime metrics (process_*, nodejs_*) come from
// prom-client's collectDefaultMetrics on the same registry.
//
// Per topic (Kafka's BrokerTopicMetrics remote storage meters, as counters):
//   sediment_remote_copy_bytes_total, _copy_requests_total, _copy_errors_total,
//   sediment_remote_fetch_bytes_total, _fetch_requests_total, _fetch_errors_total,
//   sediment_remote_delete_requests_total, _delete_errors_total
// Per partition (gauges):
//   sediment_remote_copy_lag_bytes / _segments    closed segments not yet remote
//                                                 (the active segment never counts)
//   sediment_remote_delete_lag_bytes / _segments  remote segments due for deletion
//   sediment_remote_log_size_bytes, sediment_remote_log_segments
//   sediment_remote_log_task_failing              1 when the last tiering run failed
//   sediment_log_start_offset, sediment_log_end_offset, sediment_log_size_bytes,
//   sediment_log_segments                         (Kafka's Log metrics, local tier)
// Broker:
//   sediment_remote_chunk_cache_hits_total, _misses_total, _evictions_total, _bytes
//   sediment_remote_chunk_fetches_total, sediment_remote_chunk_fetch_bytes_total (ranged GETs)
//   sediment_remote_index_cache_hits_total, _misses_total, _bytes
//   sediment_remote_reader_queue_depth             remote reads in flight
// Traffic (request-metrics.ts): sediment_bytes_in_total, sediment_messages_in_total,
//   sediment_bytes_out_total, sediment_fetch_consumer_bytes_total (bytes out to consumers only)
// Fetch sessions (KIP-227):
//   sediment_fetch_sessions, sediment_fetch_session_partitions (Kafka NumIncrementalFetchSessions,
//   NumIncrementalFetchPartitionsCached), sediment_fetch_session_evictions_total,
//   sediment_fetch_session_incremental_fetches_total
// Consumer groups:
//   sediment_consumer_group_lag{group,topic,partition}, sediment_consumer_group_max_lag{group},
//   sediment_consumer_group_members{group}, sediment_consumer_group_rebalances_total{group}
// Replication (a broker of a cluster; replication-view.ts, Kafka's ReplicaManager and controller gauges):
//   sediment_under_replicated_partitions, sediment_under_min_isr_partitions,
//   sediment_offline_partitions (controller), sediment_leader_partitions,
//   sediment_isr_shrinks_total, sediment_isr_expands_total (Kafka IsrShrinksPerSec / IsrExpandsPerSec),
//   sediment_replica_follower_lag{topic,partition,replica} (leader side: LEO minus the follower's fetch offset),
//   sediment_replica_truncations_total, sediment_replica_fetch_bytes_total{topic} (record bytes appended as a follower)
import { collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import type { ApiHandler } from '../handlers/api-handler.js';
import type { RequestObserver } from '../server/dispatcher.js';
import {
  eachPartitionLog,
  groupSnapshots,
  tieringPartitions,
  type BrokerParts,
  type GroupSnapshot,
  type TieringPart,
  type TieringPartition,
} from './broker-view.js';
import { CumulativeCounter } from './cumulative-counter.js';
import { ReplicationEventStats, replicationCounts } from './replication-view.js';
import { RequestMetrics } from './request-metrics.js';

export interface BrokerMetricsOptions {
  /** Register process_* and nodejs_* runtime metrics (default true). */
  readonly runtimeMetrics?: boolean;
}

/** What one scrape reads from the broker, once, for every metric. */
interface Reading {
  readonly tiering: readonly TieringPartition[];
  readonly groups: readonly GroupSnapshot[];
  readonly logs: ReturnType<typeof eachPartitionLog>;
}

type Labels<L extends string> = Partial<Record<L, string | number>>;

/** The RemoteLogManager's per-partition counters and their metric names. */
const REMOTE_COUNTERS = [
  ['copyBytes', 'sediment_remote_copy_bytes_total', 'Segment bytes copied to remote storage (Kafka RemoteCopyBytesPerSec)'],
  ['copyRequests', 'sediment_remote_copy_requests_total', 'Segment copies to remote storage started (Kafka RemoteCopyRequestsPerSec)'],
  ['copyErrors', 'sediment_remote_copy_errors_total', 'Segment copies to remote storage that failed (Kafka RemoteCopyErrorsPerSec)'],
  ['fetchBytes', 'sediment_remote_fetch_bytes_total', 'Record bytes read from remote storage (Kafka RemoteFetchBytesPerSec)'],
  ['fetchRequests', 'sediment_remote_fetch_requests_total', 'Reads served from remote storage (Kafka RemoteFetchRequestsPerSec)'],
  ['fetchErrors', 'sediment_remote_fetch_errors_total', 'Reads from remote storage that failed (Kafka RemoteFetchErrorsPerSec)'],
  ['deleteRequests', 'sediment_remote_delete_requests_total', 'Remote segment deletions started (Kafka RemoteDeleteRequestsPerSec)'],
  ['deleteErrors', 'sediment_remote_delete_errors_total', 'Remote segment deletions that failed (Kafka RemoteDeleteErrorsPerSec)'],
] as const;

/**
 * How often the event loop delay histogram (nodejs_eventloop_lag_*) samples
 * the loop. prom-client's default, 10 ms, wakes an idle broker 100 times a
 * second: an idle broker used about 8 ms of CPU per second on the bench
 * machine with it, and 1-4 ms at 50 ms (24-25 against 3-11 clock ticks over
 * 30 s, seven readings 25-45 s after start), CPU that every consume and
 * produce measurement paid too. A
 * stall still shows in the max and the percentiles; they are taken over 20
 * samples a second instead of 100. As before, each sample is the whole
 * interval between two turns of the timer, so an idle loop reads 0.05 s in
 * nodejs_eventloop_lag_* (0.01 s before): how late the loop ran is the figure
 * minus this interval.
 */
export const EVENT_LOOP_MONITORING_MS = 50;

export class BrokerMetrics {
  readonly registry = new Registry();
  readonly requests: RequestMetrics;
  private reading: Reading | null = null;
  private readonly totals: Array<(r: Reading) => void> = [];

  constructor(
    private readonly parts: BrokerParts,
    options: BrokerMetricsOptions = {},
  ) {
    this.requests = new RequestMetrics(this.registry, (topicId) => parts.topics.store.getById(topicId)?.name);
    if (options.runtimeMetrics !== false) collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: EVENT_LOOP_MONITORING_MS });
    this.registerTiering();
    this.registerLogs();
    this.registerCaches();
    this.registerGroups();
    this.registerFetchSessions();
    this.registerReplication();
  }

  /** The dispatcher's RequestObserver (request latency, rate and errors per API). */
  get requestObserver(): RequestObserver {
    return this.requests.observer;
  }

  /** The handlers with Produce and Fetch counting bytes in and out per topic. */
  instrument<B>(handlers: readonly ApiHandler<unknown, unknown, B>[]): ApiHandler<unknown, unknown, B>[] {
    return this.requests.instrument(handlers);
  }

  /** The Prometheus text exposition. */
  scrape(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /**
   * The broker read once per scrape: the registry runs every metric's collect
   * in one synchronous pass, and the reading is dropped on the next turn of the
   * event loop. The counters fed from totals are brought up to date with it.
   */
  private read(): Reading {
    if (this.reading !== null) return this.reading;
    const parts = this.parts;
    const reading: Reading = { tiering: tieringPartitions(parts), groups: groupSnapshots(parts), logs: eachPartitionLog(parts) };
    this.reading = reading;
    setImmediate(() => {
      this.reading = null;
    });
    for (const update of this.totals) update(reading);
    return reading;
  }

  private gauge<L extends string>(name: string, help: string, labelNames: readonly L[], fill: (r: Reading, set: (labels: Labels<L>, value: number) => void) => void): void {
    const g: Gauge<L> = new Gauge<L>({
      name,
      help,
      labelNames,
      registers: [this.registry],
      collect: () => {
        const r = this.read();
        g.reset();
        fill(r, (labels, value) => g.set(labels, value));
      },
    });
  }

  /** A counter following totals kept elsewhere; `update` feeds it from each reading. */
  private counter<L extends string>(name: string, help: string, labelNames: readonly L[], update: (r: Reading, c: CumulativeCounter<L>) => void): void {
    const c = new CumulativeCounter<L>({ name, help, labelNames, registry: this.registry, collect: () => void this.read() });
    this.totals.push((r) => update(r, c));
  }

  private registerTiering(): void {
    for (const [field, name, help] of REMOTE_COUNTERS) {
      this.counter(name, help, ['topic'], (r, c) => {
        const live = new Set<string>();
        for (const p of r.tiering) {
          const key = `${p.topic}\u0000${p.partition}`;
          live.add(key);
          c.observe(key, { topic: p.topic }, p[field]);
        }
        c.retain(live);
      });
    }
    const perPartition = (name: string, help: string, value: (p: TieringPartition) => number): void =>
      this.gauge(name, help, ['topic', 'partition'], (r, set) => {
        for (const p of r.tiering) set({ topic: p.topic, partition: p.partition }, value(p));
      });
    perPartition('sediment_remote_copy_lag_bytes', 'Bytes of closed local segments not yet copied to remote storage (Kafka RemoteCopyLagBytes; the active segment never counts)', (p) => p.copyLagBytes);
    perPartition('sediment_remote_copy_lag_segments', 'Closed local segments not yet copied to remote storage (Kafka RemoteCopyLagSegments)', (p) => p.copyLagSegments);
    perPartition('sediment_remote_delete_lag_bytes', 'Bytes of remote segments due for deletion and not yet deleted (Kafka RemoteDeleteLagBytes)', (p) => p.deleteLagBytes);
    perPartition('sediment_remote_delete_lag_segments', 'Remote segments due for deletion and not yet deleted (Kafka RemoteDeleteLagSegments)', (p) => p.deleteLagSegments);
    perPartition('sediment_remote_log_size_bytes', 'Bytes of the finished remote segments (Kafka RemoteLogSizeBytes)', (p) => p.remoteBytes);
    perPartition('sediment_remote_log_segments', 'Finished remote segments (Kafka RemoteLogMetadataCount)', (p) => p.remoteSegments);
    perPartition('sediment_remote_log_task_failing', "1 when the partition's last tiering run failed (store down, metadata not ready)", (p) => (p.lastError === null ? 0 : 1));
  }

  private registerLogs(): void {
    const perLog = (name: string, help: string, value: (l: Reading['logs'][number]['log']) => number): void =>
      this.gauge(name, help, ['topic', 'partition'], (r, set) => {
        for (const p of r.logs) set({ topic: p.topic, partition: p.partition }, value(p.log));
      });
    perLog('sediment_log_start_offset', 'First offset of the local log (Kafka LogStartOffset, local tier)', (l) => Number(l.logStartOffset));
    perLog('sediment_log_end_offset', 'The next offset to be written (Kafka LogEndOffset)', (l) => Number(l.logEndOffset));
    perLog('sediment_log_size_bytes', 'Bytes of the local segments (Kafka Log Size)', (l) => l.size);
    perLog('sediment_log_segments', 'Local segments, the active one included (Kafka NumLogSegments)', (l) => l.closedSegments().length + 1);
  }

  private registerCaches(): void {
    const rlm = this.parts.remoteLogManager;
    const stat = (name: string, help: string, value: (s: ReturnType<TieringPart['cacheStats']>) => number): void =>
      this.counter(name, help, [], (_r, c) => {
        const s = rlm?.cacheStats();
        if (s !== undefined) c.observe('', {}, value(s));
      });
    stat('sediment_remote_chunk_cache_hits_total', 'Chunks remote reads found in the chunk cache (or already being fetched)', (s) => s.chunks.hits + s.chunks.inFlightHits);
    stat('sediment_remote_chunk_cache_misses_total', 'Chunks remote reads had to fetch from remote storage', (s) => s.chunks.misses);
    stat('sediment_remote_chunk_cache_evictions_total', 'Chunks evicted from the chunk cache', (s) => s.chunks.evictions);
    stat('sediment_remote_chunk_fetches_total', 'Ranged GETs of segment chunks (reads and read-ahead)', (s) => s.chunks.fetches);
    stat('sediment_remote_chunk_fetch_bytes_total', 'Bytes of segment chunks fetched from remote storage', (s) => s.chunks.fetchedBytes);
    stat('sediment_remote_index_cache_hits_total', 'Remote index lookups served from the index cache', (s) => s.indexes.hits);
    stat('sediment_remote_index_cache_misses_total', 'Remote indexes fetched from remote storage', (s) => s.indexes.misses);
    this.gauge('sediment_remote_chunk_cache_bytes', 'Bytes held by the chunk cache', [], (_r, set) => set({}, rlm?.cacheStats().chunks.bytes ?? 0));
    this.gauge('sediment_remote_index_cache_bytes', 'Bytes held by the remote index cache', [], (_r, set) => set({}, rlm?.cacheStats().indexes.bytes ?? 0));
    this.gauge(
      'sediment_remote_reader_queue_depth',
      'Remote reads in flight (Kafka RemoteLogReaderTaskQueueSize; Sediment runs them concurrently, each bounded by remote.fetch.max.wait.ms)',
      [],
      (_r, set) => set({}, rlm?.readerStats().inFlight ?? 0),
    );
  }

  private registerFetchSessions(): void {
    const sessions = this.parts.fetchSessions;
    if (sessions === undefined) return;
    this.gauge('sediment_fetch_sessions', 'Incremental fetch sessions in the cache (Kafka NumIncrementalFetchSessions)', [], (_r, set) => set({}, sessions.size));
    this.gauge('sediment_fetch_session_partitions', 'Partitions held by all fetch sessions (Kafka NumIncrementalFetchPartitionsCached)', [], (_r, set) => set({}, sessions.totalPartitions));
    this.counter('sediment_fetch_session_evictions_total', 'Fetch sessions evicted to make room for new ones (Kafka IncrementalFetchSessionEvictionsPerSec)', [], (_r, c) => c.observe('', {}, sessions.evictions));
    this.counter('sediment_fetch_session_incremental_fetches_total', 'Incremental fetches served in a fetch session', [], (_r, c) => c.observe('', {}, sessions.incrementalFetches));
  }

  private registerReplication(): void {
    const part = this.parts.replication;
    if (part === undefined) return;
    const stats = new ReplicationEventStats();
    part.onEvent((e) => stats.observe(e));
    const count = (name: string, help: string, value: (c: ReturnType<typeof replicationCounts>) => number): void =>
      this.gauge(name, help, [], (_r, set) => set({}, value(replicationCounts(part))));
    count('sediment_under_replicated_partitions', 'Partitions this broker leads whose ISR is smaller than their replica set (Kafka UnderReplicatedPartitions)', (c) => c.underReplicated);
    count('sediment_under_min_isr_partitions', 'Partitions this broker leads whose ISR is below min.insync.replicas (Kafka UnderMinIsrPartitionCount)', (c) => c.underMinIsr);
    count('sediment_offline_partitions', 'Partitions without a leader; reported by the controller, 0 on other brokers (Kafka OfflinePartitionsCount)', (c) => c.offline);
    count('sediment_leader_partitions', 'Partitions this broker leads (Kafka LeaderCount)', (c) => c.leaderCount);
    this.counter('sediment_isr_shrinks_total', 'ISR shrinks of partitions this broker leads (Kafka IsrShrinksPerSec)', [], (_r, c) => c.observe('', {}, stats.isrShrinks));
    this.counter('sediment_isr_expands_total', 'ISR expansions of partitions this broker leads (Kafka IsrExpandsPerSec)', [], (_r, c) => c.observe('', {}, stats.isrExpands));
    this.counter('sediment_replica_fetch_bytes_total', 'Record bytes this broker appended as a follower, per topic (Kafka FetcherStats BytesPerSec)', ['topic'], (_r, c) => {
      for (const [topic, n] of stats.fetchedBytes) c.observe(topic, { topic }, n);
    });
    this.counter('sediment_replica_truncations_total', 'Follower log truncations to the leader\'s epoch history (KIP-101/279)', [], (_r, c) => c.observe('', {}, stats.truncations));
    this.gauge('sediment_replica_follower_lag', "Leader side: the leader's log end offset minus the follower's last fetch offset", ['topic', 'partition', 'replica'], (_r, set) => {
      for (const l of stats.followerLags()) set({ topic: l.topic, partition: l.partition, replica: l.replica }, Number(l.lag));
    });
  }

  private registerGroups(): void {
    const groups = this.parts.groups;
    this.counter('sediment_consumer_group_rebalances_total', 'Rebalances the group completed (Kafka completed-rebalance count)', ['group'], (_r, c) => {
      if (!groups.isLoaded) return;
      const counts = groups.rebalanceCounts();
      for (const [group, n] of counts) c.observe(group, { group }, n);
      c.retain(new Set(counts.keys()));
    });
    this.gauge('sediment_consumer_group_lag', 'High watermark minus the committed offset, per group and partition', ['group', 'topic', 'partition'], (r, set) => {
      for (const g of r.groups) for (const p of g.partitions) if (p.lag !== null) set({ group: g.groupId, topic: p.topic, partition: p.partition }, Number(p.lag));
    });
    this.gauge('sediment_consumer_group_max_lag', 'The largest partition lag of the group', ['group'], (r, set) => {
      for (const g of r.groups) set({ group: g.groupId }, Number(g.maxLag));
    });
    this.gauge('sediment_consumer_group_members', 'Members of the group', ['group'], (r, set) => {
      for (const g of r.groups) set({ group: g.groupId }, g.members);
    });
  }
}
