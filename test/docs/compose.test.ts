// compose/ cannot be run here (no Docker engine), so it is checked piece by
// piece: the compose file with `docker-compose config` (Debian's
// docker-compose package), the broker's properties with Sediment's own config
// loader, Prometheus's target against the broker's HTTP listener, and every
// metric the Grafana dashboard queries against the names the broker exports.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { loadBrokerConfig } from '../../broker/config.js';
import { parseRsmConfig, parseStorageUrl, RSM_CONFIG_PREFIX } from '../../remote-log/storage-url.js';
import { repoRoot } from '../support/tools.js';

const root = repoRoot();
const compose = (...p: string[]): string => path.join(root, 'compose', ...p);

const DOCKER_COMPOSE_MISSING =
  'docker-compose is not installed: it validates compose/docker-compose.yml. Install it with: apt-get install -y docker-compose ' +
  "(Debian's package; .ci/run should install it)";

describe('compose/', () => {
  it('docker-compose.yml is valid for docker-compose config', () => {
    const r = spawnSync('docker-compose', ['-f', compose('docker-compose.yml'), 'config', '-q'], { encoding: 'utf8', timeout: 60_000 });
    if (r.error !== undefined && (r.error as NodeJS.ErrnoException).code === 'ENOENT') assert.fail(DOCKER_COMPOSE_MISSING);
    assert.equal(r.status, 0, `docker-compose config failed:\n${r.stderr}${r.stdout}`);
  });

  it('runs MinIO, a one-shot bucket setup, Sediment, Prometheus and Grafana', () => {
    const r = spawnSync('docker-compose', ['-f', compose('docker-compose.yml'), 'config', '--services'], { encoding: 'utf8', timeout: 60_000 });
    if (r.error !== undefined && (r.error as NodeJS.ErrnoException).code === 'ENOENT') assert.fail(DOCKER_COMPOSE_MISSING);
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(r.stdout.trim().split('\n').sort(), ['grafana', 'minio', 'minio-setup', 'prometheus', 'sediment']);
    const yml = readFileSync(compose('docker-compose.yml'), 'utf8');
    assert.match(yml, /dockerfile: compose\/Dockerfile/);
    assert.match(yml, /mc mb --ignore-existing local\/sediment/);
  });

  it('the Dockerfile builds on node:20-slim with npm ci and npm run build, and starts the broker on the mounted properties', () => {
    const df = readFileSync(compose('Dockerfile'), 'utf8');
    assert.match(df, /^FROM node:20-slim/m);
    assert.match(df, /RUN npm ci/);
    assert.match(df, /npm run build/);
    assert.match(df, /CMD \["start", "\/etc\/sediment\/server.properties"\]/);
  });

  it("server.properties is a configuration Sediment accepts, tiering to the setup's bucket on MinIO", async () => {
    const config = await loadBrokerConfig({ file: compose('server.properties') });
    assert.equal(config.remoteLogStorageSystemEnable, true);
    const url = parseStorageUrl(config.remoteLogStorageUrl);
    assert.deepEqual(url, { scheme: 's3', bucket: 'sediment', prefix: 'tiered/' });
    const rsm = parseRsmConfig(Object.fromEntries(Object.entries(config.rsmConfig).map(([k, v]) => [RSM_CONFIG_PREFIX + k, v])));
    assert.equal(rsm.s3.endpoint, 'http://minio:9000');
    assert.equal(rsm.s3.pathStyleAccess, true);
    const yml = readFileSync(compose('docker-compose.yml'), 'utf8');
    assert.ok(yml.includes(`MINIO_ROOT_USER: ${rsm.s3.accessKeyId}`) && yml.includes(`MINIO_ROOT_PASSWORD: ${rsm.s3.secretAccessKey}`), 'the broker uses the MinIO credentials');
    assert.deepEqual(config.getList('http.listeners'), ['http://0.0.0.0:9644']);
  });

  it('Prometheus scrapes /metrics on the broker port 9644', () => {
    const prom = readFileSync(compose('prometheus.yml'), 'utf8');
    assert.match(prom, /metrics_path: \/metrics/);
    assert.match(prom, /targets: \["sediment:9644"\]/);
  });

  it('the Grafana dashboard is provisioned and only queries metrics the broker exports', () => {
    const dir = compose('grafana', 'dashboards');
    const files = readdirSync(dir).filter((f) => f.endsWith('.json'));
    assert.deepEqual(files, ['sediment-tiering.json']);
    const dash = JSON.parse(readFileSync(path.join(dir, files[0] as string), 'utf8')) as { uid: string; panels: Array<{ title: string; targets: Array<{ expr: string }> }> };
    assert.equal(dash.uid, 'sediment-tiering');
    const titles = dash.panels.map((p) => p.title).join(' | ');
    for (const want of [/copy lag/i, /remote.*bytes/i, /fetch rate/i, /cache hit rate/i, /latency/i]) assert.match(titles, want);
    const exported = exportedMetricNames();
    const used = new Set(dash.panels.flatMap((p) => p.targets.flatMap((t) => t.expr.match(/\bsediment_[a-z_]+/g) ?? [])));
    assert.ok(used.size >= 15, [...used].join(', '));
    for (const name of used) {
      const base = name.replace(/_(bucket|sum|count)$/, '');
      assert.ok(exported.has(name) || exported.has(base), `the dashboard queries ${name}, which broker/metrics/ does not export`);
    }
    const provisioning = readFileSync(compose('grafana', 'provisioning', 'dashboards', 'sediment.yml'), 'utf8');
    assert.match(provisioning, /path: \/var\/lib\/grafana\/dashboards/);
  });
});

/** Every `sediment_*` metric name that appears in a string literal of broker/metrics/. */
function exportedMetricNames(): Set<string> {
  const dir = path.join(root, 'broker', 'metrics');
  const names = new Set<string>();
  for (const f of readdirSync(dir)) {
    if (!f.endsWith('.ts')) continue;
    const text = readFileSync(path.join(dir, f), 'utf8');
    for (const m of text.matchAll(/['"](sediment_[a-z_]+)['"]/g)) names.add(m[1] as string);
  }
  return names;
}
