// The tiering scenario on the in-memory and the filesystem backends.
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { describe, it } from 'node:test';
import { FileSystemRemoteStorage } from '../../remote-log/filesystem/filesystem-remote-storage.js';
import { MemoryRemoteStorage } from '../../remote-log/memory/memory-remote-storage.js';
import { CHUNK_SIZE } from './helpers.js';
import { tieringScenario } from './scenario.js';

describe('tiering scenario', () => {
  it('on MemoryRemoteStorage', async () => {
    let storage: MemoryRemoteStorage | undefined;
    await tieringScenario({
      storage: (clock) => (storage = new MemoryRemoteStorage({ clock, chunkSize: CHUNK_SIZE })),
      inspect: async () => (await storage!.store.list('')).map((o) => o.key),
      compression: 'none',
    });
  });

  it('on FileSystemRemoteStorage (zstd-compressed chunks)', async () => {
    let root = '';
    await tieringScenario({
      storage: (_clock, dir) => {
        root = dir;
        return new FileSystemRemoteStorage(dir, { chunkSize: CHUNK_SIZE, compression: true, fsync: false });
      },
      inspect: async () => {
        const entries = await readdir(root, { recursive: true, withFileTypes: true }).catch(() => []);
        return entries.filter((e) => e.isFile()).map((e) => path.relative(root, path.join(e.parentPath, e.name)).split(path.sep).join('/'));
      },
      compression: 'zstd-chunked',
    });
  });
});
