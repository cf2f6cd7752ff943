// DescribeProducers (61) against an in-process broker: the producers of a
// partition's producer state with epoch, last sequence, last timestamp,
// coordinator epoch and open-transaction start offset (-1 when none), and
// UNKNOWN_TOPIC_OR_PARTITION for a missing topic or partition.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startSedimentInProcess, type InProcessSediment } from '../../support/sediment.js';
import type { RequestContext } from '../../../broker/handlers/api-handler.js';
import { handler } from '../../../broker/handlers/61-describe-producers.js';
import { silentLogger } from '../../../broker/common/logger.js';
import { ErrorCode } from '../../../broker/protocol/errors.js';
import { buildRecordBatch } from '../../../broker/protocol/record-batch.js';

let broker: InProcessSediment;
const ctx: RequestContext = { apiKey: 61, apiVersion: 0, correlationId: 1, clientId: null, connectionId: 1, clientHost: '127.0.0.1', log: silentLogger(), signal: new AbortController().signal };

before(async () => {
  broker = await startSedimentInProcess();
});

after(async () => {
  await broker?.close();
});

test('DescribeProducers: idempotent and transactional producers of a partition; unknown partitions', async () => {
  const topic = 'describe-producers';
  await broker.broker.context.topics.createTopic({ name: topic, numPartitions: 2 });
  const p0 = broker.broker.context.topics.partition(topic, 0);
  assert.ok(p0 !== undefined);
  const values = (n: number, ts: number) => Array.from({ length: n }, (_, i) => ({ key: null, value: Buffer.from(`v${i}`), timestamp: ts }));
  await p0.append(buildRecordBatch({ records: values(3, 1_700_000_000_000), producerId: 7n, producerEpoch: 2, baseSequence: 0 }));
  await p0.append(buildRecordBatch({ records: values(2, 1_700_000_000_500), producerId: 7n, producerEpoch: 2, baseSequence: 3 }));
  const txnStart = p0.logEndOffset;
  await p0.append(buildRecordBatch({ records: values(1, 1_700_000_001_000), producerId: 9n, producerEpoch: 0, baseSequence: 0, transactional: true }));

  const res = await handler.handle(broker.broker.context, { topics: [{ name: topic, partitionIndexes: [0, 1, 5] }, { name: 'no-such-topic', partitionIndexes: [0] }] }, ctx);
  assert.ok(res !== null);
  const [t, missing] = res.topics;
  assert.ok(t !== undefined && missing !== undefined);
  assert.equal(t.name, topic);
  const [part0, part1, part5] = t.partitions;
  assert.ok(part0 !== undefined && part1 !== undefined && part5 !== undefined);
  assert.equal(part0.errorCode, ErrorCode.NONE);
  assert.deepEqual(
    [...part0.activeProducers].sort((a, b) => Number(a.producerId - b.producerId)),
    [
      { producerId: 7n, producerEpoch: 2, lastSequence: 4, lastTimestamp: 1_700_000_000_500n, coordinatorEpoch: -1, currentTxnStartOffset: -1n },
      { producerId: 9n, producerEpoch: 0, lastSequence: 0, lastTimestamp: 1_700_000_001_000n, coordinatorEpoch: -1, currentTxnStartOffset: txnStart },
    ],
  );
  assert.deepEqual(part1, { partitionIndex: 1, errorCode: ErrorCode.NONE, errorMessage: null, activeProducers: [] });
  assert.equal(part5.errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  assert.deepEqual(missing, { name: 'no-such-topic', partitions: [{ partitionIndex: 0, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: null, activeProducers: [] }] });
});

test('the registry advertises DescribeProducers 0, DescribeTransactions 0 and ListTransactions 0-1', () => {
  const versions = broker.broker.context.supportedApiVersions();
  assert.deepEqual(versions.find((v) => v.apiKey === 61), { apiKey: 61, minVersion: 0, maxVersion: 0 });
  assert.deepEqual(versions.find((v) => v.apiKey === 65), { apiKey: 65, minVersion: 0, maxVersion: 0 });
  assert.deepEqual(versions.find((v) => v.apiKey === 66), { apiKey: 66, minVersion: 0, maxVersion: 1 });
});
