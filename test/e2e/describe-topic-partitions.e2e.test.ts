// Kafka's own (the reference release, 4.3.1) kafka-topics --describe against a Sediment child process.
// The admin client describes topics by name with DescribeTopicPartitions (75)
// once the broker advertises it, so every partition line carries the eligible
// leader replicas and the last known ELR: empty lists on a single node, as a
// single-node Kafka prints them ("Elr: " and "LastKnownElr: " with nothing
// after), where Metadata alone gives "N/A". A partition limit below the topic
// sizes makes the admin client follow NextCursor across topics and partitions.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { KafkaTool, runKafkaTool } from '../support/kafka-reference.js';
import { LogLevel, startSediment, type SedimentProcess } from '../support/sediment.js';
import { requireTools } from '../support/tools.js';

let broker: SedimentProcess;

// Partition counts per topic; the names sort in this order.
const topics: ReadonlyArray<readonly [string, number]> = [
  ['dtp-cli-a', 5],
  ['dtp-cli-b', 3],
];

before(async () => {
  requireTools(['java', 'kafka']);
  broker = await startSediment();
  for (const [name, partitions] of topics) {
    const r = await runKafkaTool(KafkaTool.topics, ['--bootstrap-server', broker.bootstrap, '--create', '--topic', name, '--partitions', String(partitions), '--replication-factor', '1']);
    assert.match(r.stdout, new RegExp(`Created topic ${name}\\.`));
  }
});

after(async () => {
  await broker?.close();
});

interface PartitionLine {
  readonly topic: string;
  readonly partition: number;
  readonly leader: string;
  readonly replicas: string;
  readonly isr: string;
  readonly elr: string;
  readonly lastKnownElr: string;
}

/** The tab-separated partition lines of kafka-topics --describe; a line in another shape fails. */
function partitionLines(stdout: string): PartitionLine[] {
  const rows: PartitionLine[] = [];
  for (const line of stdout.split('\n')) {
    if (!line.includes('Partition: ')) continue;
    const m = /^\tTopic: (\S+)\tPartition: (\d+)\tLeader: (\S+)\tReplicas: (\S*)\tIsr: (\S*)\tElr: (.*)\tLastKnownElr: (.*)$/.exec(line);
    assert.ok(m !== null, `unexpected partition line: ${JSON.stringify(line)}`);
    rows.push({ topic: m[1]!, partition: Number(m[2]), leader: m[3]!, replicas: m[4]!, isr: m[5]!, elr: m[6]!, lastKnownElr: m[7]! });
  }
  return rows;
}

function expectedRows(node: string): PartitionLine[] {
  return topics.flatMap(([topic, n]) =>
    Array.from({ length: n }, (_, partition) => ({ topic, partition, leader: node, replicas: node, isr: node, elr: '', lastKnownElr: '' })),
  );
}

test('kafka-topics --describe prints empty Elr and LastKnownElr lists, not N/A', { timeout: 120_000 }, async () => {
  const [name, partitions] = topics[0]!;
  const r = await runKafkaTool(KafkaTool.topics, ['--bootstrap-server', broker.bootstrap, '--describe', '--topic', name]);
  assert.doesNotMatch(r.stdout, /N\/A/);
  assert.match(r.stdout, new RegExp(`^Topic: ${name}\\tTopicId: \\S+\\tPartitionCount: ${partitions}\\tReplicationFactor: 1\\t`, 'm'));
  const rows = partitionLines(r.stdout);
  const node = rows[0]?.leader ?? '?';
  assert.match(node, /^\d+$/);
  assert.deepEqual(rows, expectedRows(node).filter((row) => row.topic === name));
});

/** sediment_requests_total{api="DescribeTopicPartitions"} from the broker's /metrics. */
async function describeTopicPartitionsRequests(): Promise<number> {
  const started = broker.logs.lines.find((l) => l.msg === 'sediment broker started');
  const port = started?.['httpPort'];
  assert.equal(typeof port, 'number', 'the start line carries the HTTP port');
  const text = await (await fetch(`http://127.0.0.1:${String(port)}/metrics`)).text();
  const m = /^sediment_requests_total\{api="DescribeTopicPartitions",version="0"\} (\d+)$/m.exec(text);
  return m === null ? 0 : Number(m[1]);
}

test('with --partition-size-limit-per-response 2 the admin client pages through every topic and partition', { timeout: 120_000 }, async () => {
  const before = await describeTopicPartitionsRequests();
  const r = await runKafkaTool(KafkaTool.topics, ['--bootstrap-server', broker.bootstrap, '--describe', '--topic', 'dtp-cli-.*', '--partition-size-limit-per-response', '2']);
  assert.doesNotMatch(r.stdout, /N\/A/);
  // The tool prints topics in its result map's order, not necessarily by name.
  const rows = partitionLines(r.stdout).sort((a, b) => (a.topic === b.topic ? a.partition - b.partition : a.topic < b.topic ? -1 : 1));
  const node = rows[0]?.leader ?? '?';
  assert.deepEqual(rows, expectedRows(node));
  for (const [name, partitions] of topics) assert.match(r.stdout, new RegExp(`^Topic: ${name}\\tTopicId: \\S+\\tPartitionCount: ${partitions}\\t`, 'm'));
  // 8 partitions, 2 per response: the admin client followed NextCursor (4 pages at least).
  assert.ok((await describeTopicPartitionsRequests()) - before >= 4, 'paged DescribeTopicPartitions requests');
  const errors = broker.logs.atLeast(LogLevel.error);
  assert.equal(errors.length, 0, errors.map((l) => JSON.stringify(l)).join('\n'));
});

test('kafka-broker-api-versions lists DescribeTopicPartitions(75): 0 as usable', { timeout: 120_000 }, async () => {
  const r = await runKafkaTool(KafkaTool.brokerApiVersions, ['--bootstrap-server', broker.bootstrap]);
  assert.match(r.stdout, /DescribeTopicPartitions\(75\): 0 \[usable: 0\]/);
});
