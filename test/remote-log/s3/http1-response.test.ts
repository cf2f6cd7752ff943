import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  ChunkedDecoder,
  HttpProtocolError,
  MAX_HEAD_BYTES,
  bodyFraming,
  parseResponseHead,
  queryString,
} from '../../../remote-log/s3/http1-response.js';

const b = (s: string): Buffer => Buffer.from(s, 'latin1');

describe('parseResponseHead', () => {
  it('waits for the blank line, then reads status, reason, headers and the head length', () => {
    const text = 'HTTP/1.1 206 Partial Content\r\nContent-Length: 5\r\nETag: "x"\r\n\r\nhello';
    assert.equal(parseResponseHead(b(text.slice(0, 40))), undefined);
    const head = parseResponseHead(b(text));
    assert.ok(head);
    assert.equal(head.statusCode, 206);
    assert.equal(head.reason, 'Partial Content');
    assert.deepEqual(head.headers, { 'content-length': '5', etag: '"x"' });
    assert.equal(head.length, text.length - 5);
    assert.equal(head.closes, false);
  });

  it('joins repeated fields and knows when the connection closes', () => {
    const head = parseResponseHead(b('HTTP/1.1 200 OK\r\nX-A: 1\r\nx-a: 2\r\nConnection: close\r\n\r\n'));
    assert.equal(head?.headers['x-a'], '1, 2');
    assert.equal(head?.closes, true);
    assert.equal(parseResponseHead(b('HTTP/1.0 200 OK\r\n\r\n'))?.closes, true);
    assert.equal(parseResponseHead(b('HTTP/1.0 200 OK\r\nConnection: keep-alive\r\n\r\n'))?.closes, false);
    assert.equal(parseResponseHead(b('HTTP/1.1 200\r\n\r\n'))?.reason, '');
  });

  it('refuses malformed and oversized heads', () => {
    assert.throws(() => parseResponseHead(b('ICY 200 OK\r\n\r\n')), HttpProtocolError);
    assert.throws(() => parseResponseHead(b('HTTP/1.1 200 OK\r\nno colon here\r\n\r\n')), HttpProtocolError);
    assert.throws(() => parseResponseHead(Buffer.alloc(MAX_HEAD_BYTES + 1, 0x61)), /larger than/);
    const e = (() => {
      try {
        parseResponseHead(b('HTTP/2 200\r\n\r\n'));
      } catch (err) {
        return err as { code?: string };
      }
      return undefined;
    })();
    assert.equal(e?.code, 'ECONNRESET', 'a torn or foreign reply is retried like a reset connection');
  });
});

describe('bodyFraming', () => {
  const head = (status: number, headers: string): ReturnType<typeof parseResponseHead> =>
    parseResponseHead(b(`HTTP/1.1 ${status} X\r\n${headers}\r\n`));
  it('follows RFC 9112: HEAD, 1xx, 204 and 304 have no body; chunked beats Content-Length; neither means until close', () => {
    assert.deepEqual(bodyFraming('HEAD', head(200, 'Content-Length: 10\r\n')!), { kind: 'none' });
    assert.deepEqual(bodyFraming('GET', head(204, '')!), { kind: 'none' });
    assert.deepEqual(bodyFraming('GET', head(304, 'Content-Length: 10\r\n')!), { kind: 'none' });
    assert.deepEqual(bodyFraming('GET', head(200, 'Content-Length: 10\r\n')!), { kind: 'length', length: 10 });
    assert.deepEqual(bodyFraming('GET', head(200, 'Content-Length: 0\r\n')!), { kind: 'none' });
    assert.deepEqual(bodyFraming('GET', head(200, 'Transfer-Encoding: chunked\r\nContent-Length: 10\r\n')!), { kind: 'chunked' });
    assert.deepEqual(bodyFraming('GET', head(200, 'Transfer-Encoding: gzip\r\n')!), { kind: 'close' });
    assert.deepEqual(bodyFraming('GET', head(200, '')!), { kind: 'close' });
    assert.throws(() => bodyFraming('GET', head(200, 'Content-Length: -1\r\n')!), HttpProtocolError);
    assert.throws(() => bodyFraming('GET', head(200, 'Content-Length: 1, 2\r\n')!), HttpProtocolError);
  });
});

describe('ChunkedDecoder', () => {
  const encoded = '5;ext=1\r\nhello\r\n0007\r\n, world\r\n0\r\nX-Trailer: t\r\n\r\n';

  it('decodes any split of the stream and stops at the end of the body', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 10 }), { minLength: 1, maxLength: 30 }), (sizes) => {
        const out: string[] = [];
        const d = new ChunkedDecoder((x) => out.push(x.toString('latin1')));
        const stream = b(`${encoded}NEXT`);
        let at = 0;
        let i = 0;
        while (!d.done && at < stream.length) {
          const piece = stream.subarray(at, at + (sizes[i++ % sizes.length] as number));
          at += d.push(piece);
        }
        assert.ok(d.done);
        assert.equal(out.join(''), 'hello, world');
        assert.equal(stream.subarray(at).toString(), 'NEXT', 'bytes after the body are left unconsumed');
      }),
    );
  });

  it('refuses a bad size line and chunk data not followed by CRLF', () => {
    assert.throws(() => new ChunkedDecoder(() => {}).push(b('zz\r\n')), HttpProtocolError);
    assert.throws(() => new ChunkedDecoder(() => {}).push(b('2\r\nabXY\r\n')), /not followed by CRLF/);
    assert.throws(() => new ChunkedDecoder(() => {}).push(Buffer.alloc(5000, 0x31)), /line too long/);
  });
});

describe('queryString', () => {
  it('sorts names, repeats arrays, leaves null values bare and escapes as S3 signs', () => {
    assert.equal(queryString({ 'x-id': 'GetObject', uploads: null, a: ['1', '2'], k: "it's (a) *test*!" }), "a=1&a=2&k=it%27s%20%28a%29%20%2Atest%2A%21&uploads&x-id=GetObject");
    assert.equal(queryString(undefined), '');
  });
});
