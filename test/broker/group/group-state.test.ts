import { test } from 'node:test';
import assert from 'node:assert/strict';
import { canRebalance, canTransition, GROUP_STATES, parseGroupState, type GroupState } from '../../../broker/group/group-state.js';
import { ClassicGroup } from '../../../broker/group/classic-group.js';

test('legal transitions are exactly Kafka ClassicGroupState', () => {
  const legal = new Set([
    'PreparingRebalance>Empty',
    'Stable>PreparingRebalance',
    'CompletingRebalance>PreparingRebalance',
    'Empty>PreparingRebalance',
    'PreparingRebalance>CompletingRebalance',
    'CompletingRebalance>Stable',
    ...GROUP_STATES.map((s) => `${s}>Dead`),
  ]);
  for (const from of GROUP_STATES) {
    for (const to of GROUP_STATES) {
      assert.equal(canTransition(from, to), legal.has(`${from}>${to}`), `${from} -> ${to}`);
    }
  }
  assert.deepEqual(
    GROUP_STATES.filter((s) => canRebalance(s)),
    ['Empty', 'CompletingRebalance', 'Stable'],
  );
});

test('transitionTo refuses illegal moves and records previous state and timestamp', () => {
  const g = new ClassicGroup('g', { now: 1 });
  assert.throws(() => g.transitionTo('Stable', 2), /should be in one of CompletingRebalance/);
  g.transitionTo('PreparingRebalance', 5);
  assert.equal(g.previousState, 'Empty');
  assert.equal(g.stateTimestamp, 5);
  g.transitionTo('Dead', 6);
  assert.throws(() => g.transitionTo('Empty', 7), { name: 'IllegalGroupTransitionError', message: /before moving to Empty; it is Dead$/ });
});

test('state names parse case-insensitively', () => {
  const cases: [string, GroupState | null][] = [
    ['stable', 'Stable'],
    [' PREPARINGREBALANCE ', 'PreparingRebalance'],
    ['Empty', 'Empty'],
    ['assigning', null],
  ];
  for (const [input, expected] of cases) assert.equal(parseGroupState(input), expected);
});
