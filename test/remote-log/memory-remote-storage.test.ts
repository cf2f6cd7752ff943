import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../../broker/clock.js';
import { MemoryObjectStore, MemoryRemoteStorage } from '../../remote-log/memory/memory-remote-storage.js';
import type { ObjectBody } from '../../remote-log/object-store.js';
import { makeSegment, newRef, remoteStorageContract } from './remote-storage.contract.js';

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
}

describe('MemoryRemoteStorage', () => {
  it('writes the manifest after every other object', async () => {
    const store = new RecordingStore();
    const storage = new MemoryRemoteStorage({ chunkSize: 1000 }, store);
    await storage.copySegment(newRef(), makeSegment(5000, 1).files);
    assert.equal(store.order.length, 7);
    assert.equal(store.order.at(-1), 'manifest');
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
