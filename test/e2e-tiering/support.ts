// Shared pieces of the tiering end-to-end suites: a `sediment start` child
// process tiering into a real MinIO (test/support/minio.ts), topics with small
// segments, and independent views of what the broker did: the bucket listed
// with the `minio` npm client (keys parsed here by their documented layout,
// not by the broker's object-keys module), the partition directories on disk,
// and ListOffsets through our own admin client (-2, -4, -5 and timestamps).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { Kafka, logLevel } from 'kafkajs';
import { AdminClient, type OffsetAnswer } from '../../broker/cli/admin-client.js';
import { BrokerConnection } from '../../broker/cli/broker-connection.js';
import { apis, ZERO_UUID } from '../../broker/protocol/messages/index.js';
import { deserializeRemoteLogMetadata, type RemoteLogMetadataEvent } from '../../metadata/remote-log-metadata/index.js';
import { recordHeaders, recordKey, recordValue } from '../clients/content.js';
import { kcatPath } from '../support/tools.js';
import type { MinioServer } from '../support/minio.js';
import { startSediment, type LogLine, type SedimentProcess } from '../support/sediment.js';

/** Broker settings for a broker tiering into `minio` under `prefix` (keys start with it). */
export function tieredOverrides(minio: MinioServer, prefix: string, extra: Readonly<Record<string, string>> = {}): Record<string, string> {
  return {
    'remote.log.storage.system.enable': 'true',
    'remote.log.storage.url': `s3://${minio.bucket}/${prefix}`,
    'rsm.config.s3.endpoint': minio.endpoint,
    'rsm.config.s3.region': minio.region,
    'rsm.config.s3.path.style.access': 'true',
    'rsm.config.s3.access.key.id': minio.accessKey,
    'rsm.config.s3.secret.access.key': minio.secretKey,
    // A store that is down or frozen must fail a copy in seconds, not minutes.
    'rsm.config.s3.request.timeout.ms': '5000',
    'rsm.config.s3.connection.timeout.ms': '2000',
    'rsm.config.s3.retry.max.attempts': '3',
    'rsm.config.s3.retry.backoff.ms': '50',
    'rsm.config.s3.retry.backoff.max.ms': '500',
    'remote.log.manager.task.interval.ms': '1000',
    'log.retention.check.interval.ms': '1000',
    ...extra,
  };
}

export async function startTieredBroker(
  minio: MinioServer,
  prefix: string,
  options: { overrides?: Readonly<Record<string, string>>; dataDir?: string } = {},
): Promise<SedimentProcess> {
  const broker = await startSediment({
    overrides: tieredOverrides(minio, prefix, options.overrides),
    ...(options.dataDir === undefined ? {} : { dataDir: options.dataDir }),
  });
  broker.onUnexpectedExit = (info, logs) => {
    console.error(`sediment exited unexpectedly (${info.code ?? info.signal}):\n${logs.tail()}`);
  };
  return broker;
}

/** Topic configs of a tiered topic with small segments and a short local retention. */
export function tieredTopicConfigs(segmentBytes: number, extra: Readonly<Record<string, string>> = {}): Record<string, string> {
  return {
    'remote.storage.enable': 'true',
    // segment.bytes has a 1 MiB floor; internal.segment.bytes (Kafka's hidden key) goes below it.
    ...(segmentBytes >= 1_048_576 ? { 'segment.bytes': String(segmentBytes) } : { 'internal.segment.bytes': String(segmentBytes) }),
    'local.retention.ms': '1000',
    'local.retention.bytes': String(2 * segmentBytes),
    ...extra,
  };
}

/** CreateTopics through kafkajs (an independent client), waiting for leaders. */
export async function createTopic(bootstrap: string, topic: string, partitions: number, configs: Readonly<Record<string, string>>): Promise<void> {
  const kafka = new Kafka({ clientId: 'tiering-e2e-admin', brokers: [bootstrap], logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  try {
    const created = await admin.createTopics({
      topics: [{ topic, numPartitions: partitions, replicationFactor: 1, configEntries: Object.entries(configs).map(([name, value]) => ({ name, value })) }],
      waitForLeaders: true,
    });
    assert.equal(created, true, `topic ${topic} created`);
  } finally {
    await admin.disconnect();
  }
}

// ---- the bucket, read with the minio client ----

export interface BucketObject {
  readonly key: string;
  readonly size: number;
  readonly lastModified: Date;
}

/** A remote segment object, by the documented key layout `<prefix><topic>-<topicId>/<partition>/<baseOffset:20>-<segmentId>.<kind>`. */
export interface SegmentObject extends BucketObject {
  readonly topic: string;
  readonly topicId: string;
  readonly partition: number;
  readonly baseOffset: bigint;
  readonly segmentId: string;
  readonly kind: string;
}

const KEY_LAYOUT = /^(.+)-([A-Za-z0-9_-]{22})\/(\d+)\/(\d{20})-([A-Za-z0-9_-]{22})\.([a-z-]+)$/;

export async function listBucket(minio: MinioServer, prefix: string): Promise<BucketObject[]> {
  const client = minio.client();
  const out: BucketObject[] = [];
  const stream = client.listObjectsV2(minio.bucket, prefix, true);
  for await (const item of stream as AsyncIterable<{ name?: string; size?: number; lastModified?: Date }>) {
    if (item.name === undefined) continue;
    out.push({ key: item.name, size: item.size ?? 0, lastModified: item.lastModified ?? new Date(0) });
  }
  return out;
}

/** Every object under `prefix`, parsed; an object that does not follow the layout fails the test. */
export async function segmentObjects(minio: MinioServer, prefix: string): Promise<SegmentObject[]> {
  return (await listBucket(minio, prefix)).map((o) => {
    const m = KEY_LAYOUT.exec(o.key.slice(prefix.length));
    assert.ok(m !== null, `bucket key outside the layout: ${o.key}`);
    const [, topic, topicId, partition, baseOffset, segmentId, kind] = m as unknown as [string, string, string, string, string, string, string];
    return { ...o, topic, topicId, partition: Number(partition), baseOffset: BigInt(baseOffset), segmentId, kind };
  });
}

export interface BucketSegment {
  readonly partition: number;
  readonly baseOffset: bigint;
  readonly segmentId: string;
  readonly kinds: ReadonlySet<string>;
  /** Size of the `.log` object (-1 when absent). */
  readonly dataSize: number;
  readonly complete: boolean;
}

/** The objects grouped by segment; complete = manifest present (written last). */
export function groupSegments(objects: readonly SegmentObject[], topic: string): BucketSegment[] {
  const by = new Map<string, { partition: number; baseOffset: bigint; segmentId: string; kinds: Set<string>; dataSize: number }>();
  for (const o of objects) {
    if (o.topic !== topic) continue;
    const k = `${o.partition}/${o.segmentId}`;
    let s = by.get(k);
    if (s === undefined) {
      s = { partition: o.partition, baseOffset: o.baseOffset, segmentId: o.segmentId, kinds: new Set(), dataSize: -1 };
      by.set(k, s);
    }
    s.kinds.add(o.kind);
    if (o.kind === 'log') s.dataSize = o.size;
  }
  return [...by.values()]
    .map((s) => ({ ...s, complete: s.kinds.has('manifest') }))
    .sort((a, b) => a.partition - b.partition || (a.baseOffset < b.baseOffset ? -1 : a.baseOffset > b.baseOffset ? 1 : 0));
}

// ---- the local tier ----

export interface LocalSegment {
  readonly baseOffset: bigint;
  readonly size: number;
}

/** The `.log` files of a partition directory, oldest first. */
export function localSegments(dataDir: string, topic: string, partition: number): LocalSegment[] {
  const dir = path.join(dataDir, `${topic}-${partition}`);
  return readdirSync(dir)
    .filter((f) => /^\d{20}\.log$/.test(f))
    .map((f) => ({ baseOffset: BigInt(f.slice(0, 20)), size: statSync(path.join(dir, f)).size }))
    .sort((a, b) => (a.baseOffset < b.baseOffset ? -1 : a.baseOffset > b.baseOffset ? 1 : 0));
}

// ---- ListOffsets through our admin client ----

export const Spec = { latest: -1n, earliest: -2n, maxTimestamp: -3n, earliestLocal: -4n, latestTiered: -5n } as const;

/** One ListOffsets answer per partition, in partition order; a non-zero error code fails. */
export async function listOffsets(bootstrap: string, topic: string, partitions: number, timestamp: bigint): Promise<OffsetAnswer[]> {
  const admin = await AdminClient.connect(bootstrap, { clientId: 'tiering-e2e' });
  try {
    const answers = await admin.listOffsets(Array.from({ length: partitions }, (_, partition) => ({ topic, partition, timestamp })));
    answers.sort((a, b) => a.partition - b.partition);
    for (const a of answers) assert.equal(a.errorCode, 0, `ListOffsets ${timestamp} ${topic}-${a.partition}: error ${a.errorCode}`);
    return answers;
  } finally {
    admin.close();
  }
}

export async function offsetsOf(bootstrap: string, topic: string, partitions: number, timestamp: bigint): Promise<bigint[]> {
  return (await listOffsets(bootstrap, topic, partitions, timestamp)).map((a) => a.offset);
}

/** -2, -4, -5 and -1 of every partition. */
export interface TierOffsets {
  readonly earliest: bigint[];
  readonly earliestLocal: bigint[];
  readonly latestTiered: bigint[];
  readonly latest: bigint[];
}

export async function tierOffsets(bootstrap: string, topic: string, partitions: number): Promise<TierOffsets> {
  const [earliest, earliestLocal, latestTiered, latest] = await Promise.all(
    [Spec.earliest, Spec.earliestLocal, Spec.latestTiered, Spec.latest].map((s) => offsetsOf(bootstrap, topic, partitions, s)),
  );
  return { earliest: earliest!, earliestLocal: earliestLocal!, latestTiered: latestTiered!, latest: latest! };
}

// ---- waiting ----

export interface WaitOptions {
  readonly timeoutMs: number;
  /** Re-check at least this often (the bucket and the disk send no events). Default 250. */
  readonly intervalMs?: number;
  /** Re-check as soon as the broker logs a line with one of these messages. */
  readonly broker?: SedimentProcess;
  readonly wakeOn?: readonly string[];
}

/** Thrown by a waitFor check: stop waiting at once (the awaited state can no longer come). */
export class GiveUp extends Error {}

/**
 * Resolves with the first truthy result of `check`, re-checked when the broker
 * logs a matching line or after `intervalMs`; fails with `what` and the last
 * result after `timeoutMs`.
 */
export async function waitFor<T>(what: string, check: () => Promise<T | undefined | false> | T | undefined | false, options: WaitOptions): Promise<T> {
  const deadline = performance.now() + options.timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const r = await check();
      if (r !== undefined && r !== false) return r;
      last = r;
    } catch (e) {
      if (e instanceof GiveUp) throw e;
      last = e;
    }
    const left = deadline - performance.now();
    if (left <= 0) {
      const tail = options.broker === undefined ? '' : `\nbroker log tail:\n${options.broker.logs.tail(20)}`;
      throw new Error(`timed out after ${options.timeoutMs} ms waiting for ${what} (last: ${last instanceof Error ? last.message : String(last)})${tail}`);
    }
    const wakeOn = options.wakeOn;
    const logLine: Promise<LogLine | void> =
      options.broker !== undefined && wakeOn !== undefined ? options.broker.logs.next((l) => l.msg !== undefined && wakeOn.includes(l.msg)) : new Promise<void>(() => {});
    let timer: NodeJS.Timeout | undefined;
    // Bounded re-check for state with no event (bucket contents, files on disk).
    const tick = new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.min(left, options.intervalMs ?? 250))));
    await Promise.race([logLine, tick]);
    clearTimeout(timer);
  }
}

/** The log lines that mean tiering state changed. */
export const TIERING_EVENTS = ['remote segment copy finished', 'remote segment copy failed', 'deleting segment', 'remote segment deleted'] as const;

/**
 * Waits until every partition is fully tiered: the highest remote offset (-5) is
 * the last offset before the active segment, and only the active segment is
 * left on disk. Returns the -5 answers.
 */
export async function waitFullyTiered(broker: SedimentProcess, topic: string, partitions: number, timeoutMs: number): Promise<bigint[]> {
  return waitFor(
    `${topic}: every closed segment remote and gone locally`,
    async () => {
      const tiered = await offsetsOf(broker.bootstrap, topic, partitions, Spec.latestTiered);
      for (let p = 0; p < partitions; p++) {
        const local = localSegments(broker.dataDir, topic, p);
        const active = local[local.length - 1];
        if (local.length !== 1 || active === undefined || tiered[p] !== active.baseOffset - 1n) return undefined;
      }
      return tiered;
    },
    { timeoutMs, intervalMs: 500, broker, wakeOn: TIERING_EVENTS },
  );
}

/** Count of broker log lines (current run) with message `msg`, over the collector's kept lines. */
export function countLines(lines: readonly LogLine[], msg: string, filter: (l: LogLine) => boolean = () => true): number {
  return lines.filter((l) => l.msg === msg && filter(l)).length;
}

export function uniquePrefix(name: string): string {
  return `${name}-${Date.now().toString(36)}${Math.floor(Math.random() * 1e6).toString(36)}/`;
}

export function elapsed(startMs: number): string {
  return `${((performance.now() - startMs) / 1000).toFixed(1)} s`;
}

/** Whether the broker runs, and its recent warnings and errors: context for a failed client run. */
export function brokerState(broker: SedimentProcess): string {
  const problems = broker.logs.problems.slice(-15).map((l) => JSON.stringify(l).slice(0, 600));
  const exit = broker.exit === null ? 'running' : `exited (${broker.exit.code ?? broker.exit.signal})`;
  return `broker ${exit}; last warnings/errors:\n${problems.join('\n')}\nother output:\n${broker.logs.other.slice(-10).join('\n')}`;
}

// ---- reading records back ----

/** The program that produced the records (round_trip.py's headers carry it). */
export const PYTHON_CLIENT = 'confluent-kafka-python';

export interface ReadRecord {
  readonly partition: number;
  readonly offset: number;
  readonly key: string | null;
  readonly value: string | null;
  readonly headers: ReadonlyArray<readonly [string, string]>;
  readonly timestamp: number;
}

/**
 * What must be at (partition, offset) of a fresh topic filled by
 * runPythonRoundTrip (test/clients/content.ts); null when it matches.
 */
export function recordMismatch(r: ReadRecord, partitions: number, baseTimestamp: number): string | null {
  const i = r.partition + r.offset * partitions;
  const where = `partition ${r.partition} offset ${r.offset}`;
  if (r.key !== recordKey(i)) return `${where}: key ${JSON.stringify(r.key)}, expected ${recordKey(i)}`;
  if (r.value !== recordValue(i)) return `${where}: value of record ${i} differs`;
  const want = recordHeaders(i, PYTHON_CLIENT);
  if (r.headers.length !== want.length || r.headers.some((h, k) => h[0] !== want[k]?.[0] || h[1] !== want[k]?.[1])) {
    return `${where}: headers ${JSON.stringify(r.headers)}, expected ${JSON.stringify(want)}`;
  }
  if (r.timestamp !== baseTimestamp + i) return `${where}: timestamp ${r.timestamp}, expected ${baseTimestamp + i}`;
  return null;
}

export interface KcatConsumer {
  /** Resolves when kcat exits (at the end of the partition with `-e`, or when stopped). */
  readonly done: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>;
  readonly records: number;
  stop(): void;
}

/**
 * `kcat -C -J` (librdkafka) on one partition from `offset`, exiting at its end
 * (`-e`) or after `count` records; each record goes to `onRecord` as it arrives.
 */
export function kcatConsume(options: {
  bootstrap: string;
  topic: string;
  partition: number;
  offset: bigint;
  count?: number;
  exitAtEnd?: boolean;
  timeoutMs: number;
  /** librdkafka settings (-X). */
  config?: Readonly<Record<string, string>>;
  onRecord: (r: ReadRecord) => void;
}): KcatConsumer {
  const args = ['-C', '-b', options.bootstrap, '-t', options.topic, '-p', String(options.partition), '-o', options.offset.toString(), '-q', '-J', '-X', 'fetch.wait.max.ms=100'];
  for (const [k, v] of Object.entries(options.config ?? {})) args.push('-X', `${k}=${v}`);
  if (options.exitAtEnd !== false) args.push('-e');
  if (options.count !== undefined) args.push('-c', String(options.count));
  const child = spawn(kcatPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let records = 0;
  const stderr: Buffer[] = [];
  child.stderr.on('data', (b: Buffer) => stderr.push(b));
  const lines = createInterface({ input: child.stdout });
  lines.on('line', (line) => {
    const e = JSON.parse(line) as { partition: number; offset: number; ts: number; headers?: string[]; key: string | null; payload: string | null };
    const h = e.headers ?? [];
    const headers: Array<[string, string]> = [];
    for (let k = 0; k + 1 < h.length; k += 2) headers.push([h[k]!, h[k + 1]!]);
    records++;
    options.onRecord({ partition: e.partition, offset: e.offset, key: e.key, value: e.payload, headers, timestamp: e.ts });
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve) => {
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stderr: Buffer.concat(stderr).toString('utf8') });
    });
  });
  return {
    done,
    get records() {
      return records;
    },
    stop: () => child.kill('SIGTERM'),
  };
}

/** Reads [offset, end of partition) with kcat and checks every record against the produced content; returns how many. */
export async function readAndVerify(o: { bootstrap: string; topic: string; partition: number; offset: bigint; partitions: number; baseTimestamp: number; timeoutMs: number }): Promise<number> {
  const problems: string[] = [];
  let next = Number(o.offset);
  const c = kcatConsume({
    bootstrap: o.bootstrap,
    topic: o.topic,
    partition: o.partition,
    offset: o.offset,
    timeoutMs: o.timeoutMs,
    onRecord: (r) => {
      if (r.offset !== next) problems.push(`partition ${r.partition}: offset ${r.offset}, expected ${next}`);
      next = r.offset + 1;
      const m = recordMismatch(r, o.partitions, o.baseTimestamp);
      if (m !== null) problems.push(m);
    },
  });
  const end = await c.done;
  assert.equal(end.code, 0, `kcat -C ${o.topic}-${o.partition} from ${o.offset}: exit ${end.code ?? end.signal}: ${end.stderr.slice(-2000)}`);
  assert.deepEqual(problems.slice(0, 10), [], `${o.topic}-${o.partition} from ${o.offset}: ${problems.length} problems`);
  return c.records;
}

// ---- one raw Fetch, to see the error code a client would get ----

export interface FetchAnswer {
  readonly errorCode: number;
  readonly recordBytes: number;
  readonly highWatermark: bigint;
  readonly logStartOffset: bigint;
  readonly elapsedMs: number;
}

export async function fetchOnce(bootstrap: string, topic: string, partition: number, offset: bigint, maxWaitMs = 100): Promise<FetchAnswer> {
  const [host, port] = bootstrap.split(':') as [string, string];
  const conn = await BrokerConnection.connect(host, Number(port), { clientId: 'tiering-e2e-fetch', timeoutMs: 60_000 });
  try {
    const started = performance.now();
    const { body } = await conn.send(
      apis.Fetch,
      () => ({
        replicaId: -1,
        maxWaitMs,
        minBytes: 1,
        maxBytes: 1_048_576,
        isolationLevel: 0,
        sessionId: 0,
        sessionEpoch: -1,
        topics: [{ topic, topicId: ZERO_UUID, partitions: [{ partition, currentLeaderEpoch: -1, fetchOffset: offset, lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: 1_048_576 }] }],
        forgottenTopicsData: [],
        rackId: '',
      }),
      { max: 12 },
    );
    const elapsedMs = performance.now() - started;
    const p = body.responses[0]?.partitions[0];
    assert.ok(p !== undefined, 'a partition in the Fetch response');
    return { errorCode: p.errorCode, recordBytes: p.records?.length ?? 0, highWatermark: p.highWatermark, logStartOffset: p.logStartOffset, elapsedMs };
  } finally {
    conn.close();
  }
}

// ---- the remote log metadata topic, read by kafkajs ----

export const REMOTE_LOG_METADATA_TOPIC = '__remote_log_metadata';

export interface MetadataRecord {
  readonly partition: number;
  readonly offset: string;
  readonly event: RemoteLogMetadataEvent;
}

/** Every record of `__remote_log_metadata` up to the current end, decoded (Kafka's RemoteLogMetadataSerde format). */
export async function readRemoteLogMetadata(bootstrap: string): Promise<MetadataRecord[]> {
  const kafka = new Kafka({ clientId: 'tiering-e2e-metadata', brokers: [bootstrap], logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  const ends = new Map<number, bigint>();
  try {
    for (const p of await admin.fetchTopicOffsets(REMOTE_LOG_METADATA_TOPIC)) if (BigInt(p.high) > BigInt(p.low)) ends.set(p.partition, BigInt(p.high));
  } finally {
    await admin.disconnect();
  }
  const out: MetadataRecord[] = [];
  if (ends.size === 0) return out;
  const consumer = kafka.consumer({ groupId: `tiering-e2e-metadata-${Date.now()}-${Math.random()}` });
  await consumer.connect();
  try {
    await consumer.subscribe({ topic: REMOTE_LOG_METADATA_TOPIC, fromBeginning: true });
    const remaining = new Set(ends.keys());
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`reading ${REMOTE_LOG_METADATA_TOPIC} timed out; partitions left: ${[...remaining].join(',')}`)), 60_000);
      consumer
        .run({
          eachMessage: async ({ partition, message }) => {
            if (message.value !== null) out.push({ partition, offset: message.offset, event: deserializeRemoteLogMetadata(message.value) });
            if (BigInt(message.offset) + 1n >= (ends.get(partition) ?? 0n)) remaining.delete(partition);
            if (remaining.size === 0) {
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
  return out;
}

/** Each segment's states in metadata order, by segment id, for one topic. */
export function segmentHistories(records: readonly MetadataRecord[], topic: string): Map<string, { partition: number; startOffset: bigint; endOffset: bigint; states: string[] }> {
  const sorted = [...records].sort((a, b) => a.partition - b.partition || Number(BigInt(a.offset) - BigInt(b.offset)));
  const out = new Map<string, { partition: number; startOffset: bigint; endOffset: bigint; states: string[] }>();
  for (const { event } of sorted) {
    if (event.type === 'segment' && event.metadata.remoteLogSegmentId.topicIdPartition.topic === topic) {
      const m = event.metadata;
      out.set(m.remoteLogSegmentId.id, { partition: m.remoteLogSegmentId.topicIdPartition.partition, startOffset: m.startOffset, endOffset: m.endOffset, states: [m.state] });
    } else if (event.type === 'segmentUpdate' && event.update.remoteLogSegmentId.topicIdPartition.topic === topic) {
      out.get(event.update.remoteLogSegmentId.id)?.states.push(event.update.state);
    }
  }
  return out;
}
