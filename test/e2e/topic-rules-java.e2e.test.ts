// The Java admin client 4.1.1 against a Sediment child process (tiered storage
// on, the default): topic compression.type and compacted-topic creation, see
// test/e2e/java/TopicRulesClient.java. The zstd topic's stored batches are then
// fetched raw: the Java producer's gzip batches were rebuilt as zstd.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { BrokerConnection } from '../../broker/cli/broker-connection.js';
import { apis } from '../../broker/protocol/messages/index.js';
import { decodeRecordBatches } from '../../broker/protocol/record-batch.js';
import { runProcess } from '../clients/common.js';
import { LogLevel, startSediment, type SedimentProcess } from '../support/sediment.js';
import { kafkaClasspath, repoRoot, requireTools } from '../support/tools.js';

let broker: SedimentProcess;
let classes: string;

before(async () => {
  requireTools(['java', 'kafka']);
  classes = mkdtempSync(path.join(os.tmpdir(), 'sediment-topic-rules-java-'));
  const source = path.join(repoRoot(), 'test', 'e2e', 'java', 'TopicRulesClient.java');
  const javac = await runProcess('javac', ['-d', classes, '-cp', kafkaClasspath(), source], { timeoutMs: 120_000 });
  assert.equal(javac.code, 0, javac.stderr);
  broker = await startSediment();
});

after(async () => {
  await broker?.close();
  if (classes !== undefined) rmSync(classes, { recursive: true, force: true });
});

test('Java admin 4.1.1: compression.type names and levels, compacted topics created untiered, gzip batches stored as zstd', { timeout: 240_000 }, async () => {
  const log4j = path.join(repoRoot(), 'test', 'compat', 'java', 'log4j2.properties');
  const r = await runProcess('java', [`-Dlog4j2.configurationFile=${log4j}`, '-cp', `${classes}${path.delimiter}${kafkaClasspath()}`, 'TopicRulesClient', broker.bootstrap], { timeoutMs: 180_000 });
  assert.equal(r.code, 0, `java exited ${r.code}:\n${r.stdout}\n${r.stderr.slice(-4000)}`);
  const results = new Map<string, string>();
  for (const line of r.stdout.split('\n')) {
    const m = /^RESULT ([\w.]+)=(.*)$/.exec(line);
    if (m !== null) results.set(m[1]!, m[2]!);
  }
  for (const codec of ['uncompressed', 'gzip', 'snappy', 'lz4', 'zstd', 'producer']) {
    assert.equal(results.get(`create.${codec}`), `ok|${codec}|DYNAMIC_TOPIC_CONFIG`, codec);
  }
  assert.equal(results.get('create.bogus'), 'InvalidConfigurationException: Invalid value brotli for configuration compression.type: String must be one of: uncompressed, zstd, lz4, snappy, gzip, producer');
  assert.match(results.get('create.gzip0') ?? '', /^InvalidConfigurationException: Invalid value 0 for configuration compression.gzip.level: Value must be between 1 and 9 or equal to -1/);
  assert.equal(results.get('create.zstdLevel'), 'ok|9');
  assert.equal(results.get('alter'), 'lz4');
  assert.equal(results.get('compact'), 'ok|compact|false');
  assert.match(results.get('compactTiered') ?? '', /^InvalidConfigurationException: Remote log storage only supports topics with cleanup.policy=delete/);
  assert.equal(results.get('plainTiered'), 'true', 'a delete-policy topic is still tiered by default');
  assert.equal(results.get('zstdRoundTrip'), '100|true');

  const conn = await BrokerConnection.connect('127.0.0.1', broker.port);
  try {
    const { body } = await conn.send(apis.Fetch, () => ({
      clusterId: null, replicaId: -1, replicaState: { replicaId: -1, replicaEpoch: -1n }, maxWaitMs: 0, minBytes: 0, maxBytes: 1 << 20, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
      topics: [{ topic: 'j-codec-zstd', topicId: 'AAAAAAAAAAAAAAAAAAAAAA', partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: 0n, lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: 1 << 20, replicaDirectoryId: 'AAAAAAAAAAAAAAAAAAAAAA' }] }],
      forgottenTopicsData: [], rackId: '',
    }), { min: 12, max: 12 });
    const records = body.responses[0]?.partitions[0]?.records;
    assert.ok(records instanceof Buffer);
    const batches = decodeRecordBatches(records);
    assert.deepEqual([...new Set(batches.map((b) => b.compression))], ['zstd']);
    assert.equal(batches.reduce((n, b) => n + b.records.length, 0), 100);
  } finally {
    conn.close();
  }
  const errors = broker.logs.atLeast(LogLevel.error);
  assert.equal(errors.length, 0, errors.map((l) => JSON.stringify(l)).join('\n'));
});
