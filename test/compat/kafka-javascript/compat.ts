// Compatibility-matrix program for npm @confluentinc/kafka-javascript (librdkafka
// underneath), through its KafkaJS-compatible promisified API (`KafkaJS.Kafka`), the
// API its README tells new users to start with. Run as a child process:
//   node dist/test/compat/kafka-javascript/compat.js --module-dir DIR --bootstrap h:p --topic t --group g [--count 50000] [--codecs ...]
// DIR is the node_modules directory test/compat/install.sh kafka-javascript built the
// client into (it compiles librdkafka, so it is not a dependency of the repo).
// Against one broker it:
//   - creates the topic (admin.createTopics) and describes it (fetchTopicMetadata:
//     leaders, replicas, ISR, topic id);
//   - produces N keyed records with headers and CreateTime timestamps, one slice per
//     codec (none, gzip, snappy, lz4, zstd), idempotent, acks=-1, checking the base
//     offset send() acknowledges per partition;
//   - consumes them in a consumer group (subscribe + run eachBatch) committing after
//     every batch, verifying every record (test/clients/content.ts);
//   - lists all topics (admin.listTopics: an all-topics Metadata request, the one
//     librdkafka 2.1x pads with trailing bytes, issue 12);
//   - subscribes by regular expression (/^<topic>-rx-.*/) to two topics made for it
//     and reads their records in a group of its own;
//   - lists offsets (fetchTopicOffsets: low and high; fetchTopicOffsetsByTimestamp);
//   - checks the group (fetchOffsets against the high watermarks, describeGroups,
//     listGroups).
// Prints one JSON summary line last (test/compat/summary.ts).
import { createRequire } from 'node:module';
import path from 'node:path';
import { parseArgs } from 'node:util';
import {
  RoundTripVerifier,
  defaultBaseTimestamp,
  exactExpectation,
  expectedOffsetForTimestamp,
  partitionRecordCount,
  recordHeaders,
  recordKey,
  recordValue,
  timestampSamples,
} from '../../clients/content.js';
import { OperationReport, codecSlices } from '../summary.js';
import type { KjsAdmin, KjsConsumer, KjsHeaders, KjsKafka, KjsModule, KjsProducer } from './kafka-javascript-types.js';

const client = 'kafka-javascript';
const clientId = 'sediment-compat-kafka-javascript';
/** ConsumerGroupStates.EMPTY of the client's rdkafka.d.ts. */
const groupStateEmpty = 5;

interface Options {
  moduleDir: string;
  bootstrap: string;
  topic: string;
  group: string;
  count: number;
  partitions: number;
  codecs: string[];
  baseTimestamp: number;
  timeoutMs: number;
}

function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      'module-dir': { type: 'string' },
      bootstrap: { type: 'string' },
      topic: { type: 'string' },
      group: { type: 'string' },
      count: { type: 'string', default: '50000' },
      partitions: { type: 'string', default: '3' },
      codecs: { type: 'string', default: 'none,gzip,snappy,lz4,zstd' },
      'base-timestamp': { type: 'string' },
      'timeout-ms': { type: 'string', default: '240000' },
    },
  });
  if (values['module-dir'] === undefined || values.bootstrap === undefined || values.topic === undefined || values.group === undefined) {
    throw new Error('--module-dir, --bootstrap, --topic and --group are required');
  }
  return {
    moduleDir: values['module-dir'],
    bootstrap: values.bootstrap,
    topic: values.topic,
    group: values.group,
    count: Number(values.count),
    partitions: Number(values.partitions),
    codecs: values.codecs.split(','),
    baseTimestamp: values['base-timestamp'] === undefined ? defaultBaseTimestamp() : Number(values['base-timestamp']),
    timeoutMs: Number(values['timeout-ms']),
  };
}

/** The client from the directory install.sh built it into. */
function loadClient(moduleDir: string): { module: KjsModule; version: string } {
  const require = createRequire(path.join(path.resolve(moduleDir), 'sediment-compat.cjs'));
  const module = require('@confluentinc/kafka-javascript') as KjsModule;
  const version = (require('@confluentinc/kafka-javascript/package.json') as { version: string }).version;
  return { module, version };
}

function kafkaOf(m: KjsModule, bootstrap: string): KjsKafka {
  return new m.KafkaJS.Kafka({ kafkaJS: { brokers: [bootstrap], clientId, logLevel: m.KafkaJS.logLevel.ERROR } });
}

function headerText(v: KjsHeaders[string]): string {
  if (v === undefined || v === null) return '';
  if (Array.isArray(v)) return v.map((x) => x.toString()).join(',');
  return v.toString();
}

async function waitFor<T>(what: string, timeoutMs: number, probe: () => Promise<T | null>): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const r = await probe();
    if (r !== null) return r;
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    // Polled: a new topic's leaders are announced by no event a client can await.
    await new Promise((res) => setTimeout(res, 100));
  }
}

async function createTopic(admin: KjsAdmin, o: Options): Promise<string> {
  const created = await admin.createTopics({ topics: [{ topic: o.topic, numPartitions: o.partitions, replicationFactor: 1 }], timeout: 30_000 });
  if (!created) throw new Error(`createTopics answered false: ${o.topic} already exists`);
  await waitFor('a leader for every partition', 30_000, async () => {
    const [md] = await admin.fetchTopicMetadata({ topics: [o.topic], timeout: 10_000 }).catch(() => []);
    return md !== undefined && md.partitions.length === o.partitions && md.partitions.every((p) => p.leader >= 0) ? md : null;
  });
  return `${o.partitions} partitions`;
}

async function describeTopics(admin: KjsAdmin, o: Options, report: OperationReport): Promise<string> {
  const [md] = await admin.fetchTopicMetadata({ topics: [o.topic], timeout: 30_000 });
  if (md === undefined) throw new Error(`fetchTopicMetadata(${o.topic}) returned nothing`);
  if (md.name !== o.topic) report.error(`fetchTopicMetadata: name ${md.name}`);
  if (md.isInternal === true) report.error('fetchTopicMetadata: topic reported internal');
  const id = md.topicId?.base64 ?? md.topicId?.base64str ?? '';
  const zero = md.topicId?.mostSignificantBits === 0n && md.topicId?.leastSignificantBits === 0n;
  // A topic id is 16 bytes: 22 base64 characters (librdkafka uses the standard alphabet, Kafka base64url); zero means "none".
  if (!/^[A-Za-z0-9+/_-]{22}$/.test(id) || zero) report.error(`fetchTopicMetadata: topic id ${JSON.stringify(id)} (${md.topicId?.mostSignificantBits}, ${md.topicId?.leastSignificantBits})`);
  const ids = md.partitions.map((p) => p.partitionId).sort((a, b) => a - b);
  if (ids.join(',') !== Array.from({ length: o.partitions }, (_, p) => p).join(',')) report.error(`fetchTopicMetadata: partitions ${ids.join(',')}`);
  for (const p of md.partitions) {
    if (p.leader < 0 || p.replicas.length !== 1 || p.replicas[0] !== p.leader || p.isr.length !== 1 || p.isr[0] !== p.leader) {
      report.error(`partition ${p.partitionId}: leader ${p.leader}, replicas [${p.replicas.join(',')}], isr [${p.isr.join(',')}]`);
    }
  }
  return `${md.partitions.length} partitions, leader ${md.partitions[0]?.leader ?? '?'}, topic id ${id}`;
}

async function produce(kafka: KjsKafka, o: Options, report: OperationReport): Promise<string> {
  const parts: string[] = [];
  const chunk = 2000;
  for (const { codec, from, to } of codecSlices(o.count, o.codecs)) {
    // acks and compression belong to the producer's config in this client, not to send().
    const producer: KjsProducer = kafka.producer({ kafkaJS: { idempotent: true, acks: -1, compression: codec, allowAutoTopicCreation: false }, 'linger.ms': 5 });
    await producer.connect();
    try {
      for (let start = from; start < to; start += chunk) {
        const end = Math.min(to, start + chunk);
        const messages = [];
        for (let i = start; i < end; i++) {
          const headers: Record<string, string> = {};
          for (const [k, v] of recordHeaders(i, client)) headers[k] = v;
          messages.push({ key: recordKey(i), value: recordValue(i), partition: i % o.partitions, timestamp: String(o.baseTimestamp + i), headers });
        }
        const acks = await producer.send({ topic: o.topic, messages });
        // send() answers the lowest offset acknowledged per partition.
        for (let p = 0; p < o.partitions; p++) {
          const first = start + ((((p - start) % o.partitions) + o.partitions) % o.partitions);
          if (first >= end) continue;
          const a = acks.find((x) => x.partition === p);
          const want = Math.floor(first / o.partitions);
          if (a === undefined || a.errorCode !== 0 || Number(a.baseOffset) !== want) report.error(`${codec} records ${start}..${end - 1}: partition ${p} acknowledged ${JSON.stringify(a)}, expected base offset ${want}`);
        }
      }
    } finally {
      await producer.disconnect();
    }
    parts.push(`${codec} ${to - from}`);
  }
  return `${o.count} records (${parts.join(', ')}), idempotent`;
}

function consumerOf(kafka: KjsKafka, group: string, extra: Record<string, string | number> = {}): KjsConsumer {
  return kafka.consumer({ kafkaJS: { groupId: group, fromBeginning: true, autoCommit: false }, 'isolation.level': 'read_committed', 'js.consumer.max.batch.size': 1000, ...extra });
}

async function consume(kafka: KjsKafka, o: Options, report: OperationReport): Promise<string> {
  const verifier = new RoundTripVerifier(o.count, o.partitions, exactExpectation(client, o.baseTimestamp));
  const consumer = consumerOf(kafka, o.group);
  let commits = 0;
  let failure: unknown = null;
  let finished!: () => void;
  const done = new Promise<void>((resolve) => (finished = resolve));
  await consumer.connect();
  try {
    await consumer.subscribe({ topics: [o.topic] });
    await consumer.run({
      eachBatch: async ({ batch }) => {
        try {
          if (batch.messages.length === 0) return;
          for (const m of batch.messages) {
            verifier.observe({
              partition: batch.partition,
              offset: Number(m.offset),
              key: m.key === null ? null : m.key.toString(),
              value: m.value === null ? null : m.value.toString(),
              headers: Object.entries(m.headers ?? {}).map(([k, v]) => [k, headerText(v)] as const),
              timestamp: Number(m.timestamp),
            });
          }
          const last = batch.messages[batch.messages.length - 1]!;
          await consumer.commitOffsets([{ topic: batch.topic, partition: batch.partition, offset: String(Number(last.offset) + 1) }]);
          commits++;
        } catch (e) {
          failure = e;
          finished();
        }
        if (verifier.complete) finished();
      },
    });
    const timer = setTimeout(() => finished(), o.timeoutMs);
    await done;
    clearTimeout(timer);
  } finally {
    await consumer.disconnect();
  }
  if (failure !== null) throw failure;
  if (!verifier.complete) report.error(`timed out with ${verifier.consumedCount} of ${o.count} records`);
  const v = verifier.finish();
  for (const e of v.errors) report.error(e);
  if (v.errorCount > v.errors.length) report.error(`${v.errorCount - v.errors.length} more verification errors`);
  return `${v.consumed} records, ${commits} commits`;
}

async function listTopics(admin: KjsAdmin, o: Options, report: OperationReport): Promise<string> {
  const topics = await admin.listTopics({ timeout: 30_000 });
  if (!topics.includes(o.topic)) report.error(`listTopics() does not list ${o.topic} (${topics.length} topics)`);
  return `${topics.length} topics`;
}

async function regexSubscribe(kafka: KjsKafka, admin: KjsAdmin, o: Options, report: OperationReport): Promise<string> {
  const names = [`${o.topic}-rx-a`, `${o.topic}-rx-b`];
  await admin.createTopics({ topics: names.map((topic) => ({ topic, numPartitions: 1, replicationFactor: 1 })), timeout: 30_000 });
  const producer = kafka.producer({ kafkaJS: { allowAutoTopicCreation: false } });
  await producer.connect();
  try {
    for (const n of names) await producer.send({ topic: n, messages: [{ key: n, value: 'rx' }] });
  } finally {
    await producer.disconnect();
  }
  // Topic names here are letters, digits and '-': no escaping (librdkafka compiles the source itself).
  const pattern = new RegExp(`^${o.topic}-rx-.*`);
  const consumer = consumerOf(kafka, `${o.group}-rx`, { 'topic.metadata.refresh.interval.ms': 1000 });
  const seen = new Map<string, string | null>();
  let assigned: string[] = [];
  let finished!: () => void;
  const done = new Promise<void>((resolve) => (finished = resolve));
  await consumer.connect();
  try {
    await consumer.subscribe({ topics: [pattern] });
    await consumer.run({
      eachMessage: async ({ topic, message }) => {
        seen.set(topic, message.key === null ? null : message.key.toString());
        if (seen.size >= names.length) finished();
      },
    });
    const timer = setTimeout(() => finished(), 60_000);
    await done;
    clearTimeout(timer);
    assigned = [...new Set(consumer.assignment().map((tp) => tp.topic))].sort();
  } finally {
    await consumer.disconnect();
  }
  const got = [...seen.keys()].sort();
  if (got.join(',') !== names.join(',')) report.error(`subscribe(${pattern}) read from [${got.join(', ')}], expected [${names.join(', ')}]`);
  else if (names.some((n) => seen.get(n) !== n)) report.error(`subscribe(${pattern}): unexpected keys ${JSON.stringify([...seen])}`);
  if (assigned.join(',') !== names.join(',')) report.error(`subscribe(${pattern}) assigned [${assigned.join(', ')}], expected [${names.join(', ')}]`);
  return `${pattern.source}: ${got.join(', ')}`;
}

async function listOffsets(admin: KjsAdmin, o: Options, report: OperationReport): Promise<string> {
  const offsets = await admin.fetchTopicOffsets(o.topic, { timeout: 30_000 });
  for (let p = 0; p < o.partitions; p++) {
    const e = offsets.find((x) => x.partition === p);
    const want = partitionRecordCount(o.count, o.partitions, p);
    if (e === undefined || Number(e.low) !== 0 || Number(e.high) !== want) report.error(`fetchTopicOffsets partition ${p}: ${JSON.stringify(e)}, expected low 0, high ${want}`);
  }
  const samples = timestampSamples(o.count);
  for (const i of [...samples, o.count + 1000]) {
    const ts = o.baseTimestamp + i;
    const result = await admin.fetchTopicOffsetsByTimestamp(o.topic, ts, { timeout: 30_000 });
    for (let p = 0; p < o.partitions; p++) {
      const e = result.find((x) => x.partition === p);
      // As kafkajs: no record at or after the timestamp answers the latest offset.
      const exact = expectedOffsetForTimestamp(i, p, o.count, o.partitions);
      const want = exact === -1 ? partitionRecordCount(o.count, o.partitions, p) : exact;
      if (e === undefined || Number(e.offset) !== want) report.error(`fetchTopicOffsetsByTimestamp(${ts}) partition ${p}: ${JSON.stringify(e)}, expected ${want}`);
    }
  }
  return `low (earliest), high (latest), ${samples.length} timestamps + after end`;
}

async function groupLag(admin: KjsAdmin, o: Options, report: OperationReport): Promise<string> {
  const [committed] = await admin.fetchOffsets({ groupId: o.group, topics: [o.topic], timeout: 30_000 });
  const ends = await admin.fetchTopicOffsets(o.topic, { timeout: 30_000 });
  let total = 0;
  for (let p = 0; p < o.partitions; p++) {
    const c = committed?.partitions.find((x) => x.partition === p);
    const end = ends.find((x) => x.partition === p);
    const want = partitionRecordCount(o.count, o.partitions, p);
    if (c === undefined || end === undefined) {
      report.error(`partition ${p}: committed ${JSON.stringify(c)}, end ${JSON.stringify(end)}`);
      continue;
    }
    if (c.error !== null && c.error !== undefined) report.error(`partition ${p}: fetchOffsets error ${String(c.error)}`);
    if (Number(c.offset) !== want) report.error(`partition ${p}: committed ${c.offset}, expected ${want}`);
    const lag = Number(end.high) - Number(c.offset);
    if (lag !== 0) report.error(`partition ${p}: lag ${lag}, expected 0`);
    total += lag;
  }
  const { groups } = await admin.describeGroups([o.group], { timeout: 30_000 });
  const g = groups.find((x) => x.groupId === o.group);
  if (g === undefined || g.error !== undefined && g.error !== null || g.state !== groupStateEmpty || g.members.length !== 0) {
    report.error(`describeGroups after the consumer left: ${JSON.stringify(g)}`);
  }
  const listed = await admin.listGroups({ timeout: 30_000 });
  const entry = listed.groups.find((x) => x.groupId === o.group);
  if (entry === undefined || entry.protocolType !== 'consumer') report.error(`listGroups: ${JSON.stringify(entry)} (${listed.groups.length} groups, ${listed.errors.length} errors)`);
  return `total lag ${total}, group state ${g?.state ?? '?'} (Empty = ${groupStateEmpty}), ${listed.groups.length} groups listed`;
}

async function main(): Promise<number> {
  const o = parseOptions(process.argv.slice(2));
  const { module, version } = loadClient(o.moduleDir);
  const report = new OperationReport(client, `${version} (librdkafka ${module.librdkafkaVersion})`, o.codecs, true, o.count);
  const kafka = kafkaOf(module, o.bootstrap);
  const admin = kafka.admin();
  await admin.connect();
  try {
    await report.op('createTopic', () => createTopic(admin, o));
    await report.op('describeTopics', () => describeTopics(admin, o, report));
    await report.op('produce', () => produce(kafka, o, report));
    await report.op('consumeGroup', () => consume(kafka, o, report));
    await report.op('listTopics', () => listTopics(admin, o, report));
    await report.op('regexSubscribe', () => regexSubscribe(kafka, admin, o, report));
    await report.op('listOffsets', () => listOffsets(admin, o, report));
    await report.op('groupLag', () => groupLag(admin, o, report));
  } finally {
    await admin.disconnect();
  }
  const summary = report.summary();
  process.stdout.write(`${JSON.stringify(summary)}\n`);
  return summary.ok ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stdout.write(`${JSON.stringify({ client, clientVersion: 'unknown', ok: false, operations: [], notes: [], errorCount: 1, errors: [e instanceof Error ? (e.stack ?? e.message) : String(e)] })}\n`);
    process.exit(1);
  },
);
