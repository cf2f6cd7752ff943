import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Rng, faultCount, makeSchedule, trialSeed, type FaultStep } from './schedule.js';

const options = { nodes: [1, 2, 3], durationMs: 45_000 };

/** Replays the steps: which brokers are down and which links cut after each; throws on an illegal step. */
function replay(steps: readonly FaultStep[]): { maxDown: number; openAtEnd: number } {
  const killed = new Set<number>();
  const paused = new Set<number>();
  const cuts = new Set<string>();
  let maxDown = 0;
  for (const s of steps) {
    if ('node' in s) {
      if (s.kind === 'kill') {
        assert.ok(!killed.has(s.node) && !paused.has(s.node), `kill of a broker already down: ${JSON.stringify(s)}`);
        killed.add(s.node);
      } else if (s.kind === 'restart') assert.ok(killed.delete(s.node), `restart of a running broker: ${JSON.stringify(s)}`);
      else if (s.kind === 'pause') {
        assert.ok(!killed.has(s.node) && !paused.has(s.node), `pause of a broker already down: ${JSON.stringify(s)}`);
        paused.add(s.node);
      } else assert.ok(paused.delete(s.node), `resume of a running broker: ${JSON.stringify(s)}`);
    } else {
      const k = `${s.a}-${s.b}`;
      if (s.kind === 'cut') {
        assert.ok(!cuts.has(k), `cut of a cut link: ${JSON.stringify(s)}`);
        cuts.add(k);
      } else assert.ok(cuts.delete(k), `heal of a link that is up: ${JSON.stringify(s)}`);
    }
    maxDown = Math.max(maxDown, killed.size + paused.size);
  }
  return { maxDown, openAtEnd: killed.size + paused.size + cuts.size };
}

describe('fault schedule', () => {
  it('is the same for the same seed and differs between seeds', () => {
    assert.deepEqual(makeSchedule(42, options), makeSchedule(42, options));
    assert.notDeepEqual(makeSchedule(42, options).steps, makeSchedule(43, options).steps);
  });

  it('closes every fault it opens, in time order, within the trial, with at most maxDown brokers down', () => {
    for (let seed = 1; seed <= 300; seed++) {
      const s = makeSchedule(seed, { ...options, maxDown: 2 });
      const times = s.steps.map((x) => x.atMs);
      assert.deepEqual(times, [...times].sort((a, b) => a - b), `seed ${seed}: steps out of order`);
      assert.ok(times.every((t) => t >= 0 && t <= s.durationMs), `seed ${seed}: a step outside the trial`);
      const r = replay(s.steps);
      assert.equal(r.openAtEnd, 0, `seed ${seed}: faults left open`);
      assert.ok(r.maxDown <= 2, `seed ${seed}: ${r.maxDown} brokers down at once`);
      assert.ok(faultCount(s) >= 2, `seed ${seed}: only ${faultCount(s)} faults in 45 s`);
    }
  });

  it('injects every kind of fault and turns tiering on in some trials', () => {
    const schedules = Array.from({ length: 60 }, (_, i) => makeSchedule(trialSeed(9, i), options));
    const kinds = new Set(schedules.flatMap((s) => s.steps.map((x) => x.kind)));
    assert.deepEqual([...kinds].sort(), ['cut', 'heal', 'kill', 'pause', 'restart', 'resume']);
    const tiered = schedules.filter((s) => s.tiering).length;
    assert.ok(tiered > 5 && tiered < 55, `${tiered} of 60 trials tiered`);
  });

  it('seeds trial 0 with the run seed itself, so a failed trial reruns alone', () => {
    assert.equal(trialSeed(1234, 0), 1234);
    assert.notEqual(trialSeed(1234, 1), 1234);
    assert.equal(makeSchedule(trialSeed(77, 3), options).seed, trialSeed(77, 3));
  });

  it('Rng stays in range', () => {
    const r = new Rng(5);
    for (let i = 0; i < 1000; i++) {
      const v = r.int(3, 7);
      assert.ok(v >= 3 && v <= 7 && Number.isInteger(v));
    }
  });
});
