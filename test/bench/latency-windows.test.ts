import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatWindow, p99Ratio, percentile, windowStats, type LatencySample } from './latency-windows.js';

describe('produce latency windows', () => {
  it('percentile is the nearest-rank value of unsorted input', () => {
    const v = Array.from({ length: 100 }, (_, i) => 100 - i);
    assert.equal(percentile(v, 50), 50);
    assert.equal(percentile(v, 99), 99);
    assert.equal(percentile(v, 100), 100);
    assert.equal(percentile([7], 99), 7);
    assert.throws(() => percentile([], 50), /no values/);
  });

  it('a window takes the sends that started inside it, not those acknowledged inside it', () => {
    const samples: LatencySample[] = [
      { at: 999, ms: 500 }, // started before the window: left out even though acknowledged inside
      { at: 1000, ms: 2 },
      { at: 1500, ms: 4 },
      { at: 1999, ms: 40 },
      { at: 2000, ms: 1 }, // the window is half-open
    ];
    const w = windowStats(samples, 1000, 2000);
    assert.deepEqual(w, { count: 3, p50: 4, p99: 40, max: 40 });
    assert.equal(windowStats(samples, 3000, 4000), null);
  });

  it('the ratio is p99 during over p99 idle, null without samples', () => {
    const idle = { count: 10, p50: 2, p99: 4, max: 5 };
    const during = { count: 10, p50: 3, p99: 6, max: 9 };
    assert.equal(p99Ratio(idle, during), 1.5);
    assert.equal(p99Ratio(null, during), null);
    assert.equal(p99Ratio(idle, null), null);
    assert.equal(formatWindow(during), 'p50 3.0 / p99 6.0 / max 9.0 ms, 10 sends');
    assert.equal(formatWindow(null), 'no sends');
  });
});
