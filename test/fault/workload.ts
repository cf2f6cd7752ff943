// The checker's client: the franz-go program in test/fault/workload/ (built
// with the Go toolchain into the compat cache, like test/compat's franz-go
// program), run as a child process. franz-go because its idempotent producer
// is the most faithful to Kafka's: retries without limit, no delivery timeout,
// sequence numbers kept across leader changes, so a duplicate or a gap in the
// log is the broker's doing. The availability probe's writes go through
// kafkajs, which reports the broker's error code of a refused write.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Kafka, Partitioners, logLevel } from 'kafkajs';
import { repoRoot } from '../support/tools.js';
import type { Ack } from './checker.js';

function cacheDir(): string {
  const base = process.env['SEDIMENT_COMPAT_CACHE'] ?? (existsSync('/work/cache') ? '/work/cache/compat' : path.join(os.homedir(), '.cache', 'sediment', 'compat'));
  return path.join(base, 'fault-workload');
}

/** Builds the program when its sources changed (a stamp holds their hash); returns the binary's path or throws with go's output. */
export function buildWorkload(): string {
  const src = path.join(repoRoot(), 'test', 'fault', 'workload');
  const out = cacheDir();
  const bin = path.join(out, 'fault-workload');
  const stamp = path.join(out, '.installed');
  const goVersion = spawnSync('go', ['env', 'GOVERSION'], { encoding: 'utf8' });
  if (goVersion.status !== 0) throw new Error(`fault workload: 'go' not found on PATH (Go 1.26+ is needed): ${goVersion.error?.message ?? goVersion.stderr}`);
  const hash = createHash('sha256');
  for (const f of ['go.mod', 'go.sum', 'main.go']) hash.update(readFileSync(path.join(src, f)));
  const sum = `${hash.digest('hex')}-${goVersion.stdout.trim()}`;
  if (existsSync(bin) && existsSync(stamp) && readFileSync(stamp, 'utf8') === sum) return bin;
  mkdirSync(out, { recursive: true });
  const env = { ...process.env, GOFLAGS: '-mod=mod', GOTOOLCHAIN: 'local' };
  const build = spawnSync('go', ['build', '-o', `${bin}.tmp`, '.'], { cwd: src, env, encoding: 'utf8' });
  if (build.status !== 0) throw new Error(`fault workload: go build failed in ${src}:\n${build.stderr}`);
  renameSync(`${bin}.tmp`, bin);
  writeFileSync(stamp, sum);
  return bin;
}

export interface WorkloadResult {
  readonly acks: readonly Ack[];
  /** Records the client gave up on (value, error name). */
  readonly failed: ReadonlyArray<{ partition: number; value: string; error: string }>;
  /** Records neither acknowledged nor failed when the drain ended: they may or may not be in the log. */
  readonly unfinished: number;
  readonly stderr: string;
}

/** A running `fault-workload produce`. */
export class Workload {
  private readonly acks: Ack[] = [];
  private readonly failed: Array<{ partition: number; value: string; error: string }> = [];
  private unfinished = -1;
  private stderr = '';
  private partial = '';
  private readonly exited: Promise<number | null>;

  private constructor(private readonly child: ChildProcess) {
    child.stdout?.setEncoding('utf8');
    child.stderr?.setEncoding('utf8');
    child.stdout?.on('data', (s: string) => this.feed(s));
    child.stderr?.on('data', (s: string) => {
      this.stderr = (this.stderr + s).slice(-8000);
    });
    this.exited = new Promise((resolve) => {
      child.once('exit', (code) => resolve(code));
      child.once('error', (e) => {
        this.stderr += `spawn failed: ${e.message}`;
        resolve(null);
      });
    });
  }

  static start(bin: string, o: { bootstrap: string; topic: string; partitions: number; producers: number; prefix: string; rate: number; drainMs: number }): Workload {
    const args = ['produce', '--bootstrap', o.bootstrap, '--topic', o.topic, '--partitions', String(o.partitions), '--producers', String(o.producers), '--prefix', o.prefix, '--rate', String(o.rate), '--drain-ms', String(o.drainMs)];
    return new Workload(spawn(bin, args, { stdio: ['pipe', 'pipe', 'pipe'] }));
  }

  get acknowledged(): number {
    return this.acks.length;
  }

  private feed(s: string): void {
    const lines = (this.partial + s).split('\n');
    this.partial = lines.pop() ?? '';
    for (const line of lines) {
      if (line.trim() === '') continue;
      const m = JSON.parse(line) as { a?: [number, number, string]; f?: [number, string, string]; done?: { unfinished: number } };
      if (m.a !== undefined) this.acks.push({ partition: m.a[0], offset: BigInt(m.a[1]), value: m.a[2] });
      else if (m.f !== undefined) this.failed.push({ partition: m.f[0], value: m.f[1], error: m.f[2] });
      else if (m.done !== undefined) this.unfinished = m.done.unfinished;
    }
  }

  /** Stops producing (closes stdin), waits for the drain and the exit. */
  async stop(): Promise<WorkloadResult> {
    this.child.stdin?.end();
    const code = await this.exited;
    if (code !== 0) throw new Error(`fault workload exited ${code}: ${this.stderr}`);
    return { acks: this.acks, failed: this.failed, unfinished: this.unfinished, stderr: this.stderr };
  }

  kill(): void {
    this.child.kill('SIGKILL');
  }
}

export interface ProbeResult {
  readonly partition: number;
  readonly produced: boolean;
  readonly offset: number;
  /** The broker's error name when the write was refused (kafkajs's error type), or the client's message. */
  readonly error: string;
  readonly read: number;
  /** The value it produced. */
  readonly value: string;
}

/** The Kafka error name of a kafkajs error (a retry wrapper keeps the broker's in originalError). */
function kafkaErrorType(e: unknown): string {
  for (let cur: unknown = e, depth = 0; cur !== null && cur !== undefined && depth < 5; depth++) {
    const x = cur as { type?: unknown; originalError?: unknown; cause?: unknown; message?: unknown };
    if (typeof x.type === 'string') return x.type;
    cur = x.originalError ?? x.cause;
  }
  return e instanceof Error ? e.message : String(e);
}

/**
 * Availability: one non-idempotent acks=all record per partition through
 * kafkajs (a few retries, bounded by the timeout), then a read of each
 * partition from the start through the franz-go program.
 */
export async function probe(bin: string, o: { bootstrap: string; topic: string; partitions: number; timeoutMs: number }): Promise<ProbeResult[]> {
  const kafka = new Kafka({ clientId: 'fault-probe', brokers: o.bootstrap.split(','), logLevel: logLevel.NOTHING, connectionTimeout: 3000, requestTimeout: o.timeoutMs, retry: { retries: 4, initialRetryTime: 300, maxRetryTime: 2000 } });
  const producer = kafka.producer({ allowAutoTopicCreation: false, createPartitioner: Partitioners.DefaultPartitioner });
  const results: ProbeResult[] = [];
  await producer.connect();
  try {
    await Promise.all(
      Array.from({ length: o.partitions }, async (_, partition) => {
        const value = `probe-${partition}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
        try {
          const [meta] = await producer.send({ topic: o.topic, acks: -1, timeout: Math.floor(o.timeoutMs / 2), messages: [{ partition, value }] });
          const offset = Number(meta?.baseOffset ?? meta?.offset ?? -1);
          results.push({ partition, produced: meta !== undefined && meta.errorCode === 0, offset, error: '', read: 0, value });
        } catch (e) {
          results.push({ partition, produced: false, offset: -1, error: kafkaErrorType(e), read: 0, value });
        }
      }),
    );
  } finally {
    await producer.disconnect().catch(() => undefined);
  }
  const child = spawn(bin, ['read', '--bootstrap', o.bootstrap, '--topic', o.topic, '--partitions', String(o.partitions), '--timeout-ms', String(o.timeoutMs)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
  child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  if (code !== 0) throw new Error(`fault read probe exited ${code}: ${stderr}`);
  const reads = new Map(
    stdout
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => (JSON.parse(l) as { read: { partition: number; read: number } }).read)
      .map((r) => [r.partition, r.read] as const),
  );
  return results.sort((a, b) => a.partition - b.partition).map((r) => ({ ...r, read: reads.get(r.partition) ?? 0 }));
}
