// Compatibility-matrix program for kafkajs (npm), run as a child process:
//   node dist/test/compat/kafkajs/compat.js --bootstrap h:p --topic t --group g [--count 50000] [--codecs none,gzip]
// Against one broker it creates the topic (admin), produces N keyed records with
// headers and CreateTime timestamps, one slice per codec kafkajs has built in
// (none, gzip), with the idempotent producer; consumes them in a consumer group
// committing after every batch, verifying every record (test/clients/content.ts);
// lists offsets (fetchTopicOffsets: low and high, fetchTopicOffsetsByTimestamp)
// and the group's lag (fetchOffsets against the high watermarks, describeGroups).
// Prints one JSON summary line last (test/compat/summary.ts).
import { parseArgs } from 'node:util';
import type { Admin, Kafka } from 'kafkajs';
import { client, clientVersion, compressionOf, consumeInGroup, expectedKafkajsOffsetForTimestamp, kafkaClient, sendRecords } from '../../clients/kafkajs/kafkajs-common.js';
import {
  RoundTripVerifier,
  defaultBaseTimestamp,
  exactExpectation,
  partitionRecordCount,
  timestampSamples,
} from '../../clients/content.js';
import { OperationReport, codecSlices } from '../summary.js';

interface Options {
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
      bootstrap: { type: 'string' },
      topic: { type: 'string' },
      group: { type: 'string' },
      count: { type: 'string', default: '50000' },
      partitions: { type: 'string', default: '3' },
      codecs: { type: 'string', default: 'none,gzip' },
      'base-timestamp': { type: 'string' },
      'timeout-ms': { type: 'string', default: '240000' },
    },
  });
  if (values.bootstrap === undefined || values.topic === undefined || values.group === undefined) throw new Error('--bootstrap, --topic and --group are required');
  return {
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

async function createTopic(admin: Admin, o: Options): Promise<string> {
  const created = await admin.createTopics({ topics: [{ topic: o.topic, numPartitions: o.partitions, replicationFactor: 1 }], waitForLeaders: true });
  if (!created) throw new Error(`createTopics answered false: ${o.topic} already exists`);
  return `${o.partitions} partitions`;
}

async function produce(kafka: Kafka, o: Options, report: OperationReport): Promise<string> {
  const parts: string[] = [];
  const chunk = 2000;
  for (const { codec, from, to } of codecSlices(o.count, o.codecs)) {
    const compression = compressionOf(codec);
    // kafkajs's idempotent producer allows one request in flight.
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
    await producer.connect();
    try {
      for (let start = from; start < to; start += chunk) {
        const range = { topic: o.topic, partitions: o.partitions, baseTimestamp: o.baseTimestamp, start, end: Math.min(to, start + chunk) };
        await sendRecords(producer, range, compression, (m) => report.error(m));
      }
    } finally {
      await producer.disconnect();
    }
    parts.push(`${codec} ${to - from}`);
  }
  return `${o.count} records (${parts.join(', ')}), idempotent`;
}

async function consume(kafka: Kafka, o: Options, report: OperationReport): Promise<string> {
  const verifier = new RoundTripVerifier(o.count, o.partitions, exactExpectation(client, o.baseTimestamp));
  const commits = await consumeInGroup(kafka, { topic: o.topic, group: o.group, count: o.count, timeoutMs: o.timeoutMs, commit: 'eachBatch' }, verifier);
  const v = verifier.finish();
  for (const e of v.errors) report.error(e);
  if (v.errorCount > v.errors.length) report.error(`${v.errorCount - v.errors.length} more verification errors`);
  return `${v.consumed} records, ${commits} commits`;
}

async function listOffsets(admin: Admin, o: Options, report: OperationReport): Promise<string> {
  const offsets = await admin.fetchTopicOffsets(o.topic);
  for (let p = 0; p < o.partitions; p++) {
    const e = offsets.find((x) => x.partition === p);
    const want = partitionRecordCount(o.count, o.partitions, p);
    if (e === undefined || Number(e.low) !== 0 || Number(e.high) !== want) report.error(`fetchTopicOffsets partition ${p}: ${JSON.stringify(e)}, expected low 0, high ${want}`);
  }
  const samples = timestampSamples(o.count);
  for (const i of [...samples, o.count + 1000]) {
    const ts = o.baseTimestamp + i;
    const result = await admin.fetchTopicOffsetsByTimestamp(o.topic, ts);
    for (let p = 0; p < o.partitions; p++) {
      const e = result.find((x) => x.partition === p);
      const want = expectedKafkajsOffsetForTimestamp(i, p, o.count, o.partitions);
      if (e === undefined || Number(e.offset) !== want) report.error(`fetchTopicOffsetsByTimestamp(${ts}) partition ${p}: ${JSON.stringify(e)}, expected ${want}`);
    }
  }
  return `low (earliest), high (latest), ${samples.length} timestamps + after end`;
}

async function groupLag(admin: Admin, o: Options, report: OperationReport): Promise<string> {
  const [committed] = await admin.fetchOffsets({ groupId: o.group, topics: [o.topic] });
  const ends = await admin.fetchTopicOffsets(o.topic);
  let total = 0;
  for (let p = 0; p < o.partitions; p++) {
    const c = committed?.partitions.find((x) => x.partition === p);
    const end = ends.find((x) => x.partition === p);
    const want = partitionRecordCount(o.count, o.partitions, p);
    if (c === undefined || end === undefined) {
      report.error(`partition ${p}: committed ${JSON.stringify(c)}, end ${JSON.stringify(end)}`);
      continue;
    }
    if (Number(c.offset) !== want) report.error(`partition ${p}: committed ${c.offset}, expected ${want}`);
    const lag = Number(end.high) - Number(c.offset);
    if (lag !== 0) report.error(`partition ${p}: lag ${lag}, expected 0`);
    total += lag;
  }
  const { groups } = await admin.describeGroups([o.group]);
  const g = groups.find((x) => x.groupId === o.group);
  if (g === undefined || g.state !== 'Empty' || g.members.length !== 0) report.error(`group after the consumer left: ${JSON.stringify(g)}`);
  return `total lag ${total}, group ${g?.state ?? '?'}`;
}

async function main(): Promise<number> {
  const o = parseOptions(process.argv.slice(2));
  const report = new OperationReport(client, clientVersion, o.codecs, true, o.count);
  const kafka = kafkaClient('sediment-compat-kafkajs', o.bootstrap);
  const admin = kafka.admin();
  await admin.connect();
  try {
    await report.op('createTopic', () => createTopic(admin, o));
    await report.op('produce', () => produce(kafka, o, report));
    await report.op('consumeGroup', () => consume(kafka, o, report));
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
    process.stdout.write(`${JSON.stringify({ client, clientVersion, ok: false, operations: [], notes: [], errorCount: 1, errors: [String(e)] })}\n`);
    process.exit(1);
  },
);
