// RemoteStorage on a directory (remote.log.storage.url file://...): the shared
// storage logic (ObjectRemoteStorage) over FileSystemObjectStore.
import type { ObjectRemoteStorageOptions } from '../objects/object-remote-storage.js';
import { ObjectRemoteStorage } from '../objects/object-remote-storage.js';
import { FileSystemObjectStore, type FileSystemObjectStoreOptions } from './filesystem-object-store.js';

export interface FileSystemRemoteStorageOptions extends ObjectRemoteStorageOptions, FileSystemObjectStoreOptions {}

export class FileSystemRemoteStorage extends ObjectRemoteStorage {
  override readonly store: FileSystemObjectStore;

  constructor(root: string, options: FileSystemRemoteStorageOptions = {}) {
    const store = new FileSystemObjectStore(root, options);
    super(store, options);
    this.store = store;
  }
}
