// A real MinIO server for the object-store suites. Where a Docker engine is
// reachable it runs in a container (testcontainers); otherwise it is the MinIO
// binary built by test/support/install-minio.sh (or SEDIMENT_MINIO_BIN), on a
// free loopback port with a temporary data directory. When neither can start,
// startMinio() throws with the reason: the MinIO suites fail, never skip.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from 'minio';

export interface MinioServer {
  /** http://127.0.0.1:<port> */
  readonly endpoint: string;
  readonly host: string;
  readonly port: number;
  readonly accessKey: string;
  readonly secretKey: string;
  readonly region: string;
  /** Created empty at start. */
  readonly bucket: string;
  /** 'binary' or 'container'. */
  readonly mode: 'binary' | 'container';
  /** The server's process id (binary mode while running; benchmarks read its CPU time). */
  readonly pid: number | undefined;
  /** A new independent client (the `minio` npm package) for inspecting what others wrote. */
  client(): Client;
  /** Stops the server and removes its data. */
  stop(): Promise<void>;
  /** Sends a signal to the server (SIGKILL: crash it; it stays down until restart()). */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Starts the server again on the same port and data after kill(); resolves when it is ready. */
  restart(): Promise<void>;
  /** Freezes the server (SIGSTOP / docker pause): connections hang instead of failing. */
  pause(): Promise<void>;
  resume(): Promise<void>;
}

const ACCESS_KEY = 'sediment-test';
const SECRET_KEY = 'sediment-test-secret';
const REGION = 'us-east-1';
const READY_TIMEOUT_MS = 60_000;
const CONTAINER_IMAGE = 'minio/minio:RELEASE.2025-04-22T22-12-26Z';

function repoFile(rel: string): string | undefined {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const candidate = path.join(dir, rel);
    if (existsSync(candidate)) return candidate;
    dir = path.dirname(dir);
  }
  return undefined;
}

/** Where install-minio.sh puts the binary: SEDIMENT_MINIO_BIN, else the cache path named by the script's pinned version. */
export function minioBinaryPath(): string {
  const fromEnv = process.env.SEDIMENT_MINIO_BIN;
  if (fromEnv !== undefined && fromEnv !== '') return fromEnv;
  const script = repoFile('test/support/install-minio.sh');
  if (script === undefined) throw new Error('cannot find test/support/install-minio.sh to locate the MinIO binary');
  const version = /^MINIO_VERSION=(\S+)$/m.exec(readFileSync(script, 'utf8'))?.[1];
  if (version === undefined) throw new Error(`no MINIO_VERSION line in ${script}`);
  const cache = process.env.SEDIMENT_CACHE_DIR ?? '/work/cache';
  return path.join(cache, 'bin', `minio-${version}`, 'minio');
}

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

function dockerReachable(): boolean {
  if (process.env.SEDIMENT_MINIO_BIN !== undefined && process.env.SEDIMENT_MINIO_BIN !== '') return false;
  const host = process.env.DOCKER_HOST;
  if (host !== undefined && host !== '') return true;
  return existsSync('/var/run/docker.sock');
}

/**
 * Resolves once every thread of `pid` is stopped (state T in /proc): a
 * SIGSTOP is delivered asynchronously, and a request sent in between would
 * still be served.
 */
async function waitStopped(pid: number): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (Date.now() < deadline) {
    let tasks: string[];
    try {
      tasks = await readdir(`/proc/${pid}/task`);
    } catch {
      return; // no /proc, or the process is gone
    }
    const states = await Promise.all(
      tasks.map((t) =>
        readFile(`/proc/${pid}/task/${t}/stat`, 'utf8').then(
          (stat) => stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3),
          () => 'T',
        ),
      ),
    );
    if (states.every((st) => st === 'T' || st === 't')) return;
    await new Promise((r) => setTimeout(r, 2));
  }
  throw new Error(`MinIO (pid ${pid}) did not stop within 5 s of SIGSTOP`);
}

function newClient(host: string, port: number): Client {
  return new Client({ endPoint: host, port, useSSL: false, accessKey: ACCESS_KEY, secretKey: SECRET_KEY, region: REGION });
}

/**
 * Polls the liveness endpoint, then the cluster health endpoint (live comes
 * first; requests still get 503 until the cluster has write quorum), until
 * both answer 200; fails early if the process exits.
 */
async function waitReady(endpoint: string, exited: () => string | undefined): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let last = 'no answer yet';
  const probes = ['/minio/health/live', '/minio/health/cluster'];
  while (Date.now() < deadline) {
    const why = exited();
    if (why !== undefined) throw new Error(`MinIO exited before it was ready: ${why}`);
    const probe = probes[0];
    if (probe === undefined) return;
    try {
      const res = await fetch(`${endpoint}${probe}`, { signal: AbortSignal.timeout(1000) });
      if (res.status === 200) {
        probes.shift();
        continue;
      }
      last = `${probe}: HTTP ${res.status}`;
    } catch (e) {
      last = `${probe}: ${e instanceof Error ? e.message : String(e)}`;
    }
    // Poll interval between liveness probes (the server gives no other readiness event).
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`MinIO at ${endpoint} not ready after ${READY_TIMEOUT_MS} ms (${last})`);
}

async function startBinary(bucket: string): Promise<MinioServer> {
  const bin = minioBinaryPath();
  if (!existsSync(bin)) {
    throw new Error(
      `MinIO binary not found at ${bin}, and no Docker engine is reachable. Build it with: bash test/support/install-minio.sh ` +
        '(or set SEDIMENT_MINIO_BIN to a MinIO server binary)',
    );
  }
  const dataDir = await mkdtemp(path.join(tmpdir(), 'sediment-minio-'));
  const host = '127.0.0.1';
  let port = 0;
  let child: ChildProcess | undefined;
  let exitInfo: string | undefined;
  let output = '';

  const launch = async (): Promise<void> => {
    exitInfo = undefined;
    output = '';
    const proc = spawn(bin, ['server', dataDir, '--address', `${host}:${port}`, '--console-address', `${host}:${await freePort()}`, '--quiet'], {
      env: {
        ...process.env,
        MINIO_ROOT_USER: ACCESS_KEY,
        MINIO_ROOT_PASSWORD: SECRET_KEY,
        MINIO_BROWSER: 'off',
        MINIO_UPDATE: 'off',
        MINIO_REGION: REGION,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
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
    await waitReady(`http://${host}:${port}`, () => exitInfo);
  };

  // A port picked free may be taken before MinIO binds it: try a few.
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    port = await freePort();
    try {
      await launch();
      lastError = undefined;
      break;
    } catch (e) {
      lastError = e;
      child?.kill('SIGKILL');
    }
  }
  if (lastError !== undefined) {
    await rm(dataDir, { recursive: true, force: true });
    throw lastError;
  }
  const endpoint = `http://${host}:${port}`;
  await newClient(host, port).makeBucket(bucket, REGION);

  const waitExit = async (): Promise<void> => {
    const c = child;
    if (c === undefined || exitInfo !== undefined) return;
    await new Promise<void>((resolve) => c.once('exit', () => resolve()));
  };
  const signal = (s: NodeJS.Signals): void => {
    if (child !== undefined && exitInfo === undefined) child.kill(s);
  };
  return {
    endpoint,
    host,
    port,
    accessKey: ACCESS_KEY,
    secretKey: SECRET_KEY,
    region: REGION,
    bucket,
    mode: 'binary',
    get pid() {
      return exitInfo === undefined ? child?.pid : undefined;
    },
    client: () => newClient(host, port),
    async stop() {
      signal('SIGCONT');
      signal('SIGKILL');
      await waitExit();
      await rm(dataDir, { recursive: true, force: true });
    },
    async kill(s: NodeJS.Signals = 'SIGKILL') {
      signal(s);
      if (s === 'SIGKILL' || s === 'SIGTERM' || s === 'SIGINT') await waitExit();
    },
    async restart() {
      if (exitInfo === undefined) throw new Error('MinIO is still running; kill() it first');
      await launch();
    },
    async pause() {
      signal('SIGSTOP');
      if (child?.pid !== undefined) await waitStopped(child.pid);
    },
    async resume() {
      signal('SIGCONT');
    },
  };
}

async function startContainer(bucket: string): Promise<MinioServer> {
  const { MinioContainer } = await import('@testcontainers/minio');
  const { getContainerRuntimeClient } = await import('testcontainers');
  const started = await new MinioContainer(CONTAINER_IMAGE).withUsername(ACCESS_KEY).withPassword(SECRET_KEY).start();
  const runtime = await getContainerRuntimeClient();
  const host = started.getHost();
  let port = started.getPort();
  await newClient(host, port).makeBucket(bucket, REGION);
  const docker = (): ReturnType<typeof runtime.container.getById> => runtime.container.getById(started.getId());
  return {
    get endpoint() {
      return `http://${host}:${port}`;
    },
    host,
    get port() {
      return port;
    },
    accessKey: ACCESS_KEY,
    secretKey: SECRET_KEY,
    region: REGION,
    bucket,
    mode: 'container',
    pid: undefined,
    client: () => newClient(host, port),
    async stop() {
      await started.stop();
    },
    async kill(s: NodeJS.Signals = 'SIGKILL') {
      await docker().kill({ signal: s });
    },
    async restart() {
      await started.restart();
      port = started.getPort();
      await waitReady(`http://${host}:${port}`, () => undefined);
    },
    async pause() {
      await docker().pause();
    },
    async resume() {
      await docker().unpause();
    },
  };
}

/** Starts MinIO with an empty bucket (default 'sediment-test'). Throws with the reason when it cannot. */
export async function startMinio(options: { bucket?: string } = {}): Promise<MinioServer> {
  const bucket = options.bucket ?? 'sediment-test';
  if (dockerReachable()) {
    try {
      return await startContainer(bucket);
    } catch (e) {
      if (!existsSync(minioBinaryPath())) throw new Error(`MinIO container failed to start and no MinIO binary is built: ${String(e)}`);
    }
  }
  return startBinary(bucket);
}
