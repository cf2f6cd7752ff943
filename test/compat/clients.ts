// The compatibility matrix's clients: how each is installed and run against a
// broker. Programs in other languages print a CompatSummary JSON line last;
// the CLI and kcat drivers build theirs here. A client that cannot be installed
// or run throws an Error with the reason, which the matrix reports as its failure.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { kafkaClasspath, kafkaReleaseInstalled, kafkaVersion, missingToolsMessage, findMissingTools, otherKafkaReleases, repoRoot, systemPython, type ToolName } from '../support/tools.js';
import { runKafkaCliCompat } from './kafka-cli.js';
import { runKcatCompat } from './kcat.js';
import { parseCompatSummary, programArgs, type CompatRunOptions, type CompatSummary } from './summary.js';

const here = path.dirname(fileURLToPath(import.meta.url));

export const allCodecs = ['none', 'gzip', 'snappy', 'lz4', 'zstd'] as const;

export interface ClientSpec {
  /** Short id: topic and group names derive from it. */
  readonly id: string;
  /** Row title in docs/compatibility.md. */
  readonly title: string;
  readonly codecs: readonly string[];
  /** What each matrix column exercises for this client (docs/compatibility.md). */
  readonly coverage: Readonly<Record<string, string>>;
  readonly notes: readonly string[];
  /** Extra time its first install may take (a client compiled from source), added to the test's timeout. */
  readonly installMs?: number;
  run(o: CompatRunOptions): Promise<CompatSummary>;
}

interface ProcessOutput {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function runProcess(cmd: string, args: readonly string[], options: { timeoutMs: number; cwd?: string; env?: NodeJS.ProcessEnv }): Promise<ProcessOutput> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], cwd: options.cwd, env: options.env ?? process.env });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(new Error(`cannot run ${cmd}: ${e.message}`));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') });
    });
  });
}

function tail(s: string, n = 3000): string {
  return s.length <= n ? s.trim() : `...${s.slice(-n).trim()}`;
}

/** Runs a matrix program; its last stdout line must be a CompatSummary agreeing with the exit code. */
async function runProgram(name: string, cmd: string, args: readonly string[], timeoutMs: number, options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<CompatSummary> {
  const r = await runProcess(cmd, args, { timeoutMs, ...options });
  const summary = parseCompatSummary(r.stdout);
  if (summary === null) {
    const why = r.signal === 'SIGKILL' ? `killed after ${timeoutMs} ms` : `exit ${r.code ?? r.signal}`;
    throw new Error(`${name} printed no summary (${why}):\n${tail(r.stdout, 1000)}\n${tail(r.stderr)}`);
  }
  if (summary.ok !== (r.code === 0)) {
    return { ...summary, ok: false, errorCount: summary.errorCount + 1, errors: [...summary.errors, `exit code ${r.code ?? r.signal} disagrees with ok=${summary.ok}: ${tail(r.stderr, 1000)}`] };
  }
  return summary;
}

function requireTools(names: readonly ToolName[]): void {
  const missing = findMissingTools(names);
  if (missing.length > 0) throw new Error(`cannot install: ${missingToolsMessage(missing)}`);
}

/** `bash test/compat/install.sh <part>`: returns the installed path, or throws with the script's reason. */
export async function installPart(part: 'franz-go' | 'kafka-python' | 'kafka-python-2' | 'confluent-kafka' | 'kafka-javascript'): Promise<string> {
  const script = path.join(repoRoot(), 'test', 'compat', 'install.sh');
  // kafka-javascript compiles librdkafka on its first install: minutes on a loaded machine.
  const r = await runProcess('bash', [script, part], { timeoutMs: part === 'kafka-javascript' ? 1_800_000 : 600_000 });
  const line = r.stdout.split('\n').find((l) => l.startsWith(`${part} `));
  if (r.code !== 0 || line === undefined) throw new Error(`cannot install ${part}: bash test/compat/install.sh ${part} exited ${r.code ?? r.signal}:\n${tail(r.stderr, 2000)}`);
  return line.slice(part.length + 1).trim();
}

/**
 * The jars of a Kafka release: the reference one must be installed already (as every
 * Kafka-using suite needs it); another release is installed on first use, like the
 * other matrix clients (`install-kafka.sh <version>`, idempotent).
 */
async function kafkaRelease(version: string): Promise<string> {
  if (version === kafkaVersion()) {
    requireTools(['java', 'kafka']);
    return kafkaClasspath();
  }
  requireTools(['java', 'maven']);
  if (!kafkaReleaseInstalled(version)) {
    const script = path.join(repoRoot(), 'test', 'support', 'install-kafka.sh');
    const r = await runProcess('bash', [script, version], { timeoutMs: 900_000 });
    if (r.code !== 0 || !kafkaReleaseInstalled(version)) {
      throw new Error(`cannot install: bash test/support/install-kafka.sh ${version} exited ${r.code ?? r.signal}:\n${tail(r.stderr, 2000)}`);
    }
  }
  return kafkaClasspath(version);
}

/** The Java program, compiled with javac into a temporary directory against a release's jars. */
const runJava = (version: string) => async (o: CompatRunOptions): Promise<CompatSummary> => {
  const classpath = await kafkaRelease(version);
  const classes = mkdtempSync(path.join(os.tmpdir(), 'sediment-compat-java-'));
  try {
    const source = path.join(repoRoot(), 'test', 'compat', 'java', 'CompatClient.java');
    const javac = await runProcess('javac', ['-d', classes, '-cp', classpath, source], { timeoutMs: 120_000 }).catch((e: unknown) => {
      throw new Error(`cannot install: javac (a JDK) is needed to compile ${source}: ${String(e)}. On Debian: apt-get install -y openjdk-17-jdk-headless`);
    });
    if (javac.code !== 0) throw new Error(`javac failed on ${source}:\n${tail(javac.stderr)}`);
    const log4j = path.join(repoRoot(), 'test', 'compat', 'java', 'log4j2.properties');
    return await runProgram('java', 'java', ['-Xmx512M', `-Dlog4j2.configurationFile=${log4j}`, '-cp', `${classes}${path.delimiter}${classpath}`, 'CompatClient', ...programArgs(o)], o.timeoutMs + 60_000);
  } finally {
    rmSync(classes, { recursive: true, force: true });
  }
};

async function runFranzGo(o: CompatRunOptions): Promise<CompatSummary> {
  const bin = await installPart('franz-go');
  return runProgram('franz-go', bin, programArgs(o), o.timeoutMs + 60_000);
}

/** One program for both kafka-python venvs; it adapts to the 2.0 API itself. */
function kafkaPython(part: 'kafka-python' | 'kafka-python-2'): (o: CompatRunOptions) => Promise<CompatSummary> {
  return async (o) => {
    const python = await installPart(part);
    const script = path.join(repoRoot(), 'test', 'compat', 'python', 'kafka_python_compat.py');
    return runProgram(part, python, [script, ...programArgs(o)], o.timeoutMs + 60_000);
  };
}

async function runConfluentPython(o: CompatRunOptions): Promise<CompatSummary> {
  requireTools(['python-confluent-kafka']);
  const script = path.join(repoRoot(), 'test', 'compat', 'python', 'confluent_compat.py');
  return runProgram('confluent-kafka-python', systemPython, [script, ...programArgs(o)], o.timeoutMs + 60_000);
}

/** The same program under the venv of the PyPI wheel, which bundles a current librdkafka. */
async function runConfluentPythonPypi(o: CompatRunOptions): Promise<CompatSummary> {
  const python = await installPart('confluent-kafka');
  const script = path.join(repoRoot(), 'test', 'compat', 'python', 'confluent_compat.py');
  return runProgram('confluent-kafka-python (PyPI)', python, [script, ...programArgs(o)], o.timeoutMs + 60_000);
}

async function runKafkajs(o: CompatRunOptions): Promise<CompatSummary> {
  requireTools(['kafkajs']);
  return runProgram('kafkajs', process.execPath, [path.join(here, 'kafkajs', 'compat.js'), ...programArgs(o)], o.timeoutMs + 60_000);
}

/** The KafkaJS-compatible API of @confluentinc/kafka-javascript, from the cache install.sh compiled it into. */
async function runKafkaJavascript(o: CompatRunOptions): Promise<CompatSummary> {
  const moduleDir = await installPart('kafka-javascript');
  return runProgram('kafka-javascript', process.execPath, [path.join(here, 'kafka-javascript', 'compat.js'), '--module-dir', moduleDir, ...programArgs(o)], o.timeoutMs + 60_000);
}

const runKafkaCli = (version: string) => async (o: CompatRunOptions): Promise<CompatSummary> => runKafkaCliCompat(o, version, await kafkaRelease(version));

async function runKcat(o: CompatRunOptions): Promise<CompatSummary> {
  requireTools(['kcat', 'kafkajs']);
  return runKcatCompat(o);
}

const javaCoverage = {
  createTopic: 'Admin.createTopics',
  produce: 'KafkaProducer, idempotent (default), acks=all, one producer per codec',
  consumeGroup: 'KafkaConsumer.subscribe, commitSync after every poll',
  listOffsets: 'Admin.listOffsets: earliest, latest, forTimestamp, maxTimestamp',
  groupLag: 'Admin.listConsumerGroupOffsets vs latest; describeConsumerGroups',
  describeTopics: 'Admin.describeTopics (leaders, replicas, ISR, topic id)',
  describeConfigs: 'Admin.describeConfigs (topic)',
  listOffsetsTiered: 'Admin.listOffsets: OffsetSpec.earliestLocal(), latestTiered()',
  consumerOffsets: 'KafkaConsumer beginningOffsets, endOffsets, committed, offsetsForTimes (no subscription)',
  listGroups: 'Admin.listGroups',
  describeCluster: 'Admin.describeCluster, describeConfigs (broker)',
};

/** The Java client row of one Kafka release (the same program, compiled against that release). */
function javaClient(id: string, version: string, which: string): ClientSpec {
  return {
    id,
    title: 'Java client (kafka-clients)',
    codecs: allCodecs,
    coverage: javaCoverage,
    notes: [`Compiled with javac at test time against the ${which} kafka-clients jar (${version}).`],
    run: runJava(version),
  };
}

/** Kafka's CLI tools of one release, run from that release's jars. */
function kafkaCli(id: string, version: string, which: string): ClientSpec {
  return {
    id,
    title: "Kafka's CLI tools",
    codecs: allCodecs,
    coverage: {
      createTopic: 'kafka-topics --create',
      produce: 'kafka-console-producer per codec, keys and headers parsed, idempotent',
      consumeGroup: 'kafka-console-consumer --group --from-beginning (commits on exit)',
      listOffsets: 'kafka-get-offsets --time earliest, latest, max-timestamp, timestamps',
      groupLag: 'kafka-consumer-groups --describe',
      describeTopic: 'kafka-topics --describe (leaders; Elr and LastKnownElr from DescribeTopicPartitions)',
      resetOffsets: 'kafka-consumer-groups --reset-offsets --to-earliest --execute, then --describe',
    },
    notes: [
      `The ${which} release's tools (${version}).`,
      "The console producer cannot pick partitions or timestamps: records are placed by the Java client's keyed partitioner (murmur2, checked) and stamped by its clock (checked against the produce window and per-partition order).",
    ],
    run: runKafkaCli(version),
  };
}

const reference = kafkaVersion();

export const clients: readonly ClientSpec[] = [
  javaClient('java', reference, 'reference'),
  javaClient('java-older', otherKafkaReleases.older, 'older'),
  javaClient('java-newer', otherKafkaReleases.newer, 'newer'),
  kafkaCli('kafka-cli', reference, 'reference'),
  kafkaCli('kafka-cli-newer', otherKafkaReleases.newer, 'newer'),
  {
    id: 'franz-go',
    title: 'franz-go (kgo, kadm)',
    codecs: allCodecs,
    coverage: {
      createTopic: 'kadm CreateTopic',
      produce: 'kgo ProduceSync, idempotent (default), acks=all, one client per codec',
      consumeGroup: 'kgo ConsumerGroup (cooperative-sticky), CommitUncommittedOffsets after every poll',
      listOffsets: 'kadm ListStartOffsets, ListEndOffsets, ListOffsetsAfterMilli, ListMaxTimestampOffsets, ListLocalLogStartOffsets',
      groupLag: 'kadm Lag',
      describeConfigs: 'kadm DescribeTopicConfigs',
    },
    notes: [],
    run: runFranzGo,
  },
  {
    id: 'confluent-python',
    title: 'confluent-kafka-python (librdkafka)',
    codecs: allCodecs,
    coverage: {
      createTopic: 'AdminClient.create_topics',
      produce: 'Producer, enable.idempotence=true, acks=all, one producer per codec',
      consumeGroup: 'Consumer.subscribe, commit(asynchronous=False) after every batch',
      listOffsets: 'get_watermark_offsets (earliest, latest), offsets_for_times',
      groupLag: 'committed() vs high watermarks; AdminClient.list_groups',
      describeConfigs: 'AdminClient.describe_configs',
      listTopics: 'AdminClient.list_topics() (all topics)',
      regexSubscribe: 'Consumer.subscribe([^<topic>-rx-.*]) over two topics made for it',
    },
    notes: ["Debian's python3-confluent-kafka (confluent-kafka-python 1.7.0 on librdkafka 2.0.2)."],
    run: runConfluentPython,
  },
  {
    id: 'confluent-python-pypi',
    title: 'confluent-kafka-python, PyPI (bundled librdkafka)',
    codecs: allCodecs,
    coverage: {
      createTopic: 'AdminClient.create_topics',
      produce: 'Producer, enable.idempotence=true, acks=all, one producer per codec',
      consumeGroup: 'Consumer.subscribe, commit(asynchronous=False) after every batch',
      listOffsets: 'get_watermark_offsets (earliest, latest), offsets_for_times',
      groupLag: 'committed() vs high watermarks; AdminClient.list_groups',
      describeConfigs: 'AdminClient.describe_configs',
      listTopics: 'AdminClient.list_topics() (all topics: librdkafka 2.1x pads this Metadata v12 request)',
      regexSubscribe: 'Consumer.subscribe([^<topic>-rx-.*]) over two topics made for it',
    },
    notes: ['The PyPI wheel (pinned in test/compat/python/requirements-confluent-kafka.txt) with its bundled librdkafka, in a venv made by test/compat/install.sh; the same program as the Debian row.'],
    run: runConfluentPythonPypi,
  },
  {
    id: 'kafka-javascript',
    title: '@confluentinc/kafka-javascript (librdkafka)',
    codecs: allCodecs,
    coverage: {
      createTopic: 'KafkaJS.Kafka admin.createTopics, fetchTopicMetadata until every partition has a leader',
      produce: 'producer({ kafkaJS: { idempotent: true, acks: -1, compression } }).send, one producer per codec, base offsets checked',
      consumeGroup: 'consumer.subscribe, run eachBatch, commitOffsets after every batch',
      listOffsets: 'admin.fetchTopicOffsets (low, high), fetchTopicOffsetsByTimestamp',
      groupLag: 'admin.fetchOffsets vs fetchTopicOffsets; describeGroups; listGroups',
      describeTopics: 'admin.fetchTopicMetadata (leaders, replicas, ISR, topic id)',
      listTopics: 'admin.listTopics() (all topics: librdkafka 2.15 pads this Metadata v13 request with 3 bytes)',
      regexSubscribe: 'consumer.subscribe({ topics: [/^<topic>-rx-.*/] }) over two topics made for it',
    },
    notes: [
      'The npm package (pinned in test/compat/kafka-javascript/pinned/) built from its source by test/compat/install.sh, its librdkafka (the one bundled in the tarball) linked against the system libssl, libsasl2, zlib, zstd and lz4: the prebuilt binary it would fetch comes from GitHub. Its KafkaJS-compatible promisified API, the one its README recommends; it has no describeConfigs.',
    ],
    // librdkafka and the addon compile in 6-7 minutes on 2 loaded cores.
    installMs: 1_800_000,
    run: runKafkaJavascript,
  },
  {
    id: 'kcat',
    title: 'kcat (librdkafka)',
    codecs: allCodecs,
    coverage: {
      createTopic: 'n/a (kcat has no admin API; topic created with kafkajs)',
      produce: 'kcat -P per codec and partition, enable.idempotence=true',
      consumeGroup: 'kcat -G (balanced consumer, auto commit) -e -J',
      listOffsets: 'kcat -Q: -2 (earliest), -1 (latest), timestamps',
      groupLag: "kcat has no group query: kcat's committed offsets read with kafkajs admin",
    },
    notes: ['kcat cannot set timestamps or per-record headers: records carry headers src=kcat, part=<p> and librdkafka CreateTime, checked against the produce window.'],
    run: runKcat,
  },
  {
    id: 'kafka-python',
    title: 'kafka-python (PyPI)',
    codecs: allCodecs,
    coverage: {
      createTopic: 'KafkaAdminClient.create_topics',
      produce: 'KafkaProducer, enable_idempotence=True, acks=all, one producer per codec',
      consumeGroup: 'KafkaConsumer.subscribe, commit() after every poll',
      listOffsets: 'beginning_offsets, end_offsets, offsets_for_times; admin list_partition_offsets (EARLIEST, LATEST, MAX_TIMESTAMP, EARLIEST_LOCAL)',
      groupLag: 'list_group_offsets vs list_partition_offsets(LATEST); describe_groups',
      describeConfigs: 'KafkaAdminClient.describe_configs',
    },
    notes: ['Installed into a venv by test/compat/install.sh with python-snappy, lz4, zstandard and crc32c.'],
    run: kafkaPython('kafka-python'),
  },
  {
    id: 'kafka-python-2',
    title: 'kafka-python 2.0 (PyPI)',
    codecs: allCodecs,
    coverage: {
      createTopic: 'KafkaAdminClient.create_topics (NewTopic), describe_topics until every partition has a leader',
      produce: 'KafkaProducer, acks=all, one request in flight, one producer per codec',
      consumeGroup: 'KafkaConsumer.subscribe, commit() after every poll',
      listOffsets: 'beginning_offsets, end_offsets, offsets_for_times',
      groupLag: 'list_consumer_group_offsets vs end_offsets; describe_consumer_groups',
      describeConfigs: 'KafkaAdminClient.describe_configs (raw response)',
    },
    notes: [
      'kafka-python 2.0.2 has no idempotent producer and guesses the broker release from the ApiVersions ranges; same program as kafka-python 3, in its own venv.',
    ],
    run: kafkaPython('kafka-python-2'),
  },
  {
    id: 'kafkajs',
    title: 'kafkajs',
    codecs: ['none', 'gzip'],
    coverage: {
      createTopic: 'admin.createTopics',
      produce: 'producer (idempotent), acks=-1, one producer per codec',
      consumeGroup: 'consumer.run eachBatch, commitOffsets after every batch',
      listOffsets: 'admin.fetchTopicOffsets (low, high), fetchTopicOffsetsByTimestamp',
      groupLag: 'admin.fetchOffsets vs fetchTopicOffsets; describeGroups',
    },
    notes: ['kafkajs has only none and gzip built in; snappy, lz4 and zstd need codec plugins.'],
    run: runKafkajs,
  },
];
