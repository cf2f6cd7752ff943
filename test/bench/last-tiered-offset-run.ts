// One round of KIP-1023 (follower.fetch.last.tiered.offset.enable) on a real
// cluster, shared by test/e2e-cluster/last-tiered-offset.e2e.test.ts and
// test/bench/last-tiered-offset.bench.ts. The cluster has three brokers over
// one etcd and one filesystem remote store: broker 2 runs with the config
// off (Kafka's default), broker 3 with it on. A round creates a tiered topic
// whose only replica is broker 1, with small segments and the whole log kept
// locally (local.retention.ms=-2), produces into it and waits until every
// closed segment is uploaded. Then it adds broker 2 and broker 3 as replicas,
// one reassignment (AlterPartitionReassignments) after the other, in the
// order given, and measures for each the record bytes it fetched as a
// follower (sediment_replica_fetch_bytes_total of its /metrics) and the time
// from the reassignment's answer until the leader's metadata shows it in the
// ISR (polled every 50 ms).
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { AdminClient, type ClusterMetadata, type PartitionMetadata } from '../../broker/cli/admin-client.js';
import { BrokerConnection } from '../../broker/cli/broker-connection.js';
import { ErrorCode } from '../../broker/protocol/errors.js';
import { apis } from '../../broker/protocol/messages/index.js';
import { runProcess } from '../clients/common.js';
import type { SedimentCluster } from '../support/sediment-cluster.js';
import { kcatPath } from '../support/tools.js';

export const OFF_BROKER = 2;
export const ON_BROKER = 3;

/** The overrides of the round's brokers: node 3 has the config on. */
export function brokerOverrides(nodeId: number): Readonly<Record<string, string>> {
  return { 'follower.fetch.last.tiered.offset.enable': nodeId === ON_BROKER ? 'true' : 'false' };
}

export interface RoundOptions {
  readonly topic: string;
  readonly records: number;
  readonly recordBytes: number;
  readonly segmentBytes: number;
  /** Which broker is added first. */
  readonly first: typeof OFF_BROKER | typeof ON_BROKER;
  readonly timeoutMs: number;
}

export interface Joined {
  readonly nodeId: number;
  readonly fetchedBytes: number;
  readonly msToIsr: number;
  /** The new replica's local log start (its first local segment's base offset). */
  readonly localStart: bigint;
}

export interface RoundResult {
  readonly topicId: string;
  readonly leaderLogEnd: bigint;
  /** The leader's earliest offset not yet uploaded (ListOffsets -6) when the replicas were added. */
  readonly pendingUploadOffset: bigint;
  readonly uploadedSegments: number;
  readonly leaderLocalBytes: number;
  readonly off: Joined;
  readonly on: Joined;
}

function partitionOf(md: ClusterMetadata, topic: string): PartitionMetadata | undefined {
  return md.topics.find((t) => t.name === topic)?.partitions[0];
}

async function until<T>(what: string, timeoutMs: number, intervalMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() >= deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** Local segment files of `nodeId`'s copy of the partition: base offset and bytes. */
export async function localSegments(cluster: SedimentCluster, nodeId: number, topic: string): Promise<{ base: bigint; bytes: number }[]> {
  const dir = path.join(cluster.broker(nodeId).dataDir, `${topic}-0`);
  const names = await readdir(dir).catch(() => [] as string[]);
  const out: { base: bigint; bytes: number }[] = [];
  for (const n of names.filter((x) => x.endsWith('.log'))) out.push({ base: BigInt(n.slice(0, 20)), bytes: (await stat(path.join(dir, n))).size });
  return out.sort((a, b) => (a.base < b.base ? -1 : a.base > b.base ? 1 : 0));
}

/** sediment_replica_fetch_bytes_total{topic} on `nodeId` (0 before its first fetch). */
export async function fetchedBytes(cluster: SedimentCluster, nodeId: number, topic: string): Promise<number> {
  const url = cluster.broker(nodeId).httpUrl;
  if (url === null) throw new Error(`broker ${nodeId} has no http listener yet`);
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`sediment_replica_fetch_bytes_total{topic="${topic}"}`));
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
}

async function leaderOffset(cluster: SedimentCluster, topic: string, timestamp: bigint): Promise<bigint> {
  const admin = await AdminClient.connect(cluster.broker(1).bootstrap);
  try {
    const [a] = await admin.listOffsets([{ topic, partition: 0, timestamp }]);
    if (a === undefined || a.errorCode !== ErrorCode.NONE) throw new Error(`ListOffsets ${timestamp} of ${topic}: error ${a?.errorCode}`);
    return a.offset;
  } finally {
    admin.close();
  }
}

async function reassign(cluster: SedimentCluster, topic: string, replicas: number[]): Promise<void> {
  const b = cluster.broker(1);
  const conn = await BrokerConnection.connect('127.0.0.1', b.port, { clientId: 'kip1023-round', timeoutMs: 30_000 });
  try {
    const { body } = await conn.send(apis.AlterPartitionReassignments, () => ({ timeoutMs: 30_000, allowReplicationFactorChange: true, topics: [{ name: topic, partitions: [{ partitionIndex: 0, replicas }] }] }));
    const p = body.responses[0]?.partitions[0];
    if (body.errorCode !== ErrorCode.NONE || p === undefined || p.errorCode !== ErrorCode.NONE) throw new Error(`AlterPartitionReassignments ${topic} -> ${replicas.join(',')}: ${body.errorCode}/${p?.errorCode} ${body.errorMessage ?? ''} ${p?.errorMessage ?? ''}`);
  } finally {
    conn.close();
  }
}

/** Reassigns to `replicas` and waits until `added` is in the ISR; the time and bytes it took. */
export async function addReplica(cluster: SedimentCluster, topic: string, replicas: number[], added: number, timeoutMs: number): Promise<Joined> {
  const bytesBefore = await fetchedBytes(cluster, added, topic);
  const start = performance.now();
  await reassign(cluster, topic, replicas);
  await until(`broker ${added} in the ISR of ${topic}`, timeoutMs, 50, async () => {
    const md = await cluster.metadataFrom(1, [topic]).catch(() => undefined);
    const p = md === undefined ? undefined : partitionOf(md, topic);
    return p !== undefined && p.isr.includes(added) && p.replicas.length === replicas.length ? true : undefined;
  });
  const msToIsr = performance.now() - start;
  const segs = await localSegments(cluster, added, topic);
  return { nodeId: added, fetchedBytes: (await fetchedBytes(cluster, added, topic)) - bytesBefore, msToIsr, localStart: segs[0]?.base ?? -1n };
}

export async function kcatProduce(bootstrap: string, topic: string, values: readonly string[]): Promise<void> {
  const input = values.map((v) => `${v}\n`).join('');
  const p = await runProcess(kcatPath, ['-P', '-b', bootstrap, '-t', topic, '-p', '0', '-X', 'acks=all', '-X', 'linger.ms=5', '-X', 'batch.num.messages=20'], { input, timeoutMs: 120_000 });
  if (p.code !== 0) throw new Error(`kcat produce: ${p.stderr}`);
}

export async function kcatValues(bootstrap: string, topic: string): Promise<string[]> {
  const c = await runProcess(kcatPath, ['-C', '-b', bootstrap, '-t', topic, '-p', '0', '-o', 'beginning', '-e', '-q', '-f', '%s\n'], { timeoutMs: 120_000 });
  if (c.code !== 0) throw new Error(`kcat consume: ${c.stderr}`);
  return c.stdout.split('\n').filter((l) => l !== '');
}

export function values(topic: string, records: number, recordBytes: number): string[] {
  return Array.from({ length: records }, (_, i) => `${topic}-${String(i).padStart(7, '0')}-`.padEnd(recordBytes, 'x'));
}

/** Creates the topic on broker 1 alone, fills it, waits for the uploads, then adds both replicas. */
export async function runRound(cluster: SedimentCluster, o: RoundOptions): Promise<RoundResult> {
  const admin = await AdminClient.connect(cluster.broker(1).bootstrap);
  let topicId: string;
  try {
    const configs = new Map([
      ['remote.storage.enable', 'true'],
      ['internal.segment.bytes', String(o.segmentBytes)],
      ['local.retention.ms', '-2'],
      ['local.retention.bytes', '-2'],
      ['retention.ms', '-1'],
    ]);
    const [r] = await admin.createTopics([{ name: o.topic, numPartitions: 1, replicationFactor: 1, configs }]);
    if (r?.errorCode !== ErrorCode.NONE) throw new Error(`create ${o.topic}: ${r?.errorCode} ${r?.errorMessage ?? ''}`);
    topicId = r.topicId;
  } finally {
    admin.close();
  }
  // Placed anywhere: moved, still empty, to broker 1 alone.
  await cluster.untilMetadata(1, [o.topic], (m) => (partitionOf(m, o.topic)?.leader ?? -1) > 0, 20_000, `${o.topic} has a leader`);
  await reassign(cluster, o.topic, [1]);
  await cluster.untilMetadata(1, [o.topic], (m) => partitionOf(m, o.topic)?.leader === 1 && partitionOf(m, o.topic)?.replicas.length === 1, 30_000, `${o.topic} on broker 1 alone`);
  await kcatProduce(cluster.bootstrap, o.topic, values(o.topic, o.records, o.recordBytes));
  // Every closed segment uploaded: the pending offset is the active segment's base.
  const leaderEnd = await leaderOffset(cluster, o.topic, -1n);
  const pending = await until(`${o.topic}: every closed segment uploaded`, o.timeoutMs, 250, async () => {
    const segs = await localSegments(cluster, 1, o.topic);
    const active = segs[segs.length - 1]?.base ?? 0n;
    const p = await leaderOffset(cluster, o.topic, -6n);
    return segs.length > 2 && p === active ? p : undefined;
  });
  const leaderSegs = await localSegments(cluster, 1, o.topic);
  const second = o.first === OFF_BROKER ? ON_BROKER : OFF_BROKER;
  const firstJoined = await addReplica(cluster, o.topic, [1, o.first], o.first, o.timeoutMs);
  const secondJoined = await addReplica(cluster, o.topic, [1, o.first, second], second, o.timeoutMs);
  const off = firstJoined.nodeId === OFF_BROKER ? firstJoined : secondJoined;
  const on = firstJoined.nodeId === ON_BROKER ? firstJoined : secondJoined;
  return {
    topicId,
    leaderLogEnd: leaderEnd,
    pendingUploadOffset: pending,
    uploadedSegments: leaderSegs.length - 1,
    leaderLocalBytes: leaderSegs.reduce((n, s) => n + s.bytes, 0),
    off,
    on,
  };
}
