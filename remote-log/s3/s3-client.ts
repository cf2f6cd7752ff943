// The thin S3 client: builds an @aws-sdk/client-s3 client for AWS S3 or an
// S3-compatible server (MinIO) and sorts its failures. The SDK's own retries
// are off (maxAttempts 1): the transport in ../retry.ts owns retries, timeouts
// and cancellation, so that they behave the same for every request.
import { S3Client } from '@aws-sdk/client-s3';
import { crc32c } from '@node-rs/crc32';
import type { FailureKind } from '../objects/retry.js';
import { DirectHttpHandler } from './direct-http-handler.js';

export interface S3Credentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string;
}

export interface S3ClientOptions {
  readonly bucket: string;
  /** Default 'us-east-1'. */
  readonly region?: string;
  /** e.g. http://127.0.0.1:9000 for MinIO; absent for AWS S3. */
  readonly endpoint?: string;
  /** Path-style addressing (bucket in the path), which MinIO needs. Default false. */
  readonly forcePathStyle?: boolean;
  /** Absent: the standard AWS chain (environment, profile, SSO, web identity, instance metadata). */
  readonly credentials?: S3Credentials;
  /** TCP connect timeout. Default 10 s. */
  readonly connectionTimeoutMs?: number;
  /** Sockets kept per host. Default 64. */
  readonly maxSockets?: number;
  /**
   * The HTTP transport of GETs: 'direct' (DirectHttpHandler: each connection
   * read into one reused buffer, bodies copied once) or 'node-http' (the
   * SDK's own handler, which every other request uses). Default 'direct'.
   */
  readonly readHttpHandler?: S3HttpHandlerKind;
}

export type S3HttpHandlerKind = 'direct' | 'node-http';
export const S3_HTTP_HANDLER_KINDS: readonly S3HttpHandlerKind[] = ['direct', 'node-http'];

/** A client on the SDK's own HTTP handler ('node-http', default) or on DirectHttpHandler ('direct'). */
export function createS3Client(options: S3ClientOptions, handler: S3HttpHandlerKind = 'node-http'): S3Client {
  // The project runs on Node 20 with a pinned SDK; the SDK's notice about future releases needing Node 22 is noise in broker logs.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const agent = { keepAlive: true, maxSockets: options.maxSockets ?? 64 };
  const connectionTimeout = options.connectionTimeoutMs ?? 10_000;
  const client = new S3Client({
    region: options.region ?? 'us-east-1',
    ...(options.endpoint === undefined ? {} : { endpoint: options.endpoint }),
    forcePathStyle: options.forcePathStyle ?? false,
    ...(options.credentials === undefined ? {} : { credentials: options.credentials }),
    maxAttempts: 1,
    // Integrity is checked end to end with the manifest's CRC-32C; skip the SDK's extra checksum pass.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    requestHandler:
      handler === 'direct'
        ? new DirectHttpHandler({ connectionTimeoutMs: connectionTimeout, maxSockets: agent.maxSockets })
        : { connectionTimeout, httpAgent: agent, httpsAgent: agent },
  });
  // Bodies sent with an x-amz-checksum-crc32c header (every PUT and part we
  // send) are verified by the server against that CRC; signing their SHA-256
  // as well would double the CPU per uploaded byte for no added integrity.
  client.middlewareStack.add(
    (next) => async (args) => {
      const request = args.request as { headers?: Record<string, string> };
      if (request.headers?.['x-amz-checksum-crc32c'] !== undefined) request.headers['x-amz-content-sha256'] = 'UNSIGNED-PAYLOAD';
      return next(args);
    },
    { step: 'build', name: 'sedimentUnsignedChecksummedPayload' },
  );
  return client;
}

/** The CRC-32C of `body` as S3's x-amz-checksum-crc32c wants it: 4 big-endian bytes, base64. */
export function s3Crc32c(body: Uint8Array): string {
  return crc32cBase64(crc32c(Buffer.from(body.buffer, body.byteOffset, body.byteLength)));
}

/** A CRC-32C already computed, as S3's x-amz-checksum-crc32c wants it. */
export function crc32cBase64(crc: number): string {
  const out = Buffer.alloc(4);
  out.writeUInt32BE(crc >>> 0);
  return out.toString('base64');
}

const RETRIABLE_NAMES = new Set([
  'SlowDown',
  'Throttling',
  'ThrottlingException',
  'TooManyRequestsException',
  'RequestTimeout',
  'RequestTimeoutException',
  'RequestTimeTooSkewed',
  'InternalError',
  'ServiceUnavailable',
  'TimeoutError',
  'XMinioServerNotInitialized',
  // The body's checksum did not match on arrival: damaged in flight; the retry resends it.
  'BadDigest',
  'XAmzContentChecksumMismatch',
  'XMinioStorageFull',
]);

const RETRIABLE_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'ERR_STREAM_PREMATURE_CLOSE',
  'UND_ERR_SOCKET',
]);

function field(e: unknown, name: string): unknown {
  return typeof e === 'object' && e !== null ? (e as Record<string, unknown>)[name] : undefined;
}

/** Retriable: 5xx, throttling, network failures. Not found: 404 / NoSuchKey. Anything else is fatal. */
export function classifyS3Error(e: unknown): FailureKind {
  const name = field(e, 'name');
  const meta = field(e, '$metadata');
  const status = field(meta, 'httpStatusCode');
  if (name === 'NoSuchKey' || name === 'NotFound') return 'not-found';
  if (name === 'NoSuchBucket') return 'fatal';
  if (typeof status === 'number') {
    if (status >= 500 || status === 429 || status === 408) return 'retriable';
    if (status === 404) return 'not-found';
  }
  if (typeof name === 'string' && RETRIABLE_NAMES.has(name)) return 'retriable';
  if (field(e, '$retryable') !== undefined) return 'retriable';
  const code = field(e, 'code');
  if (typeof code === 'string' && RETRIABLE_CODES.has(code)) return 'retriable';
  const msg = e instanceof Error ? e.message : '';
  if (/socket hang up|ECONNRESET|ECONNREFUSED|EPIPE|premature close/i.test(msg)) return 'retriable';
  // Errors with neither an HTTP status nor a known name are transport failures (a body cut short, a parse of a torn reply).
  if (typeof status !== 'number' && e instanceof Error && !(e instanceof TypeError || e instanceof RangeError) && field(e, '$fault') === undefined) {
    return 'retriable';
  }
  return 'fatal';
}
