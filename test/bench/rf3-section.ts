// The replication-factor-3 section of `npm run bench`: three Sediment brokers
// over one etcd (test/support/sediment-cluster.ts), then three Apache Kafka KRaft
// nodes (kafka-cluster.ts), driven by the same ProducerPerformance /
// ConsumerPerformance as the single-broker section (load.ts). Figures are
// assembled by rf3-report.ts.
import os from 'node:os';
import { startEtcd } from '../support/etcd.js';
import { startSedimentCluster } from '../support/sediment-cluster.js';
import { cpuKey, record, workloadLabel, type Workload } from './bench-report.js';
import { processCpuSeconds } from './broker-processes.js';
import { startKafkaCluster } from './kafka-cluster.js';
import { BATCH_SIZE, consume, createTopics, LINGER_MS, produce, RECORD_SIZE, type Compression, type ProduceSpec } from './load.js';
import { cpuMsPerMiB, emptyRf3Results, IDLE_WINDOW_S, RF3_COMPRESSIONS, RF3_MIN_INSYNC_REPLICAS, RF3_REPLICATION_FACTOR, RF3_WORKLOADS, type Rf3Results } from './rf3-report.js';

export interface Rf3Options {
  readonly rounds: number;
  readonly records: number;
  readonly kafkaHeap: string;
  readonly log: (msg: string) => void;
}

interface Rf3Cluster {
  readonly name: string;
  /** Every broker, comma-separated. */
  readonly bootstrap: string;
  readonly brokerPids: readonly number[];
  /** Sediment's etcd; none for Kafka (its controllers live in the broker JVMs). */
  readonly etcdPid: number | undefined;
  stop(): Promise<void>;
}

async function startSedimentRf3(): Promise<Rf3Cluster> {
  const etcd = await startEtcd();
  try {
    const c = await startSedimentCluster({ etcd, brokers: 3, prefix: `/bench-rf3-${process.pid}-${Date.now()}`, overrides: { 'group.initial.rebalance.delay.ms': '0' } });
    return {
      name: 'Sediment x3',
      bootstrap: c.bootstrap,
      brokerPids: c.brokers.map((b) => b.pid),
      etcdPid: etcd.pid,
      stop: async () => {
        await c.close();
        await etcd.stop();
      },
    };
  } catch (e) {
    await etcd.stop();
    throw e;
  }
}

async function startKafkaRf3(heap: string): Promise<Rf3Cluster> {
  const k = await startKafkaCluster({ nodes: 3, heap });
  return { name: 'Kafka x3', bootstrap: k.bootstrap, brokerPids: k.nodes.map((n) => n.pid), etcdPid: undefined, stop: () => k.stop() };
}

const topicOptions = { replicationFactor: RF3_REPLICATION_FACTOR, configs: { 'min.insync.replicas': String(RF3_MIN_INSYNC_REPLICAS) } };
const topicName = (kind: string, c: Compression, round: number): string => `rf3-${kind}-${c}-r${round}`;
const spec = (topic: string, records: number, w: Workload): ProduceSpec => ({ topic, records, recordSize: RECORD_SIZE, throughput: -1, compression: w.compression, acks: w.acks, batchSize: BATCH_SIZE, lingerMs: LINGER_MS });

async function measure(c: Rf3Cluster, o: Rf3Options, res: Rf3Results): Promise<void> {
  const brokerCpu = (): number => c.brokerPids.reduce((sum, pid) => sum + processCpuSeconds(pid), 0);
  const etcdCpu = (): number => (c.etcdPid === undefined ? 0 : processCpuSeconds(c.etcdPid));
  const topics: string[] = [];
  for (const w of RF3_WORKLOADS) topics.push(topicName('warmup', w.compression, 0));
  for (let round = 1; round <= o.rounds; round++) for (const w of RF3_WORKLOADS) topics.push(topicName('peak', w.compression, round));
  await createTopics(c.bootstrap, topics, topicOptions);

  const warm = Math.max(20_000, Math.round(o.records / 3));
  for (const w of RF3_WORKLOADS) await produce(c.bootstrap, spec(topicName('warmup', w.compression, 0), warm, w));
  for (const codec of RF3_COMPRESSIONS) await consume(c.bootstrap, topicName('warmup', codec, 0), warm);
  o.log(`${c.name} warm-up done (${RF3_WORKLOADS.length} x ${warm} records, consumed back; not measured)`);
  // A measurement window, not a wait for an event: what the brokers burn with no client.
  const idle0 = brokerCpu();
  const t0 = performance.now();
  await new Promise((r) => setTimeout(r, IDLE_WINDOW_S * 1000));
  const idle = ((brokerCpu() - idle0) * 1000) / ((performance.now() - t0) / 1000);
  res.idleCpuMsPerSec.push(idle);
  o.log(`${c.name} idle for ${IDLE_WINDOW_S} s: brokers' CPU ${idle.toFixed(1)} ms/s`);

  const timed = async <T>(key: string, body: () => Promise<T>): Promise<{ value: T; cpuMs: number; etcdMs: number; load: number }> => {
    const load = os.loadavg()[0] ?? 0;
    res.load1.push(load);
    const b0 = brokerCpu();
    const e0 = etcdCpu();
    const value = await body();
    const cpuMs = cpuMsPerMiB(brokerCpu() - b0, o.records, RECORD_SIZE);
    const etcdMs = cpuMsPerMiB(etcdCpu() - e0, o.records, RECORD_SIZE);
    record(res.brokerCpuMsPerMiB, key, cpuMs);
    if (c.etcdPid !== undefined) record(res.etcdCpuMsPerMiB, key, etcdMs);
    return { value, cpuMs, etcdMs, load };
  };
  const etcdText = (ms: number): string => (c.etcdPid === undefined ? '' : `, etcd ${ms.toFixed(2)} ms/MiB`);
  for (let round = 1; round <= o.rounds; round++) {
    for (const w of RF3_WORKLOADS) {
      const label = workloadLabel(w);
      const { value: s, cpuMs, etcdMs, load } = await timed(cpuKey('produce', label), () => produce(c.bootstrap, spec(topicName('peak', w.compression, round), o.records, w)));
      record(res.produce, label, s);
      o.log(`${c.name} round ${round}/${o.rounds} produce ${label}: ${s.mbPerSec.toFixed(1)} MiB/s, ${s.recordsPerSec.toFixed(0)} records/s, brokers' CPU ${cpuMs.toFixed(1)} ms/MiB${etcdText(etcdMs)} (load ${load.toFixed(1)})`);
    }
    for (const codec of RF3_COMPRESSIONS) {
      const { value: s, cpuMs, etcdMs, load } = await timed(cpuKey('consume', codec), () => consume(c.bootstrap, topicName('peak', codec, round), o.records));
      record(res.consume, codec, s);
      o.log(`${c.name} round ${round}/${o.rounds} consume ${codec}: ${s.fetchMbPerSec.toFixed(1)} MiB/s, ${s.fetchRecordsPerSec.toFixed(0)} records/s, brokers' CPU ${cpuMs.toFixed(1)} ms/MiB${etcdText(etcdMs)} (load ${load.toFixed(1)})`);
    }
  }
}

async function withCluster(start: () => Promise<Rf3Cluster>, o: Rf3Options): Promise<Rf3Results> {
  const c = await start();
  o.log(`${c.name} started at ${c.bootstrap} (broker pids ${c.brokerPids.join(', ')}${c.etcdPid === undefined ? '' : `, etcd pid ${c.etcdPid}`})`);
  const res = emptyRf3Results();
  try {
    await measure(c, o, res);
  } finally {
    await c.stop();
    o.log(`${c.name} stopped`);
  }
  return res;
}

/** Sediment's cluster, then Kafka's (either may be left out). */
export async function runRf3Section(o: Rf3Options, which: { readonly sediment: boolean; readonly kafka: boolean }): Promise<{ sediment: Rf3Results | undefined; kafka: Rf3Results | undefined }> {
  const sediment = which.sediment ? await withCluster(startSedimentRf3, o) : undefined;
  const kafka = which.kafka ? await withCluster(() => startKafkaRf3(o.kafkaHeap), o) : undefined;
  return { sediment, kafka };
}
