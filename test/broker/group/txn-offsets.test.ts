// TxnOffsetCommit in the group coordinator: offsets written as a transactional
// batch, pending until the marker, committed on COMMIT, dropped on ABORT, and
// the same outcome when the coordinator replays __consumer_offsets.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ErrorCode, commitParams, startHarness } from './harness.js';
import type { OffsetCommitParams } from '../../../broker/group/types.js';

function txnCommit(producerId: bigint, offset: bigint, overrides: Partial<OffsetCommitParams> = {}): OffsetCommitParams & { producerId: bigint; producerEpoch: number } {
  return { ...commitParams(offset, { groupIdNotFoundSupported: false, ...overrides }, { committedLeaderEpoch: -1 }), producerId, producerEpoch: 0 };
}

async function committed(h: Awaited<ReturnType<typeof startHarness>>): Promise<bigint> {
  const [g] = h.coordinator.fetchOffsets([{ groupId: 'g', topics: [{ name: 't', partitionIndexes: [0] }] }]);
  return g!.topics[0]!.partitions[0]!.committedOffset;
}

test('pending until the marker; COMMIT makes it committed, ABORT drops it', async () => {
  const h = await startHarness();
  const partition = h.coordinator.partitionFor('g');
  const r = await h.coordinator.txnCommitOffsets(txnCommit(10n, 5n));
  assert.equal(r.topics[0]!.partitions[0]!.errorCode, ErrorCode.NONE);
  assert.equal(await committed(h), -1n);
  assert.equal(h.coordinator.hasPendingTxnOffset('g', 't', 0), true);
  assert.equal(h.log.records(partition).at(-1)?.producerId, 10n, 'written as the producer’s transactional record');
  h.log.appendMarker(partition, 10n, 'ABORT');
  await h.coordinator.completeTxnOffsets(10n, false);
  assert.equal(await committed(h), -1n);
  assert.equal(h.coordinator.hasPendingTxnOffset('g', 't', 0), false);

  await h.coordinator.txnCommitOffsets(txnCommit(10n, 7n));
  h.log.appendMarker(partition, 10n, 'COMMIT');
  await h.coordinator.completeTxnOffsets(10n, true);
  assert.equal(await committed(h), 7n);

  // An open transaction at "restart": replayed as pending, not committed.
  await h.coordinator.txnCommitOffsets(txnCommit(11n, 9n));
  await h.coordinator.close();
  const h2 = await startHarness({ log: h.log });
  assert.equal(await committed(h2), 7n, 'the aborted 5 and the open 9 are not committed');
  assert.equal(h2.coordinator.hasPendingTxnOffset('g', 't', 0), true);
  h.log.appendMarker(partition, 11n, 'COMMIT');
  await h2.coordinator.close();
  const h3 = await startHarness({ log: h.log });
  assert.equal(await committed(h3), 9n, 'the marker written later decides at replay');
  assert.equal(h3.coordinator.hasPendingTxnOffset('g', 't', 0), false);
  await h3.coordinator.close();
});

test('a transactional commit with a generation is validated against the group', async () => {
  const h = await startHarness();
  const r = await h.coordinator.txnCommitOffsets(txnCommit(10n, 5n, { generationId: 3, memberId: 'm' }));
  assert.equal(r.topics[0]!.partitions[0]!.errorCode, ErrorCode.ILLEGAL_GENERATION);
  assert.equal(h.coordinator.hasPendingTxnOffset('g', 't', 0), false);
  await h.coordinator.close();
});
