// Multipart uploads: one session per object, parts uploaded concurrently
// (bounded), each part retried on its own, the whole upload aborted on the
// first failure so no invisible parts linger (and cost money). Part buffers
// come from a pool and go back to it when their upload settles: reusing them
// keeps a 1 GiB segment upload from allocating 1 GiB of short-lived buffers,
// whose garbage collection otherwise costs more CPU than the upload. The copy
// task reads segment data straight into these buffers (readChunks with the
// pool as its lender), so the parts go up without a copy.
import type { CompletedPart, S3Client } from '@aws-sdk/client-s3';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import type { BufferLender } from '../objects/object-store.js';
import { RemoteStorageError } from '../remote-storage.js';
import type { TransportOptions } from '../objects/retry.js';
import { withRetries } from '../objects/retry.js';
import { crc32cBase64, s3Crc32c } from './s3-client.js';

export const MAX_PARTS = 10_000;

/**
 * Part-sized buffers, reused. While uploads are open (open() .. close()) the
 * pool keeps up to `retain` buffers per upload open at once (at the most seen
 * since the pool was last idle), so uploads running side by side (the copy
 * task uploads several partitions at once, one segment after another) reuse
 * their buffers instead of dropping and re-allocating them, whose garbage
 * collection costs more CPU than the copies. That is no more memory than
 * those uploads hold at their peak anyway; when the last upload closes the
 * pool gives all but `retain` up.
 */
export class PartBufferPool implements BufferLender {
  private readonly free: Buffer[] = [];
  private openUploads = 0;
  private peakOpen = 0;

  constructor(
    readonly partSize: number,
    private readonly retain: number,
  ) {}

  /** Buffers kept while not in use at the moment. */
  get idle(): number {
    return this.free.length;
  }

  get bufferSize(): number {
    return this.partSize;
  }

  take(): Buffer {
    return this.free.pop() ?? Buffer.allocUnsafeSlow(this.partSize);
  }

  give(buf: Buffer): void {
    if (buf.length === this.partSize && this.free.length < this.retain * Math.max(1, this.peakOpen)) this.free.push(buf);
  }

  /** An upload starts using the pool. */
  open(): void {
    this.openUploads++;
    this.peakOpen = Math.max(this.peakOpen, this.openUploads);
  }

  /** An upload ended (once per open()); the last one trims the pool to `retain`. */
  close(): void {
    this.openUploads = Math.max(0, this.openUploads - 1);
    if (this.openUploads > 0) return;
    this.peakOpen = 0;
    if (this.free.length > this.retain) this.free.length = this.retain;
  }
}

export interface MultipartTarget {
  readonly client: S3Client;
  readonly bucket: string;
  readonly key: string;
  readonly url: string;
  readonly concurrency: number;
  readonly transport: TransportOptions;
}

export class MultipartSession {
  private readonly controller = new AbortController();
  private readonly inFlight = new Set<Promise<void>>();
  private readonly completed: CompletedPart[] = [];
  private failure: { error: unknown } | undefined;
  private partNumber = 0;
  private readonly unlink: () => void;

  private constructor(
    private readonly target: MultipartTarget,
    private readonly uploadId: string,
    signal: AbortSignal | undefined,
  ) {
    const onAbort = (): void => this.controller.abort(signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    this.unlink = () => signal?.removeEventListener('abort', onAbort);
    if (signal?.aborted === true) onAbort();
  }

  static async start(target: MultipartTarget, signal?: AbortSignal): Promise<MultipartSession> {
    const created = await withRetries(
      `CREATE MULTIPART ${target.url}`,
      (s) =>
        target.client.send(new CreateMultipartUploadCommand({ Bucket: target.bucket, Key: target.key, ChecksumAlgorithm: 'CRC32C' }), {
          abortSignal: s,
        }),
      target.transport,
      signal,
    );
    if (created.UploadId === undefined) throw new RemoteStorageError(`CREATE MULTIPART ${target.url}: no upload id in the reply`);
    return new MultipartSession(target, created.UploadId, signal);
  }

  /**
   * Uploads the next part. Waits while `concurrency` parts are in flight;
   * `done` is called when this part's upload has settled (its buffer is free).
   * Throws the first failure of any part.
   */
  async add(part: Buffer, done?: () => void, crc?: number): Promise<void> {
    while (this.inFlight.size >= this.target.concurrency && this.failure === undefined) await Promise.race(this.inFlight);
    if (this.failure !== undefined) {
      done?.();
      throw this.failure.error;
    }
    const n = ++this.partNumber;
    if (n > MAX_PARTS) {
      done?.();
      throw new RemoteStorageError(`PUT ${this.target.url}: more than ${MAX_PARTS} parts; raise the part size`);
    }
    const { client, bucket, key, url, transport } = this.target;
    // The server verifies this CRC: a part damaged on the way is refused (and resent), never stored.
    const checksum = crc === undefined ? s3Crc32c(part) : crc32cBase64(crc);
    const p = withRetries(
      `UPLOAD PART ${n} ${url}`,
      (s) =>
        client.send(
          new UploadPartCommand({
            Bucket: bucket,
            Key: key,
            UploadId: this.uploadId,
            PartNumber: n,
            Body: part,
            ContentLength: part.length,
            ChecksumCRC32C: checksum,
          }),
          { abortSignal: s },
        ),
      transport,
      this.controller.signal,
    ).then(
      (res) => {
        this.completed.push({ PartNumber: n, ETag: res.ETag, ChecksumCRC32C: res.ChecksumCRC32C ?? checksum });
      },
      (e: unknown) => {
        this.failure ??= { error: e };
        this.controller.abort(e);
      },
    );
    const tracked: Promise<void> = p.finally(() => {
      this.inFlight.delete(tracked);
      done?.();
    });
    this.inFlight.add(tracked);
  }

  async complete(signal?: AbortSignal): Promise<void> {
    await Promise.all(this.inFlight);
    this.unlink();
    if (this.failure !== undefined) throw this.failure.error;
    const parts = [...this.completed].sort((a, b) => (a.PartNumber ?? 0) - (b.PartNumber ?? 0));
    const { client, bucket, key, url, transport } = this.target;
    await withRetries(
      `COMPLETE MULTIPART ${url}`,
      (s) =>
        client.send(
          new CompleteMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: this.uploadId, MultipartUpload: { Parts: parts } }),
          { abortSignal: s },
        ),
      transport,
      signal,
    );
  }

  /** Stops the parts in flight and aborts the upload (best effort, with its own short retry budget). */
  async abort(reason: unknown): Promise<void> {
    this.controller.abort(reason);
    await Promise.allSettled(this.inFlight);
    this.unlink();
    const { client, bucket, key, url, transport } = this.target;
    await withRetries(
      `ABORT MULTIPART ${url}`,
      (s) => client.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: this.uploadId }), { abortSignal: s }),
      { ...transport, policy: { ...transport.policy, maxAttempts: Math.min(transport.policy.maxAttempts, 3) } },
    ).catch(() => {});
  }
}
