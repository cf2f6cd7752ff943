// `node dist/test/bench/sendfile.bench.js [--pairs N] [--consumes N] [--records N]`
//
// What sending record bytes with sendfile(2) saves a broker per MiB consumed
// (broker/common/sendfile.ts; issue 16). For each pair, one `sediment start`
// with SEDIMENT_SENDFILE=0 (Fetch answers read into buffers, then written) and
// one with it on, in turn, so the settings alternate on the machine. Each
// produces one none and one lz4 topic (6 partitions, the produce-consume
// bench's record and batch sizes), consumes each back twice unmeasured (JIT
// warm-up), then --consumes measured consumes alternating between the two
// topics, all within the 30 s in which fetches of recent bytes take the
// page-cache path. Prints, per consume, the broker's CPU (all threads) and its
// main thread's, then per setting the median and range per MiB and the ratio.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startSediment } from './broker-processes.js';
import { BATCH_SIZE, consume, createTopics, LINGER_MS, produce, RECORD_SIZE, type Compression } from './load.js';
import { spread } from './perf-output.js';
import { mainThreadMs, threadCpu } from './thread-cpu.js';

function positive(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const v = i < 0 ? fallback : Number(process.argv[i + 1]);
  if (!Number.isInteger(v) || v <= 0) throw new Error(`--${name} needs a positive integer`);
  return v;
}

const SETTINGS = [
  { name: 'buffers (SEDIMENT_SENDFILE=0)', env: { SEDIMENT_SENDFILE: '0' } },
  { name: 'sendfile', env: {} },
] as const;

const CODECS: readonly Compression[] = ['none', 'lz4'];

async function measure(env: Readonly<Record<string, string>>, consumes: number, records: number): Promise<{ total: number[]; main: number[] }> {
  const broker = await startSediment({ env });
  try {
    const topic = (c: Compression): string => `sendfile-${c}`;
    await createTopics(broker.bootstrap, CODECS.map(topic));
    for (const c of CODECS) await produce(broker.bootstrap, { topic: topic(c), records, recordSize: RECORD_SIZE, throughput: -1, compression: c, acks: '1', batchSize: BATCH_SIZE, lingerMs: LINGER_MS });
    for (let i = 0; i < 2; i++) for (const c of CODECS) await consume(broker.bootstrap, topic(c), records);
    const total: number[] = [];
    const main: number[] = [];
    for (let i = 0; i < consumes; i++) {
      const threads = threadCpu(broker.pid);
      const before = broker.cpuSeconds();
      await consume(broker.bootstrap, topic(CODECS[i % CODECS.length]!), records);
      total.push((broker.cpuSeconds() - before) * 1000);
      main.push(mainThreadMs(broker.pid, threads, threadCpu(broker.pid)));
    }
    return { total, main };
  } finally {
    await broker.stop();
  }
}

async function main(): Promise<void> {
  const pairs = positive('pairs', 2);
  const consumes = positive('consumes', 6);
  const records = positive('records', 150_000);
  const mib = (records * RECORD_SIZE) / 1048576;
  const all = SETTINGS.map(() => ({ total: [] as number[], main: [] as number[] }));
  for (let pair = 1; pair <= pairs; pair++) {
    for (const [k, s] of SETTINGS.entries()) {
      const r = await measure(s.env, consumes, records);
      all[k]!.total.push(...r.total);
      all[k]!.main.push(...r.main);
      console.log(`pair ${pair} ${s.name}: broker CPU per consume of ${mib.toFixed(0)} MiB ${r.total.map((x) => x.toFixed(0)).join(' ')} ms; main thread ${r.main.map((x) => x.toFixed(0)).join(' ')} ms`);
    }
  }
  const perMiB = (ms: number[]): string => {
    const s = spread(ms.map((x) => x / mib));
    return `${s.median.toFixed(2)} (${s.min.toFixed(2)}-${s.max.toFixed(2)}) ms/MiB over ${s.n}`;
  };
  for (const [k, s] of SETTINGS.entries()) console.log(`${s.name}: broker ${perMiB(all[k]!.total)}, main thread ${perMiB(all[k]!.main)}`);
  const ratio = spread(all[1]!.total).median / spread(all[0]!.total).median;
  console.log(`sendfile / buffers, broker CPU medians: ${ratio.toFixed(2)}x`);
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((e: unknown) => {
    console.error(e);
    process.exit(1);
  });
}
