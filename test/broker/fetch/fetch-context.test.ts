// The request/response side of fetch sessions, driven like the Fetch handler
// drives it: open a context, "read" each target from a model of the
// partitions, complete. The model answers records when the fetch offset is
// below its end, so a partition with new data is one whose end moved.
import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import { ManualClock } from '../../../broker/common/clock.js';
import { completeFetch, openFetchContext, type FetchContext, type FetchResponseSessionPart, type FetchRequestSessionPart } from '../../../broker/fetch/fetch-context.js';
import { FetchSessionCache } from '../../../broker/fetch/fetch-session-cache.js';
import { ErrorCode } from '../../../broker/protocol/errors.js';
import type { FetchResponsePartitionData } from '../../../broker/protocol/messages/fetch.js';
import { ZERO_UUID } from '../../../broker/protocol/reader.js';

const V = 12;

interface PartitionModel {
  end: bigint;
  logStartOffset: bigint;
  /** Reported as is when set; else the end. */
  lastStableOffset?: bigint;
  error: number;
}

class Model {
  readonly parts = new Map<string, PartitionModel>();
  /** The fetch offsets each partition was last read at. */
  readonly readAt = new Map<string, bigint>();

  add(topic: string, partition: number, end = 0n): void {
    this.parts.set(`${topic}-${partition}`, { end, logStartOffset: 0n, error: 0 });
  }

  get(topic: string, partition: number): PartitionModel {
    const p = this.parts.get(`${topic}-${partition}`);
    assert.ok(p !== undefined);
    return p;
  }

  read(topic: string, partition: number, fetchOffset: bigint): FetchResponsePartitionData {
    this.readAt.set(`${topic}-${partition}`, fetchOffset);
    const p = this.get(topic, partition);
    const records = p.error === 0 && fetchOffset < p.end ? Buffer.alloc(Number(p.end - fetchOffset)) : Buffer.alloc(0);
    const hw = p.error === 0 ? p.end : -1n;
    return { partitionIndex: partition, errorCode: p.error, highWatermark: hw, lastStableOffset: p.error === 0 ? (p.lastStableOffset ?? hw) : -1n, logStartOffset: p.error === 0 ? p.logStartOffset : -1n, abortedTransactions: null, preferredReadReplica: -1, records };
  }
}

type Spec = Record<string, Array<[partition: number, fetchOffset: bigint]>>;

function request(sessionId: number, sessionEpoch: number, topics: Spec = {}, forgotten: Record<string, number[]> = {}): FetchRequestSessionPart {
  return {
    sessionId,
    sessionEpoch,
    topics: Object.entries(topics).map(([topic, ps]) => ({
      topic,
      topicId: ZERO_UUID,
      partitions: ps.map(([partition, fetchOffset]) => ({ partition, currentLeaderEpoch: -1, fetchOffset, lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: 1 << 20 })),
    })),
    forgottenTopicsData: Object.entries(forgotten).map(([topic, partitions]) => ({ topic, topicId: ZERO_UUID, partitions })),
  };
}

function read(model: Model, ctx: FetchContext): Parameters<typeof completeFetch>[2] {
  if (ctx.kind === 'sessionError') return [];
  return ctx.targets.map((target) => ({ target, data: model.read(target.topic, target.request.partition, target.request.fetchOffset) }));
}

/** "topic-partition" of every partition in the response, in order. */
function answered(res: FetchResponseSessionPart): string[] {
  return res.responses.flatMap((t) => t.partitions.map((p) => `${t.topic}-${p.partitionIndex}`));
}

describe('fetch sessions: request and response', () => {
  let clock: ManualClock;
  let cache: FetchSessionCache;
  let model: Model;

  function fetch(req: FetchRequestSessionPart, version = V): FetchResponseSessionPart {
    const ctx = openFetchContext(cache, req, version);
    return completeFetch(cache, ctx, read(model, ctx));
  }

  /** A new session over a-0, a-1, b-0 (a-0 has 5 records); returns its id. */
  function newSession(): number {
    const res = fetch(request(0, 0, { a: [[0, 0n], [1, 0n]], b: [[0, 0n]] }));
    assert.equal(res.errorCode, 0);
    assert.ok(res.sessionId > 0);
    assert.deepEqual(answered(res), ['a-0', 'a-1', 'b-0']);
    return res.sessionId;
  }

  beforeEach(() => {
    clock = new ManualClock();
    cache = new FetchSessionCache({ maxSlots: 10, clock });
    model = new Model();
    model.add('a', 0, 5n);
    model.add('a', 1);
    model.add('b', 0);
  });

  it('epoch 0 creates a session whose next epoch is 1, answering every partition', () => {
    const id = newSession();
    assert.equal(cache.get(id)?.epoch, 1);
    assert.equal(cache.totalPartitions, 3);
  });

  it('an incremental fetch with no changes answers no partition, yet reads them all at their cached offsets', () => {
    const id = newSession();
    // The client took a-0's 5 records and says so; the other partitions are not named.
    const res = fetch(request(id, 1, { a: [[0, 5n]] }));
    assert.equal(res.errorCode, 0);
    assert.equal(res.sessionId, id);
    // a-0's high watermark (5) is the one already sent, and 5 >= end: nothing new.
    assert.deepEqual(answered(res), []);
    assert.deepEqual([...model.readAt.entries()].sort(), [['a-0', 5n], ['a-1', 0n], ['b-0', 0n]]);
    const again = fetch(request(id, 2));
    assert.deepEqual(answered(again), []);
    assert.equal(cache.get(id)?.epoch, 3);
  });

  it('new data in one partition: only that partition is answered, and only once its state is new', () => {
    const id = newSession();
    assert.deepEqual(answered(fetch(request(id, 1, { a: [[0, 5n]] }))), []);
    model.get('b', 0).end = 3n;
    const res = fetch(request(id, 2));
    assert.deepEqual(answered(res), ['b-0']);
    const b0 = res.responses[0]?.partitions[0];
    assert.equal(b0?.highWatermark, 3n);
    assert.equal(b0?.records?.length, 3);
    // The client has not moved b-0's offset yet: the records are still there and it is answered again.
    assert.deepEqual(answered(fetch(request(id, 3))), ['b-0']);
    // Once it has, nothing is new.
    assert.deepEqual(answered(fetch(request(id, 4, { b: [[0, 3n]] }))), []);
  });

  it('answers a partition whose log start offset or last stable offset moved, even without records for it', () => {
    const id = newSession();
    fetch(request(id, 1, { a: [[0, 5n]] }));
    // a-0: records 0-2 deleted (DeleteRecords), the client is at the end already.
    model.get('a', 0).logStartOffset = 3n;
    const res = fetch(request(id, 2));
    assert.deepEqual(answered(res), ['a-0']);
    assert.equal(res.responses[0]?.partitions[0]?.records?.length, 0);
    assert.equal(res.responses[0]?.partitions[0]?.logStartOffset, 3n);
    assert.deepEqual(answered(fetch(request(id, 3))), []);
    // b-0: 4 records, the last stable offset held at 2 by an open transaction; the client is at 4.
    model.get('b', 0).end = 4n;
    model.get('b', 0).lastStableOffset = 2n;
    assert.deepEqual(answered(fetch(request(id, 4, { b: [[0, 4n]] }))), ['b-0'], 'the high watermark moved');
    assert.deepEqual(answered(fetch(request(id, 5))), []);
    // The transaction ends: only the last stable offset moves.
    model.get('b', 0).lastStableOffset = 4n;
    assert.deepEqual(answered(fetch(request(id, 6))), ['b-0']);
    assert.deepEqual(answered(fetch(request(id, 7))), []);
  });

  it('a partition that returned records moves to the end of the session order', () => {
    const id = newSession();
    const res = fetch(request(id, 1));
    assert.deepEqual(answered(res), ['a-0'], 'a-0 still has records at offset 0');
    assert.deepEqual([...(cache.get(id)?.partitions.values() ?? [])].map((p) => `${p.topic}-${p.partition}`), ['a-1', 'b-0', 'a-0']);
  });

  it('added partitions are answered at once; forgotten ones are dropped; forgetting all closes the session', () => {
    model.add('c', 0);
    const id = newSession();
    const res = fetch(request(id, 1, { c: [[0, 0n]], a: [[0, 5n]] }, { b: [0] }));
    assert.deepEqual(answered(res), ['c-0'], 'a new partition has never been answered in the session');
    assert.equal(cache.get(id)?.size, 3);
    model.readAt.clear();
    fetch(request(id, 2));
    assert.equal(model.readAt.has('b-0'), false, 'a forgotten partition is no longer read');
    const last = fetch(request(id, 3, {}, { a: [0, 1], c: [0] }));
    assert.equal(last.sessionId, 0, 'an emptied session is closed and the fetch answered sessionless');
    assert.equal(cache.get(id), undefined);
  });

  it('an unknown session id: FETCH_SESSION_ID_NOT_FOUND with no partitions', () => {
    newSession();
    const res = fetch(request(12345, 1, { a: [[0, 0n]] }));
    assert.deepEqual(res, { errorCode: ErrorCode.FETCH_SESSION_ID_NOT_FOUND, sessionId: 0, responses: [] });
  });

  it('a wrong epoch: INVALID_FETCH_SESSION_EPOCH, and the session is left as it was', () => {
    const id = newSession();
    for (const epoch of [2, 5, -2]) {
      const res = fetch(request(id, epoch, { a: [[0, 99n]] }));
      assert.deepEqual(res, { errorCode: ErrorCode.INVALID_FETCH_SESSION_EPOCH, sessionId: 0, responses: [] });
    }
    assert.equal(cache.get(id)?.epoch, 1);
    assert.equal(cache.get(id)?.partitions.get('a\u00000')?.request.fetchOffset, 0n);
    assert.equal(fetch(request(id, 1)).errorCode, 0);
  });

  it('a duplicate request overtaking a waiting one: the stale answer is INVALID_FETCH_SESSION_EPOCH', () => {
    const id = newSession();
    const first = openFetchContext(cache, request(id, 1), V);
    const second = openFetchContext(cache, request(id, 2), V);
    assert.equal(completeFetch(cache, first, read(model, first)).errorCode, ErrorCode.INVALID_FETCH_SESSION_EPOCH);
    assert.equal(completeFetch(cache, second, read(model, second)).errorCode, 0);
  });

  it('epoch -1 closes the named session and answers sessionless; epoch 0 with an id replaces it', () => {
    const id = newSession();
    const closing = fetch(request(id, -1, { a: [[0, 0n]] }));
    assert.equal(closing.sessionId, 0);
    assert.deepEqual(answered(closing), ['a-0']);
    assert.equal(cache.size, 0);
    const id2 = newSession();
    const replaced = fetch(request(id2, 0, { b: [[0, 0n]] }));
    assert.ok(replaced.sessionId > 0 && replaced.sessionId !== id2);
    assert.equal(cache.get(id2), undefined);
    assert.equal(cache.size, 1);
  });

  it('errors are always answered, and the partition is answered again once the error is gone', () => {
    const id = newSession();
    fetch(request(id, 1, { a: [[0, 5n]] }));
    model.get('b', 0).error = ErrorCode.NOT_LEADER_OR_FOLLOWER;
    assert.deepEqual(answered(fetch(request(id, 2))), ['b-0']);
    assert.deepEqual(answered(fetch(request(id, 3))), ['b-0']);
    model.get('b', 0).error = 0;
    assert.deepEqual(answered(fetch(request(id, 4))), ['b-0'], 'state after an error is new');
    assert.deepEqual(answered(fetch(request(id, 5))), []);
  });

  it('with 0 slots every fetch is sessionless and an incremental one finds no session', () => {
    cache = new FetchSessionCache({ maxSlots: 0, clock });
    const res = fetch(request(0, 0, { a: [[0, 0n]], b: [[0, 0n]] }));
    assert.equal(res.sessionId, 0);
    assert.deepEqual(answered(res), ['a-0', 'b-0']);
    assert.equal(cache.size, 0);
    assert.deepEqual(answered(fetch(request(0, -1, { a: [[0, 0n]] }))), ['a-0']);
    assert.equal(fetch(request(7, 1)).errorCode, ErrorCode.FETCH_SESSION_ID_NOT_FOUND);
  });

  it('a full cache answers a new full fetch sessionless', () => {
    cache = new FetchSessionCache({ maxSlots: 1, clock });
    newSession();
    const res = fetch(request(0, 0, { a: [[0, 0n]] }));
    assert.equal(res.sessionId, 0);
    assert.deepEqual(answered(res), ['a-0']);
  });

  it('a session created with topic names refuses an incremental fetch by topic ids', () => {
    const id = newSession();
    assert.equal(fetch(request(id, 1), 13).errorCode, ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR);
  });

  it('groups consecutive partitions of a topic into one topic entry, in session order', () => {
    model.get('a', 1).end = 1n;
    const id = newSession();
    const res = fetch(request(id, 1));
    // a-0 and a-1 both have records; after the first response they moved to the end: b-0, a-0, a-1.
    assert.deepEqual(res.responses.map((t) => [t.topic, t.partitions.map((p) => p.partitionIndex)]), [['a', [0, 1]]]);
    assert.deepEqual([...(cache.get(id)?.partitions.values() ?? [])].map((p) => `${p.topic}-${p.partition}`), ['b-0', 'a-0', 'a-1']);
  });
});
