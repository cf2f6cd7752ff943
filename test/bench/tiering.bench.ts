// `npm run bench:tiering`: tiered storage on a real MinIO, each figure next to
// what a plain S3 client gets from the same MinIO for the same bytes, in the
// same run.
//
//   npm run bench:tiering -- [--rounds N] [--chunk-mb N] [--mb-per-partition N] [--segment-mb N]
//                            [--partitions N] [--prefetch-chunks N] [--fetch-chunks N] [--fetch-workers N] [--copy-workers N] [--copy-nice N] [--fetch-nice N] [--set key=value]... [--chunk-reuse] [--cache-mb N] [--doc PATH | --no-doc] [--profile DIR]
//                            [--compression uncompressed|gzip|snappy|lz4|zstd|producer]
//                            [--no-peer | --peer-only] [--peer-rounds N] [--peer-segment-mb N] [--peer-one-mb N]
//                            [--peer-six-mb N] [--peer-steady-mbps N] [--peer-steady-s N] [--peer-fsync]
//                            [--peer-no-latency]
//                            [--no-latency] [--latency-rounds N] [--latency-rate N] [--latency-idle-s N]
//
// After the MinIO section, the same run measures Sediment against Apache Kafka 4.3.1's
// own tiered storage (test/bench/tiering-peer.ts: LocalTieredStorage against the
// file:// store; --no-peer skips it, --peer-only runs only it) and writes that
// section of the doc too.
//
// --compression sets the rounds' topic compression.type (kcat produces uncompressed
// batches, which the broker then rebuilds in that codec): the report gives the
// bytes of records produced next to the closed-segment bytes the copy task sends
// to the store.
// Each round has its own topic (64 MiB segments by default), and each broker
// figure is taken between two runs of its plain-client baseline, so load from
// elsewhere on the machine hits both; the report gives medians over rounds.
// 1. kcat produces random 12 KiB records while the copy task is idle (task
//    interval one hour); kcat reads the closed segments from disk (reference).
// 2. Upload: every closed segment file is PUT (readFile + one PutObject each,
//    one segment at a time per partition, partitions in parallel) to a scratch
//    prefix by the leanest AWS SDK client (no checksum, unsigned payload); the
//    copy task runs for every partition (RemoteLogManager.runPartition:
//    metadata records, data, indexes, manifest); the raw PUT runs again.
//    Upload ratio = copy MiB/s over the mean of the two raw runs.
// 3. Reads, after local.retention.ms is lowered (local copies deleted) and the
//    broker restarted (empty caches): ranged GETs of the chunk size (1 MiB by
//    default) of the round's data objects (three in flight per partition), and
//    ranged GETs of the broker's request size (--fetch-chunks chunks, default 8,
//    as rsm.config.chunk.cache.fetch.chunks), one kcat consumer per partition
//    reading every tiered record from offset 0 (cold), both raw GET runs again,
//    then the same consumers again (warm: chunk cache hit rate). Cold ratio =
//    consumer MiB/s over the mean of the two chunk-size raw runs; the report
//    also gives it against the request-size runs and against chunk-size GETs
//    through the broker's own GET transport (the SDK on DirectHttpHandler),
//    and the CPU time per MiB of the bench process, MinIO and kcat in each
//    read phase.
// 4. Produce latency (after the rounds above, --latency-rounds N, default 3, each
//    on a fresh topic of its own so the figures above are untouched): a paced
//    producer in its own process (test/bench/produce-latency-probe.ts: kafkajs,
//    one 1 KiB record per request, acks=all, --latency-rate sends/s, default 500)
//    writes to a one-partition topic without remote storage. Its p99 while the
//    copy task uploads a round's segments, and while one kcat consumer per
//    partition reads them cold from a restarted broker, is set against its p99
//    in an idle window (--latency-idle-s, default 3) just before each (goal: 1.5x).
// The broker runs in this process (Broker.start), so the cache counters are read
// directly and --profile DIR records V8 CPU profiles of the first round's copy
// and cold read (written to DIR and summarised). Results go to
// docs/tiering-benchmarks.md (the generated section; text around it is kept).
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { monitorEventLoopDelay, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';
import os from 'node:os';
import path from 'node:path';
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { Kafka, logLevel } from 'kafkajs';
import { AdminClient } from '../../broker/cli/admin-client.js';
import { applyV8Settings } from '../../broker/cli/heap-growth.js';
import { DirectHttpHandler } from '../../remote-log/s3/direct-http-handler.js';
import { consumeBody } from '../../remote-log/s3/s3-object-store.js';
import type { PartitionLog } from '../../broker/log/partition-log.js';
import { startMinio, type MinioServer } from '../support/minio.js';
import { startSedimentInProcess, type InProcessSediment } from '../support/sediment.js';
import { kafkaTieredStorageJar, kcatPath, repoRoot, requireTools } from '../support/tools.js';
import { spliceGenerated } from './bench-report.js';
import { defaultPeerOptions, median, peerReport, runKafkaPeer, type PeerOptions } from './tiering-peer.js';
import { formatSummary, summarizeProfile, type CpuProfile } from './cpu-profile-summary.js';
import { cpuSince, cpuTimes, type CpuTimes } from './cpu-time.js';
import { formatWindow, p99Ratio, windowStats, type WindowStats } from './latency-windows.js';
import { epochNow, startProbe } from './latency-probe-process.js';

interface Options {
  rounds: number;
  /** rsm.config.chunk.size.bytes in MiB, and the raw GETs' range size. */
  chunkMb: number;
  mbPerPartition: number;
  segmentMb: number;
  partitions: number;
  /** rsm.config.chunk.cache.prefetch.chunks; undefined = the broker's default. */
  prefetchChunks: number | undefined;
  /** rsm.config.fetch.worker.threads; undefined = the broker's default. */
  fetchWorkers: number | undefined;
  copyWorkers: number | undefined;
  /** Further broker settings (--set key=value; --copy-nice and --fetch-nice are shorthands), applied last. */
  extra: Record<string, string>;
  chunkReuse: boolean;
  /** rsm.config.chunk.cache.fetch.chunks: chunks per ranged GET of the broker (and of the second raw GET baseline). */
  fetchChunks: number;
  /** rsm.config.chunk.cache.size.bytes in MiB; undefined = one round's topic plus 64 MiB. */
  cacheMb: number | undefined;
  doc: string | null;
  profileDir: string | null;
  /** The rounds' topic compression.type; undefined = the default (producer). */
  compression: string | undefined;
  /** Run the MinIO section / the Apache Kafka peer section. */
  minio: boolean;
  peer: PeerOptions | null;
  /** Rounds of the produce latency phase (0: skipped), the probe's sends per second, the idle window in ms. */
  latencyRounds: number;
  latencyRate: number;
  latencyIdleMs: number;
}

const RECORD_BYTES = 12 * 1024;
const GETS_IN_FLIGHT = 3;
const TOPIC = 'tiering-bench';
const UPLOAD_TARGET = 0.9;
// Issue 16's goals: at least 0.9x the raw baseline on MinIO in every round (not the median).
const COLD_TARGET = 0.9;

function usage(msg: string): never {
  console.error(`tiering.bench: ${msg}`);
  console.error('usage: npm run bench:tiering -- [--rounds N] [--chunk-mb N] [--mb-per-partition N] [--segment-mb N] [--partitions N] [--prefetch-chunks N] [--fetch-chunks N] [--fetch-workers N] [--copy-workers N] [--copy-nice N] [--fetch-nice N] [--set key=value]... [--chunk-reuse] [--cache-mb N] [--doc PATH | --no-doc] [--profile DIR] [--compression CODEC]');
  console.error('       [--no-latency] [--latency-rounds N] [--latency-rate N] [--latency-idle-s N]');
  console.error('       [--no-peer | --peer-only] [--peer-rounds N] [--peer-segment-mb N] [--peer-one-mb N] [--peer-six-mb N] [--peer-steady-mbps N] [--peer-steady-s N] [--peer-fsync] [--peer-no-latency]');
  process.exit(2);
}

function parseArgs(argv: readonly string[]): Options {
  const o: Options = { rounds: 3, chunkMb: 1, mbPerPartition: 200, segmentMb: 64, partitions: 2, prefetchChunks: undefined, fetchWorkers: undefined, copyWorkers: undefined, extra: {}, chunkReuse: false, fetchChunks: 8, cacheMb: undefined, doc: path.join(repoRoot(), 'docs', 'tiering-benchmarks.md'), profileDir: null, compression: undefined, minio: true, peer: null, latencyRounds: 3, latencyRate: 500, latencyIdleMs: 3000 };
  let peer: PeerOptions = { ...defaultPeerOptions };
  let peerRounds: number | undefined;
  let noPeer = false;
  const num = (v: string | undefined, name: string): number => {
    const n = Number(v);
    if (!Number.isInteger(n) || n <= 0) usage(`${name} wants a positive integer`);
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--rounds') o.rounds = num(argv[++i], a);
    else if (a === '--chunk-mb') o.chunkMb = num(argv[++i], a);
    else if (a === '--mb-per-partition') o.mbPerPartition = num(argv[++i], a);
    else if (a === '--segment-mb') o.segmentMb = num(argv[++i], a);
    else if (a === '--partitions') o.partitions = num(argv[++i], a);
    else if (a === '--prefetch-chunks') o.prefetchChunks = num(argv[++i], a);
    else if (a === '--fetch-chunks') o.fetchChunks = num(argv[++i], a);
    else if (a === '--cache-mb') o.cacheMb = num(argv[++i], a);
    else if (a === '--fetch-workers') {
      o.fetchWorkers = Number(argv[++i]);
      if (!Number.isInteger(o.fetchWorkers) || o.fetchWorkers < 0) usage('--fetch-workers wants an integer >= 0');
    } else if (a === '--chunk-reuse') o.chunkReuse = true;
    else if (a === '--set') {
      const kv = argv[++i] ?? '';
      const eq = kv.indexOf('=');
      if (eq <= 0) usage('--set wants key=value');
      o.extra[kv.slice(0, eq)] = kv.slice(eq + 1);
    } else if (a === '--fetch-nice' || a === '--copy-nice') {
      const nice = Number(argv[++i]);
      if (!Number.isInteger(nice) || nice < 0 || nice > 19) usage(`${a} wants an integer 0-19`);
      o.extra[`rsm.config.${a === '--fetch-nice' ? 'fetch' : 'copy'}.worker.nice`] = String(nice);
    } else if (a === '--copy-workers') {
      o.copyWorkers = Number(argv[++i]);
      if (!Number.isInteger(o.copyWorkers) || o.copyWorkers < 0) usage('--copy-workers wants an integer >= 0');
    }
    else if (a === '--doc') o.doc = argv[++i] ?? usage('--doc wants a path');
    else if (a === '--no-doc') o.doc = null;
    else if (a === '--profile') o.profileDir = argv[++i] ?? usage('--profile wants a directory');
    else if (a === '--compression') {
      o.compression = argv[++i];
      if (!['uncompressed', 'gzip', 'snappy', 'lz4', 'zstd', 'producer'].includes(o.compression ?? '')) usage('--compression wants uncompressed, gzip, snappy, lz4, zstd or producer');
    }
    else if (a === '--no-peer') noPeer = true;
    else if (a === '--no-latency') o.latencyRounds = 0;
    else if (a === '--latency-rounds') o.latencyRounds = num(argv[++i], a);
    else if (a === '--latency-rate') o.latencyRate = num(argv[++i], a);
    else if (a === '--latency-idle-s') o.latencyIdleMs = num(argv[++i], a) * 1000;
    else if (a === '--peer-only') o.minio = false;
    else if (a?.startsWith('--peer-') === true) {
      if (a === '--peer-rounds') peerRounds = num(argv[++i], a);
      else if (a === '--peer-segment-mb') peer = { ...peer, segmentMb: num(argv[++i], a) };
      else if (a === '--peer-one-mb') peer = { ...peer, backlogMb: num(argv[++i], a) };
      else if (a === '--peer-six-mb') peer = { ...peer, sixMbPerPartition: num(argv[++i], a) };
      else if (a === '--peer-steady-mbps') peer = { ...peer, steadyMbPerSec: num(argv[++i], a) };
      else if (a === '--peer-steady-s') peer = { ...peer, steadySeconds: num(argv[++i], a) };
      else if (a === '--peer-fsync') peer = { ...peer, fsync: true };
      else if (a === '--peer-no-latency') peer = { ...peer, latencyRate: 0 };
      else usage(`unknown argument ${a}`);
    }
    else usage(`unknown argument ${a}`);
  }
  o.peer = noPeer ? null : { ...peer, rounds: peerRounds ?? o.rounds, ...(peer.latencyRate > 0 ? { latencyRate: o.latencyRate, latencyIdleMs: o.latencyIdleMs } : {}) };
  if (!o.minio && o.peer === null) usage('--peer-only and --no-peer leave nothing to run');
  if (o.peer !== null && (o.peer.backlogMb <= o.peer.segmentMb || o.peer.sixMbPerPartition <= o.peer.segmentMb)) usage('--peer-one-mb and --peer-six-mb must exceed --peer-segment-mb (at least one closed segment)');
  if (o.mbPerPartition <= o.segmentMb) usage('--mb-per-partition must exceed --segment-mb (at least one closed segment)');
  return o;
}

const mib = (bytes: number): string => (bytes / 1_048_576).toFixed(1);
const rate = (bytes: number, ms: number): number => bytes / 1_048_576 / (ms / 1000);

// ---- load ----

/** kcat -P into one partition: random records of RECORD_BYTES until `bytes`; returns the record bytes written. */
async function produce(bootstrap: string, topic: string, partition: number, bytes: number): Promise<number> {
  const args = ['-P', '-b', bootstrap, '-t', topic, '-p', String(partition), '-X', 'linger.ms=20', '-X', 'batch.size=1000000', '-X', 'queue.buffering.max.kbytes=131072'];
  const child = spawn(kcatPath, args, { stdio: ['pipe', 'ignore', 'pipe'] });
  const stderr: Buffer[] = [];
  child.stderr.on('data', (b: Buffer) => stderr.push(b));
  const done = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  // base64 of random bytes: printable (no newline inside a record), barely compressible.
  const lineChars = RECORD_BYTES;
  let written = 0;
  while (written < bytes) {
    const lines: string[] = [];
    for (let k = 0; k < 64; k++) lines.push(randomBytes((lineChars * 3) / 4).toString('base64').slice(0, lineChars));
    const chunk = lines.join('\n') + '\n';
    written += chunk.length;
    if (!child.stdin.write(chunk)) await new Promise<void>((r) => child.stdin.once('drain', () => r()));
  }
  child.stdin.end();
  const code = await done;
  if (code !== 0) throw new Error(`kcat -P partition ${partition} exited ${code}: ${Buffer.concat(stderr).toString('utf8').slice(-2000)}`);
  return written;
}

/** One kcat consumer per partition from offset 0 for `counts[p]` records; resolves with the wall time. */
async function consume(bootstrap: string, topic: string, counts: readonly bigint[]): Promise<number> {
  const started = performance.now();
  await Promise.all(
    counts.map(
      (n, p) =>
        new Promise<void>((resolve, reject) => {
          const child = spawn(kcatPath, ['-C', '-b', bootstrap, '-t', topic, '-p', String(p), '-o', '0', '-c', n.toString(), '-q', '-f', '%o\n'], { stdio: ['ignore', 'pipe', 'pipe'] });
          let lines = 0;
          child.stdout.on('data', (b: Buffer) => {
            for (const c of b) if (c === 10) lines++;
          });
          const stderr: Buffer[] = [];
          child.stderr.on('data', (b: Buffer) => stderr.push(b));
          child.on('close', (code) => {
            if (code === 0 && BigInt(lines) === n) resolve();
            else reject(new Error(`kcat -C partition ${p}: exit ${code}, ${lines} of ${n} records: ${Buffer.concat(stderr).toString('utf8').slice(-2000)}`));
          });
        }),
    ),
  );
  return performance.now() - started;
}

const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

// ---- the plain S3 client ----

/**
 * The leanest plain client: no checksums computed or validated and unsigned
 * payloads, so a PUT costs no hashing at all (the copy task still sends a
 * CRC-32C the server verifies) - the strictest baseline.
 */
function rawClient(minio: MinioServer, handler: 'node-http' | 'direct' = 'node-http'): S3Client {
  process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] ??= 'true';
  const agent = { keepAlive: true, maxSockets: 64 };
  const client = new S3Client({
    endpoint: minio.endpoint,
    region: minio.region,
    forcePathStyle: true,
    credentials: { accessKeyId: minio.accessKey, secretAccessKey: minio.secretKey },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    requestHandler: handler === 'direct' ? new DirectHttpHandler({ maxSockets: 64 }) : { httpAgent: agent, httpsAgent: agent },
  });
  client.middlewareStack.add(
    (next) => async (args) => {
      const request = args.request as { method?: string; headers?: Record<string, string> };
      if (request.method === 'PUT' && request.headers !== undefined) request.headers['x-amz-content-sha256'] = 'UNSIGNED-PAYLOAD';
      return next(args);
    },
    { step: 'build', name: 'benchUnsignedPayload' },
  );
  return client;
}

/** readFile + PutObject of each file, in order per group, groups in parallel; resolves with the wall time. */
async function rawPut(s3: S3Client, bucket: string, prefix: string, groups: ReadonlyArray<readonly string[]>): Promise<number> {
  const started = performance.now();
  await Promise.all(
    groups.map(async (files, g) => {
      for (const [k, file] of files.entries()) {
        const body = await readFile(file);
        await s3.send(new PutObjectCommand({ Bucket: bucket, Key: `${prefix}${g}/${k}.log`, Body: body, ContentLength: body.length }));
      }
    }),
  );
  return performance.now() - started;
}

/** Counts a body's bytes the cheapest way its client offers: 'data' events, or DirectBody.drainInto. */
async function readBody(body: unknown, size: number): Promise<number> {
  let n = 0;
  await consumeBody(body, (piece) => {
    n += piece.length;
  });
  if (n !== size) throw new Error(`short ranged GET: ${n} of ${size} bytes`);
  return n;
}

/** Ranged GETs of `rangeBytes` of each object, in order per group with GETS_IN_FLIGHT in flight, groups in parallel. */
async function rawGet(s3: S3Client, bucket: string, groups: ReadonlyArray<ReadonlyArray<{ key: string; size: number }>>, rangeBytes: number): Promise<number> {
  const started = performance.now();
  await Promise.all(
    groups.map(async (objects) => {
      const ranges = objects.flatMap((o) => Array.from({ length: Math.ceil(o.size / rangeBytes) }, (_, i) => ({ key: o.key, start: i * rangeBytes, end: Math.min(o.size, (i + 1) * rangeBytes) - 1 })));
      let next = 0;
      const worker = async (): Promise<void> => {
        while (next < ranges.length) {
          const r = ranges[next++]!;
          const res = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: r.key, Range: `bytes=${r.start}-${r.end}` }));
          await readBody(res.Body, r.end - r.start + 1);
        }
      };
      await Promise.all(Array.from({ length: GETS_IN_FLIGHT }, worker));
    }),
  );
  return performance.now() - started;
}

// ---- profiling ----

async function profiled<T>(dir: string | null, name: string, fn: () => Promise<T>): Promise<{ result: T; summary: string | null }> {
  if (dir === null) return { result: await fn(), summary: null };
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 200 });
  await session.post('Profiler.start');
  try {
    const result = await fn();
    const { profile } = await session.post('Profiler.stop');
    mkdirSync(dir, { recursive: true });
    const file = path.join(dir, `${name}.cpuprofile`);
    writeFileSync(file, JSON.stringify(profile));
    return { result, summary: `${name} (${file}):\n${formatSummary(summarizeProfile(profile as unknown as CpuProfile), 15)}` };
  } finally {
    session.disconnect();
  }
}

// ---- the run ----

/** One round: its own topic, measured against the plain client right before and after. */
interface Round {
  readonly topic: string;
  /** Record bytes kcat was given (all partitions; the active segments' share included). */
  readonly producedBytes: number;
  /** Bytes of the partitions' logs after the produce, active segments included: compare with producedBytes. */
  readonly logBytes: number;
  /** Bytes of the closed segments: what the copy task sends to the store as segment data. */
  readonly closedBytes: number;
  readonly segments: number;
  readonly produceMs: number;
  readonly localReadMs: number;
  /** Raw PUT right before and right after the copy task. */
  readonly rawPutMs: [number, number];
  readonly copyMs: number;
  /** CPU spent during the copy task (the bench process hosts the broker; MinIO by pid). */
  readonly copyCpu: CpuTimes;
  /** Garbage collection in the bench process during the copy task. */
  readonly copyGc: GcStats;
  /** Raw ranged GETs right before and right after the cold read. */
  rawGetMs: [number, number];
  /** Raw ranged GETs of the broker's request size (fetchChunks chunks), before and after the cold read. */
  rawGetRequestMs: [number, number];
  /** Chunk-size GETs through DirectHttpHandler, the broker's GET transport. */
  rawGetDirectMs: [number, number];
  coldMs: number;
  warmMs: number;
  coldFetches: number;
  cold: { hits: number; inFlightHits: number; misses: number };
  warm: { hits: number; inFlightHits: number; misses: number };
  /** The broker's event loop delay during the cold read (how late a ready callback, e.g. a fetch, ran). */
  coldLoopDelayMs: { p50: number; p90: number; p99: number; max: number } | null;
  /** CPU spent during the first raw GET run, the cold read and the warm read. */
  cpu: { rawGet: CpuTimes; cold: CpuTimes; warm: CpuTimes } | null;
}

/** Garbage collection pauses seen by a PerformanceObserver over a window. */
interface GcStats {
  readonly ms: number;
  readonly count: number;
  /** The part of `ms` in mark-compacts (major GCs). */
  readonly majorMs: number;
  readonly majorCount: number;
}

/** Starts counting this process's GC pauses; the returned function stops and reports them. */
function watchGc(): () => GcStats {
  const entries: PerformanceEntry[] = [];
  const obs = new PerformanceObserver((list) => entries.push(...list.getEntries()));
  obs.observe({ entryTypes: ['gc'] });
  return () => {
    entries.push(...obs.takeRecords());
    obs.disconnect();
    let ms = 0;
    let majorMs = 0;
    let majorCount = 0;
    for (const e of entries) {
      ms += e.duration;
      // detail.kind: 1 scavenge, 2 minor mark-sweep, 4 mark-compact, 8 incremental marking, 16 weak callbacks.
      if ((e as unknown as { detail?: { kind?: number } }).detail?.kind === 4) {
        majorMs += e.duration;
        majorCount++;
      }
    }
    return { ms, count: entries.length, majorMs, majorCount };
  };
}

/** One round of the produce latency phase: the probe's figures idle and during each tiering task. */
interface LatencyRound {
  readonly idleBeforeCopy: WindowStats | null;
  readonly copy: WindowStats | null;
  readonly copyMs: number;
  readonly idleBeforeCold: WindowStats | null;
  readonly cold: WindowStats | null;
  readonly coldMs: number;
  readonly errors: number;
  /** The broker's event loop delay p99 during the copy and during the cold read. */
  readonly loopP99Ms: { copy: number; cold: number };
  /** How late the probe's own timer ran (p99): its scheduling delay on the shared cores. */
  readonly probeLateP99Ms: { copy: number; cold: number };
}

interface Results {
  readonly rounds: Round[];
  readonly latency: LatencyRound[];
  readonly profiles: string[];
}

function brokerOverrides(minio: MinioServer, chunkCacheBytes: number, chunkBytes: number, o: Options): Record<string, string> {
  return {
    ...(o.prefetchChunks === undefined ? {} : { 'rsm.config.chunk.cache.prefetch.chunks': String(o.prefetchChunks) }),
    ...(o.fetchWorkers === undefined ? {} : { 'rsm.config.fetch.worker.threads': String(o.fetchWorkers) }),
    ...(o.copyWorkers === undefined ? {} : { 'rsm.config.copy.worker.threads': String(o.copyWorkers) }),
    ...(o.chunkReuse ? { 'rsm.config.chunk.cache.reuse.enable': 'true' } : {}),
    'rsm.config.chunk.cache.fetch.chunks': String(o.fetchChunks),
    'rsm.config.chunk.size.bytes': String(chunkBytes),
    'remote.log.storage.system.enable': 'true',
    'remote.log.storage.url': `s3://${minio.bucket}/sediment/`,
    'rsm.config.s3.endpoint': minio.endpoint,
    'rsm.config.s3.region': minio.region,
    'rsm.config.s3.path.style.access': 'true',
    'rsm.config.s3.access.key.id': minio.accessKey,
    'rsm.config.s3.secret.access.key': minio.secretKey,
    // Big enough for one round's topic, so its second read can hit.
    'rsm.config.chunk.cache.size.bytes': String(chunkCacheBytes),
    // The copy task runs when the bench says so.
    'remote.log.manager.task.interval.ms': '3600000',
    'log.retention.check.interval.ms': '500',
    ...o.extra,
  };
}

async function waitUntil(what: string, check: () => boolean | Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    // Polled: local deletion and metadata replay announce themselves only in logs.
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The tiered topic under test. */
async function createTopic(bootstrap: string, topic: string, o: Options): Promise<void> {
  await createTopicWith(bootstrap, topic, o.partitions, [
    { name: 'remote.storage.enable', value: 'true' },
    { name: 'segment.bytes', value: String(o.segmentMb * 1_048_576) },
    // Kept until the second raw PUT has read the files; lowered to 1 s after.
    { name: 'local.retention.ms', value: '3600000' },
    { name: 'retention.ms', value: '-1' },
    ...(o.compression === undefined ? [] : [{ name: 'compression.type', value: o.compression }]),
  ]);
}

/** The latency probe's topic: one partition, the broker's defaults. */
async function createProbeTopic(bootstrap: string, topic: string): Promise<void> {
  await createTopicWith(bootstrap, topic, 1, []);
}

async function createTopicWith(bootstrap: string, topic: string, numPartitions: number, configEntries: ReadonlyArray<{ name: string; value: string }>): Promise<void> {
  const kafka = new Kafka({ clientId: 'tiering-bench', brokers: [bootstrap], logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  try {
    await admin.createTopics({ topics: [{ topic, numPartitions, replicationFactor: 1, configEntries: [...configEntries] }], waitForLeaders: true });
  } finally {
    await admin.disconnect();
  }
}

async function setLocalRetention(bootstrap: string, topic: string, ms: number): Promise<void> {
  const admin = await AdminClient.connect(bootstrap, { clientId: 'tiering-bench' });
  try {
    const r = await admin.incrementalAlterTopicConfigs(topic, [{ name: 'local.retention.ms', op: 'set', value: String(ms) }]);
    if (r.errorCode !== 0) throw new Error(`setting local.retention.ms of ${topic}: error ${r.errorCode} ${r.errorMessage ?? ''}`);
  } finally {
    admin.close();
  }
}

async function run(o: Options, minio: MinioServer): Promise<Results> {
  // Default: big enough for one round's topic, so its second read can hit.
  const chunkCacheBytes = (o.cacheMb ?? o.mbPerPartition * o.partitions + 64) * 1_048_576;
  let broker: InProcessSediment = await startSedimentInProcess({ overrides: brokerOverrides(minio, chunkCacheBytes, o.chunkMb * 1_048_576, o), logLevel: 'warn' });
  const profiles: string[] = [];
  const rounds: Round[] = [];
  const counts = new Map<string, bigint[]>();
  const logsOf = (topic: string): PartitionLog[] => Array.from({ length: o.partitions }, (_, p) => broker.broker.topics.partitionLog(topic, p)!);
  const s3 = rawClient(minio);
  const s3direct = rawClient(minio, 'direct');
  try {
    // Upload, round by round: produce, read locally, raw PUT, copy task, raw PUT.
    for (let r = 0; r < o.rounds; r++) {
      const topic = `${TOPIC}-${r}`;
      await createTopic(broker.bootstrap, topic, o);
      let t = performance.now();
      const producedBytes = (await Promise.all(Array.from({ length: o.partitions }, (_, p) => produce(broker.bootstrap, topic, p, o.mbPerPartition * 1_048_576)))).reduce((a, b) => a + b, 0);
      const produceMs = performance.now() - t;
      const closed = logsOf(topic).map((l) => [...l.closedSegments()]);
      const closedBytes = closed.flat().reduce((n, seg) => n + seg.size, 0);
      const logBytes = logsOf(topic).reduce((n, l) => n + l.size, 0);
      const ends = closed.map((segs) => segs.at(-1)?.nextOffset ?? 0n);
      counts.set(topic, ends);
      const files = closed.map((segs) => segs.map((seg) => seg.files.log));
      const localReadMs = await consume(broker.bootstrap, topic, ends);
      const before = await rawPut(s3, minio.bucket, `raw-put/${r}/a/`, files);
      const rlm = broker.broker.remoteLogManager!;
      // Under --expose-gc the raw PUT's garbage is collected first, so the copy's GC figures are its own.
      (globalThis as { gc?: () => void }).gc?.();
      const copyCpuFrom = cpuTimes(minio.pid);
      const stopGc = watchGc();
      t = performance.now();
      const copy = await profiled(r === 0 ? o.profileDir : null, 'copy', () => Promise.all(logsOf(topic).map((l) => rlm.runPartition(l))));
      const copyMs = performance.now() - t;
      const copyGc = stopGc();
      const copyCpu = cpuSince(copyCpuFrom, minio.pid);
      if (copy.summary !== null) profiles.push(copy.summary);
      logsOf(topic).forEach((l, p) => {
        const want = (ends[p] ?? 0n) - 1n;
        if (rlm.highestRemoteOffset(l) !== want) throw new Error(`${topic}-${p}: the copy task left -5 at ${rlm.highestRemoteOffset(l)}, want ${want}: ${String(rlm.lastError(l))}`);
      });
      const afterPut = await rawPut(s3, minio.bucket, `raw-put/${r}/b/`, files);
      const round: Round = {
        topic,
        producedBytes,
        logBytes,
        closedBytes,
        segments: closed.flat().length,
        produceMs,
        localReadMs,
        rawPutMs: [before, afterPut],
        copyMs,
        copyCpu,
        copyGc,
        rawGetMs: [0, 0],
        rawGetRequestMs: [0, 0],
        rawGetDirectMs: [0, 0],
        coldMs: 0,
        warmMs: 0,
        coldFetches: 0,
        cold: { hits: 0, inFlightHits: 0, misses: 0 },
        warm: { hits: 0, inFlightHits: 0, misses: 0 },
        cpu: null,
        coldLoopDelayMs: null,
      };
      rounds.push(round);
      console.log(
        `round ${r}: ${mib(producedBytes)} MiB of records produced (compression.type=${o.compression ?? 'producer'}) into ${mib(logBytes)} MiB of log, ${round.segments} closed segments, ${mib(closedBytes)} MiB; local read ${rate(closedBytes, localReadMs).toFixed(0)} MiB/s; ` +
          `raw PUT ${rate(closedBytes, before).toFixed(0)} / copy task ${rate(closedBytes, copyMs).toFixed(0)} / raw PUT ${rate(closedBytes, afterPut).toFixed(0)} MiB/s; ` +
          `copy CPU ms/MiB (bench process / MinIO / kcat) ${cpuPerMib(copyCpu, closedBytes)}, GC ${copyGc.ms.toFixed(0)} ms in ${copyGc.count} pauses (mark-compact ${copyGc.majorMs.toFixed(0)} ms in ${copyGc.majorCount})`,
      );
    }
    for (const round of rounds) await setLocalRetention(broker.bootstrap, round.topic, 1000);
    await waitUntil('local deletion of the tiered segments', () => rounds.every((round) => logsOf(round.topic).every((l) => l.closedSegments().length === 0)), 120_000);

    // Reads, from a restarted broker (empty caches), round by round: raw GETs, cold read, raw GETs, warm read.
    broker = await broker.restart();
    const rlm = broker.broker.remoteLogManager!;
    await waitUntil(
      'remote metadata replayed',
      () => rounds.every((round) => logsOf(round.topic).every((l, p) => rlm.partitionStats(l)?.highestRemoteOffset === (counts.get(round.topic)?.[p] ?? 0n) - 1n)),
      60_000,
    );
    for (const [r, round] of rounds.entries()) {
      const ends = counts.get(round.topic) ?? [];
      const objects = await listDataObjects(minio, `sediment/${round.topic}-`, o.partitions);
      const objectBytes = objects.flat().reduce((n, x) => n + x.size, 0);
      if (objectBytes !== round.closedBytes) throw new Error(`${round.topic}: the bucket holds ${objectBytes} data bytes, the closed segments were ${round.closedBytes}`);
      let cpu = cpuTimes(minio.pid);
      const rawBeforeRun = await profiled(r === 0 ? o.profileDir : null, 'raw-get', () => rawGet(s3, minio.bucket, objects, o.chunkMb * 1_048_576));
      if (rawBeforeRun.summary !== null) profiles.push(rawBeforeRun.summary);
      const rawBefore = rawBeforeRun.result;
      const rawGetCpu = cpuSince(cpu, minio.pid);
      const requestBytes = o.chunkMb * o.fetchChunks * 1_048_576;
      const rawRequestBefore = await rawGet(s3, minio.bucket, objects, requestBytes);
      const rawDirectBefore = await rawGet(s3direct, minio.bucket, objects, o.chunkMb * 1_048_576);
      const start = rlm.cacheStats().chunks;
      cpu = cpuTimes(minio.pid);
      const loopDelay = monitorEventLoopDelay({ resolution: 1 });
      loopDelay.enable();
      const cold = await profiled(r === 0 ? o.profileDir : null, 'cold-read', () => consume(broker.bootstrap, round.topic, ends));
      const coldCpu = cpuSince(cpu, minio.pid);
      loopDelay.disable();
      const ms = (ns: number): number => ns / 1e6;
      round.coldLoopDelayMs = { p50: ms(loopDelay.percentile(50)), p90: ms(loopDelay.percentile(90)), p99: ms(loopDelay.percentile(99)), max: ms(loopDelay.max) };
      if (cold.summary !== null) profiles.push(cold.summary);
      const mid = rlm.cacheStats().chunks;
      const rawAfter = await rawGet(s3, minio.bucket, objects, o.chunkMb * 1_048_576);
      const rawRequestAfter = await rawGet(s3, minio.bucket, objects, requestBytes);
      const rawDirectAfter = await rawGet(s3direct, minio.bucket, objects, o.chunkMb * 1_048_576);
      cpu = cpuTimes(minio.pid);
      const warmMs = await consume(broker.bootstrap, round.topic, ends);
      const warmCpu = cpuSince(cpu, minio.pid);
      round.cpu = { rawGet: rawGetCpu, cold: coldCpu, warm: warmCpu };
      const end = rlm.cacheStats().chunks;
      round.rawGetMs = [rawBefore, rawAfter];
      round.rawGetRequestMs = [rawRequestBefore, rawRequestAfter];
      round.rawGetDirectMs = [rawDirectBefore, rawDirectAfter];
      round.coldMs = cold.result;
      round.warmMs = warmMs;
      round.coldFetches = mid.fetches - start.fetches;
      round.cold = { hits: mid.hits - start.hits, inFlightHits: mid.inFlightHits - start.inFlightHits, misses: mid.misses - start.misses };
      round.warm = { hits: end.hits - mid.hits, inFlightHits: end.inFlightHits - mid.inFlightHits, misses: end.misses - mid.misses };
      const b = round.closedBytes;
      console.log(
        `round ${r}: raw GET ${rate(b, rawBefore).toFixed(0)} / cold read ${rate(b, round.coldMs).toFixed(0)} / raw GET ${rate(b, rawAfter).toFixed(0)} / ` +
          `warm read ${rate(b, warmMs).toFixed(0)} MiB/s (${round.warm.hits} hits, ${round.warm.misses} misses); ` +
          `CPU ms/MiB (bench process / MinIO / kcat): raw GET ${cpuPerMib(rawGetCpu, b)}, cold ${cpuPerMib(coldCpu, b)}, warm ${cpuPerMib(warmCpu, b)}`,
      );
    }
    // Produce latency, each round on a topic of its own: idle, then the copy task; idle, then a cold read.
    const latency: LatencyRound[] = [];
    for (let r = 0; r < o.latencyRounds; r++) {
      const topic = `${TOPIC}-latency-${r}`;
      const probeTopic = `${TOPIC}-probe-${r}`;
      await createTopic(broker.bootstrap, topic, o);
      await createProbeTopic(broker.bootstrap, probeTopic);
      await Promise.all(Array.from({ length: o.partitions }, (_, p) => produce(broker.bootstrap, topic, p, o.mbPerPartition * 1_048_576)));
      const ends = logsOf(topic).map((l) => l.closedSegments().at(-1)?.nextOffset ?? 0n);
      let probe = await startProbe(broker.bootstrap, probeTopic, o.latencyRate);
      const idle1 = epochNow();
      await pause(o.latencyIdleMs);
      const copyFrom = epochNow();
      const rlmNow = broker.broker.remoteLogManager!;
      const copyLoop = monitorEventLoopDelay({ resolution: 1 });
      copyLoop.enable();
      await Promise.all(logsOf(topic).map((l) => rlmNow.runPartition(l)));
      copyLoop.disable();
      const copyTo = epochNow();
      const up = await probe.stop();
      await setLocalRetention(broker.bootstrap, topic, 1000);
      await waitUntil('local deletion of the latency round', () => logsOf(topic).every((l) => l.closedSegments().length === 0), 120_000);
      broker = await broker.restart();
      const rlmAfter = broker.broker.remoteLogManager!;
      await waitUntil('remote metadata replayed', () => logsOf(topic).every((l, p) => rlmAfter.partitionStats(l)?.highestRemoteOffset === (ends[p] ?? 0n) - 1n), 60_000);
      probe = await startProbe(broker.bootstrap, probeTopic, o.latencyRate);
      const idle2 = epochNow();
      await pause(o.latencyIdleMs);
      const coldFrom = epochNow();
      const coldLoop = monitorEventLoopDelay({ resolution: 1 });
      coldLoop.enable();
      await consume(broker.bootstrap, topic, ends);
      coldLoop.disable();
      const coldTo = epochNow();
      const down = await probe.stop();
      const round: LatencyRound = {
        idleBeforeCopy: windowStats(up.samples, idle1, copyFrom),
        copy: windowStats(up.samples, copyFrom, copyTo),
        copyMs: copyTo - copyFrom,
        idleBeforeCold: windowStats(down.samples, idle2, coldFrom),
        cold: windowStats(down.samples, coldFrom, coldTo),
        coldMs: coldTo - coldFrom,
        errors: up.errors + down.errors,
        loopP99Ms: { copy: copyLoop.percentile(99) / 1e6, cold: coldLoop.percentile(99) / 1e6 },
        probeLateP99Ms: { copy: windowStats(up.ticks, copyFrom, copyTo)?.p99 ?? 0, cold: windowStats(down.ticks, coldFrom, coldTo)?.p99 ?? 0 },
      };
      latency.push(round);
      console.log(
        `latency round ${r}: idle ${formatWindow(round.idleBeforeCopy)}; copy (${(round.copyMs / 1000).toFixed(1)} s) ${formatWindow(round.copy)}; ` +
          `idle ${formatWindow(round.idleBeforeCold)}; cold read (${(round.coldMs / 1000).toFixed(1)} s) ${formatWindow(round.cold)}; ${round.errors} failed sends; broker event loop delay p99 ${round.loopP99Ms.copy.toFixed(1)} ms (copy) / ${round.loopP99Ms.cold.toFixed(1)} ms (cold read); probe timer lateness p99 ${round.probeLateP99Ms.copy.toFixed(1)} / ${round.probeLateP99Ms.cold.toFixed(1)} ms`,
      );
    }
    return { rounds, latency, profiles };
  } finally {
    s3.destroy();
    s3direct.destroy();
    await broker.close();
  }
}

async function listDataObjects(minio: MinioServer, prefix: string, partitions: number): Promise<Array<Array<{ key: string; size: number }>>> {
  const out: Array<Array<{ key: string; size: number }>> = Array.from({ length: partitions }, () => []);
  const stream = minio.client().listObjectsV2(minio.bucket, prefix, true);
  for await (const item of stream as AsyncIterable<{ name?: string; size?: number }>) {
    const m = item.name === undefined ? null : /\/(\d+)\/\d{20}-[A-Za-z0-9_-]{22}\.log$/.exec(item.name);
    if (m === null || item.name === undefined) continue;
    out[Number(m[1])]?.push({ key: item.name, size: item.size ?? 0 });
  }
  for (const list of out) list.sort((a, b) => (a.key < b.key ? -1 : 1));
  return out;
}

function cpuPerMib(c: CpuTimes, bytes: number): string {
  const per = (ms: number): string => (ms / (bytes / 1_048_576)).toFixed(2);
  return `${per(c.self)} (sys ${per(c.selfSystem)}) / ${per(c.other)} / ${per(c.children)}`;
}

function report(o: Options, res: Results): string {
  const rows = res.rounds.map((r) => {
    const b = r.closedBytes;
    const rawPut = (rate(b, r.rawPutMs[0]) + rate(b, r.rawPutMs[1])) / 2;
    const rawGet = (rate(b, r.rawGetMs[0]) + rate(b, r.rawGetMs[1])) / 2;
    const rawGetRequest = (rate(b, r.rawGetRequestMs[0]) + rate(b, r.rawGetRequestMs[1])) / 2;
    const rawGetDirect = (rate(b, r.rawGetDirectMs[0]) + rate(b, r.rawGetDirectMs[1])) / 2;
    const copy = rate(b, r.copyMs);
    const cold = rate(b, r.coldMs);
    const lookups = r.warm.hits + r.warm.inFlightHits + r.warm.misses;
    return {
      r,
      rawPut,
      copy,
      upload: copy / rawPut,
      rawGet,
      cold,
      coldRatio: cold / rawGet,
      rawGetRequest,
      coldRequestRatio: cold / rawGetRequest,
      rawGetDirect,
      coldDirectRatio: cold / rawGetDirect,
      cpu: r.cpu,
      warm: rate(b, r.warmMs),
      hitRate: lookups === 0 ? 0 : r.warm.hits / lookups,
      local: rate(b, r.localReadMs),
      produce: rate(o.partitions * o.mbPerPartition * 1_048_576, r.produceMs),
    };
  });
  const med = (f: (x: (typeof rows)[number]) => number): number => median(rows.map(f));
  const uploadRatio = med((x) => x.upload);
  const coldRatio = med((x) => x.coldRatio);
  // A goal is met only when every round meets it; the report says how many did.
  const judge = (values: readonly number[], target: number): string => {
    const met = values.filter((v) => v >= target).length;
    return `target >= ${target}x in every round: ${met === values.length ? 'met' : `**missed** (${met} of ${values.length} rounds)`}`;
  };
  const first = res.rounds[0];
  const lines = [
    `Run on ${new Date().toISOString().slice(0, 10)} at commit ${gitHead()}: ${os.cpus().length} CPUs (${os.cpus()[0]?.model.trim() ?? 'unknown'}), load average ${os.loadavg()[0]?.toFixed(1)}, Node ${process.version}, ` +
      `MinIO ${minioLabel()} on loopback, the broker in the bench process (V8 heap growing percent ${heapGrowingPercent ?? "V8's own"}, as \`sediment start\` sets it; the raw baselines share the process).`,
    `Data per round: ${o.partitions} partitions x ${o.mbPerPartition} MiB of random ${RECORD_BYTES / 1024} KiB records (kcat), ${o.segmentMb} MiB segments ` +
      `(${first?.segments ?? 0} closed segments, ${mib(first?.closedBytes ?? 0)} MiB tiered); topic compression.type=${o.compression ?? 'producer'}: ` +
      `${mib(first?.producedBytes ?? 0)} MiB of records produced became ${mib(first?.logBytes ?? 0)} MiB of log, of which ${mib(first?.closedBytes ?? 0)} MiB of closed segments were sent to the store; ${o.rounds} rounds, each on its own topic; figures are medians over rounds, per-round values in brackets.`,
    '',
    '| measure | MiB/s | ratio |',
    '| --- | ---: | ---: |',
    `| raw PutObject (AWS SDK, unsigned, no checksum; one PUT per segment file, partitions in parallel; mean of the runs just before and after the copy) | ${med((x) => x.rawPut).toFixed(0)} (${rows.map((x) => x.rawPut.toFixed(0)).join(', ')}) | baseline |`,
    `| copy task: metadata records, data (CRC-32C verified by the server), indexes, manifest | ${med((x) => x.copy).toFixed(0)} (${rows.map((x) => x.copy.toFixed(0)).join(', ')}) | **${uploadRatio.toFixed(2)}x** raw PUT (${rows.map((x) => x.upload.toFixed(2)).join(', ')}); ${judge(rows.map((x) => x.upload), UPLOAD_TARGET)} |`,
    `| raw ranged GETs of the same data objects (AWS SDK with its default HTTP handler, bodies read by 'data' events; ${o.chunkMb} MiB = the chunk size, ${GETS_IN_FLIGHT} in flight per partition; mean of the runs just before and after the cold read) | ${med((x) => x.rawGet).toFixed(0)} (${rows.map((x) => x.rawGet.toFixed(0)).join(', ')}) | baseline |`,
    `| raw ranged GETs of ${o.chunkMb * o.fetchChunks} MiB (the broker's request size, rsm.config.chunk.cache.fetch.chunks=${o.fetchChunks}; otherwise as above) | ${med((x) => x.rawGetRequest).toFixed(0)} (${rows.map((x) => x.rawGetRequest.toFixed(0)).join(', ')}) | second baseline |`,
    `| raw ranged GETs of ${o.chunkMb} MiB through the broker's own GET transport (the SDK on DirectHttpHandler, rsm.config.s3.read.http.handler=direct; otherwise as the baseline) | ${med((x) => x.rawGetDirect).toFixed(0)} (${rows.map((x) => x.rawGetDirect.toFixed(0)).join(', ')}) | third baseline |`,
    `| cold read: one kcat consumer per partition from offset 0, restarted broker | ${med((x) => x.cold).toFixed(0)} (${rows.map((x) => x.cold.toFixed(0)).join(', ')}) | **${coldRatio.toFixed(2)}x** raw GET (${rows.map((x) => x.coldRatio.toFixed(2)).join(', ')}); ${judge(rows.map((x) => x.coldRatio), COLD_TARGET)}; **${med((x) => x.coldRequestRatio).toFixed(2)}x** the second baseline (${rows.map((x) => x.coldRequestRatio.toFixed(2)).join(', ')}); **${med((x) => x.coldDirectRatio).toFixed(2)}x** the third (${rows.map((x) => x.coldDirectRatio.toFixed(2)).join(', ')}) |`,
    `| warm read: the same consumers again | ${med((x) => x.warm).toFixed(0)} (${rows.map((x) => x.warm.toFixed(0)).join(', ')}) | chunk cache hit rate ${(100 * med((x) => x.hitRate)).toFixed(1)}% |`,
    `| reference: the same records read by the same consumers from local disk, before tiering | ${med((x) => x.local).toFixed(0)} (${rows.map((x) => x.local.toFixed(0)).join(', ')}) | |`,
    '',
    '',
    'CPU per MiB moved, in milliseconds (user + system, the system part in brackets): the bench process (which hosts the broker), MinIO, and the kcat consumers; medians over rounds. GC: the bench process\'s garbage collection pauses during the copy (PerformanceObserver \'gc\' entries), per MiB and in all, medians over rounds.',
    '',
    '| phase | bench process | MinIO | kcat |',
    '| --- | ---: | ---: | ---: |',
    (() => {
      const per = (f: (c: CpuTimes) => number): string => med((x) => f(x.r.copyCpu) / (x.r.closedBytes / 1_048_576)).toFixed(2);
      return `| copy task (upload; GC ${med((x) => x.r.copyGc.ms / (x.r.closedBytes / 1_048_576)).toFixed(2)} ms/MiB, ${med((x) => x.r.copyGc.ms).toFixed(0)} ms (${rows.map((x) => x.r.copyGc.ms.toFixed(0)).join(', ')})) | ${per((c) => c.self)} (${per((c) => c.selfSystem)}) (${rows.map((x) => (x.r.copyCpu.self / (x.r.closedBytes / 1_048_576)).toFixed(2)).join(', ')}) | ${per((c) => c.other)} | ${per((c) => c.children)} |`;
    })(),
    ...(['rawGet', 'cold', 'warm'] as const).map((phase) => {
      const per = (f: (c: CpuTimes) => number): string => (med((x) => (x.cpu === null ? 0 : f(x.cpu[phase]) / (x.r.closedBytes / 1_048_576)))).toFixed(2);
      const label = phase === 'rawGet' ? `raw ${o.chunkMb} MiB GETs` : phase === 'cold' ? 'cold read' : 'warm read';
      return `| ${label} | ${per((c) => c.self)} (${per((c) => c.selfSystem)}) | ${per((c) => c.other)} | ${per((c) => c.children)} |`;
    }),
    '',
    loopDelayLine(res.rounds),
    '',
    `Produce (kcat, acks=all) ran at ${med((x) => x.produce).toFixed(0)} MiB/s. Cold reads issued ${res.rounds.map((r) => r.coldFetches).join(', ')} ranged GETs ` +
      `(${res.rounds.map((r) => `${r.cold.hits} hits / ${r.cold.inFlightHits} in-flight / ${r.cold.misses} misses`).join('; ')}); ` +
      `warm reads: ${res.rounds.map((r) => `${r.warm.hits} hits / ${r.warm.inFlightHits} in-flight / ${r.warm.misses} misses`).join('; ')}.`,
    ...latencyLines(o, res.latency),
  ];
  return lines.join('\n');
}

const LATENCY_GOAL = 1.5;

/** The produce latency phase: p99 during each tiering task against the same probe idle. */
function latencyLines(o: Options, rounds: readonly LatencyRound[]): string[] {
  if (rounds.length === 0) return [];
  const ratios = (f: (r: LatencyRound) => number | null): number[] => rounds.map(f).filter((x): x is number => x !== null);
  const verdict = (values: readonly number[]): string => {
    if (values.length === 0) return 'no figure';
    const m = median(values);
    const lo = Math.min(...values);
    const hi = Math.max(...values);
    const figure = `**${m.toFixed(2)}x** (${values.map((v) => v.toFixed(2)).join(', ')})`;
    if (lo < m * 0.9 || hi > m * 1.1) return `${figure}; spread ${lo.toFixed(2)}-${hi.toFixed(2)} exceeds ±10%: not called`;
    return `${figure}; goal <= ${LATENCY_GOAL}x: ${m <= LATENCY_GOAL ? 'met' : '**missed**'}`;
  };
  const p99 = (w: WindowStats | null): string => (w === null ? 'n/a' : `${w.p99.toFixed(1)} (${w.count})`);
  return [
    '',
    `Produce latency during tiering: a paced producer in its own process (kafkajs, one 1 KiB record per request, acks=all, ${o.latencyRate} sends/s) into a one-partition topic without remote storage, p99 while the copy task uploads a fresh round's ${o.partitions} x ${o.mbPerPartition} MiB and while one kcat consumer per partition reads it cold from a restarted broker, each against the same probe's p99 in the ${(o.latencyIdleMs / 1000).toFixed(0)} s idle window just before; ${rounds.length} rounds, sends per window in brackets.`,
    '',
    '| round | idle p99 (ms) | upload p99 (ms) | upload / idle | idle p99 (ms) | cold read p99 (ms) | cold / idle | failed sends |',
    '| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rounds.map((r, i) => {
      const up = p99Ratio(r.idleBeforeCopy, r.copy);
      const cold = p99Ratio(r.idleBeforeCold, r.cold);
      return `| ${i} | ${p99(r.idleBeforeCopy)} | ${p99(r.copy)} | ${up === null ? 'n/a' : `${up.toFixed(2)}x`} | ${p99(r.idleBeforeCold)} | ${p99(r.cold)} | ${cold === null ? 'n/a' : `${cold.toFixed(2)}x`} | ${r.errors} |`;
    }),
    '',
    `Produce p99 during upload over idle: ${verdict(ratios((r) => p99Ratio(r.idleBeforeCopy, r.copy)))}. During the cold read over idle: ${verdict(ratios((r) => p99Ratio(r.idleBeforeCold, r.cold)))}.`,
  ];
}

function loopDelayLine(rounds: readonly Round[]): string {
  const each = rounds.map((r) => {
    const d = r.coldLoopDelayMs;
    return d === null ? 'n/a' : `p50 ${d.p50.toFixed(1)} / p90 ${d.p90.toFixed(1)} / p99 ${d.p99.toFixed(1)} / max ${d.max.toFixed(1)} ms`;
  });
  return `The broker's event loop delay during the cold reads (how late a ready callback, such as a fetch request, ran), per round: ${each.join('; ')}.`;
}

function gitHead(): string {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: repoRoot(), encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
}

function minioLabel(): string {
  const script = path.join(repoRoot(), 'test', 'support', 'install-minio.sh');
  if (!existsSync(script)) return 'unknown version';
  return /^MINIO_VERSION=(\S+)$/m.exec(readFileSync(script, 'utf8'))?.[1] ?? 'unknown version';
}

const DOC_BEGIN = '<!-- bench:tiering:begin (generated by npm run bench:tiering; edits inside are overwritten) -->';
const DOC_END = '<!-- bench:tiering:end -->';

const PEER_BEGIN = '<!-- bench:tiering-peer:begin (generated by npm run bench:tiering; edits inside are overwritten) -->';
const PEER_END = '<!-- bench:tiering-peer:end -->';

/** The Kafka peer section: installs Kafka's LocalTieredStorage jar on first use. */
async function runPeerSection(peer: PeerOptions): Promise<string> {
  requireTools(['kcat', 'java', 'kafka']);
  if (!existsSync(kafkaTieredStorageJar())) {
    execFileSync('bash', [path.join(repoRoot(), 'test', 'support', 'install-kafka-tiered-storage.sh')], { stdio: ['ignore', 'ignore', 'inherit'] });
  }
  const results = await runKafkaPeer(peer);
  return peerReport(results, gitHead());
}

const DOC_HEAD = `# Tiered storage benchmarks

\`npm run bench:tiering\` (options: \`-- --rounds N --chunk-mb N --mb-per-partition N --segment-mb N --partitions N --profile DIR --no-doc\`)
measures on a real MinIO, in one run, the copy task's upload throughput against raw
PutObject of the same segment files to the same MinIO, a cold consumer read from
offset 0 of the fully tiered topic against raw ranged GETs (of the chunk size) of the same
objects, and a second (warm) read with its chunk cache hit rate. See the header of
\`test/bench/tiering.bench.ts\` for the exact procedure.

`;

/** The V8 heap growing percent this process runs with (set as `sediment start` sets it; null = V8's own). */
let heapGrowingPercent: number | null = null;

async function main(): Promise<void> {
  const o = parseArgs(process.argv.slice(2));
  // The broker runs in this process: give it the V8 heap setting `sediment start` gives a broker.
  heapGrowingPercent = applyV8Settings();
  const write = (text: string, begin = DOC_BEGIN, end = DOC_END): void => {
    if (o.doc === null) return;
    const existing = existsSync(o.doc) ? readFileSync(o.doc, 'utf8') : null;
    writeFileSync(o.doc, spliceGenerated(existing ?? DOC_HEAD, text, { begin, end }));
    console.log(`\nwrote ${path.relative(process.cwd(), o.doc)}`);
  };
  if (o.minio) {
    requireTools(['kcat', 'kafkajs']);
    const minio = await startMinio({ bucket: 'sediment-bench' });
    let results: Results;
    try {
      results = await run(o, minio);
    } finally {
      await minio.stop();
    }
    const text = report(o, results);
    console.log(`\n${text}`);
    for (const p of results.profiles) console.log(`\n${p}`);
    write(text);
  }
  if (o.peer !== null) {
    const text = await runPeerSection(o.peer);
    console.log(`\n${text}`);
    write(text, PEER_BEGIN, PEER_END);
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
