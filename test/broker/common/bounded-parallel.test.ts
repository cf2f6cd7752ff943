import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { forEachBounded } from '../../../broker/common/bounded-parallel.js';

/** A step that stays pending until released, recording how many run at once. */
function gatedSteps() {
  let running = 0;
  let peak = 0;
  const started: number[] = [];
  const release: Array<() => void> = [];
  const step = async (n: number): Promise<void> => {
    started.push(n);
    running++;
    peak = Math.max(peak, running);
    await new Promise<void>((r) => release.push(r));
    running--;
  };
  return { step, started, release, peak: () => peak };
}

describe('forEachBounded', () => {
  it('never has more than limit steps in flight, starts them in list order, and runs every one', async () => {
    const g = gatedSteps();
    const items = Array.from({ length: 10 }, (_, i) => i);
    const done = forEachBounded(items, 3, g.step);
    for (let released = 0; released < items.length; released++) {
      await new Promise((r) => setImmediate(r));
      assert.ok(g.release.length > released, `step ${released} started`);
      g.release[released]!();
    }
    await done;
    assert.deepEqual(g.started, items);
    assert.equal(g.peak(), 3);
  });

  it('a failing step fails the call after the others have settled', async () => {
    const seen: number[] = [];
    await assert.rejects(
      forEachBounded([1, 2, 3, 4], 2, async (n) => {
        seen.push(n);
        if (n === 2) throw new Error('step 2 failed');
      }),
      /step 2 failed/,
    );
    assert.deepEqual(seen.sort(), [1, 2, 3, 4]);
  });

  it('an empty list resolves at once; a limit below 1 is refused', async () => {
    await forEachBounded([], 4, () => Promise.reject(new Error('not called')));
    await assert.rejects(forEachBounded([1], 0, async () => undefined), /positive integer/);
  });
});
