// ObjectStore on S3: each request goes through the retrying transport; large
// bodies go up as multipart uploads (parts uploaded concurrently, the upload
// aborted on any failure so no invisible parts linger and cost money); reads
// are ranged GETs.
import type { CompletedPart, S3Client } from '@aws-sdk/client-s3';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import type { ByteRange, ObjectBody, ObjectInfo, ObjectStore } from '../object-store.js';
import { RemoteStorageError, throwIfAborted } from '../remote-storage.js';
import type { RetryPolicy, TransportOptions } from '../retry.js';
import { DEFAULT_RETRY_POLICY, validatePolicy, withRetries } from '../retry.js';
import { classifyS3Error } from './s3-client.js';

/** S3's smallest part (all but the last). */
export const MIN_PART_SIZE = 5 * 1024 * 1024;
export const MAX_PARTS = 10_000;

export interface S3ObjectStoreOptions {
  readonly client: S3Client;
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
  private readonly client: S3Client;
  private readonly transport: TransportOptions;

  constructor(options: S3ObjectStoreOptions) {
    this.client = options.client;
    this.bucket = options.bucket;
    this.description = `s3://${options.bucket}`;
    this.multipartThresholdBytes = options.multipartThresholdBytes ?? 32 * 1024 * 1024;
    this.partSizeBytes = options.partSizeBytes ?? 8 * 1024 * 1024;
    this.uploadConcurrency = options.uploadConcurrency ?? 4;
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
  }

  async put(key: string, body: ObjectBody, signal?: AbortSignal): Promise<void> {
    throwIfAborted(signal, `PUT ${this.url(key)}`);
    if (Buffer.isBuffer(body)) {
      if (body.length <= this.multipartThresholdBytes) return this.putObject(key, body, signal);
      return this.multipart(key, sliceParts(body, this.partSizeBytes), signal);
    }
    // Stream: buffer up to the threshold; a body that stays below it is one PUT.
    const iterator = body[Symbol.asyncIterator]();
    const head: Buffer[] = [];
    let headBytes = 0;
    for (;;) {
      const next = await iterator.next();
      if (next.done === true) return this.putObject(key, Buffer.concat(head), signal);
      head.push(next.value);
      headBytes += next.value.length;
      if (headBytes > this.multipartThresholdBytes) break;
    }
    async function* rest(): AsyncGenerator<Buffer> {
      yield* head;
      for (;;) {
        const next = await iterator.next();
        if (next.done === true) return;
        yield next.value;
      }
    }
    return this.multipart(key, repart(rest(), this.partSizeBytes), signal);
  }

  async get(key: string, range?: ByteRange, signal?: AbortSignal): Promise<Buffer> {
    const url = this.url(key);
    const rangeHeader = range === undefined ? undefined : `bytes=${range.start}-${range.endInclusive}`;
    return withRetries(
      `GET ${url}${rangeHeader === undefined ? '' : ` ${rangeHeader}`}`,
      async (s) => {
        try {
          const res = await this.client.send(
            new GetObjectCommand({ Bucket: this.bucket, Key: key, ...(rangeHeader === undefined ? {} : { Range: rangeHeader }) }),
            { abortSignal: s },
          );
          if (res.Body === undefined) return Buffer.alloc(0);
          const bytes = await res.Body.transformToByteArray();
          return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
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

  async delete(key: string, signal?: AbortSignal): Promise<void> {
    await withRetries(
      `DELETE ${this.url(key)}`,
      (s) => this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }), { abortSignal: s }),
      this.transport,
      signal,
    );
  }

  async list(prefix: string, signal?: AbortSignal): Promise<ObjectInfo[]> {
    const out: ObjectInfo[] = [];
    let token: string | undefined;
    do {
      const page = await withRetries(
        `LIST ${this.url(prefix)}`,
        (s) =>
          this.client.send(
            new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, ...(token === undefined ? {} : { ContinuationToken: token }) }),
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

  async close(): Promise<void> {
    this.client.destroy();
  }

  private url(key: string): string {
    return `${this.description}/${key}`;
  }

  private async putObject(key: string, body: Buffer, signal?: AbortSignal): Promise<void> {
    await withRetries(
      `PUT ${this.url(key)}`,
      (s) =>
        this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: body, ContentLength: body.length }), {
          abortSignal: s,
        }),
      this.transport,
      signal,
    );
  }

  private async multipart(key: string, parts: AsyncIterable<Buffer> | Iterable<Buffer>, signal?: AbortSignal): Promise<void> {
    const url = this.url(key);
    const created = await withRetries(
      `CREATE MULTIPART ${url}`,
      (s) => this.client.send(new CreateMultipartUploadCommand({ Bucket: this.bucket, Key: key }), { abortSignal: s }),
      this.transport,
      signal,
    );
    const uploadId = created.UploadId;
    if (uploadId === undefined) throw new RemoteStorageError(`CREATE MULTIPART ${url}: no upload id in the reply`);
    // Parts share a controller so that the first failure stops the others.
    const controller = new AbortController();
    const onAbort = (): void => controller.abort(signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    const completed: CompletedPart[] = [];
    const inFlight = new Set<Promise<void>>();
    let failure: { error: unknown } | undefined;
    try {
      let partNumber = 0;
      for await (const part of parts) {
        if (failure !== undefined) break;
        partNumber++;
        if (partNumber > MAX_PARTS) throw new RemoteStorageError(`PUT ${url}: more than ${MAX_PARTS} parts; raise the part size`);
        const n = partNumber;
        const p = withRetries(
          `UPLOAD PART ${n} ${url}`,
          (s) =>
            this.client.send(
              new UploadPartCommand({ Bucket: this.bucket, Key: key, UploadId: uploadId, PartNumber: n, Body: part, ContentLength: part.length }),
              { abortSignal: s },
            ),
          this.transport,
          controller.signal,
        ).then(
          (res) => {
            completed.push({ PartNumber: n, ETag: res.ETag });
          },
          (e: unknown) => {
            failure ??= { error: e };
            controller.abort(e);
          },
        );
        const tracked = p.finally(() => inFlight.delete(tracked));
        inFlight.add(tracked);
        if (inFlight.size >= this.uploadConcurrency) await Promise.race(inFlight);
      }
      await Promise.all(inFlight);
      if (failure !== undefined) throw failure.error;
      completed.sort((a, b) => (a.PartNumber ?? 0) - (b.PartNumber ?? 0));
      await withRetries(
        `COMPLETE MULTIPART ${url}`,
        (s) =>
          this.client.send(
            new CompleteMultipartUploadCommand({ Bucket: this.bucket, Key: key, UploadId: uploadId, MultipartUpload: { Parts: completed } }),
            { abortSignal: s },
          ),
        this.transport,
        signal,
      );
    } catch (e) {
      controller.abort(e);
      await Promise.allSettled(inFlight);
      await this.abortMultipart(key, uploadId);
      throw e instanceof RemoteStorageError ? e : new RemoteStorageError(`PUT ${url}: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  }

  /** Best effort, with its own short retry budget: the caller's signal may already have fired. */
  private async abortMultipart(key: string, uploadId: string): Promise<void> {
    await withRetries(
      `ABORT MULTIPART ${this.url(key)}`,
      (s) => this.client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: key, UploadId: uploadId }), { abortSignal: s }),
      { ...this.transport, policy: { ...this.transport.policy, maxAttempts: Math.min(this.transport.policy.maxAttempts, 3) } },
    ).catch(() => {});
  }
}

function* sliceParts(body: Buffer, partSize: number): Generator<Buffer> {
  for (let pos = 0; pos < body.length; pos += partSize) yield body.subarray(pos, Math.min(pos + partSize, body.length));
}

/** Regroups pieces of any size into parts of exactly `partSize` bytes (the last may be shorter). */
export async function* repart(pieces: AsyncIterable<Buffer>, partSize: number): AsyncGenerator<Buffer> {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  for await (const piece of pieces) {
    pending.push(piece);
    pendingBytes += piece.length;
    while (pendingBytes >= partSize) {
      const all = pending.length === 1 ? (pending[0] as Buffer) : Buffer.concat(pending, pendingBytes);
      yield all.subarray(0, partSize);
      const rest = all.subarray(partSize);
      pending = rest.length > 0 ? [rest] : [];
      pendingBytes = rest.length;
    }
  }
  if (pendingBytes > 0) yield pending.length === 1 ? (pending[0] as Buffer) : Buffer.concat(pending, pendingBytes);
}
