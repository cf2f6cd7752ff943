// A Sediment broker for end-to-end tests, two ways:
//  - startSediment(): `sediment start` as a child process (so a test can SIGKILL
//    it), on a free loopback port read back from the "sediment broker started"
//    log line, over a temporary log dir; stop() is SIGTERM + wait, kill() is
//    `kill -9`, restart() starts again on the same dir and port.
//  - startSedimentInProcess(): Broker.start() in this process, faster to start,
//    for tests that never kill the broker.
// Both collect the broker's pino JSON lines in `logs` (bounded; every line at
// warn level or above is kept).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { Broker } from '../../broker/broker.js';
import { BrokerConfig } from '../../broker/config.js';
import type { ClusterMetadataStore } from '../../metadata/cluster/store.js';

const here = path.dirname(fileURLToPath(import.meta.url));
// The compiled CLI in the same build tree as this file (<out>/test/support -> <out>/broker/cli).
export const sedimentCli = path.join(here, '..', '..', 'broker', 'cli', 'sediment.js');

export const host = '127.0.0.1';

/** One pino line as the broker printed it. */
export interface LogLine {
  readonly level: number;
  readonly msg?: string;
  readonly [field: string]: unknown;
}

/** A frame ("    at f (file.js:1:2)"), Node's source excerpt marker, or an uncaught error's first line. */
const STACK_LINE = /^\s+at \S|^node:internal\/|^\s*\^+\s*$|^(Uncaught )?([A-Z][A-Za-z]*)?(Error|Exception)( \[[A-Z_]+\])?: |^\[UnhandledPromiseRejection|Uncaught exception|unhandled (promise )?rejection/i;

/** pino's numeric levels. */
export const LogLevel = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60 } as const;

/** Broker log lines, bounded: the most recent `limit` lines, plus every warn/error/fatal line. */
export class LogCollector {
  private recent: LogLine[] = [];
  readonly problems: LogLine[] = [];
  /** Raw output that was not a JSON line (stderr, stack traces). */
  readonly other: string[] = [];
  private partial = '';
  private waiters: Array<{ match: (l: LogLine) => boolean; resolve: (l: LogLine) => void }> = [];

  constructor(private readonly limit = 5000) {}

  /** Feeds raw stdout bytes (newline-separated JSON). */
  write(chunk: string): void {
    const lines = (this.partial + chunk).split('\n');
    this.partial = lines.pop() ?? '';
    for (const line of lines) this.line(line);
  }

  line(text: string): void {
    if (text.trim() === '') return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      this.addOther(text);
      return;
    }
    if (typeof parsed !== 'object' || parsed === null || typeof (parsed as { level?: unknown }).level !== 'number') {
      this.addOther(text);
      return;
    }
    const l = parsed as LogLine;
    this.recent.push(l);
    if (this.recent.length > this.limit * 2) this.recent = this.recent.slice(-this.limit);
    if (l.level >= LogLevel.warn) this.problems.push(l);
    for (const w of [...this.waiters]) {
      if (w.match(l)) {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        w.resolve(l);
      }
    }
  }

  addOther(text: string): void {
    this.other.push(text);
    if (this.other.length > 2000) this.other.splice(0, 1000);
  }

  /** The most recent lines (up to the limit). */
  get lines(): readonly LogLine[] {
    return this.recent.slice(-this.limit);
  }

  /** Lines at `level` or above (warn and above are never dropped). */
  atLeast(level: number): LogLine[] {
    return this.problems.filter((l) => l.level >= level);
  }

  /** Resolves with the first future line matching `match`. */
  next(match: (l: LogLine) => boolean): Promise<LogLine> {
    return new Promise((resolve) => this.waiters.push({ match, resolve }));
  }

  /** Drops pending waiters (their promises never settle); for a broker that exited. */
  clearWaiters(): void {
    this.waiters = [];
  }

  /**
   * Raw lines (stderr, non-JSON stdout) that are part of a stack trace or an
   * uncaught error: the broker's logger never prints those, Node does when
   * something escaped it.
   */
  stackTraces(): string[] {
    return this.other.filter((l) => STACK_LINE.test(l));
  }

  tail(n = 40): string {
    return [...this.lines.slice(-n).map((l) => JSON.stringify(l)), ...this.other.slice(-n)].join('\n');
  }
}

export interface SedimentOptions {
  /** Log directory; a fresh temporary one by default (removed by close()). */
  readonly dataDir?: string;
  /** Listener port; 0 (a free one, read from the start-up log) by default. */
  readonly port?: number;
  /** `--override key=value` entries; listeners and log.dirs are set by the harness unless given. */
  readonly overrides?: Readonly<Record<string, string>>;
  /** SEDIMENT_LOG_LEVEL for the child (default info). */
  readonly logLevel?: string;
  readonly startTimeoutMs?: number;
  /** Address the listener binds and advertises (default 127.0.0.1); the fault tests give each broker its own. */
  readonly host?: string;
  /** Command prefix the broker runs under, e.g. `ip netns exec <ns>` (it must exec the program, keeping its pid). */
  readonly wrap?: readonly string[];
  /** Node flags before the CLI script, e.g. `--cpu-prof` (NODE_OPTIONS refuses those). */
  readonly nodeArgs?: readonly string[];
}

/** Overrides every test broker gets unless it says otherwise: no rebalance delay. */
export const testDefaults: Readonly<Record<string, string>> = {
  'group.initial.rebalance.delay.ms': '0',
  // Tests run brokers side by side: never the fixed default HTTP port.
  'http.listeners': `http://${host}:0`,
};

function overridesFor(dataDir: string, port: number, extra: Readonly<Record<string, string>> | undefined, listenHost = host): Record<string, string> {
  return { ...testDefaults, 'log.dirs': dataDir, listeners: `PLAINTEXT://${listenHost}:${port}`, ...extra };
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

export interface ExitInfo {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** A `sediment start` child process. Mutable across restart(): pid, logs and exit state refer to the current run. */
export class SedimentProcess {
  private child: ChildProcess | null = null;
  private exitInfo: ExitInfo | null = null;
  private expectedExit = false;
  /** Log lines of the current run. */
  logs = new LogCollector();
  /** Log collectors of earlier runs (before restarts), oldest first. */
  readonly previousLogs: LogCollector[] = [];
  /** Runs that ended uncleanly: exited unasked, or exited non-zero on stop(); close() fails on any. */
  readonly uncleanExits: string[] = [];
  /** Called when the broker exits without stop() or kill() having been asked. */
  onUnexpectedExit: ((info: ExitInfo, logs: LogCollector) => void) | null = null;
  port: number;
  /** The first http.listeners URL of the current run (metrics at `${httpUrl}/metrics`), null until its listener started. */
  httpUrl: string | null = null;
  /** Number of starts so far (1 after startSediment). */
  starts = 0;

  constructor(
    readonly dataDir: string,
    private readonly ownsDataDir: boolean,
    private readonly options: SedimentOptions,
  ) {
    this.port = options.port ?? 0;
  }

  get bootstrap(): string {
    return `${this.options.host ?? host}:${this.port}`;
  }

  get pid(): number {
    return this.child?.pid ?? -1;
  }

  /** True while the broker process runs. */
  get alive(): boolean {
    return this.child !== null && this.exitInfo === null;
  }

  /** How the last run ended, or null while it runs. */
  get exit(): ExitInfo | null {
    return this.exitInfo;
  }

  /** Starts the broker (on the current port; the first start may use 0) and waits for "sediment broker started". */
  async start(): Promise<void> {
    if (this.alive) throw new Error('sediment: already running');
    if (this.starts > 0) this.previousLogs.push(this.logs);
    this.logs = new LogCollector();
    this.exitInfo = null;
    this.expectedExit = false;
    const args = [sedimentCli, 'start'];
    for (const [k, v] of Object.entries(overridesFor(this.dataDir, this.port, this.options.overrides, this.options.host))) args.push('--override', `${k}=${v}`);
    const env = { ...process.env, SEDIMENT_LOG_LEVEL: this.options.logLevel ?? process.env['SEDIMENT_LOG_LEVEL'] ?? 'info' };
    const [command, ...prefix] = [...(this.options.wrap ?? []), process.execPath];
    const child = spawn(command ?? process.execPath, [...prefix, ...(this.options.nodeArgs ?? []), ...args], { stdio: ['ignore', 'pipe', 'pipe'], env });
    this.child = child;
    this.starts++;
    const logs = this.logs;
    child.stdout?.setEncoding('utf8');
    child.stderr?.setEncoding('utf8');
    child.stdout?.on('data', (s: string) => logs.write(s));
    child.stderr?.on('data', (s: string) => {
      for (const line of s.split('\n')) if (line.trim() !== '') logs.addOther(line);
    });
    const exited = new Promise<ExitInfo>((resolve) => {
      child.once('error', (err) => {
        logs.addOther(`spawn error: ${err.message}`);
        resolve({ code: null, signal: null });
      });
      child.once('exit', (code, signal) => resolve({ code, signal }));
    });
    void exited.then((info) => {
      if (this.child !== child) return;
      this.exitInfo = info;
      logs.clearWaiters();
      if (!this.expectedExit) {
        this.uncleanExits.push(`run ${this.starts} exited unasked (${info.code ?? info.signal}):\n${logs.tail(30)}`);
        this.onUnexpectedExit?.(info, logs);
      }
    });
    this.httpUrl = null;
    // Logged before the broker's start-up line, so known once start() returns.
    void logs.next((l) => l.msg === 'http listener started').then((l) => {
      const urls = l['http'];
      if (this.logs === logs && Array.isArray(urls) && typeof urls[0] === 'string') this.httpUrl = urls[0];
    });
    const started = logs.next((l) => l.msg === 'sediment broker started');
    const timeoutMs = this.options.startTimeoutMs ?? 60_000;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs)));
    const first = await Promise.race([started, exited, timeout]).finally(() => clearTimeout(timer));
    if (first === 'timeout' || !('level' in first)) {
      const why = first === 'timeout' ? `not started after ${timeoutMs} ms` : `exited (${first.code ?? first.signal}) during start-up`;
      if (first === 'timeout') await this.kill();
      throw new Error(`sediment ${why}:\n${logs.tail()}`);
    }
    const port = first['port'];
    if (typeof port !== 'number' || port <= 0) throw new Error(`sediment start-up line has no port: ${JSON.stringify(first)}`);
    this.port = port;
  }

  /** SIGTERM (clean shutdown: flush, checkpoints) and wait for the exit; resolves with how it ended. */
  async stop(timeoutMs = 30_000): Promise<ExitInfo> {
    const child = this.child;
    if (child !== null && this.alive) {
      this.expectedExit = true;
      child.kill('SIGTERM');
      if (!(await waitExit(child, timeoutMs))) {
        child.kill('SIGKILL');
        await waitExit(child, 10_000);
        this.uncleanExits.push(`run ${this.starts} did not stop within ${timeoutMs} ms of SIGTERM`);
        throw new Error(`sediment did not stop within ${timeoutMs} ms of SIGTERM; killed:\n${this.logs.tail()}`);
      }
      // A clean shutdown exits 0 (broker/cli/start.ts); anything else is a failed shutdown or a crash during it.
      if (child.exitCode !== 0) this.uncleanExits.push(`run ${this.starts} exited ${child.exitCode ?? child.signalCode} on SIGTERM:\n${this.logs.tail(30)}`);
    }
    return { code: child?.exitCode ?? null, signal: child?.signalCode ?? null };
  }

  /** SIGKILL, like `kill -9`: no shutdown work at all. */
  async kill(): Promise<void> {
    const child = this.child;
    if (child === null || !this.alive) return;
    this.expectedExit = true;
    child.kill('SIGKILL');
    await waitExit(child, 10_000);
  }

  /** Stops (SIGTERM) if running, then starts again on the same log dir and port. */
  async restart(): Promise<void> {
    if (this.alive) await this.stop();
    await this.start();
  }

  /**
   * For a test whose broker must fail start-up: the last run's exit was the
   * behaviour under test, not a crash, so close() does not count it. Earlier
   * unclean ends still count.
   */
  acceptFailedStart(): void {
    const last = this.uncleanExits.at(-1);
    if (last !== undefined && last.startsWith(`run ${this.starts} exited unasked`)) this.uncleanExits.pop();
  }

  /**
   * Stops if running and removes the log dir when the harness created it; then
   * fails if any run ended uncleanly (exited unasked, or not 0 on SIGTERM), so
   * the suite whose broker crashed fails, in its after hook, even when its
   * tests passed. kill() is a deliberate end and counts as clean.
   */
  async close(): Promise<void> {
    try {
      if (this.alive) await this.stop();
    } finally {
      if (this.ownsDataDir) rmSync(this.dataDir, { recursive: true, force: true });
    }
    if (this.uncleanExits.length > 0) throw new Error(`sediment broker ended uncleanly:\n${this.uncleanExits.join('\n---\n')}`);
  }
}

export function tempDataDir(prefix = 'sediment-e2e-'): string {
  return mkdtempSync(path.join(os.tmpdir(), prefix));
}

/** Starts `sediment start` as a child process; see SedimentProcess. */
export async function startSediment(options: SedimentOptions = {}): Promise<SedimentProcess> {
  const dataDir = options.dataDir ?? tempDataDir();
  const s = new SedimentProcess(dataDir, options.dataDir === undefined, options);
  try {
    await s.start();
  } catch (e) {
    if (options.dataDir === undefined) rmSync(dataDir, { recursive: true, force: true });
    throw e;
  }
  return s;
}

/** A broker inside this process (Broker.start), for tests that need no signals. */
export interface InProcessSediment {
  readonly bootstrap: string;
  readonly port: number;
  readonly dataDir: string;
  readonly broker: Broker;
  readonly logs: LogCollector;
  /** Broker.stop(): the same clean shutdown SIGTERM runs. */
  stop(): Promise<void>;
  /** Stops, then starts a new broker over the same dir and port. */
  restart(): Promise<InProcessSediment>;
  /** Stops and removes the log dir when the harness created it. */
  close(): Promise<void>;
}

export interface InProcessOptions extends Omit<SedimentOptions, 'startTimeoutMs'> {
  /** With etcd.connect: the cluster metadata store to use instead of etcd (a MemoryClusterMetadataStore). */
  readonly metadataStore?: ClusterMetadataStore;
}

export async function startSedimentInProcess(options: InProcessOptions = {}): Promise<InProcessSediment> {
  const dataDir = options.dataDir ?? tempDataDir();
  const owns = options.dataDir === undefined;
  const run = async (port: number): Promise<InProcessSediment> => {
    const logs = new LogCollector();
    const sink = new Writable({
      write(chunk: Buffer | string, _enc, cb): void {
        logs.write(typeof chunk === 'string' ? chunk : chunk.toString('utf8'));
        cb();
      },
    });
    const log = pino({ name: 'sediment', level: options.logLevel ?? 'info' }, sink);
    const config = BrokerConfig.fromProperties(overridesFor(dataDir, port, options.overrides));
    const broker = await Broker.start(config, { log, ...(options.metadataStore === undefined ? {} : { metadataStore: options.metadataStore }) });
    let stopped = false;
    const stop = async (): Promise<void> => {
      if (stopped) return;
      stopped = true;
      await broker.stop();
    };
    return {
      bootstrap: `${host}:${broker.port}`,
      port: broker.port,
      dataDir,
      broker,
      logs,
      stop,
      restart: async () => {
        await stop();
        return run(broker.port);
      },
      close: async () => {
        try {
          await stop();
        } finally {
          if (owns) rmSync(dataDir, { recursive: true, force: true });
        }
      },
    };
  };
  try {
    return await run(options.port ?? 0);
  } catch (e) {
    if (owns) rmSync(dataDir, { recursive: true, force: true });
    throw e;
  }
}
