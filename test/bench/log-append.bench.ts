// The broker's produce path below the network: PartitionLog.append of client
// batches (1 KiB records, `--records-per-batch` per batch, as a ProducerPerformance
// batch of batch.size=64 KiB holds them) into `--partitions` fresh partitions,
// `--inflight` appends outstanding per partition (Produce pipelining groups
// them), then a clean close. Measures the CPU of this process (every thread,
// so the libuv threadpool's file writes count) per MiB appended, and MiB/s.
//
//   node dist/test/bench/log-append.bench.js [--mib N] [--rounds N] [--partitions N]
//        [--inflight N] [--records-per-batch N] [--against OTHER_DIST_DIR]
//
// --against loads a second build's broker/log (e.g. `dist-before`, compiled
// from another commit) and alternates rounds between the two in this one
// process, so both see the same machine load; each figure is the median of
// the rounds with the min-max spread.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { spread } from './perf-output.js';

type PartitionLogModule = typeof import('../../broker/log/partition-log.js');
type LogConfigModule = typeof import('../../metadata/log-config.js');
type RecordBatchModule = typeof import('../../broker/protocol/record-batch.js');

interface Build {
  name: string;
  partitionLog: PartitionLogModule;
  logConfig: LogConfigModule;
}

interface Options {
  mib: number;
  rounds: number;
  partitions: number;
  inflight: number;
  recordsPerBatch: number;
  against: string | null;
}

const RECORD_SIZE = 1024;

function usage(msg: string): never {
  console.error(`log-append.bench: ${msg}`);
  console.error('usage: node dist/test/bench/log-append.bench.js [--mib N] [--rounds N] [--partitions N] [--inflight N] [--records-per-batch N] [--against DIST_DIR]');
  process.exit(2);
}

function parseArgs(argv: readonly string[]): Options {
  const o: Options = { mib: 512, rounds: 4, partitions: 6, inflight: 5, recordsPerBatch: 48, against: null };
  const num = (flag: string, v: string | undefined): number => {
    const n = Number(v);
    if (v === undefined || !Number.isInteger(n) || n <= 0) usage(`${flag} needs a positive integer`);
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    switch (a) {
      case '--mib': o.mib = num(a, argv[++i]); break;
      case '--rounds': o.rounds = num(a, argv[++i]); break;
      case '--partitions': o.partitions = num(a, argv[++i]); break;
      case '--inflight': o.inflight = num(a, argv[++i]); break;
      case '--records-per-batch': o.recordsPerBatch = num(a, argv[++i]); break;
      case '--against': o.against = argv[++i] ?? usage('--against needs a directory'); break;
      default: usage(`unknown argument ${a}`);
    }
  }
  return o;
}

/** The build this file was compiled into: its dist/ root. */
function ownDist(): string {
  return path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
}

async function loadBuild(dist: string): Promise<Build> {
  const load = async <T>(rel: string): Promise<T> => (await import(pathToFileURL(path.join(dist, rel)).href)) as T;
  return {
    name: path.basename(dist),
    partitionLog: await load<PartitionLogModule>('broker/log/partition-log.js'),
    logConfig: await load<LogConfigModule>('metadata/log-config.js'),
  };
}

/** Random upper-case payloads, like ProducerPerformance's. */
function template(rb: RecordBatchModule, records: number): Buffer {
  const value = (): Buffer => {
    const b = Buffer.allocUnsafe(RECORD_SIZE);
    for (let i = 0; i < b.length; i++) b[i] = 65 + Math.floor(Math.random() * 26);
    return b;
  };
  return rb.buildRecordBatch({ records: Array.from({ length: records }, () => ({ key: null, value: value(), timestamp: Date.now() })) });
}

interface RoundResult {
  cpuMsPerMiB: number;
  mibPerSec: number;
}

async function round(build: Build, o: Options, batch: Buffer): Promise<RoundResult> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'sediment-log-append-'));
  try {
    const logs = [];
    for (let p = 0; p < o.partitions; p++) {
      logs.push(
        await build.partitionLog.PartitionLog.open({
          dir: path.join(dir, `bench-${p}`),
          topic: 'bench',
          partition: p,
          topicId: 'AAAAAAAAAAAAAAAAAAAAAA',
          config: build.logConfig.logConfig(),
          clock: { now: () => Date.now() },
        }),
      );
    }
    const perPartition = Math.ceil((o.mib * 1048576) / (batch.length * o.partitions));
    const appended = perPartition * o.partitions * batch.length;
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await Promise.all(
      logs.map(async (log) => {
        let sent = 0;
        const lane = async (): Promise<void> => {
          while (sent < perPartition) {
            sent++;
            // A fresh copy per append, as each Produce request brings its own bytes.
            await log.append(Buffer.from(batch), { leaderEpoch: 0, isFromClient: true });
          }
        };
        await Promise.all(Array.from({ length: o.inflight }, lane));
      }),
    );
    for (const log of logs) await log.close();
    const seconds = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    const mib = appended / 1048576;
    return { cpuMsPerMiB: (cpu.user + cpu.system) / 1000 / mib, mibPerSec: mib / seconds };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const o = parseArgs(process.argv.slice(2));
  const own = await loadBuild(ownDist());
  const builds = [own];
  if (o.against !== null) builds.unshift(await loadBuild(path.resolve(o.against)));
  const rb = (await import(pathToFileURL(path.join(ownDist(), 'broker/protocol/record-batch.js')).href)) as RecordBatchModule;
  const batch = template(rb, o.recordsPerBatch);
  console.log(`${o.mib} MiB per round into ${o.partitions} partitions, ${batch.length}-byte batches (${o.recordsPerBatch} x ${RECORD_SIZE} B records), ${o.inflight} appends in flight per partition; load average ${os.loadavg().map((l) => l.toFixed(2)).join(' / ')}`);
  // One unmeasured round each: JIT and page cache.
  for (const b of builds) await round(b, { ...o, mib: Math.max(32, Math.round(o.mib / 4)) }, batch);
  const results = new Map<string, RoundResult[]>(builds.map((b) => [b.name, []]));
  for (let r = 1; r <= o.rounds; r++) {
    for (const b of r % 2 === 1 ? builds : [...builds].reverse()) {
      const res = await round(b, o, batch);
      results.get(b.name)?.push(res);
      console.log(`round ${r} ${b.name.padEnd(12)} ${res.mibPerSec.toFixed(1).padStart(7)} MiB/s  ${res.cpuMsPerMiB.toFixed(2).padStart(6)} ms CPU/MiB`);
    }
  }
  for (const b of builds) {
    const rs = results.get(b.name) ?? [];
    const f = (v: { median: number; min: number; max: number }, d: number): string => `${v.median.toFixed(d)} (${v.min.toFixed(d)}-${v.max.toFixed(d)})`;
    console.log(`${b.name.padEnd(12)} median (min-max) of ${rs.length}: ${f(spread(rs.map((x) => x.mibPerSec)), 1)} MiB/s, ${f(spread(rs.map((x) => x.cpuMsPerMiB)), 2)} ms CPU/MiB`);
  }
  console.log(`load average at end ${os.loadavg().map((l) => l.toFixed(2)).join(' / ')}`);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : err);
  process.exit(1);
});
