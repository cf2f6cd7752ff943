import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { WindowStats } from './latency-windows.js';
import { defaultPeerOptions, median, peerReport, type PeerResults, type PeerRound } from './tiering-peer.js';

const MiB = 1_048_576;

const window = { from: 0, to: 1 };
const sends = (p99: number): WindowStats => ({ count: 1500, p50: p99 / 4, p99, max: p99 * 2 });

/** A round where every phase moved `mib` MiB in `ms` (so the rate is mib / ms * 1000); the probe's p99 5 ms idle, `busyP99` during. */
function round(broker: 'sediment' | 'kafka', r: number, ms: number, mib = 100, busyP99 = 10): PeerRound {
  const upload = { partitions: 1, bytes: mib * MiB, startDelayMs: 500, ms, cpuMs: 200, tieredCounts: [10n], idle: window, active: window };
  const read = { partitions: 1, bytes: mib * MiB, ms, cpuMs: 100, active: window };
  return {
    broker,
    round: r,
    upload6: { ...upload, partitions: 6 },
    upload1: upload,
    steady: { mibPerSec: 8, samples: 100, meanLagBytes: 4 * MiB, maxLagBytes: 16 * MiB, rollToTieredMs: [1000, 2000, 3000], drainMs: 1500 },
    cold1: read,
    cold6: { ...read, partitions: 6 },
    latency: { idleBeforeUpload: sends(5), upload: sends(busyP99), idleBeforeCold: sends(5), cold: sends(busyP99 * 2), errors: 0 },
    loadBefore: 1.5,
    loadAfter: 2.5,
  };
}

function results(rounds: PeerRound[]): PeerResults {
  return { options: { ...defaultPeerOptions, rounds: rounds.length / 2 }, rounds };
}

const line = (report: string, start: string): string => {
  const l = report.split('\n').find((x) => x.startsWith(start));
  assert.ok(l !== undefined, `no line starting ${start}`);
  return l;
};

describe('tiering peer report', () => {
  it('gives Sediment/Kafka per round and their median, and says who leads when the rounds agree', () => {
    // Sediment twice as fast as Kafka in both rounds (1000 ms against 2000 ms for 100 MiB).
    const text = peerReport(results([round('sediment', 0, 1000), round('kafka', 0, 2000), round('kafka', 1, 2000), round('sediment', 1, 1000)]), 'abc1234');
    const upload = line(text, '| upload, 1 partition');
    assert.match(upload, /\| 100 \(100, 100\) \| 50 \(50, 50\) \| \*\*2\.00x\*\* \(2\.00, 2\.00\) \| Sediment ahead or level \(higher is better\) \|/);
    // Lower is better for CPU: equal CPU over equal bytes is level.
    assert.match(line(text, '| broker CPU per MiB uploaded'), /\*\*1\.00x\*\* .*Sediment ahead or level \(lower is better\)/);
    assert.match(text, /at commit abc1234/);
    assert.match(text, /load average \(1 min\) 1\.5-2\.5 over the run/);
  });

  it('does not call a ratio that moves by more than 10% between rounds', () => {
    // Ratios 2.0 and 1.0: median 1.5, both rounds more than 10% away from it.
    const text = peerReport(results([round('sediment', 0, 1000), round('kafka', 0, 2000), round('sediment', 1, 2000), round('kafka', 1, 2000)]), 'x');
    assert.match(line(text, '| upload, 1 partition'), /\*\*1\.50x\*\* \(2\.00, 1\.00\) \| spread 1\.00-2\.00 exceeds ±10%: not called \|/);
  });

  it('says when Sediment trails', () => {
    const text = peerReport(results([round('sediment', 0, 4000), round('kafka', 0, 2000)]), 'x');
    assert.match(line(text, '| cold read, 6 partitions'), /\*\*0\.50x\*\* \(0\.50\) \| Sediment behind \(higher is better\) \|/);
  });

  it('sets each broker\'s produce p99 during tiering over its own idle p99, and the two against each other', () => {
    // Sediment: 5 -> 10 ms during uploads (2x), 5 -> 20 during cold reads (4x); Kafka 5 -> 5 (1x) and 5 -> 10 (2x).
    const text = peerReport(results([round('sediment', 0, 1000, 100, 10), round('kafka', 0, 1000, 100, 5)]), 'x');
    assert.match(line(text, '| produce p99 during the uploads'), /\| 2\.00 \(2\.00\) \| 1\.00 \(1\.00\) \| \*\*2\.00x\*\* \(2\.00\) \| Sediment behind \(lower is better\) \|/);
    assert.match(line(text, '| produce p99 during the cold reads over'), /\| 4\.00 \(4\.00\) \| 2\.00 \(2\.00\) \| \*\*2\.00x\*\* /);
    // The same p99s in milliseconds, as Kafka's idle p99 after its restart is no steady baseline.
    assert.match(line(text, '| produce p99 during the uploads (ms)'), /\| 10\.0 \(10\.0\) \| 5\.0 \(5\.0\) \| \*\*2\.00x\*\* /);
    assert.match(line(text, '| produce p99 during the cold reads (ms'), /\| 20\.0 \(20\.0\) \| 10\.0 \(10\.0\) \| \*\*2\.00x\*\* /);
    assert.match(line(text, 'Produce latency:'), /Sediment uploads 5\.0 \/ 1\.3 -> 10\.0 \/ 2\.5, cold 5\.0 \/ 1\.3 -> 20\.0 \/ 5\.0; Kafka uploads 5\.0 \/ 1\.3 -> 5\.0 \/ 1\.3, cold 5\.0 \/ 1\.3 -> 10\.0 \/ 2\.5\./);
  });

  it('leaves the latency rows out when the probe was off', () => {
    const r = (b: 'sediment' | 'kafka'): PeerRound => ({ ...round(b, 0, 1000), latency: null });
    const text = peerReport({ options: { ...defaultPeerOptions, rounds: 1, latencyRate: 0 }, rounds: [r('sediment'), r('kafka')] }, 'x');
    assert.ok(!text.includes('produce p99'));
    assert.ok(!text.includes('Produce latency:'));
  });

  it('takes medians of odd and even counts', () => {
    assert.equal(median([3, 1, 2]), 2);
    assert.equal(median([4, 1, 3, 2]), 2.5);
    assert.ok(Number.isNaN(median([])));
  });
});
