import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../../../broker/common/clock.js';
import { MetricsUnavailableError, measureFromMetrics, measuredFrom, projectMonth } from '../../../broker/cost/from-metrics.js';
import { DAY_MS, DEFAULT_WORKLOAD, GIB, MIB, MONTH_SECONDS, STANDARD_SCENARIOS } from '../../../broker/cost/model.js';
import { builtinSheet, selectPrices } from '../../../broker/cost/price-sheet.js';
import { buildReport } from '../../../broker/cost/report.js';

function page(c: { bytesIn: number; bytesOut: number; copyBytes: number; copies: number; fetchBytes: number; fetches: number; start?: number }): string {
  return [
    '# TYPE sediment_bytes_in_total counter',
    `sediment_bytes_in_total{topic="a"} ${c.bytesIn / 2}`,
    `sediment_bytes_in_total{topic="b"} ${c.bytesIn / 2}`,
    `sediment_bytes_out_total ${c.bytesOut}`,
    `sediment_remote_copy_bytes_total{topic="a"} ${c.copyBytes}`,
    `sediment_remote_copy_requests_total{topic="a"} ${c.copies}`,
    `sediment_remote_fetch_bytes_total{topic="a"} ${c.fetchBytes}`,
    `sediment_remote_fetch_requests_total{topic="a"} ${c.fetches}`,
    `sediment_remote_chunk_fetches_total ${c.fetches * 3}`,
    `sediment_remote_index_cache_misses_total ${c.fetches}`,
    ...(c.start === undefined ? [] : [`process_start_time_seconds ${c.start}`]),
    '',
  ].join('\n');
}

function fakeFetch(pages: string[]): { fetchImpl: typeof fetch; urls: string[] } {
  const urls: string[] = [];
  const fetchImpl = (async (input: string | URL | Request) => {
    urls.push(String(input));
    const body = pages.shift();
    if (body === undefined) return new Response('gone', { status: 503 });
    return new Response(body, { status: 200, headers: { 'content-type': 'text/plain' } });
  }) as typeof fetch;
  return { fetchImpl, urls };
}

describe('measuring the workload from metrics', () => {
  it('one scrape: counters over the time since the broker started', async () => {
    const clock = new ManualClock(1_700_000_100_000);
    const { fetchImpl, urls } = fakeFetch([
      page({ bytesIn: 100 * MIB, bytesOut: 200 * MIB, copyBytes: 64 * MIB, copies: 4, fetchBytes: 20 * MIB, fetches: 40, start: 1_700_000_000 }),
    ]);
    const p = await measureFromMetrics('http://127.0.0.1:9644/metrics', { fetchImpl, clock });
    assert.deepEqual(urls, ['http://127.0.0.1:9644/metrics']);
    const m = p.measured;
    assert.equal(m.windowSeconds, 100);
    assert.equal(m.ingressBytesPerSec, MIB);
    assert.equal(m.bytesOutPerSec, 2 * MIB);
    assert.equal(m.segmentBytes, 16 * MIB);
    assert.equal(m.remoteReadShare, 0.1);
    assert.equal(m.fetchRequestsPerSec, 0.4);
    assert.equal(m.getRequestsPerSec, 1.6, 'chunk GETs plus index GETs');
    assert.equal(m.metricNames.bytesIn, 'sediment_bytes_in_total');
  });

  it('a sample period: the difference of two scrapes over the time between them', async () => {
    const clock = new ManualClock(0);
    const { fetchImpl } = fakeFetch([
      page({ bytesIn: 1000, bytesOut: 0, copyBytes: 0, copies: 0, fetchBytes: 0, fetches: 0 }),
      page({ bytesIn: 1000 + 30 * 5 * MIB, bytesOut: 30 * 5 * MIB, copyBytes: 2 * 32 * MIB, copies: 2, fetchBytes: 0, fetches: 0 }),
    ]);
    const p = await measureFromMetrics('http://x/metrics', { fetchImpl, clock, sampleMs: 30_000, sleep: async (ms) => clock.advance(ms) });
    assert.equal(p.measured.windowSeconds, 30);
    assert.equal(p.measured.ingressBytesPerSec, 5 * MIB);
    assert.equal(p.measured.segmentBytes, 32 * MIB);
    assert.equal(p.measured.remoteReadShare, 0);
  });

  it('says what is missing: no endpoint, no bytes-in counter, no start time', async () => {
    const refused = (async () => {
      throw new TypeError('fetch failed');
    }) as typeof fetch;
    await assert.rejects(measureFromMetrics('http://127.0.0.1:9/metrics', { fetchImpl: refused }), (e: unknown) => e instanceof MetricsUnavailableError && /cannot reach/.test(e.message));
    await assert.rejects(measureFromMetrics('http://x/metrics', { fetchImpl: fakeFetch(['other_total 1\nprocess_start_time_seconds 1\n']).fetchImpl }), /no bytes-in counter/);
    await assert.rejects(measureFromMetrics('http://x/metrics', { fetchImpl: fakeFetch([page({ bytesIn: 1, bytesOut: 1, copyBytes: 0, copies: 0, fetchBytes: 0, fetches: 0 })]).fetchImpl }), /--sample/);
  });

  it('projects a month of object store traffic at the sheet prices', () => {
    const measured = measuredFrom({ bytesIn: 600 * MIB, copyBytes: 320 * MIB, copyRequests: 10, fetchBytes: 60 * MIB, fetchRequests: 6, chunkFetches: 60, indexFetches: 6 }, {}, 60, {});
    const report = buildReport({ ...DEFAULT_WORKLOAD, ingressBytesPerSec: measured.ingressBytesPerSec, retentionMs: 7 * DAY_MS }, STANDARD_SCENARIOS, selectPrices(builtinSheet('aws')!));
    const month = projectMonth({ url: 'u', measured }, report);
    assert.equal(month.ingressGiB, (10 * MIB * MONTH_SECONDS) / GIB);
    assert.equal(month.segmentsCopied, (10 / 60) * MONTH_SECONDS);
    // 32 MiB segments: at the threshold, one PutObject + 5 small objects.
    assert.equal(month.putRequests, month.segmentsCopied * 6);
    assert.equal(month.putCost, (month.putRequests * 0.005) / 1000);
    assert.equal(month.getRequests, 1.1 * MONTH_SECONDS);
    assert.equal(month.getCost, (month.getRequests * 0.0004) / 1000);
  });
});
