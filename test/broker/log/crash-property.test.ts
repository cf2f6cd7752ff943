// Property: whatever prefix of the written bytes survives a crash (a cut at any
// byte, later segments lost, indexes stale or damaged), reopening serves exactly
// the whole batches before the cut, with dense offsets, and appends continue
// right after them.
import assert from 'node:assert/strict';
import { readdir, rm, stat, truncate, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { buildRecordBatch } from '../../../broker/protocol/record-batch.js';
import { offsets, openLog, readAll, tempDir, values } from './helpers.js';

interface Written {
  segmentBase: bigint;
  /** End position of the batch in its segment file. */
  end: number;
  start: number;
  values: string[];
}

describe('crash property', () => {
  it('recovers the valid prefix for random appends and crash points', { timeout: 300_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ count: fc.integer({ min: 1, max: 5 }), size: fc.integer({ min: 0, max: 300 }) }), { minLength: 1, maxLength: 40 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.constantFrom('keep', 'delete', 'garble'),
        async (appends, cutFraction, indexDamage) => {
          const { dir, cleanup } = await tempDir('sediment-prop-');
          try {
            const cfg = { segmentBytes: 2000, indexIntervalBytes: 200 };
            const { log } = await openLog(dir, cfg);
            const written: Written[] = [];
            for (const [i, a] of appends.entries()) {
              const vals = Array.from({ length: a.count }, (_, j) => `${i}/${j}:`.padEnd(a.size, 'x'));
              const b = buildRecordBatch({ records: vals.map((v) => ({ key: null, value: v, timestamp: 1000 + i })) });
              await log.append(b, { leaderEpoch: 0, isFromClient: true });
              const seg = log.activeSegment();
              written.push({ segmentBase: seg.baseOffset, start: seg.size - b.length, end: seg.size, values: vals });
            }
            const segments = [...log.closedSegments(), log.activeSegment()].map((s) => ({ base: s.baseOffset, file: s.files.log, size: s.size }));
            await log.closeHandles();

            // Cut the byte stream (segments in order) at one point.
            const total = segments.reduce((n, s) => n + s.size, 0);
            let cut = Math.floor(cutFraction * total);
            const pdir = path.join(dir, 'topic-0');
            let survivingBase: bigint | null = null;
            let cutInSegment = 0;
            for (const s of segments) {
              if (survivingBase === null && (cut < s.size || s === segments[segments.length - 1])) {
                survivingBase = s.base;
                cutInSegment = Math.min(cut, s.size);
                await truncate(s.file, cutInSegment);
              } else if (survivingBase !== null) {
                await rm(s.file);
              } else cut -= s.size;
            }
            if (indexDamage !== 'keep') {
              for (const f of await readdir(pdir)) {
                if (!f.endsWith('.index') && !f.endsWith('.timeindex')) continue;
                if (indexDamage === 'delete') await rm(path.join(pdir, f));
                else if ((await stat(path.join(pdir, f))).size > 0) await writeFile(path.join(pdir, f), Buffer.from('garbage!!'));
              }
            }

            const expected = written.filter((w) => w.segmentBase < (survivingBase as bigint) || (w.segmentBase === survivingBase && w.end <= cutInSegment));
            const expectedValues = expected.flatMap((w) => w.values);
            const { log: again } = await openLog(dir, cfg);
            assert.equal(again.logEndOffset, BigInt(expectedValues.length));
            const all = await readAll(again);
            assert.deepEqual(values(all), expectedValues);
            assert.deepEqual(offsets(all), expectedValues.map((_, i) => BigInt(i)));
            const r = await again.append(buildRecordBatch({ records: [{ key: null, value: 'after' }] }), { leaderEpoch: 0, isFromClient: true });
            assert.equal(r.baseOffset, BigInt(expectedValues.length));
            await again.close();
          } finally {
            await cleanup();
          }
        },
      ),
      { numRuns: 60 },
    );
  });
});
