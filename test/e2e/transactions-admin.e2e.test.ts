// Kafka's own (the reference release, 4.3.1) kafka-transactions.sh (org.apache.kafka.tools.TransactionsCommand)
// against an in-process Sediment broker while a kafkajs transactional producer
// holds an open transaction: `list` shows it Ongoing, `describe` shows its
// partitions, `describe-producers` shows the producer with the transaction's
// start offset; after the commit `list` shows CompleteCommit and
// `describe-producers` no open transaction.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Kafka, logLevel } from 'kafkajs';
import { startSedimentInProcess, type InProcessSediment } from '../support/sediment.js';
import { runKafkaTool } from '../support/kafka-reference.js';
import { requireTools } from '../support/tools.js';

const transactionsCommand = 'org.apache.kafka.tools.TransactionsCommand';
let broker: InProcessSediment;

before(async () => {
  requireTools(['java', 'kafka']);
  broker = await startSedimentInProcess();
});

after(async () => {
  await broker?.close();
});

/** The rows of a TransactionsCommand table (header dropped), split on whitespace. */
async function table(args: readonly string[]): Promise<string[][]> {
  const r = await runKafkaTool(transactionsCommand, ['--bootstrap-server', broker.bootstrap, ...args]);
  const lines = r.stdout.split('\n').filter((l) => l.trim() !== '');
  return lines.slice(1).map((l) => l.trim().split(/\s+/));
}

test('kafka-transactions.sh list / describe / describe-producers on an open, then committed, transaction', async () => {
  const topic = 'txn-admin';
  const kafka = new Kafka({ clientId: 'txn-admin-e2e', brokers: [broker.bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 10, initialRetryTime: 50 } });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 3 }], waitForLeaders: true });
  await admin.disconnect();
  const producer = kafka.producer({ transactionalId: 'tx-admin', idempotent: true, maxInFlightRequests: 1, transactionTimeout: 60_000 });
  await producer.connect();
  try {
    const txn = await producer.transaction();
    await txn.send({ topic, messages: [{ value: 'a', partition: 0 }, { value: 'b', partition: 2 }] });
    const meta = broker.broker.context.txns.describe('tx-admin');
    assert.ok(meta !== undefined);
    const pid = String(meta.producerId);
    const txnStart = String(broker.broker.topics.partition(topic, 2)!.logEndOffset - 1n);

    // list: TransactionalId Coordinator ProducerId TransactionState
    const listed = await table(['list']);
    const row = listed.find((r) => r[0] === 'tx-admin');
    assert.ok(row !== undefined, `tx-admin not listed: ${JSON.stringify(listed)}`);
    assert.equal(row[2], pid);
    assert.equal(row[3], 'Ongoing');

    // describe: CoordinatorId TransactionalId ProducerId ProducerEpoch TransactionState TransactionTimeoutMs
    //           CurrentTransactionStartTimeMs TransactionDurationMs TopicPartitions
    const described = await table(['describe', '--transactional-id', 'tx-admin']);
    assert.equal(described.length, 1, JSON.stringify(described));
    const d = described[0]!;
    assert.equal(d[1], 'tx-admin');
    assert.equal(d[2], pid);
    assert.equal(d[3], String(meta.producerEpoch));
    assert.equal(d[4], 'Ongoing');
    assert.equal(d[5], '60000');
    assert.equal(d[6], String(meta.txnStartTimestampMs));
    assert.deepEqual(d[8]?.split(',').sort(), [`${topic}-0`, `${topic}-2`]);

    // describe-producers: ProducerId ProducerEpoch LatestCoordinatorEpoch LastSequence LastTimestamp CurrentTransactionStartOffset
    const producers = await table(['describe-producers', '--topic', topic, '--partition', '2']);
    assert.equal(producers.length, 1, JSON.stringify(producers));
    const p = producers[0]!;
    assert.equal(p[0], pid);
    assert.equal(p[1], String(meta.producerEpoch));
    assert.equal(p[3], '0');
    assert.equal(p[5], txnStart);

    await txn.commit();
    const afterCommit = (await table(['list'])).find((r) => r[0] === 'tx-admin');
    assert.equal(afterCommit?.[3], 'CompleteCommit');
    const producersAfter = await table(['describe-producers', '--topic', topic, '--partition', '2']);
    assert.equal(producersAfter[0]?.[0], pid);
    assert.equal(producersAfter[0]?.[5], 'None', 'no open transaction after the commit');
  } finally {
    await producer.disconnect();
  }
});
