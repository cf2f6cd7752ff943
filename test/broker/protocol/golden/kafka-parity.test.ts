// Sediment against Apache Kafka 4.3.1's golden answers (test/golden/kafka-responses,
// captured by test/clients/capture-golden.ts). Each captured request is sent to an
// in-process Sediment holding what the answer depends on (the same topics, with
// their partition counts; the records a Produce answer counts), and Sediment's
// answer must equal Kafka's once what legitimately differs is normalised: the
// cluster id, hosts and ports, topic ids (compared through the topic names; a
// request naming topics by id has Kafka's ids replaced by Sediment's), producer
// ids, throttle time, and the order of lists a client reads as sets (topics,
// partitions, groups, configs: Kafka answers in hash order). Node ids are not
// normalised: the broker runs as node 1, as Kafka's did.
//
// ApiVersions is compared as a difference: every API Kafka 4.3.1 advertises is
// served by Sediment with the same range, or is listed in test/compat/protocol-versions.ts
// (the "Kafka 4.3" sections of docs/compatibility.md) with what Sediment does instead.
//
// The other captures record a moment of the capture run's history (member ids and
// epochs, committed offsets, the records a fetch returns, a share-partition's
// in-flight state): `historyBound` names them and says why; golden.test.ts still
// decodes and re-encodes them byte for byte.
import assert from 'node:assert/strict';
import net from 'node:net';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startSedimentInProcess, type InProcessSediment } from '../../../support/sediment.js';
import { repoRoot } from '../../../support/tools.js';
import { decodeRequestBody, decodeRequestHeader, decodeResponse, encodeRequest, encodeRequestMessage, payloadOf } from '../../../../broker/protocol/frame.js';
import { apiRegistry, apis, type ApiDescriptor } from '../../../../broker/protocol/messages/index.js';
import type { ApiVersionsResponse } from '../../../../broker/protocol/messages/api-versions.js';
import type { MetadataResponse } from '../../../../broker/protocol/messages/metadata.js';
import { kafka43Differences, kafka43NotAdvertised } from '../../../compat/protocol-versions.js';

const dir = path.join(repoRoot(), 'test', 'golden', 'kafka-responses');

interface IndexEntry {
  readonly file: string;
  readonly requestFile: string;
  readonly apiKey: number;
  readonly api: string;
  readonly apiVersion: number;
  readonly client: string;
  readonly broker: string;
}

const index = JSON.parse(readFileSync(path.join(dir, 'index.json'), 'utf8')) as IndexEntry[];

interface Golden {
  readonly entry: IndexEntry;
  readonly api: ApiDescriptor;
  readonly requestFrame: Buffer;
  readonly request: Record<string, unknown>;
  readonly response: Record<string, unknown>;
}

function golden(file: string): Golden {
  const entry = index.find((e) => e.file === file);
  assert.ok(entry !== undefined, `${file} is in index.json`);
  const api = apiRegistry.get(entry.apiKey);
  assert.ok(api !== undefined);
  const requestFrame = readFileSync(path.join(dir, entry.requestFile));
  const rq = payloadOf([requestFrame]);
  const request = decodeRequestBody(decodeRequestHeader(rq), rq).body as Record<string, unknown>;
  const response = decodeResponse(payloadOf([readFileSync(path.join(dir, entry.file))]), api, entry.apiVersion).body as Record<string, unknown>;
  return { entry, api, requestFrame, request, response };
}

/** Captures whose answer depends on the capture run's history, with why. */
const historyBound: Readonly<Record<string, string>> = {
  'fetch-v11.bin': 'the records every produce of the run left (client timestamps, several producers)',
  'fetch-v18.bin': 'the records every produce of the run left, and a fetch session id',
  'list-offsets-v2.bin': 'offsets by the timestamps of the records the run produced',
  'list-offsets-v11.bin': 'the end offsets the run left',
  'offset-commit-v5.bin': "a live classic member's id and generation",
  'offset-commit-v7.bin': "a live classic member's id and generation",
  'offset-commit-v9.bin': "a live classic member's id and generation",
  'offset-commit-v10.bin': "a live consumer-group member's id and epoch",
  'offset-fetch-v4.bin': 'the offsets the run committed',
  'offset-fetch-v7.bin': 'the offsets the run committed',
  'offset-fetch-v9.bin': 'the offsets the run committed',
  'offset-fetch-v10.bin': "a live consumer-group member's id and epoch",
  'join-group-v5.bin': 'member ids the broker generated',
  'join-group-v9.bin': 'member ids the broker generated',
  'sync-group-v3.bin': 'a live member and generation',
  'sync-group-v5.bin': 'a live member and generation',
  'heartbeat-v3.bin': 'a live member and generation',
  'leave-group-v1.bin': 'a live member',
  'leave-group-v3.bin': 'a live member',
  'leave-group-v5.bin': 'a live member',
  'list-groups-v5.bin': 'every group the run left',
  'describe-groups-v6.bin': 'a classic group the run left Empty',
  'consumer-group-heartbeat-v1.bin': 'group and member epochs after the run so far',
  'consumer-group-describe-v1.bin': 'group and assignment epochs after the run',
  'share-group-heartbeat-v1.bin': 'a live share member and its epoch',
  'share-group-describe-v1.bin': 'group and assignment epochs after the run',
  'share-fetch-v2.bin': "a live share member's session and the records the run produced",
  'share-acknowledge-v2.bin': "a live share member's session and acquired records",
  'describe-share-group-offsets-v1.bin': 'the share-partition state the run left',
  'describe-configs-v4.bin': "every broker config and its value: Sediment's broker configs are not Kafka's (docs/configuration.md)",
  'delete-records-v2.bin': 'the records the console producer placed in partition 0 by key',
};

// ---- normalisation ----------------------------------------------------------

/** Fields a client reads lists by (Kafka answers maps in hash order). */
const identity = ['name', 'topic', 'topicId', 'groupId', 'key', 'resourceName', 'partitionIndex', 'index', 'partition', 'apiKey', 'brokerId', 'nodeId'];

function sortKey(v: unknown): string {
  if (v === null || typeof v !== 'object') return '';
  const o = v as Record<string, unknown>;
  return JSON.stringify(identity.map((k) => (typeof o[k] === 'bigint' ? String(o[k]) : (o[k] ?? null))));
}

const ZERO_UUID = 'AAAAAAAAAAAAAAAAAAAAAA';

/** Kafka's and Sediment's topic ids, both to `id(<topic name>)`. */
const idNames = new Map<string, string>();

function normalise(v: unknown): unknown {
  if (Array.isArray(v)) {
    const items = v.map(normalise);
    if (items.every((x) => x !== null && typeof x === 'object' && !Buffer.isBuffer(x))) items.sort((a, b) => (sortKey(a) < sortKey(b) ? -1 : sortKey(a) > sortKey(b) ? 1 : 0));
    return items;
  }
  if (v === null || typeof v !== 'object' || Buffer.isBuffer(v)) return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) {
    if (k === 'clusterId' && typeof x === 'string') out[k] = '<cluster id>';
    else if (k === 'host' && typeof x === 'string' && x !== '') out[k] = '<host>';
    else if (k === 'port' && typeof x === 'number' && x > 0) out[k] = '<port>';
    else if (k === 'throttleTimeMs') out[k] = 0;
    else if (k === 'topicId' && typeof x === 'string' && x !== ZERO_UUID) out[k] = idNames.get(x) ?? `<unknown topic id ${x}>`;
    else if (k === 'producerId' && typeof x === 'bigint' && x >= 0n) out[k] = '<producer id>';
    else out[k] = normalise(x);
  }
  return out;
}

/** Replaces every topicId by `map`'s (Kafka's ids in a request become Sediment's). */
function mapTopicIds(v: unknown, map: ReadonlyMap<string, string>): unknown {
  if (Array.isArray(v)) return v.map((x) => mapTopicIds(x, map));
  if (v === null || typeof v !== 'object' || Buffer.isBuffer(v)) return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) out[k] = k === 'topicId' && typeof x === 'string' ? (map.get(x) ?? x) : mapTopicIds(x, map);
  return out;
}

// ---- the broker and one connection ------------------------------------------

let broker: InProcessSediment;
let socket: net.Socket;
let pending: Buffer = Buffer.alloc(0);
let waiting: ((frame: Buffer) => void) | null = null;
const kafkaToSediment = new Map<string, string>();

function onData(chunk: Buffer): void {
  pending = Buffer.concat([pending, chunk]);
  while (pending.length >= 4 && pending.length >= 4 + pending.readInt32BE(0)) {
    const size = pending.readInt32BE(0);
    const frame = pending.subarray(0, 4 + size);
    pending = pending.subarray(4 + size);
    const w = waiting;
    waiting = null;
    assert.ok(w !== null, 'a response nobody waits for');
    w(Buffer.from(frame));
  }
}

function roundTrip(frame: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const onClose = (): void => reject(new Error('Sediment closed the connection'));
    socket.once('close', onClose);
    waiting = (f) => {
      socket.off('close', onClose);
      resolve(f);
    };
    socket.write(frame);
  });
}

/** Sends a captured request (topic ids mapped to Sediment's) and decodes the answer. */
async function ask(g: Golden): Promise<Record<string, unknown>> {
  const rq = payloadOf([g.requestFrame]);
  const h = decodeRequestHeader(rq);
  const body = mapTopicIds(g.request, kafkaToSediment);
  const frame = Buffer.concat(encodeRequest(h.apiKey, h.apiVersion, h.correlationId, h.clientId, (w) => g.api.encodeRequest(w, h.apiVersion, body), { headerTaggedFields: h.taggedFields }));
  const answer = await roundTrip(frame);
  const { header, body: res } = decodeResponse(payloadOf([answer]), g.api, h.apiVersion);
  assert.equal(header.correlationId, h.correlationId);
  return res as Record<string, unknown>;
}

let correlation = 1_000_000;
async function call<Res>(api: ApiDescriptor<unknown, Res>, version: number, message: unknown): Promise<Res> {
  const c = correlation++;
  const answer = await roundTrip(Buffer.concat(encodeRequestMessage(api as ApiDescriptor<unknown, unknown>, version, c, 'kafka-parity', message)));
  return decodeResponse(payloadOf([answer]), api, version).body;
}

/** Kafka's topics at the end of the run (Metadata v13, all topics): names, partition counts, ids. */
const kafkaTopics = (golden('metadata-v13.bin').response as unknown as MetadataResponse).topics;

/** Pairs Kafka's topic id of each topic Sediment has now with Sediment's. */
function learnIds(): void {
  for (const t of kafkaTopics) {
    const name = t.name as string;
    idNames.set(t.topicId, `id(${name})`);
    const ours = broker.broker.context.topics.store.get(name)?.topicId;
    if (ours !== undefined) {
      idNames.set(ours, `id(${name})`);
      kafkaToSediment.set(t.topicId, ours);
    }
  }
}

async function expectSame(file: string, adjust: (ours: Record<string, unknown>, kafka: Record<string, unknown>) => void = () => undefined): Promise<void> {
  const g = golden(file);
  learnIds();
  const ours = await ask(g);
  learnIds();
  const kafka = structuredClone(g.response);
  adjust(ours, kafka);
  assert.deepEqual(normalise(ours), normalise(kafka), `${file}: Sediment's answer (actual) differs from Kafka 4.3.1's (expected)`);
}

/**
 * The reference broker's server.properties (test/support/kafka-reference.ts) where
 * Sediment has the setting; and tiered storage off, Kafka's default (Sediment's is on,
 * which makes new topics remote.storage.enable=true: docs/configuration.md).
 */
const asTheReference: Readonly<Record<string, string>> = {
  'node.id': '1',
  'num.partitions': '1',
  'offsets.topic.replication.factor': '1',
  'share.coordinator.state.topic.replication.factor': '1',
  'share.coordinator.state.topic.min.isr': '1',
  'transaction.state.log.replication.factor': '1',
  'transaction.state.log.min.isr': '1',
  'group.initial.rebalance.delay.ms': '0',
  'log.retention.hours': '168',
  'log.segment.bytes': '1073741824',
  'remote.log.storage.system.enable': 'false',
};

before(async () => {
  broker = await startSedimentInProcess({ overrides: asTheReference });
  socket = net.connect(broker.port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  socket.on('data', onData);
});

after(async () => {
  socket?.destroy();
  await broker?.close();
});

const comparedFiles: string[] = [];
function parity(file: string, body: () => Promise<void>): void {
  comparedFiles.push(file);
  test(`${file}: answers as Kafka 4.3.1 does`, body);
}

describe('ApiVersions', () => {
  for (const file of ['api-versions-v2.bin', 'api-versions-v3.bin', 'api-versions-v4.bin']) {
    parity(file, async () => {
      const g = golden(file);
      const ours = (await ask(g)) as unknown as ApiVersionsResponse;
      const kafka = g.response as unknown as ApiVersionsResponse;
      assert.equal(ours.errorCode, kafka.errorCode);
      const mine = new Map(ours.apiKeys.map((k) => [k.apiKey, `${k.minVersion}-${k.maxVersion}`]));
      const theirs = new Map(kafka.apiKeys.map((k) => [k.apiKey, `${k.minVersion}-${k.maxVersion}`]));
      for (const [key, range] of theirs) {
        const name = apiRegistry.get(key)?.name ?? `api ${key}`;
        const notServed = kafka43NotAdvertised.find((n) => n.apiKey === key);
        const differs = kafka43Differences.find((d) => d.apiKey === key);
        if (notServed !== undefined) {
          assert.equal(mine.get(key), undefined, `${name} (${key}) is listed as not served, yet Sediment advertises ${mine.get(key)}`);
        } else if (differs !== undefined) {
          assert.deepEqual([range, mine.get(key)], [differs.kafka, differs.sediment], `${name} (${key}): the documented difference`);
        } else {
          assert.equal(mine.get(key), range, `${name} (${key}): Kafka 4.3.1 advertises ${range}; list a difference in test/compat/protocol-versions.ts if it is meant`);
        }
      }
      for (const n of kafka43NotAdvertised) assert.ok(theirs.has(n.apiKey), `${n.name} (${n.apiKey}) is listed as not served but Kafka 4.3.1 does not advertise it either`);
      for (const [key, range] of mine) assert.ok(theirs.has(key) || kafka43Differences.some((d) => d.apiKey === key && d.kafka === '-'), `Sediment advertises ${apiRegistry.get(key)?.name} (${key}) ${range}, Kafka 4.3.1 does not`);
      // Feature flags (KIP-584): Kafka finalizes metadata.version, transaction.version, group.version,
      // share.version...; Sediment advertises none (the listed differences say what each would change).
      if (g.entry.apiVersion >= 3) assert.deepEqual([ours.supportedFeatures, ours.finalizedFeatures], [[], []]);
    });
  }
});

describe('topics', () => {
  // On a fresh broker, as in the capture: each creates a topic of its own.
  parity('create-topics-v3.bin', () => expectSame('create-topics-v3.bin'));
  parity('create-topics-v4.bin', () => expectSame('create-topics-v4.bin'));
  parity('create-topics-v7.bin', async () => {
    await expectSame('create-topics-v7.bin', (ours, kafka) => {
      // v5+ lists the new topic's configs: compare the names and values both brokers have; the
      // names only one of them has are recorded in docs/compatibility.md (topic configs).
      const oursT = (ours['topics'] as Array<{ configs: Array<{ name: string }> }>)[0];
      const kafkaT = (kafka['topics'] as Array<{ configs: Array<{ name: string }> }>)[0];
      assert.ok(oursT !== undefined && kafkaT !== undefined);
      const both = new Set(oursT.configs.map((c) => c.name).filter((n) => kafkaT.configs.some((c) => c.name === n)));
      oursT.configs = oursT.configs.filter((c) => both.has(c.name));
      kafkaT.configs = kafkaT.configs.filter((c) => both.has(c.name));
      // Kafka 4.3's storage format writes min.insync.replicas as a cluster-wide dynamic default
      // (ELR, KIP-966: source DYNAMIC_DEFAULT_BROKER_CONFIG, 3); Sediment's is its built-in default (5).
      const minIsr = kafkaT.configs.find((c) => c.name === 'min.insync.replicas') as { configSource: number } | undefined;
      if (minIsr !== undefined) minIsr.configSource = 5;
    });
  });

  test('the other topics of the run exist, with their partition counts', async () => {
    for (const t of kafkaTopics) {
      const name = t.name as string;
      if (!name.startsWith('__') && broker.broker.context.topics.store.get(name) === undefined) {
        await broker.broker.context.topics.createTopic({ name, numPartitions: t.partitions.length });
      }
    }
    // The internal topics come with the coordinators: a group coordinator lookup creates
    // __consumer_offsets, the first share-group state written __share_group_state.
    const gc = await call(apis.FindCoordinator, 6, { key: '', keyType: 0, coordinatorKeys: ['kafka-parity'] });
    assert.equal(gc.coordinators[0]?.errorCode, 0);
    const golden = broker.broker.context.topics.store.get('golden-cli');
    assert.ok(golden !== undefined);
    const sc = await call(apis.InitializeShareGroupState, 0, { groupId: 'kafka-parity', topics: [{ topicId: golden.topicId, partitions: [{ partition: 0, stateEpoch: 0, startOffset: -1n }] }] });
    assert.equal(sc.results[0]?.partitions[0]?.errorCode, 0);
    for (const t of kafkaTopics) {
      const ours = broker.broker.context.topics.store.get(t.name as string);
      assert.equal(ours?.partitionCount, t.partitions.length, `${t.name} partitions`);
    }
  });

  parity('produce-v7.bin', () => expectSame('produce-v7.bin'));
  parity('produce-v13.bin', () => expectSame('produce-v13.bin'));
  parity('list-offsets-v3.bin', () => expectSame('list-offsets-v3.bin'));
  for (const file of ['metadata-v4.bin', 'metadata-v6.bin', 'metadata-v13.bin']) {
    parity(file, () =>
      expectSame(file, (ours, kafka) => {
        // An all-topics request lists the topics of that moment of the run; compare those.
        const names = new Set((kafka['topics'] as Array<{ name: string }>).map((t) => t.name));
        ours['topics'] = (ours['topics'] as Array<{ name: string }>).filter((t) => names.has(t.name));
      }),
    );
  }
  parity('describe-topic-partitions-v0.bin', () => expectSame('describe-topic-partitions-v0.bin'));
  parity('list-partition-reassignments-v0.bin', () => expectSame('list-partition-reassignments-v0.bin'));
});

describe('cluster, coordinators, producer ids, group configs', () => {
  parity('describe-cluster-v2.bin', () => expectSame('describe-cluster-v2.bin'));
  parity('find-coordinator-v2.bin', () => expectSame('find-coordinator-v2.bin'));
  parity('find-coordinator-v6.bin', () => expectSame('find-coordinator-v6.bin'));
  parity('init-producer-id-v1.bin', () => expectSame('init-producer-id-v1.bin'));
  parity('init-producer-id-v4.bin', () => expectSame('init-producer-id-v4.bin'));
  parity('init-producer-id-v5.bin', () => expectSame('init-producer-id-v5.bin'));
  parity('incremental-alter-configs-v1.bin', () => expectSame('incremental-alter-configs-v1.bin'));
});

test('every captured answer is compared here or named as bound to the run', () => {
  const compared = new Set(comparedFiles);
  for (const e of index) assert.ok(compared.has(e.file) || historyBound[e.file] !== undefined, `${e.file}: neither compared nor in historyBound`);
  for (const f of Object.keys(historyBound)) assert.ok(index.some((e) => e.file === f), `${f} in historyBound is not captured`);
  for (const e of index) assert.equal(e.broker, 'Apache Kafka 4.3.1', e.file);
});
