// `sediment topics` against a real broker (Apache Kafka 4.3.1 by default; see
// cli-harness.ts): create/describe/alter/delete/list, the per-partition offsets
// of --describe checked against what kafkajs produced, deleted and left open in
// a transaction, and the segment stats taken from an HTTP endpoint when one answers.
import assert from 'node:assert/strict';
import http from 'node:http';
import type net from 'node:net';
import { after, before, test } from 'node:test';
import { cli, eventually, kafkaClient, parseDescribe, produce, startCliTarget, type CliTarget, type DescribedTopic } from './cli-harness.js';

let target: CliTarget;
let b: string;

before(async () => {
  target = await startCliTarget();
  b = target.bootstrap;
});
after(async () => {
  await target.stop();
});

const topic = `cli-topics-${process.pid}`;

test('create, refuse a duplicate, --if-not-exists', async () => {
  const created = await cli('topics', ['--bootstrap-server', b, '--create', '--topic', topic, '--partitions', '3', '--replication-factor', '1', '--config', 'retention.ms=86400000', '--config', 'segment.bytes=1048576']);
  assert.deepEqual(created, { code: 0, stdout: `Created topic ${topic}.\n`, stderr: '' });
  const again = await cli('topics', ['--bootstrap-server', b, '--create', '--topic', topic, '--partitions', '3']);
  assert.equal(again.code, 1);
  assert.match(again.stderr, new RegExp(`cannot create topic '${topic}': TOPIC_ALREADY_EXISTS`));
  assert.equal((await cli('topics', ['--bootstrap-server', b, '--create', '--topic', topic, '--if-not-exists'])).code, 0);
  const bad = await cli('topics', ['--bootstrap-server', b, '--create', '--topic', `${topic}-bad`, '--config', 'cleanup.policy=nonsense']);
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /INVALID_CONFIG/);
});

async function describeTopic(extra: readonly string[] = ['--http', 'none']): Promise<DescribedTopic> {
  const r = await cli('topics', ['--bootstrap-server', b, '--describe', '--topic', topic, ...extra]);
  assert.equal(r.code, 0, r.stderr);
  const d = parseDescribe(r.stdout).get(topic);
  assert.ok(d, r.stdout);
  return d;
}

test('describe: offsets per partition after produce and DeleteRecords', async () => {
  const kafka = kafkaClient(b);
  const base = Date.now() - 3_600_000;
  await produce(kafka, topic, 0, 10, base);
  await produce(kafka, topic, 1, 20, base);
  const admin = kafka.admin();
  await admin.connect();
  try {
    await admin.fetchTopicMetadata({ topics: [topic] });
    await admin.deleteTopicRecords({ topic, partitions: [{ partition: 1, offset: '5' }] });
  } finally {
    await admin.disconnect();
  }
  const d = await describeTopic();
  assert.match(d.topic['TopicId'] ?? '', /^[A-Za-z0-9_-]{22}$/);
  assert.equal(d.topic['PartitionCount'], '3');
  assert.equal(d.topic['ReplicationFactor'], '1');
  assert.equal(d.topic['Configs'], 'retention.ms=86400000,segment.bytes=1048576');
  const [p0, p1, p2] = d.partitions;
  assert.ok(p0 && p1 && p2);
  const offsets = (p: Record<string, string>): Array<string | undefined> =>
    [p['Partition'], p['LogStartOffset'], p['LocalLogStartOffset'], p['HighWatermark'], p['LastStableOffset']];
  assert.deepEqual(offsets(p0), ['0', '0', '0', '10', '10']);
  assert.deepEqual(offsets(p1), ['1', '5', '5', '20', '20']);
  assert.deepEqual(offsets(p2), ['2', '0', '0', '0', '0']);
  for (const p of [p0, p1, p2]) {
    assert.match(p['Leader'] ?? '', /^\d+$/);
    assert.equal(p['Replicas'], p['Leader']);
    assert.equal(p['Isr'], p['Leader']);
    assert.equal(p['LocalSegments'], 'n/a');
    assert.equal(p['RemoteSegments'], 'n/a');
    assert.equal(p['RemoteBytes'], 'n/a');
    if (target.kind === 'kafka') assert.equal(p['LatestTieredOffset'], '-1');
  }
  // DescribeLogDirs sizes: the bytes of the batches written.
  assert.ok(Number(p0['LocalBytes']) > 0 && Number(p1['LocalBytes']) > Number(p0['LocalBytes']), `${p0['LocalBytes']} ${p1['LocalBytes']}`);
});

test('describe: the last stable offset stays below the high watermark during an open transaction', async () => {
  const kafka = kafkaClient(b);
  const txProducer = kafka.producer({ transactionalId: `cli-tx-${process.pid}`, idempotent: true, maxInFlightRequests: 1 });
  await txProducer.connect();
  try {
    const tx = await txProducer.transaction();
    await tx.send({ topic, messages: [{ partition: 2, value: 'in-flight' }] });
    const open = (await describeTopic()).partitions[2];
    assert.deepEqual([open?.['HighWatermark'], open?.['LastStableOffset']], ['1', '0']);
    await tx.abort();
    // The coordinator writes the abort marker (offset 1) after EndTxn returns;
    // then everything is stable again. The high watermark and the LSO come from
    // two ListOffsets requests, so one describe may straddle the marker's write.
    let seen: unknown[] = [];
    await eventually('the abort marker', async () => {
      const p2 = (await describeTopic()).partitions[2];
      seen = [p2?.['HighWatermark'], p2?.['LastStableOffset']];
      return seen[1] !== '0' && seen[0] === seen[1];
    });
    assert.deepEqual(seen, ['2', '2']);
  } finally {
    await txProducer.disconnect();
  }
});

test('describe takes segment counts and remote bytes from the HTTP endpoint when it answers', async () => {
  const requested: string[] = [];
  const server = http.createServer((req, res) => {
    requested.push(req.url ?? '');
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify([
      { topic, partition: 0, logStartOffset: 0, localLogStartOffset: 0, highWatermark: 10, lastStableOffset: 10, localSegments: 2, localBytes: 777, remoteSegments: 5, remoteBytes: '123456789012' },
    ]));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    const url = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
    const r = await cli('topics', ['--bootstrap-server', b, '--describe', '--topic', topic, '--http', url]);
    assert.equal(r.code, 0, r.stderr);
    const [p0, p1] = parseDescribe(r.stdout).get(topic)?.partitions ?? [];
    assert.deepEqual([p0?.['LocalSegments'], p0?.['LocalBytes'], p0?.['RemoteSegments'], p0?.['RemoteBytes']], ['2', '777', '5', '123456789012']);
    // A partition the endpoint does not list keeps the protocol's numbers.
    assert.equal(p1?.['LocalSegments'], 'n/a');
    assert.ok(Number(p1?.['LocalBytes']) > 0);
    assert.deepEqual(requested, [`/v1/partitions?topic=${topic}`]);
  } finally {
    await new Promise((r) => server.close(r));
  }
});

test('alter: configs (set and delete) and partition count; errors are reported', async () => {
  const before = parseDescribe((await cli('topics', ['--bootstrap-server', b, '--describe', '--topic', topic, '--http', 'none'])).stdout).get(topic);
  const r = await cli('topics', ['--bootstrap-server', b, '--alter', '--topic', topic, '--partitions', '4', '--config', 'retention.ms=1000', '--config', 'max.message.bytes=2000000', '--delete-config', 'segment.bytes']);
  assert.deepEqual(r, { code: 0, stdout: `Updated configs of topic ${topic}.\nTopic ${topic} now has 4 partitions.\n`, stderr: '' });
  await eventually('4 partitions in metadata', async () => {
    const d = parseDescribe((await cli('topics', ['--bootstrap-server', b, '--describe', '--topic', topic, '--http', 'none'])).stdout).get(topic);
    return d?.topic['PartitionCount'] === '4';
  });
  const d = parseDescribe((await cli('topics', ['--bootstrap-server', b, '--describe', '--topic', topic, '--http', 'none'])).stdout).get(topic);
  assert.equal(d?.topic['Configs'], 'max.message.bytes=2000000,retention.ms=1000');
  assert.equal(d?.topic['TopicId'], before?.topic['TopicId']);
  assert.equal(d?.partitions[3]?.['HighWatermark'], '0');
  assert.equal(d?.partitions[0]?.['HighWatermark'], '10');

  const shrink = await cli('topics', ['--bootstrap-server', b, '--alter', '--topic', topic, '--partitions', '2']);
  assert.equal(shrink.code, 1);
  assert.match(shrink.stderr, /INVALID_PARTITIONS/);
  const badConfig = await cli('topics', ['--bootstrap-server', b, '--alter', '--topic', topic, '--config', 'no.such.config=1']);
  assert.equal(badConfig.code, 1);
  assert.match(badConfig.stderr, /cannot alter configs/);
  const missing = await cli('topics', ['--bootstrap-server', b, '--alter', '--topic', `${topic}-missing`, '--partitions', '5']);
  assert.deepEqual([missing.code, missing.stderr], [1, `Error while executing topic command: topic '${topic}-missing' does not exist\n`]);
  assert.equal((await cli('topics', ['--bootstrap-server', b, '--alter', '--topic', `${topic}-missing`, '--partitions', '5', '--if-exists'])).code, 0);
});

test('list and describe-all include the topic; internal topics can be left out', async () => {
  const list = await cli('topics', ['--bootstrap-server', b, '--list']);
  assert.equal(list.code, 0);
  const names = list.stdout.trim().split('\n');
  assert.ok(names.includes(topic), list.stdout);
  assert.deepEqual(names, [...names].sort());
  const all = await cli('topics', ['--bootstrap-server', b, '--describe', '--http', 'none', '--exclude-internal']);
  assert.equal(all.code, 0, all.stderr);
  const described = parseDescribe(all.stdout);
  assert.ok(described.has(topic));
  assert.ok(![...described.keys()].some((n) => n.startsWith('__')));
  const missing = await cli('topics', ['--bootstrap-server', b, '--describe', '--topic', `${topic}-missing`]);
  assert.deepEqual([missing.code, missing.stdout], [1, '']);
  assert.match(missing.stderr, /does not exist/);
});

test('delete, then the topic is gone; deleting again fails unless --if-exists', async () => {
  assert.deepEqual(await cli('topics', ['--bootstrap-server', b, '--delete', '--topic', topic]), { code: 0, stdout: `Deleted topic ${topic}.\n`, stderr: '' });
  await eventually('the topic to leave the listing', async () => !(await cli('topics', ['--bootstrap-server', b, '--list'])).stdout.split('\n').includes(topic));
  const again = await cli('topics', ['--bootstrap-server', b, '--delete', '--topic', topic]);
  assert.equal(again.code, 1);
  assert.match(again.stderr, /UNKNOWN_TOPIC_OR_PARTITION/);
  assert.equal((await cli('topics', ['--bootstrap-server', b, '--delete', '--topic', topic, '--if-exists'])).code, 0);
});
