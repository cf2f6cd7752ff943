import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { defaultPeerOptions, median, peerReport, type PeerResults, type PeerRound } from './tiering-peer.js';

const MiB = 1_048_576;

/** A round where every phase moved `mib` MiB in `ms` (so the rate is mib / ms * 1000). */
function round(broker: 'sediment' | 'kafka', r: number, ms: number, mib = 100): PeerRound {
  const upload = { partitions: 1, bytes: mib * MiB, startDelayMs: 500, ms, cpuMs: 200, tieredCounts: [10n] };
  const read = { partitions: 1, bytes: mib * MiB, ms, cpuMs: 100 };
  return {
    broker,
    round: r,
    upload6: { ...upload, partitions: 6 },
    upload1: upload,
    steady: { mibPerSec: 8, samples: 100, meanLagBytes: 4 * MiB, maxLagBytes: 16 * MiB, rollToTieredMs: [1000, 2000, 3000], drainMs: 1500 },
    cold1: read,
    cold6: { ...read, partitions: 6 },
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

  it('takes medians of odd and even counts', () => {
    assert.equal(median([3, 1, 2]), 2);
    assert.equal(median([4, 1, 3, 2]), 2.5);
    assert.ok(Number.isNaN(median([])));
  });
});
