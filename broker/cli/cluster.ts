// `sediment cluster start --brokers N [--data DIR]`: a local cluster in one
// command (like `rpk container start`). Starts etcd (SEDIMENT_ETCD_BIN, the
// `etcd` on PATH, or the one test/support/install-etcd.sh builds) on loopback,
// then N `sediment start` processes with node ids 1..N on consecutive loopback
// ports, each with its own log dir under DIR and its JSON log in DIR/broker-<id>.log,
// prints the bootstrap list, and on Ctrl-C / SIGTERM stops the brokers
// (SIGTERM: clean shutdown) and then etcd. Running it again on the same DIR
// brings the same cluster back (etcd's data and the brokers' logs are kept).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs, UsageError, usageText, type OptionSpecs } from './args.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const LOOPBACK = '127.0.0.1';
const READY_TIMEOUT_MS = 60_000;

const options: OptionSpecs = {
  brokers: { kind: 'value', arg: 'N', help: 'number of brokers (default 3)' },
  data: { kind: 'value', arg: 'DIR', help: 'data directory: etcd/, broker-<id>/ and logs (default ./sediment-cluster)' },
  port: { kind: 'value', arg: 'PORT', help: 'Kafka port of broker 1; broker i listens on PORT+i-1 (default 9092)' },
  'etcd-port': { kind: 'value', arg: 'PORT', help: 'etcd client port; the peer port is the next one (default 2379)' },
  help: { kind: 'flag', help: 'show this help' },
};

const SYNOPSIS = 'sediment cluster start --brokers N [--data DIR] [--port PORT] [--etcd-port PORT]';

/** The etcd server binary: SEDIMENT_ETCD_BIN, `etcd` on PATH, or the test suite's build. */
export function findEtcd(env: NodeJS.ProcessEnv = process.env): string | null {
  const explicit = env['SEDIMENT_ETCD_BIN'];
  if (explicit !== undefined && explicit !== '') return existsSync(explicit) ? explicit : null;
  const onPath = spawnSync('sh', ['-c', 'command -v etcd'], { encoding: 'utf8' });
  if (onPath.status === 0 && onPath.stdout.trim() !== '') return onPath.stdout.trim();
  // dist/broker/cli -> the repository root (a checkout, not an npm install, has the script).
  const script = path.resolve(here, '..', '..', '..', 'test', 'support', 'install-etcd.sh');
  if (!existsSync(script)) return null;
  const r = spawnSync('bash', [script, '--print-path'], { encoding: 'utf8' });
  const bin = r.stdout.trim();
  return r.status === 0 && bin !== '' && existsSync(bin) ? bin : null;
}

function waitExit(child: ChildProcess, timeoutMs: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), timeoutMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

async function stopChild(child: ChildProcess, timeoutMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  if (!(await waitExit(child, timeoutMs))) {
    child.kill('SIGKILL');
    await waitExit(child, 5000);
  }
}

async function waitEtcdHealthy(url: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let last = 'no answer';
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`etcd exited during start-up (${child.exitCode ?? child.signalCode}); see its log`);
    try {
      const res = await fetch(`${url}/health`, { signal: AbortSignal.timeout(1000) });
      const body = await res.text();
      if (res.status === 200 && body.includes('"true"')) return;
      last = `HTTP ${res.status} ${body}`;
    } catch (e) {
      last = e instanceof Error ? e.message : String(e);
    }
    // etcd has no readiness event to wait on: poll its health endpoint.
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`etcd at ${url} not healthy after ${READY_TIMEOUT_MS} ms (${last})`);
}

/** Resolves when the broker logs "sediment broker started" (it has registered), rejects if it exits first. */
function waitBrokerStarted(child: ChildProcess, id: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let partial = '';
    const timer = setTimeout(() => reject(new Error(`broker ${id} not started after ${READY_TIMEOUT_MS} ms`)), READY_TIMEOUT_MS);
    const onData = (chunk: string): void => {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop() ?? '';
      if (lines.some((l) => l.includes('"msg":"sediment broker started"'))) {
        clearTimeout(timer);
        child.stdout?.off('data', onData);
        resolve();
      }
    };
    child.stdout?.setEncoding('utf8');
    child.stdout?.on('data', onData);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`broker ${id} exited during start-up (${code ?? signal})`));
    });
  });
}

export async function runCluster(argv: readonly string[]): Promise<number> {
  const [sub, ...rest] = argv;
  const a = parseArgs(rest, options);
  if (sub !== 'start' || a.has('help')) {
    process.stdout.write(usageText(SYNOPSIS, options));
    return sub === 'start' || sub === '--help' || sub === '-h' ? 0 : 1;
  }
  const n = a.int('brokers', 1, 64) ?? 3;
  const dataDir = path.resolve(a.value('data') ?? 'sediment-cluster');
  const basePort = a.int('port', 1, 65535 - n) ?? 9092;
  const etcdPort = a.int('etcd-port', 1, 65534) ?? 2379;
  const etcdBin = findEtcd();
  if (etcdBin === null) {
    throw new UsageError('etcd not found: set SEDIMENT_ETCD_BIN, put etcd on PATH (Debian: apt-get install etcd-server), or build it with bash test/support/install-etcd.sh');
  }
  mkdirSync(dataDir, { recursive: true });
  const children: ChildProcess[] = [];
  let stopping = false;
  const stopAll = async (): Promise<void> => {
    if (stopping) return;
    stopping = true;
    process.stdout.write('stopping the brokers and etcd...\n');
    await Promise.all(children.slice(1).map((c) => stopChild(c, 30_000)));
    if (children[0] !== undefined) await stopChild(children[0], 10_000);
  };

  const etcdUrl = `http://${LOOPBACK}:${etcdPort}`;
  const peerUrl = `http://${LOOPBACK}:${etcdPort + 1}`;
  const etcdLog = createWriteStream(path.join(dataDir, 'etcd.log'), { flags: 'a' });
  const etcd = spawn(
    etcdBin,
    [
      '--name', 'sediment', '--data-dir', path.join(dataDir, 'etcd'),
      '--listen-client-urls', etcdUrl, '--advertise-client-urls', etcdUrl,
      '--listen-peer-urls', peerUrl, '--initial-advertise-peer-urls', peerUrl,
      '--initial-cluster', `sediment=${peerUrl}`, '--log-level', 'warn',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  children.push(etcd);
  etcd.stdout?.pipe(etcdLog);
  etcd.stderr?.pipe(etcdLog);
  const onSignal = (): void => {
    void stopAll().then(() => process.exit(0));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    await waitEtcdHealthy(etcdUrl, etcd);
    process.stdout.write(`etcd ${etcdBin} on ${etcdUrl} (data ${path.join(dataDir, 'etcd')})\n`);
    const cli = path.join(here, 'sediment.js');
    const bootstrap: string[] = [];
    for (let id = 1; id <= n && !stopping; id++) {
      const port = basePort + id - 1;
      const overrides = {
        'node.id': String(id),
        listeners: `PLAINTEXT://${LOOPBACK}:${port}`,
        'log.dirs': path.join(dataDir, `broker-${id}`),
        'etcd.connect': `${LOOPBACK}:${etcdPort}`,
        'http.listeners': `http://${LOOPBACK}:0`,
      };
      const args = [cli, 'start', ...Object.entries(overrides).flatMap(([k, v]) => ['--override', `${k}=${v}`])];
      const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
      children.push(child);
      const log = createWriteStream(path.join(dataDir, `broker-${id}.log`), { flags: 'a' });
      child.stdout?.pipe(log);
      child.stderr?.pipe(log);
      await waitBrokerStarted(child, id);
      child.once('exit', (code, signal) => {
        if (!stopping) process.stderr.write(`broker ${id} exited (${code ?? signal}); see ${path.join(dataDir, `broker-${id}.log`)}\n`);
      });
      bootstrap.push(`${LOOPBACK}:${port}`);
      process.stdout.write(`broker ${id} on ${LOOPBACK}:${port} (log ${path.join(dataDir, `broker-${id}.log`)})\n`);
    }
    process.stdout.write(`bootstrap servers: ${bootstrap.join(',')}\nCtrl-C stops the cluster.\n`);
  } catch (e) {
    await stopAll();
    throw e;
  }
  // Runs until a signal stops it.
  await new Promise<never>(() => undefined);
  return 0;
}
