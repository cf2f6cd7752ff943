// LeaderState (broker/replica/leader-state.ts) when a reassignment changes the
// replicas within one leader epoch: a new replica is tracked from scratch
// (out of sync, joins the ISR once caught up), the others keep their fetch
// state, a replica that left is forgotten.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { LeaderState } from '../../../broker/replica/leader-state.js';

it('replicas that change within a leader epoch: the added one can join the ISR once caught up, a removed one is forgotten', () => {
  const s = new LeaderState(1, 3, 0n, [1, 2], { isr: [1, 2], partitionEpoch: 4 }, 1000, 30_000);
  assert.equal(s.updateFollowerFetch(3, 10n, 10n, 7n, 1100), false, 'not a replica yet');
  assert.ok(s.updateFollowerFetch(2, 10n, 10n, 5n, 1100));
  s.committedIsr({ isr: [1, 2], partitionEpoch: 5, replicas: [2, 3, 1] });
  assert.deepEqual(s.replicas, [2, 3, 1]);
  assert.equal(s.follower(2)?.logEndOffset, 10n, 'an existing follower keeps its state');
  assert.equal(s.follower(3)?.logEndOffset, -1n);
  assert.equal(s.expansion(3, 10n, () => 7n), null, 'behind the HW: not yet');
  assert.ok(s.updateFollowerFetch(3, 10n, 10n, 7n, 1200));
  assert.deepEqual(s.expansion(3, 10n, () => 7n), [1, 2, 3]);
  s.committedIsr({ isr: [1, 3], partitionEpoch: 6, replicas: [1, 3] });
  assert.equal(s.follower(2), undefined);
  assert.equal(s.updateFollowerFetch(2, 10n, 10n, 5n, 1300), false, 'a removed replica is no longer one');
  assert.equal(s.highWatermarkCandidate(10n), 10n);
});
