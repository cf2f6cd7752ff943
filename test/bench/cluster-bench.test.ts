import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fmt } from './cluster.bench.js';
import { quantile, spread } from './perf-output.js';

describe('cluster bench figures', () => {
  it('quantile is the nearest-rank value, whatever the input order', () => {
    const v = [5, 1, 4, 2, 3, 10, 9, 8, 7, 6];
    assert.equal(quantile(v, 0.5), 5);
    assert.equal(quantile(v, 0.99), 10);
    assert.equal(quantile(v, 0), 1);
    assert.throws(() => quantile([], 0.5), /no values/);
  });

  it('a figure prints as median (min-max, n)', () => {
    assert.equal(fmt(spread([3, 1, 2]), 1), '2.0 (1.0-3.0, n=3)');
  });
});
