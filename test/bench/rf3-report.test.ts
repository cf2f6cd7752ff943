// The RF 3 section's pure parts: figures (median, spread, ratio), the report
// text, the doc splice of its own markers next to the single-broker section,
// the section options, and the KRaft node configuration of the Kafka cluster.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cpuKey, DOC_BEGIN, DOC_END, record, RF3_MARKERS, spliceGenerated } from './bench-report.js';
import { kraftNodeOverrides } from './kafka-cluster.js';
import type { ConsumerSummary, ProducerSummary } from './perf-output.js';
import { cpuMsPerMiB, emptyRf3Results, resolveSections, rf3FigureRows, rf3Report, type Rf3Results } from './rf3-report.js';

const produced = (recordsPerSec: number): ProducerSummary => ({ records: 1000, recordsPerSec, mbPerSec: recordsPerSec / 1024, avgLatencyMs: 1, maxLatencyMs: 2, p50Ms: 1, p95Ms: 1, p99Ms: 2, p999Ms: 2 });
const consumed = (recordsPerSec: number): ConsumerSummary => ({ mb: 1, records: 1000, mbPerSec: 1, rebalanceMs: 3000, fetchMs: 100, fetchMbPerSec: recordsPerSec / 1024, fetchRecordsPerSec: recordsPerSec });

function results(scale: number, withEtcd: boolean): Rf3Results {
  const r = emptyRf3Results();
  for (const rps of [10_240, 30_720, 20_480]) {
    record(r.produce, 'none, acks=all', produced(rps * scale));
    record(r.produce, 'lz4, acks=all', produced(rps * scale));
    record(r.consume, 'none', consumed(rps * 2 * scale));
    record(r.consume, 'lz4', consumed(rps * 2 * scale));
    record(r.brokerCpuMsPerMiB, cpuKey('produce', 'none, acks=all'), 10 / scale);
    if (withEtcd) record(r.etcdCpuMsPerMiB, cpuKey('produce', 'none, acks=all'), 0.5);
    r.load1.push(scale * 2);
  }
  r.idleCpuMsPerSec.push(40 * scale);
  return r;
}

describe('RF 3 bench report', () => {
  it('cpuMsPerMiB: CPU milliseconds per 2^20 bytes of payload', () => {
    assert.equal(cpuMsPerMiB(2, 1024, 1024), 2000);
    assert.equal(cpuMsPerMiB(0.5, 2048, 1024), 250);
  });

  it('rows: medians with spread, ratio Sediment/Kafka, none for the load average or Sediment-only etcd', () => {
    const rows = rf3FigureRows(results(1, true), results(2, false));
    const row = (figure: string, workload: string, unit: string) => rows.find((r) => r.figure === figure && r.workload === workload && r.unit === unit);
    const produce = row('produce', 'none, acks=all', 'records/s');
    assert.deepEqual([produce?.sediment?.median, produce?.sediment?.min, produce?.sediment?.max], [20_480, 10_240, 30_720]);
    assert.equal(produce?.kafka?.median, 40_960);
    assert.equal(row('produce', 'lz4, acks=all', 'MiB/s')?.sediment?.median, 20);
    assert.equal(row('consume', 'lz4', 'records/s')?.kafka?.median, 81_920);
    assert.equal(row('broker CPU (3 processes), produce', 'none, acks=all', 'ms/MiB')?.kafka?.median, 5);
    const etcd = row('etcd CPU (Sediment only), produce', 'none, acks=all', 'ms/MiB');
    assert.equal(etcd?.sediment?.median, 0.5);
    assert.equal(etcd?.kafka, undefined);
    const idle = row('broker CPU at idle (3 processes)', '5 s after the warm-up', 'ms/s');
    assert.deepEqual([idle?.sediment?.median, idle?.kafka?.median], [40, 80]);
    const load = row('load average (1 min) at run start', 'all runs', '');
    assert.equal(load?.noRatio, true);

    const text = rf3Report({
      command: 'npm run bench -- --section rf3',
      startedAt: new Date('2026-12-03T07:00:00Z'),
      minutes: 4.25,
      rounds: 3,
      records: 100_000,
      recordSize: 1024,
      partitions: 6,
      batchSize: 65536,
      lingerMs: 5,
      cpus: 2,
      kafkaVersion: '4.3.1',
      kafkaHeap: '1G',
      loadStart: '3.00 / 2.00 / 1.00',
      loadEnd: '5.00 / 3.00 / 2.00',
      sediment: results(1, true),
      kafka: results(2, false),
    });
    assert.match(text, /^## Replication factor 3: results of 2026-12-03 07:00 UTC/);
    assert.match(text, /Command: `npm run bench -- --section rf3` \(3 rounds per figure, 4\.3 minutes in all\)/);
    assert.match(text, /\| Sediment x3 median \(min-max\) \| Kafka x3 median \(min-max\) \|/);
    assert.match(text, /\| produce \| none, acks=all \| records\/s \| 20,480 \(10,240-30,720\) \| 40,960 \(20,480-61,440\) \| 0\.50x \|/);
    assert.match(text, /\| broker CPU \(3 processes\), produce \| none, acks=all \| ms\/MiB \| 10\.0 \(10\.0-10\.0\) \| 5\.0 \(5\.0-5\.0\) \| 2\.00x \|/);
    assert.match(text, /\| etcd CPU \(Sediment only\), produce \| none, acks=all \| ms\/MiB \| 0\.5 \(0\.5-0\.5\) \| - \| - \|/);
    assert.match(text, /\| load average \(1 min\) at run start \| all runs \|  \| 2\.0 \(2\.0-2\.0\) \| 4\.0 \(4\.0-4\.0\) \| - \|/);
    // Kafka's runs started at load 4 on 2 cores: the report says the figures are noisy.
    assert.match(text, /max 4\.0 at a run start\): other work shared the cores, so these figures are noisy/);
    assert.match(text, /replication\.factor=3, min\.insync\.replicas=2/);
  });

  it('a quiet run says so instead', () => {
    const quiet = emptyRf3Results();
    quiet.load1.push(0.5, 1.5);
    const text = rf3Report({ command: 'c', startedAt: new Date(0), minutes: 1, rounds: 1, records: 1, recordSize: 1024, partitions: 6, batchSize: 1, lingerMs: 5, cpus: 2, kafkaVersion: 'v', kafkaHeap: '1G', loadStart: '', loadEnd: '', sediment: quiet, kafka: undefined });
    assert.match(text, /stayed at or below the core count/);
    assert.match(text, /\(1 round per figure/);
  });

  it('the RF 3 section is spliced between its own markers, leaving the single-broker section alone', () => {
    const single = spliceGenerated(null, 'single v1');
    const both = spliceGenerated(`${single}\nhand-written notes\n`, 'rf3 v1', RF3_MARKERS);
    assert.ok(both.includes(`${DOC_BEGIN}\nsingle v1\n${DOC_END}`));
    assert.ok(both.includes(`${RF3_MARKERS.begin}\nrf3 v1\n${RF3_MARKERS.end}`));
    const again = spliceGenerated(`${both}\nafter rf3\n`, 'rf3 v2', RF3_MARKERS);
    assert.ok(again.includes('rf3 v2') && !again.includes('rf3 v1'));
    assert.ok(again.includes('single v1') && again.includes('hand-written notes') && again.includes('after rf3'));
    const single2 = spliceGenerated(again, 'single v2');
    assert.ok(single2.includes('single v2') && !single2.includes('single v1') && single2.includes('rf3 v2'));
  });

  it('sections: all by default; --section, --only-rf3 and --no-rf3 pick one; two of them conflict', () => {
    assert.deepEqual(resolveSections(null, false, false), { single: true, rf3: true });
    assert.deepEqual(resolveSections('rf3', false, false), { single: false, rf3: true });
    assert.deepEqual(resolveSections('single', false, false), { single: true, rf3: false });
    assert.deepEqual(resolveSections(null, true, false), { single: false, rf3: true });
    assert.deepEqual(resolveSections(null, false, true), { single: true, rf3: false });
    assert.throws(() => resolveSections('rf3', false, true), /one of/);
    assert.throws(() => resolveSections('both', false, false), /single, rf3 or all/);
  });

  it('KRaft combined-mode nodes share one voter list; each has its own id and listeners', () => {
    const n2 = kraftNodeOverrides('127.0.0.1', 2, [9001, 9002, 9003], [9101, 9102, 9103]);
    assert.equal(n2['node.id'], '2');
    assert.equal(n2['process.roles'], 'broker,controller');
    assert.equal(n2['controller.quorum.voters'], '1@127.0.0.1:9101,2@127.0.0.1:9102,3@127.0.0.1:9103');
    assert.equal(n2['listeners'], 'PLAINTEXT://127.0.0.1:9002,CONTROLLER://127.0.0.1:9102');
    assert.equal(n2['advertised.listeners'], 'PLAINTEXT://127.0.0.1:9002');
    assert.equal(n2['offsets.topic.replication.factor'], '3');
    assert.equal(n2['transaction.state.log.min.isr'], '2');
    assert.throws(() => kraftNodeOverrides('127.0.0.1', 4, [1, 2, 3], [4, 5, 6]), /no ports for node 4/);
  });
});
