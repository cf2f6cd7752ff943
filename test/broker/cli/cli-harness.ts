// Shared pieces of the CLI integration suites: the broker under test, running a
// command with captured output, parsing --describe output, and kafkajs helpers.
// The broker is a real Apache Kafka (test/support/kafka-reference.ts) unless
// SEDIMENT_CLI_TEST_BOOTSTRAP=host:port points the suites at a running broker
// (e.g. Sediment), so the same assertions run against both.
import { Kafka, logLevel } from 'kafkajs';
import type { CliIo } from '../../../broker/cli/args.js';
import { runGroups } from '../../../broker/cli/groups.js';
import { runTopics } from '../../../broker/cli/topics.js';
import { startKafkaReference } from '../../support/kafka-reference.js';

export interface CliTarget {
  readonly bootstrap: string;
  /** 'kafka': the reference broker started here; 'external': SEDIMENT_CLI_TEST_BOOTSTRAP. */
  readonly kind: 'kafka' | 'external';
  stop(): Promise<void>;
}

export async function startCliTarget(): Promise<CliTarget> {
  const external = process.env['SEDIMENT_CLI_TEST_BOOTSTRAP'];
  if (external !== undefined && external !== '') return { bootstrap: external, kind: 'external', stop: async () => undefined };
  const k = await startKafkaReference({ heap: '768M' });
  return { bootstrap: k.bootstrap, kind: 'kafka', stop: () => k.stop() };
}

export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export async function cli(command: 'topics' | 'groups', args: readonly string[]): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const io: CliIo = { out: (t) => void (stdout += t), err: (t) => void (stderr += t) };
  const code = await (command === 'topics' ? runTopics : runGroups)([...args], io);
  return { code, stdout, stderr };
}

/** `Key: value` pairs of one tab-separated --describe line. */
function fields(line: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of line.split('\t')) {
    const i = part.indexOf(': ');
    if (i > 0) out[part.slice(0, i)] = part.slice(i + 2);
    else if (part.endsWith(':')) out[part.slice(0, -1)] = '';
  }
  return out;
}

export interface DescribedTopic {
  readonly topic: Record<string, string>;
  readonly partitions: Array<Record<string, string>>;
}

export function parseDescribe(text: string): Map<string, DescribedTopic> {
  const out = new Map<string, DescribedTopic>();
  let current: DescribedTopic | undefined;
  for (const line of text.split('\n')) {
    if (line === '') continue;
    if (line.startsWith('\t')) current?.partitions.push(fields(line.slice(1)));
    else {
      current = { topic: fields(line), partitions: [] };
      out.set(current.topic['Topic'] ?? '', current);
    }
  }
  return out;
}

/** Rows of a whitespace-aligned table, keyed by header. */
export function parseTable(text: string, firstHeader: string): Array<Record<string, string>> {
  const lines = text.split('\n');
  const start = lines.findIndex((l) => l.startsWith(firstHeader));
  if (start < 0) return [];
  const header = (lines[start] as string).trim().split(/\s+/);
  const rows: Array<Record<string, string>> = [];
  for (const line of lines.slice(start + 1)) {
    if (line.trim() === '') break;
    const cells = line.trim().split(/\s+/);
    rows.push(Object.fromEntries(header.map((h, i) => [h, cells[i] ?? ''])));
  }
  return rows;
}

export function kafkaClient(bootstrap: string, clientId = 'sediment-cli-test'): Kafka {
  return new Kafka({ brokers: [bootstrap], clientId, logLevel: logLevel.NOTHING, retry: { retries: 8 } });
}

/** Produces `count` records to one partition, record i with CreateTime base + i * step. */
export async function produce(kafka: Kafka, topic: string, partition: number, count: number, base: number, step = 1000, first = 0): Promise<void> {
  const producer = kafka.producer();
  await producer.connect();
  try {
    await producer.send({
      topic,
      messages: Array.from({ length: count }, (_, i) => ({ partition, value: `v${first + i}`, timestamp: String(base + (first + i) * step) })),
    });
  } finally {
    await producer.disconnect();
  }
}

/** Polls `check` until it returns true (state owned by the broker, observed, not slept on). */
export async function eventually(what: string, check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (let backoff = 50; ; backoff = Math.min(backoff * 2, 500)) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, backoff));
  }
}
