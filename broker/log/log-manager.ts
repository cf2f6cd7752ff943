// Every partition log of the broker's `log.dirs` (Kafka's LogManager): loads
// them at start-up (recovering after an unclean stop), creates and deletes
// partitions, keeps the per-directory recovery-point and log-start-offset
// checkpoints, and runs the periodic work: flush.ms / segment.ms checks,
// retention and producer-id expiration, checkpointing. Time and timers are
// injected. A clean shutdown leaves `.kafka_cleanshutdown` in each directory so
// the next start skips recovery.
import { randomUUID } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import type { Clock } from '../common/clock.js';
import type { Scheduler, TimerHandle } from '../common/scheduler.js';
import { type PartitionOffset, formatOffsetsCheckpoint, parseOffsetsCheckpoint, readCheckpoint, writeCheckpoint } from './checkpoint-file.js';
import {
  CLEAN_SHUTDOWN_FILE,
  LOG_START_OFFSET_CHECKPOINT,
  RECOVERY_POINT_CHECKPOINT,
  parsePartitionDirName,
  partitionDirName,
} from './file-names.js';
import { HandleBudget } from './file-handles.js';
import { fileExists, unlinkIfExists, writeFileAtomic } from '../common/file-io.js';
import type { LogConfig } from '../../metadata/log-config.js';
import type { LogSegment } from './log-segment.js';
import { PartitionLog, type RetentionResult } from './partition-log.js';
import { readPartitionMetadata } from './partition-metadata-file.js';

export interface LogManagerOptions {
  logDirs: readonly string[];
  clock: Clock;
  scheduler: Scheduler;
  logger?: Logger;
  /** Config of a topic's logs (topic overrides over broker defaults); read at load and creation. */
  configFor: (topic: string) => LogConfig;
  /** log.retention.check.interval.ms (Kafka 300000). */
  retentionCheckIntervalMs?: number;
  /** How often flush.ms and segment.ms are checked (log.flush.scheduler.interval.ms). */
  flushCheckIntervalMs?: number;
  /** log.flush.offset.checkpoint.interval.ms and log.flush.start.offset.checkpoint.interval.ms (60000). */
  checkpointIntervalMs?: number;
  /** Tiered storage's veto on deleting local segments of a partition. */
  canDeleteSegment?: (log: PartitionLog, segment: LogSegment) => boolean;
  /** Open files the logs may hold at once (fds beyond it are closed least recently used first); default 1000. */
  maxOpenFiles?: number;
  /** Skips partition directories the caller no longer knows (e.g. deleted topics); default: load all. */
  shouldLoad?: (topic: string, partition: number, topicId: string | null) => boolean;
  /**
   * The id the broker knows a topic by. A partition directory without a
   * readable `partition.metadata` (a crash between its creation and that
   * file's write) takes it, as Kafka assigns a log without one the topic id
   * from the metadata; without it the log would keep an empty id and match
   * no topic.
   */
  topicIdOf?: (topic: string) => string | undefined;
}

const key = (topic: string, partition: number): string => `${topic}\u0000${partition}`;
const DELETE_DIR_SUFFIX = '-delete';

export class LogManager {
  private readonly logs = new Map<string, PartitionLog>();
  private readonly dirOf = new Map<string, string>();
  private readonly creating = new Map<string, Promise<PartitionLog>>();
  private readonly timers = new Set<TimerHandle>();
  private readonly running = new Set<Promise<void>>();
  private stopped = false;
  private readonly logger: Logger | undefined;
  private readonly handles: HandleBudget;

  private constructor(private readonly opts: LogManagerOptions) {
    this.logger = opts.logger;
    this.handles = new HandleBudget(opts.maxOpenFiles ?? 1000);
  }

  /** Loads every partition of every log dir, then starts the periodic tasks. */
  static async startup(opts: LogManagerOptions): Promise<LogManager> {
    const mgr = new LogManager(opts);
    for (const dir of opts.logDirs) await mgr.loadDir(dir);
    mgr.schedule('retention', opts.retentionCheckIntervalMs ?? 300_000, () => mgr.runRetention().then(() => undefined));
    mgr.schedule('flush', opts.flushCheckIntervalMs ?? 1000, () => mgr.runFlushAndRoll());
    mgr.schedule('checkpoint', opts.checkpointIntervalMs ?? 60_000, () => mgr.checkpoint());
    return mgr;
  }

  private schedule(name: string, intervalMs: number, task: () => Promise<void>): void {
    const arm = (): void => {
      if (this.stopped) return;
      const handle = this.opts.scheduler.setTimeout(() => {
        this.timers.delete(handle);
        const run: Promise<void> = task()
          .catch((err: unknown) => this.logger?.error({ err, task: name }, 'log manager task failed'))
          .finally(() => {
            this.running.delete(run);
            arm();
          });
        this.running.add(run);
      }, intervalMs);
      this.timers.add(handle);
    };
    arm();
  }

  /** Resolves once the periodic tasks started so far have finished (tests, shutdown). */
  async settled(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }

  private async loadDir(logDir: string): Promise<void> {
    await fsp.mkdir(logDir, { recursive: true });
    const cleanFile = path.join(logDir, CLEAN_SHUTDOWN_FILE);
    const cleanShutdown = await fileExists(cleanFile);
    const recoveryPoints = await readOffsets(path.join(logDir, RECOVERY_POINT_CHECKPOINT));
    const startOffsets = await readOffsets(path.join(logDir, LOG_START_OFFSET_CHECKPOINT));
    const entries = await fsp.readdir(logDir, { withFileTypes: true });
    for (const e of entries) {
      if (!e.isDirectory()) continue;
      const full = path.join(logDir, e.name);
      if (e.name.endsWith(DELETE_DIR_SUFFIX)) {
        await fsp.rm(full, { recursive: true, force: true });
        continue;
      }
      const parsed = parsePartitionDirName(e.name);
      if (parsed === null) continue;
      const meta = await readPartitionMetadata(full);
      if (this.opts.shouldLoad !== undefined && !this.opts.shouldLoad(parsed.topic, parsed.partition, meta?.topicId ?? null)) continue;
      const k = key(parsed.topic, parsed.partition);
      if (this.logs.has(k)) {
        this.logger?.error({ dir: full, other: this.dirOf.get(k) }, 'duplicate partition directory ignored');
        continue;
      }
      const rp = recoveryPoints.get(k);
      const lso = startOffsets.get(k);
      let topicId = meta?.topicId;
      if (topicId === undefined) {
        topicId = this.opts.topicIdOf?.(parsed.topic);
        if (topicId !== undefined) this.logger?.warn({ dir: full, topicId }, 'partition directory without a topic id: it takes the id of its topic');
      }
      const log = await PartitionLog.open({
        dir: full,
        topic: parsed.topic,
        partition: parsed.partition,
        topicId: topicId ?? '',
        config: this.opts.configFor(parsed.topic),
        clock: this.opts.clock,
        cleanShutdown,
        ...(rp === undefined ? {} : { recoveryPoint: rp }),
        ...(lso === undefined ? {} : { logStartOffset: lso }),
        ...this.logOptions(k),
      });
      this.logs.set(k, log);
      this.dirOf.set(k, logDir);
    }
    // From now on a crash must trigger recovery.
    await unlinkIfExists(cleanFile);
    this.logger?.info({ logDir, partitions: this.logsIn(logDir).length, cleanShutdown }, 'loaded log dir');
  }

  private logOptions(k: string): { logger?: Logger; canDeleteSegment?: (s: LogSegment) => boolean; handleBudget: HandleBudget } {
    const veto = this.opts.canDeleteSegment;
    return {
      handleBudget: this.handles,
      ...(this.logger === undefined ? {} : { logger: this.logger }),
      ...(veto === undefined
        ? {}
        : {
            canDeleteSegment: (s: LogSegment) => {
              const log = this.logs.get(k);
              return log === undefined || veto(log, s);
            },
          }),
    };
  }

  private logsIn(logDir: string): PartitionLog[] {
    const out: PartitionLog[] = [];
    for (const [k, log] of this.logs) if (this.dirOf.get(k) === logDir) out.push(log);
    return out;
  }

  getLog(topic: string, partition: number): PartitionLog | undefined {
    return this.logs.get(key(topic, partition));
  }

  /** Files currently open through the logs' budget. */
  get openFiles(): number {
    return this.handles.openCount;
  }

  allLogs(): PartitionLog[] {
    return [...this.logs.values()];
  }

  /** The log of a partition, created (in the log dir holding the fewest partitions) if missing. */
  getOrCreateLog(topic: string, partition: number, topicId: string, config?: LogConfig): Promise<PartitionLog> {
    const k = key(topic, partition);
    const existing = this.logs.get(k);
    if (existing !== undefined) return Promise.resolve(existing);
    const pending = this.creating.get(k);
    if (pending !== undefined) return pending;
    const p = (async () => {
      const logDir = await this.logDirFor(topic, partition, topicId);
      const log = await PartitionLog.open({
        dir: path.join(logDir, partitionDirName(topic, partition)),
        topic,
        partition,
        topicId,
        config: config ?? this.opts.configFor(topic),
        clock: this.opts.clock,
        cleanShutdown: true,
        ...this.logOptions(k),
      });
      this.logs.set(k, log);
      this.dirOf.set(k, logDir);
      return log;
    })().finally(() => this.creating.delete(k));
    this.creating.set(k, p);
    return p;
  }

  /**
   * Where a new partition goes. A directory left over from a topic of the same name
   * but another topic id (deleted and recreated) is removed, never reused.
   */
  private async logDirFor(topic: string, partition: number, topicId: string): Promise<string> {
    for (const d of this.opts.logDirs) {
      const existing = path.join(d, partitionDirName(topic, partition));
      if (!(await fileExists(existing))) continue;
      const meta = await readPartitionMetadata(existing);
      if (meta !== null && meta.topicId !== topicId) {
        this.logger?.warn({ dir: existing, topicId, found: meta.topicId }, 'removing the directory of a previous topic with the same name');
        await removeDir(existing);
        continue;
      }
      return d;
    }
    return this.pickLogDir();
  }

  private pickLogDir(): string {
    let best: string | null = null;
    let bestCount = Infinity;
    for (const d of this.opts.logDirs) {
      const n = this.logsIn(d).length;
      if (n < bestCount) {
        best = d;
        bestCount = n;
      }
    }
    if (best === null) throw new Error('no log.dirs configured');
    return best;
  }

  /**
   * Removes a partition: the directory is renamed `<topic>-<partition>.<id>-delete`
   * at once (so a restart never loads it), then removed.
   */
  async deleteLog(topic: string, partition: number): Promise<boolean> {
    const k = key(topic, partition);
    const log = this.logs.get(k);
    if (log === undefined) return false;
    this.logs.delete(k);
    this.dirOf.delete(k);
    await log.closeHandles();
    await removeDir(log.dir);
    return true;
  }

  /** Retention and producer-id expiration for every partition. */
  async runRetention(now = this.opts.clock.now()): Promise<Map<string, RetentionResult>> {
    const out = new Map<string, RetentionResult>();
    for (const log of this.allLogs()) {
      if (log.isOffline) continue;
      try {
        const r = await log.applyRetention(now);
        if (r.deletedSegments > 0) out.set(`${log.topic}-${log.partition}`, r);
        log.removeExpiredProducers(now);
      } catch (err) {
        this.logger?.error({ err, topic: log.topic, partition: log.partition }, 'retention failed');
      }
    }
    return out;
  }

  /** flush.ms and segment.ms for idle partitions. */
  async runFlushAndRoll(now = this.opts.clock.now()): Promise<void> {
    for (const log of this.allLogs()) {
      if (log.isOffline) continue;
      try {
        if (now - log.lastFlushTime >= log.currentConfig.flushIntervalMs) await log.flush();
        await log.maybeRoll(now);
      } catch (err) {
        this.logger?.error({ err, topic: log.topic, partition: log.partition }, 'flush or roll failed');
      }
    }
  }

  /** Writes recovery-point-offset-checkpoint and log-start-offset-checkpoint in every log dir. */
  async checkpoint(): Promise<void> {
    for (const dir of this.opts.logDirs) {
      const logs = this.logsIn(dir).filter((l) => !l.isOffline);
      const rps: PartitionOffset[] = logs.map((l) => ({ topic: l.topic, partition: l.partition, offset: l.recoveryPoint }));
      const starts: PartitionOffset[] = logs
        .filter((l) => l.logStartOffset > 0n)
        .map((l) => ({ topic: l.topic, partition: l.partition, offset: l.logStartOffset }));
      await writeCheckpoint(path.join(dir, RECOVERY_POINT_CHECKPOINT), formatOffsetsCheckpoint(rps));
      await writeCheckpoint(path.join(dir, LOG_START_OFFSET_CHECKPOINT), formatOffsetsCheckpoint(starts));
    }
  }

  /** Stops the tasks, closes every log (flush + producer snapshot), checkpoints, marks the dirs clean. */
  async shutdown(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) this.opts.scheduler.clearTimeout(t);
    this.timers.clear();
    await this.settled();
    await Promise.allSettled([...this.creating.values()]);
    let allClean = true;
    for (const log of this.allLogs()) {
      try {
        if (log.isOffline) allClean = false;
        await log.close();
      } catch (err) {
        allClean = false;
        this.logger?.error({ err, topic: log.topic, partition: log.partition }, 'closing log failed');
      }
    }
    await this.checkpoint();
    if (!allClean) return;
    for (const dir of this.opts.logDirs) {
      await writeFileAtomic(path.join(dir, CLEAN_SHUTDOWN_FILE), JSON.stringify({ version: 0, brokerEpoch: -1 }));
    }
  }
}

/**
 * Renames to `<dir>.<id>-delete` (atomic: a restart never loads it), then removes it.
 * The name is cut to fit NAME_MAX (255): a 249-character topic's directory is already
 * 251 characters (Kafka's logDeleteDirName truncates the same way).
 */
async function removeDir(dir: string): Promise<void> {
  const suffix = `.${randomUUID().replace(/-/g, '')}${DELETE_DIR_SUFFIX}`;
  const doomed = path.join(path.dirname(dir), path.basename(dir).slice(0, 255 - suffix.length) + suffix);
  await fsp.rename(dir, doomed);
  await fsp.rm(doomed, { recursive: true, force: true });
}

async function readOffsets(file: string): Promise<Map<string, bigint>> {
  const out = new Map<string, bigint>();
  const lines = await readCheckpoint(file);
  const entries = lines === null ? null : parseOffsetsCheckpoint(lines);
  for (const e of entries ?? []) out.set(key(e.topic, e.partition), e.offset);
  return out;
}
