import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { crc32c } from '@node-rs/crc32';
import fc from 'fast-check';
import {
  BATCH_HEADER_SIZE,
  LOG_OVERHEAD,
  OFFSET_ATTRIBUTES,
  OFFSET_BATCH_LENGTH,
  OFFSET_CRC,
  OFFSET_MAGIC,
  buildRecordBatch,
  computeBatchCrc,
} from '../../../broker/protocol/record-batch.js';
import type { BatchVerdict } from '../../../remote-log/objects/batch-crc-scanner.js';
import { BatchCrcScanner } from '../../../remote-log/objects/batch-crc-scanner.js';
import { ChunkedDataWriter } from '../../../remote-log/objects/chunked-zstd.js';
import { prng, segmentBytes } from '../remote-storage.contract.js';

/** Batches with random header fields and bodies, each with a correct CRC; returns the data and each batch's position. */
function batches(bodySizes: readonly number[], seed: number): { data: Buffer; positions: number[] } {
  const rnd = prng(seed);
  const parts: Buffer[] = [];
  const positions: number[] = [];
  let pos = 0;
  for (const body of bodySizes) {
    const b = Buffer.alloc(BATCH_HEADER_SIZE + body);
    for (let i = 0; i < b.length; i++) b[i] = Math.floor(rnd() * 256);
    b.writeInt32BE(b.length - LOG_OVERHEAD, OFFSET_BATCH_LENGTH);
    b.writeInt8(2, OFFSET_MAGIC);
    b.writeUInt32BE(computeBatchCrc(b, 0, b.length), OFFSET_CRC);
    parts.push(b);
    positions.push(pos);
    pos += b.length;
  }
  return { data: Buffer.concat(parts), positions };
}

/** The per-batch check done directly (as reads do it): the position of the first bad batch, or undefined. */
function firstBadBatch(data: Buffer): number | undefined {
  let pos = 0;
  while (pos < data.length) {
    if (pos + OFFSET_ATTRIBUTES > data.length) return pos;
    const size = data.readInt32BE(pos + OFFSET_BATCH_LENGTH) + LOG_OVERHEAD;
    if (data.readInt8(pos + OFFSET_MAGIC) !== 2 || size < BATCH_HEADER_SIZE || pos + size > data.length) return pos;
    if (computeBatchCrc(data, pos, size) !== data.readUInt32BE(pos + OFFSET_CRC)) return pos;
    pos += size;
  }
  return undefined;
}

/**
 * Feeds `data` in `chunkSize` chunks through one reused buffer (as segment
 * reads do, so the scanner must not keep references), checking each returned CRC.
 */
function scan(data: Buffer, chunkSize: number): BatchVerdict {
  const scanner = new BatchCrcScanner();
  const scratch = Buffer.alloc(chunkSize);
  for (let p = 0; p < data.length; p += chunkSize) {
    const chunk = scratch.subarray(0, Math.min(chunkSize, data.length - p));
    data.copy(chunk, 0, p, p + chunk.length);
    assert.equal(scanner.update(chunk), crc32c(chunk), `crc of the chunk at ${p}`);
    scratch.fill(0xee);
  }
  return scanner.finish();
}

const positionOf = (v: BatchVerdict): number | undefined => (v.verified ? undefined : v.problem.position);

const layout = fc.record({
  bodies: fc.array(fc.oneof(fc.integer({ min: 0, max: 40 }), fc.integer({ min: 0, max: 3000 })), { maxLength: 25 }),
  seed: fc.integer(),
  chunkSize: fc.oneof(fc.integer({ min: 1, max: 30 }), fc.integer({ min: 1, max: 5000 })),
});

describe('BatchCrcScanner', () => {
  it('gives each chunk its crc32c and verifies intact batches, for any layout and chunk size', () => {
    fc.assert(
      fc.property(layout, ({ bodies, seed, chunkSize }) => {
        const { data } = batches(bodies, seed);
        assert.deepEqual(scan(data, chunkSize), { verified: true });
      }),
      { numRuns: 300 },
    );
  });

  it('agrees with a direct per-batch check wherever a byte is corrupted', () => {
    fc.assert(
      fc.property(layout, fc.nat(), fc.integer({ min: 1, max: 255 }), fc.option(fc.nat()), ({ bodies, seed, chunkSize }, where, mask, other) => {
        const { data, positions } = batches(bodies.length === 0 ? [0] : bodies, seed);
        const at = where % data.length;
        data[at] = (data[at] as number) ^ mask;
        if (other !== null) {
          // A second corruption at or after the first: the first bad batch is still the one named.
          const at2 = at + (other % (data.length - at));
          data[at2] = (data[at2] as number) ^ 0x21;
        }
        const verdict = scan(data, chunkSize);
        assert.equal(positionOf(verdict), firstBadBatch(data));
        if (other !== null) return;
        // Which batch the byte is in, and where in it.
        let i = positions.length - 1;
        while ((positions[i] as number) > at) i--;
        const rel = at - (positions[i] as number);
        if (rel >= OFFSET_CRC) assert.equal(positionOf(verdict), positions[i], 'a flip in the CRC or the bytes it covers fails that batch');
        if (rel < OFFSET_BATCH_LENGTH || (rel >= OFFSET_BATCH_LENGTH + 4 && rel < OFFSET_MAGIC)) {
          assert.equal(verdict.verified, true, 'baseOffset and partitionLeaderEpoch are outside the CRC');
        }
      }),
      { numRuns: 500 },
    );
  });

  it('verifies the batches the broker writes, compressed or not', () => {
    const parts: Buffer[] = [];
    for (const compression of ['none', 'gzip', 'zstd', 'lz4', 'snappy'] as const) {
      const records = Array.from({ length: 30 }, (_, i) => ({ key: `k${i}`, value: `value ${i}`.repeat(20), timestamp: 1_700_000_000_000 + i }));
      parts.push(buildRecordBatch({ records, compression, baseOffset: BigInt(parts.length * 30) }));
    }
    const data = Buffer.concat(parts);
    for (const chunkSize of [1, 7, 61, 100, 4096, data.length]) assert.deepEqual(scan(data, chunkSize), { verified: true });
  });

  it('says where the data stops being whole batches', () => {
    assert.deepEqual(scan(Buffer.alloc(0), 10), { verified: true });
    const { data, positions } = batches([100, 5, 300], 7);
    const last = positions[2] as number;
    for (const cut of [last + 1, last + OFFSET_ATTRIBUTES, data.length - 1]) {
      const v = scan(data.subarray(0, cut), 64);
      assert.equal(positionOf(v), last, `cut at ${cut}`);
      assert.match(v.verified ? '' : v.problem.reason, /data ends/);
    }
    const text = scan(segmentBytes(5000, 3), 1000);
    assert.equal(positionOf(text), 0, 'text is not batches');
    const magic = Buffer.from(data);
    magic.writeInt8(1, positions[1]! + OFFSET_MAGIC);
    assert.deepEqual(scan(magic, 50), { verified: false, problem: { position: positions[1], reason: 'batch has magic 1' } });
    const short = Buffer.from(data);
    short.writeInt32BE(3, positions[1]! + OFFSET_BATCH_LENGTH);
    assert.deepEqual(scan(short, 50), { verified: false, problem: { position: positions[1], reason: 'batch declares an impossible length 3' } });
    const crc = Buffer.from(data);
    crc.writeUInt32BE((crc.readUInt32BE(positions[2]! + OFFSET_CRC) ^ 1) >>> 0, positions[2]! + OFFSET_CRC);
    const bad = scan(crc, 4096);
    assert.equal(positionOf(bad), positions[2]);
    assert.match(bad.verified ? '' : bad.problem.reason, /does not match its header/);
  });
});

describe('ChunkedDataWriter batch verification', () => {
  it('records the chunk CRCs of what it stores and the batch verdict, raw or zstd', () => {
    fc.assert(
      fc.property(layout, fc.boolean(), fc.constantFrom<'none' | 'zstd-chunked'>('none', 'zstd-chunked'), ({ bodies, seed, chunkSize }, corrupt, compression) => {
        const { data } = batches(bodies, seed);
        if (corrupt && data.length > 0) data[data.length - 1] = (data[data.length - 1] as number) ^ 0x80;
        const w = new ChunkedDataWriter(chunkSize, compression, 1);
        const stored: Buffer[] = [];
        for (let p = 0; p < data.length; p += chunkSize) stored.push(Buffer.from(w.add(data.subarray(p, p + chunkSize))));
        assert.deepEqual(w.layout().chunkCrcs, stored.map((s) => crc32c(s)));
        assert.equal(w.storedCrc32c, crc32c(Buffer.concat(stored)));
        assert.equal(w.batchVerdict().verified, !(corrupt && data.length > 0));
      }),
      { numRuns: 100 },
    );
  });
});
