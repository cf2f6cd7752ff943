// The storage logic shared by every backend: RemoteStorage on top of a flat
// ObjectStore. It lays out a segment's objects under the keys of
// object-keys.ts, writes the manifest last (after deleting any previous one,
// so a re-copy is incomplete until it finishes, unless the segment id is fresh), verifies every fetched byte
// against the manifest's CRCs, and serves ranged reads of chunked (optionally
// zstd-compressed) data by fetching only the chunks that cover the range.
import { crc32c } from '@node-rs/crc32';
import { LRUCache } from 'lru-cache';
import { encodeCopySummary } from './copy-summary.js';
import { ChunkedDataWriter, DEFAULT_CHUNK_SIZE, DEFAULT_ZSTD_LEVEL, chunksCovering, decodeChunks, decodeStoredChunk } from './chunked-zstd.js';
import type { Manifest, ObjectEntry } from './manifest.js';
import { MANIFEST_FORMAT_VERSION, chunkCount, decodeManifest, encodeManifest, storedChunkRange } from './manifest.js';
import { objectKey, parseObjectKey, segmentIdentity, validateRef } from './object-keys.js';
import type { ObjectStore, PieceListener, PieceTargets } from './object-store.js';
import { copyPieces, pieceCrc32c } from './object-store.js';
import type {
  ChunkListener,
  ChunkTargets,
  CopyResult,
  IndexKind,
  ListedObject,
  ObjectKind,
  RemoteSegmentListing,
  RemoteSegmentRef,
  RemoteStorage,
  SegmentFiles,
  SegmentSource,
  StoredObject,
} from '../remote-storage.js';
import {
  INDEX_KIND_TO_OBJECT,
  RemoteCorruptionError,
  RemoteResourceNotFoundError,
  RemoteStorageError,
  throwIfAborted,
} from '../remote-storage.js';
import { readChunks, readWhole, sourceSize } from './segment-source.js';

export interface ObjectRemoteStorageOptions {
  /** Prepended to every key as is (`tiered/` gives `tiered/<topic>-<id>/...`). Default ''. */
  readonly prefix?: string;
  /** Original bytes per data chunk: the unit of CRCs, compression and ranged reads. Default 1 MiB. */
  readonly chunkSize?: number;
  /** zstd-compress data whose batches the caller declares uncompressed. Default false. */
  readonly compression?: boolean;
  readonly zstdLevel?: number;
  /** Manifests kept in memory (each is small). Default 1024. */
  readonly manifestCacheEntries?: number;
  /** Whether close() closes the object store too (false when several storages share one). Default true. */
  readonly ownsStore?: boolean;
}

type IndexObjectKind = Exclude<ObjectKind, 'log' | 'manifest'>;

const INDEX_FILES: ReadonlyArray<[IndexObjectKind, keyof SegmentFiles]> = [
  ['index', 'offsetIndex'],
  ['timeindex', 'timeIndex'],
  ['txnindex', 'txnIndex'],
  ['snapshot', 'producerSnapshot'],
  ['leader-epoch-checkpoint', 'leaderEpochCheckpoint'],
];

function linkedController(signal: AbortSignal | undefined): { controller: AbortController; unlink: () => void } {
  const controller = new AbortController();
  if (signal === undefined) return { controller, unlink: () => {} };
  if (signal.aborted) {
    controller.abort(signal.reason);
    return { controller, unlink: () => {} };
  }
  const onAbort = (): void => controller.abort(signal.reason);
  signal.addEventListener('abort', onAbort, { once: true });
  return { controller, unlink: () => signal.removeEventListener('abort', onAbort) };
}

function describeRef(ref: RemoteSegmentRef): string {
  return `${ref.topic}-${ref.partition} segment ${ref.segmentId} (base offset ${ref.baseOffset})`;
}

export class ObjectRemoteStorage implements RemoteStorage {
  readonly prefix: string;
  readonly chunkSize: number;
  readonly compression: boolean;
  private readonly zstdLevel: number;
  private readonly manifests: LRUCache<string, Manifest>;
  private readonly ownsStore: boolean;

  constructor(
    readonly store: ObjectStore,
    options: ObjectRemoteStorageOptions = {},
  ) {
    this.prefix = options.prefix ?? '';
    this.chunkSize = options.chunkSize ?? DEFAULT_CHUNK_SIZE;
    if (!Number.isSafeInteger(this.chunkSize) || this.chunkSize <= 0) throw new RangeError(`chunkSize must be positive: ${this.chunkSize}`);
    this.compression = options.compression ?? false;
    this.zstdLevel = options.zstdLevel ?? DEFAULT_ZSTD_LEVEL;
    this.manifests = new LRUCache({ max: Math.max(1, options.manifestCacheEntries ?? 1024) });
    this.ownsStore = options.ownsStore ?? true;
  }

  key(ref: RemoteSegmentRef, kind: ObjectKind): string {
    return objectKey(this.prefix, ref, kind);
  }

  async copySegment(ref: RemoteSegmentRef, files: SegmentFiles, signal?: AbortSignal): Promise<CopyResult> {
    validateRef(ref);
    throwIfAborted(signal, `copy of ${describeRef(ref)}`);
    const id = segmentIdentity(ref);
    this.manifests.delete(id);
    // A previous attempt may have finished: make the segment incomplete before overwriting its objects
    // (unless the caller vouches that this id was never used).
    if (files.freshSegmentId !== true) {
      await this.store.delete(this.key(ref, 'manifest'), signal).catch((e: unknown) => {
        throw this.wrap(e, `copy of ${describeRef(ref)}`);
      });
    }

    const { controller, unlink } = linkedController(signal);
    const inner = controller.signal;
    const compression = this.compression && files.batchesUncompressed === true ? 'zstd-chunked' : 'none';
    const writer = new ChunkedDataWriter(this.chunkSize, compression, this.zstdLevel);
    const objects: Partial<Record<Exclude<ObjectKind, 'manifest'>, ObjectEntry>> = {};
    const uploads: Array<Promise<void>> = [];

    const source = files.data;
    const dataKey = this.key(ref, 'log');
    const chunkSize = this.chunkSize;
    const blockSize = Math.max(chunkSize, this.store.preferredPieceSize ?? 8 * 1024 * 1024);
    // Uncompressed, the stored chunks are the bytes read: read them into the store's own part buffers,
    // which it uploads in place. (Compressed, the store copies the frames, so the reads stay in one buffer.)
    const lender = compression === 'none' ? this.store.pieceBuffers : undefined;
    async function* storedChunks(): AsyncGenerator<Buffer> {
      for await (const chunk of readChunks(source, chunkSize, 'segment data', inner, blockSize, lender)) {
        const stored = writer.add(chunk);
        // The store's upload checksums are combined from these rather than computed again.
        pieceCrc32c.set(stored, writer.lastChunkCrc32c);
        yield stored;
      }
    }
    uploads.push(
      this.store.put(dataKey, storedChunks(), inner, await sourceSize(source)).then(() => {
        objects.log = { size: writer.storedBytes, crc32c: writer.storedCrc32c };
      }),
    );
    for (const [kind, field] of INDEX_FILES) {
      const src = files[field] as SegmentSource | undefined;
      if (src === undefined) continue;
      uploads.push(
        (async () => {
          const bytes = await readWhole(src, kind, inner);
          await this.store.put(this.key(ref, kind), bytes, inner);
          objects[kind] = { size: bytes.length, crc32c: crc32c(bytes) };
        })(),
      );
    }
    // The first failure cancels the other uploads; wait for all of them to settle before reporting it.
    let firstFailure: { error: unknown } | undefined;
    await Promise.allSettled(
      uploads.map((p) =>
        p.catch((e: unknown) => {
          firstFailure ??= { error: e };
          controller.abort(e);
        }),
      ),
    );
    unlink();
    if (firstFailure !== undefined) throw this.wrap(firstFailure.error, `copy of ${describeRef(ref)}`);

    // Batches that fail their CRC (corrupted on local disk) go up all the same, as before; reads of an
    // unverified segment check every batch and refuse the bad one.
    const verdict = writer.batchVerdict();
    const manifest: Manifest = {
      formatVersion: MANIFEST_FORMAT_VERSION,
      segment: ref,
      objects,
      data: writer.layout(),
      batchesVerified: verdict.verified,
    };
    const manifestBytes = encodeManifest(manifest);
    const manifestKey = this.key(ref, 'manifest');
    await this.store.put(manifestKey, manifestBytes, signal).catch((e: unknown) => {
      throw this.wrap(e, `writing ${manifestKey}`);
    });
    this.manifests.set(id, manifest);

    const stored: Partial<Record<ObjectKind, StoredObject>> = {};
    for (const [kind, entry] of Object.entries(objects) as Array<[ObjectKind, ObjectEntry]>) {
      stored[kind] = { key: this.key(ref, kind), size: entry.size, crc32c: entry.crc32c };
    }
    stored.manifest = { key: manifestKey, size: manifestBytes.length, crc32c: crc32c(manifestBytes) };
    const summary = encodeCopySummary({
      v: MANIFEST_FORMAT_VERSION,
      compression,
      chunkSize: this.chunkSize,
      dataSize: manifest.data.size,
      storedDataSize: writer.storedBytes,
      batchesVerified: verdict.verified,
    });
    return {
      manifestKey,
      objects: stored,
      dataSize: manifest.data.size,
      storedDataSize: writer.storedBytes,
      compression,
      chunkSize: this.chunkSize,
      batchesVerified: verdict.verified,
      ...(verdict.verified ? {} : { batchProblem: verdict.problem }),
      customMetadata: summary,
    };
  }

  async fetchData(
    ref: RemoteSegmentRef,
    startPosition: number,
    endPositionInclusive?: number,
    signal?: AbortSignal,
  ): Promise<Buffer> {
    if (!Number.isSafeInteger(startPosition) || startPosition < 0) throw new RangeError(`invalid start position ${startPosition}`);
    if (endPositionInclusive !== undefined && !Number.isSafeInteger(endPositionInclusive)) {
      throw new RangeError(`invalid end position ${endPositionInclusive}`);
    }
    const manifest = await this.manifestOf(ref, signal);
    const layout = manifest.data;
    const end = Math.min(endPositionInclusive ?? layout.size - 1, layout.size - 1);
    if (startPosition >= layout.size || end < startPosition) return Buffer.alloc(0);
    const { first, last, storedStart, storedEnd } = chunksCovering(layout, startPosition, end);
    const key = this.key(ref, 'log');
    const stored = await this.get(key, { start: storedStart, endInclusive: storedEnd - 1 }, signal);
    const plain = decodeChunks(layout, first, last, stored, key);
    const offset = first * layout.chunkSize;
    return plain.subarray(startPosition - offset, end - offset + 1);
  }

  async fetchChunks(
    ref: RemoteSegmentRef,
    firstChunk: number,
    lastChunk: number,
    chunkSize: number,
    signal?: AbortSignal,
    onChunk?: ChunkListener,
    targets?: ChunkTargets,
  ): Promise<Buffer[]> {
    if (!Number.isSafeInteger(firstChunk) || firstChunk < 0 || !Number.isSafeInteger(lastChunk)) {
      throw new RangeError(`invalid chunks ${firstChunk}..${lastChunk}`);
    }
    if (!Number.isSafeInteger(chunkSize) || chunkSize <= 0) throw new RangeError(`invalid chunk size ${chunkSize}`);
    const manifest = await this.manifestOf(ref, signal);
    const layout = manifest.data;
    const last = Math.min(lastChunk, chunkCount(layout.size, chunkSize) - 1);
    if (firstChunk > last) return [];
    if (chunkSize !== layout.chunkSize) {
      // Stored under another chunk size: one ranged read, copied into pieces, told all at its end.
      const bytes = await this.fetchData(ref, firstChunk * chunkSize, (last + 1) * chunkSize - 1, signal);
      const chunks = copyPieces(bytes, Array.from({ length: last - firstChunk + 1 }, () => chunkSize));
      if (onChunk !== undefined) for (const [k, c] of chunks.entries()) onChunk(firstChunk + k, c);
      return chunks;
    }
    const key = this.key(ref, 'log');
    const range = { start: storedChunkRange(layout, firstChunk).start, endInclusive: storedChunkRange(layout, last).end - 1 };
    const lengths: number[] = [];
    for (let i = firstChunk; i <= last; i++) {
      const r = storedChunkRange(layout, i);
      lengths.push(r.end - r.start);
    }
    // Each stored chunk is verified (and decompressed: a fresh buffer) as soon as it has arrived, and told.
    const chunks: Buffer[] = [];
    const take = (k: number, piece: Buffer): void => {
      if (k !== chunks.length) throw new RemoteStorageError(`${key}: piece ${k} arrived out of order (expected ${chunks.length})`);
      const chunk = decodeStoredChunk(layout, firstChunk + k, piece, key);
      chunks.push(chunk);
      onChunk?.(firstChunk + k, chunk);
    };
    // Stored as they are read, the chunks may go straight into the caller's memory (compressed, they are decoded into fresh buffers).
    const lent: PieceTargets | undefined =
      targets === undefined || layout.compression !== 'none' ? undefined : (k, length) => targets(firstChunk + k, length);
    const pieces = await this.getPieces(key, range, lengths, signal, take, lent);
    // What was not told as it came: a store without streaming, or a short last piece (refused as truncated).
    for (let k = chunks.length; k < pieces.length; k++) take(k, pieces[k] as Buffer);
    if (chunks.length !== lengths.length) {
      throw new RemoteCorruptionError(`${key}: got ${chunks.length} of chunks ${firstChunk}..${last}, the manifest says ${layout.size} bytes`);
    }
    return chunks;
  }

  async fetchIndex(ref: RemoteSegmentRef, kind: IndexKind, signal?: AbortSignal): Promise<Buffer> {
    const objectKind = INDEX_KIND_TO_OBJECT[kind];
    const manifest = await this.manifestOf(ref, signal);
    const entry = manifest.objects[objectKind as Exclude<ObjectKind, 'manifest'>];
    if (entry === undefined) {
      if (kind === 'txn') return Buffer.alloc(0);
      throw new RemoteResourceNotFoundError(`${describeRef(ref)} has no ${kind} index in its manifest`);
    }
    const key = this.key(ref, objectKind);
    const bytes = await this.get(key, undefined, signal);
    if (bytes.length !== entry.size) {
      throw new RemoteCorruptionError(`${key}: size ${bytes.length} does not match the manifest (${entry.size})`);
    }
    const crc = crc32c(bytes);
    if (crc !== entry.crc32c) {
      throw new RemoteCorruptionError(`${key}: crc32c ${crc.toString(16)} does not match the manifest (${entry.crc32c.toString(16)})`);
    }
    return bytes;
  }

  async deleteSegment(ref: RemoteSegmentRef, signal?: AbortSignal): Promise<void> {
    validateRef(ref);
    this.manifests.delete(segmentIdentity(ref));
    // Manifest first: from then on the segment is incomplete and never served.
    await this.store.delete(this.key(ref, 'manifest'), signal);
    const rest: ObjectKind[] = ['log', 'index', 'timeindex', 'txnindex', 'snapshot', 'leader-epoch-checkpoint'];
    const settled = await Promise.allSettled([
      ...rest.map((k) => this.store.delete(this.key(ref, k), signal)),
      // A copy killed mid-upload (a crash) may have left the data object's multipart upload open.
      ...(this.store.abortUploads === undefined ? [] : [this.store.abortUploads(this.key(ref, 'log'), signal)]),
    ]);
    const failure = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failure !== undefined) throw this.wrap(failure.reason, `delete of ${describeRef(ref)}`);
  }

  async listSegments(prefix = '', signal?: AbortSignal, startAfter?: string): Promise<RemoteSegmentListing[]> {
    const infos = await this.store.list(this.prefix + prefix, signal, startAfter === undefined ? undefined : this.prefix + startAfter);
    const groups = new Map<string, { ref: RemoteSegmentRef; objects: ListedObject[] }>();
    for (const info of infos) {
      const parsed = parseObjectKey(this.prefix, info.key);
      if (parsed === undefined) continue;
      const id = segmentIdentity(parsed.ref);
      let g = groups.get(id);
      if (g === undefined) {
        g = { ref: parsed.ref, objects: [] };
        groups.set(id, g);
      }
      g.objects.push({ key: info.key, kind: parsed.kind, size: info.size, lastModified: info.lastModified });
    }
    return [...groups.values()].map((g) => ({
      ref: g.ref,
      objects: g.objects,
      hasManifest: g.objects.some((o) => o.kind === 'manifest'),
      lastModified: Math.max(...g.objects.map((o) => o.lastModified)),
    }));
  }

  /** Forgets cached manifests (tests use it after tampering with the store). */
  clearManifestCache(): void {
    this.manifests.clear();
  }

  async close(): Promise<void> {
    this.manifests.clear();
    if (this.ownsStore) await this.store.close();
  }

  /**
   * Caches a manifest another instance read for the same segment (the broker
   * sends it to its storage workers with each fetch, so a worker does not GET
   * again what the broker has read already), after the same check as a read.
   */
  adoptManifest(ref: RemoteSegmentRef, manifest: Manifest): void {
    validateRef(ref);
    const id = segmentIdentity(ref);
    if (this.manifests.has(id)) return;
    this.checkDescribes(manifest, ref, this.key(ref, 'manifest'));
    this.manifests.set(id, manifest);
  }

  private checkDescribes(manifest: Manifest, ref: RemoteSegmentRef, key: string): void {
    const s = manifest.segment;
    if (s.topic !== ref.topic || s.topicId !== ref.topicId || s.partition !== ref.partition || s.baseOffset !== ref.baseOffset || s.segmentId !== ref.segmentId) {
      throw new RemoteCorruptionError(`${key}: manifest describes another segment`);
    }
  }

  /** The segment's manifest: cached, or read from the store (one GET) and cached. */
  async manifestOf(ref: RemoteSegmentRef, signal?: AbortSignal): Promise<Manifest> {
    validateRef(ref);
    const id = segmentIdentity(ref);
    const cached = this.manifests.get(id);
    if (cached !== undefined) return cached;
    const key = this.key(ref, 'manifest');
    let bytes: Buffer;
    try {
      bytes = await this.store.get(key, undefined, signal);
    } catch (e) {
      if (e instanceof RemoteResourceNotFoundError) {
        throw new RemoteResourceNotFoundError(`${describeRef(ref)} has no manifest (incomplete or deleted): ${key}`, { cause: e });
      }
      throw this.wrap(e, `reading ${key}`);
    }
    const manifest = decodeManifest(bytes);
    this.checkDescribes(manifest, ref, key);
    this.manifests.set(id, manifest);
    return manifest;
  }

  private async get(key: string, range: { start: number; endInclusive: number } | undefined, signal?: AbortSignal): Promise<Buffer> {
    try {
      return await this.store.get(key, range, signal);
    } catch (e) {
      throw this.wrap(e, `reading ${key}`);
    }
  }

  private async getPieces(
    key: string,
    range: { start: number; endInclusive: number },
    lengths: readonly number[],
    signal: AbortSignal | undefined,
    onPiece: PieceListener,
    targets: PieceTargets | undefined,
  ): Promise<Buffer[]> {
    if (this.store.getPieces === undefined) return copyPieces(await this.get(key, range, signal), lengths);
    try {
      return await this.store.getPieces(key, range, lengths, signal, onPiece, targets);
    } catch (e) {
      throw this.wrap(e, `reading ${key}`);
    }
  }

  private wrap(e: unknown, what: string): RemoteStorageError {
    if (e instanceof RemoteStorageError) return e;
    return new RemoteStorageError(`${what} in ${this.store.description}: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
  }
}
