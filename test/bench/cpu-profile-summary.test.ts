import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type CpuProfile, inclusiveTimes, summarizeProfile } from './cpu-profile-summary.js';

const frame = (functionName: string, url = '') => ({ functionName, url, lineNumber: 0 });

// root -> a (index-file.js) -> write (native); root -> b (segment-file.js); root -> (idle)
const profile: CpuProfile = {
  nodes: [
    { id: 1, callFrame: frame('(root)'), children: [2, 4, 5] },
    { id: 2, callFrame: frame('append', 'file:///x/dist/broker/log/index-file.js'), children: [3] },
    { id: 3, callFrame: frame('writeBuffer') },
    { id: 4, callFrame: frame('writev', 'file:///x/dist/broker/log/segment-file.js') },
    { id: 5, callFrame: frame('(idle)') },
  ],
  startTime: 0,
  // Samples at 0, 1000, 2000, 3000, 4000 us; each lasts until the next (the last until endTime).
  samples: [3, 2, 4, 5, 3],
  timeDeltas: [0, 1000, 1000, 1000, 1000],
  endTime: 5000,
};

describe('cpu-profile-summary', () => {
  it('charges a frame with the time of every busy sample it is on the stack of', () => {
    const [index, segment, write, none] = inclusiveTimes(profile, ['broker/log/index-file.js', 'segment-file.js', 'writeBuffer', 'nothing']);
    assert.equal(index?.ms, 3); // two writeBuffer samples below it plus its own
    assert.equal(segment?.ms, 1);
    assert.equal(write?.ms, 2);
    assert.equal(none?.ms, 0);
    assert.equal(index?.pctBusy, 75);
    assert.equal(summarizeProfile(profile).idleMs, 1);
  });
});
