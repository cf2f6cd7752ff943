// Picks and configures the backend from the broker setting
// `remote.log.storage.url` plus the `rsm.config.*` settings.
//
//   memory://                  MemoryRemoteStorage (tests, demos; lost on exit)
//   file:///abs/dir            FileSystemRemoteStorage rooted at /abs/dir
//   file:relative/dir          ... relative to the working directory
//   s3://bucket[/prefix]       S3RemoteStorage; keys start with `prefix/`
//
// rsm.config.* keys (unknown ones are refused, so a typo is not silently ignored):
//
// | key                                      | default        | meaning                                                    |
// |------------------------------------------|----------------|------------------------------------------------------------|
// | rsm.config.chunk.size.bytes              | 1048576        | data chunk: unit of CRCs, compression and ranged reads     |
// | rsm.config.compression.enable            | false          | zstd-compress data whose batches are uncompressed          |
// | rsm.config.compression.zstd.level        | 3              | zstd level (1-19)                                          |
// | rsm.config.manifest.cache.entries        | 1024           | manifests kept in memory                                   |
// | rsm.config.chunk.cache.size.bytes        | 268435456      | ChunkCache byte limit (read by the RemoteLogManager)       |
// | rsm.config.chunk.cache.prefetch.chunks   | 8              | ChunkCache read-ahead, in chunks                           |
// | rsm.config.chunk.cache.fetch.chunks      | 8              | chunks one ranged GET carries at most                      |
// | rsm.config.chunk.cache.reuse.enable      | false          | read chunks into reused memory slots, not fresh buffers    |
// | rsm.config.fetch.worker.threads          | 1              | threads running data GETs off the event loop (0: on it)    |
// | rsm.config.fetch.worker.nice             | 0              | Linux nice value of those threads (0 = the broker's own)   |
// | rsm.config.copy.worker.threads           | 1              | threads running segment uploads off the event loop (0: on it) |
// | rsm.config.copy.worker.nice              | 10             | Linux nice value of those threads (0 = the broker's own)   |
// | rsm.config.orphan.sweep.interval.ms      | 300000         | orphan sweep: LIST of each partition's new objects         |
// | rsm.config.orphan.full.sweep.interval.ms | 86400000       | orphan sweep: LIST of every object, not only new ones      |
// | rsm.config.fs.fsync                      | true           | file://: fsync each object and its directory               |
// | rsm.config.s3.endpoint                   | (AWS)          | e.g. http://127.0.0.1:9000 for MinIO                       |
// | rsm.config.s3.region                     | us-east-1      |                                                            |
// | rsm.config.s3.path.style.access          | false          | bucket in the path (MinIO needs true)                      |
// | rsm.config.s3.access.key.id              | (AWS chain)    | set together with the secret, or neither                   |
// | rsm.config.s3.secret.access.key          | (AWS chain)    |                                                            |
// | rsm.config.s3.session.token              | (none)         |                                                            |
// | rsm.config.s3.multipart.threshold.bytes  | 33554432       | larger objects go up as multipart uploads                  |
// | rsm.config.s3.part.size.bytes            | 8388608        | multipart part size, >= 5242880                            |
// | rsm.config.s3.upload.concurrency         | 4              | parts in flight per upload                                 |
// | rsm.config.s3.request.timeout.ms         | 30000          | bound on one request attempt (0 = none)                    |
// | rsm.config.s3.connection.timeout.ms      | 10000          | TCP connect timeout                                        |
// | rsm.config.s3.retry.max.attempts         | 5              | attempts per request, the first included                   |
// | rsm.config.s3.retry.backoff.ms           | 100            | first backoff (exponential, full jitter)                   |
// | rsm.config.s3.retry.backoff.max.ms       | 5000           | backoff cap                                                |
// | rsm.config.s3.max.connections            | 64             | sockets kept per host                                      |
// | rsm.config.s3.read.http.handler          | direct         | GETs' transport: direct or node-http (the SDK's own)       |
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ErrorCode, KafkaError } from '../broker/protocol/errors.js';
import { DEFAULT_CHUNK_SIZE, DEFAULT_ZSTD_LEVEL } from './objects/chunked-zstd.js';
import { FileSystemRemoteStorage } from './filesystem/filesystem-remote-storage.js';
import { MemoryRemoteStorage } from './memory/memory-remote-storage.js';
import type { ObjectRemoteStorage, ObjectRemoteStorageOptions } from './objects/object-remote-storage.js';
import { DEFAULT_RETRY_POLICY } from './objects/retry.js';
import { MIN_PART_SIZE } from './s3/s3-object-store.js';
import { S3RemoteStorage, type S3RemoteStorageOptions } from './s3/s3-remote-storage.js';
import { S3_HTTP_HANDLER_KINDS, type S3HttpHandlerKind } from './s3/s3-client.js';

export const RSM_CONFIG_PREFIX = 'rsm.config.';

/** A bad remote storage URL or rsm.config.* value; the message names the setting. */
export class RemoteStorageConfigError extends KafkaError {
  constructor(message: string) {
    super(ErrorCode.INVALID_CONFIG, message);
    this.name = 'RemoteStorageConfigError';
  }
}

type Kind = 'int' | 'bool' | 'string';
const KEYS = {
  'chunk.size.bytes': 'int',
  'compression.enable': 'bool',
  'compression.zstd.level': 'int',
  'manifest.cache.entries': 'int',
  'chunk.cache.size.bytes': 'int',
  'chunk.cache.prefetch.chunks': 'int',
  'chunk.cache.fetch.chunks': 'int',
  'chunk.cache.reuse.enable': 'bool',
  'fetch.worker.threads': 'int',
  'fetch.worker.nice': 'int',
  'copy.worker.threads': 'int',
  'copy.worker.nice': 'int',
  'orphan.sweep.interval.ms': 'int',
  'orphan.full.sweep.interval.ms': 'int',
  'fs.fsync': 'bool',
  's3.endpoint': 'string',
  's3.region': 'string',
  's3.path.style.access': 'bool',
  's3.access.key.id': 'string',
  's3.secret.access.key': 'string',
  's3.session.token': 'string',
  's3.multipart.threshold.bytes': 'int',
  's3.part.size.bytes': 'int',
  's3.upload.concurrency': 'int',
  's3.request.timeout.ms': 'int',
  's3.connection.timeout.ms': 'int',
  's3.retry.max.attempts': 'int',
  's3.retry.backoff.ms': 'int',
  's3.retry.backoff.max.ms': 'int',
  's3.max.connections': 'int',
  's3.read.http.handler': 'string',
} as const satisfies Record<string, Kind>;
type Key = keyof typeof KEYS;

export interface RsmConfig {
  readonly chunkSizeBytes: number;
  readonly compressionEnable: boolean;
  readonly zstdLevel: number;
  readonly manifestCacheEntries: number;
  readonly chunkCacheSizeBytes: number;
  readonly chunkCachePrefetchChunks: number;
  /** Chunks one ranged GET carries at most (runs of missing chunks are split into requests of this many). */
  readonly chunkCacheFetchChunks: number;
  /** Chunks read into reused slots of shared memory (read by the RemoteLogManager). */
  readonly chunkCacheReuseEnable: boolean;
  /** Worker threads for data reads (s3:// and file:// only; 0 = on the event loop). */
  readonly fetchWorkerThreads: number;
  /** The nice value those threads run at (Linux; 0 = the broker's own; see copyWorkerNice). */
  readonly fetchWorkerNice: number;
  /** Worker threads for segment uploads (s3:// and file:// only; 0 = on the event loop). */
  readonly copyWorkerThreads: number;
  /**
   * The nice value those threads run at (Linux; 0 = the broker's own): a
   * copy then yields the CPU to request handling and to the other processes
   * of a busy machine, and still gets all of it when nothing else wants it.
   */
  readonly copyWorkerNice: number;
  /** How often the orphan sweep lists each partition's objects past what it has checked (read by the RemoteLogManager). */
  readonly orphanSweepIntervalMs: number;
  /** How often it lists every object instead (read by the RemoteLogManager). */
  readonly orphanFullSweepIntervalMs: number;
  readonly fsFsync: boolean;
  readonly s3: {
    readonly endpoint?: string;
    readonly region: string;
    readonly pathStyleAccess: boolean;
    readonly accessKeyId?: string;
    readonly secretAccessKey?: string;
    readonly sessionToken?: string;
    readonly multipartThresholdBytes: number;
    readonly partSizeBytes: number;
    readonly uploadConcurrency: number;
    readonly requestTimeoutMs: number;
    readonly connectionTimeoutMs: number;
    readonly retryMaxAttempts: number;
    readonly retryBackoffMs: number;
    readonly retryBackoffMaxMs: number;
    readonly maxConnections: number;
    readonly readHttpHandler: S3HttpHandlerKind;
  };
}

/** Validates and types the rsm.config.* settings (keys without the prefix are not ours and are ignored). */
export function parseRsmConfig(raw: Readonly<Record<string, string>>): RsmConfig {
  const values = new Map<Key, string>();
  for (const [fullKey, value] of Object.entries(raw)) {
    if (!fullKey.startsWith(RSM_CONFIG_PREFIX)) continue;
    const key = fullKey.slice(RSM_CONFIG_PREFIX.length);
    if (!(key in KEYS)) {
      throw new RemoteStorageConfigError(`unknown setting ${fullKey}; known: ${Object.keys(KEYS).map((k) => RSM_CONFIG_PREFIX + k).join(', ')}`);
    }
    values.set(key as Key, value.trim());
  }
  const int = (key: Key, def: number, min: number, max = Number.MAX_SAFE_INTEGER): number => {
    const v = values.get(key);
    if (v === undefined) return def;
    if (!/^-?[0-9]+$/.test(v)) throw new RemoteStorageConfigError(`${RSM_CONFIG_PREFIX}${key}: not an integer: ${JSON.stringify(v)}`);
    const n = Number(v);
    if (!Number.isSafeInteger(n) || n < min || n > max) {
      throw new RemoteStorageConfigError(`${RSM_CONFIG_PREFIX}${key}: ${v} is outside [${min}, ${max}]`);
    }
    return n;
  };
  const bool = (key: Key, def: boolean): boolean => {
    const v = values.get(key);
    if (v === undefined) return def;
    if (v.toLowerCase() === 'true') return true;
    if (v.toLowerCase() === 'false') return false;
    throw new RemoteStorageConfigError(`${RSM_CONFIG_PREFIX}${key}: want true or false, got ${JSON.stringify(v)}`);
  };
  const str = (key: Key): string | undefined => {
    const v = values.get(key);
    return v === undefined || v === '' ? undefined : v;
  };
  const oneOf = <T extends string>(key: Key, allowed: readonly T[], def: T): T => {
    const v = str(key);
    if (v === undefined) return def;
    if (!(allowed as readonly string[]).includes(v)) {
      throw new RemoteStorageConfigError(`${RSM_CONFIG_PREFIX}${key}: want one of ${allowed.join(', ')}, got ${JSON.stringify(v)}`);
    }
    return v as T;
  };
  const endpoint = str('s3.endpoint');
  if (endpoint !== undefined && !/^https?:\/\/[^/]+/.test(endpoint)) {
    throw new RemoteStorageConfigError(`${RSM_CONFIG_PREFIX}s3.endpoint: want http(s)://host[:port], got ${JSON.stringify(endpoint)}`);
  }
  const accessKeyId = str('s3.access.key.id');
  const secretAccessKey = str('s3.secret.access.key');
  if ((accessKeyId === undefined) !== (secretAccessKey === undefined)) {
    throw new RemoteStorageConfigError(
      `${RSM_CONFIG_PREFIX}s3.access.key.id and ${RSM_CONFIG_PREFIX}s3.secret.access.key go together: set both, or neither to use the AWS credential chain`,
    );
  }
  const sessionToken = str('s3.session.token');
  const retryBackoffMs = int('s3.retry.backoff.ms', DEFAULT_RETRY_POLICY.initialBackoffMs, 0);
  const retryBackoffMaxMs = int('s3.retry.backoff.max.ms', Math.max(DEFAULT_RETRY_POLICY.maxBackoffMs, retryBackoffMs), 0);
  if (retryBackoffMaxMs < retryBackoffMs) {
    throw new RemoteStorageConfigError(`${RSM_CONFIG_PREFIX}s3.retry.backoff.max.ms (${retryBackoffMaxMs}) is below ${RSM_CONFIG_PREFIX}s3.retry.backoff.ms (${retryBackoffMs})`);
  }
  return {
    chunkSizeBytes: int('chunk.size.bytes', DEFAULT_CHUNK_SIZE, 4096, 256 * 1024 * 1024),
    compressionEnable: bool('compression.enable', false),
    zstdLevel: int('compression.zstd.level', DEFAULT_ZSTD_LEVEL, 1, 19),
    manifestCacheEntries: int('manifest.cache.entries', 1024, 1),
    chunkCacheSizeBytes: int('chunk.cache.size.bytes', 256 * 1024 * 1024, 0),
    chunkCachePrefetchChunks: int('chunk.cache.prefetch.chunks', 8, 0, 1024),
    chunkCacheFetchChunks: int('chunk.cache.fetch.chunks', 8, 1, 1024),
    chunkCacheReuseEnable: bool('chunk.cache.reuse.enable', false),
    fetchWorkerThreads: int('fetch.worker.threads', 1, 0, 64),
    fetchWorkerNice: int('fetch.worker.nice', 0, 0, 19),
    copyWorkerThreads: int('copy.worker.threads', 1, 0, 64),
    copyWorkerNice: int('copy.worker.nice', 10, 0, 19),
    orphanSweepIntervalMs: int('orphan.sweep.interval.ms', 5 * 60_000, 1),
    orphanFullSweepIntervalMs: int('orphan.full.sweep.interval.ms', 24 * 3_600_000, 1),
    fsFsync: bool('fs.fsync', true),
    s3: {
      ...(endpoint === undefined ? {} : { endpoint }),
      region: str('s3.region') ?? 'us-east-1',
      pathStyleAccess: bool('s3.path.style.access', false),
      ...(accessKeyId === undefined ? {} : { accessKeyId }),
      ...(secretAccessKey === undefined ? {} : { secretAccessKey }),
      ...(sessionToken === undefined ? {} : { sessionToken }),
      multipartThresholdBytes: int('s3.multipart.threshold.bytes', 32 * 1024 * 1024, 0),
      partSizeBytes: int('s3.part.size.bytes', 8 * 1024 * 1024, MIN_PART_SIZE, 5 * 1024 * 1024 * 1024),
      uploadConcurrency: int('s3.upload.concurrency', 4, 1, 64),
      requestTimeoutMs: int('s3.request.timeout.ms', DEFAULT_RETRY_POLICY.requestTimeoutMs, 0),
      connectionTimeoutMs: int('s3.connection.timeout.ms', 10_000, 0),
      retryMaxAttempts: int('s3.retry.max.attempts', DEFAULT_RETRY_POLICY.maxAttempts, 1, 100),
      retryBackoffMs,
      retryBackoffMaxMs,
      maxConnections: int('s3.max.connections', 64, 1, 10_000),
      readHttpHandler: oneOf('s3.read.http.handler', S3_HTTP_HANDLER_KINDS, 'direct'),
    },
  };
}

export type ParsedStorageUrl =
  | { readonly scheme: 'memory' }
  | { readonly scheme: 'file'; readonly root: string }
  | { readonly scheme: 's3'; readonly bucket: string; readonly prefix: string };

const BUCKET_PATTERN = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

export function parseStorageUrl(url: string, cwd = process.cwd()): ParsedStorageUrl {
  const bad = (why: string): never => {
    throw new RemoteStorageConfigError(`remote.log.storage.url ${JSON.stringify(url)}: ${why}`);
  };
  if (url === 'memory://' || url === 'memory:') return { scheme: 'memory' };
  if (url.startsWith('file:')) {
    if (url.startsWith('file://')) {
      if (!url.startsWith('file:///')) bad('want file:///absolute/path or file:relative/path');
      let root: string;
      try {
        root = fileURLToPath(url);
      } catch (e) {
        return bad(e instanceof Error ? e.message : String(e));
      }
      return { scheme: 'file', root: path.resolve(root) };
    }
    const rel = url.slice('file:'.length);
    if (rel === '') bad('no path');
    return { scheme: 'file', root: path.resolve(cwd, decodeURIComponent(rel)) };
  }
  if (url.startsWith('s3://')) {
    const rest = url.slice('s3://'.length);
    const slash = rest.indexOf('/');
    const bucket = slash < 0 ? rest : rest.slice(0, slash);
    let prefix = slash < 0 ? '' : rest.slice(slash + 1);
    if (!BUCKET_PATTERN.test(bucket) || bucket.includes('..')) bad(`invalid bucket name ${JSON.stringify(bucket)}`);
    if (prefix.includes('?') || prefix.includes('#')) bad('query strings and fragments are not supported');
    prefix = decodeURIComponent(prefix).replace(/^\/+/, '');
    if (prefix !== '' && !prefix.endsWith('/')) prefix += '/';
    return { scheme: 's3', bucket, prefix };
  }
  return bad('want memory://, file:///path or s3://bucket/prefix');
}

/**
 * The backend named by `url`, configured from rsm.config.* settings (other keys
 * are ignored). Every scheme is an object store over ObjectRemoteStorage, which
 * also lends and adopts segment manifests (the storage workers use that).
 */
export function createRemoteStorage(url: string, rsmConfig: Readonly<Record<string, string>> = {}): ObjectRemoteStorage {
  const parsed = parseStorageUrl(url);
  const config = parseRsmConfig(rsmConfig);
  const common: ObjectRemoteStorageOptions = {
    chunkSize: config.chunkSizeBytes,
    compression: config.compressionEnable,
    zstdLevel: config.zstdLevel,
    manifestCacheEntries: config.manifestCacheEntries,
  };
  switch (parsed.scheme) {
    case 'memory':
      return new MemoryRemoteStorage(common);
    case 'file':
      return new FileSystemRemoteStorage(parsed.root, { ...common, fsync: config.fsFsync });
    case 's3': {
      const s3 = config.s3;
      const options: S3RemoteStorageOptions = {
        ...common,
        prefix: parsed.prefix,
        bucket: parsed.bucket,
        region: s3.region,
        ...(s3.endpoint === undefined ? {} : { endpoint: s3.endpoint }),
        forcePathStyle: s3.pathStyleAccess,
        ...(s3.accessKeyId === undefined || s3.secretAccessKey === undefined
          ? {}
          : {
              credentials: {
                accessKeyId: s3.accessKeyId,
                secretAccessKey: s3.secretAccessKey,
                ...(s3.sessionToken === undefined ? {} : { sessionToken: s3.sessionToken }),
              },
            }),
        connectionTimeoutMs: s3.connectionTimeoutMs,
        maxSockets: s3.maxConnections,
        readHttpHandler: s3.readHttpHandler,
        multipartThresholdBytes: s3.multipartThresholdBytes,
        partSizeBytes: s3.partSizeBytes,
        uploadConcurrency: s3.uploadConcurrency,
        retry: {
          maxAttempts: s3.retryMaxAttempts,
          initialBackoffMs: s3.retryBackoffMs,
          maxBackoffMs: s3.retryBackoffMaxMs,
          requestTimeoutMs: s3.requestTimeoutMs,
        },
      };
      return new S3RemoteStorage(options);
    }
  }
}
