// In-memory object store and RemoteStorage for fast tests: the same storage
// logic as the real backends, over a Map. Objects are copied in and out, so a
// caller mutating a returned Buffer cannot change what is stored.
import type { Clock } from '../../broker/common/clock.js';
import { systemClock } from '../../broker/common/clock.js';
import type { ObjectRemoteStorageOptions } from '../objects/object-remote-storage.js';
import { ObjectRemoteStorage } from '../objects/object-remote-storage.js';
import type { ByteRange, ObjectBody, ObjectInfo, ObjectStore, PieceListener, PieceTargets } from '../objects/object-store.js';
import { clampRange, collectBody, copyPieces } from '../objects/object-store.js';
import { RemoteResourceNotFoundError, RemoteStorageError, throwIfAborted } from '../remote-storage.js';

interface Entry {
  data: Buffer;
  lastModified: number;
}

export class MemoryObjectStore implements ObjectStore {
  readonly description = 'memory://';
  private readonly objects = new Map<string, Entry>();
  private closed = false;

  constructor(private readonly clock: Clock = systemClock) {}

  async put(key: string, body: ObjectBody, signal?: AbortSignal): Promise<void> {
    this.checkOpen();
    throwIfAborted(signal, `put ${key}`);
    const bytes = await collectBody(body, signal);
    throwIfAborted(signal, `put ${key}`);
    this.objects.set(key, { data: Buffer.from(bytes), lastModified: this.clock.now() });
  }

  async get(key: string, range?: ByteRange, signal?: AbortSignal): Promise<Buffer> {
    this.checkOpen();
    throwIfAborted(signal, `get ${key}`);
    const e = this.objects.get(key);
    if (e === undefined) throw new RemoteResourceNotFoundError(`memory://${key} does not exist`);
    const { start, end } = clampRange(e.data.length, range);
    return Buffer.from(e.data.subarray(start, end));
  }

  async getPieces(key: string, range: ByteRange, lengths: readonly number[], signal?: AbortSignal, onPiece?: PieceListener, targets?: PieceTargets): Promise<Buffer[]> {
    this.checkOpen();
    throwIfAborted(signal, `get ${key}`);
    const e = this.objects.get(key);
    if (e === undefined) throw new RemoteResourceNotFoundError(`memory://${key} does not exist`);
    const { start, end } = clampRange(e.data.length, range);
    return copyPieces(e.data.subarray(start, end), lengths, onPiece, targets);
  }

  async delete(key: string, signal?: AbortSignal): Promise<void> {
    this.checkOpen();
    throwIfAborted(signal, `delete ${key}`);
    this.objects.delete(key);
  }

  async list(prefix: string, signal?: AbortSignal, startAfter?: string): Promise<ObjectInfo[]> {
    this.checkOpen();
    throwIfAborted(signal, `list ${prefix}`);
    const out: ObjectInfo[] = [];
    for (const [key, e] of this.objects) {
      if (key.startsWith(prefix) && (startAfter === undefined || key > startAfter)) out.push({ key, size: e.data.length, lastModified: e.lastModified });
    }
    return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  /** Test access: the stored bytes (a copy), or undefined. */
  peek(key: string): Buffer | undefined {
    const e = this.objects.get(key);
    return e === undefined ? undefined : Buffer.from(e.data);
  }

  /** Test access: replace an object's bytes behind the storage's back. */
  poke(key: string, data: Buffer): void {
    this.objects.set(key, { data: Buffer.from(data), lastModified: this.clock.now() });
  }

  get size(): number {
    return this.objects.size;
  }

  private checkOpen(): void {
    if (this.closed) throw new RemoteStorageError('memory remote storage is closed');
  }
}

export interface MemoryRemoteStorageOptions extends ObjectRemoteStorageOptions {
  readonly clock?: Clock;
}

export class MemoryRemoteStorage extends ObjectRemoteStorage {
  override readonly store: MemoryObjectStore;

  /** With `shared`, several storages use one object map, and close() leaves it open. */
  constructor(options: MemoryRemoteStorageOptions = {}, shared?: MemoryObjectStore) {
    const store = shared ?? new MemoryObjectStore(options.clock);
    super(store, { ...options, ownsStore: options.ownsStore ?? shared === undefined });
    this.store = store;
  }
}
