// A loopback HTTP proxy in front of an S3 server (MinIO) that counts every
// request it forwards by S3 operation: the requests the object store receives
// and bills, independent of the broker's own counters. Path-style requests only
// (`/bucket/key?query`). Headers are forwarded unchanged, so SigV4 signatures,
// which cover the Host header the client used, still verify.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type S3Operation =
  | 'PutObject'
  | 'CreateMultipartUpload'
  | 'UploadPart'
  | 'CompleteMultipartUpload'
  | 'AbortMultipartUpload'
  | 'GetObject'
  | 'HeadObject'
  | 'ListObjects'
  | 'DeleteObject'
  | 'Other';

/** PUT-class operations, as S3 bills them. */
export const PUT_CLASS: readonly S3Operation[] = ['PutObject', 'CreateMultipartUpload', 'UploadPart', 'CompleteMultipartUpload'];

export function classifyS3Request(method: string, rawUrl: string): S3Operation {
  const url = new URL(rawUrl, 'http://proxy');
  const q = url.searchParams;
  const hasKey = url.pathname.replace(/^\/+/, '').includes('/') && !url.pathname.endsWith('/');
  switch (method) {
    case 'PUT':
      return q.has('partNumber') && q.has('uploadId') ? 'UploadPart' : 'PutObject';
    case 'POST':
      if (q.has('uploads')) return 'CreateMultipartUpload';
      if (q.has('uploadId')) return 'CompleteMultipartUpload';
      return 'Other';
    case 'DELETE':
      return q.has('uploadId') ? 'AbortMultipartUpload' : 'DeleteObject';
    case 'GET':
      return !hasKey || q.has('list-type') ? 'ListObjects' : 'GetObject';
    case 'HEAD':
      return 'HeadObject';
    default:
      return 'Other';
  }
}

/** One ListObjectsV2 request as the store received it (each page is one). */
export interface ListRequest {
  readonly prefix: string;
  /** The start-after parameter, when given. */
  readonly startAfter: string | undefined;
  /** A later page of a listing (a continuation token was given). */
  readonly continuation: boolean;
}

/** The ListObjectsV2 parameters of a request, or undefined for any other request (ListMultipartUploads included). */
export function listRequestOf(method: string, rawUrl: string): ListRequest | undefined {
  const url = new URL(rawUrl, 'http://proxy');
  const q = url.searchParams;
  if (method !== 'GET' || q.get('list-type') !== '2') return undefined;
  return { prefix: q.get('prefix') ?? '', startAfter: q.get('start-after') ?? undefined, continuation: q.has('continuation-token') };
}

export interface CountingProxy {
  /** http://127.0.0.1:<port> */
  readonly endpoint: string;
  /** Requests forwarded so far, by operation. */
  counts(): Record<S3Operation, number>;
  /** The ListObjectsV2 requests forwarded so far, in order. */
  lists(): ListRequest[];
  reset(): void;
  stop(): Promise<void>;
}

function zero(): Record<S3Operation, number> {
  return {
    PutObject: 0,
    CreateMultipartUpload: 0,
    UploadPart: 0,
    CompleteMultipartUpload: 0,
    AbortMultipartUpload: 0,
    GetObject: 0,
    HeadObject: 0,
    ListObjects: 0,
    DeleteObject: 0,
    Other: 0,
  };
}

export async function startCountingProxy(target: { host: string; port: number }): Promise<CountingProxy> {
  let counts = zero();
  let lists: ListRequest[] = [];
  const server = http.createServer((req, res) => {
    counts[classifyS3Request(req.method ?? 'GET', req.url ?? '/')]++;
    const list = listRequestOf(req.method ?? 'GET', req.url ?? '/');
    if (list !== undefined) lists.push(list);
    const upstream = http.request(
      { host: target.host, port: target.port, method: req.method, path: req.url, headers: req.headers },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    upstream.on('error', (err) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(String(err));
    });
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    counts: () => ({ ...counts }),
    lists: () => [...lists],
    reset: () => {
      counts = zero();
      lists = [];
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
