// How far V8 lets the old generation grow past what the last full collection
// left alive before it starts marking again. V8 derives that factor from how
// fast it marks against how fast the program promotes, and a broker's live
// heap is small (25-40 MiB) and marks fast, so V8 settles on its minimum
// (1.1): it then starts incremental marking as soon as ~2.5 MiB more has been
// promoted. Under a steady produce that became a full collection every
// ~100 ms, each freeing almost nothing (26.4 -> 26.0 MB), and concurrent
// marking on V8's helper threads grew to 300-550 ms of CPU per 146 MiB
// produced from the second run on (node --trace-gc --trace-incremental-marking;
// docs/benchmarks.md). A fixed factor of 2 bounds the old generation at about
// twice the live heap (tens of MiB more, against Kafka's fixed 1 GiB) and
// marks an order of magnitude less often.
//
// SEDIMENT_HEAP_GROWING_PERCENT overrides it (0 = V8's own dynamic factor); a
// --heap-growing-percent given to node itself wins over both.
import v8 from 'node:v8';

export const DEFAULT_HEAP_GROWING_PERCENT = 100;
const FLAG = '--heap-growing-percent';

/** The percentage to apply, or null to leave V8's own choice; throws on a malformed override. */
export function heapGrowingPercent(env: NodeJS.ProcessEnv, execArgv: readonly string[]): number | null {
  const nodeOptions = env['NODE_OPTIONS'] ?? '';
  if (execArgv.some((a) => a === FLAG || a.startsWith(`${FLAG}=`)) || nodeOptions.includes(FLAG)) return null;
  const raw = env['SEDIMENT_HEAP_GROWING_PERCENT'];
  if (raw === undefined || raw.trim() === '') return DEFAULT_HEAP_GROWING_PERCENT;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > 1000) {
    throw new RangeError(`SEDIMENT_HEAP_GROWING_PERCENT must be an integer from 0 (V8's own factor) to 1000, not '${raw}'`);
  }
  return n === 0 ? null : n;
}

/** Applies heapGrowingPercent() to this process; returns the percentage set, or null. */
export function applyHeapGrowth(env: NodeJS.ProcessEnv = process.env, execArgv: readonly string[] = process.execArgv): number | null {
  const percent = heapGrowingPercent(env, execArgv);
  if (percent !== null) v8.setFlagsFromString(`${FLAG}=${percent}`);
  return percent;
}
