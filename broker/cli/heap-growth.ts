// How far V8 lets the old generation grow past what the last full collection
// left alive before it starts marking again. V8 derives that factor from how
// fast it marks against how fast the program promotes, and a broker's live
// heap is small (23-40 MiB) and marks fast, so V8 settles on its minimum
// (1.1): it then starts incremental marking as soon as ~2.5 MiB more has been
// promoted. Under a steady produce that became a full collection every
// ~100 ms, each freeing almost nothing (26.4 -> 26.0 MB), and V8's helper
// threads spent up to 555 ms of CPU per 146 MiB produced in later runs against
// 15-58 ms in the first (one traced broker: node --trace-gc
// --trace-incremental-marking; docs/benchmarks.md).
//
// The limit also counts the ArrayBuffer memory allocated since the last full
// collection and still held: every socket read of a Produce request and every
// frame assembled from them is one, and V8 frees young ones only at a
// scavenge, which it starts when they reach ~32 MiB. With a factor of 2 (the
// default until 2026-12-07) a live heap of 23 MiB left a limit of ~62 MiB, so
// those 32 MiB reached it again and again: 50-54 full collections in 12
// produces of 146 MiB against 0 with a factor of 4, and produce CPU medians of
// 3.76 and 4.19 ms per MiB against 3.14 and 2.75, peak RSS 227-232 against
// 232-235 MiB (two runs of `node dist/test/bench/heap-growth.bench.js`,
// docs/benchmarks.md; a factor of 3 behaved as 4 in a scratch run). So the factor is 4 (300%),
// V8's own largest: the old generation may reach four times the live heap
// (tens of MiB more, against Kafka's fixed 1 GiB) before V8 marks again.
//
// SEDIMENT_HEAP_GROWING_PERCENT overrides it (0 = V8's own dynamic factor); a
// --heap-growing-percent given to node itself wins over both (node refuses it
// in NODE_OPTIONS, so only its command line can carry it).
import v8 from 'node:v8';
import { ConfigError } from '../config.js';

export const DEFAULT_HEAP_GROWING_PERCENT = 300;
const FLAG = '--heap-growing-percent';
const ENV = 'SEDIMENT_HEAP_GROWING_PERCENT';

/** The percentage to apply, or null to leave V8's own choice; a ConfigError for a malformed override. */
export function heapGrowingPercent(env: NodeJS.ProcessEnv, execArgv: readonly string[]): number | null {
  if (execArgv.some((a) => a === FLAG || a.startsWith(`${FLAG}=`))) return null;
  const raw = env[ENV];
  if (raw === undefined || raw.trim() === '') return DEFAULT_HEAP_GROWING_PERCENT;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > 1000) {
    throw new ConfigError(ENV, `${ENV} must be an integer from 0 (V8's own factor) to 1000, not '${raw}'`);
  }
  return n === 0 ? null : n;
}

/** Applies heapGrowingPercent() to this process; returns the percentage set, or null. */
function applyHeapGrowth(env: NodeJS.ProcessEnv = process.env, execArgv: readonly string[] = process.execArgv): number | null {
  const percent = heapGrowingPercent(env, execArgv);
  if (percent !== null) v8.setFlagsFromString(`${FLAG}=${percent}`);
  return percent;
}

/**
 * Turns V8's memory reducer off for the isolates created from now on: the
 * worker threads' (storage and fetch pools), not the main thread's, whose
 * reducer was made with its heap before any JavaScript ran (V8 reads the flag
 * there only). The reducer watches for a quiet spell after a burst of
 * allocation and then runs up to three full collections with compaction to
 * shrink the heap: a worker whose heap holds the AWS SDK (~9-14 MB) spent
 * 35-130 ms per such GC, ~8 s after start-up and again after each burst of
 * work, on a broker whose load comes in bursts (a replay of the benchmark's
 * produce-then-consume runs, node --trace-gc; issue 16). A worker's heap then
 * stays at its high-water mark, a few MB. Call it before starting workers.
 */
function disableWorkerMemoryReducer(): void {
  v8.setFlagsFromString('--no-memory-reducer');
}

/**
 * The V8 settings of a broker process, before it starts anything: the heap
 * growing factor (applyHeapGrowth) and no memory reducer in the worker threads
 * made afterwards. Returns the heap growing percent set (null: V8's own); a
 * ConfigError for a malformed SEDIMENT_HEAP_GROWING_PERCENT.
 */
export function applyV8Settings(env: NodeJS.ProcessEnv = process.env, execArgv: readonly string[] = process.execArgv): number | null {
  const percent = applyHeapGrowth(env, execArgv);
  disableWorkerMemoryReducer();
  return percent;
}
