// The Kafka 4.3 versions Sediment advertises, through the handlers with a real
// partition log: Produce v13 and Fetch v13+ name topics by id (UNKNOWN_TOPIC_ID
// for an id no topic has, the id echoed back, fetch sessions keyed by id), and
// ListOffsets v11's -6 (earliest pending upload, KIP-1023) on a partition that is
// not tiered, tiered with nothing uploaded, and tiered with segments remote.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { BrokerContext, PartitionView } from '../../../broker/broker-context.js';
import type { ManualClock } from '../../../broker/common/clock.js';
import type { RequestContext } from '../../../broker/handlers/api-handler.js';
import { handler as produceHandler } from '../../../broker/handlers/00-produce.js';
import { handler as fetchHandler } from '../../../broker/handlers/01-fetch.js';
import { handler as listOffsetsHandler } from '../../../broker/handlers/02-list-offsets.js';
import { FetchSessionCache } from '../../../broker/fetch/fetch-session-cache.js';
import type { PartitionLog } from '../../../broker/log/partition-log.js';
import { silentLogger } from '../../../broker/common/logger.js';
import { LocalPartitionView, type RemoteTier } from '../../../broker/partition-view.js';
import { PartitionWaiters } from '../../../broker/partition-waiters.js';
import { ErrorCode } from '../../../broker/protocol/errors.js';
import { decodeResponse, encodeRequestMessage, encodeResponse, payloadOf, decodeRequestHeader, decodeRequestBody } from '../../../broker/protocol/frame.js';
import { ZERO_UUID, apis, type ApiDescriptor, type FetchRequest, type FetchResponse, type ListOffsetsResponse, type ProduceRequest, type ProduceResponse } from '../../../broker/protocol/messages/index.js';
import { decodeRecordBatches } from '../../../broker/protocol/record-batch.js';
import { recordsBuffer } from '../../../broker/protocol/record-parts.js';
import { batch, openLog, tempDir } from '../log/helpers.js';

const TOPIC = 't';
const TOPIC_ID = 'Q2FmZWJhYmVDYWZlYmFiZQ';
const OTHER_ID = 'ZGVhZGJlZWZkZWFkYmVlZg';

/** A remote tier claiming offsets up to `highest` (-1: nothing uploaded). */
class FixedTier implements RemoteTier {
  constructor(public highest: bigint, public start: bigint | null) {}
  logStartOffset(): bigint | null {
    return this.start;
  }
  highestRemoteOffset(): bigint {
    return this.highest;
  }
  async read(): Promise<null> {
    return null;
  }
  async offsetForTimestamp(): Promise<null> {
    return null;
  }
  async deleteRecordsBefore(_log: PartitionLog, offset: bigint): Promise<bigint> {
    return offset;
  }
}

function ctx(apiKey: number, apiVersion: number): RequestContext {
  return { apiKey, apiVersion, correlationId: 1, clientId: 'test', connectionId: 1, clientHost: '127.0.0.1', log: silentLogger(), signal: new AbortController().signal };
}

/** Encodes the request at `version` and decodes it back: what the handler gets from the wire. */
function wire<Req>(api: ApiDescriptor<Req, unknown>, version: number, body: Req): Req {
  const frame = payloadOf(encodeRequestMessage(api, version, 1, 'test', body));
  return decodeRequestBody(decodeRequestHeader(frame), frame).body as Req;
}

describe('topic ids (Produce v13, Fetch v13-18) and ListOffsets -6 (v11)', () => {
  let cleanup: () => Promise<void> = async () => undefined;
  let log: PartitionLog;
  let view: PartitionView;
  let broker: BrokerContext;
  const views = new Map<string, PartitionView>();

  before(async () => {
    const t = await tempDir('sediment-ids-');
    cleanup = t.cleanup;
    const opened = await openLog(t.dir);
    log = opened.log;
    view = new LocalPartitionView(log, null);
    views.set(TOPIC, view);
    const partial = {
      clock: opened.clock as ManualClock,
      log: silentLogger(),
      waiters: new PartitionWaiters(),
      fetchSessions: new FetchSessionCache({ maxSlots: 4, clock: opened.clock }),
      txns: { verifyProduce: () => ErrorCode.NONE },
      topics: {
        partition: (topic: string, partition: number) => (partition === 0 ? views.get(topic) : undefined),
        isInternal: () => false,
        store: { getById: (id: string) => (id === TOPIC_ID ? { name: TOPIC } : undefined) },
      },
    };
    broker = partial as unknown as BrokerContext;
  });

  after(async () => {
    await log.close();
    await cleanup();
  });

  const produceRequest = (topicId: string): ProduceRequest => ({
    transactionalId: null,
    acks: -1,
    timeoutMs: 1000,
    topicData: [{ name: '', topicId, partitionData: [{ index: 0, records: batch({ count: 2, tag: 'p' }) }] }],
  });

  it('advertises Produce 0-13, Fetch 4-18, ListOffsets 1-11', () => {
    assert.deepEqual([produceHandler.minVersion, produceHandler.maxVersion], [0, 13]);
    assert.deepEqual([fetchHandler.minVersion, fetchHandler.maxVersion], [4, 18]);
    assert.deepEqual([listOffsetsHandler.minVersion, listOffsetsHandler.maxVersion], [1, 11]);
  });

  it('Produce v13 appends to the topic its id names and echoes the id; an unknown id is UNKNOWN_TOPIC_ID', async () => {
    const req = wire(apis.Produce, 13, produceRequest(TOPIC_ID));
    assert.equal(req.topicData[0]?.name, '', 'v13 carries no topic name');
    const res = (await produceHandler.handle(broker, req, ctx(0, 13))) as ProduceResponse;
    assert.equal(res.responses[0]?.topicId, TOPIC_ID);
    assert.deepEqual([res.responses[0]?.partitionResponses[0]?.errorCode, res.responses[0]?.partitionResponses[0]?.baseOffset], [0, 0n]);
    const unknown = (await produceHandler.handle(broker, wire(apis.Produce, 13, produceRequest(OTHER_ID)), ctx(0, 13))) as ProduceResponse;
    assert.equal(unknown.responses[0]?.topicId, OTHER_ID);
    assert.equal(unknown.responses[0]?.partitionResponses[0]?.errorCode, ErrorCode.UNKNOWN_TOPIC_ID);
    // The response encodes (ids, no names) and reads back the same.
    const chunks = encodeResponse(0, 13, 1, (w) => apis.Produce.encodeResponse(w, 13, res));
    assert.equal(decodeResponse(payloadOf(chunks), apis.Produce, 13).body.responses[0]?.topicId, TOPIC_ID);
    // v12 still names the topic; the zero id of a v12 request means nothing.
    const v12 = (await produceHandler.handle(broker, wire(apis.Produce, 12, { ...produceRequest(ZERO_UUID), topicData: [{ name: TOPIC, topicId: ZERO_UUID, partitionData: [{ index: 0, records: batch({ count: 1, tag: 'q' }) }] }] }), ctx(0, 12))) as ProduceResponse;
    assert.deepEqual([v12.responses[0]?.partitionResponses[0]?.errorCode, v12.responses[0]?.partitionResponses[0]?.baseOffset], [0, 2n]);
  });

  const fetchRequest = (topicId: string, session: { id: number; epoch: number } = { id: 0, epoch: -1 }, fetchOffset = 0n): FetchRequest => ({
    replicaId: -1,
    replicaState: { replicaId: -1, replicaEpoch: -1n },
    maxWaitMs: 0,
    minBytes: 1,
    maxBytes: 1 << 20,
    isolationLevel: 0,
    sessionId: session.id,
    sessionEpoch: session.epoch,
    topics: [{ topic: '', topicId, partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset, lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: 1 << 20 }] }],
    forgottenTopicsData: [],
    rackId: '',
  });

  it('Fetch v13-v18 reads the topic its id names; an unknown id is UNKNOWN_TOPIC_ID', async () => {
    for (const version of [13, 15, 16, 17, 18]) {
      const res = (await fetchHandler.handle(broker, wire(apis.Fetch, version, fetchRequest(TOPIC_ID)), ctx(1, version))) as FetchResponse;
      const p = res.responses[0]?.partitions[0];
      assert.equal(res.responses[0]?.topicId, TOPIC_ID, `v${version}`);
      assert.equal(p?.errorCode, 0, `v${version}`);
      assert.deepEqual(decodeRecordBatches(recordsBuffer(p.records ?? Buffer.alloc(0))).map((b) => b.header.baseOffset), [0n, 2n], `v${version}`);
      const chunks = encodeResponse(1, version, 1, (w) => apis.Fetch.encodeResponse(w, version, res));
      assert.equal(decodeResponse(payloadOf(chunks), apis.Fetch, version).body.responses[0]?.topicId, TOPIC_ID);
      const unknown = (await fetchHandler.handle(broker, wire(apis.Fetch, version, fetchRequest(OTHER_ID)), ctx(1, version))) as FetchResponse;
      assert.equal(unknown.responses[0]?.topicId, OTHER_ID);
      assert.equal(unknown.responses[0]?.partitions[0]?.errorCode, ErrorCode.UNKNOWN_TOPIC_ID, `v${version}`);
    }
  });

  it('Fetch v15+: a replica id in ReplicaState is refused (no followers)', async () => {
    const req = { ...fetchRequest(TOPIC_ID), replicaState: { replicaId: 2, replicaEpoch: 5n } };
    const res = (await fetchHandler.handle(broker, wire(apis.Fetch, 15, req), ctx(1, 15))) as FetchResponse;
    assert.equal(res.errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER);
  });

  it('Fetch v13 sessions: incremental fetches by id see new records; ids in a by-name session are FETCH_SESSION_TOPIC_ID_ERROR', async () => {
    const full = (await fetchHandler.handle(broker, fetchRequest(TOPIC_ID, { id: 0, epoch: 0 }, 3n), ctx(1, 13))) as FetchResponse;
    assert.ok(full.sessionId > 0);
    assert.equal(full.responses[0]?.partitions[0]?.errorCode, 0);
    await view.append(batch({ count: 1, tag: 'later' }));
    const inc = (await fetchHandler.handle(broker, { ...fetchRequest(TOPIC_ID, { id: full.sessionId, epoch: 1 }, 3n), topics: [] }, ctx(1, 13))) as FetchResponse;
    assert.equal(inc.errorCode, 0);
    assert.equal(inc.responses[0]?.topicId, TOPIC_ID);
    assert.deepEqual(decodeRecordBatches(recordsBuffer(inc.responses[0]?.partitions[0]?.records ?? Buffer.alloc(0))).map((b) => b.header.baseOffset), [3n]);
    const mixed = (await fetchHandler.handle(broker, { ...fetchRequest(TOPIC_ID, { id: full.sessionId, epoch: 2 }, 4n), topics: [] }, ctx(1, 12))) as FetchResponse;
    assert.equal(mixed.errorCode, ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR);
  });

  async function listOffset(timestamp: bigint, version: number): Promise<{ errorCode: number; offset: bigint; leaderEpoch: number }> {
    const req = wire(apis.ListOffsets, version, {
      replicaId: -1,
      isolationLevel: 0,
      timeoutMs: 1000,
      topics: [{ name: TOPIC, partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp }] }],
    });
    const res = (await listOffsetsHandler.handle(broker, req, ctx(2, version))) as ListOffsetsResponse;
    const p = res.topics[0]?.partitions[0];
    assert.ok(p !== undefined);
    return { errorCode: p.errorCode, offset: p.offset, leaderEpoch: p.leaderEpoch };
  }

  it('ListOffsets -6 needs v11 (UNSUPPORTED_VERSION before) and is -1 on a partition that is not tiered', async () => {
    assert.equal((await listOffset(-6n, 10)).errorCode, ErrorCode.UNSUPPORTED_VERSION);
    assert.deepEqual(await listOffset(-6n, 11), { errorCode: 0, offset: -1n, leaderEpoch: -1 });
    // A remote tier attached but the topic not tiered: still -1.
    views.set(TOPIC, new LocalPartitionView(log, new FixedTier(1n, 0n)));
    assert.deepEqual(await listOffset(-6n, 11), { errorCode: 0, offset: -1n, leaderEpoch: -1 });
  });

  it('ListOffsets -6 on a tiered partition: the log start with nothing uploaded, the offset after the highest remote one, -1 when remote segments are not known yet', async () => {
    log.updateConfig({ ...log.currentConfig, remoteStorageEnable: true });
    try {
      const tier = new FixedTier(-1n, null);
      views.set(TOPIC, new LocalPartitionView(log, tier));
      assert.deepEqual(await listOffset(-6n, 11), { errorCode: 0, offset: 0n, leaderEpoch: 0 }, 'nothing uploaded: everything is pending');
      tier.highest = 2n;
      tier.start = 0n;
      assert.deepEqual(await listOffset(-6n, 11), { errorCode: 0, offset: 3n, leaderEpoch: 0 });
      assert.equal((await listOffset(-5n, 11)).offset, 2n, '-5 is the highest remote offset');
      // The local log no longer starts at the log start, yet no remote segment is known: -1.
      await log.roll();
      await log.deleteRecordsBefore(3n);
      tier.highest = -1n;
      tier.start = 0n;
      assert.deepEqual(await listOffset(-6n, 11), { errorCode: 0, offset: -1n, leaderEpoch: -1 });
    } finally {
      log.updateConfig({ ...log.currentConfig, remoteStorageEnable: false });
      views.set(TOPIC, view);
    }
  });
});
