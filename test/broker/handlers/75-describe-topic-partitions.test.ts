// DescribeTopicPartitions (75) against an in-process broker: Kafka 4.x's topic
// order, the cursor and the partition limit (across topics, mid-topic, at a
// topic's end), unknown and illegal names, names only (a topic id is not a name),
// every topic when the list is empty, the INVALID_REQUEST cursors, agreement
// with Metadata, and byte-for-byte Kafka 4.3.1's captured answer.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startSedimentInProcess, type InProcessSediment } from '../../support/sediment.js';
import { repoRoot } from '../../support/tools.js';
import type { RequestContext } from '../../../broker/handlers/api-handler.js';
import {
  DEFAULT_MAX_REQUEST_PARTITION_SIZE_LIMIT,
  describeTopicPartitions,
  handler,
} from '../../../broker/handlers/75-describe-topic-partitions.js';
import { handler as metadataHandler } from '../../../broker/handlers/03-metadata.js';
import { TOPIC_AUTHORIZED_OPERATIONS } from '../../../broker/handlers/authorized-operations.js';
import { silentLogger } from '../../../broker/common/logger.js';
import { ErrorCode, KafkaError } from '../../../broker/protocol/errors.js';
import { ZERO_UUID } from '../../../broker/protocol/reader.js';
import { decodeRequestBody, decodeRequestHeader, decodeResponse, encodeResponseMessage, payloadOf } from '../../../broker/protocol/frame.js';
import { apiRegistry } from '../../../broker/protocol/messages/index.js';
import type {
  DescribeTopicPartitionsRequest,
  DescribeTopicPartitionsRequestCursor,
  DescribeTopicPartitionsResponse,
} from '../../../broker/protocol/messages/describe-topic-partitions.js';
import { BROKER_CONFIG_DEFS } from '../../../metadata/broker-config-defs.js';

const ctx: RequestContext = { apiKey: 75, apiVersion: 0, correlationId: 1, clientId: null, connectionId: 1, clientHost: '127.0.0.1', log: silentLogger(), signal: new AbortController().signal };

// The broker caps every answer at 5 partitions (max.request.partition.size.limit).
const BROKER_LIMIT = 5;
let broker: InProcessSediment;

// dtp-a: 3 partitions, dtp-b: 2, dtp-c: 4.
const A = 'dtp-a';
const B = 'dtp-b';
const C = 'dtp-c';

before(async () => {
  broker = await startSedimentInProcess({ overrides: { 'max.request.partition.size.limit': String(BROKER_LIMIT) } });
  const topics = broker.broker.context.topics;
  await topics.createTopic({ name: A, numPartitions: 3 });
  await topics.createTopic({ name: B, numPartitions: 2 });
  await topics.createTopic({ name: C, numPartitions: 4 });
});

after(async () => {
  await broker?.close();
});

function request(names: string[], responsePartitionLimit: number, cursor: DescribeTopicPartitionsRequestCursor | null = null): DescribeTopicPartitionsRequest {
  return { topics: names.map((name) => ({ name })), responsePartitionLimit, cursor };
}

async function describeTp(req: DescribeTopicPartitionsRequest): Promise<DescribeTopicPartitionsResponse> {
  const res = await handler.handle(broker.broker.context, req, ctx);
  assert.ok(res !== null);
  return res;
}

/** "topic:partition" for every partition of a response, in order. */
function listed(res: DescribeTopicPartitionsResponse): string[] {
  return res.topics.flatMap((t) => t.partitions.map((p) => `${t.name ?? '?'}:${p.partitionIndex}`));
}

const topicId = (name: string): string => {
  const t = broker.broker.context.topics.store.get(name);
  assert.ok(t !== undefined, name);
  return t.topicId;
};

describe('DescribeTopicPartitions', () => {
  test('pages of two partitions across topics and partitions, following NextCursor to the end', async () => {
    const pages: string[][] = [];
    const cursors: (DescribeTopicPartitionsRequestCursor | null)[] = [];
    let cursor: DescribeTopicPartitionsRequestCursor | null = null;
    do {
      const res = await describeTp(request([A, B, C], 2, cursor));
      pages.push(listed(res));
      cursor = res.nextCursor === null ? null : { topicName: res.nextCursor.topicName, partitionIndex: res.nextCursor.partitionIndex };
      cursors.push(cursor);
    } while (cursor !== null && pages.length < 20);
    assert.deepEqual(pages, [
      [`${A}:0`, `${A}:1`],
      [`${A}:2`, `${B}:0`],
      [`${B}:1`, `${C}:0`],
      [`${C}:1`, `${C}:2`],
      [`${C}:3`],
    ]);
    assert.deepEqual(cursors, [
      { topicName: A, partitionIndex: 2 },
      { topicName: B, partitionIndex: 1 },
      { topicName: C, partitionIndex: 1 },
      { topicName: C, partitionIndex: 3 },
      null,
    ]);
  });

  test('a limit used up exactly at the end of a topic points the cursor at partition 0 of the next one', async () => {
    const res = await describeTp(request([A, B, C], 3));
    assert.deepEqual(listed(res), [`${A}:0`, `${A}:1`, `${A}:2`]);
    assert.deepEqual(res.topics.map((t) => t.name), [A]);
    assert.deepEqual(res.nextCursor, { topicName: B, partitionIndex: 0 });
    // The last topic ending exactly at the limit leaves no cursor.
    const last = await describeTp(request([C], 4));
    assert.deepEqual(listed(last), [`${C}:0`, `${C}:1`, `${C}:2`, `${C}:3`]);
    assert.equal(last.nextCursor, null);
  });

  test('a cursor mid-topic starts there; topics before the cursor topic are skipped, later ones start at 0', async () => {
    const res = await describeTp(request([A, B, C], 100, { topicName: C, partitionIndex: 2 }));
    assert.deepEqual(listed(res), [`${C}:2`, `${C}:3`]);
    assert.equal(res.nextCursor, null);
    const mid = await describeTp(request([C, A, B], 100, { topicName: B, partitionIndex: 1 }));
    assert.deepEqual(listed(mid), [`${B}:1`, `${C}:0`, `${C}:1`, `${C}:2`, `${C}:3`]);
    assert.equal(mid.nextCursor, null);
    // A cursor past the topic's last partition answers the topic with no partitions.
    const past = await describeTp(request([B], 100, { topicName: B, partitionIndex: 7 }));
    assert.deepEqual(past.topics.map((t) => [t.name, t.errorCode, t.partitions.length]), [[B, ErrorCode.NONE, 0]]);
    assert.equal(past.nextCursor, null);
  });

  test('topics come back sorted by name, each once, whatever the request order', async () => {
    const res = await describeTp(request([C, A, B, A, C], 100));
    assert.deepEqual(res.topics.map((t) => t.name), [A, B]);
    assert.deepEqual(res.nextCursor, { topicName: C, partitionIndex: 0 });
    const all = describeTopicPartitions(broker.broker.context, request([C, B, A, B], 2000), DEFAULT_MAX_REQUEST_PARTITION_SIZE_LIMIT);
    assert.deepEqual(all.topics.map((t) => [t.name, t.partitions.length]), [[A, 3], [B, 2], [C, 4]]);
    assert.equal(all.nextCursor, null);
  });

  test('unknown and illegal names: an error, a zero topic id, no partitions, and no share of the limit', async () => {
    const res = await describeTp(request(['dtp-missing', A, 'bad name!'], 3));
    // Sorted: "bad name!" < "dtp-a" < "dtp-missing".
    assert.deepEqual(
      res.topics.map((t) => ({ name: t.name, errorCode: t.errorCode, topicId: t.topicId, partitions: t.partitions.length, ops: t.topicAuthorizedOperations })),
      [
        { name: 'bad name!', errorCode: ErrorCode.INVALID_TOPIC_EXCEPTION, topicId: ZERO_UUID, partitions: 0, ops: TOPIC_AUTHORIZED_OPERATIONS },
        { name: A, errorCode: ErrorCode.NONE, topicId: topicId(A), partitions: 3, ops: TOPIC_AUTHORIZED_OPERATIONS },
      ],
    );
    // The limit ran out with dtp-a: the cursor names the unknown topic, as Kafka's does.
    assert.deepEqual(res.nextCursor, { topicName: 'dtp-missing', partitionIndex: 0 });
    const more = await describeTp(request(['dtp-missing', A], 4));
    assert.deepEqual(more.topics.map((t) => [t.name, t.errorCode, t.isInternal]), [[A, ErrorCode.NONE, false], ['dtp-missing', ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, false]]);
    assert.equal(more.nextCursor, null);
  });

  test('names only: a topic id in the name field is an unknown topic; known topics carry their id', async () => {
    const id = topicId(B);
    const res = await describeTp(request([id, B], 100));
    const byName = new Map(res.topics.map((t) => [t.name, t]));
    assert.equal(byName.get(id)?.errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    assert.equal(byName.get(id)?.topicId, ZERO_UUID);
    assert.equal(byName.get(B)?.topicId, id);
  });

  test('an empty list describes every topic (internal ones flagged), never an unknown one, from the cursor on', async () => {
    const ctxTopics = broker.broker.context.topics;
    const names = ctxTopics.store.list().map((t) => t.name);
    const res = describeTopicPartitions(broker.broker.context, request([], 2000), DEFAULT_MAX_REQUEST_PARTITION_SIZE_LIMIT);
    assert.deepEqual(res.topics.map((t) => t.name), [...names].sort());
    for (const t of res.topics) {
      assert.equal(t.errorCode, ErrorCode.NONE);
      assert.equal(t.isInternal, ctxTopics.isInternal(t.name ?? ''), `${t.name}`);
    }
    // A cursor naming a topic that does not exist is fine without a topic list.
    const from = await describeTp(request([], 100, { topicName: 'dtp-aa', partitionIndex: 1 }));
    assert.deepEqual(from.topics.slice(0, 2).map((t) => [t.name, t.partitions[0]?.partitionIndex]), [[B, 0], [C, 0]]);
  });

  test('a cursor outside the topic list, or with a negative partition, is INVALID_REQUEST', async () => {
    for (const req of [request([A, B], 10, { topicName: C, partitionIndex: 0 }), request([A], 10, { topicName: A, partitionIndex: -1 }), request([], 10, { topicName: A, partitionIndex: -1 })]) {
      await assert.rejects(
        async () => describeTp(req),
        (err: unknown) => err instanceof KafkaError && err.code === ErrorCode.INVALID_REQUEST,
      );
    }
    const error = handler.errorResponse(request([A, B], 10), ErrorCode.INVALID_REQUEST, ctx);
    assert.deepEqual(error.topics.map((t) => [t.name, t.errorCode, t.topicId, t.partitions.length]), [[A, ErrorCode.INVALID_REQUEST, ZERO_UUID, 0], [B, ErrorCode.INVALID_REQUEST, ZERO_UUID, 0]]);
    assert.equal(error.nextCursor, null);
  });

  test('a limit below 1 still answers one partition; the broker limit caps a larger request limit', async () => {
    assert.deepEqual(listed(await describeTp(request([A], 0))), [`${A}:0`]);
    assert.deepEqual(listed(await describeTp(request([A], -5))), [`${A}:0`]);
    const capped = await describeTp(request([A, B, C], 2000));
    assert.equal(listed(capped).length, BROKER_LIMIT);
    assert.deepEqual(capped.nextCursor, { topicName: C, partitionIndex: 0 });
    const def = BROKER_CONFIG_DEFS.find((d) => d.name === 'max.request.partition.size.limit');
    assert.equal(def?.default, DEFAULT_MAX_REQUEST_PARTITION_SIZE_LIMIT);
  });

  test('partitions say what Metadata says, with empty ELR and last known ELR', async () => {
    const meta = await metadataHandler.handle(broker.broker.context, { topics: [A, B, C].map((name) => ({ name, topicId: ZERO_UUID })), allowAutoTopicCreation: false, includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false }, { ...ctx, apiKey: 3, apiVersion: 12 });
    assert.ok(meta !== null);
    const dtp = describeTopicPartitions(broker.broker.context, request([A, B, C], 2000), DEFAULT_MAX_REQUEST_PARTITION_SIZE_LIMIT);
    assert.equal(dtp.topics.length, 3);
    for (const t of dtp.topics) {
      const m: (typeof meta.topics)[number] | undefined = meta.topics.find((x) => x.name === t.name);
      assert.ok(m !== undefined);
      assert.deepEqual([t.errorCode, t.topicId, t.isInternal], [m.errorCode, m.topicId, m.isInternal]);
      assert.deepEqual(
        t.partitions.map(({ eligibleLeaderReplicas, lastKnownElr, ...rest }) => {
          assert.deepEqual([eligibleLeaderReplicas, lastKnownElr], [[], []]);
          return rest;
        }),
        m.partitions,
      );
    }
    const p0 = dtp.topics[0]?.partitions[0];
    assert.deepEqual(p0 && [p0.leaderId, p0.replicaNodes, p0.isrNodes, p0.offlineReplicas], [broker.broker.context.nodeId, [broker.broker.context.nodeId], [broker.broker.context.nodeId], []]);
  });

  test("answers Kafka 4.3.1's captured request with Kafka's bytes (but for the topic id)", async () => {
    const dir = path.join(repoRoot(), 'test', 'golden', 'java-cli');
    const reqPayload = payloadOf([readFileSync(path.join(dir, 'describe-topic-partitions-v0.bin'))]);
    const header = decodeRequestHeader(reqPayload);
    const req = decodeRequestBody(header, reqPayload).body as DescribeTopicPartitionsRequest;
    assert.deepEqual(req.topics.map((t) => t.name), ['golden-java']);
    // Kafka's node id there is 1; this broker's may differ, so compare with it substituted.
    await broker.broker.context.topics.createTopic({ name: 'golden-java', numPartitions: 2 });
    const ours = await describeTp(req);
    const kafka = readFileSync(path.join(dir, 'describe-topic-partitions-v0.response.bin'));
    const api = apiRegistry.get(75);
    assert.ok(api !== undefined);
    const kafkaBody = decodeResponse<DescribeTopicPartitionsResponse>(payloadOf([kafka]), 75, 0).body;
    const node = broker.broker.context.nodeId;
    const asKafka: DescribeTopicPartitionsResponse = {
      ...ours,
      topics: ours.topics.map((t) => ({
        ...t,
        topicId: kafkaBody.topics[0]?.topicId ?? '',
        partitions: t.partitions.map((p) => ({
          ...p,
          leaderId: p.leaderId === node ? 1 : p.leaderId,
          replicaNodes: p.replicaNodes.map((n) => (n === node ? 1 : n)),
          isrNodes: p.isrNodes.map((n) => (n === node ? 1 : n)),
        })),
      })),
    };
    assert.deepEqual(Buffer.concat(encodeResponseMessage(api, 0, header.correlationId, asKafka)), kafka);
  });

  test('ApiVersions advertises DescribeTopicPartitions 0-0', () => {
    assert.deepEqual(broker.broker.context.supportedApiVersions().find((v) => v.apiKey === 75), { apiKey: 75, minVersion: 0, maxVersion: 0 });
  });
});
