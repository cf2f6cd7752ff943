import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { coalescedPerTurn, collectedPerTurn } from '../../../broker/cluster/cluster-serving.js';

const nextTurn = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('coalescedPerTurn', () => {
  it('runs once in the next turn however often it was called in this one, and again for calls after that', async () => {
    let runs = 0;
    const poke = coalescedPerTurn(() => runs++);
    for (let i = 0; i < 1000; i++) poke();
    assert.equal(runs, 0, 'not synchronously');
    await nextTurn();
    assert.equal(runs, 1);
    poke();
    poke();
    await nextTurn();
    assert.equal(runs, 2);
    await nextTurn();
    assert.equal(runs, 2, 'nothing without a call');
  });
});

describe('collectedPerTurn', () => {
  it('runs once in the next turn with every key added in this one', async () => {
    const runs: string[][] = [];
    const add = collectedPerTurn<string>((keys) => runs.push([...keys].sort()));
    add('b');
    add('a');
    add('b');
    assert.deepEqual(runs, [], 'not synchronously');
    await nextTurn();
    assert.deepEqual(runs, [['a', 'b']]);
    add('c');
    await nextTurn();
    assert.deepEqual(runs, [['a', 'b'], ['c']]);
    await nextTurn();
    assert.equal(runs.length, 2, 'nothing without a key');
  });
});
