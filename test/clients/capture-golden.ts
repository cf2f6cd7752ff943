// Captures golden response frames from the reference Apache Kafka broker for
// kcat, confluent-kafka-python, kafkajs, the Java client and Kafka's Java CLI
// tools of the reference release, through the recording proxy, into
// test/golden/kafka-responses/ (existing files are kept: delete the folder to
// capture afresh). The Java client and tools negotiate the reference broker's
// highest versions (Produce 13, Fetch 18, ListOffsets 11, Metadata 13...), the
// librdkafka and kafkajs clients the older ones they know; the Java runs also
// reach the KIP-848 consumer group, share group and DescribeTopicPartitions APIs.
// The Java client is test/compat/java/CompatClient.java, compiled with javac (a JDK).
//   npm run build && node dist/test/clients/capture-golden.js [outDir]
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, KafkaTool, runKafkaTool, startKafkaReference } from '../support/kafka-reference.js';
import { startRecordingProxy, saveGoldenResponses } from '../support/recording-proxy.js';
import { kafkaVersion, repoRoot } from '../support/tools.js';
import { runKafkajsRoundTrip, runKcatRoundTrip, runPythonRoundTrip, type ClientRun } from './run-client.js';
import { clients as compatClients } from '../compat/clients.js';

/** Lines `key:value` for the console producer (parse.key). */
const consoleLines = (prefix: string, n: number): string => Array.from({ length: n }, (_, i) => `k-${i}:${prefix}-${i}`).join('\n') + '\n';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'sediment-capture-golden-'));

/** kafka-delete-records' input: the first 10 records of golden-cli partition 0. */
function deleteRecordsJson(): string {
  const file = path.join(tmp, 'delete-records.json');
  writeFileSync(file, JSON.stringify({ version: 1, partitions: [{ topic: 'golden-cli', partition: 0, offset: 10 }] }));
  return file;
}

async function main(): Promise<void> {
  const outDir = process.argv[2] ?? path.join(repoRoot(), 'test', 'golden', 'kafka-responses');
  const proxyPort = await freePort();
  const kafka = await startKafkaReference({ proxyAdvertisedPort: proxyPort });
  const target = kafka.externalListener;
  if (target === undefined) throw new Error('no external listener');
  const rec = await startRecordingProxy({ target, port: proxyPort });
  const b = rec.address;
  const check = (r: ClientRun): void => {
    if (!r.ok) throw new Error(`${r.client} failed: ${r.errors.join('; ')}`);
  };
  try {
    rec.label('kcat');
    check(await runKcatRoundTrip({ bootstrap: b, topic: 'golden-kcat', count: 40, compression: 'gzip' }));
    rec.label('confluent-kafka-python');
    check(await runPythonRoundTrip({ bootstrap: b, topic: 'golden-python', count: 40, compression: 'lz4', idempotent: true }));
    check(await runPythonRoundTrip({ bootstrap: b, topic: 'golden-python-group', count: 40, compression: 'zstd', group: 'golden-python' }));
    rec.label('kafkajs');
    check(await runKafkajsRoundTrip({ bootstrap: b, topic: 'golden-kafkajs', count: 40, compression: 'gzip', idempotent: true }));
    check(await runKafkajsRoundTrip({ bootstrap: b, topic: 'golden-kafkajs-group', count: 40, group: 'golden-kafkajs' }));
    rec.label('java-client');
    const java = compatClients.find((c) => c.id === 'java');
    if (java === undefined) throw new Error('no java compat client');
    const js = await java.run({ bootstrap: b, topic: 'golden-java', group: 'golden-java', count: 200, partitions: 3, codecs: ['none', 'zstd'], baseTimestamp: Date.now() - 60_000, timeoutMs: 120_000 });
    if (!js.ok) throw new Error(`java client failed: ${JSON.stringify(js).slice(0, 2000)}`);
    rec.label('java-cli');
    const tool = (main: string, args: readonly string[], input?: string): Promise<unknown> => runKafkaTool(main, ['--bootstrap-server', b, ...args], input === undefined ? {} : { input });
    await tool(KafkaTool.topics, ['--create', '--topic', 'golden-cli', '--partitions', '2']);
    await tool(KafkaTool.topics, ['--describe', '--topic', 'golden-kcat']);
    await tool(KafkaTool.consoleProducer, ['--topic', 'golden-cli', '--property', 'parse.key=true', '--property', 'key.separator=:', '--producer-property', 'compression.type=lz4'], consoleLines('cli', 30));
    // A KIP-848 consumer group (ConsumerGroupHeartbeat, OffsetCommit/OffsetFetch v10)...
    await tool(KafkaTool.consoleConsumer, ['--topic', 'golden-cli', '--group', 'golden-cli-848', '--from-beginning', '--max-messages', '30', '--timeout-ms', '60000', '--consumer-property', 'group.protocol=consumer']);
    // ...and a classic one (JoinGroup, SyncGroup, Heartbeat, LeaveGroup at the Java client's versions).
    await tool(KafkaTool.consoleConsumer, ['--topic', 'golden-cli', '--group', 'golden-cli-classic', '--from-beginning', '--max-messages', '30', '--timeout-ms', '60000', '--consumer-property', 'group.protocol=classic']);
    await tool(KafkaTool.consumerGroups, ['--describe', '--group', 'golden-cli-848', '--members', '--verbose']);
    await tool(KafkaTool.consumerGroups, ['--describe', '--group', 'golden-cli-classic']);
    await tool(KafkaTool.consumerGroups, ['--describe', '--group', 'golden-python']);
    await tool(KafkaTool.consumerGroups, ['--list']);
    // A share group (KIP-932) reading from the beginning: its group config first.
    await tool(KafkaTool.configs, ['--alter', '--entity-type', 'groups', '--entity-name', 'golden-share', '--add-config', 'share.auto.offset.reset=earliest']);
    await tool(KafkaTool.consoleShareConsumer, ['--topic', 'golden-cli', '--group', 'golden-share', '--max-messages', '30', '--timeout-ms', '60000']);
    await tool(KafkaTool.shareGroups, ['--describe', '--group', 'golden-share']);
    await tool(KafkaTool.shareGroups, ['--describe', '--group', 'golden-share', '--members']);
    await tool(KafkaTool.configs, ['--describe', '--entity-type', 'topics', '--entity-name', 'golden-cli']);
    await tool(KafkaTool.getOffsetShell, ['--topic', 'golden-kcat', '--time', '-1']);
    await tool(KafkaTool.deleteRecords, ['--offset-json-file', deleteRecordsJson()]);
    await tool(KafkaTool.brokerApiVersions, []);
    const written = saveGoldenResponses(rec.exchanges, outDir, { broker: `Apache Kafka ${kafkaVersion()}` });
    console.log(`${rec.exchanges.length} exchanges recorded, ${written.length} new golden responses in ${outDir}`);
    for (const w of written) console.log(`  ${w.file} (${w.bytes} bytes, ${w.client})`);
  } finally {
    await rec.close();
    await kafka.stop();
    rmSync(tmp, { recursive: true, force: true });
  }
}

await main();
