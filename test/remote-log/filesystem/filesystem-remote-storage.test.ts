import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { FileSystemObjectStore } from '../../../remote-log/filesystem/filesystem-object-store.js';
import { FileSystemRemoteStorage } from '../../../remote-log/filesystem/filesystem-remote-storage.js';
import { RemoteResourceNotFoundError } from '../../../remote-log/remote-storage.js';
import { makeSegment, newRef, remoteStorageContract } from '../remote-storage.contract.js';

remoteStorageContract({
  name: 'FileSystemRemoteStorage',
  async openStore() {
    const root = await mkdtemp(path.join(tmpdir(), 'sediment-fs-store-'));
    const raw = new FileSystemObjectStore(root);
    const prefix = 'cluster-a/';
    return {
      prefix,
      open: (options) => new FileSystemRemoteStorage(root, { ...options, prefix }),
      rawPut: (key, bytes) => raw.put(key, bytes),
      rawGet: (key) => raw.get(key).catch((e: unknown) => {
        if (e instanceof RemoteResourceNotFoundError) return undefined;
        throw e;
      }),
      rawList: async () => (await raw.list('')).map((o) => o.key),
      close: () => rm(root, { recursive: true, force: true }),
    };
  },
});

describe('FileSystemObjectStore', () => {
  it('lays objects out as files under the root, skipping stray temporary files', async () => {
    const root = await mkdtemp(path.join(tmpdir(), 'sediment-fs-'));
    try {
      const storage = new FileSystemRemoteStorage(root);
      const ref = newRef({ topic: 't', partition: 0, baseOffset: 0n });
      await storage.copySegment(ref, makeSegment(10, 1).files);
      const dir = path.join(root, `t-${ref.topicId}`, '0');
      const files = (await readdir(dir)).sort();
      assert.equal(files.length, 7);
      assert.ok(files.every((f) => f.startsWith(`00000000000000000000-${ref.segmentId}.`)));
      // A crash mid-write leaves a temporary file; it is not an object.
      await writeFile(path.join(dir, `00000000000000000000-${ref.segmentId}.log.sediment-tmp-abc`), 'torn');
      const [listing] = await storage.listSegments();
      assert.equal(listing?.objects.length, 7);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it('refuses keys that escape the root', async () => {
    const store = new FileSystemObjectStore('/tmp/nowhere');
    for (const key of ['../x', 'a/../../x', '/abs', 'a//b', '']) assert.throws(() => store.pathOf(key), RangeError);
  });

  it('lists by prefix inside nested directories', async () => {
    const root = await mkdtemp(path.join(tmpdir(), 'sediment-fs-'));
    try {
      const store = new FileSystemObjectStore(root, { fsync: false });
      await store.put('a/b/c1', Buffer.from('1'));
      await store.put('a/b/c2', Buffer.from('22'));
      await store.put('a/bb/c', Buffer.from('3'));
      await store.put('z', Buffer.from('4'));
      await mkdir(path.join(root, 'empty'));
      assert.deepEqual((await store.list('a/b/')).map((o) => o.key), ['a/b/c1', 'a/b/c2']);
      assert.deepEqual((await store.list('a/b')).map((o) => o.key), ['a/b/c1', 'a/b/c2', 'a/bb/c']);
      assert.deepEqual((await store.list('')).map((o) => [o.key, o.size]), [['a/b/c1', 1], ['a/b/c2', 2], ['a/bb/c', 1], ['z', 1]]);
      assert.deepEqual(await store.list('nope/'), []);
      assert.deepEqual(await store.get('a/b/c2', { start: 1, endInclusive: 10 }), Buffer.from('2'));
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
