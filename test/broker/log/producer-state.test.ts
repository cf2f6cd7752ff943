import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { ErrorCode, KafkaError } from '../../../broker/protocol/errors.js';
import { decodeProducerSnapshot, encodeProducerSnapshot } from '../../../broker/log/producer-snapshots.js';
import { ProducerStateEntry, decrementSequence, incrementSequence } from '../../../broker/log/producer-state.js';
import { buildEndTxnMarkerBatch } from '../../../broker/protocol/record-batch.js';
import { batch, openLog, readAll, tempDir, values } from './helpers.js';

const client = { leaderEpoch: 0, isFromClient: true };
const code = (c: number) => (e: unknown) => e instanceof KafkaError && e.code === c;

describe('producer state', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => ({ dir, cleanup } = await tempDir()));
  afterEach(async () => cleanup());

  it('wraps sequence numbers at Int32.MAX', () => {
    assert.equal(incrementSequence(0x7fffffff, 1), 0);
    assert.equal(incrementSequence(0x7ffffffe, 3), 1);
    assert.equal(decrementSequence(1, 3), 0x7ffffffe);
    assert.equal(decrementSequence(10, 3), 7);
  });

  it('returns the original offsets for a duplicate batch and appends nothing', async () => {
    const { log } = await openLog(dir);
    const pid = 7n;
    const first = await log.append(batch({ producerId: pid, producerEpoch: 0, baseSequence: 0, count: 2 }), client);
    await log.append(batch({ producerId: pid, producerEpoch: 0, baseSequence: 2, count: 3 }), client);
    const dup = await log.append(batch({ producerId: pid, producerEpoch: 0, baseSequence: 0, count: 2 }), client);
    assert.equal(dup.duplicate, true);
    assert.deepEqual([dup.baseOffset, dup.lastOffset], [first.baseOffset, first.lastOffset]);
    assert.equal(log.logEndOffset, 5n);
    await log.close();
  });

  it('detects duplicates among the last five batches only', async () => {
    const { log } = await openLog(dir);
    const pid = 9n;
    for (let i = 0; i < 6; i++) await log.append(batch({ producerId: pid, producerEpoch: 1, baseSequence: i }), client);
    // seq 0 fell out of the window: it is now out of order, not a duplicate.
    await assert.rejects(log.append(batch({ producerId: pid, producerEpoch: 1, baseSequence: 0 }), client), code(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER));
    const dup = await log.append(batch({ producerId: pid, producerEpoch: 1, baseSequence: 1 }), client);
    assert.deepEqual([dup.duplicate, dup.baseOffset], [true, 1n]);
    await log.close();
  });

  it('rejects gaps in sequence numbers, fences older epochs, and needs sequence 0 on a new epoch', async () => {
    const { log } = await openLog(dir);
    const pid = 3n;
    await log.append(batch({ producerId: pid, producerEpoch: 2, baseSequence: 0 }), client);
    await assert.rejects(log.append(batch({ producerId: pid, producerEpoch: 2, baseSequence: 5 }), client), code(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER));
    await assert.rejects(log.append(batch({ producerId: pid, producerEpoch: 1, baseSequence: 1 }), client), code(ErrorCode.INVALID_PRODUCER_EPOCH));
    await assert.rejects(log.append(batch({ producerId: pid, producerEpoch: 3, baseSequence: 1 }), client), code(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER));
    await log.append(batch({ producerId: pid, producerEpoch: 3, baseSequence: 0 }), client);
    assert.equal(log.logEndOffset, 2n);
    await log.close();
  });

  it('accepts any first sequence from an unknown producer (Kafka 4)', async () => {
    const { log } = await openLog(dir);
    const r = await log.append(batch({ producerId: 11n, producerEpoch: 0, baseSequence: 42 }), client);
    assert.equal(r.duplicate, false);
    await log.append(batch({ producerId: 11n, producerEpoch: 0, baseSequence: 43 }), client);
    await log.close();
  });

  it('restores producer state from the snapshot after a clean restart and by replay after a crash', async () => {
    const { log, clock } = await openLog(dir, { segmentBytes: 600 });
    const pid = 5n;
    for (let i = 0; i < 8; i++) await log.append(batch({ producerId: pid, producerEpoch: 0, baseSequence: i, valueSize: 100 }), client);
    await log.close();
    const { log: clean } = await openLog(dir, { segmentBytes: 600 }, { clock, cleanShutdown: true });
    const dup = await clean.append(batch({ producerId: pid, producerEpoch: 0, baseSequence: 7, valueSize: 100 }), client);
    assert.deepEqual([dup.duplicate, dup.baseOffset], [true, 7n]);
    await assert.rejects(clean.append(batch({ producerId: pid, producerEpoch: 0, baseSequence: 9 }), client), code(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER));
    await clean.append(batch({ producerId: pid, producerEpoch: 0, baseSequence: 8 }), client);
    await clean.flush();
    // No close: the next open is unclean and replays from the last roll snapshot.
    const { log: crashed } = await openLog(dir, { segmentBytes: 600 }, { clock, cleanShutdown: false, recoveryPoint: 0n });
    const dup2 = await crashed.append(batch({ producerId: pid, producerEpoch: 0, baseSequence: 8 }), client);
    assert.deepEqual([dup2.duplicate, dup2.baseOffset], [true, 8n]);
    await crashed.close();
  });

  it('encodes snapshots in Kafka format and rejects a bad CRC', () => {
    const e = new ProducerStateEntry(1n, 2, 3, 1000n, -1n, [{ lastSeq: 9, lastOffset: 100n, offsetDelta: 4, timestamp: 1000n }]);
    const bytes = encodeProducerSnapshot([e]);
    assert.equal(bytes.length, 6 + 4 + 46);
    assert.equal(bytes.readInt16BE(0), 1);
    const [back] = decodeProducerSnapshot(bytes);
    assert.equal(back?.lastSeq, 9);
    assert.equal(back?.lastDataOffset, 100n);
    assert.equal(back?.producerEpoch, 2);
    bytes.writeUInt8((bytes[20] ?? 0) ^ 0xff, 20);
    assert.throws(() => decodeProducerSnapshot(bytes), { name: 'CorruptSnapshotError', message: /^snapshot CRC \d+ does not match computed \d+$/ });
  });

  it('tracks open transactions for the last stable offset and indexes aborts', async () => {
    const { log, clock } = await openLog(dir);
    await log.append(batch({ count: 2 }), client);
    const t = await log.append(batch({ producerId: 20n, producerEpoch: 0, baseSequence: 0, transactional: true, count: 2 }), client);
    assert.equal(t.baseOffset, 2n);
    await log.append(batch({ count: 1 }), client);
    assert.equal(log.firstUnstableOffset, 2n);
    assert.equal(log.lastStableOffset, 2n);
    assert.equal(log.highWatermark, 5n);
    await assert.rejects(
      log.append(buildEndTxnMarkerBatch({ type: 'ABORT', coordinatorEpoch: 0, producerId: 20n, producerEpoch: 0, timestamp: clock.now() }), client),
      code(ErrorCode.INVALID_RECORD),
    );
    const m = await log.append(buildEndTxnMarkerBatch({ type: 'ABORT', coordinatorEpoch: 0, producerId: 20n, producerEpoch: 0, timestamp: clock.now() }), {
      leaderEpoch: 0,
      isFromClient: false,
    });
    assert.equal(m.baseOffset, 5n);
    assert.equal(log.firstUnstableOffset, null);
    assert.equal(log.lastStableOffset, 6n);
    assert.deepEqual(log.collectAbortedTransactions(0n, 6n), [{ producerId: 20n, firstOffset: 2n, lastOffset: 5n, lastStableOffset: 6n }]);
    assert.deepEqual(values(await readAll(log)).length, 5 + 1);
    await log.close();
  });

  it('refuses a marker from a coordinator epoch below the last one seen for the producer (TRANSACTION_COORDINATOR_FENCED)', async () => {
    const { log, clock } = await openLog(dir);
    const broker = { leaderEpoch: 0, isFromClient: false };
    const marker = (coordinatorEpoch: number) => buildEndTxnMarkerBatch({ type: 'COMMIT', coordinatorEpoch, producerId: 30n, producerEpoch: 0, timestamp: clock.now() });
    await log.append(batch({ producerId: 30n, producerEpoch: 0, baseSequence: 0, transactional: true, count: 1 }), client);
    await log.append(marker(5), broker);
    await log.append(batch({ producerId: 30n, producerEpoch: 0, baseSequence: 1, transactional: true, count: 1 }), client);
    const end = log.logEndOffset;
    await assert.rejects(log.append(marker(4), broker), code(ErrorCode.TRANSACTION_COORDINATOR_FENCED));
    assert.equal(log.logEndOffset, end, 'the fenced marker is not appended');
    assert.equal(log.firstUnstableOffset, 2n, 'the transaction stays open');
    await log.append(marker(5), broker); // the same epoch is accepted, as Kafka
    assert.equal(log.firstUnstableOffset, null);
    await log.close();
  });
});
