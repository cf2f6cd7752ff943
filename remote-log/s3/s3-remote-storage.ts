// RemoteStorage on S3 or an S3-compatible server: the three layers put
// together (thin client -> retrying transport in S3ObjectStore -> the shared
// storage logic). Works unchanged against AWS S3 and MinIO.
import type { ObjectRemoteStorageOptions } from '../objects/object-remote-storage.js';
import { ObjectRemoteStorage } from '../objects/object-remote-storage.js';
import type { S3ClientOptions } from './s3-client.js';
import { createS3Client } from './s3-client.js';
import type { S3ObjectStoreOptions } from './s3-object-store.js';
import { S3ObjectStore } from './s3-object-store.js';

export interface S3RemoteStorageOptions
  extends ObjectRemoteStorageOptions,
    S3ClientOptions,
    Omit<S3ObjectStoreOptions, 'client' | 'bucket'> {}

export class S3RemoteStorage extends ObjectRemoteStorage {
  override readonly store: S3ObjectStore;

  constructor(options: S3RemoteStorageOptions) {
    const store = new S3ObjectStore({
      ...options,
      client: createS3Client(options),
      readClient: createS3Client(options, options.readHttpHandler ?? 'direct'),
    });
    super(store, options);
    this.store = store;
  }
}
