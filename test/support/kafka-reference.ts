// A real Apache Kafka 4.x broker (single-node KRaft, broker + controller in one
// JVM) on free loopback ports, from the jars test/support/install-kafka.sh puts
// in kafkaLibsDir(). Used to validate the real-client programs and as the peer in
// the side-by-side benchmark; also runs Kafka's CLI tools from the same classpath.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { kafkaClasspath, requireTools } from './tools.js';

/** Main classes behind Kafka's bin/*.sh scripts in 4.x. */
export const KafkaTool = {
  server: 'kafka.Kafka',
  storage: 'kafka.tools.StorageTool',
  topics: 'org.apache.kafka.tools.TopicCommand',
  consoleProducer: 'org.apache.kafka.tools.ConsoleProducer',
  consoleConsumer: 'org.apache.kafka.tools.consumer.ConsoleConsumer',
  consoleShareConsumer: 'org.apache.kafka.tools.consumer.ConsoleShareConsumer',
  shareGroups: 'org.apache.kafka.tools.consumer.group.ShareGroupCommand',
  consumerGroups: 'org.apache.kafka.tools.consumer.group.ConsumerGroupCommand',
  producerPerfTest: 'org.apache.kafka.tools.ProducerPerformance',
  consumerPerfTest: 'org.apache.kafka.tools.ConsumerPerformance',
  getOffsetShell: 'org.apache.kafka.tools.GetOffsetShell',
  deleteRecords: 'org.apache.kafka.tools.DeleteRecordsCommand',
  configs: 'kafka.admin.ConfigCommand',
  brokerApiVersions: 'org.apache.kafka.tools.BrokerApiVersionsCommand',
} as const;

/** The JVM flags kafka-server-start.sh / kafka-run-class.sh use by default. */
const serverJvmOptions = [
  '-server',
  '-XX:+UseG1GC',
  '-XX:MaxGCPauseMillis=20',
  '-XX:InitiatingHeapOccupancyPercent=35',
  '-XX:+ExplicitGCInvokesConcurrent',
  '-XX:MaxInlineLevel=15',
  '-Djava.awt.headless=true',
];

export interface KafkaReferenceOptions {
  /** Log directory; a fresh temporary one by default (removed by stop()). */
  readonly dataDir?: string;
  readonly keepData?: boolean;
  /** Extra or replacing server.properties entries. */
  readonly overrides?: Readonly<Record<string, string>>;
  /** PLAINTEXT listener port; a free one by default. */
  readonly port?: number;
  /**
   * Adds an EXTERNAL listener whose Metadata advertises 127.0.0.1:<this port>,
   * so clients bootstrapped through a proxy listening there stay on the proxy.
   * Point the proxy at `externalListener`.
   */
  readonly proxyAdvertisedPort?: number;
  /** -Xmx/-Xms; kafka-server-start.sh uses 1G. */
  readonly heap?: string;
  readonly startTimeoutMs?: number;
  /** Jars put after the release's own on the server's classpath (a remote storage manager's). */
  readonly extraClasspath?: readonly string[];
  /** Cluster id the log dir is formatted with (the nodes of one cluster share it); a random one by default. */
  readonly clusterId?: string;
}

export interface HostPort {
  readonly host: string;
  readonly port: number;
}

export interface KafkaReference {
  readonly bootstrap: string;
  readonly host: string;
  readonly port: number;
  /** The EXTERNAL listener's real address, when proxyAdvertisedPort was given. */
  readonly externalListener: HostPort | undefined;
  readonly dataDir: string;
  readonly workDir: string;
  readonly serverLog: string;
  readonly pid: number;
  /** SIGTERM (controlled shutdown), waits for exit, removes temp dirs (unless keepData). */
  stop(): Promise<void>;
  /** SIGKILL, like `kill -9`: no shutdown work; data and work dir are kept for a restart. */
  kill(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      if (addr === null || typeof addr === 'string') {
        srv.close();
        reject(new Error('no port'));
        return;
      }
      srv.close(() => resolve(addr.port));
    });
  });
}

/** A Kafka cluster id: 16 random bytes, base64url without padding, not starting with '-'. */
export function randomClusterId(): string {
  for (;;) {
    const id = randomBytes(16).toString('base64url');
    if (!id.startsWith('-')) return id;
  }
}

function propertiesText(props: Readonly<Record<string, string>>): string {
  return Object.entries(props)
    .map(([k, v]) => `${k}=${v}`)
    .join('\n')
    .concat('\n');
}

function log4jFileConfig(file: string, level: string): string {
  return [
    'status = warn',
    'appender.file.type = File',
    'appender.file.name = file',
    `appender.file.fileName = ${file}`,
    'appender.file.layout.type = PatternLayout',
    'appender.file.layout.pattern = [%d] %p %m (%c)%n',
    `rootLogger.level = ${level}`,
    'rootLogger.appenderRef.file.ref = file',
    '',
  ].join('\n');
}

function log4jStderrConfig(level: string): string {
  return [
    'status = warn',
    'appender.err.type = Console',
    'appender.err.name = err',
    'appender.err.target = SYSTEM_ERR',
    'appender.err.layout.type = PatternLayout',
    'appender.err.layout.pattern = [%d] %p %m (%c)%n',
    `rootLogger.level = ${level}`,
    'rootLogger.appenderRef.err.ref = err',
    '',
  ].join('\n');
}

let toolLogConfig: string | undefined;

function toolLog4jConfig(): string {
  if (toolLogConfig !== undefined && existsSync(toolLogConfig)) return toolLogConfig;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sediment-kafka-tools-'));
  toolLogConfig = path.join(dir, 'tools-log4j2.properties');
  writeFileSync(toolLogConfig, log4jStderrConfig('WARN'));
  return toolLogConfig;
}

export interface ToolResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly durationMs: number;
}

export interface RunToolOptions {
  /** Written to the tool's stdin, which is then closed. */
  readonly input?: string;
  readonly timeoutMs?: number;
  /** -Xmx; kafka-run-class.sh uses 256M (perf tools 512M). */
  readonly heap?: string;
  /** Reject when the tool exits non-zero (default true). */
  readonly check?: boolean;
}

/**
 * Runs a Kafka CLI tool by main class (see KafkaTool) on the reference classpath,
 * e.g. runKafkaTool(KafkaTool.topics, ['--bootstrap-server', b, '--list']).
 */
export async function runKafkaTool(mainClass: string, args: readonly string[], options: RunToolOptions = {}): Promise<ToolResult> {
  requireTools(['java', 'kafka']);
  const started = performance.now();
  const heap = options.heap ?? '512M';
  const child = spawn(
    'java',
    [`-Xmx${heap}`, '-Djava.awt.headless=true', `-Dlog4j2.configurationFile=${toolLog4jConfig()}`, '-cp', kafkaClasspath(), mainClass, ...args],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout.on('data', (b: Buffer) => out.push(b));
  child.stderr.on('data', (b: Buffer) => err.push(b));
  child.stdin.on('error', () => undefined);
  child.stdin.end(options.input ?? '');
  const timeoutMs = options.timeoutMs ?? 120_000;
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (c, s) => resolve([c, s]));
  }).finally(() => clearTimeout(timer));
  const result: ToolResult = {
    code,
    signal,
    stdout: Buffer.concat(out).toString('utf8'),
    stderr: Buffer.concat(err).toString('utf8'),
    durationMs: performance.now() - started,
  };
  if ((options.check ?? true) && code !== 0) {
    const why = signal === 'SIGKILL' ? `killed after ${timeoutMs} ms` : `exit ${code ?? signal}`;
    throw new Error(`${mainClass} ${args.join(' ')}: ${why}\n${result.stderr.slice(-4000)}`);
  }
  return result;
}

function metadataV4Request(correlationId: number): Buffer {
  const clientId = Buffer.from('sediment-probe');
  const body = Buffer.alloc(2 + 2 + 4 + 2 + clientId.length + 4 + 1);
  let o = 0;
  o = body.writeInt16BE(3, o); // Metadata
  o = body.writeInt16BE(4, o);
  o = body.writeInt32BE(correlationId, o);
  o = body.writeInt16BE(clientId.length, o);
  o += clientId.copy(body, o);
  o = body.writeInt32BE(-1, o); // all topics
  body.writeInt8(0, o); // allow_auto_topic_creation
  const size = Buffer.alloc(4);
  size.writeInt32BE(body.length);
  return Buffer.concat([size, body]);
}

/**
 * One probe: connect, send Metadata v4, and resolve with the number of brokers
 * the response lists. Rejects on a refused connection, a close or a timeout.
 */
export function probeMetadata(host: string, port: number, timeoutMs = 2000): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host, port });
    let buf = Buffer.alloc(0);
    const timer = setTimeout(() => socket.destroy(new Error('metadata probe timed out')), timeoutMs);
    const done = (err: Error | null, brokers?: number): void => {
      clearTimeout(timer);
      socket.destroy();
      if (err !== null) reject(err);
      else resolve(brokers ?? 0);
    };
    socket.on('connect', () => socket.write(metadataV4Request(1)));
    socket.on('data', (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      if (buf.length < 4) return;
      const size = buf.readInt32BE(0);
      if (buf.length < 4 + size) return;
      // correlation id (4), throttle_time_ms (4), brokers array length (4)
      if (size < 12 || buf.readInt32BE(4) !== 1) return done(new Error('malformed metadata response'));
      done(null, buf.readInt32BE(12));
    });
    socket.on('error', (e) => done(e));
    socket.on('close', () => done(new Error('connection closed before a metadata response')));
  });
}

/**
 * Polls until host:port accepts a connection and answers Metadata with at least
 * one broker. `alive` lets the caller stop early when the server process died.
 */
export async function waitForKafka(host: string, port: number, timeoutMs: number, alive: () => string | null = () => null): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown = null;
  for (;;) {
    const dead = alive();
    if (dead !== null) throw new Error(dead);
    try {
      if ((await probeMetadata(host, port)) > 0) return;
      last = new Error('metadata lists no broker yet');
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`Kafka at ${host}:${port} not ready after ${timeoutMs} ms: ${String(last)}`);
    // Back off between probes; readiness itself is observed, not assumed.
    await new Promise((r) => setTimeout(r, 100));
  }
}

function tail(file: string, lines: number): string {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
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

export async function startKafkaReference(options: KafkaReferenceOptions = {}): Promise<KafkaReference> {
  requireTools(['java', 'kafka']);
  const host = '127.0.0.1';
  const workDir = mkdtempSync(path.join(os.tmpdir(), 'sediment-kafka-ref-'));
  const dataDir = options.dataDir ?? path.join(workDir, 'data');
  const port = options.port ?? (await freePort());
  const controllerPort = await freePort();
  const externalPort = options.proxyAdvertisedPort === undefined ? undefined : await freePort();

  const listeners = [`PLAINTEXT://${host}:${port}`, `CONTROLLER://${host}:${controllerPort}`];
  const advertised = [`PLAINTEXT://${host}:${port}`];
  const protocolMap = ['PLAINTEXT:PLAINTEXT', 'CONTROLLER:PLAINTEXT'];
  if (externalPort !== undefined) {
    listeners.push(`EXTERNAL://${host}:${externalPort}`);
    advertised.push(`EXTERNAL://${host}:${options.proxyAdvertisedPort}`);
    protocolMap.push('EXTERNAL:PLAINTEXT');
  }
  // Mirrors config/server.properties of the Kafka distribution (KRaft, one node).
  const props: Record<string, string> = {
    'process.roles': 'broker,controller',
    'node.id': '1',
    'controller.quorum.voters': `1@${host}:${controllerPort}`,
    listeners: listeners.join(','),
    'advertised.listeners': advertised.join(','),
    'controller.listener.names': 'CONTROLLER',
    'inter.broker.listener.name': 'PLAINTEXT',
    'listener.security.protocol.map': protocolMap.join(','),
    'log.dirs': dataDir,
    'num.network.threads': '3',
    'num.io.threads': '8',
    'num.partitions': '1',
    'num.recovery.threads.per.data.dir': '1',
    'offsets.topic.replication.factor': '1',
    'share.coordinator.state.topic.replication.factor': '1',
    'share.coordinator.state.topic.min.isr': '1',
    'transaction.state.log.replication.factor': '1',
    'transaction.state.log.min.isr': '1',
    'group.initial.rebalance.delay.ms': '0',
    'log.retention.hours': '168',
    'log.segment.bytes': '1073741824',
    ...options.overrides,
  };
  const propsFile = path.join(workDir, 'server.properties');
  writeFileSync(propsFile, propertiesText(props));
  const serverLog = path.join(workDir, 'server.log');
  const log4j = path.join(workDir, 'log4j2.properties');
  writeFileSync(log4j, log4jFileConfig(serverLog, 'INFO'));

  if (!existsSync(path.join(dataDir, 'meta.properties'))) {
    await runKafkaTool(KafkaTool.storage, ['format', '-t', options.clusterId ?? randomClusterId(), '-c', propsFile], { timeoutMs: 60_000 });
  }

  const heap = options.heap ?? '1G';
  const stdoutFile = path.join(workDir, 'stdout.log');
  const child = spawn(
    'java',
    [`-Xmx${heap}`, `-Xms${heap}`, ...serverJvmOptions, `-Dlog4j2.configurationFile=${log4j}`, '-cp', [kafkaClasspath(), ...(options.extraClasspath ?? [])].join(path.delimiter), KafkaTool.server, propsFile],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const output: Buffer[] = [];
  const keep = (b: Buffer): void => {
    output.push(b);
    if (output.length > 200) output.shift();
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  let spawnError: Error | null = null;
  child.on('error', (e) => (spawnError = e));
  const alive = (): string | null => {
    if (spawnError !== null) return `cannot start java: ${spawnError.message}`;
    if (child.exitCode === null && child.signalCode === null) return null;
    writeFileSync(stdoutFile, Buffer.concat(output));
    return `Kafka exited (${child.exitCode ?? child.signalCode}) during start-up:\n${Buffer.concat(output).toString('utf8').slice(-3000)}\n${tail(serverLog, 40)}`;
  };

  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      if (!(await waitExit(child, 30_000))) {
        child.kill('SIGKILL');
        await waitExit(child, 10_000);
      }
    }
    writeFileSync(stdoutFile, Buffer.concat(output));
    if (options.keepData !== true) {
      if (options.dataDir !== undefined) rmSync(options.dataDir, { recursive: true, force: true });
      rmSync(workDir, { recursive: true, force: true });
    }
  };

  const kill = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await waitExit(child, 10_000);
    }
    writeFileSync(stdoutFile, Buffer.concat(output));
  };

  try {
    await waitForKafka(host, port, options.startTimeoutMs ?? 60_000, alive);
  } catch (e) {
    await stop();
    throw e;
  }
  return {
    bootstrap: `${host}:${port}`,
    host,
    port,
    externalListener: externalPort === undefined ? undefined : { host, port: externalPort },
    dataDir,
    workDir,
    serverLog,
    pid: child.pid ?? -1,
    stop,
    kill,
  };
}
