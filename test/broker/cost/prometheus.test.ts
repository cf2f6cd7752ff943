import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MetricsParseError, parsePrometheusText, samplesOf, sumFirst } from '../../../broker/cost/prometheus.js';

const PAGE = `# HELP sediment_remote_copy_bytes_total Bytes copied to remote storage
# TYPE sediment_remote_copy_bytes_total counter
sediment_remote_copy_bytes_total{topic="orders"} 1048576
sediment_remote_copy_bytes_total{topic="clicks",note="a \\"quoted\\" value, with comma"} 2048
process_start_time_seconds 1700000000
sediment_request_latency_seconds_bucket{api="Produce",le="+Inf"} 12
weird_gauge NaN 1700000000000
prom_client_gauge Nan
`;

describe('Prometheus text format', () => {
  it('reads samples with labels, escaped quotes, NaN and +Inf', () => {
    const s = parsePrometheusText(PAGE);
    assert.equal(s.length, 6);
    assert.ok(Number.isNaN(s[5]?.value), 'prom-client writes NaN as Nan');
    assert.deepEqual(s[1]?.labels, { topic: 'clicks', note: 'a "quoted" value, with comma' });
    assert.equal(s[3]?.labels['le'], '+Inf');
    assert.ok(Number.isNaN(s[4]?.value));
    assert.equal(samplesOf(s, 'sediment_remote_copy_bytes_total', { topic: 'orders' })[0]?.value, 1048576);
  });

  it('sums a metric over its label sets, taking the first name present', () => {
    const s = parsePrometheusText(PAGE);
    assert.deepEqual(sumFirst(s, ['nope_total', 'sediment_remote_copy_bytes_total']), { name: 'sediment_remote_copy_bytes_total', value: 1048576 + 2048 });
    assert.equal(sumFirst(s, ['nope_total']), undefined);
  });

  it('rejects malformed lines with their number', () => {
    assert.throws(() => parsePrometheusText('ok 1\nbad{x="1" 2\n'), (e: unknown) => e instanceof MetricsParseError && /line 2/.test(e.message));
    assert.throws(() => parsePrometheusText('m abc'), /bad sample value/);
  });
});
