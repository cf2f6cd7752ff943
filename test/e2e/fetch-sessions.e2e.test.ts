// Incremental fetch sessions (KIP-227) over real sockets, against in-process
// brokers: first by hand (Fetch v12 frames), so each rule is seen on the wire,
// including the long poll of an incremental fetch that names no partition yet
// wakes on an append to one of its session's partitions; then with real
// clients, whose runs must pass and whose use of sessions is read from the
// broker's session cache (the Java client, franz-go and kafka-python 3 use
// sessions; librdkafka and kafkajs always fetch sessionless). The Java compat program
// reads its records in one fetch, so the Java console consumer then reads them
// again 8 KiB per partition at a time: dozens of incremental fetches, every
// offset exactly once and in order; last, it reads a tiered partition from
// offset 0 the same way, across the remote tier into the local one.
//   SEDIMENT_FETCH_SESSION_CLIENTS=java,kafkajs   a subset of the clients
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { BrokerConnection } from '../../broker/cli/broker-connection.js';
import type { FetchSessionCache } from '../../broker/fetch/fetch-session-cache.js';
import { ErrorCode } from '../../broker/protocol/errors.js';
import { apis, type FetchRequest, type FetchResponse } from '../../broker/protocol/messages/index.js';
import { ZERO_UUID } from '../../broker/protocol/reader.js';
import { buildRecordBatch } from '../../broker/protocol/record-batch.js';
import { defaultBaseTimestamp } from '../clients/content.js';
import { clients } from '../compat/clients.js';
import { cliJvmOptions } from '../compat/kafka-cli.js';
import { selectByEnv } from '../support/env-selection.js';
import { KafkaTool } from '../support/kafka-reference.js';
import { kafkaClasspath, repoRoot } from '../support/tools.js';
import { LogLevel, startSedimentInProcess, type InProcessSediment } from '../support/sediment.js';

const TOPIC = 'sessions';
const CLIENT_RECORDS = 20_000;
const PARTITIONS = 3;

function fetchRequest(sessionId: number, sessionEpoch: number, maxWaitMs: number, named: Array<[partition: number, fetchOffset: bigint]>, forgotten: number[] = []): FetchRequest {
  return {
    replicaId: -1,
    maxWaitMs,
    minBytes: 1,
    maxBytes: 1 << 20,
    isolationLevel: 0,
    sessionId,
    sessionEpoch,
    topics: named.length === 0 ? [] : [{ topic: TOPIC, topicId: ZERO_UUID, partitions: named.map(([partition, fetchOffset]) => ({ partition, currentLeaderEpoch: -1, fetchOffset, lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: 1 << 20 })) }],
    forgottenTopicsData: forgotten.length === 0 ? [] : [{ topic: TOPIC, topicId: ZERO_UUID, partitions: forgotten }],
    rackId: '',
  };
}

/** partition -> records bytes, for every partition in the response. */
function answered(res: FetchResponse): Map<number, number> {
  const m = new Map<number, number>();
  for (const t of res.responses) for (const p of t.partitions) m.set(p.partitionIndex, p.records?.length ?? 0);
  return m;
}

async function createTopic(port: number, name: string, partitions: number, configs: Record<string, string> = {}): Promise<void> {
  const conn = await BrokerConnection.connect('127.0.0.1', port);
  try {
    const entries = Object.entries(configs).map(([n, value]) => ({ name: n, value }));
    const { body } = await conn.send(apis.CreateTopics, () => ({ topics: [{ name, numPartitions: partitions, replicationFactor: 1, assignments: [], configs: entries }], timeoutMs: 30_000, validateOnly: false }));
    assert.equal(body.topics[0]?.errorCode, 0);
  } finally {
    conn.close();
  }
}

async function produce(port: number, partition: number, value: string, topic = TOPIC, batches = 1, perBatch = 1): Promise<void> {
  const conn = await BrokerConnection.connect('127.0.0.1', port);
  try {
    for (let b = 0; b < batches; b++) {
      const records = buildRecordBatch({ records: Array.from({ length: perBatch }, () => ({ key: 'k', value })), timestamp: Date.now() });
      const { body } = await conn.send(apis.Produce, () => ({ transactionalId: null, acks: -1, timeoutMs: 10_000, topicData: [{ name: topic, topicId: ZERO_UUID, partitionData: [{ index: partition, records }] }] }), { max: 12 });
      assert.equal(body.responses[0]?.partitionResponses[0]?.errorCode, 0);
    }
  } finally {
    conn.close();
  }
}

describe('fetch sessions on the wire', () => {
  let broker: InProcessSediment;
  let conn: BrokerConnection;
  let cache: FetchSessionCache;

  before(async () => {
    broker = await startSedimentInProcess();
    cache = broker.broker.context.fetchSessions;
    await createTopic(broker.port, TOPIC, PARTITIONS);
    await produce(broker.port, 0, 'first');
    conn = await BrokerConnection.connect('127.0.0.1', broker.port);
  });

  after(async () => {
    conn?.close();
    await broker?.close();
  });

  const send = async (req: FetchRequest): Promise<FetchResponse> => (await conn.send(apis.Fetch, () => req, { min: 12, max: 12 })).body;

  test('full, incremental, long poll over the session, forget, epoch errors, close', async () => {
    const full = await send(fetchRequest(0, 0, 0, [[0, 0n], [1, 0n], [2, 0n]]));
    assert.equal(full.errorCode, 0);
    const id = full.sessionId;
    assert.ok(id > 0, 'epoch 0 opens a session');
    assert.deepEqual([...answered(full).keys()], [0, 1, 2]);
    assert.ok((answered(full).get(0) ?? 0) > 0);
    assert.equal(cache.get(id)?.size, 3);

    // The client moves partition 0 past its record; nothing else is new: an empty answer after MaxWait.
    let started = performance.now();
    const idle = await send(fetchRequest(id, 1, 300, [[0, 1n]]));
    assert.equal(idle.errorCode, 0);
    assert.equal(idle.sessionId, id);
    assert.deepEqual([...answered(idle).keys()], []);
    assert.ok(performance.now() - started >= 250, 'an incremental fetch with nothing new waits MaxWaitMs');

    // A long poll naming no partition waits on all of the session's; an append to partition 2, made
    // once the fetch is parked in the broker (not racing it there), wakes it.
    const waiters = broker.broker.context.waiters;
    let parked = waiters.nextParked();
    started = performance.now();
    const polling = send(fetchRequest(id, 2, 20_000, []));
    const parkedKeys = await Promise.race([parked, polling.then(() => assert.fail('the incremental long poll was answered without parking'))]);
    assert.equal(parkedKeys.length, 3, 'it waits on all three session partitions');
    await produce(broker.port, 2, 'second');
    const woken = await polling;
    assert.ok(performance.now() - started < 10_000, `woken in ${Math.round(performance.now() - started)} ms, not at MaxWait`);
    assert.deepEqual([...answered(woken).keys()], [2]);
    assert.ok((answered(woken).get(2) ?? 0) > 0);
    assert.equal(waiters.pending, 0);

    // Partition 2 forgotten: an append to it no longer wakes the session, nor shows: the fetch runs its full MaxWait.
    parked = waiters.nextParked();
    started = performance.now();
    const forgetting = send(fetchRequest(id, 3, 1000, [], [2]));
    assert.equal((await Promise.race([parked, forgetting.then(() => assert.fail('answered without parking'))])).length, 2);
    await produce(broker.port, 2, 'third');
    assert.deepEqual([...answered(await forgetting).keys()], []);
    assert.ok(performance.now() - started >= 999, `answered after ${Math.round(performance.now() - started)} ms: the append to the forgotten partition woke it`);
    assert.equal(cache.get(id)?.size, 2);

    // Epoch errors leave the session as it is.
    assert.equal((await send(fetchRequest(id, 3, 0, []))).errorCode, ErrorCode.INVALID_FETCH_SESSION_EPOCH);
    assert.equal((await send(fetchRequest(id + 1, 4, 0, []))).errorCode, ErrorCode.FETCH_SESSION_ID_NOT_FOUND);
    assert.equal((await send(fetchRequest(id, 4, 0, []))).errorCode, 0);

    // The session as the metrics endpoint shows it: one session of two partitions, four incremental fetches.
    const text = await (await fetch(`http://127.0.0.1:${broker.broker.http?.port ?? 0}/metrics`)).text();
    const metric = (name: string): number => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1]);
    assert.equal(metric('sediment_fetch_sessions'), 1);
    assert.equal(metric('sediment_fetch_session_partitions'), 2);
    assert.equal(metric('sediment_fetch_session_incremental_fetches_total'), 4);
    assert.equal(metric('sediment_fetch_session_evictions_total'), 0);

    // Epoch -1 closes it; the fetch is answered in full, sessionless.
    const closing = await send(fetchRequest(id, -1, 0, [[0, 0n]]));
    assert.equal(closing.sessionId, 0);
    assert.deepEqual([...answered(closing).keys()], [0]);
    assert.equal(cache.get(id), undefined);
    assert.equal((await send(fetchRequest(id, 5, 0, []))).errorCode, ErrorCode.FETCH_SESSION_ID_NOT_FOUND);
  });
});

describe('max.incremental.fetch.session.cache.slots=0', () => {
  let broker: InProcessSediment;

  before(async () => {
    broker = await startSedimentInProcess({ overrides: { 'max.incremental.fetch.session.cache.slots': '0' } });
    await createTopic(broker.port, TOPIC, PARTITIONS);
  });

  after(async () => {
    await broker?.close();
  });

  test('every fetch is answered sessionless', async () => {
    const conn = await BrokerConnection.connect('127.0.0.1', broker.port);
    try {
      const { body } = await conn.send(apis.Fetch, () => fetchRequest(0, 0, 0, [[0, 0n], [1, 0n]]), { min: 12, max: 12 });
      assert.equal(body.errorCode, 0);
      assert.equal(body.sessionId, 0);
      assert.deepEqual([...answered(body).keys()], [0, 1]);
      assert.equal(broker.broker.context.fetchSessions.size, 0);
    } finally {
      conn.close();
    }
  });
});

/** Whether each client fetches in sessions (librdkafka 2.0 and kafkajs 2.2 send SessionId 0, epoch -1). */
const sessionClients: Record<string, boolean> = { java: true, 'franz-go': true, 'kafka-python': true, 'confluent-python': false, kafkajs: false };
const sessionSpecs = selectByEnv('SEDIMENT_FETCH_SESSION_CLIENTS', clients.filter((c) => c.id in sessionClients));

describe('real clients consume through fetch sessions', () => {
  let broker: InProcessSediment;

  before(async () => {
    broker = await startSedimentInProcess();
  });

  after(async () => {
    await broker?.close();
  });

  for (const spec of sessionSpecs) {
    const usesSessions = sessionClients[spec.id] === true;
    test(`${spec.title}: produce, consume in a group, offsets, lag; ${usesSessions ? 'incremental fetches' : 'sessionless'}`, { timeout: 300_000 }, async () => {
      const cache = broker.broker.context.fetchSessions;
      const before = cache.incrementalFetches;
      const summary = await spec.run({
        bootstrap: broker.bootstrap,
        topic: `fsess-${spec.id}`,
        group: `fsess-${spec.id}-group`,
        count: CLIENT_RECORDS,
        partitions: PARTITIONS,
        codecs: spec.codecs,
        baseTimestamp: defaultBaseTimestamp(),
        timeoutMs: 240_000,
      });
      assert.ok(summary.ok, `${spec.title}: ${summary.errors.join('\n')}`);
      let incremental = cache.incrementalFetches - before;
      if (spec.id === 'java') {
        const offsets = await consoleConsume(broker.bootstrap, `fsess-${spec.id}`, CLIENT_RECORDS);
        let total = 0;
        for (const [p, list] of offsets) {
          total += list.length;
          assert.deepEqual(list, list.map((_, i) => i), `partition ${p}: every offset once, in order`);
        }
        assert.equal(total, CLIENT_RECORDS);
        incremental = cache.incrementalFetches - before;
      }
      if (usesSessions) assert.ok(incremental > 0, `${spec.title} made no incremental fetch`);
      else assert.equal(incremental, 0, `${spec.title} made ${incremental} incremental fetches`);
      console.log(`${spec.title}: ${incremental} incremental fetches`);
      const errors = broker.logs.atLeast(LogLevel.error);
      assert.equal(errors.length, 0, `broker logged errors:\n${errors.slice(0, 5).map((l) => JSON.stringify(l)).join('\n')}`);
    });
  }
});

describe('a Java consumer reading a tiered partition through its fetch session', () => {
  const topic = 'fsess-tiered';
  const batches = 300;
  const perBatch = 10;
  let broker: InProcessSediment;

  before(async () => {
    // The default store: file:// under the log dir. Small segments, copied and deleted locally within a second.
    broker = await startSedimentInProcess({ overrides: { 'remote.log.manager.task.interval.ms': '200', 'log.retention.check.interval.ms': '200' } });
    await createTopic(broker.port, topic, 1, { 'remote.storage.enable': 'true', 'internal.segment.bytes': '32768', 'local.retention.ms': '100', 'local.retention.bytes': '65536' });
    await produce(broker.port, 0, 'v'.repeat(100), topic, batches, perBatch);
  });

  after(async () => {
    await broker?.close();
  });

  test('every offset from the remote tier then the local one, once and in order, in incremental fetches', { timeout: 240_000 }, async () => {
    const partition = broker.broker.context.topics.partition(topic, 0);
    assert.ok(partition !== undefined);
    const deadline = Date.now() + 60_000;
    // Tiering runs on its own timer: poll until the early segments are remote-only.
    while (partition.localLogStartOffset < BigInt(batches * perBatch) / 2n) {
      assert.ok(Date.now() < deadline, `local log start still ${partition.localLogStartOffset}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.equal(partition.logStartOffset, 0n);
    const cache = broker.broker.context.fetchSessions;
    const before = cache.incrementalFetches;
    const offsets = await consoleConsume(broker.bootstrap, topic, batches * perBatch);
    assert.deepEqual([...offsets.keys()], [0]);
    const list = offsets.get(0) ?? [];
    assert.equal(list.length, batches * perBatch);
    assert.ok(list.every((o, i) => o === i), 'every offset once, in order');
    assert.ok(cache.incrementalFetches - before > 10, `${cache.incrementalFetches - before} incremental fetches`);
    const text = await (await fetch(`http://127.0.0.1:${broker.broker.http?.port ?? 0}/metrics`)).text();
    const remoteReads = Number(/^sediment_remote_fetch_requests_total\{topic="fsess-tiered"\} (\S+)$/m.exec(text)?.[1] ?? 0);
    assert.ok(remoteReads > 0, 'reads were served by the remote tier');
    assert.equal(broker.logs.atLeast(LogLevel.error).length, 0);
  });
});

/** kafka-console-consumer over `topic` from the beginning, 8 KiB per partition per fetch: partition -> offsets in order. */
function consoleConsume(bootstrap: string, topic: string, count: number): Promise<Map<number, number[]>> {
  const log4j = path.join(repoRoot(), 'test', 'compat', 'java', 'log4j2.properties');
  const args = [
    ...cliJvmOptions, `-Dlog4j2.configurationFile=${log4j}`, '-cp', kafkaClasspath(), KafkaTool.consoleConsumer,
    '--bootstrap-server', bootstrap, '--topic', topic, '--group', `${topic}-small-fetches`, '--from-beginning',
    '--max-messages', String(count), '--timeout-ms', '60000',
    '--consumer-property', 'max.partition.fetch.bytes=8192', '--consumer-property', 'fetch.max.bytes=65536',
    '--formatter-property', 'print.partition=true', '--formatter-property', 'print.offset=true', '--formatter-property', 'print.value=false',
  ];
  const child = spawn('java', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout.on('data', (b: Buffer) => out.push(b));
  child.stderr.on('data', (b: Buffer) => err.push(b));
  const timer = setTimeout(() => child.kill('SIGKILL'), 180_000);
  return new Promise((resolve, reject) => {
    child.on('error', (e) => reject(new Error(`cannot run java: ${e.message}`)));
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code !== 0) return reject(new Error(`console consumer exit ${code}: ${Buffer.concat(err).toString('utf8').slice(-2000)}`));
      const offsets = new Map<number, number[]>();
      for (const line of Buffer.concat(out).toString('utf8').split('\n')) {
        const m = /^Partition:(\d+)\tOffset:(\d+)/.exec(line);
        if (m === null) continue;
        const p = Number(m[1]);
        offsets.set(p, [...(offsets.get(p) ?? []), Number(m[2])]);
      }
      resolve(offsets);
    });
  });
}
