// Parsers of the Kafka load generators' output, the median/spread statistics,
// the report table and the doc splice, and the .cpuprofile summary.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseConsumerSummary, parseProcStatCpuTicks, parseProcStatUserSystemTicks, parseProcStatusMemory, parseProducerSummary, parsePromSample, perfCopySplit, spread, sumPromSamples } from './perf-output.js';
import { consumeCpuPairs, cpuKey, DOC_BEGIN, DOC_END, emptyResults, figureRows, markdownTable, record, spliceGenerated } from './bench-report.js';
import { summarizeProfile } from './cpu-profile-summary.js';

const producerOut = [
  '100927 records sent, 20149.1 records/sec (19.68 MB/sec), 399.5 ms avg latency, 1173.0 ms max latency.',
  '300000 records sent, 34702.1 records/sec (33.89 MB/sec), 430.26 ms avg latency, 1173.00 ms max latency, 429 ms 50th, 667 ms 95th, 747 ms 99th, 846 ms 99.9th.',
  '',
].join('\n');

test('ProducerPerformance: the final summary line, not the interim windows', () => {
  const s = parseProducerSummary(producerOut);
  assert.equal(s.records, 300000);
  assert.equal(s.recordsPerSec, 34702.1);
  assert.equal(s.mbPerSec, 33.89);
  assert.equal(s.avgLatencyMs, 430.26);
  assert.equal(s.maxLatencyMs, 1173);
  assert.deepEqual([s.p50Ms, s.p95Ms, s.p99Ms, s.p999Ms], [429, 667, 747, 846]);
  assert.throws(() => parseProducerSummary('only an interim line, 1.0 ms avg latency\n'), /no ProducerPerformance summary/);
});

test('ConsumerPerformance: the row under the header, by column name', () => {
  const out = [
    'start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec',
    '2026-11-29 07:25:04:351, 2026-11-29 07:25:12:916, 292.9688, 34.2053, 300000, 35026.2697, 4342, 4223, 69.3746, 71039.5453',
  ].join('\n');
  const s = parseConsumerSummary(`WARN something\n${out}\n`);
  assert.equal(s.records, 300000);
  assert.equal(s.mb, 292.9688);
  assert.equal(s.mbPerSec, 34.2053);
  assert.equal(s.rebalanceMs, 4342);
  assert.equal(s.fetchMs, 4223);
  assert.equal(s.fetchMbPerSec, 69.3746);
  assert.equal(s.fetchRecordsPerSec, 71039.5453);
  assert.throws(() => parseConsumerSummary('nothing here'), /no ConsumerPerformance result/);
  const timedOut = parseConsumerSummary(
    [out.split('\n')[0], 'WARNING: Exiting before consuming the expected number of messages: timeout (30000 ms) exceeded.', '2026-11-29 07:40:19:881, 2026-11-29 07:40:34:957, 1.0000, 0.1, 1024, 68.0, 0, 15076, 0.1, 68.0'].join('\n'),
  );
  assert.equal(timedOut.records, 1024);
});

test('spread: median of odd and even counts, min and max', () => {
  assert.deepEqual(spread([3, 1, 2]), { median: 2, min: 1, max: 3, n: 3 });
  assert.deepEqual(spread([4, 1, 3, 2]), { median: 2.5, min: 1, max: 4, n: 4 });
  assert.deepEqual(spread([7]), { median: 7, min: 7, max: 7, n: 1 });
  assert.throws(() => spread([]), { name: 'Error', message: 'spread of no values' });
});

test('/proc/<pid>/status: VmRSS and VmHWM in bytes', () => {
  const m = parseProcStatusMemory('Name:\tnode\nVmHWM:\t  204800 kB\nVmRSS:\t  102400 kB\n');
  assert.deepEqual(m, { rssBytes: 102400 * 1024, hwmBytes: 204800 * 1024 });
  assert.deepEqual(parseProcStatusMemory('Name:\tzombie\n'), { rssBytes: null, hwmBytes: null });
});

test('/proc/<pid>/stat: utime + stime, even with spaces and parentheses in the command name', () => {
  const rest = 'S 1 2 3 4 5 6 7 8 9 10 250 40 0 0 20 0 30 0 100';
  assert.equal(parseProcStatCpuTicks(`1234 (java) ${rest}`), 290);
  assert.equal(parseProcStatCpuTicks(`1234 (my (odd) name) ${rest}`), 290);
  assert.throws(() => parseProcStatCpuTicks('garbage'), { name: 'Error', message: /^unreadable \/proc\/<pid>\/stat: garbage/ });
});

test('Prometheus text: an unlabelled sample by exact name', () => {
  const text = '# HELP nodejs_eventloop_lag_max_seconds x\nnodejs_eventloop_lag_max_seconds 0.25\nnodejs_eventloop_lag_max_seconds_extra 9\n';
  assert.equal(parsePromSample(text, 'nodejs_eventloop_lag_max_seconds'), 0.25);
  assert.equal(parsePromSample(text, 'missing'), null);
});

test('Prometheus text: labelled samples summed by name and matching labels', () => {
  const text = [
    '# TYPE sediment_requests_total counter',
    'sediment_requests_total{api="Fetch",version="17"} 10',
    'sediment_requests_total{api="Fetch",version="12"} 5',
    'sediment_requests_total{api="Produce",version="11"} 7',
    'sediment_requests_total_extra{api="Fetch"} 100',
    'nodejs_gc_duration_seconds_sum{kind="major"} 0.5',
    'nodejs_gc_duration_seconds_sum{kind="minor"} 0.25',
    'sediment_plain 3',
  ].join('\n');
  assert.equal(sumPromSamples(text, 'sediment_requests_total', { api: 'Fetch' }), 15);
  assert.equal(sumPromSamples(text, 'sediment_requests_total'), 22);
  assert.equal(sumPromSamples(text, 'nodejs_gc_duration_seconds_sum'), 0.75);
  assert.equal(sumPromSamples(text, 'sediment_plain'), 3);
  assert.equal(sumPromSamples(text, 'missing'), 0);
});

test('/proc/<pid>/stat: utime and stime apart', () => {
  assert.deepEqual(parseProcStatUserSystemTicks('1234 (node) S 1 2 3 4 5 6 7 8 9 10 250 40 0 0 20 0 30 0 100'), { user: 250, system: 40 });
});

test('report: medians per broker and the Sediment/Kafka ratio', () => {
  const sediment = emptyResults();
  const kafka = emptyResults();
  const p = parseProducerSummary(producerOut);
  for (const mb of [10, 30, 20]) record(sediment.peak, 'none, acks=1', { ...p, mbPerSec: mb });
  for (const mb of [40, 40, 40]) record(kafka.peak, 'none, acks=1', { ...p, mbPerSec: mb });
  sediment.peakRssBytes = 100 * 1048576;
  kafka.peakRssBytes = 400 * 1048576;
  const rows = figureRows([{ compression: 'none', acks: '1' }], sediment, kafka);
  const mbRow = rows.find((r) => r.figure === 'produce' && r.unit === 'MB/s');
  assert.equal(mbRow?.sediment?.median, 20);
  const table = markdownTable(rows);
  assert.match(table, /\| produce \| none, acks=1 \| MB\/s \| 20\.0 \(10\.0-30\.0\) \| 40\.0 \(40\.0-40\.0\) \| 0\.50x \|/);
  assert.match(table, /\| peak RSS \| whole run \| MiB \| 100 \| 400 \| 0\.25x \|/);
  // A figure measured on one broker only has no ratio.
  assert.match(markdownTable(figureRows([{ compression: 'none', acks: '1' }], sediment, undefined)), /\| 20\.0 \(10\.0-30\.0\) \| - \| - \|/);
});

test('doc splice keeps hand-written text around the generated section', () => {
  const first = spliceGenerated(null, 'table v1');
  assert.ok(first.includes(`${DOC_BEGIN}\ntable v1\n${DOC_END}`));
  const edited = `${first}\n## Where the time goes\nprofile notes\n`;
  const second = spliceGenerated(edited, 'table v2');
  assert.ok(second.includes('table v2'));
  assert.ok(!second.includes('table v1'));
  assert.ok(second.includes('profile notes'));
});

test('cpu profile: self time per function from sample deltas, idle apart', () => {
  const frame = (functionName: string, url = '') => ({ functionName, url, lineNumber: 0, columnNumber: 0 });
  const profile = {
    nodes: [
      { id: 1, callFrame: frame('(root)'), children: [2, 3, 4] },
      { id: 2, callFrame: frame('(idle)') },
      { id: 3, callFrame: frame('hot', 'file:///repo/dist/broker/server/connection.js') },
      { id: 4, callFrame: frame('writev', '') },
    ],
    startTime: 0,
    endTime: 10_000,
    // samples at t=1000 (hot), 2000 (hot), 4000 (idle), 8000 (writev)
    samples: [3, 3, 2, 4],
    timeDeltas: [1000, 1000, 2000, 4000],
  };
  const s = summarizeProfile(profile);
  assert.equal(s.totalMs, 9);
  assert.equal(s.idleMs, 4);
  const hot = s.byFunction.find((f) => f.name.startsWith('hot'));
  assert.equal(hot?.name, 'hot broker/server/connection.js:1');
  assert.equal(hot?.selfMs, 3);
  assert.equal(hot?.pctBusy, 60);
  assert.equal(s.byFile.find((f) => f.name === 'broker/server/connection.js')?.selfMs, 3);
});

test('consume CPU pairs: run k of each broker, two decimals, Sediment above Kafka in bold and counted', () => {
  const s = emptyResults();
  const k = emptyResults();
  for (const v of [0.81, 1.04]) record(s.cpuMsPerMiB, cpuKey('consume', 'none'), v);
  for (const v of [1.2, 1.0]) record(k.cpuMsPerMiB, cpuKey('consume', 'none'), v);
  for (const v of [0.9, 0.95]) record(s.cpuMsPerMiB, cpuKey('consume', 'lz4'), v);
  for (const v of [0.9, 1.5]) record(k.cpuMsPerMiB, cpuKey('consume', 'lz4'), v);
  const text = consumeCpuPairs(['none', 'lz4'], s, k)!;
  assert.match(text, /at or below Kafka in 3 of 4 pairs/);
  assert.match(text, /\| 1 \| 0\.81 \| 1\.20 \| 0\.90 \| 0\.90 \|/);
  assert.match(text, /\| 2 \| \*\*1\.04\*\* \| 1\.00 \| 0\.95 \| 1\.50 \|/);
  assert.equal(consumeCpuPairs(['none'], s, undefined), null);
  assert.equal(consumeCpuPairs(['none'], emptyResults(), k), null);
});

test('perf report by symbol: the two kernel copies apart from the rest of the kernel and from user space', () => {
  const report = [
    '# Samples: 2K of event \'cpu-clock:ppp\'',
    '#',
    '# Overhead  Symbol',
    '    21.28%  [k] _copy_to_iter',
    '    18.08%  [k] _copy_from_iter',
    '     2.45%  [k] filemap_get_read_batch',
    '     2.07%  [.] Builtins_LoadIC',
    '     0.56%  [.] JS:*analyzeAppend file:///x/append-plan.js:80:30',
    '     0.19%  [k] tcp_sendmsg_locked',
    '',
  ].join('\n');
  const [toIter, fromIter, kernel, user] = perfCopySplit(report);
  assert.equal(toIter, 21.28);
  assert.equal(fromIter, 18.08);
  assert.ok(Math.abs(kernel - 2.64) < 1e-9, String(kernel));
  assert.ok(Math.abs(user - 2.63) < 1e-9, String(user));
  assert.deepEqual(perfCopySplit('# no samples\n'), [0, 0, 0, 0]);
});
