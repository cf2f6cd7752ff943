import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../../../broker/common/clock.js';
import { MemoryObjectStore, MemoryRemoteStorage } from '../../../remote-log/memory/memory-remote-storage.js';
import type { ObjectBody } from '../../../remote-log/objects/object-store.js';
import { makeSegment, newRef, remoteStorageContract } from '../remote-storage.contract.js';

remoteStorageContract({
  name: 'MemoryRemoteStorage',
  async openStore() {
    const objects = new MemoryObjectStore();
    const prefix = 'mem/';
    return {
      prefix,
      open: (options) => new MemoryRemoteStorage({ ...options, prefix }, objects),
      rawPut: async (key, bytes) => objects.poke(key, bytes),
      rawGet: async (key) => objects.peek(key),
      rawList: async () => (await objects.list('')).map((o) => o.key),
      close: async () => {},
    };
  },
});

/** Records the order of completed puts. */
class RecordingStore extends MemoryObjectStore {
  readonly order: string[] = [];
  override async put(key: string, body: ObjectBody, signal?: AbortSignal): Promise<void> {
    await super.put(key, body, signal);
    this.order.push(key.slice(key.lastIndexOf('.') + 1));
  }
  override async delete(key: string, signal?: AbortSignal): Promise<void> {
    await super.delete(key, signal);
    this.order.push(`delete ${key.slice(key.lastIndexOf('.') + 1)}`);
  }
}

describe('MemoryRemoteStorage', () => {
  it('writes the manifest after every other object', async () => {
    const store = new RecordingStore();
    const storage = new MemoryRemoteStorage({ chunkSize: 1000 }, store);
    await storage.copySegment(newRef(), makeSegment(5000, 1).files);
    const puts = store.order.filter((o) => !o.startsWith('delete'));
    assert.equal(puts.length, 7);
    assert.equal(puts.at(-1), 'manifest');
  });

  it('skips deleting a previous manifest only when the caller vouches the segment id is fresh', async () => {
    const store = new RecordingStore();
    const storage = new MemoryRemoteStorage({ chunkSize: 1000 }, store);
    await storage.copySegment(newRef(), { ...makeSegment(3000, 1).files, freshSegmentId: true });
    assert.ok(!store.order.some((o) => o.startsWith('delete')), store.order.join());
    store.order.length = 0;
    const ref = newRef();
    await storage.copySegment(ref, makeSegment(3000, 2).files);
    assert.equal(store.order[0], 'delete manifest');
    // A retry with the same id still overwrites and serves the new bytes.
    const second = makeSegment(3000, 3);
    await storage.copySegment(ref, second.files);
    storage.clearManifestCache();
    assert.deepEqual(await storage.fetchData(ref, 0), second.data);
  });

  it('stamps objects with the injected clock', async () => {
    const clock = new ManualClock(5_000);
    const storage = new MemoryRemoteStorage({ clock });
    const ref = newRef();
    await storage.copySegment(ref, makeSegment(10, 2).files);
    const [listing] = await storage.listSegments();
    assert.equal(listing?.lastModified, 5_000);
  });
});
