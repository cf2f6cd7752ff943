// Sediment against Apache Kafka 4.3.1's golden answers (test/golden/kafka-responses,
// captured by test/clients/capture-golden.ts). Each captured request is sent, on one
// connection, to an in-process Sediment configured as the reference broker was and
// holding what the answer depends on: the same topics with their partition counts,
// the records the answer counts, the groups as each client went through them (a
// classic member admitted with MEMBER_ID_REQUIRED, its rejoin, sync, commits, leave;
// the KIP-848 and share members' joins). Sediment's answer must equal Kafka's once what
// legitimately differs is normalised: the cluster id, hosts and ports, topic ids and
// generated member ids (compared through names: a request's Kafka ids are replaced by
// Sediment's), producer ids, throttle time, and the order of lists a client reads as
// sets (Kafka answers maps in hash order). Node ids are not normalised: the broker
// runs as node 1, as Kafka's did. The differences that remain are named where they
// are adjusted (NEW_GROUP_EPOCH_LEAD, the topic config list) and listed in
// docs/compatibility.md ("Answers compared with Kafka 4.3.1").
//
// ApiVersions is compared as a difference: every API Kafka 4.3.1 advertises is
// served by Sediment with the same range, or is listed in test/compat/protocol-versions.ts
// (the "Kafka 4.3" sections of docs/compatibility.md).
//
// The other captures record a moment of the capture run's history (the records of
// several producers, live member epochs, a share-partition's in-flight state):
// `historyBound` names them and says why; golden.test.ts still decodes and re-encodes
// them byte for byte.
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
import type { JoinGroupRequest } from '../../../../broker/protocol/messages/join-group.js';
import type { ListOffsetsRequest } from '../../../../broker/protocol/messages/list-offsets.js';
import { ErrorCode } from '../../../../broker/protocol/errors.js';
import { assignBaseOffset, buildRecordBatch, readBatchHeader } from '../../../../broker/protocol/record-batch.js';
import { recordsBuffer, type Records } from '../../../../broker/protocol/record-parts.js';
import type { ShareFetchResponse } from '../../../../broker/protocol/messages/share-fetch.js';
import type { ShareAcknowledgeRequest } from '../../../../broker/protocol/messages/share-acknowledge.js';
import type { FetchResponse } from '../../../../broker/protocol/messages/fetch.js';
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
  'describe-share-group-offsets-v1.bin': 'the share-partition state the run left',
  'describe-configs-v4.bin': "every broker config and its value: Sediment's broker configs are not Kafka's (docs/configuration.md)",
};

/**
 * Kafka 4.3.1 starts a new consumer group one epoch further than Sediment: its first
 * member joins at epoch 2 (Sediment: 1); every later change is one more on both
 * (observed on the real broker with two console consumers: 2, then 3 for the second
 * member). Epochs are opaque to clients, which only echo them; docs/compatibility.md
 * lists the difference.
 */
const NEW_GROUP_EPOCH_LEAD = 1;

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
/** Kafka's and Sediment's generated member ids, both to `member(<Kafka's id>)`. */
const memberNames = new Map<string, string>();
const kafkaToSedimentMember = new Map<string, string>();

function normalise(v: unknown): unknown {
  if (Buffer.isBuffer(v)) return `<bytes ${v.toString('hex')}>`;
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
    else if (k === 'sessionId' && typeof x === 'number' && x !== 0) out[k] = '<fetch session id>';
    else if ((k === 'memberId' || k === 'leader') && typeof x === 'string' && memberNames.has(x)) out[k] = memberNames.get(x);
    else out[k] = normalise(x);
  }
  return out;
}

/** Replaces Kafka's topic and member ids in a request by Sediment's. */
function toSediment(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(toSediment);
  if (v === null || typeof v !== 'object' || Buffer.isBuffer(v)) return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) {
    if (k === 'topicId' && typeof x === 'string') out[k] = kafkaToSediment.get(x) ?? x;
    else if (k === 'memberId' && typeof x === 'string') out[k] = kafkaToSedimentMember.get(x) ?? x;
    else out[k] = toSediment(x);
  }
  return out;
}

// ---- the broker and one connection ------------------------------------------

let broker: InProcessSediment;
let socket: net.Socket;
// One connection, one request at a time, as the captures were answered.
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
async function ask(g: Golden, rewrite: (req: Record<string, unknown>) => void = () => undefined): Promise<Record<string, unknown>> {
  const rq = payloadOf([g.requestFrame]);
  const h = decodeRequestHeader(rq);
  const body = toSediment(g.request) as Record<string, unknown>;
  rewrite(body);
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

async function expectSame(
  file: string,
  adjust: (ours: Record<string, unknown>, kafka: Record<string, unknown>) => void = () => undefined,
  rewrite?: (req: Record<string, unknown>) => void,
): Promise<void> {
  const g = golden(file);
  learnIds();
  const ours = await ask(g, rewrite);
  learnIds();
  const kafka = g.response; // decoded afresh by golden(): ours to adjust
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
      // v5+ lists the new topic's configs. One name only Sediment lists: message.downconversion.enable,
      // which Kafka 4.0 removed and Sediment still accepts (docs/configuration.md); the rest must agree.
      const oursT = (ours['topics'] as Array<{ configs: Array<{ name: string }> }>)[0];
      const kafkaT = (kafka['topics'] as Array<{ configs: Array<{ name: string }> }>)[0];
      assert.ok(oursT !== undefined && kafkaT !== undefined);
      const both = new Set(oursT.configs.map((c) => c.name).filter((n) => kafkaT.configs.some((c) => c.name === n)));
      assert.deepEqual(oursT.configs.map((c) => c.name).filter((n) => !both.has(n)), ['message.downconversion.enable'], 'topic configs only Sediment lists');
      assert.deepEqual(kafkaT.configs.map((c) => c.name).filter((n) => !both.has(n)), [], 'topic configs only Kafka 4.3.1 lists');
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

/** Appends the batches of a Kafka answer that the partition does not hold yet (by offset), as a producer sends them. */
async function appendAsKafkaHas(topic: string, partition: number, records: Records | null): Promise<void> {
  const log = broker.broker.context.topics.partition(topic, partition);
  assert.ok(log !== undefined, `${topic}-${partition}`);
  const bytes = records === null ? Buffer.alloc(0) : recordsBuffer(records);
  for (let pos = 0; pos < bytes.length; ) {
    const h = readBatchHeader(bytes, pos);
    const size = h.batchLength + 12;
    if (h.baseOffset >= log.logEndOffset) {
      // Base offset 0 (outside the CRC), as a producer sends it: the broker assigns it.
      const batch = Buffer.from(bytes.subarray(pos, pos + size));
      assignBaseOffset(batch, 0, 0n);
      assert.equal((await log.append(batch)).baseOffset, h.baseOffset);
    }
    pos += size;
  }
}

describe('records: fetches, offsets by time and at the end', () => {
  // What the run's producers left, rebuilt: confluent-kafka-python's 40 records in
  // golden-python-group (record i in partition i % 3, CreateTime base + i, the base being
  // the time ListOffsets v2 asks for), and the console producer's 18 records in golden-cli
  // partition 0 (the keys murmur2 placed there).
  test('the records the answers count', async () => {
    const base = Number((golden('list-offsets-v2.bin').request as unknown as ListOffsetsRequest).topics[0]?.partitions[0]?.timestamp);
    for (let p = 0; p < 3; p++) {
      const log = broker.broker.context.topics.partition('golden-python-group', p);
      assert.ok(log !== undefined);
      const records = [];
      for (let i = p; i < 40; i += 3) records.push({ key: Buffer.from(`k-${i}`), value: Buffer.from(`v-${i}`), timestamp: base + i });
      await log.append(buildRecordBatch({ records }));
    }
    // golden-cli partition 0: the console producer's batches, as the share consumer received them.
    const shareFetch = golden('share-fetch-v2.bin').response as unknown as ShareFetchResponse;
    await appendAsKafkaHas('golden-cli', 0, shareFetch.responses[0]?.partitions.find((p) => p.partitionIndex === 0)?.records ?? null);
  });
  // A fetch from offset 0 returns every batch the run's producers wrote: the batches Kafka
  // returned are appended as they are (the first of each partition is there already, from
  // the replayed Produce), so Sediment holds the same bytes at the same offsets.
  for (const file of ['fetch-v11.bin', 'fetch-v18.bin']) {
    parity(file, async () => {
      const kafka = golden(file).response as unknown as FetchResponse;
      for (const t of kafka.responses) {
        const name = t.topic !== '' ? t.topic : (idNames.get(t.topicId) ?? '').replace(/^id\((.*)\)$/, '$1');
        for (const p of t.partitions) await appendAsKafkaHas(name, p.partitionIndex, p.records);
      }
      await expectSame(file);
    });
  }
  parity('list-offsets-v2.bin', () => expectSame('list-offsets-v2.bin'));
  parity('list-offsets-v11.bin', () => expectSame('list-offsets-v11.bin'));
});

/**
 * Admits the member of a captured rejoin: a JoinGroup without member id is answered
 * MEMBER_ID_REQUIRED with Sediment's id for it, which stands for Kafka's from then on.
 */
async function admit(kafkaMemberId: string, join: JoinGroupRequest, version: number): Promise<void> {
  const first = await call(apis.JoinGroup, version, { ...join, memberId: '' });
  assert.equal(first.errorCode, ErrorCode.MEMBER_ID_REQUIRED);
  kafkaToSedimentMember.set(kafkaMemberId, first.memberId);
  memberNames.set(first.memberId, `member(${kafkaMemberId})`);
  memberNames.set(kafkaMemberId, `member(${kafkaMemberId})`);
}

/** A consumer subscription (ConsumerProtocol v0) to one topic. */
function subscription(topic: string): Buffer {
  const t = Buffer.from(topic);
  const b = Buffer.alloc(2 + 4 + 2 + t.length + 4);
  b.writeInt16BE(0, 0);
  b.writeInt32BE(1, 2);
  b.writeInt16BE(t.length, 6);
  t.copy(b, 8);
  b.writeInt32BE(-1, 8 + t.length);
  return b;
}

/** A one-member classic group's life where the capture holds none of it: join, sync (as leader), leave. */
async function classicMember(groupId: string, kafkaMemberId: string, topic: string, leave: boolean): Promise<void> {
  const join: JoinGroupRequest = { groupId, sessionTimeoutMs: 45_000, rebalanceTimeoutMs: 60_000, memberId: '', groupInstanceId: null, protocolType: 'consumer', protocols: [{ name: 'range', metadata: subscription(topic) }], reason: null };
  await admit(kafkaMemberId, join, 5);
  const memberId = kafkaToSedimentMember.get(kafkaMemberId) as string;
  const joined = await call(apis.JoinGroup, 5, { ...join, memberId });
  assert.equal(joined.errorCode, 0);
  const synced = await call(apis.SyncGroup, 3, { groupId, generationId: joined.generationId, memberId, groupInstanceId: null, protocolType: null, protocolName: null, assignments: [{ memberId, assignment: Buffer.alloc(0) }] });
  assert.equal(synced.errorCode, 0);
  if (leave) assert.equal((await call(apis.LeaveGroup, 1, { groupId, memberId, members: [] })).errorCode, 0);
}

describe('groups, as each client went through them', () => {
  // kafkajs (golden-kafkajs): rejoin with its id, sync, offsets before and after a commit, leave.
  parity('join-group-v5.bin', async () => {
    const g = golden('join-group-v5.bin');
    await admit(g.request['memberId'] as string, g.request as unknown as JoinGroupRequest, 5);
    await expectSame('join-group-v5.bin');
  });
  parity('sync-group-v3.bin', () => expectSame('sync-group-v3.bin'));
  parity('offset-fetch-v4.bin', () => expectSame('offset-fetch-v4.bin'));
  parity('offset-commit-v5.bin', () => expectSame('offset-commit-v5.bin'));
  parity('leave-group-v3.bin', () => expectSame('leave-group-v3.bin'));

  // The Java 4.3.1 client (golden-java).
  parity('join-group-v9.bin', async () => {
    const g = golden('join-group-v9.bin');
    await admit(g.request['memberId'] as string, g.request as unknown as JoinGroupRequest, 9);
    await expectSame('join-group-v9.bin');
  });
  parity('sync-group-v5.bin', () => expectSame('sync-group-v5.bin'));
  parity('offset-commit-v9.bin', () => expectSame('offset-commit-v9.bin'));
  parity('leave-group-v5.bin', () => expectSame('leave-group-v5.bin'));

  // confluent-kafka-python (golden-python): its join and sync are not in the capture (kafkajs's
  // JoinGroup v5 and SyncGroup v3 are), so they are made here; then its own requests.
  parity('offset-fetch-v7.bin', async () => {
    await classicMember('golden-python', golden('heartbeat-v3.bin').request['memberId'] as string, 'golden-python-group', false);
    await expectSame('offset-fetch-v7.bin');
  });
  parity('heartbeat-v3.bin', () => expectSame('heartbeat-v3.bin'));
  parity('offset-commit-v7.bin', () => expectSame('offset-commit-v7.bin'));
  parity('leave-group-v1.bin', () => expectSame('leave-group-v1.bin'));
  // kafka-consumer-groups --describe of the group it left.
  parity('offset-fetch-v9.bin', () => expectSame('offset-fetch-v9.bin'));

  // The console consumer's classic group, left Empty; then the CLI lists every group.
  parity('describe-groups-v6.bin', async () => {
    await classicMember('golden-cli-classic', 'golden-cli-classic-member', 'golden-cli', true);
    await expectSame('describe-groups-v6.bin');
  });
  // The console consumer's KIP-848 group: its join (the captured heartbeat), its leave; then
  // the CLI lists every group and describes this one.
  parity('consumer-group-heartbeat-v1.bin', () =>
    expectSame('consumer-group-heartbeat-v1.bin', (_ours, kafka) => {
      kafka['memberEpoch'] = (kafka['memberEpoch'] as number) - NEW_GROUP_EPOCH_LEAD;
    }),
  );
  // Its offsets, at its epoch (Kafka's but for the lead): fetched before the first commit, then committed.
  parity('offset-fetch-v10.bin', () =>
    expectSame('offset-fetch-v10.bin', undefined, (req) => {
      for (const g of req['groups'] as Array<{ memberEpoch: number }>) g.memberEpoch -= NEW_GROUP_EPOCH_LEAD;
    }),
  );
  parity('offset-commit-v10.bin', () =>
    expectSame('offset-commit-v10.bin', undefined, (req) => {
      req['generationIdOrMemberEpoch'] = (req['generationIdOrMemberEpoch'] as number) - NEW_GROUP_EPOCH_LEAD;
    }),
  );
  parity('list-groups-v5.bin', async () => {
    const hb = golden('consumer-group-heartbeat-v1.bin');
    const left = await call(apis.ConsumerGroupHeartbeat, 1, { ...(toSediment(hb.request) as object), memberEpoch: -1 });
    assert.equal(left.errorCode, 0);
    await expectSame('list-groups-v5.bin');
  });
  parity('consumer-group-describe-v1.bin', () =>
    expectSame('consumer-group-describe-v1.bin', (_ours, kafka) => {
      for (const g of kafka['groups'] as Array<{ groupEpoch: number; assignmentEpoch: number }>) {
        g.groupEpoch -= NEW_GROUP_EPOCH_LEAD;
        g.assignmentEpoch -= NEW_GROUP_EPOCH_LEAD;
      }
    }),
  );
});

describe('a share group', () => {
  // The console share consumer's group (golden-share, share.auto.offset.reset=earliest set by
  // the IncrementalAlterConfigs above): its join, the heartbeat once its partitions' state is
  // initialised (the captured one), its leave, then kafka-share-groups --describe.
  const groupId = 'golden-share';
  parity('share-group-heartbeat-v1.bin', async () => {
    const g = golden('share-group-heartbeat-v1.bin');
    const memberId = g.request['memberId'] as string;
    const join = await call(apis.ShareGroupHeartbeat, 1, { groupId, memberId, memberEpoch: 0, rackId: null, subscribedTopicNames: ['golden-cli'] });
    assert.equal(join.errorCode, 0);
    assert.equal(join.memberEpoch, (g.request['memberEpoch'] as number) - NEW_GROUP_EPOCH_LEAD, "the member is at Kafka's epoch but for the new group's lead");
    await broker.broker.context.shareGroups?.coordinator.initialized(groupId);
    await expectSame(
      'share-group-heartbeat-v1.bin',
      (_ours, kafka) => {
        kafka['memberEpoch'] = (kafka['memberEpoch'] as number) - NEW_GROUP_EPOCH_LEAD;
      },
      (req) => {
        req['memberEpoch'] = join.memberEpoch;
      },
    );
  });
  // Its first fetch, in a new share session: partition 0's records, acquired.
  parity('share-fetch-v2.bin', () => expectSame('share-fetch-v2.bin'));
  // The consumer's last acknowledgement, closing its session (epoch -1): partition 1's
  // 12 records, which a later fetch (not in the capture) acquired; made so here.
  parity('share-acknowledge-v2.bin', async () => {
    const ack = golden('share-acknowledge-v2.bin').request as unknown as ShareAcknowledgeRequest;
    const batch = ack.topics[0]?.partitions[0]?.acknowledgementBatches[0];
    assert.ok(batch !== undefined && ack.topics[0]?.partitions[0]?.partitionIndex === 1);
    const p1 = broker.broker.context.topics.partition('golden-cli', 1);
    assert.ok(p1 !== undefined);
    const count = Number(batch.lastOffset - batch.firstOffset) + 1;
    await p1.append(buildRecordBatch({ records: Array.from({ length: count }, (_, i) => ({ key: Buffer.from(`k-${i}`), value: Buffer.from(`cli-${i}`), timestamp: 1_700_000_000_000 + i })) }));
    const fetched = await call(apis.ShareFetch, 2, {
      groupId,
      memberId: ack.memberId,
      shareSessionEpoch: 1,
      maxWaitMs: 0,
      minBytes: 1,
      maxBytes: 1 << 20,
      maxRecords: 500,
      batchSize: 500,
      shareAcquireMode: 0,
      isRenewAck: false,
      topics: [{ topicId: kafkaToSediment.get(ack.topics[0]?.topicId ?? '') ?? '', partitions: [{ partitionIndex: 1, partitionMaxBytes: 0, acknowledgementBatches: [] }] }],
      forgottenTopicsData: [],
    });
    assert.deepEqual(fetched.responses[0]?.partitions.map((q) => [q.partitionIndex, q.acquiredRecords]), [[1, [{ firstOffset: batch.firstOffset, lastOffset: batch.lastOffset, deliveryCount: 1 }]]]);
    await expectSame('share-acknowledge-v2.bin');
  });
  parity('share-group-describe-v1.bin', async () => {
    const memberId = golden('share-group-heartbeat-v1.bin').request['memberId'] as string;
    const left = await call(apis.ShareGroupHeartbeat, 1, { groupId, memberId, memberEpoch: -1, rackId: null, subscribedTopicNames: null });
    assert.equal(left.errorCode, 0);
    await expectSame('share-group-describe-v1.bin', (_ours, kafka) => {
      for (const g of kafka['groups'] as Array<{ groupEpoch: number; assignmentEpoch: number }>) {
        g.groupEpoch -= NEW_GROUP_EPOCH_LEAD;
        g.assignmentEpoch -= NEW_GROUP_EPOCH_LEAD;
      }
    });
  });
});

describe('records deleted', () => {
  // kafka-delete-records, after the share consumer, as in the capture.
  parity('delete-records-v2.bin', () => expectSame('delete-records-v2.bin'));
});

test('every captured answer is compared here or named as bound to the run', () => {
  const compared = new Set(comparedFiles);
  for (const e of index) assert.ok(compared.has(e.file) || historyBound[e.file] !== undefined, `${e.file}: neither compared nor in historyBound`);
  for (const f of Object.keys(historyBound)) assert.ok(index.some((e) => e.file === f), `${f} in historyBound is not captured`);
  for (const e of index) assert.equal(e.broker, 'Apache Kafka 4.3.1', e.file);
});
