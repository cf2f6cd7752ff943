// Captures golden wire frames: starts the reference Apache Kafka broker
// (test/support/kafka-reference.ts) behind a recording proxy, runs real
// clients through it (kcat and confluent-kafka-python on librdkafka, kafkajs),
// and writes the first frame of each (client, API, version) to
//   test/golden/<client>/<api>-v<version>.bin            (request, as sent)
//   test/golden/<client>/<api>-v<version>.response.bin   (the broker's answer)
// The proxy narrows the broker's ApiVersions answer to the versions our codecs
// know (stable ones), so the Java client of the reference release (Kafka's CLI
// tools, as `java-cli`) uses them. Captured from Apache Kafka 4.3.1; delete a
// client's folder first to capture it afresh (files of versions no longer sent stay).
// Run by hand after building, optionally naming the clients to (re)capture:
//   node dist/test/broker/protocol/golden/capture.js [kcat] [confluent-kafka-python] [kafkajs] [java-cli]
// The files are committed; golden.test.ts checks our codecs against them.
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { decodeResponse, encodeResponseMessage, payloadOf } from '../../../../broker/protocol/frame.js';
import { apiRegistry, apis, ApiKey } from '../../../../broker/protocol/messages/index.js';
import { freePort, KafkaTool, runKafkaTool, startKafkaReference } from '../../../support/kafka-reference.js';
import { kcatPath, repoRoot, systemPython } from '../../../support/tools.js';
import { startRecordingProxy } from '../../../support/recording-proxy.js';

/** Rewrites an ApiVersions response frame to the API ranges our codecs support (stable versions only). */
function clampApiVersions(frame: Buffer, version: number): Buffer {
  const v = apis.ApiVersions.validVersions;
  if (version < v.min || version > v.max) return frame;
  const { header, body } = decodeResponse(payloadOf([frame]), apis.ApiVersions, version);
  if (body.errorCode !== 0) return frame;
  body.apiKeys = body.apiKeys.flatMap((k) => {
    const ours = apiRegistry.get(k.apiKey);
    if (ours === undefined) return [];
    const oursMax = ours.validVersions.max - (ours.latestVersionUnstable ? 1 : 0);
    const minVersion = Math.max(k.minVersion, ours.validVersions.min);
    const maxVersion = Math.min(k.maxVersion, oursMax);
    return minVersion <= maxVersion ? [{ ...k, minVersion, maxVersion }] : [];
  });
  return Buffer.concat(encodeResponseMessage(apis.ApiVersions, version, header.correlationId, body));
}

function kebab(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
    .replace(/([A-Z])([A-Z][a-z])/g, '$1-$2')
    .toLowerCase();
}

function run(cmd: string, args: string[], input: string | null, timeoutMs: number): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr.on('data', (b: Buffer) => (out += b.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
    if (input !== null) child.stdin.end(input);
    else child.stdin.end();
  });
}

const pythonScript = (bootstrap: string): string => `
import sys
from confluent_kafka import Producer, Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
conf = {'bootstrap.servers': '${bootstrap}', 'client.id': 'golden-python'}
admin = AdminClient(conf)
for f in admin.create_topics([NewTopic('golden-python', num_partitions=2, replication_factor=1)]).values():
    f.result()
admin.list_topics(timeout=10)
p = Producer({**conf, 'linger.ms': 0})
for i in range(3):
    p.produce('golden-python', key=b'k%d' % i, value=b'v%d' % i, partition=0)
p.flush(10)
pi = Producer({**conf, 'enable.idempotence': True, 'compression.type': 'gzip'})
pi.produce('golden-python', value=b'idempotent', partition=1)
pi.flush(10)
c = Consumer({**conf, 'group.id': 'golden-python-group', 'auto.offset.reset': 'earliest', 'enable.auto.commit': False})
c.subscribe(['golden-python'])
got = 0
for _ in range(60):
    m = c.poll(0.5)
    if m is not None and m.error() is None:
        got += 1
    if got >= 4:
        break
c.commit(asynchronous=False)
lo, hi = c.get_watermark_offsets(TopicPartition('golden-python', 0), timeout=10)
c.close()
print('python ok', got, lo, hi)
`;

async function runKafkajs(bootstrap: string): Promise<void> {
  const kafka = new Kafka({ clientId: 'golden-kafkajs', brokers: [bootstrap], logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: 'golden-kafkajs', numPartitions: 1 }], waitForLeaders: true });
  const producer = kafka.producer();
  await producer.connect();
  await producer.send({ topic: 'golden-kafkajs', messages: [{ key: 'a', value: 'one', headers: { h: 'x' } }, { value: 'two' }] });
  await producer.disconnect();
  await admin.fetchTopicOffsets('golden-kafkajs');
  const consumer = kafka.consumer({ groupId: 'golden-kafkajs-group' });
  await consumer.connect();
  await consumer.subscribe({ topic: 'golden-kafkajs', fromBeginning: true });
  let seen = 0;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('kafkajs consumer saw too few messages')), 30_000);
    void consumer.run({
      eachMessage: async () => {
        seen += 1;
        if (seen >= 2) {
          clearTimeout(timer);
          resolve();
        }
      },
    });
  });
  await consumer.disconnect();
  await admin.describeGroups(['golden-kafkajs-group']);
  await admin.listGroups();
  await admin.deleteTopics({ topics: ['golden-kafkajs'] });
  await admin.disconnect();
}

async function runJavaCli(bootstrap: string): Promise<void> {
  const b = ['--bootstrap-server', bootstrap];
  await runKafkaTool(KafkaTool.topics, [...b, '--create', '--topic', 'golden-java', '--partitions', '2']);
  await runKafkaTool(KafkaTool.topics, [...b, '--describe', '--topic', 'golden-java']);
  await runKafkaTool(KafkaTool.consoleProducer, [...b, '--topic', 'golden-java', '--property', 'parse.key=true', '--property', 'key.separator=:'], {
    input: 'k1:one\nk2:two\nk3:three\n',
  });
  await runKafkaTool(KafkaTool.consoleConsumer, [...b, '--topic', 'golden-java', '--group', 'golden-java-group', '--from-beginning', '--max-messages', '3']);
  await runKafkaTool(KafkaTool.consumerGroups, [...b, '--describe', '--group', 'golden-java-group']);
  await runKafkaTool(KafkaTool.getOffsetShell, [...b, '--topic', 'golden-java', '--time', '-1']);
  await runKafkaTool(KafkaTool.configs, [...b, '--describe', '--entity-type', 'topics', '--entity-name', 'golden-java']);
  await runKafkaTool(KafkaTool.topics, [...b, '--delete', '--topic', 'golden-java']);
}

async function main(): Promise<void> {
  const proxyPort = await freePort();
  const kafka = await startKafkaReference({ proxyAdvertisedPort: proxyPort });
  const ext = kafka.externalListener;
  if (ext === undefined) throw new Error('no external listener');
  const proxy = await startRecordingProxy({
    target: ext,
    port: proxyPort,
    rewriteResponse: (req, frame) => (req.apiKey === ApiKey.ApiVersions ? clampApiVersions(frame, req.apiVersion) : frame),
  });
  const bootstrap = `127.0.0.1:${proxyPort}`;
  const wanted = new Set(process.argv.slice(2));
  const want = (client: string): boolean => wanted.size === 0 || wanted.has(client);
  try {
    if (want('kcat')) {
      proxy.label('kcat');
      const p = await run(kcatPath, ['-b', bootstrap, '-P', '-t', 'golden-kcat', '-p', '0', '-k', 'key'], 'hello\nworld\n', 30_000);
      const c = await run(kcatPath, ['-b', bootstrap, '-C', '-t', 'golden-kcat', '-p', '0', '-o', 'beginning', '-c', '2', '-e'], null, 30_000);
      const l = await run(kcatPath, ['-b', bootstrap, '-L', '-t', 'golden-kcat'], null, 30_000);
      const q = await run(kcatPath, ['-b', bootstrap, '-Q', '-t', 'golden-kcat:0:-1'], null, 30_000);
      console.log('kcat', p.code, c.code, l.code, q.code, c.out.trim().split('\n').slice(0, 3));
    }
    if (want('confluent-kafka-python')) {
      proxy.label('confluent-kafka-python');
      const py = await run(systemPython, ['-c', pythonScript(bootstrap)], null, 90_000);
      console.log('python', py.code, py.out.trim().split('\n').slice(-2));
    }
    if (want('kafkajs')) {
      proxy.label('kafkajs');
      await runKafkajs(bootstrap);
      console.log('kafkajs ok');
    }
    if (want('java-cli')) {
      proxy.label('java-cli');
      await runJavaCli(bootstrap);
      console.log('java-cli ok');
    }
  } finally {
    await proxy.close();
    await kafka.stop();
  }

  // Keep the largest frame of each (client, API, version, direction): it exercises the most fields
  // (a Fetch response with records rather than an empty long-poll answer).
  const root = path.join(repoRoot(), 'test', 'golden');
  const best = new Map<string, Buffer>();
  for (const e of proxy.exchanges) {
    if (!want(e.client)) continue;
    const api = apiRegistry.get(e.request.apiKey);
    if (api === undefined) continue;
    for (const [suffix, frame] of [['', e.requestFrame], ['.response', e.responseFrame]] as const) {
      const key = `${e.client}/${kebab(api.name)}-v${e.request.apiVersion}${suffix}.bin`;
      const prev = best.get(key);
      if (prev === undefined || frame.length > prev.length) best.set(key, frame);
    }
  }
  for (const [key, frame] of best) {
    mkdirSync(path.dirname(path.join(root, key)), { recursive: true });
    writeFileSync(path.join(root, key), frame);
  }
  console.log(`wrote ${best.size} golden frames under ${root}`);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
