// Fetch from the closest replica (KIP-392) at the Fetch handler: the leader
// answers a preferred read replica (no records, at once, in a fetch session
// too); a follower serves consumers up to its own high watermark (its last
// stable offset under read_committed), waits below it, and answers Kafka's
// errors; only consumer bytes count in sediment_fetch_consumer_bytes_total.
// One real partition log stands for the leader's or the follower's, the
// broker's standing and its selector's choice are set by each test.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Registry } from 'prom-client';
import type { BrokerContext, ReplicationService } from '../../../broker/broker-context.js';
import { ManualClock } from '../../../broker/common/clock.js';
import { silentLogger } from '../../../broker/common/logger.js';
import { FetchSessionCache } from '../../../broker/fetch/fetch-session-cache.js';
import type { ApiHandler, RequestContext } from '../../../broker/handlers/api-handler.js';
import { handler as fetchHandler } from '../../../broker/handlers/01-fetch.js';
import type { PartitionLog } from '../../../broker/log/partition-log.js';
import { RequestMetrics } from '../../../broker/metrics/request-metrics.js';
import { LocalPartitionView } from '../../../broker/partition-view.js';
import { PartitionWaiters } from '../../../broker/partition-waiters.js';
import { ErrorCode } from '../../../broker/protocol/errors.js';
import { decodeFetchResponse, encodeFetchResponse, type FetchRequest, type FetchResponse, type FetchResponsePartitionData } from '../../../broker/protocol/messages/fetch.js';
import { Reader } from '../../../broker/protocol/reader.js';
import { Writer } from '../../../broker/protocol/writer.js';
import { recordsBuffer } from '../../../broker/protocol/record-parts.js';
import { decodeRecordBatches } from '../../../broker/protocol/record-batch.js';
import type { ConsumerFetchStanding } from '../../../broker/replica/consumer-fetch.js';
import { batch, openLog, tempDir } from '../log/helpers.js';

const TOPIC = 'topic';
const TOPIC_ID = 'AAAAAAAAAAAAAAAAAAAAAA';
const EPOCH = 3;
/** This broker, and the one its image shows leading the partition when this one does not. */
const SELF = 0;
const LEADER = 1;
const ENDPOINTS = [
  { nodeId: SELF, host: 'b0.example', port: 9092, rack: 'a' },
  { nodeId: LEADER, host: 'b1.example', port: 9093, rack: null },
];
/** Offsets 0-9 in the log; the replicated high watermark starts at 5. */
const LOG_END = 10n;
const HW = 5n;

interface Broker {
  readonly context: BrokerContext;
  standing: ConsumerFetchStanding;
  live: boolean;
  /** The selector's answer by client rack (absent: the leader itself). */
  readonly prefers: Map<string, number>;
  readonly asked: Array<{ rack: string; offset: bigint }>;
}

interface FetchOptions {
  readonly offset?: bigint | null;
  readonly version?: number;
  readonly rack?: string;
  readonly maxWaitMs?: number;
  readonly currentLeaderEpoch?: number;
  readonly isolationLevel?: number;
  readonly session?: { readonly id: number; readonly epoch: number };
  readonly forget?: boolean;
  readonly replicaId?: number;
}

function request(o: FetchOptions): FetchRequest {
  const offset = o.offset === undefined ? 0n : o.offset;
  return {
    replicaId: o.replicaId ?? -1,
    maxWaitMs: o.maxWaitMs ?? 0,
    minBytes: 1,
    maxBytes: 1 << 20,
    isolationLevel: o.isolationLevel ?? 0,
    sessionId: o.session?.id ?? 0,
    sessionEpoch: o.session?.epoch ?? -1,
    topics: offset === null ? [] : [{ topic: TOPIC, topicId: TOPIC_ID, partitions: [{ partition: 0, currentLeaderEpoch: o.currentLeaderEpoch ?? EPOCH, fetchOffset: offset, lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: 1 << 20 }] }],
    forgottenTopicsData: o.forget === true ? [{ topic: TOPIC, topicId: TOPIC_ID, partitions: [0] }] : [],
    rackId: o.rack ?? '',
  };
}

function requestContext(version: number): RequestContext {
  return { apiKey: 1, apiVersion: version, correlationId: 1, clientId: 'c', connectionId: 1, clientHost: '127.0.0.1', log: silentLogger(), signal: new AbortController().signal };
}

function offsetsOf(p: FetchResponsePartitionData | undefined): bigint[] {
  const records = p?.records;
  if (records === undefined || records === null) return [];
  return decodeRecordBatches(recordsBuffer(records)).flatMap((d) => d.records.map((r) => r.offset));
}

describe('Fetch from the closest replica (KIP-392)', () => {
  let cleanup: () => Promise<void> = async () => undefined;
  let log: PartitionLog;
  let clock: ManualClock;
  let view: LocalPartitionView;
  let registry: Registry;
  let fetch: ApiHandler<unknown, unknown, BrokerContext>;
  const waiters = new PartitionWaiters();

  before(async () => {
    const t = await tempDir('sediment-kip392-');
    cleanup = t.cleanup;
    ({ log, clock } = await openLog(t.dir));
    view = new LocalPartitionView(log, null, () => EPOCH);
    for (let i = 0; i < Number(LOG_END); i++) await log.append(batch({ tag: `r${i}` }), { leaderEpoch: EPOCH, isFromClient: true });
    log.enableReplicatedHighWatermark(0n);
    log.setHighWatermark(HW);
    registry = new Registry();
    fetch = new RequestMetrics(registry, () => undefined).instrument([fetchHandler as ApiHandler<unknown, unknown, BrokerContext>])[0] as ApiHandler<unknown, unknown, BrokerContext>;
  });

  after(async () => {
    await log.close();
    await cleanup();
  });

  function broker(standing: ConsumerFetchStanding, slots = 0): Broker {
    const b: Broker = { standing, live: true, prefers: new Map(), asked: [], context: undefined as unknown as BrokerContext };
    const replication: Pick<ReplicationService, 'consumerStanding' | 'preferredReadReplica' | 'answerReplicaFetch'> = {
      consumerStanding: () => b.standing,
      preferredReadReplica: (_topic, _partition, rack, offset) => {
        b.asked.push({ rack, offset });
        return b.prefers.get(rack) ?? -1;
      },
      // A follower's own fetch (replica id >= 0): the leader sends it everything to its log end.
      answerReplicaFetch: async (req) => {
        const r = await log.read(req.topics[0]!.partitions[0]!.fetchOffset, 1 << 20, { maxOffset: log.logEndOffset, minOneBatch: true });
        return { throttleTimeMs: 0, errorCode: 0, sessionId: 0, responses: [{ topic: TOPIC, topicId: TOPIC_ID, partitions: [{ partitionIndex: 0, errorCode: 0, highWatermark: log.highWatermark, lastStableOffset: log.lastStableOffset, logStartOffset: 0n, abortedTransactions: null, preferredReadReplica: -1, records: Buffer.concat(r.records) }] }] };
      },
    };
    const cluster = {
      notLeader: () => (b.standing === 'leader' && b.live ? null : { errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, leaderId: LEADER, leaderEpoch: EPOCH }),
      currentLeader: () => ({ leaderId: b.standing === 'leader' && b.live ? SELF : LEADER, leaderEpoch: EPOCH }),
      endpoint: (nodeId: number) => ENDPOINTS.find((e) => e.nodeId === nodeId),
      get isLive() {
        return b.live;
      },
    };
    const partial = {
      nodeId: SELF,
      advertised: { host: 'self.example', port: 9092 },
      clock,
      log: silentLogger(),
      waiters,
      fetchSessions: new FetchSessionCache({ maxSlots: slots, clock }),
      topics: {
        partition: (topic: string, partition: number) => (topic === TOPIC && partition === 0 ? view : undefined),
        // v13+ name the topic by id.
        store: { getById: (id: string) => (id === TOPIC_ID ? { name: TOPIC } : undefined) },
      },
      cluster,
      replication,
    };
    (b as { context: BrokerContext }).context = partial as unknown as BrokerContext;
    return b;
  }

  async function send(b: Broker, o: FetchOptions = {}): Promise<FetchResponse> {
    const version = o.version ?? 12;
    return (await fetch.handle(b.context, request(o), requestContext(version))) as FetchResponse;
  }

  async function one(b: Broker, o: FetchOptions = {}): Promise<FetchResponsePartitionData> {
    const p = (await send(b, o)).responses[0]?.partitions[0];
    assert.ok(p !== undefined, 'the partition is answered');
    return p;
  }

  async function counted(name: string): Promise<number> {
    const m = await registry.getSingleMetric(name)?.get();
    return m?.values.find((v) => v.labels['topic'] === TOPIC)?.value ?? 0;
  }

  describe('on the leader', () => {
    it('answers the replica its selector prefers for the client rack: no records, no error, its offsets, at once', { timeout: 10_000 }, async () => {
      const leader = broker('leader');
      leader.prefers.set('b', 2);
      // A long poll that would wait 60 s for data if it were not answered at once.
      const p = await one(leader, { offset: 2n, rack: 'b', maxWaitMs: 60_000 });
      assert.equal(p.errorCode, ErrorCode.NONE);
      assert.equal(p.preferredReadReplica, 2);
      assert.deepEqual(offsetsOf(p), []);
      assert.equal(p.highWatermark, HW);
      assert.equal(p.logStartOffset, 0n);
      assert.deepEqual(leader.asked, [{ rack: 'b', offset: 2n }]);
    });

    it('reads when the selector prefers the leader itself (-1), and before v11 without asking it', async () => {
      const leader = broker('leader');
      leader.prefers.set('b', 2);
      const own = await one(leader, { offset: 2n, rack: 'a' });
      assert.equal(own.preferredReadReplica, -1);
      assert.deepEqual(offsetsOf(own), [2n, 3n, 4n]);
      const v10 = await one(leader, { offset: 2n, rack: 'b', version: 10 });
      assert.equal(v10.preferredReadReplica, -1);
      assert.deepEqual(offsetsOf(v10), [2n, 3n, 4n]);
      assert.deepEqual(leader.asked, [{ rack: 'a', offset: 2n }]);
    });

    it('fences a stale current_leader_epoch (FENCED_LEADER_EPOCH) and refuses a newer one (UNKNOWN_LEADER_EPOCH) before choosing a replica', async () => {
      const leader = broker('leader');
      leader.prefers.set('b', 2);
      assert.equal((await one(leader, { rack: 'b', currentLeaderEpoch: EPOCH - 1 })).errorCode, ErrorCode.FENCED_LEADER_EPOCH);
      assert.equal((await one(leader, { rack: 'b', currentLeaderEpoch: EPOCH + 1 })).errorCode, ErrorCode.UNKNOWN_LEADER_EPOCH);
      assert.equal((await one(leader, { rack: 'b', currentLeaderEpoch: -1 })).preferredReadReplica, 2);
    });

    it('in a fetch session: the preferred replica is in every incremental answer, until the client forgets the partition', async () => {
      const leader = broker('leader', 4);
      leader.prefers.set('b', 2);
      const full = await send(leader, { offset: 2n, rack: 'b', session: { id: 0, epoch: 0 } });
      const id = full.sessionId;
      assert.ok(id > 0, 'a session was created');
      assert.equal(full.responses[0]?.partitions[0]?.preferredReadReplica, 2);
      // Nothing changed (same HW, no records): the partition is still sent, for its preferred replica.
      const again = await send(leader, { offset: null, rack: 'b', session: { id, epoch: 1 } });
      assert.equal(again.sessionId, id);
      assert.equal(again.responses[0]?.partitions[0]?.preferredReadReplica, 2);
      // The client moves the partition to the follower: the leader's session is left empty and closed.
      const forgot = await send(leader, { offset: null, rack: 'b', session: { id, epoch: 2 }, forget: true });
      assert.deepEqual(forgot.responses, []);
      assert.equal(forgot.sessionId, 0);
    });
  });

  describe('on a follower', () => {
    it('serves a consumer up to its own high watermark, not above, as preferred_read_replica -1', async () => {
      const follower = broker('follower');
      const p = await one(follower, { offset: 0n, rack: 'b' });
      assert.equal(p.errorCode, ErrorCode.NONE);
      assert.deepEqual(offsetsOf(p), [0n, 1n, 2n, 3n, 4n]);
      assert.equal(p.highWatermark, HW);
      assert.equal(p.preferredReadReplica, -1);
      assert.deepEqual(follower.asked, [], 'a follower never asks a selector');
    });

    it('between its high watermark and its log end: nothing yet, no error; past its log end: OFFSET_OUT_OF_RANGE', async () => {
      const follower = broker('follower');
      for (const offset of [HW, LOG_END - 1n, LOG_END]) {
        const p = await one(follower, { offset });
        assert.equal(p.errorCode, ErrorCode.NONE, `offset ${offset}`);
        assert.deepEqual(offsetsOf(p), [], `offset ${offset}`);
      }
      assert.equal((await one(follower, { offset: LOG_END + 1n })).errorCode, ErrorCode.OFFSET_OUT_OF_RANGE);
    });

    it('a consumer waiting at its high watermark is answered when that moves (what the replica fetcher notifies)', { timeout: 10_000 }, async () => {
      const follower = broker('follower');
      const pending = one(follower, { offset: HW, maxWaitMs: 60_000 });
      // Let the handler read once and park.
      for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
      log.setHighWatermark(HW + 3n);
      waiters.notify(TOPIC, 0);
      try {
        const p = await pending;
        assert.deepEqual(offsetsOf(p), [5n, 6n, 7n]);
        assert.equal(p.highWatermark, HW + 3n);
      } finally {
        log.setHighWatermark(HW);
      }
    });

    it('refuses fetches before v11 (NOT_LEADER_OR_FOLLOWER), a stale epoch (FENCED_LEADER_EPOCH), a newer one (UNKNOWN_LEADER_EPOCH)', async () => {
      const follower = broker('follower');
      assert.equal((await one(follower, { version: 10 })).errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER);
      assert.equal((await one(follower, { currentLeaderEpoch: EPOCH - 1 })).errorCode, ErrorCode.FENCED_LEADER_EPOCH);
      assert.equal((await one(follower, { currentLeaderEpoch: EPOCH + 1 })).errorCode, ErrorCode.UNKNOWN_LEADER_EPOCH);
    });

    it('a broker whose replica is offline, or a follower without a live cluster session, answers NOT_LEADER_OR_FOLLOWER', async () => {
      const offline = broker('not-replica');
      assert.equal((await one(offline)).errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER);
      const follower = broker('follower');
      follower.live = false;
      assert.equal((await one(follower)).errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER);
    });

    it('in a fetch session: the full fetch reads to the HW, an incremental one carries only what the HW uncovered', async () => {
      const follower = broker('follower', 4);
      const full = await send(follower, { offset: 0n, rack: 'b', session: { id: 0, epoch: 0 } });
      const id = full.sessionId;
      assert.ok(id > 0);
      assert.deepEqual(offsetsOf(full.responses[0]?.partitions[0]), [0n, 1n, 2n, 3n, 4n]);
      assert.deepEqual((await send(follower, { offset: HW, session: { id, epoch: 1 } })).responses, [], 'nothing new');
      log.setHighWatermark(HW + 2n);
      try {
        const next = await send(follower, { offset: null, session: { id, epoch: 2 } });
        assert.deepEqual(offsetsOf(next.responses[0]?.partitions[0]), [5n, 6n]);
      } finally {
        log.setHighWatermark(HW);
      }
    });
  });

  describe('refused for leadership: the current leader (KIP-951)', () => {
    /** What a client of `version` reads: the answer encoded and decoded at that version. */
    function onWire(res: FetchResponse, version: number): FetchResponse {
      const w = new Writer(256);
      encodeFetchResponse(w, version, res);
      return decodeFetchResponse(new Reader(w.toBuffer()), version);
    }
    const leaderEndpoint = [{ nodeId: LEADER, host: 'b1.example', port: 9093, rack: null }];

    it('v16+: NOT_LEADER_OR_FOLLOWER carries CurrentLeader and the leader\'s NodeEndpoints, on the wire too', async () => {
      const offline = broker('not-replica');
      for (const version of [16, 17, 18]) {
        const res = await send(offline, { version });
        const p = res.responses[0]?.partitions[0];
        assert.equal(p?.errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER, `v${version}`);
        assert.deepEqual(p?.currentLeader, { leaderId: LEADER, leaderEpoch: EPOCH }, `v${version}`);
        assert.deepEqual(res.nodeEndpoints, leaderEndpoint, `v${version}`);
        const wire = onWire(res, version);
        assert.deepEqual(wire.responses[0]?.partitions[0]?.currentLeader, { leaderId: LEADER, leaderEpoch: EPOCH }, `v${version} on the wire`);
        assert.deepEqual(wire.nodeEndpoints?.map(({ nodeId, host, port, rack }) => ({ nodeId, host, port, rack })), leaderEndpoint, `v${version} on the wire`);
      }
    });

    it('v15 and older: NOT_LEADER_OR_FOLLOWER without CurrentLeader or NodeEndpoints (as Kafka answers)', async () => {
      const offline = broker('not-replica');
      for (const version of [12, 15]) {
        const res = await send(offline, { version });
        const p = res.responses[0]?.partitions[0];
        assert.equal(p?.errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER, `v${version}`);
        assert.equal(p?.currentLeader, undefined, `v${version}`);
        assert.equal(res.nodeEndpoints, undefined, `v${version}`);
        // CurrentLeader's tag exists from v12: nothing reaches the wire either (the decoder's default).
        assert.deepEqual(onWire(res, version).responses[0]?.partitions[0]?.currentLeader, { leaderId: -1, leaderEpoch: -1 }, `v${version} on the wire`);
      }
    });

    it('v16: FENCED_LEADER_EPOCH names the leader too: another broker on a follower, this broker on the leader', async () => {
      const follower = await send(broker('follower'), { version: 16, currentLeaderEpoch: EPOCH - 1 });
      assert.equal(follower.responses[0]?.partitions[0]?.errorCode, ErrorCode.FENCED_LEADER_EPOCH);
      assert.deepEqual(follower.responses[0]?.partitions[0]?.currentLeader, { leaderId: LEADER, leaderEpoch: EPOCH });
      assert.deepEqual(follower.nodeEndpoints, leaderEndpoint);
      const leader = await send(broker('leader'), { version: 16, currentLeaderEpoch: EPOCH - 1 });
      assert.equal(leader.responses[0]?.partitions[0]?.errorCode, ErrorCode.FENCED_LEADER_EPOCH);
      assert.deepEqual(leader.responses[0]?.partitions[0]?.currentLeader, { leaderId: SELF, leaderEpoch: EPOCH });
      assert.deepEqual(leader.nodeEndpoints, [{ nodeId: SELF, host: 'b0.example', port: 9092, rack: 'a' }]);
    });

    it('v16, the single broker (no cluster view): a stale epoch names this broker, at its advertised listener', async () => {
      const b = broker('leader');
      const single = { ...b.context, cluster: null } as unknown as BrokerContext;
      const res = (await fetch.handle(single, request({ currentLeaderEpoch: EPOCH - 1 }), requestContext(16))) as FetchResponse;
      assert.equal(res.responses[0]?.partitions[0]?.errorCode, ErrorCode.FENCED_LEADER_EPOCH);
      assert.deepEqual(res.responses[0]?.partitions[0]?.currentLeader, { leaderId: SELF, leaderEpoch: EPOCH });
      assert.deepEqual(res.nodeEndpoints, [{ nodeId: SELF, host: 'self.example', port: 9092, rack: null }]);
    });

    it('v16: other errors (UNKNOWN_LEADER_EPOCH) and answers without error carry neither', async () => {
      const follower = broker('follower');
      const newer = await send(follower, { version: 16, currentLeaderEpoch: EPOCH + 1 });
      assert.equal(newer.responses[0]?.partitions[0]?.errorCode, ErrorCode.UNKNOWN_LEADER_EPOCH);
      assert.equal(newer.responses[0]?.partitions[0]?.currentLeader, undefined);
      assert.equal(newer.nodeEndpoints, undefined);
      const read = await send(follower, { version: 16 });
      assert.equal(read.responses[0]?.partitions[0]?.errorCode, ErrorCode.NONE);
      assert.equal(read.responses[0]?.partitions[0]?.currentLeader, undefined);
      assert.equal(read.nodeEndpoints, undefined);
    });

    it('in a fetch session: a partition that lost its leadership is in the next incremental answer, with its current leader', async () => {
      const b = broker('leader', 4);
      const full = await send(b, { version: 16, offset: 0n, session: { id: 0, epoch: 0 } });
      const id = full.sessionId;
      assert.ok(id > 0, 'a session was created');
      assert.equal(full.nodeEndpoints, undefined);
      assert.deepEqual((await send(b, { version: 16, offset: HW, session: { id, epoch: 1 } })).responses, [], 'nothing new');
      b.standing = 'not-replica';
      const moved = await send(b, { version: 16, offset: null, session: { id, epoch: 2 } });
      assert.equal(moved.sessionId, id);
      const p = moved.responses[0]?.partitions[0];
      assert.equal(p?.errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER);
      assert.deepEqual(p?.currentLeader, { leaderId: LEADER, leaderEpoch: EPOCH });
      assert.deepEqual(moved.nodeEndpoints, leaderEndpoint);
      // Still refused: the error is in every incremental answer, with the leader each time.
      const again = await send(b, { version: 16, offset: null, session: { id, epoch: 3 } });
      assert.deepEqual(again.responses[0]?.partitions[0]?.currentLeader, { leaderId: LEADER, leaderEpoch: EPOCH });
      assert.deepEqual(again.nodeEndpoints, leaderEndpoint);
    });
  });

  it('read_committed on a follower stops at its last stable offset (an open transaction below its HW)', async () => {
    const t = await tempDir('sediment-kip392-txn-');
    const { log: txnLog } = await openLog(t.dir);
    try {
      await txnLog.append(batch({ count: 2 }), { leaderEpoch: EPOCH, isFromClient: true });
      await txnLog.append(batch({ producerId: 7n, producerEpoch: 0, baseSequence: 0, transactional: true }), { leaderEpoch: EPOCH, isFromClient: true });
      await txnLog.append(batch({ tag: 'after' }), { leaderEpoch: EPOCH, isFromClient: true });
      txnLog.enableReplicatedHighWatermark(0n);
      txnLog.setHighWatermark(4n);
      const txnView = new LocalPartitionView(txnLog, null, () => EPOCH);
      const follower = broker('follower');
      const ctx = { ...follower.context, topics: { partition: () => txnView } } as unknown as BrokerContext;
      const read = async (isolationLevel: number) => ((await fetch.handle(ctx, request({ offset: 0n, isolationLevel }), requestContext(12))) as FetchResponse).responses[0]?.partitions[0];
      const committed = await read(1);
      assert.equal(committed?.lastStableOffset, 2n);
      assert.deepEqual(offsetsOf(committed), [0n, 1n]);
      assert.deepEqual(committed?.abortedTransactions, []);
      assert.deepEqual(offsetsOf(await read(0)), [0n, 1n, 2n, 3n], 'read_uncommitted goes to the HW');
    } finally {
      await txnLog.close();
      await t.cleanup();
    }
  });

  it('sediment_fetch_consumer_bytes_total counts bytes sent to consumers, not to followers; bytes out counts both', async () => {
    const follower = broker('follower');
    const consumerBefore = await counted('sediment_fetch_consumer_bytes_total');
    const outBefore = await counted('sediment_bytes_out_total');
    const p = await one(follower, { offset: 0n });
    const consumed = p.records?.length ?? 0;
    assert.ok(consumed > 0);
    assert.equal((await counted('sediment_fetch_consumer_bytes_total')) - consumerBefore, consumed);
    const leader = broker('leader');
    const replicated = await one(leader, { offset: 0n, replicaId: 2 });
    assert.ok((replicated.records?.length ?? 0) > 0);
    assert.equal((await counted('sediment_fetch_consumer_bytes_total')) - consumerBefore, consumed, 'a replica fetch is not consumer traffic');
    assert.equal((await counted('sediment_bytes_out_total')) - outBefore, consumed + (replicated.records?.length ?? 0));
  });
});
