import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { LocalLog } from '../../remote-log/local-log.js';
import { PartitionState } from '../../remote-log/partition-state.js';

const tp = { topicId: 'AAAAAAAAAAAAAAAAAAAAAA', topic: 't', partition: 0 };

describe('PartitionState.leaderSignal', () => {
  it('is one signal per term, aborted when the leadership moves on, and a fresh one for the next term', () => {
    const s = new PartitionState({} as LocalLog, tp);
    s.changeLeadership({ leader: true, leaderEpoch: 1 });
    const first = s.leaderSignal();
    assert.equal(s.leaderSignal(), first, 'the same signal while the term lasts');
    assert.equal(first.aborted, false);
    s.changeLeadership({ leader: true, leaderEpoch: 2 });
    assert.equal(first.aborted, true, 'the old term ended');
    const second = s.leaderSignal();
    assert.notEqual(second, first);
    assert.equal(second.aborted, false);
  });

  it('is aborted when the partition is removed', () => {
    const s = new PartitionState({} as LocalLog, tp);
    s.changeLeadership({ leader: true, leaderEpoch: 0 });
    const signal = s.leaderSignal();
    s.abort.abort(new Error('partition removed'));
    assert.equal(signal.aborted, true);
  });
});
