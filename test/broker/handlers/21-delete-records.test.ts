// DeleteRecords (21) against an in-process broker: the checks Kafka's
// ReplicaManager.deleteRecordsOnLocalLog and Partition.deleteRecordsOnLeader
// make before moving the log start. An internal topic is INVALID_TOPIC_EXCEPTION
// (before its compact policy is looked at); a topic whose cleanup.policy lacks
// delete is POLICY_VIOLATION and keeps its records, also once AlterConfigs made
// it so; compact,delete and delete topics move their log start.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startSedimentInProcess, type InProcessSediment } from '../../support/sediment.js';
import type { RequestContext } from '../../../broker/handlers/api-handler.js';
import { handler } from '../../../broker/handlers/21-delete-records.js';
import { silentLogger } from '../../../broker/common/logger.js';
import { ErrorCode } from '../../../broker/protocol/errors.js';
import { buildRecordBatch } from '../../../broker/protocol/record-batch.js';

let broker: InProcessSediment;
const ctx: RequestContext = { apiKey: 21, apiVersion: 2, correlationId: 1, clientId: null, connectionId: 1, clientHost: '127.0.0.1', log: silentLogger(), signal: new AbortController().signal };

before(async () => {
  broker = await startSedimentInProcess();
});

after(async () => {
  await broker?.close();
});

/** A topic of one partition holding `count` keyed records. */
async function topicWith(name: string, configs: Record<string, string>, count: number): Promise<void> {
  await broker.broker.context.topics.createTopic({ name, numPartitions: 1, configs });
  const p = broker.broker.context.topics.partition(name, 0);
  assert.ok(p !== undefined);
  const records = Array.from({ length: count }, (_, i) => ({ key: Buffer.from(`k${i}`), value: Buffer.from(`v${i}`), timestamp: 1_700_000_000_000 + i }));
  await p.append(buildRecordBatch({ records }));
}

async function deleteBefore(name: string, offset: bigint): Promise<{ lowWatermark: bigint; errorCode: number }> {
  const res = await handler.handle(broker.broker.context, { topics: [{ name, partitions: [{ partitionIndex: 0, offset }] }], timeoutMs: 1000 }, ctx);
  assert.ok(res !== null);
  const part = res.topics[0]?.partitions[0];
  assert.ok(part !== undefined);
  return { lowWatermark: part.lowWatermark, errorCode: part.errorCode };
}

test('DeleteRecords: a compact-only topic is POLICY_VIOLATION and keeps its records; delete and compact,delete topics move the log start', async () => {
  await topicWith('dr-compact', { 'cleanup.policy': 'compact' }, 4);
  await topicWith('dr-both', { 'cleanup.policy': 'compact,delete' }, 4);
  await topicWith('dr-delete', {}, 4);

  assert.deepEqual(await deleteBefore('dr-compact', 2n), { lowWatermark: -1n, errorCode: ErrorCode.POLICY_VIOLATION });
  assert.equal(broker.broker.context.topics.partition('dr-compact', 0)?.logStartOffset, 0n);
  // The policy is checked before the offset (Kafka's order): an out-of-range offset is still POLICY_VIOLATION.
  assert.deepEqual(await deleteBefore('dr-compact', 99n), { lowWatermark: -1n, errorCode: ErrorCode.POLICY_VIOLATION });

  assert.deepEqual(await deleteBefore('dr-both', 2n), { lowWatermark: 2n, errorCode: ErrorCode.NONE });
  assert.deepEqual(await deleteBefore('dr-delete', -1n), { lowWatermark: 4n, errorCode: ErrorCode.NONE });
});

test('DeleteRecords follows cleanup.policy as AlterConfigs changes it', async () => {
  const topics = broker.broker.context.topics;
  await topicWith('dr-altered', { 'remote.storage.enable': 'false' }, 3);
  await topics.alterConfigs('dr-altered', [{ name: 'cleanup.policy', value: 'compact' }]);
  assert.equal((await deleteBefore('dr-altered', 1n)).errorCode, ErrorCode.POLICY_VIOLATION);
  await topics.alterConfigs('dr-altered', [{ name: 'cleanup.policy', value: 'delete' }]);
  assert.deepEqual(await deleteBefore('dr-altered', 1n), { lowWatermark: 1n, errorCode: ErrorCode.NONE });
});

test('DeleteRecords of an internal topic is INVALID_TOPIC_EXCEPTION, before its compact policy is looked at', async () => {
  const topics = broker.broker.context.topics;
  assert.ok(topics.isInternal('__consumer_offsets'));
  assert.ok(topics.partition('__consumer_offsets', 0) !== undefined, 'the broker creates __consumer_offsets (cleanup.policy=compact) at start');
  assert.deepEqual(await deleteBefore('__consumer_offsets', 0n), { lowWatermark: -1n, errorCode: ErrorCode.INVALID_TOPIC_EXCEPTION });
});
