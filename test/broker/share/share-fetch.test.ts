// ShareGroups.fetch / acknowledge over an in-memory log: share session epochs,
// acknowledgements piggybacked on fetches, the final epoch releasing what a
// member holds, long polls woken by appends, and auto offset reset.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { ManualClock } from '../../../broker/common/clock.js';
import { ManualScheduler } from '../../../broker/common/scheduler.js';
import { PartitionWaiters } from '../../../broker/partition-waiters.js';
import { buildRecordBatch } from '../../../broker/protocol/record-batch.js';
import { ErrorCode } from '../../../broker/protocol/errors.js';
import { ShareGroups, type ShareFetchParams } from '../../../broker/share/share-groups.js';
import { ShareGroupConfigs } from '../../../broker/share/share-group-configs.js';
import { MemoryShareStatePersister } from '../../../broker/share/share-partition-manager.js';
import type { ShareLogView } from '../../../broker/share/share-ports.js';

const TOPIC_ID = 'AAAAAAAAAAAAAAAAAAAAAQ';

/** A one-partition log of whole batches in memory. */
class MemoryLog implements ShareLogView {
  readonly batches: Buffer[] = [];
  readonly offsets: { base: bigint; last: bigint }[] = [];
  logStartOffset = 0n;
  leaderEpoch = 0;
  get highWatermark(): bigint {
    return (this.offsets.at(-1)?.last ?? -1n) + 1n;
  }
  get lastStableOffset(): bigint {
    return this.highWatermark;
  }
  append(values: string[]): void {
    const base = this.highWatermark;
    this.batches.push(buildRecordBatch({ baseOffset: base, records: values.map((value) => ({ value, timestamp: 0 })) }));
    this.offsets.push({ base, last: base + BigInt(values.length) - 1n });
  }
  async read(fetchOffset: bigint, _maxBytes: number): Promise<{ records: Buffer | null; abortedTransactions: { producerId: bigint; firstOffset: bigint }[] }> {
    const parts = this.batches.filter((_, i) => this.offsets[i]!.last >= fetchOffset);
    return { records: parts.length === 0 ? null : Buffer.concat(parts), abortedTransactions: [] };
  }
  async offsetForTimestamp(): Promise<{ offset: bigint } | null> {
    return null;
  }
}

function setup(): { share: ShareGroups; log: MemoryLog; clock: ManualClock; waiters: PartitionWaiters; persister: MemoryShareStatePersister } {
  const clock = new ManualClock();
  const scheduler = new ManualScheduler(clock);
  const waiters = new PartitionWaiters(scheduler);
  const log = new MemoryLog();
  const persister = new MemoryShareStatePersister();
  const configs = new ShareGroupConfigs({ recordLockDurationMs: 30_000, minRecordLockDurationMs: 15_000, maxRecordLockDurationMs: 60_000, deliveryCountLimit: 5, maxRecordLocks: 2000, sessionTimeoutMs: 45_000, minSessionTimeoutMs: 45_000, maxSessionTimeoutMs: 60_000, heartbeatIntervalMs: 5_000, minHeartbeatIntervalMs: 5_000, maxHeartbeatIntervalMs: 15_000 }, null);
  const share = new ShareGroups({
    clock,
    scheduler,
    log: pino({ level: 'silent' }),
    waiters,
    persister,
    configs,
    maxSize: 10,
    maxShareSessions: 10,
    initializeRetryIntervalMs: 30_000,
    broker: {
      topicName: (id) => (id === TOPIC_ID ? 't' : undefined),
      topicByName: (n) => (n === 't' ? { topicId: TOPIC_ID, partitionCount: 1 } : undefined),
      partition: (t, p) => (t === 't' && p === 0 ? log : undefined),
      notLeader: () => null,
      otherGroupExists: () => false,
    },
  });
  return { share, log, clock, waiters, persister };
}

function params(epoch: number, extra: Partial<ShareFetchParams> = {}): ShareFetchParams {
  return {
    groupId: 'g', memberId: 'm', shareSessionEpoch: epoch, maxWaitMs: 0, minBytes: 1, maxBytes: 1 << 20, maxRecords: 500,
    acquireMode: 'batch_optimized', isRenewAck: false, renewAllowed: true,
    topics: [{ topicId: TOPIC_ID, partitions: [{ partitionIndex: 0, acknowledgementBatches: [] }] }],
    forgotten: [], connectionId: 1, signal: new AbortController().signal, ...extra,
  };
}

const ack = (first: number, last: number, type: number) => [{ topicId: TOPIC_ID, partitions: [{ partitionIndex: 0, acknowledgementBatches: [{ firstOffset: BigInt(first), lastOffset: BigInt(last), acknowledgeTypes: [type] }] }] }];

test('a session opens at epoch 0, acquires, and the next epoch acknowledges; acknowledgements in an initial fetch are refused', async () => {
  const { share, log } = setup();
  await share.configs.alter('g', [{ name: 'share.auto.offset.reset', op: 0, value: 'earliest' }], false);
  log.append(['a', 'b', 'c']);
  assert.equal((await share.fetch(params(0, { topics: ack(0, 0, 1) }))).errorCode, ErrorCode.INVALID_REQUEST);
  const first = await share.fetch(params(0));
  assert.equal(first.errorCode, 0);
  assert.deepEqual(first.partitions[0]!.acquired, [{ firstOffset: 0n, lastOffset: 2n, deliveryCount: 1 }]);
  assert.ok(first.partitions[0]!.records.length > 0);
  assert.equal((await share.fetch(params(5))).errorCode, ErrorCode.INVALID_SHARE_SESSION_EPOCH);
  const second = await share.fetch(params(1, { topics: ack(0, 1, 1) }));
  assert.equal(second.partitions[0]!.acknowledgeErrorCode, 0);
  assert.deepEqual(second.partitions[0]!.acquired, [], 'offset 2 is still held');
  assert.equal(share.partitions.loaded('g', TOPIC_ID, 0)!.startOffset, 2n);
  // An acknowledgement of a record not held: INVALID_RECORD_STATE for the partition, the fetch goes on.
  const third = await share.fetch(params(2, { topics: ack(0, 0, 1) }));
  assert.equal(third.partitions[0]!.acknowledgeErrorCode, ErrorCode.INVALID_RECORD_STATE);
});

test('the final epoch acknowledges, closes the session and releases what the member still holds', async () => {
  const { share, log } = setup();
  await share.configs.alter('g', [{ name: 'share.auto.offset.reset', op: 0, value: 'earliest' }], false);
  log.append(['a', 'b', 'c']);
  await share.fetch(params(0));
  const r = await share.acknowledge({ groupId: 'g', memberId: 'm', shareSessionEpoch: -1, topics: ack(0, 0, 1), connectionId: 1, renewAllowed: true });
  assert.equal(r.errorCode, 0);
  assert.equal(share.sessions.size, 0);
  const sp = share.partitions.loaded('g', TOPIC_ID, 0)!;
  assert.equal(sp.startOffset, 1n);
  assert.equal(sp.nextFetchOffset(), 1n, 'b and c are available again');
  assert.equal((await share.acknowledge({ groupId: 'g', memberId: 'm', shareSessionEpoch: 0, topics: [], connectionId: 1, renewAllowed: true })).errorCode, ErrorCode.INVALID_SHARE_SESSION_EPOCH);
  assert.equal((await share.acknowledge({ groupId: 'g', memberId: 'm', shareSessionEpoch: 3, topics: [], connectionId: 1, renewAllowed: true })).errorCode, ErrorCode.SHARE_SESSION_NOT_FOUND);
});

test('latest (the default) starts at the high watermark; a long poll wakes on the next append', async () => {
  const { share, log, waiters, persister } = setup();
  log.append(['old-1', 'old-2']);
  const parked = waiters.nextParked();
  const pending = share.fetch(params(0, { maxWaitMs: 10_000 }));
  await parked;
  log.append(['new']);
  waiters.notify('t', 0);
  const r = await pending;
  assert.deepEqual(r.partitions[0]!.acquired, [{ firstOffset: 2n, lastOffset: 2n, deliveryCount: 1 }]);
  assert.deepEqual((await persister.read('g', TOPIC_ID, 0))?.startOffset, 2n, 'the initial state was persisted');
});

test('renew is refused below v2; a renewing request only acknowledges', async () => {
  const { share, log } = setup();
  await share.configs.alter('g', [{ name: 'share.auto.offset.reset', op: 0, value: 'earliest' }], false);
  log.append(['a']);
  await share.fetch(params(0));
  const v1 = await share.fetch(params(1, { topics: ack(0, 0, 4), renewAllowed: false }));
  assert.equal(v1.partitions[0]!.acknowledgeErrorCode, ErrorCode.INVALID_REQUEST);
  log.append(['b']);
  const renew = await share.fetch(params(2, { topics: ack(0, 0, 4), isRenewAck: true }));
  assert.equal(renew.partitions[0]!.acknowledgeErrorCode, 0);
  assert.deepEqual(renew.partitions[0]!.acquired, [], 'nothing new acquired with a renew');
});

test('a closed connection ends its share sessions and releases their records', async () => {
  const { share, log } = setup();
  await share.configs.alter('g', [{ name: 'share.auto.offset.reset', op: 0, value: 'earliest' }], false);
  log.append(['a', 'b']);
  const conn = new AbortController();
  await share.fetch(params(0, { signal: conn.signal, connectionId: 9 }));
  assert.equal(share.partitions.loaded('g', TOPIC_ID, 0)!.acquiredCount, 2);
  conn.abort();
  await new Promise((r) => setImmediate(r));
  assert.equal(share.sessions.size, 0);
  assert.equal(share.partitions.loaded('g', TOPIC_ID, 0)!.acquiredCount, 0);
});
