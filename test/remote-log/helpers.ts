// Fixtures for the RemoteLogManager tests: real PartitionLogs in temp dirs,
// the real metadata manager over an in-memory metadata topic, a manual clock
// and scheduler, and a RemoteStorage wrapper that fails or hangs on demand.
import { recordsBuffer, type Records } from '../../broker/protocol/record-parts.js';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ManualClock } from '../../broker/common/clock.js';
import { type LogConfig, logConfig } from '../../metadata/log-config.js';
import type { Logger } from '../../broker/common/logger.js';
import { PartitionLog } from '../../broker/log/partition-log.js';
import { buildRecordBatch, decodeRecordBatches } from '../../broker/protocol/record-batch.js';
import { ManualScheduler } from '../../broker/common/scheduler.js';
import { MemoryMetadataTopicLog } from '../../metadata/remote-log-metadata/metadata-topic-log.js';
import { RemoteLogMetadataManager } from '../../metadata/remote-log-metadata/remote-log-metadata-manager.js';
import { deserializeRemoteLogMetadata } from '../../metadata/remote-log-metadata/serde.js';
import type { TopicIdPartition } from '../../metadata/remote-log-metadata/types.js';
import { randomUuid } from '../../metadata/uuid.js';
import { MemoryRemoteStorage } from '../../remote-log/memory/memory-remote-storage.js';
import { RemoteLogManager, type RemoteLogManagerConfig } from '../../remote-log/remote-log-manager.js';
import type {
  ChunkListener,
  CopyResult,
  IndexKind,
  RemoteSegmentListing,
  RemoteSegmentRef,
  RemoteStorage,
  SegmentFiles,
} from '../../remote-log/remote-storage.js';
import { RemoteAbortedError, RemoteStorageError } from '../../remote-log/remote-storage.js';

export const CHUNK_SIZE = 4096;

export type FaultMode = 'ok' | 'fail' | 'hang';
export type StorageOp = 'copy' | 'fetchData' | 'fetchIndex' | 'delete' | 'list';

/**
 * Delegates to a real storage, except for the operations put in 'fail' (reject
 * with a RemoteStorageError) or 'hang' (never settle until aborted or released).
 */
export class FaultyStorage implements RemoteStorage {
  private readonly modes = new Map<StorageOp, FaultMode>();
  private readonly hung = new Set<() => void>();
  readonly calls: Record<StorageOp, number> = { copy: 0, fetchData: 0, fetchIndex: 0, delete: 0, list: 0 };
  /** When set, faults apply only to segments it accepts. */
  only: ((ref: RemoteSegmentRef) => boolean) | undefined;
  /** Runs before a copy is failed: lets a test leave a partial upload behind. */
  beforeCopyFailure: ((ref: RemoteSegmentRef, files: SegmentFiles) => Promise<void>) | undefined;

  constructor(readonly inner: RemoteStorage) {}

  /** The inner store's compression setting (the manager looks for it). */
  get compression(): boolean {
    return (this.inner as { compression?: unknown }).compression === true;
  }

  set(mode: FaultMode, ...ops: StorageOp[]): void {
    const all: StorageOp[] = ops.length > 0 ? ops : ['copy', 'fetchData', 'fetchIndex', 'delete', 'list'];
    for (const op of all) this.modes.set(op, mode);
  }

  /** Settles every hung call with a failure. */
  release(): void {
    for (const r of this.hung) r();
    this.hung.clear();
  }

  get hangingCalls(): number {
    return this.hung.size;
  }

  private async gate(op: StorageOp, signal?: AbortSignal, ref?: RemoteSegmentRef): Promise<void> {
    this.calls[op]++;
    const applies = ref === undefined || this.only === undefined || this.only(ref);
    const mode = applies ? (this.modes.get(op) ?? 'ok') : 'ok';
    if (mode === 'fail') throw new RemoteStorageError(`injected ${op} failure`);
    if (mode === 'hang') {
      await new Promise<void>((_resolve, reject) => {
        const fail = (): void => reject(new RemoteStorageError(`hung ${op} released`));
        this.hung.add(fail);
        signal?.addEventListener('abort', () => {
          this.hung.delete(fail);
          reject(new RemoteAbortedError(`${op} aborted`));
        });
      });
    }
  }

  async copySegment(ref: RemoteSegmentRef, files: SegmentFiles, signal?: AbortSignal): Promise<CopyResult> {
    if ((this.modes.get('copy') ?? 'ok') !== 'ok' && (this.only === undefined || this.only(ref)) && this.beforeCopyFailure !== undefined) await this.beforeCopyFailure(ref, files);
    await this.gate('copy', signal, ref);
    return this.inner.copySegment(ref, files, signal);
  }

  async fetchData(ref: RemoteSegmentRef, start: number, end?: number, signal?: AbortSignal): Promise<Buffer> {
    await this.gate('fetchData', signal, ref);
    return this.inner.fetchData(ref, start, end, signal);
  }

  /** Counted and faulted as a fetchData (both read data). */
  async fetchChunks(ref: RemoteSegmentRef, first: number, last: number, chunkSize: number, signal?: AbortSignal, onChunk?: ChunkListener): Promise<Buffer[]> {
    await this.gate('fetchData', signal, ref);
    return this.inner.fetchChunks(ref, first, last, chunkSize, signal, onChunk);
  }

  async fetchIndex(ref: RemoteSegmentRef, kind: IndexKind, signal?: AbortSignal): Promise<Buffer> {
    await this.gate('fetchIndex', signal, ref);
    return this.inner.fetchIndex(ref, kind, signal);
  }

  async deleteSegment(ref: RemoteSegmentRef, signal?: AbortSignal): Promise<void> {
    await this.gate('delete', signal, ref);
    return this.inner.deleteSegment(ref, signal);
  }

  /** Every listing, in order: what was asked (the sweep tests check they are incremental). */
  readonly listings: Array<{ prefix: string | undefined; startAfter: string | undefined }> = [];

  async listSegments(prefix?: string, signal?: AbortSignal, startAfter?: string): Promise<RemoteSegmentListing[]> {
    this.listings.push({ prefix, startAfter });
    await this.gate('list', signal);
    return this.inner.listSegments(prefix, signal, startAfter);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

export async function tempDir(prefix = 'sediment-rlm-'): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

export const TIERED: Partial<LogConfig> = {
  segmentBytes: 2048,
  indexIntervalBytes: 256,
  retentionMs: -1,
  retentionBytes: -1,
  remoteStorageEnable: true,
  localRetentionMs: -2,
  localRetentionBytes: 0,
};

export interface EnvOptions {
  /** Builds the storage under test (default: MemoryRemoteStorage on the test clock). */
  storage?: (clock: ManualClock, dir: string) => RemoteStorage;
  config?: Partial<RemoteLogManagerConfig>;
  /** The manager's logger (default: silent). */
  logger?: Logger;
  /** Shared across restarts: the metadata topic, the storage, the dir, the clock. */
  reuse?: Env;
}

export interface Env {
  readonly dir: string;
  readonly clock: ManualClock;
  readonly scheduler: ManualScheduler;
  readonly metadataLog: MemoryMetadataTopicLog;
  readonly metadata: RemoteLogMetadataManager;
  readonly storage: RemoteStorage;
  readonly faulty: FaultyStorage;
  readonly rlm: RemoteLogManager;
  readonly logs: PartitionLog[];
  /** Opens (or reopens) a partition log and registers it with the manager. */
  openLog(name?: string, config?: Partial<LogConfig>, options?: { topicId?: string; partition?: number }): Promise<PartitionLog>;
  cleanup(): Promise<void>;
}

export const rlmConfig = (overrides: Partial<RemoteLogManagerConfig> = {}): RemoteLogManagerConfig => ({
  taskIntervalMs: 1000,
  fetchMaxWaitMs: 500,
  indexCacheBytes: 1 << 20,
  chunkCacheBytes: 1 << 20,
  chunkSize: CHUNK_SIZE,
  orphanGraceMs: 60_000,
  orphanSweepIntervalMs: 10_000,
  ...overrides,
});

export async function makeEnv(options: EnvOptions = {}): Promise<Env> {
  const reuse = options.reuse;
  const tmp = reuse === undefined ? await tempDir() : { dir: reuse.dir, cleanup: reuse.cleanup };
  const clock = reuse?.clock ?? new ManualClock(Date.now());
  const scheduler = reuse?.scheduler ?? new ManualScheduler(clock);
  const metadataLog = reuse?.metadataLog ?? new MemoryMetadataTopicLog(3);
  const metadata = new RemoteLogMetadataManager({ log: metadataLog });
  const storage =
    reuse?.storage ?? (options.storage?.(clock, path.join(tmp.dir, 'remote')) ?? new MemoryRemoteStorage({ clock, chunkSize: CHUNK_SIZE }));
  const faulty = new FaultyStorage(storage);
  const rlm = RemoteLogManager.create({
    storage: faulty,
    metadata,
    clock,
    scheduler,
    config: rlmConfig(options.config),
    ...(options.logger === undefined ? {} : { logger: options.logger }),
  });
  await metadata.start();
  const logs: PartitionLog[] = [];
  const topicIds = new Map<string, string>();
  const env: Env = {
    dir: tmp.dir,
    clock,
    scheduler,
    metadataLog,
    metadata,
    storage,
    faulty,
    rlm,
    logs,
    async openLog(name = 'tiered', config = {}, opts = {}) {
      const partition = opts.partition ?? 0;
      let topicId = opts.topicId ?? topicIds.get(name);
      if (topicId === undefined) {
        topicId = randomUuid();
        topicIds.set(name, topicId);
      }
      const log = await PartitionLog.open({
        dir: path.join(tmp.dir, 'logs', `${name}-${partition}`),
        topic: name,
        partition,
        topicId,
        config: logConfig({ ...TIERED, ...config }),
        clock,
        canDeleteSegment: (s) => rlm.canDeleteLocalSegment(log, s),
      });
      logs.push(log);
      rlm.onPartitionAdded(log);
      return log;
    },
    async cleanup() {
      await rlm.stop();
      for (const l of logs) await l.close().catch(() => undefined);
      await storage.close();
      await tmp.cleanup();
    },
  };
  return env;
}

export function tpOf(log: PartitionLog): TopicIdPartition {
  return { topicId: log.topicId, topic: log.topic, partition: log.partition };
}

/** Appends `batches` batches of `perBatch` records (values `<tag>-<n>` padded to valueSize), timestamps from `timestamp`. */
export async function produce(
  log: PartitionLog,
  batches: number,
  opts: { perBatch?: number; valueSize?: number; timestamp?: number; tag?: string } = {},
): Promise<void> {
  const perBatch = opts.perBatch ?? 5;
  for (let b = 0; b < batches; b++) {
    const base = Number(log.logEndOffset);
    const ts = (opts.timestamp ?? 1_700_000_000_000) + base;
    const records = Array.from({ length: perBatch }, (_, i) => ({
      key: null,
      value: `${opts.tag ?? 'v'}-${base + i}`.padEnd(opts.valueSize ?? 40, '.'),
      timestamp: ts + i,
    }));
    await log.append(buildRecordBatch({ records }), { leaderEpoch: 0, isFromClient: true });
  }
}

/** Every record value of a run of batches. */
export function valuesOf(buf: Buffer | null): string[] {
  if (buf === null) return [];
  const out: string[] = [];
  for (const b of decodeRecordBatches(buf)) for (const r of b.records) out.push(r.value?.toString() ?? '');
  return out;
}

export function offsetsOf(buf: Buffer | null): bigint[] {
  if (buf === null) return [];
  const out: bigint[] = [];
  for (const b of decodeRecordBatches(buf)) for (const r of b.records) out.push(r.offset);
  return out;
}

/** The local log's batches from `from` to the end, as one buffer. */
export async function readLocal(log: PartitionLog, from: bigint): Promise<Buffer> {
  const parts: Buffer[] = [];
  let next = from;
  while (next < log.logEndOffset) {
    const r = await log.read(next, 1 << 20, { maxOffset: log.highWatermark, minOneBatch: true });
    if (r.records.length === 0) break;
    const buf = Buffer.concat(r.records);
    parts.push(buf);
    const batches = decodeRecordBatches(buf);
    const last = batches[batches.length - 1]!;
    next = last.header.baseOffset + BigInt(last.header.lastOffsetDelta) + 1n;
  }
  return Buffer.concat(parts);
}

/** A remote read's records as one Buffer (joined when they came as parts). */
export function bytesOf(r: Records | null): Buffer | null {
  return r === null ? null : recordsBuffer(r);
}

/** Reads the partition from `from` like a consumer: the remote tier below the local start, then the local log. */
export async function consumeAll(rlm: RemoteLogManager, log: PartitionLog, from: bigint, maxBytes = 1500): Promise<Buffer> {
  const parts: Buffer[] = [];
  let next = from;
  while (next < log.logEndOffset) {
    let buf: Buffer | null;
    if (next < log.localLogStartOffset) {
      buf = bytesOf(await rlm.read(log, next, maxBytes, true));
    } else {
      const r = await log.read(next, maxBytes, { maxOffset: log.highWatermark, minOneBatch: true });
      buf = r.records.length === 0 ? null : Buffer.concat(r.records);
    }
    if (buf === null) throw new Error(`nothing read at ${next}`);
    parts.push(buf);
    const batches = decodeRecordBatches(buf);
    const last = batches[batches.length - 1]!;
    next = last.header.baseOffset + BigInt(last.header.lastOffsetDelta) + 1n;
  }
  return Buffer.concat(parts);
}

export interface RecordedEvent {
  readonly segmentId: string;
  readonly state: string;
  readonly startOffset?: bigint;
  readonly endOffset?: bigint;
}

/** Every segment state change written to the metadata topic (all partitions, in append order per partition). */
export function recordedEvents(metadataLog: MemoryMetadataTopicLog, tp: TopicIdPartition): RecordedEvent[] {
  const out: RecordedEvent[] = [];
  for (let p = 0; p < metadataLog.partitionCount; p++) {
    for (const r of metadataLog.records(p)) {
      const e = deserializeRemoteLogMetadata(r.value);
      if (e.type === 'segment' && e.metadata.remoteLogSegmentId.topicIdPartition.topicId === tp.topicId && e.metadata.remoteLogSegmentId.topicIdPartition.partition === tp.partition) {
        out.push({ segmentId: e.metadata.remoteLogSegmentId.id, state: e.metadata.state, startOffset: e.metadata.startOffset, endOffset: e.metadata.endOffset });
      } else if (e.type === 'segmentUpdate' && e.update.remoteLogSegmentId.topicIdPartition.topicId === tp.topicId && e.update.remoteLogSegmentId.topicIdPartition.partition === tp.partition) {
        out.push({ segmentId: e.update.remoteLogSegmentId.id, state: e.update.state });
      } else if (e.type === 'partitionDelete' && e.delete.topicIdPartition.topicId === tp.topicId && e.delete.topicIdPartition.partition === tp.partition) {
        out.push({ segmentId: '', state: e.delete.state });
      }
    }
  }
  return out;
}

/** The finished remote segments of `tp`, oldest first. */
export function finishedSegments(metadata: RemoteLogMetadataManager, tp: TopicIdPartition): Array<{ id: string; start: bigint; end: bigint; size: number }> {
  return metadata
    .listRemoteLogSegments(tp)
    .filter((s) => s.state === 'COPY_SEGMENT_FINISHED')
    .map((s) => ({ id: s.remoteLogSegmentId.id, start: s.startOffset, end: s.endOffset, size: s.segmentSizeInBytes }));
}

/** Lets pending promise callbacks and I/O run until `cond` holds (no timers involved). */
export async function until(cond: () => boolean, what = 'condition', maxTurns = 2000, minWaitMs = 10_000): Promise<void> {
  // Real file I/O finishes on libuv's thread pool: on a loaded machine 2000 turns
  // can pass before it does, so the wait also lasts at least minWaitMs of real time.
  const start = Date.now();
  for (let i = 0; ; i++) {
    if (cond()) return;
    if (i >= maxTurns && Date.now() - start >= minWaitMs) break;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error(`timed out waiting for ${what}`);
}
