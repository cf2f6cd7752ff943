// The load generator, identical for both brokers: Kafka's own
// ProducerPerformance and ConsumerPerformance from the reference jars, plus
// topic creation through kafkajs's admin client (one request for all topics of
// a phase, so no JVM start per topic).
import { randomUUID } from 'node:crypto';
import { Kafka, logLevel } from 'kafkajs';
import { KafkaTool, runKafkaTool } from '../support/kafka-reference.js';
import { parseConsumerSummary, parseProducerSummary, type ConsumerSummary, type ProducerSummary } from './perf-output.js';

export type Compression = 'none' | 'lz4';
export type Acks = '1' | 'all';

export interface ProduceSpec {
  readonly topic: string;
  readonly records: number;
  readonly recordSize: number;
  /** Records per second; -1: as fast as possible. */
  readonly throughput: number;
  readonly compression: Compression;
  readonly acks: Acks;
  readonly batchSize: number;
  readonly lingerMs: number;
}

export const PARTITIONS = 6;
export const RECORD_SIZE = 1024;
export const BATCH_SIZE = 64 * 1024;
export const LINGER_MS = 5;

/** The four peak produce workloads of the produce-consume bench, in its order (and of the replays made from it). */
export const WORKLOADS: ReadonlyArray<{ readonly compression: Compression; readonly acks: Acks }> = [
  { compression: 'none', acks: '1' },
  { compression: 'none', acks: 'all' },
  { compression: 'lz4', acks: '1' },
  { compression: 'lz4', acks: 'all' },
];

export interface TopicOptions {
  /** 1 by default. Above 1, createTopics also waits until every replica is in the ISR. */
  readonly replicationFactor?: number;
  /** Topic configs, e.g. min.insync.replicas. */
  readonly configs?: Readonly<Record<string, string>>;
}

/** `bootstrap` is host:port or a comma-separated list of them. */
export async function createTopics(bootstrap: string, topics: readonly string[], options: TopicOptions = {}): Promise<void> {
  const replicationFactor = options.replicationFactor ?? 1;
  const configEntries = Object.entries(options.configs ?? {}).map(([name, value]) => ({ name, value }));
  const kafka = new Kafka({ clientId: 'sediment-bench', brokers: bootstrap.split(','), logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  try {
    const created = await admin.createTopics({
      topics: topics.map((topic) => ({ topic, numPartitions: PARTITIONS, replicationFactor, configEntries })),
      // kafkajs's own wait fails on UNKNOWN_TOPIC_OR_PARTITION from a broker the new topic has not
      // reached yet (Kafka's metadata propagation in a cluster); the loops below retry it.
      waitForLeaders: replicationFactor === 1,
    });
    if (!created) throw new Error(`topics already existed on ${bootstrap}: ${topics.join(', ')}`);
    // Metadata may name a leader before that broker serves the partition (Kafka answers
    // NOT_LEADER_OR_FOLLOWER for a moment): ListOffsets on every partition waits that out,
    // so producer retries do not eat into the first measured run.
    const deadline = Date.now() + 30_000;
    for (const topic of topics) {
      for (;;) {
        try {
          await admin.fetchTopicOffsets(topic);
          break;
        } catch (err) {
          const retriable = (err as { retriable?: boolean }).retriable === true;
          if (!retriable || Date.now() > deadline) throw err;
          // Polling readiness, which Kafka does not announce.
          await new Promise((r) => setTimeout(r, 100));
        }
      }
    }
    // A follower joins the ISR after its first fetches; an acks=all produce before that
    // would measure the catching up (or, below min.insync.replicas, retries).
    if (replicationFactor > 1) {
      for (;;) {
        let short: string[];
        try {
          const md = await admin.fetchTopicMetadata({ topics: [...topics] });
          short = md.topics.flatMap((t) => t.partitions.filter((p) => p.isr.length < replicationFactor).map((p) => `${t.name}-${p.partitionId} isr ${JSON.stringify(p.isr)}`));
        } catch (err) {
          if ((err as { retriable?: boolean }).retriable !== true || Date.now() > deadline) throw err;
          short = [String(err)];
        }
        if (short.length === 0) break;
        if (Date.now() > deadline) throw new Error(`ISR not full after 30 s: ${short.slice(0, 5).join(', ')}`);
        // Polling: the ISR change is not announced to clients.
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  } finally {
    await admin.disconnect();
  }
}

/** The exact ProducerPerformance arguments, also printed in docs/benchmarks.md. */
export function producerArgs(bootstrap: string, spec: ProduceSpec): string[] {
  return [
    '--topic', spec.topic,
    '--num-records', String(spec.records),
    '--record-size', String(spec.recordSize),
    '--throughput', String(spec.throughput),
    '--producer-props',
    `bootstrap.servers=${bootstrap}`,
    `acks=${spec.acks}`,
    `batch.size=${spec.batchSize}`,
    `linger.ms=${spec.lingerMs}`,
    `compression.type=${spec.compression}`,
  ];
}

export function consumerArgs(bootstrap: string, topic: string, records: number): string[] {
  return ['--bootstrap-server', bootstrap, '--topic', topic, '--messages', String(records), '--group', `bench-${randomUUID()}`, '--timeout', '30000'];
}

/**
 * Client-side failures must not pass for a fast run: an ERROR line or an uncaught
 * exception fails it. Retried errors (WARN) are reported, since they cost time.
 */
function checkToolErrors(tool: string, stderr: string, log: (msg: string) => void): void {
  const lines = stderr.split('\n');
  // A failed send's printed stack trace starts a line with the exception class.
  const bad = lines.find((l) => /Exception in thread|\] ERROR |^org\.apache\.kafka\.common\.errors\.\w+/.test(l));
  if (bad !== undefined) throw new Error(`${tool} reported an error: ${bad}\n${stderr.slice(-3000)}`);
  const warned = lines.filter((l) => /\] WARN .*(retrying|error)/i.test(l));
  if (warned.length > 0) log(`${tool}: ${warned.length} retried error(s), first: ${warned[0]!.slice(0, 300)}`);
}

const warn = (msg: string): void => void process.stderr.write(`  ${msg}\n`);

export async function produce(bootstrap: string, spec: ProduceSpec): Promise<ProducerSummary> {
  const r = await runKafkaTool(KafkaTool.producerPerfTest, producerArgs(bootstrap, spec), { timeoutMs: 300_000 });
  checkToolErrors('ProducerPerformance', r.stderr, warn);
  const s = parseProducerSummary(r.stdout);
  if (s.records !== spec.records) throw new Error(`ProducerPerformance sent ${s.records} of ${spec.records} records`);
  return s;
}

export async function consume(bootstrap: string, topic: string, records: number): Promise<ConsumerSummary> {
  const r = await runKafkaTool(KafkaTool.consumerPerfTest, consumerArgs(bootstrap, topic, records), { timeoutMs: 300_000 });
  checkToolErrors('ConsumerPerformance', r.stderr, warn);
  const s = parseConsumerSummary(r.stdout);
  if (s.records < records) {
    const why = /WARNING: [^\n]*/.exec(r.stdout)?.[0] ?? 'no reason given';
    throw new Error(`ConsumerPerformance read ${s.records} of ${records} records from ${topic} at ${bootstrap}: ${why}\n${r.stderr.slice(-2000)}`);
  }
  return s;
}
