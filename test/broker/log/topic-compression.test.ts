// compression.type on the append path: a batch in another codec is stored
// rebuilt in the topic's (records identical, producer state intact: a retry is
// still a duplicate, the next sequence still follows); a batch already in the
// topic's codec is stored byte for byte; per-record errors name every bad record.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { ErrorCode, RecordValidationError } from '../../../broker/protocol/errors.js';
import { buildRecordBatch, decodeRecordBatches, type CompressionType } from '../../../broker/protocol/record-batch.js';
import { openLog, readAll, tempDir } from './helpers.js';

const client = { leaderEpoch: 0, isFromClient: true };

function producerBatch(compression: CompressionType, baseSequence: number, tag: string, count = 3): Buffer {
  return buildRecordBatch({
    records: Array.from({ length: count }, (_, i) => ({ key: `${tag}-k${i}`, value: `${tag}-v${i}`.repeat(10), headers: [{ key: 'h', value: `${i}` }], timestamp: 1_700_000_000_000 + i })),
    compression,
    producerId: 42n,
    producerEpoch: 3,
    baseSequence,
  });
}

describe('topic compression.type on append', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => ({ dir, cleanup } = await tempDir()));
  afterEach(async () => cleanup());

  it('rebuilds a gzip batch on a zstd topic, keeping records and producer state; a retry is still a duplicate', async () => {
    const { log } = await openLog(dir, { compression: { type: 'zstd', zstdLevel: 3 } });
    const first = producerBatch('gzip', 0, 'a');
    const retry = Buffer.from(first);
    const r1 = await log.append(first, client);
    const dup = await log.append(retry, client);
    assert.equal(dup.duplicate, true);
    assert.deepEqual([dup.baseOffset, dup.lastOffset], [r1.baseOffset, r1.lastOffset]);
    const r2 = await log.append(producerBatch('snappy', 3, 'b'), client);
    assert.deepEqual([r1.baseOffset, r2.baseOffset, r2.lastOffset], [0n, 3n, 5n]);
    // A sequence gap is still refused: the rebuilt batch carried the producer's sequence.
    await assert.rejects(log.append(producerBatch('gzip', 9, 'c'), client), (e: unknown) => (e as { code?: number }).code === ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
    const stored = decodeRecordBatches(Buffer.concat(await readAll(log)));
    assert.deepEqual(stored.map((b) => b.compression), ['zstd', 'zstd']);
    assert.deepEqual(stored.map((b) => [b.header.producerId, b.header.producerEpoch, b.header.baseSequence]), [[42n, 3, 0], [42n, 3, 3]]);
    assert.deepEqual(
      stored.flatMap((b) => b.records.map((r) => [r.offset, r.key?.toString(), r.value?.toString(), r.headers[0]?.value?.toString(), r.timestamp])),
      ['a', 'b'].flatMap((tag, n) => [0, 1, 2].map((i) => [BigInt(n * 3 + i), `${tag}-k${i}`, `${tag}-v${i}`.repeat(10), `${i}`, 1_700_000_000_000n + BigInt(i)])),
    );
    await log.close();
  });

  it('stores a batch already in the topic codec byte for byte, and everything on a producer topic', async () => {
    for (const [topic, batchCodec] of [['zstd', 'zstd'], ['producer', 'lz4'], ['none', 'none']] as const) {
      const sub = `${dir}/${topic}`;
      const { log } = await openLog(sub, { compression: { type: topic } });
      const b = producerBatch(batchCodec, 0, topic);
      await log.append(b, client); // offsets and leader epoch are written into `b` in place
      const [stored] = await readAll(log);
      assert.ok(stored?.equals(b), `${topic} topic, ${batchCodec} batch stored verbatim`);
      await log.close();
    }
  });

  it('uncompressed: a compressed batch is stored decompressed', async () => {
    const { log } = await openLog(dir, { compression: { type: 'none' } });
    await log.append(producerBatch('lz4', 0, 'u'), client);
    const [b] = decodeRecordBatches(Buffer.concat(await readAll(log)));
    assert.equal(b?.compression, 'none');
    assert.equal(b?.records.length, 3);
    await log.close();
  });

  it('a rebuilt batch over max.message.bytes is MESSAGE_TOO_LARGE', async () => {
    const { log } = await openLog(dir, { compression: { type: 'none' }, maxMessageBytes: 2000 });
    const big = buildRecordBatch({ records: [{ key: 'k', value: 'x'.repeat(5000) }], compression: 'gzip' });
    assert.ok(big.length < 2000);
    await assert.rejects(log.append(big, client), (e: unknown) => (e as { code?: number }).code === ErrorCode.MESSAGE_TOO_LARGE);
    assert.equal(log.logEndOffset, 0n);
    await log.close();
  });

  it('a compacted topic refuses keyless records with one record error each, naming the partition', async () => {
    const { log } = await openLog(dir, { cleanupPolicy: { delete: false, compact: true } });
    const b = buildRecordBatch({ records: [{ key: 'a', value: '1' }, { key: null, value: '2' }, { key: 'c', value: '3' }, { key: null, value: '4' }], compression: 'gzip' });
    await assert.rejects(log.append(b, client), (e: unknown) => {
      assert.ok(e instanceof RecordValidationError);
      assert.equal(e.code, ErrorCode.INVALID_RECORD);
      const m = 'Compacted topic cannot accept message without key in topic partition topic-0';
      assert.deepEqual(e.recordErrors, [{ batchIndex: 1, message: m }, { batchIndex: 3, message: m }]);
      assert.equal(e.message, `One or more records have been rejected due to 2 record errors in total, and only showing the first three errors at most: [RecordError(batchIndex=1, message='${m}'), RecordError(batchIndex=3, message='${m}')]`);
      return true;
    });
    assert.equal(log.logEndOffset, 0n);
    await log.close();
  });
});
