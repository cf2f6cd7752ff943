// Topic names at the edges (found by the fuzzer): Kafka's legal names are
// [a-zA-Z0-9._-], 1 to 249 characters, not "." or "..". A 249-character topic
// must be creatable, usable and deletable (its partition directory name is 251
// characters, and the rename-before-delete must stay within NAME_MAX = 255, as
// Kafka's logDeleteDirName truncates); anything else is INVALID_TOPIC_EXCEPTION
// and creates nothing on disk.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { BrokerConnection } from '../../broker/cli/broker-connection.js';
import { apis } from '../../broker/protocol/messages/index.js';
import { ErrorCode } from '../../broker/protocol/errors.js';
import { startSedimentInProcess, type InProcessSediment } from '../support/sediment.js';
import { assertNoBrokerErrors } from './helpers.js';

let broker: InProcessSediment;
let conn: BrokerConnection;

before(async () => {
  broker = await startSedimentInProcess();
  conn = await BrokerConnection.connect('127.0.0.1', broker.port);
});

after(async () => {
  conn?.close();
  await broker?.close();
});

async function create(name: string, numPartitions = 2): Promise<number> {
  const { body } = await conn.send(apis.CreateTopics, () => ({ topics: [{ name, numPartitions, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 30_000, validateOnly: false }));
  return body.topics[0]?.errorCode ?? -1;
}

async function remove(name: string): Promise<number> {
  const { body } = await conn.send(apis.DeleteTopics, () => ({ topics: [], topicNames: [name], timeoutMs: 30_000 }), { max: 5 });
  return body.responses[0]?.errorCode ?? -1;
}

async function listed(name: string): Promise<number> {
  const { body } = await conn.send(apis.Metadata, () => ({ topics: [{ topicId: 'AAAAAAAAAAAAAAAAAAAAAA', name }], allowAutoTopicCreation: false, includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false }));
  return body.topics[0]?.errorCode ?? -1;
}

function dirsOf(name: string): string[] {
  return readdirSync(broker.dataDir).filter((d) => d.startsWith(`${name.slice(0, 200)}`));
}

test('a 249-character topic is created, listed and deleted, leaving no directory behind', async () => {
  const name = 'n'.repeat(249);
  assert.equal(await create(name), ErrorCode.NONE);
  assert.equal(await listed(name), ErrorCode.NONE);
  assert.equal(dirsOf(name).length, 2);
  assert.equal(await remove(name), ErrorCode.NONE, 'deleted');
  assert.equal(await listed(name), ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  assert.deepEqual(dirsOf(name), [], 'no partition or -delete directory left');
  assertNoBrokerErrors(broker.logs);
});

for (const bad of ['', '.', '..', 'a/b', '../escape', 'x'.repeat(250), 'has space', 'ü-ñ', 'a\u0000b']) {
  test(`CreateTopics ${JSON.stringify(bad.length > 20 ? `${bad.slice(0, 5)}...(${bad.length})` : bad)}: INVALID_TOPIC_EXCEPTION, nothing on disk`, async () => {
    const before = readdirSync(broker.dataDir).length;
    assert.equal(await create(bad), ErrorCode.INVALID_TOPIC_EXCEPTION);
    assert.equal(readdirSync(broker.dataDir).length, before);
  });
}
