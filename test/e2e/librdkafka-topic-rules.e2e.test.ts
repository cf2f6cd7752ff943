// Current librdkafka (the PyPI confluent-kafka wheel, installed by
// test/compat/install.sh confluent-kafka) against a Sediment child process with
// tiered storage on, through a recording proxy that Sediment advertises (so
// every connection of the client passes it):
//  - the all-topics Metadata v12 librdkafka pads with 3 bytes is answered
//    (list_topics), and a regex subscription (^prefix.*) finds its topics;
//  - a compacted topic created without remote.storage.enable is untiered, and
//    remote.storage.enable=true with cleanup.policy=compact is INVALID_CONFIG;
//  - a batch with a keyless record on the compacted topic fails with
//    INVALID_RECORD, and the ProduceResponse librdkafka received carries the
//    KIP-467 record error (batch index, Kafka's message) and error_message;
//  - a zstd topic stores librdkafka's gzip batches as zstd, records intact.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { BrokerConnection } from '../../broker/cli/broker-connection.js';
import { decodeResponse } from '../../broker/protocol/frame.js';
import { ApiKey, apis } from '../../broker/protocol/messages/index.js';
import { decodeRecordBatches } from '../../broker/protocol/record-batch.js';
import { runProcess } from '../clients/common.js';
import { installPart } from '../compat/clients.js';
import { freePort } from '../support/kafka-reference.js';
import { startRecordingProxy, type RecordingProxy } from '../support/recording-proxy.js';
import { startSediment, type SedimentProcess } from '../support/sediment.js';

let broker: SedimentProcess;
let proxy: RecordingProxy;
let python: string;

before(async () => {
  python = await installPart('confluent-kafka');
  const port = await freePort();
  broker = await startSediment({ overrides: { 'advertised.listeners': `PLAINTEXT://127.0.0.1:${port}` } });
  proxy = await startRecordingProxy({ target: { host: '127.0.0.1', port: broker.port }, port });
});

after(async () => {
  await broker?.close();
  await proxy?.close();
});

const program = String.raw`
import json, sys, time
from confluent_kafka import Consumer, KafkaException, Producer, libversion
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic
bootstrap = sys.argv[1]
out = {'librdkafka': libversion()[0]}
admin = AdminClient({'bootstrap.servers': bootstrap})
def create(name, config):
    try:
        admin.create_topics([NewTopic(name, 1, 1, config=config)])[name].result(30)
        return 'ok'
    except KafkaException as e:
        return '%s: %s' % (e.args[0].name(), e.args[0].str())
out['compact'] = create('rdk-compact', {'cleanup.policy': 'compact'})
out['compactTiered'] = create('rdk-compact-tiered', {'cleanup.policy': 'compact', 'remote.storage.enable': 'true'})
out['zstd'] = create('rdk-zstd', {'compression.type': 'zstd'})
out['rx'] = [create('rdk-rx-a', {}), create('rdk-rx-b', {}), create('rdk-other', {})]
configs = next(iter(admin.describe_configs([ConfigResource('topic', 'rdk-compact')]).values())).result(30)
out['compactConfigs'] = {k: configs[k].value for k in ('cleanup.policy', 'remote.storage.enable')}
configs = next(iter(admin.describe_configs([ConfigResource('topic', 'rdk-zstd')]).values())).result(30)
out['zstdConfig'] = configs['compression.type'].value
out['allTopics'] = sorted(admin.list_topics(timeout=30).topics)

reports = []
def on_delivery(err, msg):
    reports.append({'topic': msg.topic(), 'key': None if msg.key() is None else msg.key().decode(),
                    'error': None if err is None else err.name(), 'offset': msg.offset() if err is None else None})
# One batch (linger) holding a keyed and a keyless record, then a keyed one alone.
p = Producer({'bootstrap.servers': bootstrap, 'linger.ms': 200, 'compression.type': 'gzip'})
p.produce('rdk-compact', key=b'a', value=b'1', on_delivery=on_delivery)
p.produce('rdk-compact', key=None, value=b'2', on_delivery=on_delivery)
p.flush(30)
p.produce('rdk-compact', key=b'c', value=b'3', on_delivery=on_delivery)
p.flush(30)
for i in range(20):
    p.produce('rdk-zstd', key=b'z%d' % i, value=(b'zstd topic value %d ' % i) * 20, on_delivery=on_delivery)
for t in ('rdk-rx-a', 'rdk-rx-b', 'rdk-other'):
    p.produce(t, key=t.encode(), value=b'rx', on_delivery=on_delivery)
p.flush(30)
out['reports'] = reports

c = Consumer({'bootstrap.servers': bootstrap, 'group.id': 'rdk-rx', 'auto.offset.reset': 'earliest',
              'topic.metadata.refresh.interval.ms': 1000})
c.subscribe(['^rdk-rx.*'])
seen = set()
deadline = time.time() + 60
while len(seen) < 2 and time.time() < deadline:
    m = c.poll(0.5)
    if m is not None and m.error() is None:
        seen.add(m.topic())
out['regexTopics'] = sorted(seen)
out['assignment'] = sorted(tp.topic for tp in c.assignment())
c.close()
print(json.dumps(out))
`;

test('librdkafka (PyPI confluent-kafka): list_topics, regex subscription, compacted-topic rules, record errors, zstd topic', async () => {
  const r = await runProcess(python, ['-c', program, `127.0.0.1:${broker.port}`], { timeoutMs: 180_000 });
  assert.equal(r.code, 0, `python failed:\n${r.stderr.slice(-3000)}\nbroker:\n${broker.logs.tail()}`);
  const out = JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}') as {
    librdkafka: string;
    compact: string;
    compactTiered: string;
    zstd: string;
    rx: string[];
    compactConfigs: Record<string, string>;
    zstdConfig: string;
    allTopics: string[];
    reports: { topic: string; key: string | null; error: string | null; offset: number | null }[];
    regexTopics: string[];
    assignment: string[];
  };
  assert.match(out.librdkafka, /^2\.(1[0-9]|[2-9][0-9])\./, 'a current librdkafka');
  assert.deepEqual([out.compact, out.zstd, out.rx], ['ok', 'ok', ['ok', 'ok', 'ok']]);
  assert.match(out.compactTiered, /^INVALID_CONFIG: Remote log storage only supports topics with cleanup.policy=delete/);
  assert.deepEqual(out.compactConfigs, { 'cleanup.policy': 'compact', 'remote.storage.enable': 'false' });
  assert.equal(out.zstdConfig, 'zstd');
  for (const t of ['rdk-compact', 'rdk-zstd', 'rdk-rx-a', 'rdk-rx-b', 'rdk-other']) assert.ok(out.allTopics.includes(t), `list_topics() lists ${t}`);
  assert.deepEqual(out.regexTopics, ['rdk-rx-a', 'rdk-rx-b']);
  assert.deepEqual(out.assignment, ['rdk-rx-a', 'rdk-rx-b']);

  // The whole batch with the keyless record fails, as in Kafka; the next keyed record is the topic's first.
  const compact = out.reports.filter((x) => x.topic === 'rdk-compact');
  assert.deepEqual(compact, [
    { topic: 'rdk-compact', key: 'a', error: 'INVALID_RECORD', offset: null },
    { topic: 'rdk-compact', key: null, error: 'INVALID_RECORD', offset: null },
    { topic: 'rdk-compact', key: 'c', error: null, offset: 0 },
  ]);
  const produceResponses = proxy.exchanges
    .filter((e) => e.request.apiKey === ApiKey.Produce)
    .map((e) => decodeResponse(e.responseFrame.subarray(4), apis.Produce, e.request.apiVersion).body);
  const refused = produceResponses
    .flatMap((resp) => resp.responses.filter((t) => t.name === 'rdk-compact').flatMap((t) => t.partitionResponses))
    .filter((p) => p.errorCode !== 0);
  assert.equal(refused.length, 1, 'one refused Produce to the compacted topic');
  const m = 'Compacted topic cannot accept message without key in topic partition rdk-compact-0';
  assert.deepEqual(refused[0]?.recordErrors, [{ batchIndex: 1, batchIndexErrorMessage: m }]);
  assert.equal(refused[0]?.errorMessage, `One or more records have been rejected due to 1 record errors in total, and only showing the first three errors at most: [RecordError(batchIndex=1, message='${m}')]`);
  assert.equal(refused[0]?.logStartOffset, 0n);

  // librdkafka compressed with gzip; the zstd topic stored zstd, every record intact.
  assert.equal(out.reports.filter((x) => x.topic === 'rdk-zstd' && x.error === null).length, 20);
  const conn = await BrokerConnection.connect('127.0.0.1', broker.port);
  try {
    const { body } = await conn.send(apis.Fetch, () => ({
      clusterId: null, replicaId: -1, replicaState: { replicaId: -1, replicaEpoch: -1n }, maxWaitMs: 0, minBytes: 0, maxBytes: 1 << 20, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
      topics: [{ topic: 'rdk-zstd', topicId: 'AAAAAAAAAAAAAAAAAAAAAA', partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: 0n, lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: 1 << 20, replicaDirectoryId: 'AAAAAAAAAAAAAAAAAAAAAA' }] }],
      forgottenTopicsData: [], rackId: '',
    }), { min: 12, max: 12 });
    const records = body.responses[0]?.partitions[0]?.records;
    assert.ok(records instanceof Buffer);
    const batches = decodeRecordBatches(records);
    assert.ok(batches.length > 0);
    assert.deepEqual([...new Set(batches.map((b) => b.compression))], ['zstd']);
    const got = batches.flatMap((b) => b.records.map((rec) => [rec.key?.toString(), rec.value?.toString()]));
    assert.deepEqual(got, Array.from({ length: 20 }, (_, i) => [`z${i}`, `zstd topic value ${i} `.repeat(20)]));
  } finally {
    conn.close();
  }
});
