// The two brokers under benchmark as child processes, behind one shape:
// Sediment (`node dist/broker/cli/sediment.js start`, optionally under
// `--cpu-prof`) and Apache Kafka (test/support/kafka-reference.ts), plus a
// sampler of each process's peak resident set size from /proc/<pid>/status.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { EVENT_LOOP_MONITORING_MS } from '../../broker/metrics/broker-metrics.js';
import { freePort, startKafkaReference, waitForKafka } from '../support/kafka-reference.js';
import { parseProcStatUserSystemTicks, parseProcStatusMemory, parsePromSample } from './perf-output.js';
import { readProcessCpuClock } from './process-cpu-clock.js';

export type BrokerName = 'sediment' | 'kafka';

export interface BenchBroker {
  readonly name: BrokerName;
  readonly bootstrap: string;
  readonly pid: number;
  /** Highest RSS seen so far: the kernel's VmHWM, or the highest sampled VmRSS. */
  peakRssBytes(): number;
  /** CPU time (user + system, all threads) the broker process has used so far. */
  cpuSeconds(): number;
  /**
   * Sediment only (null for Kafka): event-loop lag p99 and max in ms since the
   * previous call, from the broker's own metrics (prom-client resets the
   * histogram at every scrape).
   */
  eventLoopLagMs(): Promise<{ p99: number; max: number } | null>;
  /** Sediment only (null for Kafka): the broker's /metrics text. */
  metricsText(): Promise<string | null>;
  /** User and system CPU seconds apart (all threads). */
  cpuUserSystemSeconds(): { user: number; system: number };
  stop(): Promise<void>;
}

let clockTicks: number | undefined;

/** sysconf(_SC_CLK_TCK): the unit of /proc/<pid>/stat times (100 almost everywhere). */
function ticksPerSecond(): number {
  if (clockTicks === undefined) {
    const n = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout?.trim());
    clockTicks = Number.isFinite(n) && n > 0 ? n : 100;
  }
  return clockTicks;
}

/**
 * CPU time (user + system, all threads) the process has used so far: its CPU
 * clock to the nanosecond, or /proc/<pid>/stat's clock ticks where that clock
 * cannot be read.
 */
export function processCpuSeconds(pid: number): number {
  const precise = readProcessCpuClock(pid);
  if (precise !== null) return precise;
  const t = processUserSystemSeconds(pid);
  return t.user + t.system;
}

/** User and system CPU seconds of the process apart, from /proc/<pid>/stat. */
export function processUserSystemSeconds(pid: number): { user: number; system: number } {
  const t = parseProcStatUserSystemTicks(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  return { user: t.user / ticksPerSecond(), system: t.system / ticksPerSecond() };
}

/** Samples /proc/<pid>/status so a peak is known even if the process dies first. */
class RssSampler {
  private peak = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly pid: number, intervalMs = 500) {
    this.timer = setInterval(() => this.sample(), intervalMs);
    this.timer.unref();
  }

  sample(): number {
    try {
      const { rssBytes, hwmBytes } = parseProcStatusMemory(readFileSync(`/proc/${this.pid}/status`, 'utf8'));
      this.peak = Math.max(this.peak, rssBytes ?? 0, hwmBytes ?? 0);
    } catch {
      // The process is gone: keep the last peak.
    }
    return this.peak;
  }

  stop(): number {
    const p = this.sample();
    clearInterval(this.timer);
    return p;
  }
}

function waitExit(child: ChildProcess, timeoutMs: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), timeoutMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

export interface SedimentOptions {
  /** Directory for `--cpu-prof` output; no profiling when absent. */
  readonly cpuProfDir?: string;
  readonly overrides?: readonly string[];
  /** Work directory (log dir inside); a fresh temporary one, removed by stop(), when absent. */
  readonly dir?: string;
  /** SEDIMENT_LOG_LEVEL for the broker; default warn (SEDIMENT_BENCH_LOG_LEVEL overrides it). */
  readonly logLevel?: string;
  /** More environment for the broker process (over this process's own), such as SEDIMENT_HEAP_GROWING_PERCENT. */
  readonly env?: Readonly<Record<string, string>>;
}

/**
 * Starts Sediment on a fresh log dir (or options.dir, kept) with its default flush policy (no fsync per
 * message, like Kafka), log level warn, its metrics HTTP listener on a free port, and the same
 * group.initial.rebalance.delay.ms=0 the Kafka reference uses.
 */
export async function startSediment(options: SedimentOptions = {}): Promise<BenchBroker> {
  const dir = options.dir ?? mkdtempSync(path.join(os.tmpdir(), 'sediment-bench-'));
  const removeDir = (): void => {
    if (options.dir === undefined) rmSync(dir, { recursive: true, force: true });
  };
  // The broker compiled alongside this file (dist/ for npm run bench; another outDir for a scratch build).
  const cli = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'broker', 'cli', 'sediment.js');
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const httpPort = await freePort();
    const nodeFlags = options.cpuProfDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${options.cpuProfDir}`];
    const args = [
      ...nodeFlags,
      cli,
      'start',
      '--override', `log.dirs=${path.join(dir, 'data')}`,
      '--override', `listeners=PLAINTEXT://127.0.0.1:${port}`,
      '--override', `http.listeners=http://127.0.0.1:${httpPort}`,
      '--override', 'group.initial.rebalance.delay.ms=0',
      ...(options.overrides ?? []).flatMap((o) => ['--override', o]),
    ];
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...options.env, SEDIMENT_LOG_LEVEL: options.logLevel ?? process.env['SEDIMENT_BENCH_LOG_LEVEL'] ?? 'warn' } });
    const output: string[] = [];
    const keep = (b: Buffer): void => {
      output.push(b.toString('utf8'));
      if (output.length > 100) output.shift();
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const alive = (): string | null =>
      child.exitCode === null && child.signalCode === null ? null : `Sediment exited (${child.exitCode ?? child.signalCode}):\n${output.join('').slice(-3000)}`;
    try {
      await waitForKafka('127.0.0.1', port, 60_000, alive);
    } catch (err) {
      child.kill('SIGKILL');
      await waitExit(child, 10_000);
      // The free port may have been taken between probe and bind: one more try.
      if (attempt < 2 && output.join('').includes('EADDRINUSE')) continue;
      removeDir();
      throw err;
    }
    const pid = child.pid ?? -1;
    const rss = new RssSampler(pid);
    let peak = 0;
    let stopping = false;
    child.once('exit', (code, signal) => {
      if (stopping) return;
      // Exit code 0 without a stop: the SIGTERM/SIGINT handler's clean shutdown, i.e. some
      // other process signalled the broker (its listener keeps the event loop alive otherwise).
      const hint = code === 0 ? ' (a clean shutdown: something else sent SIGTERM/SIGINT)' : '';
      process.stderr.write(`Sediment (pid ${pid}) exited unexpectedly: ${code ?? signal}${hint}\n${output.join('').slice(-6000)}\n`);
    });
    return {
      name: 'sediment',
      bootstrap: `127.0.0.1:${port}`,
      pid,
      peakRssBytes: () => Math.max(peak, rss.sample()),
      cpuSeconds: () => processCpuSeconds(pid),
      cpuUserSystemSeconds: () => processUserSystemSeconds(pid),
      metricsText: async () => (await fetch(`http://127.0.0.1:${httpPort}/metrics`)).text(),
      eventLoopLagMs: async () => {
        const text = await (await fetch(`http://127.0.0.1:${httpPort}/metrics`)).text();
        const p99 = parsePromSample(text, 'nodejs_eventloop_lag_p99_seconds');
        const max = parsePromSample(text, 'nodejs_eventloop_lag_max_seconds');
        // The histogram's samples are whole timer intervals: how late the loop ran is the rest.
        return p99 === null || max === null ? null : { p99: Math.max(0, p99 * 1000 - EVENT_LOOP_MONITORING_MS), max: Math.max(0, max * 1000 - EVENT_LOOP_MONITORING_MS) };
      },
      stop: async () => {
        peak = rss.stop();
        stopping = true;
        child.kill('SIGTERM');
        if (!(await waitExit(child, 30_000))) {
          child.kill('SIGKILL');
          await waitExit(child, 10_000);
        }
        removeDir();
        if (child.exitCode !== 0) throw new Error(`Sediment did not shut down cleanly (${child.exitCode ?? child.signalCode}):\n${output.join('').slice(-3000)}`);
      },
    };
  }
}

/** kafka-server-start.sh's heap (-Xmx1G -Xms1G) and JVM flags; Kafka's default flush policy. */
export async function startKafka(): Promise<BenchBroker> {
  const k = await startKafkaReference({ heap: '1G' });
  const rss = new RssSampler(k.pid);
  let peak = 0;
  return {
    name: 'kafka',
    bootstrap: k.bootstrap,
    pid: k.pid,
    peakRssBytes: () => Math.max(peak, rss.sample()),
    cpuSeconds: () => processCpuSeconds(k.pid),
    cpuUserSystemSeconds: () => processUserSystemSeconds(k.pid),
    metricsText: () => Promise.resolve(null),
    eventLoopLagMs: () => Promise.resolve(null),
    stop: async () => {
      peak = rss.stop();
      await k.stop();
    },
  };
}
