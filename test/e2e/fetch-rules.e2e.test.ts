// Fetch long-poll rules that concern the whole broker (found by the fuzzer):
// a Fetch naming no partitions is answered at once (Kafka: ReplicaManager
// responds immediately when there is nothing to fetch), and no waiting Fetch
// may hold up other connections.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { BrokerConnection } from '../../broker/cli/broker-connection.js';
import { ZERO_UUID } from '../../broker/protocol/reader.js';
import { apis, type FetchRequest } from '../../broker/protocol/messages/index.js';
import { startSedimentInProcess, type InProcessSediment } from '../support/sediment.js';

let broker: InProcessSediment;

before(async () => {
  broker = await startSedimentInProcess();
  const conn = await BrokerConnection.connect('127.0.0.1', broker.port);
  try {
    const { body } = await conn.send(apis.CreateTopics, () => ({ topics: [{ name: 'waiting', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 30_000, validateOnly: false }));
    assert.equal(body.topics[0]?.errorCode, 0);
  } finally {
    conn.close();
  }
});

after(async () => {
  await broker?.close();
});

function fetchRequest(topics: FetchRequest['topics'], maxWaitMs: number): FetchRequest {
  return { replicaId: -1, maxWaitMs, minBytes: 1, maxBytes: 1 << 20, isolationLevel: 0, sessionId: 0, sessionEpoch: -1, topics, forgottenTopicsData: [], rackId: '' };
}

/** Round-trip time of an ApiVersions-negotiated Metadata request on a fresh connection. */
async function metadataLatency(): Promise<number> {
  const started = performance.now();
  const conn = await BrokerConnection.connect('127.0.0.1', broker.port, { timeoutMs: 20_000 });
  try {
    await conn.send(apis.Metadata, () => ({ topics: null, allowAutoTopicCreation: false, includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false }));
  } finally {
    conn.close();
  }
  return performance.now() - started;
}

const nothingToFetch: Array<[string, () => FetchRequest['topics']]> = [
  ['no topics', () => []],
  ['a topic with no partitions', () => [{ topic: 'waiting', topicId: ZERO_UUID, partitions: [] }]],
];

for (const [label, topics] of nothingToFetch) {
  test(`a Fetch with ${label} and MaxWaitMs 10 s is answered at once, and others are served meanwhile`, async () => {
    const conn = await BrokerConnection.connect('127.0.0.1', broker.port);
    try {
      const started = performance.now();
      const fetching = conn.send(apis.Fetch, () => fetchRequest(topics(), 10_000), { max: 12 });
      const other = await metadataLatency();
      assert.ok(other < 5000, `another connection was served in ${Math.round(other)} ms`);
      const { body } = await fetching;
      assert.equal(body.errorCode, 0);
      assert.ok(performance.now() - started < 5000, `answered in ${Math.round(performance.now() - started)} ms`);
    } finally {
      conn.close();
    }
  });
}

test('a long-polling Fetch on an idle partition waits its MaxWaitMs, and does not hold up other connections meanwhile', async () => {
  const maxWaitMs = 3000;
  const conn = await BrokerConnection.connect('127.0.0.1', broker.port);
  try {
    const parked = broker.broker.context.waiters.nextParked();
    const started = performance.now();
    let answeredAfter: number | null = null;
    const fetching = conn
      .send(apis.Fetch, () => fetchRequest([{ topic: 'waiting', topicId: ZERO_UUID, partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: 0n, lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: 1 << 20 }] }], maxWaitMs), { max: 12 })
      .then((r) => {
        answeredAfter = performance.now() - started;
        return r;
      });
    // The fetch must park in the broker; one answered without waiting fails here rather than hanging.
    await Promise.race([parked, fetching.then(() => assert.fail(`answered after ${Math.round(answeredAfter ?? 0)} ms without waiting`))]);
    const other = await metadataLatency();
    assert.ok(other < 1000, `another connection was served in ${Math.round(other)} ms during the long poll`);
    assert.equal(answeredAfter, null, 'the long poll is still waiting when the other connection has its answer');
    const { body } = await fetching;
    assert.equal(body.responses[0]?.partitions[0]?.errorCode, 0);
    assert.equal(body.responses[0]?.partitions[0]?.records?.length ?? 0, 0);
    const waited = answeredAfter ?? 0;
    // The broker's timer starts after the request left here, so the wait is at least MaxWaitMs (1 ms of timer rounding allowed).
    assert.ok(waited >= maxWaitMs - 1, `answered after ${Math.round(waited)} ms, before MaxWaitMs ${maxWaitMs}`);
    assert.ok(waited < maxWaitMs + 5000, `answered after ${Math.round(waited)} ms, long past MaxWaitMs ${maxWaitMs}`);
  } finally {
    conn.close();
  }
});
