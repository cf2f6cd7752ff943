// The chunk cache's read path with reused chunk slots (ChunkMemory) against the
// named baseline of fresh buffers per chunk (rsm.config.chunk.cache.reuse.enable=false),
// in the same run: a sequential reader with a Fetch-like lease per read pulls
// --mib MiB (default 1024) of file:// segments through a cache far smaller
// than the data (--cache-mib, default 32), so chunks are evicted and their
// slots reused as on a broker serving cold reads for long. Each round runs
// each variant in a fresh process (alternating, so drift hits both) and
// prints throughput, garbage collection time and CPU per MiB; the summary
// gives medians, the spread over rounds and the ratio per pair.
//   node dist/test/bench/chunk-cache.bench.js [--rounds N] [--mib N] [--cache-mib N]
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PerformanceObserver } from 'node:perf_hooks';
import { FileSystemRemoteStorage } from '../../remote-log/filesystem/filesystem-remote-storage.js';
import { ChunkCache } from '../../remote-log/read/chunk-cache.js';
import { ChunkMemory } from '../../remote-log/read/chunk-memory.js';
import type { RemoteSegmentRef } from '../../remote-log/remote-storage.js';
import { makeSegment, newRef } from '../remote-log/remote-storage.contract.js';
import { median } from './tiering-peer.js';

const CHUNK = 1024 * 1024;
const SEGMENT_CHUNKS = 64;

interface RoundResult {
  readonly mibPerSec: number;
  readonly gcMs: number;
  readonly cpuMsPerMib: number;
  readonly slotReturns: number;
}

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(name);
  if (i < 0) return fallback;
  const v = Number(process.argv[i + 1]);
  if (!Number.isInteger(v) || v <= 0) throw new Error(`${name} wants a positive integer`);
  return v;
}

/** One variant in this process: what it prints on its last line is the round's result. */
async function child(reuse: boolean, mib: number, cacheMib: number): Promise<void> {
  const root = await mkdtemp(path.join(tmpdir(), 'sediment-chunk-cache-bench-'));
  try {
    const storage = new FileSystemRemoteStorage(root, { chunkSize: CHUNK, fsync: false });
    const refs: RemoteSegmentRef[] = [];
    for (let i = 0; i < 4; i++) {
      const ref = newRef();
      await storage.copySegment(ref, makeSegment(SEGMENT_CHUNKS * CHUNK, i).files);
      refs.push(ref);
    }
    let gcMs = 0;
    const gc = new PerformanceObserver((list) => {
      for (const e of list.getEntries()) gcMs += e.duration;
    });
    gc.observe({ entryTypes: ['gc'] });
    const cache = new ChunkCache({
      source: storage,
      chunkSize: CHUNK,
      maxBytes: cacheMib * CHUNK,
      ...(reuse ? { memory: new ChunkMemory(CHUNK, (cacheMib + 64) * CHUNK) } : {}),
    });
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    let bytes = 0;
    for (let segment = 0; bytes < mib * CHUNK; segment++) {
      const ref = refs[segment % refs.length] as RemoteSegmentRef;
      for (let pos = 0; pos < SEGMENT_CHUNKS * CHUNK && bytes < mib * CHUNK; pos += CHUNK) {
        // A Fetch's lease: released once "its response is written", a turn of the event loop later.
        const ends: Array<() => void> = [];
        const lease = { defer: (end: () => void): boolean => (ends.push(end), true) };
        for (const part of await cache.readParts(ref, pos, pos + CHUNK - 1, { segmentSize: SEGMENT_CHUNKS * CHUNK, lease })) bytes += part.length;
        await new Promise<void>((resolve) => setImmediate(resolve));
        for (const end of ends) end();
      }
    }
    const seconds = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    gc.disconnect();
    const result: RoundResult = {
      mibPerSec: bytes / CHUNK / seconds,
      gcMs,
      cpuMsPerMib: (cpu.user + cpu.system) / 1000 / (bytes / CHUNK),
      slotReturns: cache.stats().slotReturns,
    };
    cache.close();
    await storage.close();
    console.log(JSON.stringify(result));
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

function spread(values: readonly number[]): string {
  return `${Math.min(...values).toFixed(0)}-${Math.max(...values).toFixed(0)}`;
}

async function main(): Promise<void> {
  const rounds = arg('--rounds', 5);
  const mib = arg('--mib', 1024);
  const cacheMib = arg('--cache-mib', 32);
  const self = fileURLToPath(import.meta.url);
  const run = (variant: 'reuse' | 'fresh'): RoundResult => {
    const out = execFileSync(process.execPath, [self, '--child', variant, '--mib', String(mib), '--cache-mib', String(cacheMib)], { encoding: 'utf8' });
    return JSON.parse(out.trim().split('\n').pop() as string) as RoundResult;
  };
  console.log(`chunk cache read path: ${mib} MiB of file:// segments through a ${cacheMib} MiB cache, 1 MiB chunks, ${rounds} rounds, each variant in its own process`);
  const reuse: RoundResult[] = [];
  const fresh: RoundResult[] = [];
  for (let r = 0; r < rounds; r++) {
    // Alternate which goes first, so a drift of the machine hits both.
    const pair = r % 2 === 0 ? [run('reuse'), run('fresh')] : [run('fresh'), run('reuse')].reverse();
    reuse.push(pair[0] as RoundResult);
    fresh.push(pair[1] as RoundResult);
    const [a, b] = pair as [RoundResult, RoundResult];
    console.log(
      `round ${r}: reused slots ${a.mibPerSec.toFixed(0)} MiB/s, GC ${a.gcMs.toFixed(0)} ms, CPU ${a.cpuMsPerMib.toFixed(2)} ms/MiB (${a.slotReturns} slots reused); ` +
        `fresh buffers ${b.mibPerSec.toFixed(0)} MiB/s, GC ${b.gcMs.toFixed(0)} ms, CPU ${b.cpuMsPerMib.toFixed(2)} ms/MiB; ratio ${(a.mibPerSec / b.mibPerSec).toFixed(2)}x`,
    );
  }
  const ratios = reuse.map((a, i) => a.mibPerSec / (fresh[i] as RoundResult).mibPerSec);
  console.log(
    `median: reused slots ${median(reuse.map((x) => x.mibPerSec)).toFixed(0)} MiB/s (${spread(reuse.map((x) => x.mibPerSec))}), GC ${median(reuse.map((x) => x.gcMs)).toFixed(0)} ms, CPU ${median(reuse.map((x) => x.cpuMsPerMib)).toFixed(2)} ms/MiB; ` +
      `fresh buffers ${median(fresh.map((x) => x.mibPerSec)).toFixed(0)} MiB/s (${spread(fresh.map((x) => x.mibPerSec))}), GC ${median(fresh.map((x) => x.gcMs)).toFixed(0)} ms, CPU ${median(fresh.map((x) => x.cpuMsPerMib)).toFixed(2)} ms/MiB; ` +
      `throughput ratio ${median(ratios).toFixed(2)}x (${Math.min(...ratios).toFixed(2)}-${Math.max(...ratios).toFixed(2)})`,
  );
}

const childAt = process.argv.indexOf('--child');
if (childAt >= 0) await child(process.argv[childAt + 1] === 'reuse', arg('--mib', 1024), arg('--cache-mib', 32));
else await main();
