// The log cleaner (Kafka's LogCleaner + LogCleanerManager, one cleaner
// thread): a periodic task on the injected Scheduler that picks the dirtiest
// log among every topic with cleanup.policy containing compact (internal or
// not) and runs one cleaning round on it; when nothing qualified it waits
// log.cleaner.backoff.ms. A log qualifies when its dirty ratio exceeds
// min.cleanable.dirty.ratio, when its oldest dirty segment is older than
// max.compaction.lag.ms, or (Sediment's addition, so quiet logs lose their
// tombstones too) when a tombstone or marker it kept has reached its delete
// horizon. One round at a time, one offset map of log.cleaner.dedupe.buffer.size
// bytes allocated on first use. The first dirty offset of every partition is
// kept in each log dir's `cleaner-offset-checkpoint`.
//
// Wiring (composition root): `LogCleaner.start({ logManager, clock, scheduler,
// config: logCleanerConfigFrom(brokerConfig), logger })` after the LogManager
// started, and `await cleaner.stop()` before `logManager.shutdown()`.
import path from 'node:path';
import type { Logger } from 'pino';
import type { Clock } from '../../common/clock.js';
import { ErrorCode, KafkaError } from '../../protocol/errors.js';
import type { Scheduler, TimerHandle } from '../../common/scheduler.js';
import { SegmentClosedError } from '../file-handles.js';
import type { PartitionLog } from '../partition-log.js';
import {
  type CleanableLogView,
  type LogToClean,
  cleanableOffsets,
  compactionConfigOf,
  logToClean,
  maxCompactionDelay,
} from './cleanable.js';
import { CleanerCheckpoints } from './cleaner-checkpoint.js';
import { CleaningAbortedError, type CleanerStats, cleanLog } from './cleaner.js';
import { OffsetMap } from './offset-map.js';
import type { SwapStepHook } from './segment-swap.js';

export interface LogCleanerConfig {
  /** log.cleaner.enable: run the periodic task (cleanNow works either way). */
  enable: boolean;
  /** log.cleaner.backoff.ms: pause when no log needed cleaning. */
  backoffMs: number;
  /** log.cleaner.dedupe.buffer.size: bytes of the offset map (24 bytes a key), split between threads. */
  dedupeBufferSize: number;
  /** log.cleaner.threads: rounds run one at a time; the map is dedupeBufferSize / threads. */
  threads: number;
  /** log.cleaner.io.buffer.size: bytes read from a segment at a time. */
  ioBufferSize: number;
  /** log.cleaner.io.buffer.load.factor: the map is filled up to this fraction. */
  dedupeBufferLoadFactor: number;
}

export const defaultLogCleanerConfig: Readonly<LogCleanerConfig> = Object.freeze({
  enable: true,
  backoffMs: 15_000,
  dedupeBufferSize: 128 * 1024 * 1024,
  threads: 1,
  ioBufferSize: 512 * 1024,
  dedupeBufferLoadFactor: 0.9,
});

/** The cleaner settings from the broker config (BrokerConfig fits). */
export function logCleanerConfigFrom(c: { getBoolean(name: string): boolean; getLong(name: string): number; getInt(name: string): number }): LogCleanerConfig {
  return {
    enable: c.getBoolean('log.cleaner.enable'),
    backoffMs: c.getLong('log.cleaner.backoff.ms'),
    dedupeBufferSize: c.getLong('log.cleaner.dedupe.buffer.size'),
    threads: Math.max(1, c.getInt('log.cleaner.threads')),
    ioBufferSize: c.getInt('log.cleaner.io.buffer.size'),
    dedupeBufferLoadFactor: defaultLogCleanerConfig.dedupeBufferLoadFactor,
  };
}

export interface LogCleanerOptions {
  /** The logs to consider (LogManager fits). */
  logManager: { allLogs(): PartitionLog[] };
  clock: Clock;
  scheduler: Scheduler;
  config?: Partial<LogCleanerConfig>;
  logger?: Logger;
  /** Tests: called after each file operation of a segment swap; throwing there simulates a crash. */
  afterSwapStep?: SwapStepHook;
}

const MAX_MAP_BYTES = 0x7fffffff;
/** Chunks smaller than this would re-read large batches too often. */
const MIN_CHUNK_BYTES = 64 * 1024;

export class LogCleaner {
  readonly config: LogCleanerConfig;
  private readonly logger: Logger | undefined;
  private map: OffsetMap | null = null;
  private tail: Promise<unknown> = Promise.resolve();
  private timer: TimerHandle | null = null;
  private stopping = false;
  private readonly checkpoints = new CleanerCheckpoints();
  private readonly uncleanable = new WeakSet<PartitionLog>();
  private readonly nextDeleteHorizon = new WeakMap<PartitionLog, number>();
  /** The last finished round, for logs, metrics and tests. */
  lastStats: CleanerStats | null = null;
  /** Dirty ratio of the dirtiest compacted log at the last check (Kafka's max-dirty-percent / 100). */
  maxDirtyRatio = 0;

  private constructor(private readonly opts: LogCleanerOptions) {
    this.config = { ...defaultLogCleanerConfig, ...opts.config };
    this.logger = opts.logger;
  }

  /** Creates the cleaner and, with log.cleaner.enable, starts its periodic task. */
  static start(opts: LogCleanerOptions): LogCleaner {
    const cleaner = new LogCleaner(opts);
    if (cleaner.config.enable) cleaner.arm(0);
    return cleaner;
  }

  private arm(delayMs: number): void {
    if (this.stopping) return;
    this.timer = this.opts.scheduler.setTimeout(() => {
      this.timer = null;
      void this.runOnce().then(
        (stats) => this.arm(stats === null ? this.config.backoffMs : 0),
        () => this.arm(this.config.backoffMs),
      );
    }, delayMs);
  }

  /** Stops the task; a round in progress is abandoned between batches (its `.cleaned` files removed). */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.timer !== null) this.opts.scheduler.clearTimeout(this.timer);
    this.timer = null;
    await this.tail.catch(() => undefined);
  }

  /** Resolves when the rounds started so far have finished. */
  async settled(): Promise<void> {
    await this.tail.catch(() => undefined);
  }

  isUncleanable(log: PartitionLog): boolean {
    return this.uncleanable.has(log);
  }

  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.tail.then(fn, fn);
    this.tail = run.catch(() => undefined);
    return run;
  }

  private checkDone = (): void => {
    if (this.stopping) throw new CleaningAbortedError('the log cleaner is stopping');
  };

  private offsetMap(): OffsetMap {
    if (this.map === null) {
      const perThread = Math.floor(this.config.dedupeBufferSize / Math.max(1, this.config.threads));
      this.map = new OffsetMap(Math.min(perThread, MAX_MAP_BYTES));
    }
    return this.map;
  }

  private view(log: PartitionLog): CleanableLogView {
    return {
      segments: [...log.closedSegments(), log.activeSegment()],
      logStartOffset: log.logStartOffset,
      logEndOffset: log.logEndOffset,
      lastStableOffset: log.lastStableOffset,
      config: compactionConfigOf(log.currentConfig),
    };
  }

  private logDirOf(log: PartitionLog): string {
    return path.dirname(log.dir);
  }

  /** Where cleaning of `log` would start and stop now, and how dirty it is. */
  async toClean(log: PartitionLog, now = this.opts.clock.now()): Promise<LogToClean> {
    const dir = this.logDirOf(log);
    await this.checkpoints.load(dir);
    const view = this.view(log);
    const offsets = await cleanableOffsets(view, this.checkpoints.get(dir, log.topic, log.partition), now);
    if (offsets.forceUpdateCheckpoint) await this.updateCheckpoint(log, offsets.firstDirtyOffset);
    const delay = await maxCompactionDelay(view, offsets.firstDirtyOffset, now);
    return logToClean(view, offsets, delay > 0);
  }

  private async grabFilthiestLog(now: number): Promise<{ log: PartitionLog; ltc: LogToClean } | null> {
    let best: { log: PartitionLog; ltc: LogToClean } | null = null;
    let maxRatio = 0;
    for (const log of this.opts.logManager.allLogs()) {
      if (log.isOffline || this.uncleanable.has(log) || !compactionConfigOf(log.currentConfig).compact) continue;
      let ltc: LogToClean;
      try {
        ltc = await this.toClean(log, now);
      } catch (err) {
        this.logger?.warn({ err, topic: log.topic, partition: log.partition }, 'cannot compute what to clean; marking the partition uncleanable');
        this.uncleanable.add(log);
        continue;
      }
      if (ltc.totalBytes <= 0) continue;
      if (ltc.cleanableRatio > maxRatio) maxRatio = ltc.cleanableRatio;
      const horizonDue = (this.nextDeleteHorizon.get(log) ?? Infinity) <= now;
      const minRatio = compactionConfigOf(log.currentConfig).minCleanableDirtyRatio;
      const cleanable = (ltc.needCompactionNow && ltc.cleanableBytes > 0) || ltc.cleanableRatio > minRatio || horizonDue;
      if (cleanable && (best === null || ltc.cleanableRatio > best.ltc.cleanableRatio)) best = { log, ltc };
    }
    this.maxDirtyRatio = maxRatio;
    return best;
  }

  /** One turn of the periodic task: cleans the dirtiest qualifying log. Null when none qualified. */
  runOnce(): Promise<CleanerStats | null> {
    return this.exclusive(async () => {
      if (this.stopping) return null;
      const now = this.opts.clock.now();
      const chosen = await this.grabFilthiestLog(now);
      if (chosen === null) return null;
      try {
        return await this.clean(chosen.log, chosen.ltc, now);
      } catch (err) {
        if (isAbort(err) || chosen.log.isOffline) {
          this.logger?.info({ err, topic: chosen.log.topic, partition: chosen.log.partition }, 'cleaning abandoned');
        } else {
          this.uncleanable.add(chosen.log);
          this.logger?.warn({ err, topic: chosen.log.topic, partition: chosen.log.partition }, 'cleaning failed; marking the partition uncleanable');
        }
        throw err;
      }
    });
  }

  /**
   * Cleans `log` now, whatever its dirty ratio (the active segment, open
   * transactions and min.compaction.lag.ms still bound it). For tests and tools.
   */
  cleanNow(log: PartitionLog): Promise<CleanerStats> {
    return this.exclusive(async () => {
      this.checkDone();
      const now = this.opts.clock.now();
      return this.clean(log, await this.toClean(log, now), now);
    });
  }

  private async clean(log: PartitionLog, ltc: LogToClean, now: number): Promise<CleanerStats> {
    const started = this.opts.clock.now();
    const stats = await cleanLog(
      log,
      { firstDirtyOffset: ltc.firstDirtyOffset, firstUncleanableOffset: ltc.firstUncleanableOffset },
      {
        map: this.offsetMap(),
        loadFactor: this.config.dedupeBufferLoadFactor,
        now,
        chunkBytes: Math.max(MIN_CHUNK_BYTES, Math.floor(this.config.ioBufferSize / Math.max(1, this.config.threads) / 2)),
        checkDone: this.checkDone,
        ...(this.opts.afterSwapStep === undefined ? {} : { afterSwapStep: this.opts.afterSwapStep }),
        ...(this.logger === undefined ? {} : { logger: this.logger }),
      },
    );
    await this.updateCheckpoint(log, stats.endOffset);
    const horizon = stats.nextDeleteHorizonMs;
    if (horizon === null) this.nextDeleteHorizon.delete(log);
    else this.nextDeleteHorizon.set(log, Number(horizon));
    this.lastStats = stats;
    this.logger?.info(
      {
        topic: log.topic,
        partition: log.partition,
        firstDirtyOffset: ltc.firstDirtyOffset.toString(),
        endOffset: stats.endOffset.toString(),
        dirtyRatio: ltc.cleanableRatio,
        segments: stats.segmentsCleaned,
        sizeBefore: stats.sizeBefore,
        sizeAfter: stats.sizeAfter,
        messagesRead: stats.messagesRead,
        messagesRetained: stats.messagesRetained,
        mapUtilization: stats.mapUtilization,
        elapsedMs: this.opts.clock.now() - started,
      },
      'cleaned log',
    );
    return stats;
  }

  private async updateCheckpoint(log: PartitionLog, offset: bigint): Promise<void> {
    const dir = this.logDirOf(log);
    const present = new Set<string>();
    for (const l of this.opts.logManager.allLogs()) if (this.logDirOf(l) === dir) present.add(`${l.topic}\u0000${l.partition}`);
    await this.checkpoints.update(dir, log.topic, log.partition, offset, (t, p) => present.has(`${t}\u0000${p}`) || (t === log.topic && p === log.partition));
  }
}

/** Stops that leave nothing to repair: the cleaner stopping, or the log closed or deleted under the round. */
function isAbort(err: unknown): boolean {
  if (err instanceof CleaningAbortedError || err instanceof SegmentClosedError) return true;
  return err instanceof KafkaError && err.code === ErrorCode.NOT_LEADER_OR_FOLLOWER;
}
