// The Apache Kafka peer of `npm run bench:tiering` (issue 16): Kafka 4.3.1 with its
// own tiered storage (KIP-405: TopicBasedRemoteLogMetadataManager, and the
// LocalTieredStorage remote storage manager of the kafka-storage test jar, the one
// Kafka's tiered-storage quick start uses) against Sediment with its file:// store,
// each broker a process of its own, both on the same disk (one bench directory),
// the same segment size, the same client (kcat) and the same task interval (1 s).
// Per round, for each broker in turn (the order alternates between rounds):
//   A. upload, 6 partitions: a topic with remote.log.copy.disable=true is filled by
//      six kcat producers; copying is then enabled (with local.retention.ms=1000)
//      and timed from the first file the broker writes under its remote directory
//      to the moment ListOffsets -5 (latest tiered) reaches the last closed segment
//      of every partition: closed-segment bytes over that window. The delay from the
//      config change to that first file is reported apart (config propagation and
//      the task's schedule, not upload speed).
//   B. upload, 1 partition: the same with one partition.
//   C. steady produce: one kcat producer at a fixed rate into a tiered topic (copy
//      on from the start); every 250 ms the bench lists the partition's local
//      segment files and asks -5: copy lag = bytes of closed local segments not yet
//      tiered, and per segment the time from its roll to its tiering.
//   D. cold read, after the broker is restarted: one kcat consumer from offset 0 of
//      B's topic (every record remote, local copies deleted), then six at once on
//      A's topic; MiB/s = closed-segment bytes over the wall time.
// Produce latency (unless latencyRate is 0): the tiering bench's paced probe
// (kafkajs, one 1 KiB record per request, acks=all) writes to a one-partition
// topic without remote storage on the broker under test through A and B, and again
// after the restart through D; its p99 while the uploads run (A and B, from the first
// remote file to -5 covering every segment) and while the cold reads run (D) is set
// against its p99 in an idle window just before each: the issue's 1.5x goal, with
// Apache Kafka measured the same way on the same machine.
// The CPU time of the broker process is read from /proc for the uploads and the
// cold reads. Both remote stores are directories on the same file system: reads
// of freshly written remote files come from the page cache for both brokers.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AdminClient } from '../../broker/cli/admin-client.js';
import { startKafkaReference, type KafkaReference } from '../support/kafka-reference.js';
import { startSediment, type SedimentProcess } from '../support/sediment.js';
import { kafkaTieredStorageJar, kafkaVersion, kcatPath } from '../support/tools.js';
import { cpuTimes } from './cpu-time.js';
import { epochNow, startProbe, type LatencyProbe } from './latency-probe-process.js';
import { formatWindow, p99Ratio, windowStats, type LatencySample, type WindowStats } from './latency-windows.js';

export interface PeerOptions {
  readonly rounds: number;
  readonly segmentMb: number;
  /** B: MiB produced into the one-partition topic. */
  readonly backlogMb: number;
  /** A: MiB produced into each of the six partitions. */
  readonly sixMbPerPartition: number;
  /** C: produce rate (MiB/s) and duration (s). */
  readonly steadyMbPerSec: number;
  readonly steadySeconds: number;
  /** Sediment's rsm.config.fs.fsync; off by default, as LocalTieredStorage never fsyncs. */
  readonly fsync: boolean;
  /** The produce latency probe's sends per second (0: no probe) and its idle window before each measured one. */
  readonly latencyRate: number;
  readonly latencyIdleMs: number;
}

export const defaultPeerOptions: PeerOptions = {
  rounds: 3,
  segmentMb: 16,
  backlogMb: 128,
  sixMbPerPartition: 40,
  steadyMbPerSec: 8,
  steadySeconds: 30,
  fsync: false,
  latencyRate: 500,
  latencyIdleMs: 3000,
};

const RECORD_BYTES = 12 * 1024;
const TASK_INTERVAL_MS = 1000;
const MiB = 1_048_576;

type BrokerName = 'sediment' | 'kafka';

/** One broker under test, as the phases see it. */
interface Peer {
  readonly name: BrokerName;
  readonly bootstrap: string;
  readonly pid: number;
  /** The directory holding <topic>-<partition>/ folders. */
  readonly logDir: string;
  /** The directory holding one folder per tiered topic (Sediment) or topic-partition (Kafka). */
  readonly remoteRoot: string;
  restart(): Promise<void>;
  close(): Promise<void>;
}

async function startSedimentPeer(dir: string, o: PeerOptions): Promise<Peer> {
  const remoteRoot = path.join(dir, 'sediment-remote');
  mkdirSync(remoteRoot, { recursive: true });
  const s: SedimentProcess = await startSediment({
    dataDir: path.join(dir, 'sediment-data'),
    overrides: {
      'remote.log.storage.system.enable': 'true',
      'remote.log.storage.url': `file://${remoteRoot}`,
      'rsm.config.fs.fsync': String(o.fsync),
      'remote.log.manager.task.interval.ms': String(TASK_INTERVAL_MS),
      'log.retention.check.interval.ms': '1000',
    },
  });
  return {
    name: 'sediment',
    get bootstrap() {
      return s.bootstrap;
    },
    get pid() {
      return s.pid;
    },
    logDir: s.dataDir,
    remoteRoot,
    restart: () => s.restart(),
    close: () => s.close(),
  };
}

async function startKafkaPeer(dir: string): Promise<Peer> {
  const dataDir = path.join(dir, 'kafka-data');
  const rsmDir = path.join(dir, 'kafka-remote');
  // Kafka's tiered-storage quick start configuration, with the bench's task interval.
  const overrides = {
    'remote.log.storage.system.enable': 'true',
    'remote.log.metadata.manager.class.name': 'org.apache.kafka.server.log.remote.metadata.storage.TopicBasedRemoteLogMetadataManager',
    'remote.log.metadata.manager.listener.name': 'PLAINTEXT',
    'rlmm.config.remote.log.metadata.topic.replication.factor': '1',
    'remote.log.storage.manager.class.name': 'org.apache.kafka.server.log.remote.storage.LocalTieredStorage',
    'rsm.config.dir': rsmDir,
    'remote.log.manager.task.interval.ms': String(TASK_INTERVAL_MS),
    'log.retention.check.interval.ms': '1000',
    // The first retention check otherwise waits 30 s after start-up.
    'log.initial.task.delay.ms': '1000',
  };
  const start = (): Promise<KafkaReference> => startKafkaReference({ dataDir, keepData: true, extraClasspath: [kafkaTieredStorageJar()], overrides, startTimeoutMs: 120_000 });
  let k = await start();
  const workDirs = [k.workDir];
  return {
    name: 'kafka',
    get bootstrap() {
      return k.bootstrap;
    },
    get pid() {
      return k.pid;
    },
    logDir: dataDir,
    remoteRoot: path.join(rsmDir, 'kafka-tiered-storage'),
    restart: async () => {
      await k.stop();
      k = await start();
      workDirs.push(k.workDir);
    },
    close: async () => {
      await k.stop();
      for (const w of workDirs) rmSync(w, { recursive: true, force: true });
    },
  };
}

// ---- observation ----

interface LocalSegment {
  readonly baseOffset: bigint;
  readonly size: number;
}

/** The partition's local segment files (Kafka's layout, which Sediment shares), oldest first. */
function localSegments(peer: Peer, topic: string, partition: number): LocalSegment[] {
  const dir = path.join(peer.logDir, `${topic}-${partition}`);
  if (!existsSync(dir)) return [];
  const out: LocalSegment[] = [];
  for (const name of readdirSync(dir)) {
    const m = /^(\d{20})\.log$/.exec(name);
    if (m === null) continue;
    try {
      out.push({ baseOffset: BigInt(m[1]!), size: statSync(path.join(dir, name)).size });
    } catch {
      // Deleted by local retention between readdir and stat.
    }
  }
  return out.sort((a, b) => (a.baseOffset < b.baseOffset ? -1 : 1));
}

/** Files the broker has written for a topic under its remote directory. */
function remoteFileCount(peer: Peer, topic: string): number {
  if (!existsSync(peer.remoteRoot)) return 0;
  let n = 0;
  const walk = (dir: string, depth: number): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.isDirectory() && depth < 3) walk(path.join(dir, e.name), depth + 1);
      else if (e.isFile()) n++;
    }
  };
  for (const e of readdirSync(peer.remoteRoot, { withFileTypes: true })) {
    if (e.isDirectory() && e.name.startsWith(`${topic}-`)) walk(path.join(peer.remoteRoot, e.name), 1);
  }
  return n;
}

/** ListOffsets -5 (latest tiered, KIP-1005) per partition: -1 while nothing is tiered. */
async function tieredOffsets(admin: AdminClient, topic: string, partitions: number): Promise<bigint[]> {
  const answers = await admin.listOffsets(Array.from({ length: partitions }, (_, partition) => ({ topic, partition, timestamp: -5n })));
  return Array.from({ length: partitions }, (_, p) => {
    const a = answers.find((x) => x.partition === p);
    if (a === undefined || a.errorCode !== 0) throw new Error(`ListOffsets -5 ${topic}-${p}: ${a === undefined ? 'no answer' : `error ${a.errorCode}`}`);
    return a.offset;
  });
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Polls `check` every `everyMs` (tiering and local deletion announce themselves to no client). */
async function waitUntil(what: string, timeoutMs: number, everyMs: number, check: () => Promise<boolean> | boolean): Promise<number> {
  const t0 = performance.now();
  while (!(await check())) {
    if (performance.now() - t0 > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
  return performance.now();
}

/** CPU milliseconds (user + system) the process has used so far. */
const cpuMs = (pid: number): number => cpuTimes(pid).other;

// ---- load ----

/** kcat -P into one partition: `bytes` of random 12 KiB records, at `mibPerSec` when given (else as fast as kcat takes them). */
async function produce(bootstrap: string, topic: string, partition: number, bytes: number, mibPerSec?: number): Promise<{ bytes: number; ms: number }> {
  const args = ['-P', '-b', bootstrap, '-t', topic, '-p', String(partition), '-X', 'linger.ms=20', '-X', 'batch.size=1000000', '-X', 'queue.buffering.max.kbytes=131072'];
  const child = spawn(kcatPath, args, { stdio: ['pipe', 'ignore', 'pipe'] });
  const stderr: Buffer[] = [];
  child.stderr.on('data', (b: Buffer) => stderr.push(b));
  const done = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const t0 = performance.now();
  let written = 0;
  while (written < bytes) {
    if (mibPerSec !== undefined) {
      // Paced: never ahead of the rate; a tick of 16 records at a time.
      const due = ((performance.now() - t0) / 1000) * mibPerSec * MiB;
      if (written >= due) {
        await sleep(Math.max(1, ((written - due) / (mibPerSec * MiB)) * 1000));
        continue;
      }
    }
    const lines: string[] = [];
    for (let k = 0; k < 16; k++) lines.push(randomBytes((RECORD_BYTES * 3) / 4).toString('base64').slice(0, RECORD_BYTES));
    const chunk = lines.join('\n') + '\n';
    written += chunk.length;
    if (!child.stdin.write(chunk)) await new Promise<void>((r) => child.stdin.once('drain', () => r()));
  }
  child.stdin.end();
  const code = await done;
  if (code !== 0) throw new Error(`kcat -P ${topic}-${partition} exited ${code}: ${Buffer.concat(stderr).toString('utf8').slice(-2000)}`);
  return { bytes: written, ms: performance.now() - t0 };
}

/** One kcat consumer per partition from offset 0 for counts[p] records, all at once; resolves with the wall time. */
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
            else reject(new Error(`kcat -C ${topic}-${p}: exit ${code}, ${lines} of ${n} records: ${Buffer.concat(stderr).toString('utf8').slice(-2000)}`));
          });
        }),
    ),
  );
  return performance.now() - started;
}

// ---- the phases ----

interface Upload {
  readonly partitions: number;
  readonly bytes: number;
  /** Config change to the first remote file: scheduling, not upload speed. */
  readonly startDelayMs: number;
  /** First remote file to the last closed segment tiered. */
  readonly ms: number;
  readonly cpuMs: number;
  /** Per partition: records below the active segment, all of them tiered. */
  readonly tieredCounts: bigint[];
  /** Epoch ms: the idle window before the config change (empty without a probe), and first remote file to last tiered. */
  readonly idle: Window;
  readonly active: Window;
}

/** [from, to) in epoch milliseconds, comparable with the probe's sample times. */
interface Window {
  readonly from: number;
  readonly to: number;
}

interface Steady {
  readonly mibPerSec: number;
  readonly samples: number;
  readonly meanLagBytes: number;
  readonly maxLagBytes: number;
  /** Per segment: from its roll (a newer segment seen) to -5 covering it. */
  readonly rollToTieredMs: number[];
  /** From the end of the produce to the last closed segment tiered. */
  readonly drainMs: number;
}

interface ColdRead {
  readonly partitions: number;
  readonly bytes: number;
  readonly ms: number;
  readonly cpuMs: number;
  readonly active: Window;
}

/** The probe's sends idle and while the uploads (A and B) and the cold reads (D) ran; null without a probe. */
export interface PeerLatency {
  readonly idleBeforeUpload: WindowStats | null;
  readonly upload: WindowStats | null;
  readonly idleBeforeCold: WindowStats | null;
  readonly cold: WindowStats | null;
  readonly errors: number;
}

export interface PeerRound {
  readonly broker: BrokerName;
  readonly round: number;
  readonly upload6: Upload;
  readonly upload1: Upload;
  readonly steady: Steady;
  readonly cold1: ColdRead;
  readonly cold6: ColdRead;
  readonly latency: PeerLatency | null;
  readonly loadBefore: number;
  readonly loadAfter: number;
}

function tieredTopicConfigs(o: PeerOptions, copy: boolean): Map<string, string> {
  return new Map([
    ['remote.storage.enable', 'true'],
    ['segment.bytes', String(o.segmentMb * MiB)],
    ['retention.ms', '-1'],
    // Kafka: with copying disabled local.retention.ms must equal retention.ms.
    ['local.retention.ms', copy ? '1000' : '-1'],
    ['remote.log.copy.disable', String(!copy)],
  ]);
}

async function withAdmin<T>(peer: Peer, fn: (admin: AdminClient) => Promise<T>): Promise<T> {
  const admin = await AdminClient.connect(peer.bootstrap, { clientId: 'tiering-peer-bench' });
  try {
    return await fn(admin);
  } finally {
    admin.close();
  }
}

async function createTopic(admin: AdminClient, name: string, partitions: number, configs: Map<string, string>): Promise<void> {
  const [r] = await admin.createTopics([{ name, numPartitions: partitions, replicationFactor: 1, configs }]);
  if (r === undefined || r.errorCode !== 0) throw new Error(`creating ${name}: error ${r?.errorCode} ${r?.errorMessage ?? ''}`);
  // A new topic's leaders show up in Metadata shortly after CreateTopics answers.
  await waitUntil(`leaders of ${name}`, 30_000, 100, async () => {
    const answers = await admin.listOffsets(Array.from({ length: partitions }, (_, partition) => ({ topic: name, partition, timestamp: -1n })));
    return answers.length === partitions && answers.every((a) => a.errorCode === 0);
  });
}

/** Waits until no closed segment is left on local disk (local.retention.ms=1000 and every one tiered). */
async function waitLocalDeletion(peer: Peer, topic: string, partitions: number): Promise<void> {
  await waitUntil(`local deletion of ${topic}'s tiered segments on ${peer.name}`, 180_000, 200, () =>
    Array.from({ length: partitions }, (_, p) => localSegments(peer, topic, p).length <= 1).every(Boolean),
  );
}

/** Fills a copy-disabled topic, then turns copying on and times the upload. */
async function uploadPhase(peer: Peer, o: PeerOptions, topic: string, partitions: number, mbPerPartition: number): Promise<Upload> {
  return withAdmin(peer, async (admin) => {
    await createTopic(admin, topic, partitions, tieredTopicConfigs(o, false));
    await Promise.all(Array.from({ length: partitions }, (_, p) => produce(peer.bootstrap, topic, p, mbPerPartition * MiB)));
    const segs = Array.from({ length: partitions }, (_, p) => localSegments(peer, topic, p));
    const bytes = segs.reduce((n, list) => n + list.slice(0, -1).reduce((m, s) => m + s.size, 0), 0);
    const tieredCounts = segs.map((list) => list.at(-1)?.baseOffset ?? 0n);
    if (tieredCounts.some((c) => c === 0n)) throw new Error(`${topic} on ${peer.name}: a partition has no closed segment (raise the MiB per partition over the segment size)`);
    if ((await tieredOffsets(admin, topic, partitions)).some((t) => t !== -1n)) throw new Error(`${topic} on ${peer.name}: tiered before copying was enabled`);
    const idleFrom = epochNow();
    if (o.latencyRate > 0) await sleep(o.latencyIdleMs);
    const idle = { from: idleFrom, to: epochNow() };
    const changed = performance.now();
    const r = await admin.incrementalAlterTopicConfigs(topic, [
      { name: 'remote.log.copy.disable', op: 'set', value: 'false' },
      { name: 'local.retention.ms', op: 'set', value: '1000' },
    ]);
    if (r.errorCode !== 0) throw new Error(`enabling copy on ${topic} (${peer.name}): error ${r.errorCode} ${r.errorMessage ?? ''}`);
    const cpu0 = cpuMs(peer.pid);
    const first = await waitUntil(`the first remote file of ${topic} on ${peer.name}`, 120_000, 20, () => remoteFileCount(peer, topic) > 0);
    const activeFrom = epochNow();
    const last = await waitUntil(`${topic} tiered on ${peer.name}`, 600_000, 50, async () => {
      const t = await tieredOffsets(admin, topic, partitions);
      // >=: Kafka's local retention rolls an idle active segment once its records are past
      // local.retention.ms and tiers it too; that later segment is not part of the window.
      return t.every((off, p) => off >= (tieredCounts[p] ?? 0n) - 1n);
    });
    const cpu = cpuMs(peer.pid) - cpu0;
    const active = { from: activeFrom, to: epochNow() };
    await waitLocalDeletion(peer, topic, partitions);
    return { partitions, bytes, startDelayMs: first - changed, ms: last - first, cpuMs: cpu, tieredCounts, idle, active };
  });
}

/** A paced producer into a tiered topic, its copy lag sampled every 250 ms. */
async function steadyPhase(peer: Peer, o: PeerOptions, topic: string): Promise<Steady> {
  return withAdmin(peer, async (admin) => {
    await createTopic(admin, topic, 1, tieredTopicConfigs(o, true));
    const closedAt = new Map<bigint, number>();
    const tieredAt = new Map<bigint, number>();
    const sizes = new Map<bigint, number>();
    const lags: number[] = [];
    let producing = true;
    const sample = async (): Promise<number> => {
      const segs = localSegments(peer, topic, 0);
      const [tiered = -1n] = await tieredOffsets(admin, topic, 1);
      const now = performance.now();
      let lag = 0;
      for (const [i, s] of segs.entries()) {
        const next = segs[i + 1];
        if (next === undefined) continue; // the active segment is never uploaded
        sizes.set(s.baseOffset, s.size);
        if (!closedAt.has(s.baseOffset)) closedAt.set(s.baseOffset, now);
        if (tiered >= next.baseOffset - 1n) {
          if (!tieredAt.has(s.baseOffset)) tieredAt.set(s.baseOffset, now);
        } else lag += s.size;
      }
      // Segments deleted locally between samples were tiered first (local retention waits for it).
      for (const base of closedAt.keys()) if (!tieredAt.has(base) && !segs.some((s) => s.baseOffset === base)) tieredAt.set(base, now);
      return lag;
    };
    const sampler = (async () => {
      while (producing) {
        lags.push(await sample());
        await sleep(250);
      }
    })();
    const p = await produce(peer.bootstrap, topic, 0, o.steadyMbPerSec * o.steadySeconds * MiB, o.steadyMbPerSec);
    producing = false;
    await sampler;
    const ended = performance.now();
    const drained = await waitUntil(`${topic} drained on ${peer.name}`, 300_000, 250, async () => (await sample()) === 0);
    const rollToTieredMs = [...closedAt].flatMap(([base, t]) => {
      const done = tieredAt.get(base);
      return done === undefined ? [] : [done - t];
    });
    return {
      mibPerSec: p.bytes / MiB / (p.ms / 1000),
      samples: lags.length,
      meanLagBytes: lags.reduce((a, b) => a + b, 0) / Math.max(1, lags.length),
      maxLagBytes: Math.max(0, ...lags),
      rollToTieredMs,
      drainMs: drained - ended,
    };
  });
}

async function coldRead(peer: Peer, topic: string, counts: readonly bigint[], bytes: number): Promise<ColdRead> {
  const cpu0 = cpuMs(peer.pid);
  const from = epochNow();
  const ms = await consume(peer.bootstrap, topic, counts);
  return { partitions: counts.length, bytes, ms, cpuMs: cpuMs(peer.pid) - cpu0, active: { from, to: epochNow() } };
}

/** The sends that started in any of the windows. */
function inWindows(samples: readonly LatencySample[], windows: readonly Window[]): WindowStats | null {
  const picked = samples.filter((s) => windows.some((w) => s.at >= w.from && s.at < w.to));
  return windowStats(picked, -Infinity, Infinity);
}

/** The probe against the peer, or nothing when the options turn it off. */
async function probeIf(peer: Peer, o: PeerOptions, topic: string): Promise<LatencyProbe | null> {
  return o.latencyRate > 0 ? startProbe(peer.bootstrap, topic, o.latencyRate) : null;
}

async function brokerRound(peer: Peer, o: PeerOptions, round: number): Promise<PeerRound> {
  const loadBefore = os.loadavg()[0] ?? 0;
  const prefix = `peer-r${round}`;
  const probeTopic = `${prefix}-probe`;
  if (o.latencyRate > 0) await withAdmin(peer, (admin) => createTopic(admin, probeTopic, 1, new Map()));
  const uploadProbe = await probeIf(peer, o, probeTopic);
  const upload6 = await uploadPhase(peer, o, `${prefix}-six`, 6, o.sixMbPerPartition);
  const upload1 = await uploadPhase(peer, o, `${prefix}-one`, 1, o.backlogMb);
  const uploadSends = await uploadProbe?.stop();
  const steady = await steadyPhase(peer, o, `${prefix}-steady`);
  // Cold: a restarted broker, every record of both topics remote only.
  await peer.restart();
  await withAdmin(peer, async (admin) => {
    await waitUntil(`${peer.name}'s remote metadata after the restart`, 120_000, 200, async () => {
      const six = await tieredOffsets(admin, `${prefix}-six`, 6).catch(() => null);
      const one = await tieredOffsets(admin, `${prefix}-one`, 1).catch(() => null);
      return six !== null && one !== null && six.every((t, p) => t >= (upload6.tieredCounts[p] ?? 0n) - 1n) && (one[0] ?? -1n) >= (upload1.tieredCounts[0] ?? 0n) - 1n;
    });
  });
  const coldProbe = await probeIf(peer, o, probeTopic);
  const idleFrom = epochNow();
  if (coldProbe !== null) await sleep(o.latencyIdleMs);
  const idleBeforeCold = { from: idleFrom, to: epochNow() };
  const cold1 = await coldRead(peer, `${prefix}-one`, upload1.tieredCounts, upload1.bytes);
  const cold6 = await coldRead(peer, `${prefix}-six`, upload6.tieredCounts, upload6.bytes);
  const coldSends = await coldProbe?.stop();
  const latency: PeerLatency | null =
    uploadSends === undefined || coldSends === undefined
      ? null
      : {
          // The idle windows before both uploads together: as many sends as the goal's idle window has.
          idleBeforeUpload: inWindows(uploadSends.samples, [upload6.idle, upload1.idle]),
          upload: inWindows(uploadSends.samples, [upload6.active, upload1.active]),
          idleBeforeCold: inWindows(coldSends.samples, [idleBeforeCold]),
          cold: inWindows(coldSends.samples, [cold1.active, cold6.active]),
          errors: uploadSends.errors + coldSends.errors,
        };
  const r: PeerRound = { broker: peer.name, round, upload6, upload1, steady, cold1, cold6, latency, loadBefore, loadAfter: os.loadavg()[0] ?? 0 };
  const rate = (bytes: number, ms: number): string => (bytes / MiB / (ms / 1000)).toFixed(0);
  console.log(
    `peer round ${round} ${peer.name}: upload 6p ${rate(upload6.bytes, upload6.ms)} / 1p ${rate(upload1.bytes, upload1.ms)} MiB/s (start delays ${upload6.startDelayMs.toFixed(0)}, ${upload1.startDelayMs.toFixed(0)} ms); ` +
      `steady ${steady.mibPerSec.toFixed(1)} MiB/s: copy lag mean ${(steady.meanLagBytes / MiB).toFixed(1)} / max ${(steady.maxLagBytes / MiB).toFixed(1)} MiB, roll-to-tiered median ${(median(steady.rollToTieredMs) / 1000).toFixed(1)} s; ` +
      `cold read 1p ${rate(cold1.bytes, cold1.ms)} / 6p ${rate(cold6.bytes, cold6.ms)} MiB/s; load ${r.loadBefore.toFixed(1)} -> ${r.loadAfter.toFixed(1)}` +
      (latency === null
        ? ''
        : `; produce idle ${formatWindow(latency.idleBeforeUpload)}, during the uploads ${formatWindow(latency.upload)}; ` +
          `idle ${formatWindow(latency.idleBeforeCold)}, during the cold reads ${formatWindow(latency.cold)}; ${latency.errors} failed sends`),
  );
  return r;
}

export interface PeerResults {
  readonly options: PeerOptions;
  readonly rounds: PeerRound[];
}

/** Both brokers side by side, one after the other in each round (alternating who goes first). */
export async function runKafkaPeer(o: PeerOptions): Promise<PeerResults> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sediment-tiering-peer-'));
  const peers: Peer[] = [];
  try {
    peers.push(await startSedimentPeer(dir, o));
    peers.push(await startKafkaPeer(dir));
    const rounds: PeerRound[] = [];
    for (let r = 0; r < o.rounds; r++) {
      const order = r % 2 === 0 ? peers : [...peers].reverse();
      for (const peer of order) rounds.push(await brokerRound(peer, o, r));
    }
    return { options: o, rounds };
  } finally {
    for (const p of peers) await p.close().catch((e: unknown) => console.error(`closing ${p.name}: ${String(e)}`));
    rmSync(dir, { recursive: true, force: true });
  }
}

// ---- the report ----

export function median(values: readonly number[]): number {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
}

/** One round's probe figures: uploads, then cold reads, each idle -> during (p99 / p50 ms, failed sends). */
function latencyFigures(r: PeerRound): string {
  const l = r.latency;
  if (l === null) return 'no probe';
  const w = (x: WindowStats | null): string => (x === null ? 'no sends' : `${x.p99.toFixed(1)} / ${x.p50.toFixed(1)}`);
  return `uploads ${w(l.idleBeforeUpload)} -> ${w(l.upload)}, cold ${w(l.idleBeforeCold)} -> ${w(l.cold)}${l.errors > 0 ? `, ${l.errors} failed sends` : ''}`;
}

/** Ratios that move by more than this between rounds are called unstable, not met or missed. */
const STABLE = 0.1;

export function peerReport(res: PeerResults, commit: string): string {
  const o = res.options;
  const of = (b: BrokerName): PeerRound[] => res.rounds.filter((r) => r.broker === b).sort((x, y) => x.round - y.round);
  const sed = of('sediment');
  const kaf = of('kafka');
  const mibs = (bytes: number, ms: number): number => bytes / MiB / (ms / 1000);
  const cpuPerMib = (cpu: number, bytes: number): number => cpu / (bytes / MiB);
  const fmt = (v: number, digits = 0): string => (Number.isFinite(v) ? v.toFixed(digits) : 'n/a');
  const row = (label: string, f: (r: PeerRound) => number, higherIsBetter: boolean, digits = 0): string => {
    const s = sed.map(f);
    const k = kaf.map(f);
    const ratios = s.map((v, i) => v / (k[i] ?? NaN));
    const med = median(ratios);
    const lo = Math.min(...ratios);
    const hi = Math.max(...ratios);
    const unstable = ratios.length > 1 && (hi > med * (1 + STABLE) || lo < med * (1 - STABLE));
    const goal = higherIsBetter ? med >= 1 : med <= 1;
    const verdict = unstable ? `spread ${fmt(lo, 2)}-${fmt(hi, 2)} exceeds ±${STABLE * 100}%: not called` : `${goal ? 'Sediment ahead or level' : 'Sediment behind'} (${higherIsBetter ? 'higher' : 'lower'} is better)`;
    return `| ${label} | ${fmt(median(s), digits)} (${s.map((v) => fmt(v, digits)).join(', ')}) | ${fmt(median(k), digits)} (${k.map((v) => fmt(v, digits)).join(', ')}) | **${fmt(med, 2)}x** (${ratios.map((v) => fmt(v, 2)).join(', ')}) | ${verdict} |`;
  };
  const loads = res.rounds.flatMap((r) => [r.loadBefore, r.loadAfter]);
  const lines = [
    `Run on ${new Date().toISOString().slice(0, 10)} at commit ${commit}: ${os.cpus().length} CPUs (${os.cpus()[0]?.model.trim() ?? 'unknown'}), load average (1 min) ${fmt(Math.min(...loads), 1)}-${fmt(Math.max(...loads), 1)} over the run, Node ${process.version}.`,
    `Apache Kafka ${kafkaVersion()} (KRaft, one JVM, -Xmx1G) with TopicBasedRemoteLogMetadataManager and LocalTieredStorage (kafka-storage ${kafkaVersion()} test jar), against \`sediment start\` with its file:// store (rsm.config.fs.fsync=${o.fsync}; LocalTieredStorage never fsyncs), both remote directories and log dirs in one directory of the same disk; ` +
      `remote.log.manager.task.interval.ms=${TASK_INTERVAL_MS} on both; ${o.segmentMb} MiB segments; kcat (librdkafka) as the only client; random ${RECORD_BYTES / 1024} KiB records; ${o.rounds} rounds, the brokers in alternating order; medians, per-round values in brackets.`,
    `Data per round and broker: upload 6 partitions x ${o.sixMbPerPartition} MiB (${fmt((sed[0]?.upload6.bytes ?? 0) / MiB, 1)} MiB in closed segments), upload 1 partition x ${o.backlogMb} MiB (${fmt((sed[0]?.upload1.bytes ?? 0) / MiB, 1)} MiB), steady produce ${o.steadyMbPerSec} MiB/s for ${o.steadySeconds} s.`,
    '',
    '| measure | Sediment | Kafka | Sediment/Kafka | |',
    '| --- | ---: | ---: | ---: | --- |',
    row('upload, 6 partitions at once (MiB/s: closed-segment bytes from the first remote file to -5 covering every segment)', (r) => mibs(r.upload6.bytes, r.upload6.ms), true),
    row('upload, 1 partition (MiB/s)', (r) => mibs(r.upload1.bytes, r.upload1.ms), true),
    row('broker CPU per MiB uploaded, both upload phases (ms)', (r) => cpuPerMib(r.upload6.cpuMs + r.upload1.cpuMs, r.upload6.bytes + r.upload1.bytes), false, 2),
    row('steady produce: mean copy lag (MiB of closed segments not yet tiered)', (r) => r.steady.meanLagBytes / MiB, false, 1),
    row('steady produce: max copy lag (MiB)', (r) => r.steady.maxLagBytes / MiB, false, 1),
    row('steady produce: segment roll to tiered, median (s)', (r) => median(r.steady.rollToTieredMs) / 1000, false, 2),
    row('cold read, 1 partition from offset 0, restarted broker (MiB/s)', (r) => mibs(r.cold1.bytes, r.cold1.ms), true),
    row('cold read, 6 partitions at once (MiB/s)', (r) => mibs(r.cold6.bytes, r.cold6.ms), true),
    row('broker CPU per MiB read cold, both reads (ms)', (r) => cpuPerMib(r.cold1.cpuMs + r.cold6.cpuMs, r.cold1.bytes + r.cold6.bytes), false, 2),
    ...(o.latencyRate > 0
      ? [
          row('produce p99 during the uploads over the same probe idle (x; the issue\'s goal: 1.5)', (r) => p99Ratio(r.latency?.idleBeforeUpload ?? null, r.latency?.upload ?? null) ?? NaN, false, 2),
          row('produce p99 during the cold reads over idle (x)', (r) => p99Ratio(r.latency?.idleBeforeCold ?? null, r.latency?.cold ?? null) ?? NaN, false, 2),
          row('produce p99 during the uploads (ms)', (r) => r.latency?.upload?.p99 ?? NaN, false, 1),
          row('produce p99 during the cold reads (ms; each broker just restarted)', (r) => r.latency?.cold?.p99 ?? NaN, false, 1),
        ]
      : []),
    '',
    `Config change to the first remote file (scheduling and config propagation, left out of the upload windows), 6p / 1p per round: Sediment ${sed.map((r) => `${fmt(r.upload6.startDelayMs)} / ${fmt(r.upload1.startDelayMs)} ms`).join('; ')}; Kafka ${kaf.map((r) => `${fmt(r.upload6.startDelayMs)} / ${fmt(r.upload1.startDelayMs)} ms`).join('; ')}.`,
    ...(o.latencyRate > 0
      ? [
          `Produce latency: a paced producer in its own process (kafkajs, one 1 KiB record per request, acks=all, ${o.latencyRate} sends/s) into a one-partition topic without remote storage on the broker under test; p99 / p50 in ms, idle (${(o.latencyIdleMs / 1000).toFixed(0)} s before each upload, and before the cold reads) -> during, per round: ` +
            `Sediment ${sed.map(latencyFigures).join('; ')}; Kafka ${kaf.map(latencyFigures).join('; ')}.`,
        ]
      : []),
    `Steady produce rate reached: Sediment ${sed.map((r) => fmt(r.steady.mibPerSec, 1)).join(', ')} MiB/s; Kafka ${kaf.map((r) => fmt(r.steady.mibPerSec, 1)).join(', ')} MiB/s; after the produce, the last closed segment was tiered within ${sed.map((r) => fmt(r.steady.drainMs / 1000, 1)).join(', ')} s (Sediment) and ${kaf.map((r) => fmt(r.steady.drainMs / 1000, 1)).join(', ')} s (Kafka); roll-to-tiered max ${sed.map((r) => fmt(Math.max(...r.steady.rollToTieredMs) / 1000, 1)).join(', ')} s (Sediment), ${kaf.map((r) => fmt(Math.max(...r.steady.rollToTieredMs) / 1000, 1)).join(', ')} s (Kafka).`,
  ];
  return lines.join('\n');
}
