// KIP-903 in LeaderState (broker/replica/leader-state.ts): a follower joins
// the ISR only when the broker epoch its fetch carried (ReplicaState.ReplicaEpoch)
// is the epoch of its current registration in the image, or when it sent none.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { LeaderState, brokerEpochIsrEligible } from '../../../broker/replica/leader-state.js';

function caughtUpFollower(sentEpoch: bigint): LeaderState {
  const s = new LeaderState(1, 3, 0n, [1, 2], { isr: [1], partitionEpoch: 4 }, 1000, 30_000);
  assert.ok(s.updateFollowerFetch(2, 10n, 10n, sentEpoch, 1100));
  return s;
}

it('a caught-up follower whose fetch carried its current registration epoch joins the ISR', () => {
  assert.deepEqual(caughtUpFollower(42n).expansion(2, 10n, () => 42n), [1, 2]);
});

it('a fetch with an older broker epoch than the registration (a stale incarnation) does not join', () => {
  assert.equal(caughtUpFollower(41n).expansion(2, 10n, () => 42n), null);
});

it('a fetch without an epoch (-1, Fetch below v15) joins when the broker is registered; an unregistered broker never joins', () => {
  assert.deepEqual(caughtUpFollower(-1n).expansion(2, 10n, () => 42n), [1, 2]);
  assert.equal(caughtUpFollower(42n).expansion(2, 10n, () => undefined), null);
});

it('brokerEpochIsrEligible', () => {
  assert.equal(brokerEpochIsrEligible(5n, 5n), true);
  assert.equal(brokerEpochIsrEligible(4n, 5n), false);
  assert.equal(brokerEpochIsrEligible(6n, 5n), false);
  assert.equal(brokerEpochIsrEligible(-1n, 5n), true);
  assert.equal(brokerEpochIsrEligible(5n, undefined), false);
});

it('notJoiningReason names why a follower stays out of the ISR, and null once it is in', () => {
  const s = new LeaderState(1, 3, 5n, [1, 2], { isr: [1], partitionEpoch: 4 }, 1000, 30_000);
  assert.equal(s.notJoiningReason(2, 10n, 42n, 1100), 'has not fetched from this leader');
  assert.ok(s.updateFollowerFetch(2, 10n, 10n, 41n, 1100));
  assert.equal(s.notJoiningReason(2, 10n, 42n, 1100), 'fetched with broker epoch 41, registered with 42');
  assert.equal(s.notJoiningReason(2, 10n, undefined, 1100), 'is not registered');
  assert.ok(s.updateFollowerFetch(2, 4n, 10n, 42n, 1200));
  assert.equal(s.notJoiningReason(2, 4n, 42n, 1200), 'log end 4 below the epoch start 5');
  assert.equal(s.notJoiningReason(2, 8n, 42n, 1200), 'log end 4 below the high watermark 8');
  s.proposed([1, 2]);
  assert.equal(s.notJoiningReason(2, 4n, 42n, 1200), 'an ISR change to [1,2] is in flight');
  s.committedIsr({ isr: [1, 2], partitionEpoch: 5 });
  assert.equal(s.notJoiningReason(2, 4n, 42n, 1200), null);
});
