import assert from 'node:assert/strict';
import { fstatSync, readSync } from 'node:fs';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { LogSegment, RESIDENT_READ_WINDOW_MS } from '../../../broker/log/log-segment.js';
import { releaseRegion, sendfileSupport } from '../../../broker/common/sendfile.js';
import { assignBaseOffset, buildRecordBatch } from '../../../broker/protocol/record-batch.js';
import { tempDir } from './helpers.js';

const binding = sendfileSupport;

/** Appends `appends` (each some batches of `count` records of `size` bytes) written at time `now`. */
async function segmentOf(dir: string, appends: { batches: { count: number; size: number }[] }[], indexIntervalBytes: number, now: number): Promise<LogSegment> {
  const seg = await LogSegment.create(dir, 1000n, { indexIntervalBytes, maxIndexBytes: 1 << 20 }, 0);
  let next = 1000n;
  for (const a of appends) {
    const parts = a.batches.map((b) => {
      const batch = buildRecordBatch({ records: Array.from({ length: b.count }, (_, i) => ({ value: Buffer.alloc(b.size, i), timestamp: 1 })) });
      const first = next;
      assignBaseOffset(batch, 0, first);
      next += BigInt(b.count);
      return batch;
    });
    const first = next - BigInt(a.batches.reduce((n, b) => n + b.count, 0));
    await seg.appendMany([{ records: Buffer.concat(parts), meta: { firstOffset: first, lastOffset: next - 1n, maxTimestamp: 1n, offsetOfMaxTimestamp: first } }], now);
  }
  return seg;
}

describe('LogSegment.readFile (the batches of read() as a file region, for sendfile)', () => {
  it('has the sendfile addon built (npm run build:native)', () => {
    assert.ok(binding !== null, 'broker/native/build/Release/sendfile.node did not load: run npm run build');
  });

  it('returns exactly the bytes read() returns, from batch headers and the offset index alone', { timeout: 300_000 }, async () => {
    assert.ok(binding !== null);
    const t0 = 5_000_000;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ batches: fc.array(fc.record({ count: fc.integer({ min: 1, max: 4 }), size: fc.integer({ min: 0, max: 3000 }) }), { minLength: 1, maxLength: 3 }) }), { minLength: 1, maxLength: 25 }),
        fc.constantFrom(100, 4096, 20_000),
        fc.array(fc.record({ start: fc.integer({ min: 0, max: 120 }), maxBytes: fc.integer({ min: 0, max: 40_000 }), minOneBatch: fc.boolean(), maxDelta: fc.integer({ min: 0, max: 120 }) }), { minLength: 1, maxLength: 8 }),
        async (appends, indexIntervalBytes, reads) => {
          const { dir, cleanup } = await tempDir('sediment-fileread-');
          const seg = await segmentOf(dir, appends, indexIntervalBytes, t0);
          try {
            for (const q of reads) {
              const startOffset = 1000n + BigInt(q.start);
              const maxOffset = startOffset + BigInt(q.maxDelta);
              const r = await seg.read(startOffset, q.maxBytes, seg.size, q.minOneBatch, maxOffset);
              const f = await seg.readFile(startOffset, q.maxBytes, seg.size, q.minOneBatch, maxOffset, binding, t0 + 1000);
              assert.ok(f !== undefined, 'recent bytes of batches with records: a region');
              if (r === null) {
                assert.equal(f, null);
                continue;
              }
              assert.ok(f !== null);
              assert.equal(f.firstOffset, r.firstOffset);
              if (r.records.length === 0) {
                assert.equal(f.file, null);
                continue;
              }
              assert.ok(f.file !== null);
              assert.equal(f.file.position, r.position);
              assert.equal(f.file.length, r.records.length);
              const bytes = Buffer.alloc(f.file.length);
              assert.equal(readSync(f.file.fd, bytes, 0, bytes.length, f.file.position), bytes.length);
              assert.ok(bytes.equals(r.records), 'the region holds the same bytes');
              releaseRegion(f.file);
            }
          } finally {
            await seg.close();
            await cleanup();
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  it('answers undefined for bytes written before the resident window (they may need the disk), and its region outlives the segment', async () => {
    assert.ok(binding !== null);
    const { dir, cleanup } = await tempDir('sediment-fileread-');
    try {
      const t0 = 1_000_000;
      const seg = await segmentOf(dir, [{ batches: [{ count: 2, size: 100 }] }, { batches: [{ count: 3, size: 50 }] }], 100, t0);
      const f = await seg.readFile(1000n, 1 << 20, seg.size, true, 2000n, binding, t0 + 1);
      assert.ok(f?.file != null);
      assert.equal(await seg.readFile(1000n, 1 << 20, seg.size, true, 2000n, binding, t0 + RESIDENT_READ_WINDOW_MS + 1), undefined);
      assert.equal(f.file.length, seg.size);
      await seg.delete();
      const bytes = Buffer.alloc(f.file.length);
      assert.equal(readSync(f.file.fd, bytes, 0, bytes.length, 0), seg.size, 'the region reads through its own descriptor after the segment is gone');
      releaseRegion(f.file);
      assert.throws(() => fstatSync(f.file!.fd), /EBADF/, 'released: its descriptor is closed');
    } finally {
      await cleanup();
    }
  });
});
