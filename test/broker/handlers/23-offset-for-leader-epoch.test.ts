// OffsetForLeaderEpoch (23) against an in-process broker, through the wire codecs:
// v2 (librdkafka's version, no replica id: it reads as -2) and v3-4 consumers get
// the end offset of the epoch asked for; UNKNOWN_LEADER_EPOCH / FENCED_LEADER_EPOCH
// for a current epoch ahead of or behind the leader's; a replica (id >= 0) is
// refused by a single broker, which has no followers. The registry advertises
// 2-4, Kafka 4's range.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startSedimentInProcess, type InProcessSediment } from '../../support/sediment.js';
import type { RequestContext } from '../../../broker/handlers/api-handler.js';
import { handler } from '../../../broker/handlers/23-offset-for-leader-epoch.js';
import { silentLogger } from '../../../broker/common/logger.js';
import { ErrorCode } from '../../../broker/protocol/errors.js';
import { decodeRequestBody, decodeRequestHeader, encodeRequestMessage, payloadOf } from '../../../broker/protocol/frame.js';
import { apis } from '../../../broker/protocol/messages/index.js';
import type { OffsetForLeaderEpochRequest } from '../../../broker/protocol/messages/offset-for-leader-epoch.js';
import { buildRecordBatch } from '../../../broker/protocol/record-batch.js';

let broker: InProcessSediment;
const topic = 'ofle';

before(async () => {
  broker = await startSedimentInProcess();
  await broker.broker.context.topics.createTopic({ name: topic, numPartitions: 1 });
  const p0 = broker.broker.context.topics.partition(topic, 0);
  assert.ok(p0 !== undefined);
  const records = Array.from({ length: 5 }, (_, i) => ({ key: null, value: Buffer.from(`v${i}`), timestamp: 1_700_000_000_000 + i }));
  await p0.append(buildRecordBatch({ records }));
});

after(async () => {
  await broker?.close();
});

/** The request as the broker reads it off the wire in `version`. */
function onTheWire(version: number, req: OffsetForLeaderEpochRequest): OffsetForLeaderEpochRequest {
  const payload = payloadOf(encodeRequestMessage(apis.OffsetForLeaderEpoch, version, 7, 'test', req));
  return decodeRequestBody(decodeRequestHeader(payload), payload).body as OffsetForLeaderEpochRequest;
}

async function ask(version: number, replicaId: number, currentLeaderEpoch: number, leaderEpoch: number) {
  const ctx: RequestContext = { apiKey: 23, apiVersion: version, correlationId: 7, clientId: 'test', connectionId: 1, clientHost: '127.0.0.1', log: silentLogger(), signal: new AbortController().signal };
  const req = onTheWire(version, { replicaId, topics: [{ topic, partitions: [{ partition: 0, currentLeaderEpoch, leaderEpoch }] }] });
  const res = await handler.handle(broker.broker.context, req, ctx);
  assert.ok(res !== null);
  return { replicaId: req.replicaId, partition: res.topics[0]?.partitions[0] };
}

test('v2, which carries no replica id, is answered as a consumer: the end offset of the epoch', async () => {
  const { replicaId, partition } = await ask(2, -1, 0, 0);
  assert.equal(replicaId, -2, "v2 has no replica id: Kafka's default");
  assert.deepEqual(partition, { errorCode: ErrorCode.NONE, partition: 0, leaderEpoch: 0, endOffset: 5n });
});

test('v3 and v4 consumers get the same answer; epochs ahead or behind are refused', async () => {
  for (const v of [3, 4]) {
    assert.deepEqual((await ask(v, -1, 0, 0)).partition, { errorCode: ErrorCode.NONE, partition: 0, leaderEpoch: 0, endOffset: 5n }, `v${v}`);
    assert.equal((await ask(v, -1, 1, 0)).partition?.errorCode, ErrorCode.UNKNOWN_LEADER_EPOCH, `v${v}`);
  }
  assert.equal((await ask(2, -1, 3, 0)).partition?.errorCode, ErrorCode.UNKNOWN_LEADER_EPOCH);
});

test('a replica is refused by a single broker', async () => {
  assert.equal((await ask(3, 5, 0, 0)).partition?.errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER);
});

test('the registry advertises OffsetForLeaderEpoch 2-4', () => {
  assert.deepEqual(broker.broker.context.supportedApiVersions().find((v) => v.apiKey === 23), { apiKey: 23, minVersion: 2, maxVersion: 4 });
});
