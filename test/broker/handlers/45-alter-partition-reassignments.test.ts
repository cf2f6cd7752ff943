// AlterPartitionReassignments (45) and ListPartitionReassignments (46) against
// an in-process single broker: the only replica of every partition, so its own
// id is no change, another broker id is INVALID_REPLICA_ASSIGNMENT, a cancel is
// NO_REASSIGNMENT_IN_PROGRESS, an unknown topic or partition
// UNKNOWN_TOPIC_OR_PARTITION, per partition; v0 allows replication factor
// changes, v1 echoes AllowReplicationFactorChange; nothing is ever listed.
// (The cluster's side: test/broker/cluster/cluster-reassignments.test.ts and
// test/e2e-cluster/reassignment.e2e.test.ts.)
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startSedimentInProcess, type InProcessSediment } from '../../support/sediment.js';
import type { RequestContext } from '../../../broker/handlers/api-handler.js';
import { handler as alter } from '../../../broker/handlers/45-alter-partition-reassignments.js';
import { handler as list } from '../../../broker/handlers/46-list-partition-reassignments.js';
import { silentLogger } from '../../../broker/common/logger.js';
import { ErrorCode } from '../../../broker/protocol/errors.js';

let broker: InProcessSediment;
const ctx = (apiKey: number, apiVersion: number): RequestContext => ({ apiKey, apiVersion, correlationId: 1, clientId: null, connectionId: 1, clientHost: '127.0.0.1', log: silentLogger(), signal: new AbortController().signal });

before(async () => {
  broker = await startSedimentInProcess();
});

after(async () => {
  await broker?.close();
});

test('single broker: per-partition answers of AlterPartitionReassignments v0 and v1, nothing listed', async () => {
  const topic = 'reassign-single';
  const me = broker.broker.context.nodeId;
  await broker.broker.context.topics.createTopic({ name: topic, numPartitions: 2 });
  const partitions = [
    { partitionIndex: 0, replicas: [me] },
    { partitionIndex: 1, replicas: [me, me + 1] },
    { partitionIndex: 0, replicas: null },
    { partitionIndex: 7, replicas: [me] },
  ];
  for (const version of [0, 1]) {
    const res = await alter.handle(broker.broker.context, { timeoutMs: 1000, allowReplicationFactorChange: false, topics: [{ name: topic, partitions }, { name: 'no-such-topic', partitions: [{ partitionIndex: 0, replicas: [me] }] }] }, ctx(45, version));
    assert.ok(res !== null);
    assert.equal(res.errorCode, ErrorCode.NONE);
    assert.equal(res.allowReplicationFactorChange, version === 0, 'v0 has no such field: changes are allowed');
    const codes = res.responses.map((t) => [t.name, t.partitions.map((p) => [p.partitionIndex, p.errorCode])]);
    // [me, me+1] names an unregistered broker: checked before the replication factor, as Kafka does.
    assert.deepEqual(codes, [
      [topic, [[0, ErrorCode.NONE], [1, ErrorCode.INVALID_REPLICA_ASSIGNMENT], [0, ErrorCode.NO_REASSIGNMENT_IN_PROGRESS], [7, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]]],
      ['no-such-topic', [[0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]]],
    ]);
  }
  const listed = await list.handle(broker.broker.context, { timeoutMs: 1000, topics: null }, ctx(46, 0));
  assert.deepEqual(listed, { throttleTimeMs: 0, errorCode: ErrorCode.NONE, errorMessage: null, topics: [] });
});
