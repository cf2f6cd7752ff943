import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  IllegalStateTransitionError,
  InvalidRemoteLogMetadataError,
  RemoteResourceNotFoundError,
} from '../../../metadata/remote-log-metadata/errors.js';
import { RemoteLogMetadataCache } from '../../../metadata/remote-log-metadata/remote-log-metadata-cache.js';
import type { RemoteLogSegmentMetadata } from '../../../metadata/remote-log-metadata/types.js';
import { TP0, TP1, segment, segmentId, update, type SegmentSpec } from './fixtures.js';

function finished(cache: RemoteLogMetadataCache, spec: SegmentSpec): void {
  cache.addCopyInProgressSegment(segment(spec));
  cache.updateRemoteLogSegmentMetadata(update(spec.id, 'COPY_SEGMENT_FINISHED'));
}

function ids(list: readonly RemoteLogSegmentMetadata[]): string[] {
  return list.map((m) => m.remoteLogSegmentId.id);
}

describe('RemoteLogMetadataCache', () => {
  it('serves only COPY_SEGMENT_FINISHED segments by epoch and offset', () => {
    const cache = new RemoteLogMetadataCache(TP0);
    cache.addCopyInProgressSegment(segment({ id: 1, start: 0, end: 99 }));
    assert.equal(cache.remoteLogSegmentMetadata(0, 50n), undefined, 'COPY_SEGMENT_STARTED is not served');
    assert.equal(cache.highestOffsetForEpoch(0), undefined);
    cache.updateRemoteLogSegmentMetadata(update(1, 'COPY_SEGMENT_FINISHED'));
    const m = cache.remoteLogSegmentMetadata(0, 50n);
    assert.equal(m?.remoteLogSegmentId.id, segmentId(1));
    assert.equal(m?.state, 'COPY_SEGMENT_FINISHED');
    assert.equal(m?.brokerId, 2, 'the update event sets the broker id');
    assert.equal(m?.eventTimestampMs, 1_700_000_200_000);
    assert.equal(cache.remoteLogSegmentMetadata(0, 0n)?.startOffset, 0n);
    assert.equal(cache.remoteLogSegmentMetadata(0, 99n)?.endOffset, 99n);
    assert.equal(cache.remoteLogSegmentMetadata(0, 100n), undefined, 'past the end');
    assert.equal(cache.remoteLogSegmentMetadata(1, 50n), undefined, 'other epoch');
    cache.updateRemoteLogSegmentMetadata(update(1, 'DELETE_SEGMENT_STARTED'));
    assert.equal(cache.remoteLogSegmentMetadata(0, 50n), undefined, 'DELETE_SEGMENT_STARTED is not served');
    assert.equal(cache.listRemoteLogSegments().length, 1, 'still listed for cleanup');
    cache.updateRemoteLogSegmentMetadata(update(1, 'DELETE_SEGMENT_FINISHED'));
    assert.equal(cache.listRemoteLogSegments().length, 0);
    assert.equal(cache.segment(segmentId(1)), undefined);
    assert.equal(cache.highestOffsetForEpoch(0), 99n, 'the highest copied offset survives deletion');
  });

  it('resolves offsets across leader epochs inside one segment', () => {
    const cache = new RemoteLogMetadataCache(TP0);
    finished(cache, { id: 1, start: 0, end: 99, epochs: [[0, 0], [1, 40], [3, 70]] });
    finished(cache, { id: 2, start: 100, end: 199, epochs: [[3, 100]] });
    assert.equal(cache.remoteLogSegmentMetadata(0, 39n)?.remoteLogSegmentId.id, segmentId(1));
    assert.equal(cache.remoteLogSegmentMetadata(0, 40n), undefined, 'offset 40 belongs to epoch 1');
    assert.equal(cache.remoteLogSegmentMetadata(1, 40n)?.remoteLogSegmentId.id, segmentId(1));
    assert.equal(cache.remoteLogSegmentMetadata(1, 70n), undefined);
    assert.equal(cache.remoteLogSegmentMetadata(3, 70n)?.remoteLogSegmentId.id, segmentId(1));
    assert.equal(cache.remoteLogSegmentMetadata(3, 99n)?.remoteLogSegmentId.id, segmentId(1));
    assert.equal(cache.remoteLogSegmentMetadata(3, 100n)?.remoteLogSegmentId.id, segmentId(2));
    assert.equal(cache.remoteLogSegmentMetadata(3, 69n), undefined, 'before epoch 3 starts');
    assert.equal(cache.remoteLogSegmentMetadata(2, 80n), undefined, 'epoch 2 never written');
    assert.equal(cache.highestOffsetForEpoch(0), 39n);
    assert.equal(cache.highestOffsetForEpoch(1), 69n);
    assert.equal(cache.highestOffsetForEpoch(3), 199n);
    assert.equal(cache.highestRemoteOffset(), 199n);
    assert.deepEqual(ids(cache.listRemoteLogSegmentsForEpoch(3)), [segmentId(1), segmentId(2)]);
    assert.deepEqual(ids(cache.listRemoteLogSegmentsForEpoch(1)), [segmentId(1)]);
    assert.deepEqual(ids(cache.listRemoteLogSegmentsForEpoch(2)), []);
    assert.deepEqual(cache.segment(segmentId(1))?.segmentLeaderEpochs, [
      { leaderEpoch: 0, startOffset: 0n },
      { leaderEpoch: 1, startOffset: 40n },
      { leaderEpoch: 3, startOffset: 70n },
    ]);
  });

  it('lists every state but DELETE_SEGMENT_FINISHED, sorted by start offset', () => {
    const cache = new RemoteLogMetadataCache(TP0);
    finished(cache, { id: 3, start: 200, end: 299 });
    finished(cache, { id: 1, start: 0, end: 99 });
    cache.addCopyInProgressSegment(segment({ id: 2, start: 100, end: 199 }));
    cache.addCopyInProgressSegment(segment({ id: 4, start: 100, end: 199 }));
    cache.updateRemoteLogSegmentMetadata(update(2, 'DELETE_SEGMENT_STARTED'));
    assert.deepEqual(ids(cache.listRemoteLogSegments()), [segmentId(1), segmentId(2), segmentId(4), segmentId(3)]);
    assert.deepEqual(
      cache.listRemoteLogSegments().map((m) => m.state),
      ['COPY_SEGMENT_FINISHED', 'DELETE_SEGMENT_STARTED', 'COPY_SEGMENT_STARTED', 'COPY_SEGMENT_FINISHED'],
    );
    assert.deepEqual(ids(cache.listRemoteLogSegmentsForEpoch(0)), [segmentId(1), segmentId(2), segmentId(4), segmentId(3)]);
    cache.updateRemoteLogSegmentMetadata(update(2, 'DELETE_SEGMENT_FINISHED'));
    assert.deepEqual(ids(cache.listRemoteLogSegments()), [segmentId(1), segmentId(4), segmentId(3)]);
    assert.deepEqual(ids(cache.listRemoteLogSegmentsForEpoch(0)), [segmentId(1), segmentId(4), segmentId(3)]);
  });

  it('counts finished bytes and the earliest finished offset', () => {
    const cache = new RemoteLogMetadataCache(TP0);
    assert.equal(cache.remoteLogSizeBytes(), 0);
    assert.equal(cache.earliestRemoteOffset(), undefined);
    assert.equal(cache.highestRemoteOffset(), undefined);
    cache.addCopyInProgressSegment(segment({ id: 1, start: 0, end: 99, size: 100 }));
    finished(cache, { id: 2, start: 100, end: 199, size: 200 });
    finished(cache, { id: 3, start: 200, end: 299, size: 300 });
    assert.equal(cache.remoteLogSizeBytes(), 500, 'COPY_SEGMENT_STARTED is not counted');
    assert.equal(cache.earliestRemoteOffset(), 100n);
    cache.updateRemoteLogSegmentMetadata(update(1, 'DELETE_SEGMENT_STARTED'));
    assert.equal(cache.remoteLogSizeBytes(), 500, 'a failed copy never counted');
    cache.updateRemoteLogSegmentMetadata(update(2, 'DELETE_SEGMENT_STARTED'));
    assert.equal(cache.remoteLogSizeBytes(), 300);
    assert.equal(cache.earliestRemoteOffset(), 200n);
    cache.updateRemoteLogSegmentMetadata(update(2, 'DELETE_SEGMENT_FINISHED'));
    assert.equal(cache.remoteLogSizeBytes(), 300);
    assert.equal(cache.highestRemoteOffset(), 299n);
  });

  it('supersedes an earlier upload of the same epoch range (leader failover re-upload)', () => {
    const cache = new RemoteLogMetadataCache(TP0);
    // Old leader uploaded 0-100; the new leader uploads 0-200 covering it.
    finished(cache, { id: 1, start: 0, end: 100 });
    finished(cache, { id: 2, start: 0, end: 200 });
    assert.equal(cache.remoteLogSegmentMetadata(0, 50n)?.remoteLogSegmentId.id, segmentId(2));
    // As in Kafka: sorted by start offset, the served segment before superseded ones on ties.
    assert.deepEqual(ids(cache.listRemoteLogSegmentsForEpoch(0)), [segmentId(2), segmentId(1)], 'the superseded one is still listed');
    assert.deepEqual(ids(cache.listRemoteLogSegments()), [segmentId(1), segmentId(2)], 'all segments: ties in order of addition');
    // Overlap: 10-90 then 5-100 and 101-200: offset 95 resolves to the later upload.
    const c2 = new RemoteLogMetadataCache(TP0);
    finished(c2, { id: 10, start: 10, end: 90 });
    finished(c2, { id: 11, start: 5, end: 100 });
    finished(c2, { id: 12, start: 101, end: 200 });
    assert.equal(c2.remoteLogSegmentMetadata(0, 95n)?.remoteLogSegmentId.id, segmentId(11));
    assert.equal(c2.remoteLogSegmentMetadata(0, 20n)?.remoteLogSegmentId.id, segmentId(11));
    assert.equal(c2.remoteLogSegmentMetadata(0, 150n)?.remoteLogSegmentId.id, segmentId(12));
  });

  it('keeps the fields of the segment and applies the update fields', () => {
    const cache = new RemoteLogMetadataCache(TP0);
    const custom = Buffer.from('custom');
    cache.addCopyInProgressSegment(segment({ id: 7, start: 5, end: 9, size: 77, txnIndexEmpty: false, customMetadata: custom }));
    const m = cache.segment(segmentId(7));
    assert.deepEqual(m, { ...segment({ id: 7, start: 5, end: 9, size: 77, txnIndexEmpty: false, customMetadata: custom }) });
    cache.updateRemoteLogSegmentMetadata({ ...update(7, 'COPY_SEGMENT_FINISHED'), customMetadata: Buffer.from('new') });
    assert.deepEqual(cache.segment(segmentId(7))?.customMetadata, Buffer.from('new'));
    cache.updateRemoteLogSegmentMetadata(update(7, 'DELETE_SEGMENT_STARTED'));
    assert.equal(cache.segment(segmentId(7))?.customMetadata, undefined, 'an update without custom metadata clears it');
  });

  it('rejects illegal transitions, unknown segments and bad segments without changing state', () => {
    const cache = new RemoteLogMetadataCache(TP0);
    assert.throws(() => cache.updateRemoteLogSegmentMetadata(update(1, 'COPY_SEGMENT_FINISHED')), RemoteResourceNotFoundError);
    cache.addCopyInProgressSegment(segment({ id: 1, start: 0, end: 9 }));
    assert.throws(() => cache.addCopyInProgressSegment(segment({ id: 1, start: 0, end: 9 })), IllegalStateTransitionError);
    assert.throws(() => cache.addCopyInProgressSegment({ ...segment({ id: 2, start: 0, end: 9 }), state: 'COPY_SEGMENT_FINISHED' }), IllegalStateTransitionError);
    assert.throws(() => cache.updateRemoteLogSegmentMetadata(update(1, 'DELETE_SEGMENT_FINISHED')), IllegalStateTransitionError);
    assert.throws(() => cache.updateRemoteLogSegmentMetadata(update(1, 'COPY_SEGMENT_STARTED')), IllegalStateTransitionError);
    assert.equal(cache.segmentState(segmentId(1)), 'COPY_SEGMENT_STARTED');
    assert.throws(() => cache.addCopyInProgressSegment(segment({ id: 3, start: 10, end: 9 })), InvalidRemoteLogMetadataError);
    assert.throws(() => cache.addCopyInProgressSegment(segment({ id: 3, start: 0, end: 9, epochs: [] })), InvalidRemoteLogMetadataError);
    assert.throws(() => cache.addCopyInProgressSegment(segment({ id: 3, start: 0, end: 9, epochs: [[2, 0], [1, 5]] })), InvalidRemoteLogMetadataError);
    assert.throws(() => cache.addCopyInProgressSegment(segment({ id: 3, start: 0, end: 9, epochs: [[2, 10]] })), InvalidRemoteLogMetadataError);
    assert.throws(() => cache.addCopyInProgressSegment(segment({ id: 3, start: 0, end: 9, tp: TP1 })), InvalidRemoteLogMetadataError);
    assert.equal(cache.segmentCount, 1);
  });

  it('reuses slots of deleted segments and keeps lookups by id right through many deletions', () => {
    const cache = new RemoteLogMetadataCache(TP0);
    const live = new Set<number>();
    let next = 0;
    for (let round = 0; round < 40; round++) {
      for (let i = 0; i < 50; i++) {
        finished(cache, { id: next, start: next * 10, end: next * 10 + 9 });
        live.add(next++);
      }
      // Expire the 40 oldest, as retention does.
      const oldest = [...live].sort((a, b) => a - b).slice(0, 40);
      for (const id of oldest) {
        cache.updateRemoteLogSegmentMetadata(update(id, 'DELETE_SEGMENT_STARTED'));
        cache.updateRemoteLogSegmentMetadata(update(id, 'DELETE_SEGMENT_FINISHED'));
        live.delete(id);
      }
    }
    assert.equal(cache.segmentCount, live.size);
    for (let id = 0; id < next; id++) assert.equal(cache.segment(segmentId(id)) !== undefined, live.has(id), `segment ${id}`);
    const listed = cache.listRemoteLogSegments().map((m) => Number(m.startOffset / 10n));
    assert.deepEqual(listed, [...live].sort((a, b) => a - b));
    const first = Math.min(...live);
    assert.equal(cache.earliestRemoteOffset(), BigInt(first * 10));
    assert.equal(cache.remoteLogSegmentMetadata(0, BigInt(first * 10 + 5))?.remoteLogSegmentId.id, segmentId(first));
    assert.equal(cache.remoteLogSegmentMetadata(0, BigInt(first * 10 - 5)), undefined);
  });
});
