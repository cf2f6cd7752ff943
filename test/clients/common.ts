// Shared pieces of the real-client wrappers: options, the summary type, child
// process handling and topic creation.
import { spawn } from 'node:child_process';
import { Kafka, logLevel } from 'kafkajs';
import type { RoundTripSummary } from './content.js';

export type Codec = 'none' | 'gzip' | 'snappy' | 'lz4' | 'zstd';

/** Codecs each client can produce without plugins. */
export const clientCodecs = {
  kafkajs: ['none', 'gzip'],
  python: ['none', 'gzip', 'snappy', 'lz4', 'zstd'],
  kcat: ['none', 'gzip', 'snappy', 'lz4', 'zstd'],
} as const satisfies Record<string, readonly Codec[]>;

export interface RoundTripOptions {
  readonly bootstrap: string;
  readonly topic: string;
  readonly count: number;
  /** Default 3. */
  readonly partitions?: number;
  /** Default 'none'. */
  readonly compression?: Codec;
  /** Idempotent producer (enable.idempotence=true / kafkajs idempotent). */
  readonly idempotent?: boolean;
  /** Consume in this consumer group instead of assigning partitions from offset 0 (python, kafkajs). */
  readonly group?: string;
  /** 'produce' creates and produces, 'consume' consumes, verifies and checks ListOffsets; default both. */
  readonly phase?: 'all' | 'produce' | 'consume';
  /** Create the topic first (default true); false relies on it existing or on auto-creation. */
  readonly createTopic?: boolean;
  /** Producer batch.size (librdkafka clients): small batches give every segment many index entries. */
  readonly batchSize?: number;
  /** CreateTime of record 0; record i gets base + i. Must match between a produce and a consume phase. */
  readonly baseTimestamp?: number;
  /** Whole-run limit; default 10 minutes. */
  readonly timeoutMs?: number;
  /**
   * Called as acknowledgements arrive (every `progressEvery` records; python only),
   * e.g. to kill the broker in the middle of a produce.
   */
  readonly onProgress?: (acked: number) => void;
  readonly progressEvery?: number;
  /**
   * Python only: before record `holdAt` the producer flushes, then waits until `onHold` resolves,
   * e.g. to take a store away at a known point with the rest of the produce still to come.
   */
  readonly holdAt?: number;
  readonly onHold?: (acked: number) => Promise<void>;
}

export interface ClientRun extends RoundTripSummary {
  /** Wall time of the client process (or processes), start to exit. */
  readonly wallMs: number;
}

export interface ProcessResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export function runProcess(
  cmd: string,
  args: readonly string[],
  options: { input?: string | Iterable<string> | AsyncIterable<string>; timeoutMs: number; onStderrLine?: (line: string) => void },
): Promise<ProcessResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    let partial = '';
    child.stderr.on('data', (b: Buffer) => {
      err.push(b);
      const onLine = options.onStderrLine;
      if (onLine === undefined) return;
      const lines = (partial + b.toString('utf8')).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) onLine(line);
    });
    child.stdin.on('error', () => undefined);
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') });
    });
    const input = options.input;
    if (input === undefined) child.stdin.end();
    else if (typeof input === 'string') child.stdin.end(input);
    else void writeAll(child.stdin, input);
  });
}

async function writeAll(stream: NodeJS.WritableStream, chunks: Iterable<string> | AsyncIterable<string>): Promise<void> {
  for await (const chunk of chunks) {
    if (!stream.write(chunk)) await new Promise<void>((r) => stream.once('drain', () => r()));
  }
  stream.end();
}

export function parseSummary(name: string, r: ProcessResult, wallMs: number): ClientRun {
  const lines = r.stdout.trim().split('\n');
  const last = lines[lines.length - 1] ?? '';
  let parsed: unknown;
  try {
    parsed = JSON.parse(last);
  } catch {
    throw new Error(`${name} printed no summary (exit ${r.code ?? r.signal}):\n${r.stdout.slice(-2000)}\n${r.stderr.slice(-4000)}`);
  }
  const summary = parsed as RoundTripSummary;
  const exitOk = r.code === 0;
  if (summary.ok !== exitOk) {
    return { ...summary, ok: false, errors: [...summary.errors, `exit code ${r.code ?? r.signal} disagrees with ok=${summary.ok}`], wallMs };
  }
  return { ...summary, wallMs };
}

/** Creates a topic with kafkajs's admin client and waits for its leaders. */
export async function createTopic(bootstrap: string, topic: string, partitions: number): Promise<void> {
  const kafka = new Kafka({ clientId: 'sediment-test-admin', brokers: [bootstrap], logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  try {
    await admin.createTopics({ topics: [{ topic, numPartitions: partitions, replicationFactor: 1 }], waitForLeaders: true });
  } finally {
    await admin.disconnect();
  }
}

