// The remote log metadata index at scale, as behaviour: 100k remote segments of
// one partition are held and answered, and a replay of 400k records (100k
// segments copied, 50k of them expired) ends in exactly the state they describe.
// How much heap that takes and how replay time grows are measured by
// test/bench/metadata-scale.bench.ts (docs/benchmarks.md), not asserted here:
// speed on a shared machine is no verdict on behaviour.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RemoteLogMetadataManager } from '../../../metadata/remote-log-metadata/remote-log-metadata-manager.js';
import { TP0 } from './fixtures.js';
import { buildLog, fillCache } from './scale-fixtures.js';

describe('remote log metadata at scale', () => {
  it('holds 100k remote segments of one partition and finds any of them', () => {
    const n = 100_000;
    const cache = fillCache(n);
    assert.equal(cache.segmentCount, n);
    assert.equal(cache.remoteLogSizeBytes(), n * 1_048_576);
    assert.equal(cache.earliestRemoteOffset(), 0n);
    assert.equal(cache.highestRemoteOffset(), BigInt(n * 1000 - 1));
    // Segment k holds offsets [1000k, 1000k + 999] under leader epoch floor(k / 1000) + 1.
    for (const k of [0, 1, 999, 1000, 54_321, n - 1]) {
      const found = cache.remoteLogSegmentMetadata(Math.floor(k / 1000) + 1, BigInt(k * 1000 + 500));
      assert.equal(found?.startOffset, BigInt(k * 1000), `segment ${k}`);
    }
    assert.equal(cache.remoteLogSegmentMetadata(1, 1_000_000n), undefined, 'an offset past its epoch is not found under it');
  });

  it('replays 400k records (100k segments, the oldest 50k expired) into exactly the state they describe', async () => {
    const log = buildLog(100_000, 50_000, 50);
    assert.equal(log.size, 400_000);
    const manager = new RemoteLogMetadataManager({ log });
    await manager.start();
    assert.equal(manager.segmentCount(TP0), 100_000);
    assert.equal(manager.stats.recordsApplied, 400_000);
    assert.equal(manager.earliestRemoteOffset(TP0), 50_000_000n);
    assert.equal(manager.highestRemoteOffset(TP0), 149_999_999n);
    assert.equal(manager.remoteLogSegmentMetadata(TP0, 150, 149_999_000n)?.startOffset, 149_999_000n);
    assert.equal(manager.remoteLogSegmentMetadata(TP0, 51, 50_000_500n)?.startOffset, 50_000_000n);
    assert.equal(manager.remoteLogSegmentMetadata(TP0, 50, 49_999_999n), undefined, 'an expired segment is not served');
  });
});
