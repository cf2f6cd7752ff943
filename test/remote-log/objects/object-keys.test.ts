import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { afterBaseOffset, objectKey, parseObjectKey, partitionPrefix, OBJECT_KINDS, topicPrefix } from '../../../remote-log/objects/object-keys.js';
import type { RemoteSegmentRef } from '../../../remote-log/remote-storage.js';

const ref: RemoteSegmentRef = {
  topic: 'orders-eu',
  topicId: 'AAAAAAAAAAAAAAAAAAAA-w',
  partition: 12,
  baseOffset: 4242n,
  segmentId: '_-_-_-_-_-_-_-_-_-_-_w',
};

describe('object keys', () => {
  it('builds the documented layout', () => {
    assert.equal(
      objectKey('tiered/', ref, 'log'),
      'tiered/orders-eu-AAAAAAAAAAAAAAAAAAAA-w/12/00000000000000004242-_-_-_-_-_-_-_-_-_-_-_w.log',
    );
    assert.equal(objectKey('', ref, 'leader-epoch-checkpoint').split('.').at(-1), 'leader-epoch-checkpoint');
    assert.equal(topicPrefix('p/', 'x', ref.topicId), `p/x-${ref.topicId}/`);
    assert.equal(partitionPrefix('', 'x', ref.topicId, 0), `x-${ref.topicId}/0/`);
  });

  it('parses what it builds, for every kind', () => {
    for (const kind of OBJECT_KINDS) assert.deepEqual(parseObjectKey('tiered/', objectKey('tiered/', ref, kind)), { ref, kind });
  });

  it('round-trips arbitrary refs', () => {
    const id = fc.uint8Array({ minLength: 16, maxLength: 16 }).map((b) => Buffer.from(b).toString('base64url'));
    const topic = fc.stringMatching(/^[A-Za-z0-9._-]{1,40}$/).filter((t) => t !== '.' && t !== '..');
    fc.assert(
      fc.property(topic, id, id, fc.integer({ min: 0, max: 0x7fffffff }), fc.bigInt({ min: 0n, max: (1n << 63n) - 1n }), (t, tid, sid, p, off) => {
        const r: RemoteSegmentRef = { topic: t, topicId: tid, partition: p, baseOffset: off, segmentId: sid };
        assert.deepEqual(parseObjectKey('x/', objectKey('x/', r, 'manifest')), { ref: r, kind: 'manifest' });
      }),
    );
  });

  it('rejects keys that are not segment objects', () => {
    const good = objectKey('', ref, 'index');
    for (const key of [
      'other/prefix',
      good.replace('.index', '.exe'),
      good.replace('/12/', '/012/'),
      good.replace('00000000000000004242', '4242'),
      `${good}/extra`,
      'short-abc/0/00000000000000000000-AAAAAAAAAAAAAAAAAAAAAA.log',
    ]) {
      assert.equal(parseObjectKey('', key), undefined, key);
    }
    assert.equal(parseObjectKey('p/', good), undefined, 'wrong prefix');
  });

  it('refuses refs that cannot make a key', () => {
    assert.throws(() => objectKey('', { ...ref, topic: 'a/b' }, 'log'), RangeError);
    assert.throws(() => objectKey('', { ...ref, topicId: 'short' }, 'log'), RangeError);
    assert.throws(() => objectKey('', { ...ref, baseOffset: -1n }, 'log'), RangeError);
    assert.throws(() => objectKey('', { ...ref, partition: 1.5 }, 'log'), RangeError);
  });

  it('afterBaseOffset sorts after every key of segments at or below the offset and before those above', () => {
    const id = fc.uint8Array({ minLength: 16, maxLength: 16 }).map((b) => Buffer.from(b).toString('base64url'));
    const offset = fc.bigInt({ min: 0n, max: (1n << 63n) - 2n });
    fc.assert(
      fc.property(offset, offset, id, fc.constantFrom(...OBJECT_KINDS), (bound, base, sid, kind) => {
        const key = objectKey('p/', { ...ref, baseOffset: base, segmentId: sid }, kind);
        const after = afterBaseOffset('p/', ref.topic, ref.topicId, ref.partition, bound);
        assert.ok(after.startsWith(partitionPrefix('p/', ref.topic, ref.topicId, ref.partition)));
        // Byte order, as S3 compares keys (the keys are ASCII, so string order is the same).
        assert.equal(Buffer.compare(Buffer.from(key), Buffer.from(after)) > 0, base > bound, `${key} vs ${after}`);
      }),
    );
    assert.throws(() => afterBaseOffset('', ref.topic, ref.topicId, 0, -1n), RangeError);
  });
});
