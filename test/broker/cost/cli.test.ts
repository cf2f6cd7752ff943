import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { runCost } from '../../../broker/cli/cost.js';
import type { CliIo } from '../../../broker/cli/args.js';
import { ManualClock } from '../../../broker/common/clock.js';

function bufferIo(): CliIo & { stdout: string; stderr: string } {
  const io = {
    stdout: '',
    stderr: '',
    out(t: string) {
      io.stdout += t;
    },
    err(t: string) {
      io.stderr += t;
    },
  };
  return io;
}

interface JsonScenario {
  scenario: string;
  localRetentionMs: number | null;
  components: Record<string, number>;
  total: number;
  savingVsNoTiering: number;
  priceSheet: { id: string; date: string; storageClass: string; disk: string };
}

describe('sediment cost', () => {
  it('--json prints one object per scenario with its components and total in dollars per month', async () => {
    const io = bufferIo();
    assert.equal(await runCost(['--ingress', '20MiB/s', '--retention', '30d', '--local-retention', '12h', '--json'], io), 0, io.stderr);
    const out = JSON.parse(io.stdout) as JsonScenario[];
    assert.deepEqual(
      out.map((s) => s.scenario),
      ['no tiering', 'local 7d', 'local 12h', 'local 1d', 'local 1h'].sort((a, b) => order(a) - order(b)),
    );
    for (const s of out) {
      assert.deepEqual(Object.keys(s.components), ['brokerDisk', 'objectStorage', 'putListRequests', 'getRequests', 'retrieval', 'crossAz']);
      const sum = Object.values(s.components).reduce((a, b) => a + b, 0);
      assert.ok(Math.abs(sum - s.total) <= 0.05, `${s.scenario}: ${sum} vs ${s.total}`);
    }
    assert.equal(out[0]?.localRetentionMs, null);
    assert.equal(out[0]?.components['objectStorage'], 0);
    assert.ok(out.slice(1).every((s) => s.savingVsNoTiering > 0));
    assert.deepEqual(out[0]?.priceSheet, { id: 'aws-us-east-1', date: '2026-11-29', storageClass: 'standard', disk: 'gp3' });
  });

  it('--consumer-in-rack-share: consumer reads across zones priced, and what fetching from the closest replica saves', async () => {
    const run = async (extra: string[]): Promise<{ table: string; crossAz: number }> => {
      const t = bufferIo();
      assert.equal(await runCost(['--ingress', '20MiB/s', '--retention', '30d', ...extra], t), 0, t.stderr);
      const j = bufferIo();
      assert.equal(await runCost(['--ingress', '20MiB/s', '--retention', '30d', '--json', ...extra], j), 0, j.stderr);
      return { table: t.stdout, crossAz: (JSON.parse(j.stdout) as JsonScenario[])[0]!.components['crossAz']! };
    };
    const leaders = await run([]);
    assert.match(leaders.table, /consumer zones +33% of consumed bytes read in the consumer's own zone/);
    // 20 MiB/s for 730 h is 50.1 TiB consumed; two thirds cross zones at $0.02/GiB.
    assert.match(leaders.table, /consumer reads across zones: 33\.4 TiB a month \(\$684\), saved by fetching from the closest replica/);
    const closest = await run(['--consumer-in-rack-share', '1']);
    assert.doesNotMatch(closest.table, /consumer reads across zones/);
    assert.ok(Math.abs(leaders.crossAz - closest.crossAz - 684.4) < 1, `${leaders.crossAz} - ${closest.crossAz}`);
    const bad = bufferIo();
    assert.notEqual(await runCost(['--ingress', '20MiB/s', '--retention', '30d', '--consumer-in-rack-share', '2'], bad), 0);
  });

  it('prices another sheet, class and disk, with overrides', async () => {
    const a = bufferIo();
    await runCost(['--ingress', '20MiB/s', '--retention', '30d', '--json', '--sheet', 'gcp', '--storage-class', 'nearline', '--disk', 'pd-standard'], a);
    const b = bufferIo();
    await runCost(['--ingress', '20MiB/s', '--retention', '30d', '--json', '--sheet', 'gcp', '--storage-class', 'nearline', '--disk', 'pd-standard', '--price', 'disk.gbMonth=0.08'], b);
    const diskA = (JSON.parse(a.stdout) as JsonScenario[])[0]!.components['brokerDisk']!;
    const diskB = (JSON.parse(b.stdout) as JsonScenario[])[0]!.components['brokerDisk']!;
    assert.ok(Math.abs(diskB / diskA - 2) < 0.001, `${diskA} -> ${diskB}`);
    assert.equal((JSON.parse(b.stdout) as JsonScenario[])[0]?.priceSheet.storageClass, 'nearline');
  });

  it('prints the table and writes a self-contained HTML report with both charts', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'sediment-cost-'));
    try {
      const file = path.join(dir, 'report.html');
      const io = bufferIo();
      assert.equal(await runCost(['--ingress', '50MB/s', '--retention', '90d', '--html', file], io), 0, io.stderr);
      assert.match(io.stdout, /^SCENARIO +BROKER DISK +OBJECT STORAGE +PUT\/LIST REQUESTS +GET REQUESTS +RETRIEVAL +CROSS-AZ TRAFFIC +TOTAL\/MONTH +SAVING$/m);
      assert.match(io.stdout, /^no tiering +\$[\d,]+/m);
      assert.match(io.stdout, /^local 1h +\$/m);
      assert.match(io.stdout, /HTML report written to/);
      const html = await readFile(file, 'utf8');
      assert.match(html, /^<!doctype html>/);
      assert.match(html, /<svg[^>]+id="chart-components"/);
      assert.match(html, /<svg[^>]+id="chart-retention"/);
      assert.equal((html.match(/<polyline /g) ?? []).length, 4, 'one line per scenario');
      assert.ok(!/<script|<link |src="http/.test(html), 'nothing loaded from elsewhere');
      // 90 days at 50 MB/s is about 354 TiB in S3 Standard: past its 50 TB tier boundary, below the 500 TB one.
      assert.match(io.stdout, /^object storage by volume tier \(S3 Standard: first 50\.0 TiB \$0\.023, next 450 TiB \$0\.022, over 500 TiB \$0\.021 per GiB-month\)$/m);
      assert.match(io.stdout, /^local 1d +35\d TiB +50\.0 TiB \$1,178 +30\d TiB \$[\d,]+ +- +\$[\d,]+$/m);
      assert.match(html, /<svg[^>]+id="chart-volume-tiers"/);
      assert.deepEqual([...html.matchAll(/class="tier-boundary-label">([^<]+)</g)].map((m) => m[1]), ['50.0 TiB', '500 TiB']);
      assert.match(html, /<th>first 50\.0 TiB<\/th><th>next 450 TiB<\/th><th>over 500 TiB<\/th>/);
      const flat = bufferIo();
      assert.equal(await runCost(['--ingress', '50MB/s', '--retention', '90d', '--price', 'object.gbMonth=0.023'], flat), 0, flat.stderr);
      assert.doesNotMatch(flat.stdout, /volume tier/, 'a flat price given on the command line has no tiers');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('reads a price sheet from a JSON file', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'sediment-cost-'));
    try {
      const file = path.join(dir, 'sheet.json');
      const io0 = bufferIo();
      await runCost(['--list-sheets'], io0);
      assert.match(io0.stdout, /aws-us-east-1 \(aws\)/);
      const sheet = {
        id: 'onprem',
        provider: 'Our DC',
        region: 'rack 4',
        currency: 'USD',
        date: '2026-01-01',
        sources: ['https://example.invalid/quote'],
        defaultStorageClass: 'ceph',
        defaultDisk: 'nvme',
        storageClasses: { ceph: { name: 'Ceph RGW', gbMonth: 0.01, putPer1000: 0, listPer1000: 0, getPer1000: 0, deletePer1000: 0, retrievalPerGB: 0, minStorageDays: 0, minObjectBytes: 0 } },
        disks: { nvme: { name: 'NVMe', gbMonth: 0.05 } },
        network: { crossAzPerGB: 0 },
      };
      await writeFile(file, JSON.stringify(sheet));
      const io = bufferIo();
      assert.equal(await runCost(['--ingress', '1MiB/s', '--retention', '7d', '--sheet', file, '--json'], io), 0, io.stderr);
      const out = JSON.parse(io.stdout) as JsonScenario[];
      assert.equal(out[0]?.priceSheet.id, 'onprem');
      assert.equal(out[1]?.components['putListRequests'], 0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('--from-metrics measures the workload from a broker and shows the projection', async () => {
    // The broker started exactly 1000 s before the (injected) time of the scrape.
    const clock = new ManualClock(1_700_000_000_000);
    const start = clock.now() / 1000 - 1000;
    const page = [
      `sediment_bytes_in_total{topic="t"} ${1000 * 2 * 1024 * 1024}`,
      `sediment_bytes_out_total{topic="t"} ${1000 * 4 * 1024 * 1024}`,
      `sediment_remote_copy_bytes_total{topic="t"} ${10 * 64 * 1024 * 1024}`,
      `sediment_remote_copy_requests_total{topic="t"} 10`,
      `sediment_remote_fetch_bytes_total{topic="t"} ${1000 * 1024 * 1024}`,
      `sediment_remote_fetch_requests_total{topic="t"} 500`,
      'sediment_remote_chunk_fetches_total 1000',
      'sediment_remote_index_cache_misses_total 10',
      `process_start_time_seconds ${start}`,
      '',
    ].join('\n');
    const urls: string[] = [];
    const fetchImpl = (async (u: string | URL | Request) => {
      urls.push(String(u));
      return new Response(page, { status: 200 });
    }) as typeof fetch;
    const table = bufferIo();
    assert.equal(await runCost(['--from-metrics', 'http://127.0.0.1:9644/metrics', '--retention', '30d'], table, fetchImpl, clock), 0, table.stderr);
    assert.deepEqual(urls, ['http://127.0.0.1:9644/metrics']);
    assert.match(table.stdout, /^measured from http:\/\/127.0.0.1:9644\/metrics over /m);
    assert.match(table.stdout, /bytes in 2.00 MiB\/s, bytes out 4.00 MiB\/s/);
    assert.match(table.stdout, /average segment 64.0 MiB/);
    assert.match(table.stdout, /25.0% of bytes out/);
    assert.match(table.stdout, /^segment size +64.0 MiB/m, 'the measured segment size feeds the model');
    const json = bufferIo();
    assert.equal(await runCost(['--from-metrics', 'http://127.0.0.1:9644/metrics', '--retention', '30d', '--segment-size', '1GiB', '--json'], json, fetchImpl, clock), 0, json.stderr);
    const out = JSON.parse(json.stdout) as { scenarios: JsonScenario[]; measured: { ingressBytesPerSec: number; month: { putRequests: number } } };
    assert.equal(out.measured.ingressBytesPerSec, 2 * 1024 * 1024);
    assert.equal(out.scenarios[0]?.scenario, 'no tiering');
    assert.ok(out.measured.month.putRequests > 0);
    const down = bufferIo();
    const refused = (async () => {
      throw new TypeError('fetch failed');
    }) as typeof fetch;
    assert.equal(await runCost(['--from-metrics', 'http://127.0.0.1:9/metrics', '--retention', '30d'], down, refused), 1);
    assert.match(down.stderr, /cannot reach http:\/\/127.0.0.1:9\/metrics/);
  });

  it('exits 1 with a message for missing or bad options', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['--retention', '7d'], /--ingress is required/],
      [['--ingress', '1MiB/s'], /--retention is required/],
      [['--ingress', 'lots', '--retention', '7d'], /--ingress: cannot read 'lots'/],
      [['--ingress', '1MiB/s', '--retention', '7d', '--price', 'object.gb=1'], /unknown key 'object.gb'/],
      [['--ingress', '1MiB/s', '--retention', '7d', '--sheet', 'oracle'], /unknown price sheet 'oracle'/],
      [['--ingress', '1MiB/s', '--retention', '7d', '--disk-headroom', '1'], /headroom/],
      [['--bogus'], /unknown option --bogus/],
    ];
    for (const [args, message] of cases) {
      const io = bufferIo();
      assert.equal(await runCost(args, io), 1, args.join(' '));
      assert.match(io.stderr, message);
    }
  });
});

function order(name: string): number {
  if (name === 'no tiering') return -Infinity;
  const ms: Record<string, number> = { 'local 7d': 7 * 24, 'local 1d': 24, 'local 12h': 12, 'local 1h': 1 };
  return -(ms[name] ?? 0);
}
