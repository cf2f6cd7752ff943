// Captures golden response frames from the reference Apache Kafka broker for
// kcat, confluent-kafka-python, kafkajs and Kafka's Java CLI tools, through the
// recording proxy, into test/golden/kafka-responses/ (existing files are kept).
//   npm run build && node dist/test/clients/capture-golden.js [outDir]
import path from 'node:path';
import { freePort, KafkaTool, runKafkaTool, startKafkaReference } from '../support/kafka-reference.js';
import { startRecordingProxy, saveGoldenResponses } from '../support/recording-proxy.js';
import { kafkaVersion, repoRoot } from '../support/tools.js';
import { runKafkajsRoundTrip, runKcatRoundTrip, runPythonRoundTrip, type ClientRun } from './run-client.js';

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
    rec.label('java-cli');
    await runKafkaTool(KafkaTool.topics, ['--bootstrap-server', b, '--describe', '--topic', 'golden-kcat']);
    await runKafkaTool(KafkaTool.consumerGroups, ['--bootstrap-server', b, '--describe', '--group', 'golden-python']);
    await runKafkaTool(KafkaTool.getOffsetShell, ['--bootstrap-server', b, '--topic', 'golden-kcat', '--time', '-1']);
    const written = saveGoldenResponses(rec.exchanges, outDir, { broker: `Apache Kafka ${kafkaVersion()}` });
    console.log(`${rec.exchanges.length} exchanges recorded, ${written.length} new golden responses in ${outDir}`);
    for (const w of written) console.log(`  ${w.file} (${w.bytes} bytes, ${w.client})`);
  } finally {
    await rec.close();
    await kafka.stop();
  }
}

await main();
