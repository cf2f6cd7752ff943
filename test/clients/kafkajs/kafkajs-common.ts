// What the two kafkajs programs share: the real-client round trip
// (test/clients/kafkajs/round-trip.ts) and the compatibility-matrix program
// (test/compat/kafkajs/compat.ts). Both produce the records of
// test/clients/content.ts in chunks and check each chunk's base offsets, turn
// kafkajs's messages into ConsumedRecords for the RoundTripVerifier, consume in
// a group until the verifier has every record, and read
// fetchTopicOffsetsByTimestamp answers the kafkajs way.
import { createRequire } from 'node:module';
import { CompressionTypes, Kafka, logLevel, type IHeaders, type Message, type Producer } from 'kafkajs';
import {
  expectedOffsetForTimestamp,
  partitionRecordCount,
  recordHeaders,
  recordKey,
  recordPartition,
  recordTimestamp,
  recordValue,
  type ConsumedRecord,
  type RoundTripVerifier,
} from '../content.js';

export const client = 'kafkajs';
export const clientVersion = (createRequire(import.meta.url)('kafkajs/package.json') as { version: string }).version;

export function kafkaClient(clientId: string, bootstrap: string): Kafka {
  return new Kafka({ clientId, brokers: [bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 8 } });
}

/** Only none and gzip are built into kafkajs; snappy, lz4 and zstd need plugins this project does not load. */
export function compressionOf(codec: string): CompressionTypes {
  if (codec === 'none') return CompressionTypes.None;
  if (codec === 'gzip') return CompressionTypes.GZIP;
  throw new Error(`kafkajs has no built-in ${codec} codec (only none and gzip; others need plugins such as kafkajs-snappy, kafkajs-lz4, @kafkajs/zstd)`);
}

export interface RecordRange {
  readonly topic: string;
  readonly partitions: number;
  readonly baseTimestamp: number;
  /** First record index (inclusive). */
  readonly start: number;
  /** Last record index (exclusive). */
  readonly end: number;
}

/**
 * Sends records [start, end) in one request (acks=all) and checks every
 * partition's answer: no error, and the base offset of the chunk's first record
 * there (record i goes to partition i % P at offset i / P).
 */
export async function sendRecords(producer: Producer, r: RecordRange, compression: CompressionTypes, error: (msg: string) => void): Promise<void> {
  const messages: Message[] = [];
  for (let i = r.start; i < r.end; i++) {
    messages.push({
      partition: recordPartition(i, r.partitions),
      key: recordKey(i),
      value: recordValue(i),
      headers: Object.fromEntries(recordHeaders(i, client)),
      timestamp: String(recordTimestamp(i, r.baseTimestamp)),
    });
  }
  const metadata = await producer.send({ topic: r.topic, messages, acks: -1, compression });
  for (const md of metadata) {
    if (md.errorCode !== 0) error(`produce to partition ${md.partition}: error ${md.errorCode}`);
    // First record of this chunk in partition p: the first i >= start with i % P == p.
    const first = r.start + ((((md.partition - r.start) % r.partitions) + r.partitions) % r.partitions);
    const want = Math.floor(first / r.partitions);
    if (md.baseOffset !== undefined && Number(md.baseOffset) !== want) {
      error(`chunk at record ${r.start}: partition ${md.partition} base offset ${md.baseOffset}, expected ${want}`);
    }
  }
}

type HeaderValue = IHeaders[string];

function headerText(v: HeaderValue): string {
  if (v === undefined) return '<missing>';
  if (Array.isArray(v)) return v.map((b) => b.toString()).join('|');
  return v.toString();
}

/** A kafkajs message as the verifier sees it; createTime only when kafkajs exposes the timestamp type. */
export function toConsumed(
  partition: number,
  m: { offset: string; timestamp: string; key: Buffer | null; value: Buffer | null; headers?: Record<string, HeaderValue>; timestampType?: number },
): ConsumedRecord {
  const headers: Array<[string, string]> = Object.entries(m.headers ?? {}).map(([k, v]) => [k, headerText(v)]);
  return {
    partition,
    offset: Number(m.offset),
    key: m.key === null ? null : m.key.toString(),
    value: m.value === null ? null : m.value.toString(),
    headers,
    timestamp: Number(m.timestamp),
    ...(m.timestampType === undefined ? {} : { createTime: m.timestampType === 0 }),
  };
}

export interface GroupConsumeOptions {
  readonly topic: string;
  readonly group: string;
  readonly count: number;
  readonly timeoutMs: number;
  /**
   * 'auto': kafkajs's auto-commit; 'eachBatch': autoCommit off and an explicit
   * commitOffsets after every non-empty batch.
   */
  readonly commit: 'auto' | 'eachBatch';
}

/**
 * Subscribes from the beginning in a consumer group and feeds the verifier until
 * it has every record (or the timeout, recorded as a verifier error). Returns the
 * explicit commits made.
 */
export async function consumeInGroup(kafka: Kafka, o: GroupConsumeOptions, verifier: RoundTripVerifier): Promise<number> {
  const consumer = kafka.consumer({ groupId: o.group, maxWaitTimeInMs: 500 });
  let commits = 0;
  await consumer.connect();
  try {
    await consumer.subscribe({ topics: [o.topic], fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        verifier.error(`timed out after ${o.timeoutMs} ms with ${verifier.consumedCount} of ${o.count} records`);
        resolve();
      }, o.timeoutMs);
      consumer
        .run({
          autoCommit: o.commit === 'auto',
          eachBatch: async ({ batch, resolveOffset, heartbeat }) => {
            for (const m of batch.messages) {
              verifier.observe(toConsumed(batch.partition, m));
              resolveOffset(m.offset);
            }
            if (o.commit === 'eachBatch' && batch.messages.length > 0) {
              await consumer.commitOffsets([{ topic: o.topic, partition: batch.partition, offset: String(Number(batch.lastOffset()) + 1) }]);
              commits++;
            }
            await heartbeat();
            if (verifier.complete) {
              clearTimeout(timer);
              resolve();
            }
          },
        })
        .catch(reject);
    });
  } finally {
    await consumer.disconnect();
  }
  return commits;
}

/**
 * The offset admin.fetchTopicOffsetsByTimestamp should give for record i's
 * timestamp (i may lie past the end): kafkajs substitutes the high watermark
 * when the broker answers -1.
 */
export function expectedKafkajsOffsetForTimestamp(i: number, partition: number, count: number, partitions: number): number {
  const expected = expectedOffsetForTimestamp(i, partition, count, partitions);
  return expected === -1 ? partitionRecordCount(count, partitions, partition) : expected;
}
