// Fetch from a partition whose early offsets are held by a remote tier that
// answers with RecordParts: the parts reach the response frame by reference
// (never joined), the client sees the same bytes as for one buffer, and the
// byte limits and the bytes-out metric count the parts' total length.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Registry } from 'prom-client';
import type { BrokerContext } from '../../../broker/broker-context.js';
import { ManualClock } from '../../../broker/common/clock.js';
import type { ApiHandler, RequestContext } from '../../../broker/handlers/api-handler.js';
import { handler as fetchHandler } from '../../../broker/handlers/01-fetch.js';
import { FetchSessionCache } from '../../../broker/fetch/fetch-session-cache.js';
import type { PartitionLog } from '../../../broker/log/partition-log.js';
import { silentLogger } from '../../../broker/common/logger.js';
import { RequestMetrics } from '../../../broker/metrics/request-metrics.js';
import { LocalPartitionView, type RemoteTier } from '../../../broker/partition-view.js';
import { PartitionWaiters } from '../../../broker/partition-waiters.js';
import { decodeResponse, encodeResponse, payloadOf } from '../../../broker/protocol/frame.js';
import { apis, type FetchRequest, type FetchResponse } from '../../../broker/protocol/messages/index.js';
import { RecordParts, type Records, recordsBuffer } from '../../../broker/protocol/record-parts.js';
import { decodeRecordBatches } from '../../../broker/protocol/record-batch.js';
import { batch, openLog, tempDir } from '../log/helpers.js';

const VERSION = 12;
const REMOTE_BATCHES = 10;

/** Offsets below the local log start, one batch per offset, answered as one part per batch. */
class PartsTier implements RemoteTier {
  readonly reads: bigint[] = [];
  constructor(private readonly batches: readonly Buffer[]) {}
  logStartOffset(): bigint {
    return 0n;
  }
  highestRemoteOffset(): bigint {
    return BigInt(this.batches.length - 1);
  }
  async read(_log: PartitionLog, fetchOffset: bigint, maxBytes: number, minOneBatch: boolean): Promise<Records | null> {
    this.reads.push(fetchOffset);
    // An empty part up front, as a cache chunk boundary may produce: it must not show.
    const parts: Buffer[] = [Buffer.alloc(0)];
    let size = 0;
    for (let i = Number(fetchOffset); i < this.batches.length; i++) {
      const b = this.batches[i] as Buffer;
      if (size + b.length > maxBytes && !(minOneBatch && size === 0)) break;
      parts.push(b);
      size += b.length;
    }
    return size === 0 ? null : new RecordParts(parts);
  }
  async offsetForTimestamp(): Promise<null> {
    return null;
  }
  async deleteRecordsBefore(_log: PartitionLog, offset: bigint): Promise<bigint> {
    return offset;
  }
}

function request(fetchOffset: bigint | null, partitionMaxBytes: number, session: { id: number; epoch: number } = { id: 0, epoch: -1 }): FetchRequest {
  return {
    replicaId: -1,
    maxWaitMs: 0,
    minBytes: 1,
    maxBytes: 1 << 20,
    isolationLevel: 0,
    sessionId: session.id,
    sessionEpoch: session.epoch,
    // null: an incremental fetch that does not name the partition (its cached offset applies).
    topics: fetchOffset === null ? [] : [{ topic: 't', topicId: 'AAAAAAAAAAAAAAAAAAAAAA', partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset, lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes }] }],
    forgottenTopicsData: [],
    rackId: '',
  };
}

function requestContext(): RequestContext {
  return {
    apiKey: 1,
    apiVersion: VERSION,
    correlationId: 7,
    clientId: 'test-client',
    connectionId: 1,
    clientHost: '127.0.0.1',
    log: silentLogger(),
    signal: new AbortController().signal,
  };
}

describe('Fetch from a remote tier answering with RecordParts', () => {
  let cleanup: () => Promise<void> = async () => undefined;
  let view: LocalPartitionView;
  let tier: PartsTier;
  let remoteBatches: Buffer[];
  let localBatch: Buffer;
  let broker: BrokerContext;
  let registry: Registry;
  let fetch: ApiHandler<unknown, unknown, BrokerContext>;

  before(async () => {
    const t = await tempDir('sediment-fetch-');
    cleanup = t.cleanup;
    const { log, clock } = await openLog(t.dir);
    // Offsets 0-9 in the first segment, read back one batch each (what the tier will serve), then deleted locally.
    view = new LocalPartitionView(log, null);
    for (let i = 0; i < REMOTE_BATCHES; i++) await view.append(batch({ valueSize: 300, tag: `r${i}` }));
    remoteBatches = [];
    for (let i = 0; i < REMOTE_BATCHES; i++) {
      const r = await log.read(BigInt(i), 1, { maxOffset: log.highWatermark, minOneBatch: true });
      assert.equal(r.records.length, 1);
      remoteBatches.push(Buffer.from(r.records[0] as Buffer));
    }
    await log.roll();
    await view.append(batch({ valueSize: 300, tag: 'local' }));
    localBatch = Buffer.from((await log.read(10n, 1, { maxOffset: log.highWatermark, minOneBatch: true })).records[0] as Buffer);
    await log.deleteRecordsBefore(BigInt(REMOTE_BATCHES));
    assert.equal(log.localLogStartOffset, BigInt(REMOTE_BATCHES));

    tier = new PartsTier(remoteBatches);
    view = new LocalPartitionView(log, tier);
    // The handler reads only these members of the context.
    const partial: Pick<BrokerContext, 'clock' | 'log' | 'waiters' | 'fetchSessions'> & { topics: Pick<BrokerContext['topics'], 'partition'> } = {
      clock: clock as ManualClock,
      log: silentLogger(),
      waiters: new PartitionWaiters(),
      fetchSessions: new FetchSessionCache({ maxSlots: 0, clock }),
      topics: { partition: (topic, partition) => (topic === 't' && partition === 0 ? view : undefined) },
    };
    broker = partial as unknown as BrokerContext;
    registry = new Registry();
    const metrics = new RequestMetrics(registry, () => undefined);
    fetch = metrics.instrument([fetchHandler as ApiHandler<unknown, unknown, BrokerContext>])[0] as ApiHandler<unknown, unknown, BrokerContext>;
  });

  after(async () => {
    await view.log.close();
    await cleanup();
  });

  async function fetchAt(offset: bigint, partitionMaxBytes: number): Promise<{ records: Records; chunks: Buffer[]; wire: Buffer }> {
    const res = (await fetch.handle(broker, request(offset, partitionMaxBytes), requestContext())) as FetchResponse;
    const p = res.responses[0]?.partitions[0];
    assert.equal(p?.errorCode, 0);
    assert.equal(p.logStartOffset, 0n);
    assert.ok(p.records !== null);
    const chunks = encodeResponse(1, VERSION, 7, (w) => apis.Fetch.encodeResponse(w, VERSION, res));
    const decoded = decodeResponse(payloadOf(chunks), apis.Fetch, VERSION).body;
    const wire = decoded.responses[0]?.partitions[0]?.records;
    assert.ok(wire instanceof Buffer);
    return { records: p.records, chunks, wire };
  }

  async function bytesOut(): Promise<number> {
    const m = await registry.getSingleMetric('sediment_bytes_out_total')?.get();
    return m?.values.find((v) => v.labels['topic'] === 't')?.value ?? 0;
  }

  it('passes the parts through to the frame by reference; the client gets the batches in order', async () => {
    const before = await bytesOut();
    const { records, chunks, wire } = await fetchAt(0n, 1 << 20);
    assert.ok(records instanceof RecordParts, 'the handler keeps the parts');
    assert.equal(records.parts.length, REMOTE_BATCHES);
    for (const b of remoteBatches) assert.ok(chunks.includes(b), 'each remote batch goes to the socket as it is');
    const expected = Buffer.concat(remoteBatches);
    assert.ok(wire.equals(expected));
    assert.deepEqual(decodeRecordBatches(wire).map((d) => d.header.baseOffset), remoteBatches.map((_, i) => BigInt(i)));
    assert.equal((await bytesOut()) - before, expected.length, 'bytes out counts the parts total');
  });

  it('bounds the parts by the partition limit', async () => {
    const one = (remoteBatches[0] as Buffer).length;
    const { records, wire } = await fetchAt(4n, 3 * one + one / 2);
    assert.equal(records.length, 3 * one);
    assert.ok(wire.equals(Buffer.concat(remoteBatches.slice(4, 7))));
  });

  it('reads above the local log start as one buffer', async () => {
    const reads = tier.reads.length;
    const { records, wire } = await fetchAt(10n, 1 << 20);
    assert.ok(records instanceof Buffer);
    assert.ok(recordsBuffer(records).equals(localBatch));
    assert.ok(wire.equals(localBatch));
    assert.equal(tier.reads.length, reads, 'no remote read');
  });

  it('in a fetch session: walks the remote tier into the local one, each incremental fetch at the offset it names', async () => {
    const sessions = new FetchSessionCache({ maxSlots: 4, clock: broker.clock });
    const inSession = { ...broker, fetchSessions: sessions } as BrokerContext;
    const one = (remoteBatches[0] as Buffer).length;
    const send = async (offset: bigint | null, session: { id: number; epoch: number }): Promise<FetchResponse> =>
      (await fetch.handle(inSession, request(offset, 4 * one, session), requestContext())) as FetchResponse;
    const full = await send(0n, { id: 0, epoch: 0 });
    const id = full.sessionId;
    assert.ok(id > 0);
    const baseOffsets = (res: FetchResponse): bigint[] => {
      const records = res.responses[0]?.partitions[0]?.records;
      return records === undefined || records === null ? [] : decodeRecordBatches(recordsBuffer(records)).map((d) => d.header.baseOffset);
    };
    assert.deepEqual(baseOffsets(full), [0n, 1n, 2n, 3n]);
    let offset = 4n;
    let epoch = 1;
    const seen = [...baseOffsets(full)];
    while (offset <= 10n) {
      const res = await send(offset, { id, epoch: epoch++ });
      assert.equal(res.sessionId, id);
      const got = baseOffsets(res);
      assert.ok(got.length > 0, `records at ${offset}`);
      seen.push(...got);
      offset = (got[got.length - 1] as bigint) + 1n;
    }
    assert.deepEqual(seen, Array.from({ length: REMOTE_BATCHES + 1 }, (_, i) => BigInt(i)), 'remote batches 0-9, then the local one');
    // At the end, named once more, then not named: nothing new, no partition in the answer.
    assert.deepEqual((await send(offset, { id, epoch: epoch++ })).responses, []);
    assert.deepEqual((await send(null, { id, epoch: epoch++ })).responses, []);
    // Back into the remote tier (a seek): the session keeps offset 5 until the client names another.
    assert.deepEqual(baseOffsets(await send(5n, { id, epoch: epoch++ })), [5n, 6n, 7n, 8n]);
    const reads = tier.reads.length;
    assert.deepEqual(baseOffsets(await send(null, { id, epoch: epoch++ })), [5n, 6n, 7n, 8n]);
    assert.equal(tier.reads.length, reads + 1, 'read from the remote tier at the cached offset');
  });
});
