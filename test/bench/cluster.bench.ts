// Cluster figures of issue 13, printed with their spread over rounds. Run by hand:
//
//   npm run build && node dist/test/bench/cluster.bench.js [--part processes|metadata|startup|all]
//       [--rounds N] [--records N] [--metadata-topics N] [--startup-partitions N] [--no-kafka]
//       [--cpu-profile DIR]  (every broker runs under node --cpu-prof, profiles written to DIR at exit)
//
// processes: the same total load (Kafka's ProducerPerformance, then ConsumerPerformance) against
//   a cluster of 1 and of 2 Sediment broker processes over etcd, RF=1 partitions spread over them:
//   records/s and broker CPU seconds per MiB for each. Baseline: the 1-process cluster, measured
//   in the same run, the two layouts alternating from round to round.
// metadata: latency of Metadata requests (all topics; one topic) on one connection, against a
//   3-broker Sediment cluster and an Apache Kafka 4.3.1 KRaft broker holding the same topics.
// startup: a cluster holding N partitions (10,000 by default) over 3 brokers; one broker is
//   stopped (SIGTERM) and started again: time to its "started" line and to every partition it
//   leads being led by it again. Baseline: the same with 1% of the partitions; with Kafka, one
//   Kafka broker holding the same partitions, restarted.
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { AdminClient, type NewTopic } from '../../broker/cli/admin-client.js';
import { startEtcd, type EtcdServer } from '../support/etcd.js';
import { startKafkaReference } from '../support/kafka-reference.js';
import { startSedimentCluster, type SedimentCluster } from '../support/sediment-cluster.js';
import { processCpuSeconds } from './broker-processes.js';
import { consume, produce, RECORD_SIZE, BATCH_SIZE, LINGER_MS } from './load.js';
import { quantile, spread, type Spread } from './perf-output.js';

interface Args {
  readonly part: 'processes' | 'metadata' | 'startup' | 'all';
  readonly rounds: number;
  readonly records: number;
  readonly metadataTopics: number;
  readonly startupPartitions: number;
  readonly kafka: boolean;
  readonly cpuProfileDir: string | null;
}

function parseArgs(argv: readonly string[]): Args {
  const get = (name: string, dflt: string): string => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 && argv[i + 1] !== undefined ? argv[i + 1]! : dflt;
  };
  const part = get('part', 'all');
  if (!['processes', 'metadata', 'startup', 'all'].includes(part)) throw new Error(`--part ${part}: processes, metadata, startup or all`);
  return {
    part: part as Args['part'],
    rounds: Number(get('rounds', '3')),
    records: Number(get('records', '300000')),
    metadataTopics: Number(get('metadata-topics', '100')),
    startupPartitions: Number(get('startup-partitions', '10000')),
    kafka: !argv.includes('--no-kafka'),
    cpuProfileDir: argv.includes('--cpu-profile') ? path.resolve(get('cpu-profile', '.')) : null,
  };
}

export function fmt(s: Spread, digits = 1): string {
  return `${s.median.toFixed(digits)} (${s.min.toFixed(digits)}-${s.max.toFixed(digits)}, n=${s.n})`;
}

const clusterBase = { 'group.initial.rebalance.delay.ms': '0', 'log.segment.bytes': String(64 * 1024 * 1024) };
let cpuProfileDir: string | null = null;
let prefixes = 0;
const nextPrefix = (what: string): string => `/bench-${what}-${process.pid}-${++prefixes}`;

async function withCluster<T>(etcd: EtcdServer, brokers: number, overrides: Record<string, string>, body: (c: SedimentCluster) => Promise<T>): Promise<T> {
  const c = await startSedimentCluster({ etcd, brokers, prefix: nextPrefix(`b${brokers}`), overrides: { ...clusterBase, ...overrides }, brokerNodeArgs: () => (cpuProfileDir === null ? [] : ['--cpu-prof', `--cpu-prof-dir=${cpuProfileDir}`]) });
  try {
    return await body(c);
  } finally {
    await c.close();
  }
}

async function createTopics(bootstrap: string, topics: readonly NewTopic[], chunk = 20): Promise<void> {
  const admin = await AdminClient.connect(bootstrap);
  try {
    for (let i = 0; i < topics.length; i += chunk) {
      const results = await admin.createTopics(topics.slice(i, i + chunk));
      const bad = results.find((r) => r.errorCode !== 0);
      if (bad !== undefined) throw new Error(`CreateTopics ${bad.name}: error ${bad.errorCode} ${bad.errorMessage ?? ''}`);
    }
  } finally {
    admin.close();
  }
}

const topic = (name: string, numPartitions: number): NewTopic => ({ name, numPartitions, replicationFactor: 1, configs: new Map() });

/** Polls `nodeId`'s Metadata until every partition of `topics` has a leader (there is no event to await from outside). */
async function untilLed(c: SedimentCluster, nodeId: number, topics: readonly string[], timeoutMs: number, leader?: number): Promise<void> {
  await c.untilMetadata(
    nodeId,
    topics,
    (md) => md.topics.length === topics.length && md.topics.every((t) => t.errorCode === 0 && t.partitions.length > 0 && t.partitions.every((p) => p.errorCode === 0 && p.leader >= 0 && (leader === undefined || p.replicas[0] !== leader || p.leader === leader))),
    timeoutMs,
    'partitions led',
    50,
  );
}

/** Prints brokers' warnings of a lost etcd session: a figure measured across one is not a restart time. */
function reportLostSessions(c: SedimentCluster): void {
  for (const b of c.brokers) {
    const lost = [...b.previousLogs, b.logs].flatMap((l) => l.problems).filter((l) => /session/i.test(String(l.msg ?? '')));
    if (lost.length > 0) console.log(`  broker ${c.brokers.indexOf(b) + 1}: ${lost.length} session warning(s), first: ${String(lost[0]!.msg)}`);
  }
}

// ---- processes ----

interface ProcessRound {
  readonly produceRps: number;
  readonly produceCpuPerMiB: number;
  readonly consumeRps: number;
  readonly consumeCpuPerMiB: number;
}

async function processRound(etcd: EtcdServer, brokers: number, records: number): Promise<ProcessRound> {
  return withCluster(etcd, brokers, {}, async (c) => {
    const name = `load-${brokers}-${Date.now()}`;
    await createTopics(c.bootstrap, [topic(name, 12)]);
    await untilLed(c, 1, [name], 30_000);
    const cpu = (): number => c.brokers.reduce((sum, b) => sum + processCpuSeconds(b.pid), 0);
    const mib = (records * RECORD_SIZE) / (1024 * 1024);
    const cpu0 = cpu();
    const p = await produce(c.bootstrap, { topic: name, records, recordSize: RECORD_SIZE, throughput: -1, compression: 'none', acks: '1', batchSize: BATCH_SIZE, lingerMs: LINGER_MS });
    const cpu1 = cpu();
    const k = await consume(c.bootstrap, name, records);
    const cpu2 = cpu();
    return { produceRps: p.recordsPerSec, produceCpuPerMiB: (cpu1 - cpu0) / mib, consumeRps: k.fetchRecordsPerSec, consumeCpuPerMiB: (cpu2 - cpu1) / mib };
  });
}

async function processesPart(etcd: EtcdServer, a: Args): Promise<void> {
  const rounds: Record<1 | 2, ProcessRound[]> = { 1: [], 2: [] };
  for (let r = 0; r < a.rounds; r++) {
    const order: Array<1 | 2> = r % 2 === 0 ? [1, 2] : [2, 1];
    for (const n of order) {
      const res = await processRound(etcd, n, a.records);
      rounds[n].push(res);
      console.log(`  round ${r + 1}, ${n} process(es): produce ${res.produceRps.toFixed(0)} rec/s, ${res.produceCpuPerMiB.toFixed(3)} CPU s/MiB; consume ${res.consumeRps.toFixed(0)} rec/s, ${res.consumeCpuPerMiB.toFixed(3)} CPU s/MiB`);
    }
  }
  console.log(`\nprocesses: ${a.records} records of ${RECORD_SIZE} B, acks=1, 12 partitions RF=1, ${a.rounds} rounds (median (min-max))`);
  console.log('| brokers | produce records/s | produce broker CPU s/MiB | consume records/s | consume broker CPU s/MiB |');
  console.log('|---|---|---|---|---|');
  for (const n of [1, 2] as const) {
    const rs = rounds[n];
    console.log(`| ${n} | ${fmt(spread(rs.map((x) => x.produceRps)), 0)} | ${fmt(spread(rs.map((x) => x.produceCpuPerMiB)), 3)} | ${fmt(spread(rs.map((x) => x.consumeRps)), 0)} | ${fmt(spread(rs.map((x) => x.consumeCpuPerMiB)), 3)} |`);
  }
  const ratio = (f: (x: ProcessRound) => number): string => (spread(rounds[2].map(f)).median / spread(rounds[1].map(f)).median).toFixed(2);
  console.log(`2 vs 1 process (median ratio): produce records/s x${ratio((x) => x.produceRps)}, consume records/s x${ratio((x) => x.consumeRps)}, produce CPU/MiB x${ratio((x) => x.produceCpuPerMiB)}`);
}

// ---- metadata ----

interface Latency {
  readonly allP50: number;
  readonly allP99: number;
  readonly oneP50: number;
  readonly oneP99: number;
}

async function metadataLatency(bootstrap: string, names: readonly string[], requests: number): Promise<Latency> {
  const admin = await AdminClient.connect(bootstrap);
  try {
    const time = async (topics: readonly string[] | null): Promise<number[]> => {
      const out: number[] = [];
      for (let i = 0; i < 20; i++) await admin.metadata(topics); // warm-up
      for (let i = 0; i < requests; i++) {
        const t0 = performance.now();
        const md = await admin.metadata(topics);
        out.push(performance.now() - t0);
        if (topics !== null && md.topics.length !== topics.length) throw new Error('metadata answered the wrong topics');
      }
      return out;
    };
    const all = await time(null);
    const one = await time([names[0]!]);
    return { allP50: quantile(all, 0.5), allP99: quantile(all, 0.99), oneP50: quantile(one, 0.5), oneP99: quantile(one, 0.99) };
  } finally {
    admin.close();
  }
}

async function metadataPart(etcd: EtcdServer, a: Args): Promise<void> {
  const names = Array.from({ length: a.metadataTopics }, (_, i) => `md-${i}`);
  const topics = names.map((n) => topic(n, 10));
  const requests = 500;
  const results: Record<'sediment' | 'kafka', Latency[]> = { sediment: [], kafka: [] };
  await withCluster(etcd, 3, {}, async (c) => {
    await createTopics(c.bootstrap, topics);
    await untilLed(c, 1, names, 120_000);
    for (let r = 0; r < a.rounds; r++) results.sediment.push(await metadataLatency(c.broker(1 + (r % 3)).bootstrap, names, requests));
  });
  if (a.kafka) {
    const k = await startKafkaReference({ heap: '1G' });
    try {
      await createTopics(k.bootstrap, topics);
      for (let r = 0; r < a.rounds; r++) results.kafka.push(await metadataLatency(k.bootstrap, names, requests));
    } finally {
      await k.stop();
    }
  }
  console.log(`\nmetadata: ${a.metadataTopics} topics x 10 partitions, ${requests} requests per round on one connection, ${a.rounds} rounds; ms, median of the rounds' figures (min-max)`);
  console.log('| broker | all topics p50 | all topics p99 | one topic p50 | one topic p99 |');
  console.log('|---|---|---|---|---|');
  for (const [name, rs] of [['Sediment, 3 brokers over etcd', results.sediment], ['Apache Kafka 4.3.1, 1 KRaft broker', results.kafka]] as const) {
    if (rs.length === 0) continue;
    console.log(`| ${name} | ${fmt(spread(rs.map((x) => x.allP50)), 2)} | ${fmt(spread(rs.map((x) => x.allP99)), 2)} | ${fmt(spread(rs.map((x) => x.oneP50)), 2)} | ${fmt(spread(rs.map((x) => x.oneP99)), 2)} |`);
  }
  if (results.kafka.length > 0) {
    const m = (rs: Latency[], f: (x: Latency) => number): number => spread(rs.map(f)).median;
    console.log(`Sediment / Kafka (median p50): all topics x${(m(results.sediment, (x) => x.allP50) / m(results.kafka, (x) => x.allP50)).toFixed(2)}, one topic x${(m(results.sediment, (x) => x.oneP50) / m(results.kafka, (x) => x.oneP50)).toFixed(2)}`);
  }
}

// ---- startup ----

interface Restart {
  readonly startedMs: number;
  readonly servingMs: number;
}

async function startupRounds(etcd: EtcdServer, partitions: number, rounds: number): Promise<{ create: number; restarts: Restart[] }> {
  const perTopic = 100;
  const topicCount = Math.max(1, Math.round(partitions / perTopic));
  const names = Array.from({ length: topicCount }, (_, i) => `st-${i}`);
  return withCluster(etcd, 3, {}, async (c) => {
    const t0 = performance.now();
    await createTopics(c.bootstrap, names.map((n) => topic(n, Math.min(perTopic, partitions))), 10);
    await untilLed(c, 1, names, 600_000);
    const create = performance.now() - t0;
    const restarts: Restart[] = [];
    for (let r = 0; r < rounds; r++) {
      const b = c.broker(3);
      await b.stop(120_000);
      // Restart a broker the cluster knows is down, so a stale answer cannot pass for a fast restart.
      await c.untilMetadata(1, null, (md) => !md.brokers.some((x) => x.nodeId === 3), 60_000, 'broker 3 gone', 50);
      const s0 = performance.now();
      await b.start();
      const started = performance.now() - s0;
      await untilLed(c, 1, names, 600_000, 3);
      restarts.push({ startedMs: started, servingMs: performance.now() - s0 });
      reportLostSessions(c);
      console.log(`  ${partitions} partitions, restart ${r + 1}: started ${started.toFixed(0)} ms, its partitions led again ${(performance.now() - s0).toFixed(0)} ms`);
    }
    return { create, restarts };
  });
}

async function kafkaStartup(partitions: number, rounds: number): Promise<number[]> {
  const perTopic = 100;
  const names = Array.from({ length: Math.max(1, Math.round(partitions / perTopic)) }, (_, i) => `st-${i}`);
  const out: number[] = [];
  let k = await startKafkaReference({ heap: '1G', keepData: true });
  const dataDir = k.dataDir;
  const port = k.port;
  try {
    await createTopics(k.bootstrap, names.map((n) => topic(n, perTopic)), 10);
    for (let r = 0; r < rounds; r++) {
      await k.stop();
      const s0 = performance.now();
      k = await startKafkaReference({ heap: '1G', keepData: true, dataDir, port, startTimeoutMs: 600_000 });
      const admin = await AdminClient.connect(k.bootstrap);
      try {
        for (;;) {
          const md = await admin.metadata(names);
          if (md.topics.length === names.length && md.topics.every((t) => t.errorCode === 0 && t.partitions.every((p) => p.leader >= 0))) break;
          await new Promise((res) => setTimeout(res, 50));
        }
      } finally {
        admin.close();
      }
      out.push(performance.now() - s0);
      console.log(`  Kafka, ${partitions} partitions, restart ${r + 1}: every partition led after ${out.at(-1)!.toFixed(0)} ms`);
    }
  } finally {
    await k.stop();
  }
  return out;
}

async function startupPart(etcd: EtcdServer, a: Args): Promise<void> {
  const small = Math.max(100, Math.round(a.startupPartitions / 100));
  const big = await startupRounds(etcd, a.startupPartitions, a.rounds);
  const base = await startupRounds(etcd, small, a.rounds);
  const kafka = a.kafka ? await kafkaStartup(a.startupPartitions, a.rounds) : [];
  console.log(`\nstartup: 3 Sediment brokers over etcd, RF=1 topics of 100 partitions; broker 3 stopped (SIGTERM) and started ${a.rounds} times; ms, median (min-max)`);
  console.log('| cluster | create + all led | broker 3 "started" | its partitions led again |');
  console.log('|---|---|---|---|');
  for (const [n, r] of [[a.startupPartitions, big], [small, base]] as const) {
    console.log(`| Sediment, ${n} partitions | ${r.create.toFixed(0)} | ${fmt(spread(r.restarts.map((x) => x.startedMs)), 0)} | ${fmt(spread(r.restarts.map((x) => x.servingMs)), 0)} |`);
  }
  if (kafka.length > 0) console.log(`| Apache Kafka 4.3.1, 1 KRaft broker, ${a.startupPartitions} partitions | - | - | ${fmt(spread(kafka), 0)} |`);
  const m = (r: { restarts: Restart[] }): number => spread(r.restarts.map((x) => x.servingMs)).median;
  console.log(`${a.startupPartitions} vs ${small} partitions (median, led again): x${(m(big) / m(base)).toFixed(2)}`);
}

async function main(): Promise<void> {
  const a = parseArgs(process.argv.slice(2));
  cpuProfileDir = a.cpuProfileDir;
  const etcd = await startEtcd();
  console.log(`cluster bench: ${JSON.stringify(a)}, etcd ${etcd.endpoint}`);
  try {
    if (a.part === 'processes' || a.part === 'all') await processesPart(etcd, a);
    if (a.part === 'metadata' || a.part === 'all') await metadataPart(etcd, a);
    if (a.part === 'startup' || a.part === 'all') await startupPart(etcd, a);
  } finally {
    await etcd.stop();
  }
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((e: unknown) => {
    // Metadata answers in these errors run to megabytes at 10,000 partitions.
    console.error(String(e instanceof Error ? (e.stack ?? e.message) : e).slice(0, 3000));
    process.exit(1);
  });
}
