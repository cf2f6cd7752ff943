// `npm run bench`: Sediment against Apache Kafka 4.x on the same machine and
// disk, one broker at a time, driven by the same load generator (Kafka's
// ProducerPerformance / ConsumerPerformance): 1 KiB records, 6 partitions,
// batch.size 64 KiB, linger.ms 5, compression none and lz4, acks=1 and all.
//
//   npm run bench -- [--runs N] [--quick] [--only sediment|kafka] [--records N]
//                    [--latency-seconds S] [--rate R | --rate-fraction F]
//                    [--section single|rf3|all | --only-rf3 | --no-rf3]
//                    [--doc PATH | --no-doc] [--profile DIR]
//
// Phases: Sediment throughput (an unmeasured warm-up, then peak produce per
// workload and consume per codec), Kafka throughput (the same), Kafka latency
// (produce at a fixed rate, by default 20% of Kafka's measured none/acks=1
// peak), Sediment latency (restarted on a fresh log dir, after an unmeasured
// warm-up produce). Each figure is the
// median of N runs with the min-max spread. Full two-broker runs write
// docs/benchmarks.md (only the generated section; text around it is kept).
// Then the RF 3 section (rf3-section.ts): three Sediment brokers over etcd, then
// three Kafka KRaft nodes, a replication.factor=3, min.insync.replicas=2 topic
// per round and codec, acks=all produce and consume, N rounds of --records
// records; it has its own generated part of docs/benchmarks.md. --section
// single (or --no-rf3) leaves it out, --section rf3 (or --only-rf3) runs it alone.
// --profile DIR runs Sediment alone under `node --cpu-prof`: one process for the
// peak produce of every workload, a second one (same log dir) serving the
// consumes, and prints where the time goes in each.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { kafkaVersion, repoRoot, requireTools } from '../support/tools.js';
import { consumeCpuPairs, cpuKey, emptyResults, figureRows, markdownTable, record, RF3_MARKERS, SINGLE_MARKERS, spliceGenerated, workloadLabel, type BrokerResults, type DocMarkers, type Workload } from './bench-report.js';
import { startKafka, startSediment, type BenchBroker, type BrokerName } from './broker-processes.js';
import { formatSummary, summarizeProfile, type CpuProfile } from './cpu-profile-summary.js';
import { BATCH_SIZE, consume, createTopics, LINGER_MS, PARTITIONS, produce, producerArgs, RECORD_SIZE, WORKLOADS, type Compression } from './load.js';
import { spread, sumPromSamples } from './perf-output.js';
import { resolveSections, rf3Report, type Sections } from './rf3-report.js';
import { runRf3Section } from './rf3-section.js';

interface Options {
  runs: number;
  quick: boolean;
  only: BrokerName | null;
  records: number;
  latencySeconds: number;
  rate: number | null;
  rateFraction: number;
  doc: string | null;
  profileDir: string | null;
  sections: Sections;
}

/** Heap of each of the three Kafka JVMs of the RF 3 section (3 GiB in all of the machine's 23). */
const RF3_KAFKA_HEAP = '1G';

const COMPRESSIONS: readonly Compression[] = ['none', 'lz4'];
const REFERENCE_WORKLOAD = 'none, acks=1';

function usage(msg: string): never {
  console.error(`produce-consume.bench: ${msg}`);
  console.error('usage: npm run bench -- [--runs N] [--quick] [--only sediment|kafka] [--records N] [--latency-seconds S] [--rate R | --rate-fraction F] [--section single|rf3|all | --only-rf3 | --no-rf3] [--doc PATH | --no-doc] [--profile DIR]');
  process.exit(2);
}

function parseArgs(argv: readonly string[]): Options {
  const o: Options = { runs: 3, quick: false, only: null, records: 0, latencySeconds: 0, rate: null, rateFraction: 0.2, doc: null, profileDir: null, sections: { single: true, rf3: true } };
  let section: string | null = null;
  let onlyRf3 = false;
  let noRf3 = false;
  let runs: number | null = null;
  let records: number | null = null;
  let latencySeconds: number | null = null;
  let noDoc = false;
  const positive = (flag: string, v: string | undefined): number => {
    const n = Number(v);
    if (v === undefined || !Number.isFinite(n) || n <= 0) usage(`${flag} needs a positive number`);
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    switch (a) {
      case '--runs': runs = Math.round(positive(a, argv[++i])); break;
      case '--quick': o.quick = true; break;
      case '--only': {
        const v = argv[++i];
        if (v !== 'sediment' && v !== 'kafka') usage('--only takes sediment or kafka');
        o.only = v;
        break;
      }
      case '--records': records = Math.round(positive(a, argv[++i])); break;
      case '--latency-seconds': latencySeconds = positive(a, argv[++i]); break;
      case '--rate': o.rate = Math.round(positive(a, argv[++i])); break;
      case '--rate-fraction': o.rateFraction = positive(a, argv[++i]); break;
      case '--doc': o.doc = argv[++i] ?? usage('--doc needs a path'); break;
      case '--no-doc': noDoc = true; break;
      case '--profile': o.profileDir = argv[++i] ?? usage('--profile needs a directory'); break;
      case '--section': section = argv[++i] ?? usage('--section needs single, rf3 or all'); break;
      case '--only-rf3': onlyRf3 = true; break;
      case '--no-rf3': noRf3 = true; break;
      default: usage(`unknown argument ${a}`);
    }
  }
  try {
    o.sections = resolveSections(section, onlyRf3, noRf3);
  } catch (e) {
    usage((e as Error).message);
  }
  o.runs = runs ?? (o.quick ? 1 : 3);
  o.records = records ?? (o.quick ? 60_000 : 150_000);
  o.latencySeconds = latencySeconds ?? (o.quick ? 3 : 5);
  const full = !o.quick && o.only === null && o.profileDir === null;
  if (noDoc) o.doc = null;
  else if (o.doc === null && full) o.doc = path.join(repoRoot(), 'docs', 'benchmarks.md');
  return o;
}

function log(msg: string): void {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);
}

function topicName(kind: string, w: Workload, run: number): string {
  return `${kind}-${w.compression}-acks${w.acks === 'all' ? 'all' : '1'}-r${run}`;
}

/** Broker CPU milliseconds per MiB of record payload (records x RECORD_SIZE). */
function cpuMsPerMiB(cpuSeconds: number, records: number): number {
  return (cpuSeconds * 1000) / ((records * RECORD_SIZE) / 1048576);
}

/**
 * Unmeasured load on a freshly started broker, so the first measured run does
 * not pay for JIT compilation (Kafka's JVM took three runs to settle without
 * it). Before a throughput phase: a whole peak run of every workload (the
 * measured runs' size), consumed back WARM_UP_CONSUMES times per codec.
 * Consumed back once, the consume path was still being compiled in the first
 * measured runs of both brokers (2026-12-06 05:29: Sediment's run 1 lz4
 * consume 1.61 ms/MiB, user 180 ms against 80-130 later; Kafka's runs 1-3
 * 1.5-2.1 against 0.95-1.35 in runs 4-6): a Fetch carries ~5 MiB, so a 49 MiB
 * consume runs the fetch path only ~10 times. With a third of a run consumed
 * back three times, Sediment's first measured consume after its first
 * full-size produces still cost 1.08-1.27 ms/MiB against 0.69-0.88 in runs
 * 2-6 (2026-12-06 08:19, and a scratch replay of the same sequence: run 1
 * 19-36 ms of V8 helper-thread CPU per consume against 1-14 later). Before a
 * latency phase: a third of a run of every workload, not consumed.
 */
const WARM_UP_CONSUMES = 3;

async function warmUpBroker(broker: BenchBroker, o: Options, kind: 'throughput' | 'latency'): Promise<void> {
  const records = kind === 'throughput' ? o.records : Math.max(20_000, Math.round(o.records / 3));
  const topic = (w: Workload): string => topicName(`warmup-${kind}`, w, 0);
  await createTopics(broker.bootstrap, WORKLOADS.map(topic));
  for (const w of WORKLOADS) {
    await produce(broker.bootstrap, { topic: topic(w), records, recordSize: RECORD_SIZE, throughput: -1, compression: w.compression, acks: w.acks, batchSize: BATCH_SIZE, lingerMs: LINGER_MS });
  }
  if (kind === 'throughput') {
    for (let i = 0; i < WARM_UP_CONSUMES; i++) {
      for (const c of COMPRESSIONS) await consume(broker.bootstrap, topic({ compression: c, acks: '1' }), records);
    }
  }
  log(`${broker.name} warm-up done (${WORKLOADS.length} x ${records} records${kind === 'throughput' ? `, consumed back ${WARM_UP_CONSUMES} times` : ''}; not measured)`);
}

/** Peak produce per workload, then consume per codec (reading the acks=1 topic of that run). */
async function throughputPhase(broker: BenchBroker, o: Options, res: BrokerResults): Promise<void> {
  const topics: string[] = [];
  for (let run = 1; run <= o.runs; run++) for (const w of WORKLOADS) topics.push(topicName('peak', w, run));
  await createTopics(broker.bootstrap, topics);
  await warmUpBroker(broker, o, 'throughput');
  for (let run = 1; run <= o.runs; run++) {
    for (const w of WORKLOADS) {
      const cpuBefore = broker.cpuSeconds();
      const s = await produce(broker.bootstrap, {
        topic: topicName('peak', w, run),
        records: o.records,
        recordSize: RECORD_SIZE,
        throughput: -1,
        compression: w.compression,
        acks: w.acks,
        batchSize: BATCH_SIZE,
        lingerMs: LINGER_MS,
      });
      record(res.peak, workloadLabel(w), s);
      const cpuMs = cpuMsPerMiB(broker.cpuSeconds() - cpuBefore, o.records);
      record(res.cpuMsPerMiB, cpuKey('produce', workloadLabel(w)), cpuMs);
      log(`${broker.name} run ${run}/${o.runs} produce ${workloadLabel(w)}: ${s.mbPerSec.toFixed(1)} MB/s, ${s.recordsPerSec.toFixed(0)} records/s, broker CPU ${cpuMs.toFixed(1)} ms/MiB`);
    }
    for (const c of COMPRESSIONS) {
      const metricsBefore = await broker.metricsText();
      const splitBefore = broker.cpuUserSystemSeconds();
      const started = performance.now();
      const cpuBefore = broker.cpuSeconds();
      const s = await consume(broker.bootstrap, topicName('peak', { compression: c, acks: '1' }, run), o.records);
      record(res.consume, c, s);
      const cpuMs = cpuMsPerMiB(broker.cpuSeconds() - cpuBefore, o.records);
      record(res.cpuMsPerMiB, cpuKey('consume', c), cpuMs);
      const detail = consumeDetail(metricsBefore, await broker.metricsText(), splitBefore, broker.cpuUserSystemSeconds(), performance.now() - started);
      log(`${broker.name} run ${run}/${o.runs} consume ${c}: ${s.fetchMbPerSec.toFixed(1)} MB/s, ${s.fetchRecordsPerSec.toFixed(0)} records/s (group join ${s.rebalanceMs} ms, excluded), broker CPU ${cpuMs.toFixed(2)} ms/MiB${detail}`);
    }
    res.peakRssBytes = Math.max(res.peakRssBytes, broker.peakRssBytes());
  }
}

/**
 * What a consume cost the broker beyond its CPU total, for telling the fast and
 * the slow consume runs apart: user and system CPU, garbage collection, Fetch
 * requests and the bytes they carried (Sediment's metrics; Kafka gives CPU only).
 */
function consumeDetail(before: string | null, after: string | null, cpu0: { user: number; system: number }, cpu1: { user: number; system: number }, wallMs: number): string {
  const cpu = `; window ${(wallMs / 1000).toFixed(1)} s, user ${((cpu1.user - cpu0.user) * 1000).toFixed(0)} ms, system ${((cpu1.system - cpu0.system) * 1000).toFixed(0)} ms`;
  if (before === null || after === null) return cpu;
  const delta = (name: string, match?: Record<string, string>): number => sumPromSamples(after, name, match) - sumPromSamples(before, name, match);
  const fetches = delta('sediment_requests_total', { api: 'Fetch' });
  const bytesOut = delta('sediment_fetch_consumer_bytes_total');
  const gcMs = delta('nodejs_gc_duration_seconds_sum') * 1000;
  const majorMs = delta('nodejs_gc_duration_seconds_sum', { kind: 'major' }) * 1000;
  const perFetch = fetches > 0 ? `${(bytesOut / fetches / 1024).toFixed(0)} KiB per fetch` : 'no fetches';
  return `${cpu}, GC ${gcMs.toFixed(0)} ms (major ${majorMs.toFixed(0)}), ${fetches} fetches, ${perFetch}`;
}

/** Produce at a fixed rate well below saturation; latency percentiles per workload. */
async function latencyPhase(broker: BenchBroker, o: Options, rate: number, res: BrokerResults, warmUp: boolean): Promise<void> {
  const topics: string[] = [];
  for (let run = 1; run <= o.runs; run++) for (const w of WORKLOADS) topics.push(topicName('lat', w, run));
  await createTopics(broker.bootstrap, topics);
  if (warmUp) await warmUpBroker(broker, o, 'latency');
  const records = Math.max(1000, Math.round(rate * o.latencySeconds));
  for (let run = 1; run <= o.runs; run++) {
    for (const w of WORKLOADS) {
      await broker.eventLoopLagMs(); // resets the broker's lag histogram
      const s = await produce(broker.bootstrap, {
        topic: topicName('lat', w, run),
        records,
        recordSize: RECORD_SIZE,
        throughput: rate,
        compression: w.compression,
        acks: w.acks,
        batchSize: BATCH_SIZE,
        lingerMs: LINGER_MS,
      });
      record(res.latency, workloadLabel(w), s);
      const lag = await broker.eventLoopLagMs();
      if (lag !== null) record(res.loopLag, workloadLabel(w), lag);
      const lagText = lag === null ? '' : `; event-loop lag p99 ${lag.p99.toFixed(0)} ms, max ${lag.max.toFixed(0)} ms`;
      log(`${broker.name} run ${run}/${o.runs} latency ${workloadLabel(w)} at ${rate} records/s: p50 ${s.p50Ms} ms, p99 ${s.p99Ms} ms, p99.9 ${s.p999Ms} ms${lagText}`);
    }
    res.peakRssBytes = Math.max(res.peakRssBytes, broker.peakRssBytes());
  }
}

async function withBroker<T>(start: () => Promise<BenchBroker>, body: (b: BenchBroker) => Promise<T>, res: BrokerResults): Promise<T> {
  const broker = await start();
  log(`${broker.name} started at ${broker.bootstrap} (pid ${broker.pid})`);
  try {
    return await body(broker);
  } finally {
    res.peakRssBytes = Math.max(res.peakRssBytes, broker.peakRssBytes());
    await broker.stop();
    log(`${broker.name} stopped; peak RSS ${(res.peakRssBytes / 1048576).toFixed(0)} MiB`);
  }
}

function firstLine(cmd: string, args: readonly string[]): string {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  return `${r.stdout ?? ''}${r.stderr ?? ''}`.split('\n')[0]?.trim() ?? '';
}

function loadAvg(): string {
  return os.loadavg().map((l) => l.toFixed(2)).join(' / ');
}

interface MachineFacts {
  readonly lines: string[];
}

function machineFacts(): MachineFacts {
  const df = spawnSync('df', ['-T', os.tmpdir()], { encoding: 'utf8' }).stdout?.split('\n')[1]?.split(/\s+/) ?? [];
  return {
    lines: [
      `- CPUs: ${os.availableParallelism()} (nproc), ${os.cpus()[0]?.model ?? 'unknown'}`,
      `- memory: ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB; kernel ${os.release()}`,
      `- disk: both brokers' log dirs under ${os.tmpdir()} (${df[0] ?? '?'}, ${df[1] ?? '?'})`,
      `- node ${process.version}; ${firstLine('java', ['-version'])}; Apache Kafka ${kafkaVersion()} (kafka_2.13 jars, KRaft, broker+controller in one JVM, -Xmx1G -Xms1G)`,
    ],
  };
}

function commandLine(): string {
  const args = process.argv.slice(2);
  return args.length === 0 ? 'npm run bench' : `npm run bench -- ${args.join(' ')}`;
}

function report(o: Options, rate: number, rateSource: string, sediment: BrokerResults | undefined, kafka: BrokerResults | undefined, facts: MachineFacts, loadStart: string, loadEnd: string, startedAt: Date, minutes: number): string {
  const table = markdownTable(figureRows(WORKLOADS, sediment, kafka));
  const pairs = consumeCpuPairs(COMPRESSIONS, sediment, kafka);
  const example = producerArgs('<broker>', { topic: '<topic>', records: o.records, recordSize: RECORD_SIZE, throughput: -1, compression: 'lz4', acks: 'all', batchSize: BATCH_SIZE, lingerMs: LINGER_MS });
  return [
    `## Results of ${startedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC`,
    '',
    `Command: \`${commandLine()}\` (${o.runs} run${o.runs === 1 ? '' : 's'} per figure, ${minutes.toFixed(1)} minutes in all).`,
    '',
    'Machine:',
    ...facts.lines,
    `- load average (1/5/15 min) at start ${loadStart}, at end ${loadEnd}`,
    '',
    `Workload: ${o.records.toLocaleString('en-US')} records of ${RECORD_SIZE} bytes per peak produce run into a fresh topic of ${PARTITIONS} partitions; ` +
      `batch.size=${BATCH_SIZE}, linger.ms=${LINGER_MS}; consume reads that run's acks=1 topic of the codec back with a fresh group. ` +
      `Latency: produce at ${rate.toLocaleString('en-US')} records/s (${rateSource}) for ${o.latencySeconds} s per run. ` +
      'Both brokers use their default flush policy (no fsync per message). ' +
      'Broker CPU: user + system time of the broker process (all threads) during each peak produce or consume run, per MiB of record payload; ' +
      'the load generator shares the same cores, so CPU a broker spends is CPU the client does not get.',
    '',
    `Producer example: \`ProducerPerformance ${example.join(' ')}\``,
    '',
    table,
    '',
    ...(pairs === null ? [] : [pairs, '']),
  ].join('\n');
}

/** The .cpuprofile `node --cpu-prof` wrote into `dir` that is not in `before`. */
function newProfile(dir: string, before: Set<string>): string {
  const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile') && !before.has(f));
  if (file === undefined) throw new Error(`no new .cpuprofile in ${dir}`);
  before.add(file);
  return path.join(dir, file);
}

function printProfile(title: string, file: string): void {
  console.log(`\n### ${title}\n\nprofile: ${file}\n`);
  console.log(formatSummary(summarizeProfile(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile), 30));
}

/**
 * Two profiled Sediment processes on one log dir: the first takes the peak
 * produce of every workload, the second (after a clean restart) serves one
 * consume per codec, so each profile shows one side.
 */
async function profileMode(o: Options, profDir: string): Promise<void> {
  mkdirSync(profDir, { recursive: true });
  const before = new Set(readdirSync(profDir));
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'sediment-bench-prof-'));
  const res = emptyResults();
  try {
    await withBroker(() => startSediment({ cpuProfDir: profDir, dir: dataDir }), async (b) => {
      await createTopics(b.bootstrap, WORKLOADS.map((w) => topicName('peak', w, 1)));
      for (const w of WORKLOADS) {
        const s = await produce(b.bootstrap, { topic: topicName('peak', w, 1), records: o.records, recordSize: RECORD_SIZE, throughput: -1, compression: w.compression, acks: w.acks, batchSize: BATCH_SIZE, lingerMs: LINGER_MS });
        record(res.peak, workloadLabel(w), s);
        log(`sediment (profiled) produce ${workloadLabel(w)}: ${s.mbPerSec.toFixed(1)} MB/s`);
      }
    }, res);
    const produceProfile = newProfile(profDir, before);
    await withBroker(() => startSediment({ cpuProfDir: profDir, dir: dataDir }), async (b) => {
      for (const c of COMPRESSIONS) {
        const s = await consume(b.bootstrap, topicName('peak', { compression: c, acks: '1' }, 1), o.records);
        log(`sediment (profiled) consume ${c}: ${s.fetchMbPerSec.toFixed(1)} MB/s`);
      }
    }, res);
    const consumeProfile = newProfile(profDir, before);
    printProfile(`produce (${WORKLOADS.length} workloads x ${o.records} records)`, produceProfile);
    printProfile(`consume (${COMPRESSIONS.join(', ')} x ${o.records} records)`, consumeProfile);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

function writeDoc(o: Options, text: string, markers: DocMarkers): void {
  if (o.doc === null) return;
  const existing = existsSync(o.doc) ? readFileSync(o.doc, 'utf8') : null;
  writeFileSync(o.doc, spliceGenerated(existing, text, markers));
  log(`wrote ${o.doc}`);
}

/** Three brokers of each kind, one cluster after the other; writes its own part of the doc. */
async function rf3Section(o: Options): Promise<void> {
  requireTools(['etcd']);
  const startedAt = new Date();
  const t0 = performance.now();
  const loadStart = loadAvg();
  log(`RF 3 section: load average ${loadStart}; ${o.runs} round(s), ${o.records} records per produce run`);
  const res = await runRf3Section({ rounds: o.runs, records: o.records, kafkaHeap: RF3_KAFKA_HEAP, log }, { sediment: o.only !== 'kafka', kafka: o.only !== 'sediment' });
  const text = rf3Report({
    command: commandLine(),
    startedAt,
    minutes: (performance.now() - t0) / 60_000,
    rounds: o.runs,
    records: o.records,
    recordSize: RECORD_SIZE,
    partitions: PARTITIONS,
    batchSize: BATCH_SIZE,
    lingerMs: LINGER_MS,
    cpus: os.availableParallelism(),
    kafkaVersion: kafkaVersion(),
    kafkaHeap: RF3_KAFKA_HEAP,
    loadStart,
    loadEnd: loadAvg(),
    sediment: res.sediment,
    kafka: res.kafka,
  });
  console.log(`\n${text}`);
  writeDoc(o, text, RF3_MARKERS);
}

async function main(): Promise<void> {
  const o = parseArgs(process.argv.slice(2));
  requireTools(['java', 'kafka', 'kafkajs']);
  if (o.profileDir !== null) return profileMode(o, o.profileDir);
  if (o.sections.single) await singleSection(o);
  if (o.sections.rf3) await rf3Section(o);
}

/** One broker of each kind: the throughput and latency phases; writes its part of the doc. */
async function singleSection(o: Options): Promise<void> {
  const startedAt = new Date();
  const t0 = performance.now();
  const facts = machineFacts();
  const loadStart = loadAvg();
  log(`load average ${loadStart}; ${o.runs} run(s), ${o.records} records per peak produce run`);
  const runSediment = o.only !== 'kafka';
  const runKafka = o.only !== 'sediment';
  const sediment = runSediment ? emptyResults() : undefined;
  const kafka = runKafka ? emptyResults() : undefined;

  if (sediment !== undefined) await withBroker(() => startSediment(), (b) => throughputPhase(b, o, sediment), sediment);
  let rate = o.rate ?? 0;
  let rateSource = 'given with --rate';
  const ratePeak = (r: BrokerResults, name: string): number => {
    const runs = r.peak.get(REFERENCE_WORKLOAD) ?? [];
    const m = spread(runs.map((s) => s.recordsPerSec)).median;
    rateSource = `${Math.round(o.rateFraction * 100)}% of ${name}'s median ${REFERENCE_WORKLOAD} peak of ${Math.round(m).toLocaleString('en-US')} records/s`;
    return Math.max(100, Math.round((o.rateFraction * m) / 100) * 100);
  };
  if (kafka !== undefined) {
    await withBroker(startKafka, async (b) => {
      await throughputPhase(b, o, kafka);
      if (o.rate === null) rate = ratePeak(kafka, 'Kafka');
      await latencyPhase(b, o, rate, kafka, false);
    }, kafka);
  }
  if (sediment !== undefined) {
    if (o.rate === null && kafka === undefined) rate = ratePeak(sediment, 'Sediment');
    await withBroker(() => startSediment(), (b) => latencyPhase(b, o, rate, sediment, true), sediment);
  }

  const minutes = (performance.now() - t0) / 60_000;
  const text = report(o, rate, rateSource, sediment, kafka, facts, loadStart, loadAvg(), startedAt, minutes);
  console.log(`\n${text}`);
  writeDoc(o, text, SINGLE_MARKERS);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.stack ?? err.message : err);
  process.exit(1);
});
