// A real single-member etcd for the cluster-metadata suites: the binary built by
// test/support/install-etcd.sh (or SEDIMENT_ETCD_BIN), on free loopback ports
// with a temporary data directory. When it cannot start, startEtcd() throws with
// the reason: the etcd suites fail, never skip.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { etcdBinaryPath } from './tools.js';

export interface EtcdServer {
  /** host:port of the client URL, as etcd.connect takes it. */
  readonly endpoint: string;
  readonly host: string;
  readonly port: number;
  /** The server's process id while it runs. */
  readonly pid: number | undefined;
  /** Runs etcdctl against this server; resolves with stdout, rejects on a non-zero exit. */
  etcdctl(args: readonly string[]): string;
  /** Stops the server and removes its data. */
  stop(): Promise<void>;
  /** Sends a signal (SIGKILL: crash it; it stays down until restart()). */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Starts the server again on the same ports and data after kill(); resolves when it is healthy. */
  restart(): Promise<void>;
  /** Freezes the server (SIGSTOP): connections hang instead of failing, leases stop being renewed. */
  pause(): void;
  resume(): void;
}

const READY_TIMEOUT_MS = 30_000;

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** Polls /health (etcd gives no other readiness signal) until it answers {"health":"true"}; fails early if the process exits. */
async function waitHealthy(url: string, exited: () => string | undefined): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let last = 'no answer yet';
  while (Date.now() < deadline) {
    const why = exited();
    if (why !== undefined) throw new Error(`etcd exited before it was ready: ${why}`);
    try {
      const res = await fetch(`${url}/health`, { signal: AbortSignal.timeout(1000) });
      const body = await res.text();
      if (res.status === 200 && body.includes('"true"')) return;
      last = `HTTP ${res.status} ${body}`;
    } catch (e) {
      last = e instanceof Error ? e.message : String(e);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`etcd at ${url} not healthy after ${READY_TIMEOUT_MS} ms (${last})`);
}

export function etcdctlPath(): string {
  return path.join(path.dirname(etcdBinaryPath()), 'etcdctl');
}

/** Starts etcd on loopback. Throws with the reason (and how to install it) when it cannot. */
export async function startEtcd(): Promise<EtcdServer> {
  const bin = etcdBinaryPath();
  const ctl = etcdctlPath();
  if (!existsSync(bin) || !existsSync(ctl)) {
    throw new Error(`etcd not found at ${bin} (or etcdctl beside it). Build it with: bash test/support/install-etcd.sh (or set SEDIMENT_ETCD_BIN)`);
  }
  const dataDir = await mkdtemp(path.join(tmpdir(), 'sediment-etcd-'));
  const host = '127.0.0.1';
  let port = 0;
  let peerPort = 0;
  let child: ChildProcess | undefined;
  let exitInfo: string | undefined;
  let output = '';

  const launch = async (): Promise<void> => {
    exitInfo = undefined;
    output = '';
    const client = `http://${host}:${port}`;
    const peer = `http://${host}:${peerPort}`;
    const proc = spawn(
      bin,
      [
        '--name', 'sediment-test',
        '--data-dir', path.join(dataDir, 'data'),
        '--listen-client-urls', client,
        '--advertise-client-urls', client,
        '--listen-peer-urls', peer,
        '--initial-advertise-peer-urls', peer,
        '--initial-cluster', `sediment-test=${peer}`,
        '--log-level', 'warn',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const keep = (b: Buffer): void => {
      output = (output + b.toString('utf8')).slice(-4000);
    };
    proc.stdout?.on('data', keep);
    proc.stderr?.on('data', keep);
    proc.on('exit', (code, sig) => {
      exitInfo = `exit code ${code ?? 'none'}, signal ${sig ?? 'none'}; output: ${output.trim() || '(none)'}`;
    });
    proc.on('error', (e) => {
      exitInfo = `spawn failed: ${e.message}`;
    });
    child = proc;
    await waitHealthy(client, () => exitInfo);
  };

  // A port picked free may be taken before etcd binds it: try a few.
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    port = await freePort();
    peerPort = await freePort();
    try {
      await launch();
      lastError = undefined;
      break;
    } catch (e) {
      lastError = e;
      child?.kill('SIGKILL');
      await rm(path.join(dataDir, 'data'), { recursive: true, force: true });
    }
  }
  if (lastError !== undefined) {
    await rm(dataDir, { recursive: true, force: true });
    throw lastError;
  }

  const waitExit = async (): Promise<void> => {
    const c = child;
    if (c === undefined || exitInfo !== undefined) return;
    await new Promise<void>((resolve) => c.once('exit', () => resolve()));
  };
  const signal = (s: NodeJS.Signals): void => {
    if (child !== undefined && exitInfo === undefined) child.kill(s);
  };
  const endpoint = `${host}:${port}`;
  return {
    endpoint,
    host,
    port,
    get pid() {
      return exitInfo === undefined ? child?.pid : undefined;
    },
    etcdctl(args: readonly string[]): string {
      const r = spawnSync(ctl, [`--endpoints=${endpoint}`, ...args], { encoding: 'utf8', timeout: 30_000 });
      if (r.status !== 0) throw new Error(`etcdctl ${args.join(' ')} failed (${r.status ?? r.signal}): ${r.stderr}`);
      return r.stdout;
    },
    async stop() {
      signal('SIGCONT');
      signal('SIGKILL');
      await waitExit();
      await rm(dataDir, { recursive: true, force: true });
    },
    async kill(s: NodeJS.Signals = 'SIGKILL') {
      signal('SIGCONT');
      signal(s);
      await waitExit();
    },
    async restart() {
      if (exitInfo === undefined) throw new Error('etcd is still running; kill() it first');
      await launch();
    },
    pause() {
      signal('SIGSTOP');
    },
    resume() {
      signal('SIGCONT');
    },
  };
}
