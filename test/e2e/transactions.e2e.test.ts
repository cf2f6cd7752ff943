// Transactions with kafkajs against an in-process Sediment broker: committed
// transactions are seen by read_committed consumers, aborted ones only by
// read_uncommitted ones; sendOffsets commits the group's offsets only when the
// transaction commits; the coordinator's state survives a restart, and a
// transaction left open across a restart is aborted by the next
// InitProducerId of the same transactional id; a transactional produce outside
// the producer's transaction is refused.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Kafka, logLevel, type Producer } from 'kafkajs';
import { startSedimentInProcess, type InProcessSediment } from '../support/sediment.js';
import type { RequestContext } from '../../broker/handlers/api-handler.js';
import { handler as produceHandler } from '../../broker/handlers/00-produce.js';
import { silentLogger } from '../../broker/common/logger.js';
import { ErrorCode } from '../../broker/protocol/errors.js';
import { buildRecordBatch } from '../../broker/protocol/record-batch.js';
import { ZERO_UUID } from '../../broker/protocol/reader.js';

let broker: InProcessSediment;

before(async () => {
  broker = await startSedimentInProcess({ overrides: { 'transaction.abort.timed.out.transaction.cleanup.interval.ms': '200' } });
});

after(async () => {
  await broker?.close();
});

function kafka(): Kafka {
  return new Kafka({ clientId: 'txn-e2e', brokers: [broker.bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 10, initialRetryTime: 50 } });
}

async function createTopic(topic: string, partitions = 2): Promise<void> {
  const admin = kafka().admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: partitions }], waitForLeaders: true });
  await admin.disconnect();
}

async function txProducer(transactionalId: string): Promise<Producer> {
  const p = kafka().producer({ transactionalId, idempotent: true, maxInFlightRequests: 1, transactionTimeout: 60_000 });
  await p.connect();
  return p;
}

/** Values read from the start of `topic` up to the record whose value is `last`. */
async function readUntil(topic: string, last: string, readUncommitted: boolean): Promise<string[]> {
  const consumer = kafka().consumer({ groupId: `reader-${topic}-${readUncommitted}-${Math.random()}`, readUncommitted, maxWaitTimeInMs: 100 });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const values: string[] = [];
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`'${last}' not seen in ${topic}; saw ${values.join(',')}`)), 30_000);
    consumer
      .run({
        eachMessage: async ({ message }) => {
          const v = message.value?.toString() ?? '';
          values.push(v);
          if (v === last) {
            clearTimeout(timer);
            resolve();
          }
        },
      })
      .catch(reject);
  });
  await consumer.disconnect();
  return values.sort();
}

test('kafkajs: read_committed sees committed transactions only, read_uncommitted sees both', async () => {
  const topic = 'txn-visibility';
  await createTopic(topic);
  const producer = await txProducer('tx-visibility');
  const committed = await producer.transaction();
  await committed.send({ topic, messages: [{ key: 'a', value: 'c1' }, { key: 'b', value: 'c2' }] });
  await committed.commit();
  const aborted = await producer.transaction();
  await aborted.send({ topic, messages: [{ key: 'a', value: 'x1' }, { key: 'b', value: 'x2' }] });
  await aborted.abort();
  const end = await producer.transaction();
  await end.send({ topic, messages: [{ key: 'a', value: 'zend' }] });
  await end.commit();
  await producer.disconnect();
  assert.deepEqual(await readUntil(topic, 'zend', false), ['c1', 'c2', 'zend']);
  assert.deepEqual(await readUntil(topic, 'zend', true), ['c1', 'c2', 'x1', 'x2', 'zend']);
  const p0 = broker.broker.topics.partition(topic, 0)!;
  assert.equal(p0.lastStableOffset, p0.highWatermark);
});

test('kafkajs: sendOffsets commits the group offsets only when the transaction commits', async () => {
  const topic = 'txn-offsets';
  await createTopic(topic, 1);
  const groupId = 'txn-offsets-group';
  const producer = await txProducer('tx-offsets');
  const admin = kafka().admin();
  await admin.connect();
  const committedOffset = async (): Promise<string> => (await admin.fetchOffsets({ groupId, topics: [topic] }))[0]!.partitions[0]!.offset;

  const t1 = await producer.transaction();
  await t1.send({ topic, messages: [{ value: 'v' }] });
  await t1.sendOffsets({ consumerGroupId: groupId, topics: [{ topic, partitions: [{ partition: 0, offset: '5' }] }] });
  assert.equal(await committedOffset(), '-1', 'not visible before the commit');
  await t1.abort();
  assert.equal(await committedOffset(), '-1', 'dropped on abort');

  const t2 = await producer.transaction();
  await t2.send({ topic, messages: [{ value: 'w' }] });
  await t2.sendOffsets({ consumerGroupId: groupId, topics: [{ topic, partitions: [{ partition: 0, offset: '7' }] }] });
  await t2.commit();
  assert.equal(await committedOffset(), '7');

  // An open transaction's offset at a restart: replayed as pending, then dropped by the fencing abort.
  const t3 = await producer.transaction();
  await t3.send({ topic, messages: [{ value: 'x' }] });
  await t3.sendOffsets({ consumerGroupId: groupId, topics: [{ topic, partitions: [{ partition: 0, offset: '9' }] }] });
  await admin.disconnect();
  await producer.disconnect();
  broker = await broker.restart();
  assert.equal(broker.broker.context.groups.hasPendingTxnOffset(groupId, topic, 0), true);
  const admin2 = kafka().admin();
  await admin2.connect();
  const offsetNow = async (): Promise<string> => (await admin2.fetchOffsets({ groupId, topics: [topic] }))[0]!.partitions[0]!.offset;
  assert.equal(await offsetNow(), '7', 'the committed transaction’s offset survives the restart');
  const next = await txProducer('tx-offsets');
  await next.transaction();
  assert.equal(broker.broker.context.groups.hasPendingTxnOffset(groupId, topic, 0), false);
  assert.equal(await offsetNow(), '7', 'the aborted transaction’s offset is dropped');
  await admin2.disconnect();
  await next.disconnect();
});

test('restart: state survives; an open transaction is aborted by the next InitProducerId', async () => {
  const topic = 'txn-restart';
  await createTopic(topic, 1);
  const before = await txProducer('tx-restart');
  const t1 = await before.transaction();
  await t1.send({ topic, messages: [{ value: 'r1' }] });
  await t1.commit();
  const open = await before.transaction();
  await open.send({ topic, messages: [{ value: 'open' }] });
  const p0 = (): ReturnType<typeof broker.broker.topics.partition> => broker.broker.topics.partition(topic, 0);
  assert.ok(p0()!.lastStableOffset < p0()!.highWatermark, 'the open transaction holds the LSO');
  await before.disconnect();

  broker = await broker.restart();
  const meta = broker.broker.context.txns.describe('tx-restart');
  assert.equal(meta?.state, 'Ongoing');
  assert.ok(p0()!.lastStableOffset < p0()!.highWatermark, 'still open after the restart');

  const afterRestart = await txProducer('tx-restart');
  // kafkajs sends InitProducerId with its first transaction.
  const t2 = await afterRestart.transaction();
  assert.equal(p0()!.lastStableOffset, p0()!.highWatermark, 'the new producer aborted the open transaction');
  await t2.send({ topic, messages: [{ value: 'r2' }] });
  await t2.commit();
  await afterRestart.disconnect();
  assert.deepEqual(await readUntil(topic, 'r2', false), ['r1', 'r2']);
  const m = broker.broker.context.txns.describe('tx-restart')!;
  assert.equal(m.state, 'CompleteCommit');
  assert.ok(m.producerEpoch >= 2, `epoch bumped on each init and the fence (${m.producerEpoch})`);
});

test('an open transaction past its timeout is aborted by the coordinator and its producer fenced', async () => {
  const topic = 'txn-timeout';
  await createTopic(topic, 1);
  const p = kafka().producer({ transactionalId: 'tx-timeout', idempotent: true, maxInFlightRequests: 1, transactionTimeout: 500 });
  await p.connect();
  const t = await p.transaction();
  await t.send({ topic, messages: [{ value: 'late' }] });
  const part = broker.broker.topics.partition(topic, 0)!;
  const deadline = Date.now() + 10_000;
  while (broker.broker.context.txns.describe('tx-timeout')?.state !== 'CompleteAbort') {
    assert.ok(Date.now() < deadline, 'aborted within 10 s');
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal(part.lastStableOffset, part.highWatermark);
  // kafkajs sends EndTxn v1, older than PRODUCER_FENCED (KIP-588): the fence reads INVALID_PRODUCER_EPOCH.
  await assert.rejects(t.commit(), (e: unknown) => e instanceof Error && e.name === 'KafkaJSProtocolError' && (e as Error & { type?: string }).type === 'INVALID_PRODUCER_EPOCH');
  await p.disconnect();
});

test('a transactional batch for a partition outside the producer’s transaction is refused', async () => {
  const topic = 'txn-verify';
  await createTopic(topic, 2);
  const p = await txProducer('tx-verify');
  const t = await p.transaction();
  await t.send({ topic, messages: [{ value: 'in-txn', partition: 0 }] });
  const meta = broker.broker.context.txns.describe('tx-verify')!;
  const ctx: RequestContext = { apiKey: 0, apiVersion: 9, correlationId: 1, clientId: null, connectionId: 1, clientHost: '127.0.0.1', log: silentLogger(), signal: new AbortController().signal };
  const produce = async (partition: number, producerId: bigint, producerEpoch: number): Promise<number> => {
    const records = buildRecordBatch({ records: [{ key: null, value: Buffer.from('raw'), timestamp: Date.now() }], producerId, producerEpoch, baseSequence: 0, transactional: true });
    const res = await produceHandler.handle(broker.broker.context, { transactionalId: 'tx-verify', acks: -1, timeoutMs: 1000, topicData: [{ name: topic, topicId: ZERO_UUID, partitionData: [{ index: partition, records }] }] }, ctx);
    return res!.responses[0]!.partitionResponses[0]!.errorCode;
  };
  const before = broker.broker.topics.partition(topic, 1)!.logEndOffset;
  assert.equal(await produce(1, meta.producerId, meta.producerEpoch), ErrorCode.INVALID_TXN_STATE, 'partition 1 was never added');
  assert.equal(await produce(0, meta.producerId, meta.producerEpoch + 1), ErrorCode.PRODUCER_FENCED, 'not the transaction’s epoch');
  assert.equal(await produce(0, 987_654n, 0), ErrorCode.INVALID_TXN_STATE, 'no transaction for that producer id');
  assert.equal(broker.broker.topics.partition(topic, 1)!.logEndOffset, before, 'nothing appended');
  await t.abort();
  await p.disconnect();
});
