// What the RemoteLogManager keeps per tiered partition, and the context its
// tasks (copy, expiration, sweeping, reads) share. Nothing here is durable:
// every fact about remote segments comes from the remote log metadata, so a
// restart rebuilds this from the metadata replay.
import type { Logger } from 'pino';
import type { Clock } from '../broker/common/clock.js';
import type { Scheduler } from '../broker/common/scheduler.js';
import type { RemoteLogMetadataManager } from '../metadata/remote-log-metadata/remote-log-metadata-manager.js';
import type {
  RemoteLogSegmentMetadata,
  SegmentLeaderEpoch,
  TopicIdPartition,
} from '../metadata/remote-log-metadata/types.js';
import type { ChunkCache } from './read/chunk-cache.js';
import type { IndexCache } from './read/index-cache.js';
import type { LocalLog, TieringConfig } from './local-log.js';
import type { RemoteSegmentRef, RemoteStorage } from './remote-storage.js';
import type { ByteRateThrottle } from './tasks/throttle.js';

export type { TieringConfig };

export function tieringConfig(log: LocalLog): TieringConfig {
  return log.currentConfig;
}

/** How far the orphan sweeper has checked one partition's objects (orphan-sweeper.ts). */
export interface SweepCursor {
  /** Every object based at or below this offset has been checked; undefined: nothing yet (list the whole prefix). */
  after: bigint | undefined;
  /** When the partition's whole prefix was last listed. */
  lastFullMs: number;
}

/** Counters per partition, after Kafka's remote storage metrics. */
export interface PartitionCounters {
  copyRequests: number;
  copyBytes: number;
  copyErrors: number;
  fetchRequests: number;
  fetchBytes: number;
  fetchErrors: number;
  deleteRequests: number;
  deleteErrors: number;
  orphansDeleted: number;
  /** Orphan sweeps of the partition, and those of them that listed its whole prefix. */
  orphanSweeps: number;
  orphanFullSweeps: number;
}

export function newCounters(): PartitionCounters {
  return {
    copyRequests: 0,
    copyBytes: 0,
    copyErrors: 0,
    fetchRequests: 0,
    fetchBytes: 0,
    fetchErrors: 0,
    deleteRequests: 0,
    deleteErrors: 0,
    orphansDeleted: 0,
    orphanSweeps: 0,
    orphanFullSweeps: 0,
  };
}

/**
 * Leader epoch -> first offset, merged from the finished remote segments'
 * epochs: which epoch to ask the metadata index for an offset below the local
 * tier (the local epoch cache forgets epochs as local segments go).
 */
export class RemoteEpochIndex {
  private readonly epochs: number[] = [];
  private readonly starts: bigint[] = [];

  /** Adds a finished segment's epochs (segments arrive in offset order; older epochs are ignored). */
  add(segmentEpochs: readonly SegmentLeaderEpoch[]): void {
    for (const e of segmentEpochs) {
      const n = this.epochs.length;
      const lastEpoch = n === 0 ? undefined : (this.epochs[n - 1] as number);
      if (lastEpoch !== undefined && e.leaderEpoch <= lastEpoch) continue;
      if (n > 0 && e.startOffset < (this.starts[n - 1] as bigint)) continue;
      this.epochs.push(e.leaderEpoch);
      this.starts.push(e.startOffset);
    }
  }

  /** The epoch in force at `offset`, or undefined when the offset precedes every known epoch. */
  epochFor(offset: bigint): number | undefined {
    let lo = 0;
    let hi = this.starts.length - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.starts[mid] as bigint) <= offset) {
        found = mid;
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    return found < 0 ? undefined : this.epochs[found];
  }

  get size(): number {
    return this.epochs.length;
  }
}

/**
 * Who tiers a partition: only its leader copies, expires and sweeps (KIP-405);
 * a follower only follows the metadata (its local retention waits for it).
 */
export interface PartitionLeadership {
  readonly leader: boolean;
  readonly leaderEpoch: number;
}

export class PartitionState {
  epochs = new RemoteEpochIndex();
  readonly counters = newCounters();
  /** Segment ids whose copy this process is running now (a STARTED one not here is dead). */
  readonly copying = new Set<string>();
  /** Aborts the partition's running copy and reads when it is removed. */
  readonly abort = new AbortController();
  /** The tail of the chain that runs the partition's tasks one at a time. */
  private tail: Promise<unknown> = Promise.resolve();
  removed = false;
  /** The epoch index holds the epochs of every segment finished before this process ran. */
  epochsLoaded = false;
  /** DeleteRecords below the remote tier's start (not persisted: the next start uses segment bounds). */
  logStartFloor: bigint | undefined;
  /** When the partition's objects were last listed by the orphan sweeper. */
  lastSweepMs = Number.NEGATIVE_INFINITY;
  /** How far the orphan sweeper has checked the partition's objects (in memory: the first sweep lists everything). */
  readonly sweepCursor: SweepCursor = { after: undefined, lastFullMs: Number.NEGATIVE_INFINITY };
  /** Set when the last task run failed; cleared by a successful run. */
  lastError: unknown;
  /** The leadership the tasks last ran under (undefined before the first run). */
  leadership: PartitionLeadership | undefined;
  /** Aborted when this broker stops leading the partition (its copy and deletions in flight stop). */
  term = new AbortController();
  /** leaderSignal() of the current term, made once. */
  private termSignal: { readonly term: AbortController; readonly signal: AbortSignal } | undefined;

  constructor(
    readonly log: LocalLog,
    readonly tp: TopicIdPartition,
  ) {}

  /**
   * The signal a leader's task runs under: the partition's removal or the end of
   * this leadership. One per term: every run used to combine a new one (each a
   * dependent the partition's long-lived abort signal keeps until collected),
   * three or four per partition every remote.log.manager.task.interval.ms.
   */
  leaderSignal(): AbortSignal {
    if (this.termSignal?.term !== this.term) this.termSignal = { term: this.term, signal: AbortSignal.any([this.abort.signal, this.term.signal]) };
    return this.termSignal.signal;
  }

  /** Whether `leadership` differs from the one the tasks ran under; ends the old term when leadership is lost or moves to another epoch. */
  changeLeadership(leadership: PartitionLeadership): boolean {
    const before = this.leadership;
    if (before !== undefined && before.leader === leadership.leader && before.leaderEpoch === leadership.leaderEpoch) return false;
    if (before?.leader === true) this.term.abort(new Error(`no longer the leader of epoch ${before.leaderEpoch}`));
    this.term = new AbortController();
    this.leadership = leadership;
    return true;
  }

  /** Runs `task` after every task queued before it. */
  serial<T>(task: () => Promise<T>): Promise<T> {
    const run = this.tail.then(task, task);
    this.tail = run.catch(() => undefined);
    return run;
  }

  /** Resolves once every queued task has finished. */
  idle(): Promise<void> {
    return this.tail.then(() => undefined);
  }
}

/** What the tasks of the RemoteLogManager share. */
export interface RlmContext {
  readonly storage: RemoteStorage;
  /** Where segment copies go: the storage itself, or worker threads (StorageWorkerPool). */
  readonly copier: Pick<RemoteStorage, 'copySegment'>;
  readonly metadata: RemoteLogMetadataManager;
  readonly clock: Clock;
  readonly scheduler: Scheduler;
  readonly logger: Logger;
  readonly brokerId: number;
  readonly copyThrottle: ByteRateThrottle;
  readonly fetchThrottle: ByteRateThrottle;
  readonly chunkCache: ChunkCache;
  readonly indexCache: IndexCache;
  /** Objects without a finished record are deleted once older than this. */
  readonly orphanGraceMs: number;
}

export function topicIdPartitionOf(log: LocalLog): TopicIdPartition {
  return { topicId: log.topicId, topic: log.topic, partition: log.partition };
}

export function refOf(metadata: RemoteLogSegmentMetadata): RemoteSegmentRef {
  const tp = metadata.remoteLogSegmentId.topicIdPartition;
  return {
    topic: tp.topic,
    topicId: tp.topicId,
    partition: tp.partition,
    baseOffset: metadata.startOffset,
    segmentId: metadata.remoteLogSegmentId.id,
  };
}

/** Structured log fields naming a remote segment. */
export function segmentFields(metadata: RemoteLogSegmentMetadata): Record<string, string | number> {
  const tp = metadata.remoteLogSegmentId.topicIdPartition;
  return {
    topic: tp.topic,
    partition: tp.partition,
    segmentId: metadata.remoteLogSegmentId.id,
    startOffset: metadata.startOffset.toString(),
    endOffset: metadata.endOffset.toString(),
    sizeInBytes: metadata.segmentSizeInBytes,
  };
}
