// Real-client round trip with kafkajs: create the topic (admin), produce N keyed
// records with headers and explicit CreateTime timestamps, consume them from
// offset 0, verify every record (test/clients/content.ts), check
// admin.fetchTopicOffsetsByTimestamp, and print one JSON summary line.
//   node dist/test/clients/kafkajs/round-trip.js --bootstrap 127.0.0.1:9092 --topic t --count 1000
//     [--partitions 3] [--compression none|gzip] [--idempotent] [--group G] [--phase all|produce|consume]
// Exit code 0 only when everything matched.
//
// kafkajs has gzip built in; snappy, lz4 and zstd need codec plugins
// (kafkajs-snappy, kafkajs-lz4, @kafkajs/zstd), which this program does not load.
//
// kafkajs has no public "assign partitions" consumer: its consumer always joins a
// group. The default (assign) mode therefore drives kafkajs's own cluster and
// broker objects (the ones its consumer uses) to send Fetch requests from offset 0
// and decode the record batches; --group uses the public consumer API.
import { parseArgs } from 'node:util';
import type { Kafka } from 'kafkajs';
import {
  RoundTripVerifier,
  defaultBaseTimestamp,
  exactExpectation,
  partitionRecordCount,
  timestampSamples,
  type RoundTripSummary,
} from '../content.js';
import {
  client,
  clientVersion,
  compressionOf,
  consumeInGroup,
  expectedKafkajsOffsetForTimestamp,
  kafkaClient,
  sendRecords,
  toConsumed,
} from './kafkajs-common.js';

interface Options {
  bootstrap: string;
  topic: string;
  count: number;
  partitions: number;
  compression: 'none' | 'gzip';
  baseTimestamp: number;
  idempotent: boolean;
  group: string | undefined;
  phase: 'all' | 'produce' | 'consume';
  create: boolean;
  timeoutMs: number;
  chunk: number;
}

function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      bootstrap: { type: 'string' },
      topic: { type: 'string' },
      count: { type: 'string', default: '1000' },
      partitions: { type: 'string', default: '3' },
      compression: { type: 'string', default: 'none' },
      'base-timestamp': { type: 'string' },
      idempotent: { type: 'boolean', default: false },
      group: { type: 'string' },
      phase: { type: 'string', default: 'all' },
      'no-create': { type: 'boolean', default: false },
      timeout: { type: 'string', default: '300' },
      chunk: { type: 'string', default: '2000' },
    },
  });
  if (values.bootstrap === undefined || values.topic === undefined) throw new Error('--bootstrap and --topic are required');
  const compression = values.compression;
  if (compression !== 'none' && compression !== 'gzip') {
    throw new Error(`kafkajs has no built-in ${compression} codec (only none and gzip; others need plugins such as kafkajs-snappy, kafkajs-lz4, @kafkajs/zstd)`);
  }
  const phase = values.phase;
  if (phase !== 'all' && phase !== 'produce' && phase !== 'consume') throw new Error(`bad --phase ${phase}`);
  return {
    bootstrap: values.bootstrap,
    topic: values.topic,
    count: Number(values.count),
    partitions: Number(values.partitions),
    compression,
    baseTimestamp: values['base-timestamp'] === undefined ? defaultBaseTimestamp() : Number(values['base-timestamp']),
    idempotent: values.idempotent,
    group: values.group,
    phase,
    create: !values['no-create'],
    timeoutMs: Number(values.timeout) * 1000,
    chunk: Number(values.chunk),
  };
}

/** The parts of kafkajs's internal Cluster and Broker the assign mode uses. */
interface FetchedMessage {
  offset: string;
  timestamp: string;
  key: Buffer | null;
  value: Buffer | null;
  headers: Record<string, Buffer | Buffer[] | undefined>;
  isControlRecord?: boolean;
  batchContext?: { timestampType?: number };
}
interface FetchResponse {
  responses: Array<{ topicName: string; partitions: Array<{ partition: number; errorCode: number; messages: FetchedMessage[] }> }>;
}
interface InternalBroker {
  fetch(request: {
    replicaId?: number;
    isolationLevel: number;
    maxWaitTime: number;
    minBytes: number;
    maxBytes: number;
    topics: Array<{ topic: string; partitions: Array<{ partition: number; fetchOffset: string; maxBytes: number }> }>;
  }): Promise<FetchResponse>;
}
interface InternalCluster {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  addTargetTopic(topic: string): Promise<void>;
  refreshMetadata(): Promise<void>;
  findLeaderForPartitions(topic: string, partitions: number[]): Record<string, number[]>;
  findBroker(query: { nodeId: string }): Promise<InternalBroker>;
}
type CreateCluster = (options: { metadataMaxAge?: number; allowAutoTopicCreation?: boolean; isolationLevel?: number }) => InternalCluster;

function internalCluster(kafka: Kafka): InternalCluster {
  const sym = Object.getOwnPropertySymbols(kafka).find((s) => s.description === 'private:Kafka:createCluster');
  const create = sym === undefined ? undefined : (kafka as unknown as Record<symbol, unknown>)[sym];
  if (typeof create !== 'function') throw new Error(`kafkajs ${clientVersion}: internal createCluster not found`);
  return (create as CreateCluster)({ metadataMaxAge: 300_000, allowAutoTopicCreation: false, isolationLevel: 1 });
}

async function produce(kafka: Kafka, o: Options, errors: (msg: string) => void): Promise<number> {
  const producer = kafka.producer({ idempotent: o.idempotent, maxInFlightRequests: 1, allowAutoTopicCreation: !o.create });
  await producer.connect();
  let acknowledged = 0;
  const compression = compressionOf(o.compression);
  try {
    for (let start = 0; start < o.count; start += o.chunk) {
      const end = Math.min(o.count, start + o.chunk);
      await sendRecords(producer, { topic: o.topic, partitions: o.partitions, baseTimestamp: o.baseTimestamp, start, end }, compression, errors);
      acknowledged += end - start;
    }
  } finally {
    await producer.disconnect();
  }
  return acknowledged;
}

async function consumeAssigned(kafka: Kafka, o: Options, verifier: RoundTripVerifier): Promise<void> {
  const cluster = internalCluster(kafka);
  await cluster.connect();
  try {
    await cluster.addTargetTopic(o.topic);
    await cluster.refreshMetadata();
    const partitions = Array.from({ length: o.partitions }, (_, p) => p);
    const leaders = cluster.findLeaderForPartitions(o.topic, partitions);
    const next = new Map<number, number>(partitions.map((p) => [p, 0]));
    const deadline = Date.now() + o.timeoutMs;
    while (!verifier.complete) {
      if (Date.now() > deadline) {
        verifier.error(`timed out after ${o.timeoutMs} ms with ${verifier.consumedCount} of ${o.count} records`);
        return;
      }
      for (const [nodeId, ps] of Object.entries(leaders)) {
        const wanted = ps.filter((p) => (next.get(p) ?? 0) < partitionRecordCount(o.count, o.partitions, p));
        if (wanted.length === 0) continue;
        const broker = await cluster.findBroker({ nodeId });
        const response = await broker.fetch({
          isolationLevel: 1,
          maxWaitTime: 500,
          minBytes: 1,
          maxBytes: 10 * 1024 * 1024,
          topics: [{ topic: o.topic, partitions: wanted.map((p) => ({ partition: p, fetchOffset: String(next.get(p) ?? 0), maxBytes: 1024 * 1024 })) }],
        });
        for (const t of response.responses) {
          for (const pd of t.partitions) {
            if (pd.errorCode !== 0) {
              verifier.error(`fetch partition ${pd.partition}: error ${pd.errorCode}`);
              continue;
            }
            const from = next.get(pd.partition) ?? 0;
            for (const m of pd.messages) {
              // Like kafkajs's consumer: skip records before the fetch offset (a batch
              // starts earlier) and control records.
              if (Number(m.offset) < from || m.isControlRecord === true) continue;
              const { batchContext, ...rest } = m;
              verifier.observe(toConsumed(pd.partition, { ...rest, ...(batchContext?.timestampType === undefined ? {} : { timestampType: batchContext.timestampType }) }));
              next.set(pd.partition, Number(m.offset) + 1);
            }
          }
        }
      }
    }
  } finally {
    await cluster.disconnect();
  }
}

async function checkOffsetsByTimestamp(kafka: Kafka, o: Options, error: (msg: string) => void): Promise<number> {
  const admin = kafka.admin();
  await admin.connect();
  let checked = 0;
  try {
    const queries = [...timestampSamples(o.count), o.count + 1000];
    for (const i of queries) {
      const ts = o.baseTimestamp + i;
      const result = await admin.fetchTopicOffsetsByTimestamp(o.topic, ts);
      for (const { partition, offset } of result) {
        const want = expectedKafkajsOffsetForTimestamp(i, partition, o.count, o.partitions);
        if (Number(offset) !== want) error(`fetchTopicOffsetsByTimestamp(${ts}) partition ${partition}: offset ${offset}, expected ${want}`);
        checked++;
      }
    }
  } finally {
    await admin.disconnect();
  }
  return checked;
}

async function main(): Promise<number> {
  const o = parseOptions(process.argv.slice(2));
  const kafka = kafkaClient('sediment-round-trip', o.bootstrap);
  const verifier = new RoundTripVerifier(o.count, o.partitions, exactExpectation(client, o.baseTimestamp));
  const error = (m: string): void => verifier.error(m);
  let produced = 0;
  let produceMs = 0;
  let consumeMs = 0;
  let listOffsetsChecked = 0;
  let consumedPhase = false;
  try {
    if (o.phase !== 'consume') {
      const t0 = performance.now();
      if (o.create) {
        const admin = kafka.admin();
        await admin.connect();
        try {
          await admin.createTopics({ topics: [{ topic: o.topic, numPartitions: o.partitions, replicationFactor: 1 }], waitForLeaders: true });
        } finally {
          await admin.disconnect();
        }
      }
      produced = await produce(kafka, o, error);
      produceMs = Math.round(performance.now() - t0);
    }
    if (o.phase !== 'produce') {
      consumedPhase = true;
      const t0 = performance.now();
      if (o.group === undefined) await consumeAssigned(kafka, o, verifier);
      else await consumeInGroup(kafka, { topic: o.topic, group: o.group, count: o.count, timeoutMs: o.timeoutMs, commit: 'auto' }, verifier);
      consumeMs = Math.round(performance.now() - t0);
      listOffsetsChecked = await checkOffsetsByTimestamp(kafka, o, error);
    }
  } catch (e) {
    verifier.error(e instanceof Error ? `${e.name}: ${e.message}` : String(e));
  }
  const v = consumedPhase ? verifier.finish() : { consumed: 0, duplicates: 0, missing: 0, ...verifier.report() };
  const summary: RoundTripSummary = {
    client,
    clientVersion,
    compression: o.compression,
    idempotent: o.idempotent,
    mode: o.group === undefined ? 'assign' : 'group',
    topic: o.topic,
    partitions: o.partitions,
    baseTimestamp: o.baseTimestamp,
    produced,
    consumed: v.consumed,
    duplicates: v.duplicates,
    missing: v.missing,
    listOffsetsChecked,
    produceMs,
    consumeMs,
    ok: v.errorCount === 0,
    errorCount: v.errorCount,
    errors: v.errors,
  };
  process.stdout.write(`${JSON.stringify(summary)}\n`);
  return summary.ok ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stdout.write(`${JSON.stringify({ client, ok: false, produced: 0, consumed: 0, errorCount: 1, errors: [String(e)] })}\n`);
    process.exit(1);
  },
);
