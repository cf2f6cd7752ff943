// Authorized operations as a broker without an authorizer answers them (every
// operation of the resource type), and only when asked: Metadata's topic field
// (v8+) and cluster field (v8-10), DescribeCluster's cluster field.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { handler as metadata } from '../../../broker/handlers/03-metadata.js';
import { handler as describeCluster } from '../../../broker/handlers/60-describe-cluster.js';
import type { RequestContext } from '../../../broker/handlers/api-handler.js';
import { silentLogger } from '../../../broker/common/logger.js';
import { ErrorCode } from '../../../broker/protocol/errors.js';
import type { MetadataRequest } from '../../../broker/protocol/messages/metadata.js';
import { ZERO_UUID } from '../../../broker/protocol/reader.js';
import { startSedimentInProcess, type InProcessSediment } from '../../support/sediment.js';

// Kafka's AclOperation codes: READ 3, WRITE 4, CREATE 5, DELETE 6, ALTER 7, DESCRIBE 8, CLUSTER_ACTION 9,
// DESCRIBE_CONFIGS 10, ALTER_CONFIGS 11, IDEMPOTENT_WRITE 12 - summed here independently of the source.
const TOPIC_OPS = 8 + 16 + 32 + 64 + 128 + 256 + 1024 + 2048;
const CLUSTER_OPS = 32 + 128 + 256 + 512 + 1024 + 2048 + 4096;
const NOT_REQUESTED = -2147483648;

function ctx(apiKey: number, apiVersion: number): RequestContext {
  return { apiKey, apiVersion, correlationId: 1, clientId: null, connectionId: 1, clientHost: '127.0.0.1', log: silentLogger(), signal: new AbortController().signal };
}

/** A handler's answer, which may be null only for requests that get none (acks=0 produce). */
function answered<T>(res: T | null): T {
  assert.ok(res !== null);
  return res;
}

function metadataRequest(includeTopic: boolean, includeCluster: boolean): MetadataRequest {
  return {
    topics: [{ topicId: ZERO_UUID, name: 'ops-topic' }, { topicId: ZERO_UUID, name: 'no-such-topic' }],
    allowAutoTopicCreation: false,
    includeClusterAuthorizedOperations: includeCluster,
    includeTopicAuthorizedOperations: includeTopic,
  };
}

let broker: InProcessSediment;
before(async () => {
  broker = await startSedimentInProcess({ overrides: { 'auto.create.topics.enable': 'false' } });
  await broker.broker.context.topics.createTopic({ name: 'ops-topic', numPartitions: 1 });
});
after(async () => {
  await broker?.close();
});

describe('authorized operations', () => {
  test('Metadata v8+ gives every topic operation to each topic of the answer when asked, unknown ones included', async () => {
    const res = answered(await metadata.handle(broker.broker.context, metadataRequest(true, false), ctx(3, 12)));
    assert.deepEqual(
      res.topics.map((t) => [t.name, t.errorCode, t.topicAuthorizedOperations]),
      [
        ['ops-topic', ErrorCode.NONE, TOPIC_OPS],
        ['no-such-topic', ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, TOPIC_OPS],
      ],
    );
    assert.equal(res.clusterAuthorizedOperations, NOT_REQUESTED, 'v11+ has no cluster field to fill');
    const unasked = answered(await metadata.handle(broker.broker.context, metadataRequest(false, false), ctx(3, 12)));
    assert.deepEqual(unasked.topics.map((t) => t.topicAuthorizedOperations), [NOT_REQUESTED, NOT_REQUESTED]);
  });

  test('Metadata v8-10 gives every cluster operation when asked', async () => {
    const asked = answered(await metadata.handle(broker.broker.context, metadataRequest(false, true), ctx(3, 9)));
    assert.equal(asked.clusterAuthorizedOperations, CLUSTER_OPS);
    assert.deepEqual(asked.topics.map((t) => t.topicAuthorizedOperations), [NOT_REQUESTED, NOT_REQUESTED]);
    const unasked = answered(await metadata.handle(broker.broker.context, metadataRequest(false, false), ctx(3, 9)));
    assert.equal(unasked.clusterAuthorizedOperations, NOT_REQUESTED);
  });

  test('DescribeCluster gives every cluster operation when asked', async () => {
    const asked = answered(await describeCluster.handle(broker.broker.context, { includeClusterAuthorizedOperations: true, endpointType: 1, includeFencedBrokers: false }, ctx(60, 1)));
    assert.equal(asked.clusterAuthorizedOperations, CLUSTER_OPS);
    const unasked = answered(await describeCluster.handle(broker.broker.context, { includeClusterAuthorizedOperations: false, endpointType: 1, includeFencedBrokers: false }, ctx(60, 1)));
    assert.equal(unasked.clusterAuthorizedOperations, NOT_REQUESTED);
  });
});
