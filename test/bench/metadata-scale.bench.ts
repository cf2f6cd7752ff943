// Scale figures for the remote log metadata index (moved out of the unit
// suite, where speed on a shared machine decided nothing): heap retained per
// remote segment with 100k segments in one partition, and replay CPU time of
// 100k segments' events (400k records) against a quarter of that, to show
// replay grows linearly. Prints the figures; run by hand:
//
//   node --expose-gc dist/test/bench/metadata-scale.bench.js [--runs N]
//
// Each replay figure is the fastest of --runs (default 2) after a warm-up run,
// so a collection that falls in one run does not decide it. CPU time (this
// process, user + system) rather than wall time: it does not grow with load
// from other processes.
import { RemoteLogMetadataManager } from '../../metadata/remote-log-metadata/remote-log-metadata-manager.js';
import type { MetadataTopicLog } from '../../metadata/remote-log-metadata/metadata-topic-log.js';
import { buildLog, fillCache, type PackedLog } from '../metadata/remote-log-metadata/scale-fixtures.js';

const gcFn = (globalThis as { gc?: () => void }).gc;
if (gcFn === undefined) {
  console.error('run with node --expose-gc (heap figures need a collection before each reading)');
  process.exit(2);
}
const gc: () => void = gcFn;

function usedBytes(): number {
  gc();
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

async function replayCpuMs(log: MetadataTopicLog): Promise<number> {
  const c0 = process.cpuUsage();
  const manager = new RemoteLogMetadataManager({ log });
  await manager.start();
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / 1000;
}

async function fastestReplay(log: PackedLog, runs: number): Promise<number> {
  let best = Infinity;
  for (let i = 0; i < runs; i++) best = Math.min(best, await replayCpuMs(log));
  return best;
}

async function main(): Promise<void> {
  const runsArg = process.argv.indexOf('--runs');
  const runs = runsArg >= 0 ? Number(process.argv[runsArg + 1]) : 2;
  const n = 100_000;
  const before = usedBytes();
  const cache = fillCache(n);
  const perSegment = (usedBytes() - before) / n;
  console.log(`remote log metadata index: ${n} segments, ${perSegment.toFixed(0)} bytes/segment retained (typed arrays ${(cache.indexByteLength / n).toFixed(0)} bytes/segment incl. growth slack)`);

  // One log at a time, so that the other's 400k buffers do not slow the collector.
  let small: PackedLog | undefined = buildLog(25_000, 12_500, 50);
  const smallSize = small.size;
  await replayCpuMs(small); // warm up the JIT
  const s = await fastestReplay(small, runs);
  small = undefined;
  const big = buildLog(100_000, 50_000, 50);
  const b = await fastestReplay(big, runs);
  const perSmall = (s * 1000) / smallSize;
  const perBig = (b * 1000) / big.size;
  console.log(
    `remote log metadata replay (CPU time, fastest of ${runs}): ${smallSize} records in ${s.toFixed(0)} ms (${perSmall.toFixed(2)} us/record), ` +
      `${big.size} records in ${b.toFixed(0)} ms (${perBig.toFixed(2)} us/record); big/small per record ${(perBig / perSmall).toFixed(2)} (1 = linear)`,
  );
}

await main();
