// Pure pieces: remote index lookups, the epoch index, a segment's leader epochs.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { OffsetIndex } from '../../../broker/log/offset-index.js';
import { TimeIndex } from '../../../broker/log/time-index.js';
import { segmentLeaderEpochs } from '../../../remote-log/tasks/copy-task.js';
import { RemoteEpochIndex } from '../../../remote-log/partition-state.js';
import { lookupOffsetIndex, lookupTimeIndex } from '../../../remote-log/read/remote-indexes.js';
import { RemoteCorruptionError } from '../../../remote-log/remote-storage.js';

describe('remote index lookups', () => {
  it('agree with the local OffsetIndex and TimeIndex on the same bytes', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 0, max: 100_000 }), { minLength: 0, maxLength: 60 }), fc.integer({ min: -5, max: 100_010 }), (rels, probe) => {
        const sorted = [...rels].sort((a, b) => a - b);
        const base = 1000n;
        const oi = new OffsetIndex(base, 1000);
        const ti = new TimeIndex(base, 1000);
        sorted.forEach((r, i) => {
          oi.append(base + BigInt(r), i * 100);
          ti.maybeAppend(BigInt(5_000 + r), base + BigInt(r));
        });
        const target = base + BigInt(probe);
        assert.deepEqual(lookupOffsetIndex(oi.bytes(), base, target, 't'), oi.lookup(target));
        const ts = BigInt(5_000 + probe);
        assert.equal(lookupTimeIndex(ti.bytes(), base, ts, 't'), ti.lookup(ts).timestamp < 0n ? base : ti.lookup(ts).offset);
      }),
    );
  });

  it('refuse partial entries as corruption', () => {
    assert.throws(() => lookupOffsetIndex(Buffer.alloc(9), 0n, 5n, 'x'), RemoteCorruptionError);
    assert.throws(() => lookupTimeIndex(Buffer.alloc(13), 0n, 5n, 'x'), RemoteCorruptionError);
  });
});

describe('RemoteEpochIndex', () => {
  it('finds the epoch in force at an offset from segments added in order', () => {
    const idx = new RemoteEpochIndex();
    idx.add([{ leaderEpoch: 0, startOffset: 0n }]);
    idx.add([{ leaderEpoch: 0, startOffset: 100n }, { leaderEpoch: 2, startOffset: 150n }]);
    idx.add([{ leaderEpoch: 2, startOffset: 200n }, { leaderEpoch: 5, startOffset: 260n }]);
    idx.add([{ leaderEpoch: 1, startOffset: 300n }]); // an older epoch never goes back in
    assert.equal(idx.size, 3);
    assert.equal(idx.epochFor(0n), 0);
    assert.equal(idx.epochFor(149n), 0);
    assert.equal(idx.epochFor(150n), 2);
    assert.equal(idx.epochFor(259n), 2);
    assert.equal(idx.epochFor(10_000n), 5);
    assert.equal(new RemoteEpochIndex().epochFor(3n), undefined);
  });
});

describe('segmentLeaderEpochs', () => {
  it('takes the epoch in force at the base, then the epochs starting inside', () => {
    const history = [
      { epoch: 0, startOffset: 0n },
      { epoch: 3, startOffset: 50n },
      { epoch: 4, startOffset: 120n },
    ];
    assert.deepEqual(segmentLeaderEpochs(history, 40n, 99n), [
      { leaderEpoch: 0, startOffset: 40n },
      { leaderEpoch: 3, startOffset: 50n },
    ]);
    assert.deepEqual(segmentLeaderEpochs(history, 50n, 60n), [{ leaderEpoch: 3, startOffset: 50n }]);
    assert.deepEqual(segmentLeaderEpochs(history, 130n, 140n), [{ leaderEpoch: 4, startOffset: 130n }]);
    // A history truncated above the base: its first epoch covers the base.
    assert.deepEqual(segmentLeaderEpochs([{ epoch: 7, startOffset: 20n }], 10n, 30n), [{ leaderEpoch: 7, startOffset: 10n }]);
    // No history at all.
    assert.deepEqual(segmentLeaderEpochs([], 10n, 30n), [{ leaderEpoch: 0, startOffset: 10n }]);
  });
});
