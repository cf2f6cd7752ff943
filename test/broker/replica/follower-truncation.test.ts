// Where a follower truncates on a leader's DivergingEpoch (Kafka's
// getOffsetTruncationState), case by case.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { truncationOffset, type EpochEndOffset } from '../../../broker/replica/follower-truncation.js';
import { LeaderEpochCache } from '../../../broker/log/leader-epoch-cache.js';

/** A follower whose epochs start at the given offsets and whose log ends at `end`. */
function follower(entries: Array<[number, bigint]>, end: bigint): (epoch: number) => EpochEndOffset {
  const cache = new LeaderEpochCache(entries.map(([epoch, startOffset]) => ({ epoch, startOffset })));
  return (epoch) => cache.endOffsetFor(epoch, end);
}

describe('truncationOffset', () => {
  it('same epoch on both: the smaller end offset of it', () => {
    // Follower: epoch 1 from 0, epoch 2 from 10, log end 15; leader's epoch 2 ended at 12.
    assert.deepEqual(truncationOffset({ epoch: 2, endOffset: 12n }, follower([[1, 0n], [2, 10n]], 15n), 15n, 8n), { offset: 12n, complete: true });
    // Leader's epoch 1 ended at 10, ours too: cut to 10.
    assert.deepEqual(truncationOffset({ epoch: 1, endOffset: 10n }, follower([[1, 0n], [3, 10n]], 15n), 15n, 8n), { offset: 10n, complete: true });
  });

  it('the follower lacks the leader\'s epoch: to the end of its own older one, then asks again', () => {
    // Leader says epoch 2 ends at 12; the follower has epochs 1 (0..7) and 3 (7..): its floor of 2 is 1, ending at 7.
    assert.deepEqual(truncationOffset({ epoch: 2, endOffset: 12n }, follower([[1, 0n], [3, 7n]], 15n), 15n, 5n), { offset: 7n, complete: false });
  });

  it('the follower has no epoch at or below: its own epochs all came later, so it keeps nothing past where they start', () => {
    // Kafka's endOffsetFor answers an epoch older than every known one with (that epoch, start of the first known one).
    assert.deepEqual(truncationOffset({ epoch: 2, endOffset: 12n }, follower([[5, 0n]], 9n), 9n, 0n), { offset: 0n, complete: true });
    assert.deepEqual(truncationOffset({ epoch: 2, endOffset: 12n }, follower([[5, 4n]], 9n), 9n, 0n), { offset: 4n, complete: true });
    // No history at all: the leader's end offset, capped at the log end.
    assert.deepEqual(truncationOffset({ epoch: 2, endOffset: 4n }, follower([], 9n), 9n, 0n), { offset: 4n, complete: true });
  });

  it('a leader whose history starts after the follower\'s last epoch answers its end as the start of its first epoch (no divergence for an empty log)', () => {
    const leader = new LeaderEpochCache([{ epoch: 1, startOffset: 0n }]);
    assert.deepEqual(leader.endOffsetFor(0, 0n), { epoch: 0, endOffset: 0n });
    assert.deepEqual(new LeaderEpochCache([{ epoch: 3, startOffset: 5n }, { epoch: 4, startOffset: 9n }]).endOffsetFor(1, 12n), { epoch: 1, endOffset: 5n });
    assert.deepEqual(new LeaderEpochCache([]).endOffsetFor(0, 0n), { epoch: -1, endOffset: -1n });
  });

  it('the leader knows no end for the epoch (no history): back to the follower\'s high watermark', () => {
    assert.deepEqual(truncationOffset({ epoch: -1, endOffset: -1n }, follower([[1, 0n]], 9n), 9n, 6n), { offset: 6n, complete: true });
  });

  it('the leader has no epoch <= ours but an end offset: that offset, capped at our log end', () => {
    assert.deepEqual(truncationOffset({ epoch: -1, endOffset: 3n }, follower([[1, 0n]], 9n), 9n, 6n), { offset: 3n, complete: true });
  });

  it('an epoch that starts where the next one does is replaced: no endless DivergingEpoch for a follower of an epoch in between', () => {
    const leader = new LeaderEpochCache([{ epoch: 0, startOffset: 0n }]);
    assert.equal(leader.assign(2, 0n), true);
    assert.deepEqual(leader.entries(), [{ epoch: 2, startOffset: 0n }]);
    // A follower that last fetched in epoch 1 (it led then, writing nothing) is not told to diverge.
    assert.deepEqual(leader.endOffsetFor(1, 0n), { epoch: 1, endOffset: 0n });
    assert.equal(leader.assign(3, 5n), true);
    assert.deepEqual(leader.entries(), [{ epoch: 2, startOffset: 0n }, { epoch: 3, startOffset: 5n }]);
  });
});
