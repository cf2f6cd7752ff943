// The follower side of a partition log: appendAsFollower keeps the leader's
// batches byte for byte (offsets, partitionLeaderEpoch) and rebuilds producer
// state and the leader-epoch cache from them; truncateTo cuts a diverged tail
// and rebuilds both; a replicated high watermark bounds reads and the LSO.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { ErrorCode, KafkaError } from '../../../broker/protocol/errors.js';
import type { PartitionLog } from '../../../broker/log/partition-log.js';
import { batch, offsets, openLog, readAll, tempDir, values } from './helpers.js';
import path from 'node:path';

const PID = 7n;

async function copyAll(from: PartitionLog, to: PartitionLog): Promise<void> {
  while (to.logEndOffset < from.logEndOffset) {
    const r = await from.read(to.logEndOffset, 1 << 20, { maxOffset: from.logEndOffset, minOneBatch: true });
    for (const b of r.records) await to.appendAsFollower(Buffer.from(b));
  }
}

const isCode = (code: number) => (e: unknown) => e instanceof KafkaError && e.code === code;

describe('PartitionLog as a follower', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => ({ dir, cleanup } = await tempDir()));
  afterEach(async () => cleanup());

  it('appends the leader\'s batches verbatim and learns its epochs and producers', async () => {
    const { log: leader } = await openLog(path.join(dir, 'l'), { segmentBytes: 600 });
    const { log: follower } = await openLog(path.join(dir, 'f'), { segmentBytes: 600 });
    await leader.append(batch({ count: 3, producerId: PID, producerEpoch: 0, baseSequence: 0 }), { leaderEpoch: 0, isFromClient: true });
    await leader.append(batch({ count: 2, tag: 'x', valueSize: 100 }), { leaderEpoch: 0, isFromClient: true });
    await leader.append(batch({ count: 2, producerId: PID, producerEpoch: 0, baseSequence: 3, valueSize: 100 }), { leaderEpoch: 2, isFromClient: true });
    await copyAll(leader, follower);
    assert.equal(follower.logEndOffset, 7n);
    assert.deepEqual(Buffer.concat(await readAll(follower)), Buffer.concat(await readAll(leader)));
    assert.deepEqual(follower.leaderEpochEntries(), [{ epoch: 0, startOffset: 0n }, { epoch: 2, startOffset: 5n }]);
    assert.ok(follower.closedSegments().length >= 1, 'the follower rolled by segment.bytes');
    // As the new leader, the follower knows the producer: a retry is a duplicate, the next sequence goes in.
    const dup = await follower.append(batch({ count: 2, producerId: PID, producerEpoch: 0, baseSequence: 3, valueSize: 100 }), { leaderEpoch: 3, isFromClient: true });
    assert.equal(dup.duplicate, true);
    assert.equal(dup.baseOffset, 5n);
    const next = await follower.append(batch({ count: 1, producerId: PID, producerEpoch: 0, baseSequence: 5 }), { leaderEpoch: 3, isFromClient: true });
    assert.equal(next.baseOffset, 7n);
    await assert.rejects(
      follower.append(batch({ count: 1, producerId: PID, producerEpoch: 0, baseSequence: 9 }), { leaderEpoch: 3, isFromClient: true }),
      isCode(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER),
    );
    await leader.close();
    await follower.close();
  });

  it('refuses a batch below its log end or with a bad CRC and keeps its log', async () => {
    const { log: leader } = await openLog(path.join(dir, 'l'));
    const { log: follower } = await openLog(path.join(dir, 'f'));
    await leader.append(batch({ count: 2 }), { leaderEpoch: 0, isFromClient: true });
    await copyAll(leader, follower);
    const again = (await leader.read(0n, 1 << 20, { maxOffset: 2n, minOneBatch: true })).records[0] as Buffer;
    await assert.rejects(follower.appendAsFollower(Buffer.from(again)), isCode(ErrorCode.OFFSET_OUT_OF_RANGE));
    await leader.append(batch({ count: 1 }), { leaderEpoch: 0, isFromClient: true });
    const bad = Buffer.from((await leader.read(2n, 1 << 20, { maxOffset: 3n, minOneBatch: true })).records[0] as Buffer);
    bad[bad.length - 1] = (bad[bad.length - 1] as number) ^ 0xff;
    await assert.rejects(follower.appendAsFollower(bad), isCode(ErrorCode.CORRUPT_MESSAGE));
    assert.equal(follower.logEndOffset, 2n);
    assert.equal(follower.isOffline, false);
    // A partial trailing batch (a fetch cut at max bytes) is dropped, the whole ones go in.
    const good = (await leader.read(2n, 1 << 20, { maxOffset: 3n, minOneBatch: true })).records[0] as Buffer;
    assert.equal(await follower.appendAsFollower(Buffer.concat([good, good.subarray(0, 20)])), 3n);
    await leader.close();
    await follower.close();
  });

  it('truncates a diverged tail across segments, rebuilding producer state and epochs, and reopens consistent', async () => {
    const { log, clock } = await openLog(dir, { segmentBytes: 500 });
    for (let i = 0; i < 6; i++) {
      await log.append(batch({ count: 1, producerId: PID, producerEpoch: 0, baseSequence: i, valueSize: 150, tag: `s${i}` }), { leaderEpoch: i < 3 ? 1 : 2, isFromClient: true });
    }
    assert.ok(log.closedSegments().length >= 2);
    assert.deepEqual(log.leaderEpochEntries(), [{ epoch: 1, startOffset: 0n }, { epoch: 2, startOffset: 3n }]);
    assert.equal(await log.truncateTo(3n), 3n);
    assert.equal(log.logEndOffset, 3n);
    assert.deepEqual(values(await readAll(log)).map((v) => v.slice(0, 2)), ['s0', 's1', 's2']);
    assert.deepEqual(log.leaderEpochEntries(), [{ epoch: 1, startOffset: 0n }]);
    // The producer's last sequence went back with the log: sequence 3 is next again, not a duplicate or out of order.
    const r = await log.append(batch({ count: 1, producerId: PID, producerEpoch: 0, baseSequence: 3, tag: 'new' }), { leaderEpoch: 3, isFromClient: true });
    assert.equal(r.duplicate, false);
    assert.equal(r.baseOffset, 3n);
    await log.close();
    const { log: reopened } = await openLog(dir, { segmentBytes: 500 }, { clock });
    assert.equal(reopened.logEndOffset, 4n);
    assert.deepEqual(offsets(await readAll(reopened)), [0n, 1n, 2n, 3n]);
    assert.deepEqual(reopened.leaderEpochEntries(), [{ epoch: 1, startOffset: 0n }, { epoch: 3, startOffset: 3n }]);
    await reopened.close();
  });

  it('truncating at its log end keeps every batch but drops an epoch that starts there (it led without appending)', async () => {
    const { log, clock } = await openLog(dir);
    await log.append(batch({ count: 3 }), { leaderEpoch: 0, isFromClient: true });
    await log.assignEpochStartOffset(1);
    assert.deepEqual(log.leaderEpochEntries(), [{ epoch: 0, startOffset: 0n }, { epoch: 1, startOffset: 3n }]);
    assert.equal(await log.truncateTo(3n), 3n);
    assert.equal(log.logEndOffset, 3n);
    assert.deepEqual(log.leaderEpochEntries(), [{ epoch: 0, startOffset: 0n }]);
    await log.close();
    const { log: reopened } = await openLog(dir, {}, { clock });
    assert.deepEqual(reopened.leaderEpochEntries(), [{ epoch: 0, startOffset: 0n }], 'the checkpoint was written');
    await reopened.close();
  });

  it('empties itself to start at an offset (truncateFullyAndStartAt) and follows from there', async () => {
    const { log: leader } = await openLog(path.join(dir, 'l'));
    const { log: follower } = await openLog(path.join(dir, 'f'));
    await follower.append(batch({ count: 4 }), { leaderEpoch: 0, isFromClient: true });
    for (let i = 0; i < 3; i++) await leader.append(batch({ count: 5 }), { leaderEpoch: 1, isFromClient: true });
    await leader.deleteRecordsBefore(10n);
    await follower.truncateFullyAndStartAt(10n);
    assert.deepEqual([follower.logStartOffset, follower.logEndOffset], [10n, 10n]);
    assert.deepEqual(follower.leaderEpochEntries(), []);
    await copyAll(leader, follower);
    assert.deepEqual(offsets(await readAll(follower)), offsets(await readAll(leader, 10n)));
    await leader.close();
    await follower.close();
  });

  it('bounds reads and the LSO by a replicated high watermark that never exceeds the log end', async () => {
    const { log } = await openLog(dir);
    await log.append(batch({ count: 3 }), { leaderEpoch: 0, isFromClient: true });
    assert.equal(log.highWatermark, 3n);
    log.enableReplicatedHighWatermark();
    assert.equal(log.highWatermark, 0n);
    log.setHighWatermark(2n);
    assert.deepEqual([log.highWatermark, log.lastStableOffset], [2n, 2n]);
    log.setHighWatermark(10n);
    assert.equal(log.highWatermark, 3n);
    await log.truncateTo(1n);
    assert.equal(log.highWatermark, 0n, 'a batch straddling the offset goes whole');
    await log.close();
  });

  it('truncating to the log end drops an epoch that starts there with nothing in it (a leadership that appended nothing), as Kafka does', async () => {
    const { log } = await openLog(path.join(dir, 'x'));
    await log.append(batch({ count: 3 }), { leaderEpoch: 0, isFromClient: true });
    await log.assignEpochStartOffset(1); // became leader at epoch 1, then lost it before any append
    assert.equal(log.latestEpoch(), 1);
    assert.equal(await log.truncateTo(3n), 3n, 'no batch removed');
    assert.deepEqual(log.leaderEpochEntries(), [{ epoch: 0, startOffset: 0n }]);
    assert.equal(log.latestEpoch(), 0, 'the next fetch names epoch 0, which the leader agrees with');
    await log.close();
    const { log: reopened } = await openLog(path.join(dir, 'x'));
    assert.deepEqual(reopened.leaderEpochEntries(), [{ epoch: 0, startOffset: 0n }], 'the checkpoint was rewritten');
    await reopened.close();
  });
});
