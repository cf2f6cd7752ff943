import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { IndexCache } from '../../../remote-log/read/index-cache.js';
import { MemoryRemoteStorage } from '../../../remote-log/memory/memory-remote-storage.js';
import type { IndexKind, RemoteSegmentRef } from '../../../remote-log/remote-storage.js';
import { RemoteAbortedError, RemoteResourceNotFoundError } from '../../../remote-log/remote-storage.js';
import { makeSegment, newRef } from '../remote-storage.contract.js';

describe('IndexCache', () => {
  it('caches indexes per segment and kind within its byte limit', async () => {
    const storage = new MemoryRemoteStorage();
    const calls: string[] = [];
    const source = {
      fetchIndex: (ref: RemoteSegmentRef, kind: IndexKind, signal?: AbortSignal) => {
        calls.push(`${ref.segmentId}:${kind}`);
        return storage.fetchIndex(ref, kind, signal);
      },
    };
    const segs = [makeSegment(100, 1), makeSegment(100, 2), makeSegment(100, 3)];
    const refs = segs.map(() => newRef());
    for (let i = 0; i < segs.length; i++) await storage.copySegment(refs[i]!, segs[i]!.files);
    const offsetSize = segs[0]!.indexes.offset.length;
    const timeSize = segs[0]!.indexes.time.length;
    // Room for two segments' offset + time indexes.
    const cache = new IndexCache({ source, maxBytes: 2 * (offsetSize + timeSize) });

    assert.deepEqual(await cache.get(refs[0]!, 'offset'), segs[0]!.indexes.offset);
    assert.deepEqual(await cache.get(refs[0]!, 'offset'), segs[0]!.indexes.offset);
    assert.deepEqual(await cache.get(refs[0]!, 'time'), segs[0]!.indexes.time);
    assert.deepEqual(cache.stats(), { hits: 1, misses: 2, evictions: 0, bytes: offsetSize + timeSize, entries: 2 });
    for (const r of refs) {
      await cache.get(r, 'offset');
      await cache.get(r, 'time');
      assert.ok(cache.stats().bytes <= cache.maxBytes);
    }
    assert.equal(cache.stats().entries, 4);
    assert.equal(cache.stats().evictions, 2);
    cache.invalidate(refs[2]!);
    assert.equal(cache.stats().entries, 2);
    assert.equal(calls.length, 6);
  });

  it('shares concurrent fetches, lets a reader give up, and does not cache failures', async () => {
    const storage = new MemoryRemoteStorage();
    const seg = makeSegment(100, 4);
    const ref = newRef();
    await storage.copySegment(ref, seg.files);
    let calls = 0;
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => (release = r));
    const cache = new IndexCache({
      source: { fetchIndex: async (r, k, s) => { calls++; await gate; return storage.fetchIndex(r, k, s); } },
      maxBytes: 1 << 20,
    });
    const controller = new AbortController();
    const a = cache.get(ref, 'time', controller.signal);
    const b = cache.get(ref, 'time');
    controller.abort();
    await assert.rejects(a, RemoteAbortedError);
    release();
    assert.deepEqual(await b, seg.indexes.time);
    assert.equal(calls, 1);
    await assert.rejects(cache.get(newRef(), 'offset'), RemoteResourceNotFoundError);
    assert.equal(cache.stats().entries, 1);
  });
});
