// LeaderState (broker/replica/leader-state.ts) against answers to its ISR
// changes that arrive after the image has shown a later partition state: the
// leader must keep the later state, or it believes a member is in the ISR that
// etcd has removed and never proposes it again (issue 14's frozen ISR).
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { LeaderState } from '../../../broker/replica/leader-state.js';

const registered = (): bigint => 7n;

function leaderWithIsr(isr: number[], partitionEpoch: number): LeaderState {
  return new LeaderState(2, 1, 0n, [2, 3], { isr, partitionEpoch }, 1000, 30_000);
}

it('an accepted expansion answered after the image showed a later shrink keeps the later ISR, and the follower is proposed again', () => {
  const s = leaderWithIsr([2], 6);
  assert.ok(s.updateFollowerFetch(3, 10n, 10n, 7n, 1100));
  const grown = s.expansion(3, 10n, registered);
  assert.deepEqual(grown, [2, 3]);
  const proposal = s.proposed(grown!);
  // The store commits [2,3] at epoch 7; the controller then removes 3 (epoch 8); the watch shows epoch 8 first.
  s.committedIsr({ isr: [2], partitionEpoch: 8 });
  s.committedIsr({ isr: [2, 3], partitionEpoch: 7 }, proposal);
  assert.deepEqual(s.isr, [2]);
  assert.equal(s.partitionEpoch, 8);
  assert.equal(s.pendingIsr, null);
  assert.ok(s.updateFollowerFetch(3, 10n, 10n, 7n, 1200));
  assert.deepEqual(s.expansion(3, 10n, registered), [2, 3]);
});

it('the answer of a superseded proposal changes nothing, not even the newer proposal in flight', () => {
  const s = leaderWithIsr([2], 6);
  const first = s.proposed([2, 3]);
  s.committedIsr({ isr: [2], partitionEpoch: 8 }); // the image moved on; the first proposal will be refused
  const second = s.proposed([2, 3]);
  s.committedIsr({ isr: [2, 3], partitionEpoch: 9 }, first);
  assert.deepEqual(s.pendingIsr, [2, 3]);
  assert.equal(s.partitionEpoch, 8);
  s.proposalFailed(first);
  assert.deepEqual(s.pendingIsr, [2, 3]);
  s.committedIsr({ isr: [2, 3], partitionEpoch: 9 }, second);
  assert.deepEqual(s.isr, [2, 3]);
  assert.equal(s.pendingIsr, null);
});

it('a refusal carrying a state older than the image leaves the image state', () => {
  const s = leaderWithIsr([2, 3], 6);
  const p = s.proposed([2]);
  s.committedIsr({ isr: [2, 3], partitionEpoch: 9 });
  s.committedIsr({ isr: [2], partitionEpoch: 7 }, p);
  assert.deepEqual(s.isr, [2, 3]);
  assert.equal(s.partitionEpoch, 9);
});
