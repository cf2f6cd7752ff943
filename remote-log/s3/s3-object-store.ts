// ObjectStore on S3: each request goes through the retrying transport; large
// bodies go up as multipart uploads (parts uploaded concurrently, the upload
// aborted on any failure so no invisible parts linger and cost money); reads
// are ranged GETs.
import { Readable } from 'node:stream';
import type { S3Client } from '@aws-sdk/client-s3';
import {
  AbortMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
} from '@aws-sdk/client-s3';
import { crc32c } from '@node-rs/crc32';
import { crc32cCombine, crc32cShift } from '../objects/crc32c-combine.js';
import type { BufferLender, ByteRange, ObjectBody, ObjectInfo, ObjectStore, PieceListener, PieceTargets } from '../objects/object-store.js';
import { PieceFiller, handedOverPieces, pieceCrc32c } from '../objects/object-store.js';
import { RemoteResourceNotFoundError, RemoteStorageError, throwIfAborted } from '../remote-storage.js';
import type { RetryPolicy, TransportOptions } from '../objects/retry.js';
import { DEFAULT_RETRY_POLICY, validatePolicy, withRetries } from '../objects/retry.js';
import { DirectBody } from './direct-http-handler.js';
import { classifyS3Error, crc32cBase64, s3Crc32c } from './s3-client.js';
import type { MultipartTarget } from './s3-multipart.js';
import { MultipartSession, PartBufferPool } from './s3-multipart.js';

/** S3's smallest part (all but the last). */
export const MIN_PART_SIZE = 5 * 1024 * 1024;

export interface S3ObjectStoreOptions {
  readonly client: S3Client;
  /** The client for GETs (e.g. one on DirectHttpHandler); default `client`. */
  readonly readClient?: S3Client;
  readonly bucket: string;
  /** Bodies larger than this go up as multipart uploads. Default 32 MiB. */
  readonly multipartThresholdBytes?: number;
  /** Size of each part but the last; at least 5 MiB. Default 8 MiB. */
  readonly partSizeBytes?: number;
  /** Parts in flight at once per upload. Default 4. */
  readonly uploadConcurrency?: number;
  readonly retry?: Partial<RetryPolicy>;
  /** Transport hooks (tests): backoff sleep, jitter source, retry observer. */
  readonly transport?: Omit<TransportOptions, 'policy' | 'classify'>;
}

export class S3ObjectStore implements ObjectStore {
  readonly description: string;
  readonly bucket: string;
  readonly multipartThresholdBytes: number;
  readonly partSizeBytes: number;
  readonly uploadConcurrency: number;
  readonly preferredPieceSize: number;
  readonly pieceBuffers: BufferLender;
  private readonly client: S3Client;
  private readonly readClient: S3Client;
  private readonly transport: TransportOptions;
  private readonly pool: PartBufferPool;

  constructor(options: S3ObjectStoreOptions) {
    this.client = options.client;
    this.readClient = options.readClient ?? options.client;
    this.bucket = options.bucket;
    this.description = `s3://${options.bucket}`;
    this.multipartThresholdBytes = options.multipartThresholdBytes ?? 32 * 1024 * 1024;
    this.partSizeBytes = options.partSizeBytes ?? 8 * 1024 * 1024;
    this.uploadConcurrency = options.uploadConcurrency ?? 4;
    this.preferredPieceSize = this.partSizeBytes;
    if (!Number.isSafeInteger(this.partSizeBytes) || this.partSizeBytes < MIN_PART_SIZE) {
      throw new RangeError(`part size must be at least ${MIN_PART_SIZE} bytes (S3's minimum): ${this.partSizeBytes}`);
    }
    if (!Number.isSafeInteger(this.multipartThresholdBytes) || this.multipartThresholdBytes < 0) {
      throw new RangeError(`multipart threshold must be >= 0: ${this.multipartThresholdBytes}`);
    }
    if (!Number.isInteger(this.uploadConcurrency) || this.uploadConcurrency < 1) {
      throw new RangeError(`upload concurrency must be >= 1: ${this.uploadConcurrency}`);
    }
    const policy = { ...DEFAULT_RETRY_POLICY, ...options.retry };
    validatePolicy(policy);
    this.transport = { ...options.transport, policy, classify: classifyS3Error };
    // Parts in flight, the one being filled, and the one waiting for a slot.
    this.pool = new PartBufferPool(this.partSizeBytes, this.uploadConcurrency + 2);
    this.pieceBuffers = this.pool;
  }

  /**
   * A Buffer body is sent as is (sliced into parts above the threshold). A
   * streamed body's pieces are copied into pooled part buffers as they come,
   * so a piece need only stay valid until the next one is requested; pieces
   * handed over in one of the pool's buffers (handedOverPieces) are uploaded
   * from it in place.
   */
  async put(key: string, body: ObjectBody, signal?: AbortSignal, sizeHint?: number): Promise<void> {
    throwIfAborted(signal, `PUT ${this.url(key)}`);
    if (!Buffer.isBuffer(body)) return this.putStream(key, body, signal, sizeHint);
    if (body.length <= this.multipartThresholdBytes) return this.putObject(key, body, signal);
    const session = await MultipartSession.start(this.target(key), signal);
    try {
      for (let pos = 0; pos < body.length; pos += this.partSizeBytes) {
        await session.add(body.subarray(pos, Math.min(pos + this.partSizeBytes, body.length)));
      }
      await session.complete(signal);
    } catch (e) {
      await session.abort(e);
      throw this.wrap(e, `PUT ${this.url(key)}`);
    }
  }

  async get(key: string, range?: ByteRange, signal?: AbortSignal): Promise<Buffer> {
    const url = this.url(key);
    const rangeHeader = range === undefined ? undefined : `bytes=${range.start}-${range.endInclusive}`;
    return withRetries(
      `GET ${url}${rangeHeader === undefined ? '' : ` ${rangeHeader}`}`,
      async (s) => {
        try {
          const res = await this.readClient.send(
            new GetObjectCommand({ Bucket: this.bucket, Key: key, ...(rangeHeader === undefined ? {} : { Range: rangeHeader }) }),
            { abortSignal: s },
          );
          if (res.Body === undefined) return Buffer.alloc(0);
          return await readBody(res.Body, res.ContentLength, s);
        } catch (e) {
          // A range starting at or past the end: the object is shorter than asked, which the caller judges.
          if ((e as { name?: unknown }).name === 'InvalidRange') return Buffer.alloc(0);
          throw e;
        }
      },
      this.transport,
      signal,
    );
  }

  /**
   * One ranged GET whose body is cut into pieces as it streams, each told to
   * onPiece the moment it is full. When an attempt fails after some pieces
   * were told, the retry asks only for the rest (its range starts at the first
   * piece not told), so no piece is fetched or told twice.
   */
  async getPieces(key: string, range: ByteRange, lengths: readonly number[], signal?: AbortSignal, onPiece?: PieceListener, targets?: PieceTargets): Promise<Buffer[]> {
    const told: Buffer[] = [];
    let listenerFailure: unknown;
    const listener = (k: number, piece: Buffer): void => {
      told.push(piece);
      try {
        onPiece?.(k, piece);
      } catch (e) {
        listenerFailure = e;
        throw e;
      }
    };
    // The caller's refusal of a piece (a failed check) is its verdict, not the transport's: never retried.
    const transport: TransportOptions =
      onPiece === undefined ? this.transport : { ...this.transport, classify: (e) => (e === listenerFailure ? 'fatal' : classifyS3Error(e)) };
    return withRetries(
      `GET ${this.url(key)} bytes=${range.start}-${range.endInclusive}`,
      async (s) => {
        const done = told.length;
        if (done === lengths.length) return told;
        let start = range.start;
        for (let k = 0; k < done; k++) start += lengths[k] as number;
        if (start > range.endInclusive) return told;
        try {
          const res = await this.readClient.send(
            new GetObjectCommand({ Bucket: this.bucket, Key: key, Range: `bytes=${start}-${range.endInclusive}` }),
            { abortSignal: s },
          );
          if (res.Body === undefined) return told;
          const filler = new PieceFiller(
            done === 0 ? lengths : lengths.slice(done),
            (k, piece) => listener(done + k, piece),
            targets === undefined ? undefined : (k, n) => targets(done + k, n),
          );
          await consumeBody(res.Body, (bytes) => filler.push(bytes), s);
          if (res.ContentLength !== undefined && filler.total !== res.ContentLength) {
            throw new Error(`response body ended after ${filler.total} of ${res.ContentLength} bytes`);
          }
          // A short last piece (the object ended early) was not told; the caller judges it.
          return [...told, ...filler.finish().slice(filler.completed)];
        } catch (e) {
          if ((e as { name?: unknown }).name === 'InvalidRange') return told;
          throw e;
        }
      },
      transport,
      signal,
    );
  }

  async delete(key: string, signal?: AbortSignal): Promise<void> {
    await withRetries(
      `DELETE ${this.url(key)}`,
      (s) => this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }), { abortSignal: s }),
      this.transport,
      signal,
    );
  }

  async list(prefix: string, signal?: AbortSignal, startAfter?: string): Promise<ObjectInfo[]> {
    const out: ObjectInfo[] = [];
    let token: string | undefined;
    do {
      const page = await withRetries(
        `LIST ${this.url(prefix)}`,
        (s) =>
          this.client.send(
            new ListObjectsV2Command({
              Bucket: this.bucket,
              Prefix: prefix,
              // S3 ignores StartAfter once a continuation token is given: the token carries the position.
              ...(token === undefined ? (startAfter === undefined ? {} : { StartAfter: startAfter }) : { ContinuationToken: token }),
            }),
            { abortSignal: s },
          ),
        this.transport,
        signal,
      );
      for (const o of page.Contents ?? []) {
        if (o.Key === undefined) continue;
        out.push({ key: o.Key, size: o.Size ?? 0, lastModified: o.LastModified?.getTime() ?? 0 });
      }
      token = page.IsTruncated === true ? page.NextContinuationToken : undefined;
    } while (token !== undefined);
    return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  /** Lists the multipart uploads open for `key` (exactly; MinIO lists by exact key only) and aborts each. */
  async abortUploads(key: string, signal?: AbortSignal): Promise<number> {
    const uploadIds: string[] = [];
    let keyMarker: string | undefined;
    let uploadIdMarker: string | undefined;
    do {
      const page = await withRetries(
        `LIST UPLOADS ${this.url(key)}`,
        (s) =>
          this.client.send(
            new ListMultipartUploadsCommand({
              Bucket: this.bucket,
              Prefix: key,
              ...(keyMarker === undefined ? {} : { KeyMarker: keyMarker }),
              ...(uploadIdMarker === undefined ? {} : { UploadIdMarker: uploadIdMarker }),
            }),
            { abortSignal: s },
          ),
        this.transport,
        signal,
      );
      for (const u of page.Uploads ?? []) if (u.Key === key && u.UploadId !== undefined) uploadIds.push(u.UploadId);
      const more = page.IsTruncated === true;
      keyMarker = more ? page.NextKeyMarker : undefined;
      uploadIdMarker = more ? page.NextUploadIdMarker : undefined;
    } while (keyMarker !== undefined);
    for (const uploadId of uploadIds) {
      await withRetries(
        `ABORT MULTIPART ${this.url(key)}`,
        (s) => this.client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: key, UploadId: uploadId }), { abortSignal: s }),
        this.transport,
        signal,
      ).catch((e: unknown) => {
        // NoSuchUpload (404): already completed or aborted by someone else, nothing left to abandon.
        if (!(e instanceof RemoteResourceNotFoundError)) throw e;
      });
    }
    return uploadIds.length;
  }

  async close(): Promise<void> {
    this.client.destroy();
    if (this.readClient !== this.client) this.readClient.destroy();
  }

  private url(key: string): string {
    return `${this.description}/${key}`;
  }

  /** One PutObject; a body of several buffers is streamed from them (a new stream per attempt). */
  private async putObject(key: string, body: Buffer | readonly Buffer[], signal?: AbortSignal, crc?: number): Promise<void> {
    const length = Buffer.isBuffer(body) ? body.length : body.reduce((n, b) => n + b.length, 0);
    // The server verifies this CRC: a body damaged on the way is refused (and resent), never stored.
    const checksum = crc === undefined ? s3Crc32c(Buffer.isBuffer(body) ? body : Buffer.concat(body)) : crc32cBase64(crc);
    await withRetries(
      `PUT ${this.url(key)}`,
      (s) =>
        this.client.send(
          new PutObjectCommand({
            Bucket: this.bucket,
            Key: key,
            Body: Buffer.isBuffer(body) ? body : Readable.from(body, { objectMode: false }),
            ContentLength: length,
            ChecksumCRC32C: checksum,
          }),
          { abortSignal: s },
        ),
      this.transport,
      signal,
    );
  }

  private target(key: string): MultipartTarget {
    return { client: this.client, bucket: this.bucket, key, url: this.url(key), concurrency: this.uploadConcurrency, transport: this.transport };
  }

  private async putStream(key: string, body: AsyncIterable<Buffer>, signal?: AbortSignal, sizeHint?: number): Promise<void> {
    const partSize = this.partSizeBytes;
    const held: Array<{ part: Buffer; crc: number }> = []; // full parts not yet handed to an upload
    const pool = this.pool;
    // The part being filled: taken from the pool on the first byte copied into it, or a buffer the
    // producer handed over (its pieces already in place).
    let current: Buffer | undefined;
    let fill = 0;
    let total = 0;
    // The CRC-32C of current[0, fill), built as it fills from the pieces' own CRCs when their producer
    // recorded them (no second pass over the bytes), else from the copied bytes.
    let crc = 0;
    let shift = { length: -1, op: 0 };
    const addCrc = (pieceCrc: number, length: number): void => {
      if (shift.length !== length) shift = { length, op: crc32cShift(length) };
      crc = crc32cCombine(crc, pieceCrc, length, shift.op);
    };
    let session: MultipartSession | undefined;
    const send = async (part: Buffer, owner: Buffer, partCrc: number): Promise<void> => {
      await (session as MultipartSession).add(part, () => pool.give(owner), partCrc);
    };
    pool.open();
    try {
      // Known to be large: go multipart from the first part rather than holding parts up to the threshold.
      if (sizeHint !== undefined && sizeHint > this.multipartThresholdBytes) session = await MultipartSession.start(this.target(key), signal);
      for await (const piece of body) {
        const known = pieceCrc32c.get(piece);
        if (fill === 0 && piece.byteOffset === 0 && piece.buffer.byteLength === partSize && handedOverPieces.has(piece)) {
          // The start of a part-sized buffer the producer gave up: this part is filled in place.
          if (current !== undefined) pool.give(current);
          current = Buffer.from(piece.buffer, 0, partSize);
        }
        let off = 0;
        while (off < piece.length) {
          current ??= pool.take();
          const n = Math.min(piece.length - off, partSize - fill);
          if (piece.buffer !== current.buffer || piece.byteOffset + off !== current.byteOffset + fill) piece.copy(current, fill, off, off + n);
          addCrc(known !== undefined && n === piece.length ? known : crc32c(current.subarray(fill, fill + n)), n);
          fill += n;
          off += n;
          total += n;
          if (fill === partSize) {
            const full = current;
            const fullCrc = crc;
            current = undefined;
            fill = 0;
            crc = 0;
            if (session === undefined) held.push({ part: full, crc: fullCrc });
            else await send(full, full, fullCrc);
          }
        }
        if (session === undefined && total > this.multipartThresholdBytes) {
          session = await MultipartSession.start(this.target(key), signal);
          while (held.length > 0) {
            const full = held.shift() as { part: Buffer; crc: number };
            await send(full.part, full.part, full.crc);
          }
        }
      }
      if (session === undefined) {
        // One PutObject whose body is the parts themselves (a stream over them), not a concatenated copy.
        const parts = [...held.map((h) => h.part), ...(current === undefined || fill === 0 ? [] : [current.subarray(0, fill)])];
        let wholeCrc = 0;
        for (const h of held) wholeCrc = crc32cCombine(wholeCrc, h.crc, h.part.length);
        wholeCrc = crc32cCombine(wholeCrc, crc, fill);
        await this.putObject(key, parts.length <= 1 ? (parts[0] ?? Buffer.alloc(0)) : parts, signal, wholeCrc);
        for (const h of held.splice(0)) pool.give(h.part);
        if (current !== undefined) pool.give(current);
        current = undefined;
        return;
      }
      const last = current;
      current = undefined;
      if (last !== undefined && fill > 0) await send(last.subarray(0, fill), last, crc);
      else if (last !== undefined) pool.give(last);
      await session.complete(signal);
    } catch (e) {
      await session?.abort(e);
      for (const h of held) pool.give(h.part);
      if (current !== undefined) pool.give(current);
      throw this.wrap(e, `PUT ${this.url(key)}`);
    } finally {
      pool.close();
    }
  }

  private wrap(e: unknown, what: string): RemoteStorageError {
    if (e instanceof RemoteStorageError) return e;
    return new RemoteStorageError(`${what}: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
  }
}

/**
 * Feeds the body's bytes to `onData` as they arrive ('data' events: no promise
 * per piece, unlike its async iterator) until it ends. Rejects, and destroys
 * the body (releasing the connection), when it fails, closes before its end,
 * `onData` throws, or `signal` fires.
 */
export function consumeBody(body: unknown, onData: (bytes: Uint8Array) => void, signal?: AbortSignal): Promise<void> {
  if (body instanceof DirectBody) {
    // Straight from the connection's read buffer (DirectHttpHandler): no stream events at all.
    if (signal === undefined) return body.drainInto(onData);
    const onAbort = (): void => body.abandon(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
    if (signal.aborted) {
      onAbort();
      return Promise.reject(signal.reason);
    }
    signal.addEventListener('abort', onAbort, { once: true });
    return body.drainInto(onData).finally(() => signal.removeEventListener('abort', onAbort));
  }
  if (!(body instanceof Readable)) {
    // Not a Node stream (another runtime's body): its async iterator.
    return (async () => {
      for await (const piece of body as AsyncIterable<Uint8Array>) {
        if (signal?.aborted === true) throw signal.reason;
        onData(piece);
      }
    })();
  }
  return new Promise<void>((resolve, reject) => {
    let settled = false;
    const finish = (error?: unknown): void => {
      if (settled) return;
      settled = true;
      body.off('data', onChunk);
      body.off('end', onEnd);
      body.off('error', onError);
      body.off('close', onClose);
      signal?.removeEventListener('abort', onAbort);
      if (error === undefined) {
        resolve();
        return;
      }
      body.destroy();
      reject(error);
    };
    const onChunk = (bytes: Uint8Array): void => {
      try {
        onData(bytes);
      } catch (e) {
        finish(e);
      }
    };
    const onEnd = (): void => finish();
    const onError = (e: unknown): void => finish(e);
    const onClose = (): void => finish(new Error('response body closed before its end'));
    const onAbort = (): void => finish(signal?.reason ?? new Error('aborted'));
    if (signal?.aborted === true) {
      onAbort();
      return;
    }
    signal?.addEventListener('abort', onAbort, { once: true });
    body.on('data', onChunk);
    body.once('end', onEnd);
    body.once('error', onError);
    body.once('close', onClose);
  });
}

/**
 * The response body as one Buffer. With a Content-Length, the pieces are
 * copied straight into a buffer of that size (the SDK's transformToByteArray
 * would collect them and then concatenate: one more copy of every byte read);
 * a body that ends short is an error, retried like any cut connection.
 */
async function readBody(body: { transformToByteArray(): Promise<Uint8Array> }, length: number | undefined, signal?: AbortSignal): Promise<Buffer> {
  if (length === undefined) {
    const bytes = await body.transformToByteArray();
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
  const out = Buffer.allocUnsafeSlow(length);
  let filled = 0;
  await consumeBody(
    body,
    (piece) => {
      if (filled + piece.length > length) throw new Error(`response body longer than its Content-Length ${length}`);
      out.set(piece, filled);
      filled += piece.length;
    },
    signal,
  );
  if (filled !== length) throw new Error(`response body ended after ${filled} of ${length} bytes`);
  return out;
}
