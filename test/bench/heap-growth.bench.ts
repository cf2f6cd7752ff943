// `node dist/test/bench/heap-growth.bench.js [--percents 100,300] [--pairs N] [--rounds N] [--records N]`
//
// What V8's old-generation growing factor (SEDIMENT_HEAP_GROWING_PERCENT, set by
// `sediment start`; broker/cli/heap-growth.ts) costs a broker under produce
// load. For each pair, one `sediment start` process per percent in turn (so the
// settings alternate on the machine): the produce-consume bench's four peak
// produce workloads once unmeasured, then --rounds measured rounds of them,
// each into a fresh topic of 6 partitions. Prints per percent the broker's CPU
// per MiB produced (user + system, all threads) of every measured produce, the
// main thread's full (mark-compact) collections over the whole process life,
// from its nodejs_gc_duration_seconds_count{kind="major"}, and the peak RSS.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startSediment } from './broker-processes.js';
import { BATCH_SIZE, createTopics, LINGER_MS, produce, RECORD_SIZE, WORKLOADS, type Acks, type Compression } from './load.js';
import { spread, sumPromSamples } from './perf-output.js';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? fallback : (process.argv[i + 1] ?? fallback);
}

function positive(name: string, fallback: number): number {
  const v = Number(arg(name, String(fallback)));
  if (!Number.isInteger(v) || v <= 0) throw new Error(`--${name} needs a positive integer`);
  return v;
}

interface Sample {
  readonly cpuMsPerMiB: number[];
  readonly majorGcs: number;
  readonly peakRssMiB: number;
}

async function measure(percent: number, rounds: number, records: number): Promise<Sample> {
  const broker = await startSediment({ env: { SEDIMENT_HEAP_GROWING_PERCENT: String(percent) } });
  try {
    const topic = (round: number, w: { compression: Compression; acks: Acks }): string => `heap-${round}-${w.compression}-${w.acks}`;
    await createTopics(broker.bootstrap, Array.from({ length: rounds + 1 }, (_, r) => WORKLOADS.map((w) => topic(r, w))).flat());
    const mib = (records * RECORD_SIZE) / 1048576;
    const cpuMsPerMiB: number[] = [];
    for (let round = 0; round <= rounds; round++) {
      for (const w of WORKLOADS) {
        const before = broker.cpuSeconds();
        await produce(broker.bootstrap, { topic: topic(round, w), records, recordSize: RECORD_SIZE, throughput: -1, compression: w.compression, acks: w.acks, batchSize: BATCH_SIZE, lingerMs: LINGER_MS });
        // Round 0 is the warm-up.
        if (round > 0) cpuMsPerMiB.push(((broker.cpuSeconds() - before) * 1000) / mib);
      }
    }
    const metrics = (await broker.metricsText()) ?? '';
    return { cpuMsPerMiB, majorGcs: sumPromSamples(metrics, 'nodejs_gc_duration_seconds_count', { kind: 'major' }), peakRssMiB: broker.peakRssBytes() / 1048576 };
  } finally {
    await broker.stop();
  }
}

async function main(): Promise<void> {
  const percents = arg('percents', '100,300').split(',').map((p) => {
    const n = Number(p);
    if (!Number.isInteger(n) || n < 0 || n > 1000) throw new Error(`--percents takes integers from 0 to 1000, not '${p}'`);
    return n;
  });
  const pairs = positive('pairs', 2);
  const rounds = positive('rounds', 2);
  const records = positive('records', 150_000);
  const results = new Map<number, Sample[]>(percents.map((p) => [p, []]));
  for (let pair = 1; pair <= pairs; pair++) {
    for (const p of percents) {
      const s = await measure(p, rounds, records);
      results.get(p)!.push(s);
      console.log(`pair ${pair}, percent ${p}: produce CPU ${s.cpuMsPerMiB.map((v) => v.toFixed(2)).join(' ')} ms/MiB (${WORKLOADS.map((w) => `${w.compression}/${w.acks}`).join(', ')} per round); ${s.majorGcs} full collections; peak RSS ${s.peakRssMiB.toFixed(0)} MiB`);
    }
  }
  for (const [p, samples] of results) {
    const cpu = spread(samples.flatMap((s) => s.cpuMsPerMiB));
    const gcs = samples.map((s) => s.majorGcs).join(', ');
    const rss = samples.map((s) => s.peakRssMiB.toFixed(0)).join(', ');
    console.log(`percent ${p}: produce CPU median ${cpu.median.toFixed(2)} (${cpu.min.toFixed(2)}-${cpu.max.toFixed(2)}) ms/MiB over ${cpu.n} produces; full collections ${gcs}; peak RSS ${rss} MiB`);
  }
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((e: unknown) => {
    console.error(e);
    process.exit(1);
  });
}
