// The share-partition state machine under a ManualClock: acquisition,
// acknowledgement types, lock expiry, delivery limits, the in-flight window,
// markers, gaps and aborted transactions, and the persisted form.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../../broker/common/clock.js';
import { abortedOffsetRanges, AcknowledgeType as A, SharePartition, type BatchInfo, type SharePartitionConfig } from '../../../broker/share/share-partition.js';
import { ErrorCode, KafkaError } from '../../../broker/protocol/errors.js';

const CONFIG: SharePartitionConfig = { recordLockDurationMs: 30_000, deliveryCountLimit: 5, maxInFlightRecords: 2000 };

function batch(baseOffset: number, lastOffset: number, extra: Partial<BatchInfo> = {}): BatchInfo {
  return { baseOffset: BigInt(baseOffset), lastOffset: BigInt(lastOffset), isControl: false, isTransactional: false, producerId: -1n, ...extra };
}

function make(config: Partial<SharePartitionConfig> = {}, startOffset = 0n): { sp: SharePartition; clock: ManualClock } {
  const clock = new ManualClock();
  return { sp: new SharePartition('g', 'topic-id', 0, { ...CONFIG, ...config }, clock, { startOffset, stateBatches: [] }), clock };
}

function ack(first: number, last: number, type: number): { firstOffset: bigint; lastOffset: bigint; acknowledgeTypes: number[] } {
  return { firstOffset: BigInt(first), lastOffset: BigInt(last), acknowledgeTypes: [type] };
}

function rejects(fn: () => void, code: number): void {
  assert.throws(fn, (e: unknown) => e instanceof KafkaError && e.code === code);
}

test('acquire hands out new batches once; a second member gets nothing while they are locked', () => {
  const { sp } = make();
  assert.deepEqual(sp.acquire('m1', [batch(0, 4), batch(5, 9)], 500, 'batch_optimized'), [{ firstOffset: 0n, lastOffset: 9n, deliveryCount: 1 }]);
  assert.equal(sp.startOffset, 0n);
  assert.equal(sp.endOffset, 9n);
  assert.equal(sp.nextFetchOffset(), 10n);
  assert.deepEqual(sp.acquire('m2', [batch(0, 4), batch(5, 9)], 500, 'batch_optimized'), []);
  assert.equal(sp.acquiredCount, 10);
});

test('batch_optimized never splits a batch; record_limit stops at MaxRecords exactly', () => {
  const a = make().sp;
  assert.deepEqual(a.acquire('m', [batch(0, 4), batch(5, 9)], 3, 'batch_optimized'), [{ firstOffset: 0n, lastOffset: 4n, deliveryCount: 1 }]);
  const b = make().sp;
  assert.deepEqual(b.acquire('m', [batch(0, 4), batch(5, 9)], 3, 'record_limit'), [{ firstOffset: 0n, lastOffset: 2n, deliveryCount: 1 }]);
  assert.equal(b.nextFetchOffset(), 3n, 'the rest of the batch was never acquired');
  assert.deepEqual(b.acquire('m2', [batch(0, 4)], 10, 'record_limit'), [{ firstOffset: 3n, lastOffset: 4n, deliveryCount: 1 }]);
});

test('accept moves the start past acknowledged records; acknowledging twice is INVALID_RECORD_STATE', () => {
  const { sp } = make();
  sp.acquire('m', [batch(0, 9)], 500, 'batch_optimized');
  sp.acknowledge('m', [ack(0, 4, A.ACCEPT)]);
  assert.equal(sp.startOffset, 5n);
  assert.equal(sp.stateOf(3n), 'done');
  rejects(() => sp.acknowledge('m', [ack(4, 4, A.ACCEPT)]), ErrorCode.INVALID_RECORD_STATE);
  sp.acknowledge('m', [ack(5, 9, A.ACCEPT)]);
  assert.equal(sp.startOffset, 10n);
  assert.equal(sp.endOffset, 9n, 'an empty window');
});

test('a member may not acknowledge records acquired by another; nothing changes on a failed request', () => {
  const { sp } = make();
  sp.acquire('m1', [batch(0, 4)], 500, 'batch_optimized');
  sp.acquire('m2', [batch(5, 9)], 500, 'batch_optimized');
  rejects(() => sp.acknowledge('m1', [ack(0, 4, A.ACCEPT), ack(5, 5, A.ACCEPT)]), ErrorCode.INVALID_RECORD_STATE);
  assert.equal(sp.startOffset, 0n, 'the valid part was not applied either');
  assert.deepEqual(sp.stateOf(0n), { state: 'acquired', deliveryCount: 1, memberId: 'm1' });
});

test('per-offset types, and malformed batches are INVALID_REQUEST', () => {
  const { sp } = make();
  sp.acquire('m', [batch(0, 3)], 500, 'batch_optimized');
  rejects(() => sp.acknowledge('m', [{ firstOffset: 0n, lastOffset: 3n, acknowledgeTypes: [1, 1] }]), ErrorCode.INVALID_REQUEST);
  rejects(() => sp.acknowledge('m', [ack(0, 0, 9)]), ErrorCode.INVALID_REQUEST);
  rejects(() => sp.acknowledge('m', [ack(3, 2, A.ACCEPT)]), ErrorCode.INVALID_REQUEST);
  sp.acknowledge('m', [{ firstOffset: 0n, lastOffset: 3n, acknowledgeTypes: [A.ACCEPT, A.RELEASE, A.REJECT, A.GAP] }]);
  assert.equal(sp.startOffset, 1n);
  assert.deepEqual(sp.stateOf(1n), { state: 'available', deliveryCount: 1, memberId: null });
  assert.deepEqual(sp.stateOf(2n), { state: 'archived', deliveryCount: 1, memberId: null });
  assert.deepEqual(sp.stateOf(3n), { state: 'archived', deliveryCount: 1, memberId: null });
  assert.equal(sp.nextFetchOffset(), 1n, 'the released record is fetched again');
  assert.deepEqual(sp.acquire('m2', [batch(0, 3)], 500, 'batch_optimized'), [{ firstOffset: 1n, lastOffset: 1n, deliveryCount: 2 }]);
});

test('an acquisition lock expires after group.share.record.lock.duration.ms; the record is redelivered to someone else', () => {
  const { sp, clock } = make();
  sp.acquire('m1', [batch(0, 1)], 500, 'batch_optimized');
  assert.equal(sp.nextLockExpiry(), clock.now() + 30_000);
  clock.advance(29_999);
  assert.equal(sp.expireLocks(), 0);
  clock.advance(1);
  assert.equal(sp.expireLocks(), 2);
  rejects(() => sp.acknowledge('m1', [ack(0, 1, A.ACCEPT)]), ErrorCode.INVALID_RECORD_STATE);
  assert.deepEqual(sp.acquire('m2', [batch(0, 1)], 500, 'batch_optimized'), [{ firstOffset: 0n, lastOffset: 1n, deliveryCount: 2 }]);
});

test('renew restarts the lock without releasing the record', () => {
  const { sp, clock } = make();
  sp.acquire('m', [batch(0, 0)], 500, 'batch_optimized');
  clock.advance(20_000);
  sp.acknowledge('m', [ack(0, 0, A.RENEW)]);
  clock.advance(20_000);
  assert.equal(sp.expireLocks(), 0);
  assert.deepEqual(sp.stateOf(0n), { state: 'acquired', deliveryCount: 1, memberId: 'm' });
  clock.advance(10_000);
  assert.equal(sp.expireLocks(), 1);
});

test('a record is archived when released at group.share.delivery.count.limit', () => {
  const { sp, clock } = make({ deliveryCountLimit: 3 });
  for (let delivery = 1; delivery <= 3; delivery++) {
    assert.deepEqual(sp.acquire(`m${delivery}`, [batch(0, 0), batch(1, 1)], 500, 'batch_optimized')[0], { firstOffset: 0n, lastOffset: delivery === 1 ? 1n : 0n, deliveryCount: delivery });
    if (delivery === 1) sp.acknowledge('m1', [ack(1, 1, A.ACCEPT)]);
    if (delivery === 2) {
      clock.advance(30_000);
      sp.expireLocks();
    } else {
      sp.acknowledge(`m${delivery}`, [ack(0, 0, A.RELEASE)]);
    }
  }
  assert.equal(sp.stateOf(0n), 'done', 'archived at the third delivery, and the window moved on');
  assert.equal(sp.startOffset, 2n);
  assert.deepEqual(sp.acquire('m4', [batch(0, 0), batch(1, 1)], 500, 'batch_optimized'), []);
});

test('no new records are acquired while the window holds group.share.partition.max.record.locks offsets', () => {
  const { sp } = make({ maxInFlightRecords: 10 });
  sp.acquire('m', [batch(0, 9)], 500, 'batch_optimized');
  assert.equal(sp.canAcquire(), false);
  assert.deepEqual(sp.acquire('m', [batch(10, 19)], 500, 'batch_optimized'), []);
  sp.acknowledge('m', [ack(5, 5, A.RELEASE)]);
  assert.equal(sp.canAcquire(), true, 'a released record can be redelivered');
  sp.acknowledge('m', [ack(0, 4, A.ACCEPT)]);
  assert.deepEqual(sp.acquire('m', [batch(5, 5), batch(6, 9), batch(10, 19)], 500, 'batch_optimized'), [
    { firstOffset: 5n, lastOffset: 5n, deliveryCount: 2 },
    { firstOffset: 10n, lastOffset: 19n, deliveryCount: 1 },
  ]);
});

test('releaseMember makes a departed member\'s records available again', () => {
  const { sp } = make();
  sp.acquire('m1', [batch(0, 2)], 500, 'batch_optimized');
  sp.acquire('m2', [batch(3, 4)], 500, 'batch_optimized');
  assert.equal(sp.releaseMember('m1'), 3);
  assert.equal(sp.nextFetchOffset(), 0n);
  assert.deepEqual(sp.stateOf(3n), { state: 'acquired', deliveryCount: 1, memberId: 'm2' });
});

test('control batches and compaction gaps are archived, never delivered', () => {
  const { sp } = make();
  const got = sp.acquire('m', [batch(0, 1), batch(2, 2, { isControl: true, isTransactional: true, producerId: 7n }), batch(5, 6)], 500, 'batch_optimized');
  assert.deepEqual(got, [
    { firstOffset: 0n, lastOffset: 1n, deliveryCount: 1 },
    { firstOffset: 5n, lastOffset: 6n, deliveryCount: 1 },
  ]);
  assert.deepEqual(sp.stateOf(2n), { state: 'archived', deliveryCount: 0, memberId: null });
  assert.deepEqual(sp.stateOf(4n), { state: 'archived', deliveryCount: 0, memberId: null });
  sp.acknowledge('m', [ack(0, 1, A.ACCEPT), ack(5, 6, A.ACCEPT)]);
  assert.equal(sp.startOffset, 7n);
});

test('read_committed: the records of an aborted transaction are archived, committed ones delivered', () => {
  const batches = [
    batch(0, 1, { isTransactional: true, producerId: 1n }),
    batch(2, 3, { isTransactional: true, producerId: 2n }),
    batch(4, 4, { isControl: true, isTransactional: true, producerId: 1n }), // abort of 1
    batch(5, 5, { isControl: true, isTransactional: true, producerId: 2n }), // commit of 2
    batch(6, 7, { isTransactional: true, producerId: 1n }), // a later transaction of 1, committed
  ];
  const aborted = abortedOffsetRanges(batches, [{ producerId: 1n, firstOffset: 0n }]);
  assert.deepEqual(aborted, [{ firstOffset: 0n, lastOffset: 1n }]);
  const { sp } = make();
  assert.deepEqual(sp.acquire('m', batches, 500, 'batch_optimized', aborted), [
    { firstOffset: 2n, lastOffset: 3n, deliveryCount: 1 },
    { firstOffset: 6n, lastOffset: 7n, deliveryCount: 1 },
  ]);
  assert.equal(sp.startOffset, 2n);
});

test('a log start moving past available records archives them and moves the window', () => {
  const { sp } = make();
  sp.acquire('m', [batch(0, 9)], 500, 'batch_optimized');
  sp.acknowledge('m', [ack(0, 4, A.RELEASE)]);
  sp.updateLogStartOffset(3n);
  assert.equal(sp.startOffset, 3n);
  sp.acknowledge('m', [ack(5, 9, A.RELEASE)]);
  sp.updateLogStartOffset(20n);
  assert.equal(sp.startOffset, 20n);
  assert.equal(sp.nextFetchOffset(), 20n);
});

test('the persisted form round-trips; acquired records come back available with their delivery count', () => {
  const { sp, clock } = make();
  sp.acquire('m', [batch(0, 9)], 500, 'batch_optimized');
  sp.acknowledge('m', [ack(0, 1, A.ACCEPT), ack(2, 2, A.RELEASE), ack(3, 3, A.REJECT), ack(4, 4, A.ACCEPT)]);
  const persisted = sp.persistedState();
  assert.deepEqual(persisted, {
    startOffset: 2n,
    stateBatches: [
      { firstOffset: 2n, lastOffset: 2n, deliveryState: 0, deliveryCount: 1 },
      { firstOffset: 3n, lastOffset: 3n, deliveryState: 4, deliveryCount: 1 },
      { firstOffset: 4n, lastOffset: 4n, deliveryState: 2, deliveryCount: 1 },
      { firstOffset: 5n, lastOffset: 9n, deliveryState: 0, deliveryCount: 1 },
    ],
  });
  const again = new SharePartition('g', 'topic-id', 0, CONFIG, clock, persisted);
  assert.equal(again.startOffset, 2n);
  assert.equal(again.endOffset, 9n);
  assert.equal(again.acquiredCount, 0);
  assert.deepEqual(again.acquire('m2', [batch(0, 9)], 500, 'batch_optimized'), [
    { firstOffset: 2n, lastOffset: 2n, deliveryCount: 2 },
    { firstOffset: 5n, lastOffset: 9n, deliveryCount: 2 },
  ]);
  assert.equal(again.stateOf(4n) !== 'done' && again.stateOf(4n) !== 'new' ? (again.stateOf(4n) as { state: string }).state : '', 'acknowledged', 'an acknowledged record is not redelivered');
});

test('stateVersion changes on acknowledgements, not on acquisitions', () => {
  const { sp } = make();
  const v0 = sp.stateVersion;
  sp.acquire('m', [batch(0, 0)], 500, 'batch_optimized');
  assert.equal(sp.stateVersion, v0);
  sp.acknowledge('m', [ack(0, 0, A.ACCEPT)]);
  assert.notEqual(sp.stateVersion, v0);
});
