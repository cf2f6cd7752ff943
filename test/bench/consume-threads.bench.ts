// `node dist/test/bench/consume-threads.bench.js [--rounds N] [--records N] [--idle-seconds S] [--kafka] [--perf]`
//
// Where a consume's broker CPU goes, thread by thread (issue 16). One Sediment
// process (as the produce-consume bench starts it) replays that bench's
// throughput phase: an unmeasured warm-up, then per round a peak produce of
// each workload and a consume of the none and lz4 acks=1 topics. For every
// consume it prints the process's CPU per MiB, the main thread's CPU and the
// other threads' (V8's helpers, the libuv pool, workers), each thread named by
// its task id less the process id (node names them all "node"; threads are
// created in a fixed order, so the same offset is the same thread across runs
// of one Node version), from /proc/<pid>/task/*/schedstat. Then the idle CPU
// per second of the broker (and, with --kafka, of Kafka 4.3.1 as that bench
// starts it) over --idle-seconds, three times: the share of a consume window
// that is no transfer at all.
//
// With --perf (Linux perf on the PATH, allowed to attach to the broker), each
// measured consume is also sampled with `perf record -F 4000 -p <pid>` (all
// threads), and its samples are split into the kernel's copy from the page
// cache into the read buffer (`_copy_to_iter`: the pread), its copy from the
// buffer into socket memory (`_copy_from_iter`: the writev), the rest of the
// kernel, and user space (JavaScript, V8, libuv). Sampling at 4000 Hz costs
// the broker some CPU of its own, so the per-MiB figures of a --perf run run high.
import path from 'node:path';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { startKafka, startSediment, type BenchBroker } from './broker-processes.js';
import { perfCopySplit } from './perf-output.js';
import { threadCpu } from './thread-cpu.js';
import { BATCH_SIZE, consume, createTopics, LINGER_MS, produce, RECORD_SIZE, WORKLOADS, type Acks, type Compression } from './load.js';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const v = Number(process.argv[i + 1]);
  if (!Number.isFinite(v) || v <= 0) throw new Error(`--${name} needs a positive number`);
  return v;
}

const CODECS: readonly Compression[] = ['none', 'lz4'];

/** Starts `perf record` on every thread of `pid` into `file`; resolves once perf has attached. */
async function startPerf(pid: number, file: string): Promise<ChildProcess> {
  const perf = spawn('perf', ['record', '-F', '4000', '-p', String(pid), '-o', file], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  perf.stderr!.on('data', (b: Buffer) => (err += b.toString()));
  // perf prints nothing on attaching; a short wait lets it open its events before the consume starts.
  await new Promise((r) => setTimeout(r, 300));
  if (perf.exitCode !== null) throw new Error(`perf record exited ${perf.exitCode}: ${err}`);
  return perf;
}

async function stopPerf(perf: ChildProcess): Promise<void> {
  const exited = new Promise((r) => perf.once('exit', r));
  perf.kill('SIGINT');
  await exited;
}

async function idleRates(broker: BenchBroker, seconds: number): Promise<string> {
  const rates: string[] = [];
  for (let i = 0; i < 3; i++) {
    const before = broker.cpuSeconds();
    // The measurement is the passing of idle time itself.
    await new Promise((r) => setTimeout(r, seconds * 1000));
    rates.push(((broker.cpuSeconds() - before) * 1000 / seconds).toFixed(1));
  }
  return `${broker.name} idle: ${rates.join(', ')} ms of CPU per s (three windows of ${seconds} s)`;
}

async function main(): Promise<void> {
  const rounds = arg('rounds', 4);
  const records = arg('records', 150_000);
  const idleSeconds = arg('idle-seconds', 15);
  const mib = (records * RECORD_SIZE) / 1048576;
  const topic = (round: number, w: { compression: Compression; acks: Acks }): string => `replay-${round}-${w.compression}-${w.acks}`;
  const withPerf = process.argv.includes('--perf');
  const perfDir = withPerf ? mkdtempSync(path.join(os.tmpdir(), 'consume-perf-')) : '';
  const broker = await startSediment();
  try {
    const topics = Array.from({ length: rounds + 1 }, (_, r) => WORKLOADS.map((w) => topic(r, w))).flat();
    await createTopics(broker.bootstrap, topics);
    const load = async (round: number): Promise<void> => {
      for (const w of WORKLOADS) await produce(broker.bootstrap, { topic: topic(round, w), records, recordSize: RECORD_SIZE, throughput: -1, compression: w.compression, acks: w.acks, batchSize: BATCH_SIZE, lingerMs: LINGER_MS });
    };
    await load(0); // the warm-up, as the produce-consume bench's
    for (let i = 0; i < 3; i++) for (const c of CODECS) await consume(broker.bootstrap, topic(0, { compression: c, acks: '1' }), records);
    for (let round = 1; round <= rounds; round++) {
      await load(round);
      for (const c of CODECS) {
        const perfFile = withPerf ? path.join(perfDir, `${round}-${c}.data`) : '';
        const perf = withPerf ? await startPerf(broker.pid, perfFile) : undefined;
        const t0 = threadCpu(broker.pid);
        const cpu0 = broker.cpuSeconds();
        await consume(broker.bootstrap, topic(round, { compression: c, acks: '1' }), records);
        const total = (broker.cpuSeconds() - cpu0) * 1000;
        const t1 = threadCpu(broker.pid);
        const ms = [...t1].map(([tid, ns]) => [tid - broker.pid, (ns - (t0.get(tid) ?? 0)) / 1e6] as const);
        const main = ms.find(([off]) => off === 0)?.[1] ?? 0;
        const others = ms.filter(([off, d]) => off !== 0 && d >= 0.5).map(([off, d]) => `+${off} ${d.toFixed(0)}`).join(', ');
        console.log(`round ${round} consume ${c}: ${(total / mib).toFixed(2)} ms/MiB; ${total.toFixed(0)} ms: main thread ${main.toFixed(0)}, others ${(total - main).toFixed(0)} (${others})`);
        if (perf !== undefined) {
          await stopPerf(perf);
          const report = spawnSync('perf', ['report', '-i', perfFile, '--no-children', '--sort', 'sym', '--stdio'], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
          const [toIter, fromIter, kernel, user] = perfCopySplit(report.stdout ?? '');
          const share = (pct: number): string => ((total * pct) / 100).toFixed(0);
          console.log(`  perf: page cache -> buffer copy ${toIter.toFixed(1)}% (~${share(toIter)} ms), buffer -> socket copy ${fromIter.toFixed(1)}% (~${share(fromIter)} ms), other kernel ${kernel.toFixed(1)}% (~${share(kernel)} ms), user space ${user.toFixed(1)}% (~${share(user)} ms)`);
        }
      }
    }
    console.log(await idleRates(broker, idleSeconds));
  } finally {
    await broker.stop();
    if (withPerf) rmSync(perfDir, { recursive: true, force: true });
  }
  if (process.argv.includes('--kafka')) {
    const kafka = await startKafka();
    try {
      await createTopics(kafka.bootstrap, [topic(0, WORKLOADS[0]!)]);
      await warmUp(kafka, topic(0, WORKLOADS[0]!), records);
      console.log(await idleRates(kafka, idleSeconds));
    } finally {
      await kafka.stop();
    }
  }
}

/** Some traffic before Kafka's idle windows, so they do not measure its start-up. */
async function warmUp(broker: BenchBroker, topic: string, records: number): Promise<void> {
  await produce(broker.bootstrap, { topic, records, recordSize: RECORD_SIZE, throughput: -1, compression: 'none', acks: '1', batchSize: BATCH_SIZE, lingerMs: LINGER_MS });
  await consume(broker.bootstrap, topic, records);
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((e: unknown) => {
    console.error(e);
    process.exit(1);
  });
}
