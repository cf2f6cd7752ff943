import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MARK_INTERVAL_MS, RecentWrites } from '../../../broker/log/recent-writes.js';

describe('RecentWrites', () => {
  it('knows nothing recent before the first write', () => {
    assert.equal(new RecentWrites(30_000).hotFrom(0), Infinity);
  });

  it('tells where the bytes written within the window begin, at mark granularity', () => {
    const w = new RecentWrites(30_000);
    w.noteWrite(0, 0);
    w.noteWrite(100, MARK_INTERVAL_MS / 2); // shares the first mark
    w.noteWrite(200, MARK_INTERVAL_MS + 500);
    assert.equal(w.hotFrom(1_000), 0);
    assert.equal(w.hotFrom(30_000), 0, 'a mark exactly at the window edge is still in it');
    assert.equal(w.hotFrom(30_001), 200, 'bytes of the first mark (0-199) are out, those after the second mark in');
    assert.equal(w.hotFrom(31_501), Infinity, 'nothing written within the window');
  });

  it('forgets what lay above a cut file: a write below the last mark starts afresh', () => {
    const w = new RecentWrites(30_000);
    w.noteWrite(0, 0);
    w.noteWrite(500, 5_000);
    w.noteWrite(300, 6_000); // the file was truncated to 300 and written again
    assert.equal(w.hotFrom(6_000), 300);
    assert.equal(w.hotFrom(36_000), 300);
    w.clear();
    assert.equal(w.hotFrom(36_000), Infinity);
  });
});
