// Pure statistics of the tiering bench's produce latency phase: the samples of
// one paced producer (test/bench/produce-latency-probe.ts) cut into the windows
// the bench marked (idle, copy running, cold read running). No I/O.
import { quantile } from './perf-output.js';

/** One acknowledged send: when it started (epoch ms) and how long it took (ms). */
export interface LatencySample {
  readonly at: number;
  readonly ms: number;
}

export interface WindowStats {
  readonly count: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
}

/** Nearest-rank percentile (0 < q <= 100) of unsorted values; throws on none. */
export function percentile(values: readonly number[], q: number): number {
  return quantile(values, q / 100);
}

/** The sends that started in [from, to); null when none did. */
export function windowStats(samples: readonly LatencySample[], from: number, to: number): WindowStats | null {
  const ms = samples.filter((s) => s.at >= from && s.at < to).map((s) => s.ms);
  if (ms.length === 0) return null;
  return { count: ms.length, p50: percentile(ms, 50), p99: percentile(ms, 99), max: Math.max(...ms) };
}

/** p99 during a window over p99 of the idle window; null when either has no samples. */
export function p99Ratio(idle: WindowStats | null, during: WindowStats | null): number | null {
  if (idle === null || during === null || idle.p99 <= 0) return null;
  return during.p99 / idle.p99;
}

export function formatWindow(w: WindowStats | null): string {
  return w === null ? 'no sends' : `p50 ${w.p50.toFixed(1)} / p99 ${w.p99.toFixed(1)} / max ${w.max.toFixed(1)} ms, ${w.count} sends`;
}
