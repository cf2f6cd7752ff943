// Compatibility-matrix driver for Kafka's own CLI tools, run from the reference
// jars (test/support/install-kafka.sh) one JVM per command, as kafka-*.sh would:
//   kafka-topics           --create, --describe (leaders, empty Elr/LastKnownElr)
//   kafka-console-producer one run per codec (none, gzip, snappy, lz4, zstd), keys and
//                          headers parsed from the input lines, idempotent, acks=all
//   kafka-console-consumer --group --from-beginning, printing timestamp, partition,
//                          offset, headers and key; offsets committed on exit
//   kafka-get-offsets      --time earliest, latest, max-timestamp and sample timestamps
//   kafka-consumer-groups  --describe (lag 0), --reset-offsets --to-earliest --execute,
//                          --describe again (lag = every record)
// The console producer lets the Java client's partitioner place keyed records
// (murmur2) and its clock stamp them, so the check uses verify.ts's PlacedVerifier.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { recordKey, recordValue } from '../clients/content.js';
import { KafkaTool } from '../support/kafka-reference.js';
import { repoRoot } from '../support/tools.js';
import { OperationReport, codecSlices, type CompatRunOptions, type CompatSummary } from './summary.js';
import { PlacedVerifier, Placement, keyedPartition } from './verify.js';

const client = 'kafka-cli';

function headersOf(i: number): Array<[string, string]> {
  const h: Array<[string, string]> = [
    ['idx', String(i)],
    ['src', client],
  ];
  if (i % 5 === 0) h.push(['empty', '']);
  return h;
}

/** Console-producer input: "idx:<i>,src:kafka-cli[,empty:]<TAB>k-<i><TAB><value>". */
function* inputLines(from: number, to: number): Generator<string> {
  let chunk: string[] = [];
  for (let i = from; i < to; i++) {
    chunk.push(`${headersOf(i).map(([k, v]) => `${k}:${v}`).join(',')}\t${recordKey(i)}\t${recordValue(i)}\n`);
    if (chunk.length === 1000) {
      yield chunk.join('');
      chunk = [];
    }
  }
  if (chunk.length > 0) yield chunk.join('');
}

/**
 * The JVM flags the matrix starts each tool with: the defaults of kafka-run-class.sh
 * would do, but a tool's JVM starts about twice as fast with C1 only and the serial
 * collector, which matters for the fifteen-odd short-lived JVMs of this driver.
 */
export const cliJvmOptions = ['-Xmx512M', '-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC', '-Djava.awt.headless=true'];

interface ToolResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs one Kafka CLI tool by main class (KafkaTool) on a release's classpath; rejects on a non-zero exit. */
function runTool(classpath: string, mainClass: string, args: readonly string[], input?: string, timeoutMs = 180_000): Promise<ToolResult> {
  const log4j = path.join(repoRoot(), 'test', 'compat', 'java', 'log4j2.properties');
  const child = spawn('java', [...cliJvmOptions, `-Dlog4j2.configurationFile=${log4j}`, '-cp', classpath, mainClass, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout.on('data', (b: Buffer) => out.push(b));
  child.stderr.on('data', (b: Buffer) => err.push(b));
  child.stdin.on('error', () => undefined);
  child.stdin.end(input ?? '');
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  return new Promise<ToolResult>((resolve, reject) => {
    child.on('error', (e) => reject(new Error(`cannot run java: ${e.message}`)));
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const r = { code, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') };
      const name = mainClass.slice(mainClass.lastIndexOf('.') + 1);
      if (code !== 0) reject(new Error(`${name} ${args.join(' ')}: ${signal === 'SIGKILL' ? `killed after ${timeoutMs} ms` : `exit ${code ?? signal}`}\n${r.stderr.slice(-3000)}`));
      else resolve(r);
    });
  });
}

/** "T:p:offset" lines of kafka-get-offsets. */
function parseOffsets(stdout: string, topic: string): Map<number, number> {
  const out = new Map<number, number>();
  for (const line of stdout.split('\n')) {
    const m = /^(.*):(\d+):(-?\d*)$/.exec(line.trim());
    if (m !== null && m[1] === topic) out.set(Number(m[2]), m[3] === '' ? -1 : Number(m[3]));
  }
  return out;
}

interface GroupRow {
  partition: number;
  current: number | null;
  logEnd: number;
  lag: number | null;
}

/** Rows of kafka-consumer-groups --describe for `topic`. */
function parseGroupDescribe(stdout: string, group: string, topic: string): GroupRow[] {
  const rows: GroupRow[] = [];
  for (const line of stdout.split('\n')) {
    const f = line.trim().split(/\s+/);
    if (f[0] !== group || f[1] !== topic || f.length < 6) continue;
    const num = (s: string | undefined): number | null => (s === undefined || s === '-' ? null : Number(s));
    rows.push({ partition: Number(f[2]), current: num(f[3]), logEnd: Number(f[4]), lag: num(f[5]) });
  }
  return rows.sort((a, b) => a.partition - b.partition);
}

/** The CLI row of the release whose jars `classpath` names. */
export async function runKafkaCliCompat(o: CompatRunOptions, version: string, classpath: string): Promise<CompatSummary> {
  const tool = (mainClass: string, args: readonly string[], input?: string, timeoutMs?: number): Promise<ToolResult> => runTool(classpath, mainClass, args, input, timeoutMs);
  const codecs = o.codecs;
  const report = new OperationReport(client, version, codecs, true, o.count);
  const bs = ['--bootstrap-server', o.bootstrap];
  const placement = new Placement(o.count, o.partitions, (i) => keyedPartition(recordKey(i), o.partitions));
  let window = { start: Date.now(), end: Date.now() };
  let verifier: PlacedVerifier | null = null;

  await report.op('createTopic', async () => {
    const r = await tool(KafkaTool.topics, [...bs, '--create', '--topic', o.topic, '--partitions', String(o.partitions), '--replication-factor', '1']);
    if (!r.stdout.includes(`Created topic ${o.topic}.`)) report.error(`kafka-topics --create printed: ${r.stdout.trim()}`);
    return `kafka-topics --create: ${o.partitions} partitions`;
  });

  await report.op('describeTopic', async () => {
    const r = await tool(KafkaTool.topics, [...bs, '--describe', '--topic', o.topic]);
    const head = new RegExp(`Topic: ${o.topic}\\s+TopicId: (\\S+)\\s+PartitionCount: (\\d+)\\s+ReplicationFactor: (\\d+)`).exec(r.stdout);
    if (head === null) report.error(`no topic line in: ${r.stdout.slice(0, 500)}`);
    else if (Number(head[2]) !== o.partitions || Number(head[3]) !== 1) report.error(`PartitionCount ${head[2]}, ReplicationFactor ${head[3]}`);
    for (let p = 0; p < o.partitions; p++) {
      if (!new RegExp(`Partition: ${p}\\s+Leader: \\d+\\s+Replicas: \\d+\\s+Isr: \\d+`).test(r.stdout)) report.error(`no leader line for partition ${p}`);
      // DescribeTopicPartitions (75) gives the ELR lists, empty on one node; Metadata alone prints N/A.
      else if (!new RegExp(`Partition: ${p}\\s+Leader: \\d+\\s+Replicas: \\d+\\s+Isr: \\d+\\tElr: \\tLastKnownElr: $`, 'm').test(r.stdout)) report.error(`partition ${p}: Elr and LastKnownElr are not empty lists`);
    }
    return `kafka-topics --describe: ${o.partitions} partitions with leaders, empty Elr and LastKnownElr`;
  });

  await report.op('produce', async () => {
    window = { start: Date.now(), end: Date.now() };
    const parts: string[] = [];
    for (const { codec, from, to } of codecSlices(o.count, codecs)) {
      const args = [
        ...bs, '--topic', o.topic, '--compression-codec', codec,
        '--property', 'parse.key=true', '--property', 'parse.headers=true',
        '--producer-property', 'enable.idempotence=true', '--producer-property', 'acks=all', '--producer-property', 'linger.ms=5',
      ];
      const r = await tool(KafkaTool.consoleProducer, args, [...inputLines(from, to)].join(''));
      if (/ERROR|Exception/.test(r.stderr)) report.error(`${codec}: ${r.stderr.trim().slice(-800)}`);
      parts.push(`${codec} ${to - from}`);
    }
    window = { start: window.start, end: Date.now() };
    return `${o.count} records (${parts.join(', ')}), keyed (murmur2), idempotent`;
  });

  await report.op('consumeGroup', async () => {
    const v = new PlacedVerifier(placement, headersOf, window);
    verifier = v;
    const r = await tool(KafkaTool.consoleConsumer, [
      ...bs, '--topic', o.topic, '--group', o.group, '--from-beginning',
      '--max-messages', String(o.count), '--timeout-ms', '30000',
      // --formatter-property: Kafka 4.3's console consumer prints a deprecation line on stdout for --property.
      '--formatter-property', 'print.timestamp=true', '--formatter-property', 'print.partition=true', '--formatter-property', 'print.offset=true',
      '--formatter-property', 'print.headers=true', '--formatter-property', 'print.key=true',
    ], undefined, o.timeoutMs);
    // CreateTime:<ts> \t Partition:<p> \t Offset:<o> \t <headers> \t <key> \t <value>
    for (const line of r.stdout.split('\n')) {
      if (line === '') continue;
      const f = line.split('\t');
      const m = /^(CreateTime|LogAppendTime):(-?\d+)$/.exec(f[0] ?? '');
      const p = /^Partition:(\d+)$/.exec(f[1] ?? '');
      const off = /^Offset:(\d+)$/.exec(f[2] ?? '');
      if (m === null || p === null || off === null || f.length !== 6) {
        v.error(`unexpected console-consumer line: ${line.slice(0, 200)}`);
        continue;
      }
      const headers = f[3] === 'NO_HEADERS' ? [] : (f[3] ?? '').split(',').map((h) => {
        const at = h.indexOf(':');
        return [h.slice(0, at), h.slice(at + 1)] as const;
      });
      v.observe({ partition: Number(p[1]), offset: Number(off[1]), key: f[4] ?? null, value: f[5] ?? null, headers, timestamp: Number(m[2]), createTime: m[1] === 'CreateTime' });
    }
    if (!r.stderr.includes(`Processed a total of ${o.count} messages`)) v.error(`console consumer: ${r.stderr.trim().slice(-500)}`);
    v.finish();
    for (const e of v.errors) report.error(e);
    return `${v.consumed} records, offsets committed on exit`;
  });

  await report.op('listOffsets', async () => {
    const query = async (time: string): Promise<Map<number, number>> => parseOffsets((await tool(KafkaTool.getOffsetShell, [...bs, '--topic', o.topic, '--time', time])).stdout, o.topic);
    const expect = (what: string, got: Map<number, number>, want: (p: number) => number): void => {
      for (let p = 0; p < o.partitions; p++) if ((got.get(p) ?? -1) !== want(p)) report.error(`${what} partition ${p}: ${got.get(p) ?? 'no line'}, expected ${want(p)}`);
    };
    const [earliest, latest, maxTs] = await Promise.all([query('earliest'), query('latest'), query('max-timestamp')]);
    expect('--time earliest', earliest, () => 0);
    expect('--time latest', latest, (p) => placement.counts[p]!);
    const v = verifier;
    if (v === null) throw new Error('nothing consumed');
    expect('--time max-timestamp', maxTs, (p) => {
      // Kafka answers the first offset holding the partition's highest timestamp.
      const ts = v.timestamps[p] ?? [];
      const max = Math.max(...ts);
      return ts.indexOf(max);
    });
    const samples = v.sampleTimestamps();
    const picked = [samples[0]!, samples[Math.floor(samples.length / 2)]!, samples[samples.length - 1]!];
    const answers = await Promise.all(picked.map((ts) => query(String(ts))));
    // kafka-get-offsets prints no line for a partition without such an offset (-1).
    picked.forEach((ts, n) => expect(`--time ${ts}`, answers[n]!, (p) => v.offsetForTimestamp(p, ts)));
    return `kafka-get-offsets: earliest, latest, max-timestamp, ${picked.length} timestamps`;
  });

  await report.op('groupLag', async () => {
    const r = await tool(KafkaTool.consumerGroups, [...bs, '--describe', '--group', o.group]);
    const rows = parseGroupDescribe(r.stdout, o.group, o.topic);
    if (rows.length !== o.partitions) report.error(`--describe listed ${rows.length} partitions: ${r.stdout.trim().slice(0, 800)}`);
    for (const row of rows) {
      const want = placement.counts[row.partition];
      if (row.current !== want || row.logEnd !== want || row.lag !== 0) report.error(`partition ${row.partition}: current ${row.current}, log end ${row.logEnd}, lag ${row.lag}, expected ${want}, ${want}, 0`);
    }
    return 'kafka-consumer-groups --describe: lag 0 on every partition';
  });

  await report.op('resetOffsets', async () => {
    const reset = await tool(KafkaTool.consumerGroups, [...bs, '--reset-offsets', '--group', o.group, '--topic', o.topic, '--to-earliest', '--execute']);
    // GROUP TOPIC PARTITION NEW-OFFSET
    const newOffsets = reset.stdout.split('\n').map((l) => l.trim().split(/\s+/)).filter((f) => f[0] === o.group && f[1] === o.topic);
    if (newOffsets.length !== o.partitions || newOffsets.some((f) => f[3] !== '0')) report.error(`--reset-offsets printed: ${reset.stdout.trim().slice(0, 800)}`);
    const r = await tool(KafkaTool.consumerGroups, [...bs, '--describe', '--group', o.group]);
    const rows = parseGroupDescribe(r.stdout, o.group, o.topic);
    if (rows.length !== o.partitions) report.error(`--describe listed ${rows.length} partitions after the reset`);
    for (const row of rows) {
      const want = placement.counts[row.partition];
      if (row.current !== 0 || row.lag !== want) report.error(`after the reset, partition ${row.partition}: current ${row.current}, lag ${row.lag}, expected 0, ${want}`);
    }
    return 'kafka-consumer-groups --reset-offsets --to-earliest --execute, then --describe: lag = every record';
  });

  return report.summary();
}
