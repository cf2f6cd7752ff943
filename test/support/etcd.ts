// A real single-member etcd for the cluster-metadata suites: the binary built by
// test/support/install-etcd.sh (or SEDIMENT_ETCD_BIN), on free loopback ports
// with a temporary data directory. When it cannot start, startEtcd() throws with
// the reason: the etcd suites fail, never skip.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
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
  /** With startEtcd({ tls: true }): PEM files for a client (CA, and a keystore of client key + certificate). */
  readonly tlsFiles: { readonly ca: string; readonly clientKeystore: string } | undefined;
  /** Freezes the server (SIGSTOP): connections hang instead of failing, leases stop being renewed. */
  pause(): void;
  resume(): void;
}

const READY_TIMEOUT_MS = 30_000;

async function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, host, () => {
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

/** Over TLS the health URL needs the client certificate: ask etcdctl instead (polled: no readiness event). */
async function waitHealthyTls(ctl: string, url: string, tlsArgs: readonly string[], exited: () => string | undefined): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let last = 'no answer yet';
  while (Date.now() < deadline) {
    const why = exited();
    if (why !== undefined) throw new Error(`etcd exited before it was ready: ${why}`);
    const r = spawnSync(ctl, [`--endpoints=${url}`, ...tlsArgs, '--dial-timeout=1s', 'endpoint', 'health'], { encoding: 'utf8', timeout: 5000 });
    if (r.status === 0) return;
    last = `${r.stdout}${r.stderr}`.trim();
    await new Promise((res) => setTimeout(res, 100));
  }
  throw new Error(`etcd at ${url} not healthy after ${READY_TIMEOUT_MS} ms (${last})`);
}

export function etcdctlPath(): string {
  return path.join(path.dirname(etcdBinaryPath()), 'etcdctl');
}

function openssl(dir: string, args: readonly string[]): void {
  const r = spawnSync('openssl', args, { cwd: dir, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`openssl ${args.join(' ')} failed: ${r.stderr}`);
}

/** A throw-away CA, a server certificate for 127.0.0.1 and a client certificate, made with openssl. */
async function makeCertificates(dir: string): Promise<{ ca: string; serverCert: string; serverKey: string; clientKeystore: string }> {
  const days = ['-days', '2'];
  openssl(dir, ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', ...days, '-subj', '/CN=sediment-test-ca']);
  await writeFile(path.join(dir, 'server.ext'), 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n');
  await writeFile(path.join(dir, 'client.ext'), 'extendedKeyUsage=clientAuth\n');
  for (const [name, cn] of [['server', '127.0.0.1'], ['client', 'sediment-broker']] as const) {
    openssl(dir, ['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${cn}`]);
    openssl(dir, ['x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', `${name}.pem`, ...days, '-extfile', `${name}.ext`]);
  }
  const keystore = path.join(dir, 'client-keystore.pem');
  await writeFile(keystore, `${await readFile(path.join(dir, 'client.key'), 'utf8')}${await readFile(path.join(dir, 'client.pem'), 'utf8')}`);
  return { ca: path.join(dir, 'ca.pem'), serverCert: path.join(dir, 'server.pem'), serverKey: path.join(dir, 'server.key'), clientKeystore: keystore };
}

/**
 * Starts etcd on loopback (with tls: https only, client certificates required;
 * with host: on that address instead, e.g. the fault tests' bridge). Throws
 * with the reason (and how to install it) when it cannot.
 */
export async function startEtcd(options: { tls?: boolean; host?: string } = {}): Promise<EtcdServer> {
  const bin = etcdBinaryPath();
  const ctl = etcdctlPath();
  if (!existsSync(bin) || !existsSync(ctl)) {
    throw new Error(`etcd not found at ${bin} (or etcdctl beside it). Build it with: bash test/support/install-etcd.sh (or set SEDIMENT_ETCD_BIN)`);
  }
  const dataDir = await mkdtemp(path.join(tmpdir(), 'sediment-etcd-'));
  const certs = options.tls === true ? await makeCertificates(dataDir) : undefined;
  const scheme = certs === undefined ? 'http' : 'https';
  const tlsArgs = certs === undefined ? [] : ['--cert-file', certs.serverCert, '--key-file', certs.serverKey, '--trusted-ca-file', certs.ca, '--client-cert-auth'];
  const ctlTlsArgs = certs === undefined ? [] : [`--cacert=${certs.ca}`, `--cert=${path.join(dataDir, 'client.pem')}`, `--key=${path.join(dataDir, 'client.key')}`];
  const host = options.host ?? '127.0.0.1';
  let port = 0;
  let peerPort = 0;
  let child: ChildProcess | undefined;
  let exitInfo: string | undefined;
  let output = '';

  const launch = async (): Promise<void> => {
    exitInfo = undefined;
    output = '';
    const client = `${scheme}://${host}:${port}`;
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
        ...tlsArgs,
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
    if (certs === undefined) await waitHealthy(client, () => exitInfo);
    else await waitHealthyTls(ctl, client, ctlTlsArgs, () => exitInfo);
  };

  // A port picked free may be taken before etcd binds it: try a few.
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    port = await freePort(host);
    peerPort = await freePort(host);
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
    tlsFiles: certs === undefined ? undefined : { ca: certs.ca, clientKeystore: certs.clientKeystore },
    etcdctl(args: readonly string[]): string {
      const r = spawnSync(ctl, [`--endpoints=${scheme}://${endpoint}`, ...ctlTlsArgs, ...args], { encoding: 'utf8', timeout: 30_000 });
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
