import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import type { HttpRequest, HttpResponse } from '@smithy/types';
import { DirectBody, DirectHttpHandler } from '../../../remote-log/s3/direct-http-handler.js';
import { consumeBody } from '../../../remote-log/s3/s3-object-store.js';

/** A TCP server whose replies the test writes byte for byte; requests are heads without bodies. */
class ScriptedServer {
  readonly connections: net.Socket[] = [];
  readonly requests: string[] = [];
  /** Bytes after the last request head on each connection (a request body). */
  readonly leftover = new Map<net.Socket, string>();
  private server: net.Server;
  private waiting: Array<(r: { socket: net.Socket; head: string }) => void> = [];
  private queued: Array<{ socket: net.Socket; head: string }> = [];

  constructor() {
    this.server = net.createServer((socket) => {
      this.connections.push(socket);
      let pending = '';
      socket.on('data', (d) => {
        pending += d.toString('latin1');
        for (let end = pending.indexOf('\r\n\r\n'); end >= 0; end = pending.indexOf('\r\n\r\n')) {
          const head = pending.slice(0, end);
          pending = pending.slice(end + 4);
          this.requests.push(head);
          const r = { socket, head };
          const w = this.waiting.shift();
          if (w !== undefined) w(r);
          else this.queued.push(r);
        }
        this.leftover.set(socket, pending);
        socket.emit('leftover');
      });
      socket.on('error', () => {});
    });
  }

  async listen(): Promise<number> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return (this.server.address() as net.AddressInfo).port;
  }

  /** Resolves with the first `n` bytes after the last request head on `socket`. */
  async body(socket: net.Socket, n: number): Promise<string> {
    while ((this.leftover.get(socket) ?? '').length < n) await new Promise((resolve) => socket.once('leftover', resolve));
    return (this.leftover.get(socket) ?? '').slice(0, n);
  }

  /** The next request to arrive (its socket to answer on). */
  next(): Promise<{ socket: net.Socket; head: string }> {
    const q = this.queued.shift();
    if (q !== undefined) return Promise.resolve(q);
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  async close(): Promise<void> {
    for (const c of this.connections) c.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

function request(port: number, method = 'GET', extra: Partial<HttpRequest> = {}): HttpRequest {
  return {
    method,
    protocol: 'http:',
    hostname: '127.0.0.1',
    port,
    path: '/bucket/some%20key',
    query: { 'x-id': 'GetObject' },
    headers: { host: `127.0.0.1:${port}`, range: 'bytes=0-9' },
    ...extra,
  };
}

async function drained(response: HttpResponse): Promise<string> {
  const parts: Buffer[] = [];
  await consumeBody(response.body, (p) => parts.push(Buffer.from(p)));
  return Buffer.concat(parts).toString('latin1');
}

/** A 200 reply carrying `body`. */
function ok(body: string, headers = ''): string {
  return `HTTP/1.1 200 OK\r\n${headers}Content-Length: ${body.length}\r\n\r\n${body}`;
}

/** A GET through `handler`, answered with `reply` on the connection it arrived on: that connection and the body read. */
async function roundTrip(handler: DirectHttpHandler, server: ScriptedServer, port: number, reply: string): Promise<{ socket: net.Socket; body: string }> {
  const pending = handler.handle(request(port));
  const r = await server.next();
  r.socket.write(reply);
  return { socket: r.socket, body: await drained((await pending).response) };
}

/** Writes `text` one byte per write, each flushed separately. */
async function trickle(socket: net.Socket, text: string): Promise<void> {
  for (const ch of text) {
    await new Promise<void>((resolve) => socket.write(ch, 'latin1', () => resolve()));
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

describe('DirectHttpHandler', () => {
  let server: ScriptedServer;
  let port: number;
  before(async () => {
    server = new ScriptedServer();
    port = await server.listen();
  });
  after(() => server.close());

  it('sends the request line, query and headers, and reuses the connection for the next request', async () => {
    const handler = new DirectHttpHandler();
    const conns = server.connections.length;
    const first = handler.handle(request(port));
    const r1 = await server.next();
    assert.match(r1.head, /^GET \/bucket\/some%20key\?x-id=GetObject HTTP\/1\.1\r\n/);
    assert.match(r1.head, /\r\nrange: bytes=0-9/);
    r1.socket.write('HTTP/1.1 206 Partial Content\r\nContent-Length: 10\r\nETag: "e"\r\n\r\n0123456789');
    const { response } = await first;
    assert.equal(response.statusCode, 206);
    assert.equal(response.headers['etag'], '"e"');
    assert.ok(response.body instanceof DirectBody);
    assert.equal(await drained(response), '0123456789');

    const r2 = await roundTrip(handler, server, port, ok('abc'));
    assert.equal(r2.body, 'abc');
    assert.equal(r2.socket, r1.socket, 'the kept-alive connection carries the second request');
    assert.equal(server.connections.length, conns + 1);
    handler.destroy();
  });

  it('parses a reply trickled one byte at a time, and a body read as an ordinary stream', async () => {
    const handler = new DirectHttpHandler();
    const pending = handler.handle(request(port));
    const r = await server.next();
    const reply = trickle(r.socket, 'HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nstream');
    const { response } = await pending;
    const chunks: Buffer[] = [];
    for await (const c of response.body as Readable) chunks.push(c as Buffer);
    await reply;
    assert.equal(Buffer.concat(chunks).toString(), 'stream');
    handler.destroy();
  });

  it('decodes chunked bodies, skips 100 Continue, reads no body after HEAD, and keeps the connection', async () => {
    const handler = new DirectHttpHandler();
    const a = handler.handle(request(port));
    const ra = await server.next();
    ra.socket.write('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n<Err\r\n3\r\nor>\r\n0\r\n\r\n');
    const resA = (await a).response;
    assert.equal(resA.statusCode, 404);
    assert.equal(await drained(resA), '<Error>');

    const h = handler.handle(request(port, 'HEAD'));
    const rh = await server.next();
    assert.equal(rh.socket, ra.socket);
    rh.socket.write('HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n');
    const resH = (await h).response;
    assert.equal(resH.headers['content-length'], '1000');
    assert.equal(await drained(resH), '');

    const rg = await roundTrip(handler, server, port, ok('ok'));
    assert.equal(rg.body, 'ok');
    assert.equal(rg.socket, ra.socket, 'HEAD left the connection usable');
    handler.destroy();
  });

  it('reads a body delimited by the end of the connection, and opens a new one after Connection: close', async () => {
    const handler = new DirectHttpHandler();
    const a = handler.handle(request(port));
    const ra = await server.next();
    ra.socket.end('HTTP/1.0 200 OK\r\n\r\nuntil the end');
    assert.equal(await drained((await a).response), 'until the end');

    const rb = await roundTrip(handler, server, port, ok('x', 'Connection: close\r\n'));
    assert.equal(rb.body, 'x');
    assert.notEqual(rb.socket, ra.socket);
    const rc = await roundTrip(handler, server, port, ok('y'));
    assert.equal(rc.body, 'y');
    assert.notEqual(rc.socket, rb.socket);
    handler.destroy();
  });

  it('resends a GET once on a new connection when the kept-alive one was closed by the server', async () => {
    const handler = new DirectHttpHandler();
    const ra = await roundTrip(handler, server, port, ok('a'));
    assert.equal(ra.body, 'a');
    // The server drops the idle connection; the client may not have seen the FIN yet when it sends.
    ra.socket.destroy();
    const rb = await roundTrip(handler, server, port, ok('b'));
    assert.equal(rb.body, 'b');
    assert.notEqual(rb.socket, ra.socket);
    handler.destroy();
  });

  it('fails the body with a retriable error when the connection drops in the middle, and opens a new one next', async () => {
    const handler = new DirectHttpHandler();
    const a = handler.handle(request(port));
    const ra = await server.next();
    ra.socket.write('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly part');
    const { response } = await a;
    const got: string[] = [];
    const drain = consumeBody(response.body, (p) => got.push(Buffer.from(p).toString()));
    await new Promise<void>((resolve) => setImmediate(resolve));
    ra.socket.destroy();
    await assert.rejects(drain, (e: NodeJS.ErrnoException) => e.code === 'ECONNRESET');
    assert.equal(got.join(''), 'only part');
    handler.destroy();
  });

  it('aborts: before the reply (AbortError), and in the middle of a body (the connection is not reused)', async () => {
    const handler = new DirectHttpHandler();
    const early = new AbortController();
    early.abort();
    await assert.rejects(handler.handle(request(port), { abortSignal: early.signal }), { name: 'AbortError' });

    const waiting = new AbortController();
    const pending = handler.handle(request(port), { abortSignal: waiting.signal });
    await server.next();
    waiting.abort();
    await assert.rejects(pending, { name: 'AbortError' });

    const mid = new AbortController();
    const a = handler.handle(request(port), { abortSignal: mid.signal });
    const ra = await server.next();
    ra.socket.write('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nsome');
    const drain = drained((await a).response);
    await new Promise<void>((resolve) => setImmediate(resolve));
    mid.abort();
    await assert.rejects(drain, { name: 'AbortError' });

    const rb = await roundTrip(handler, server, port, ok('b'));
    assert.equal(rb.body, 'b');
    assert.notEqual(rb.socket, ra.socket);
    handler.destroy();
  });

  it('an abort after the body completed does not touch the connection serving the next request', async () => {
    const handler = new DirectHttpHandler();
    const controller = new AbortController();
    const a = handler.handle(request(port), { abortSignal: controller.signal });
    const ra = await server.next();
    ra.socket.write('HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\na');
    assert.equal(await drained((await a).response), 'a');
    const b = handler.handle(request(port));
    const rb = await server.next();
    controller.abort();
    rb.socket.write('HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nb');
    assert.equal(await drained((await b).response), 'b');
    assert.equal(rb.socket, ra.socket);
    handler.destroy();
  });

  it('refuses a malformed reply with a retriable error, and a refused connection with ECONNREFUSED', async () => {
    const handler = new DirectHttpHandler();
    const a = handler.handle(request(port));
    const ra = await server.next();
    ra.socket.write('SPDY/3 200 OK\r\n\r\n');
    await assert.rejects(a, (e: NodeJS.ErrnoException) => e.name === 'HttpProtocolError' && e.code === 'ECONNRESET');

    const closed = net.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const deadPort = (closed.address() as net.AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    await assert.rejects(handler.handle(request(deadPort)), (e: NodeJS.ErrnoException) => e.code === 'ECONNREFUSED');
    handler.destroy();
  });

  it('gives up a connect that does not complete within connectionTimeoutMs (ETIMEDOUT, retried like a reset)', async () => {
    // A listener that never accepts, its backlog filled: the kernel leaves further connects pending.
    const py = spawn('python3', ['-c', 'import socket,time\ns=socket.socket()\ns.bind(("127.0.0.1",0))\ns.listen(0)\nprint(s.getsockname()[1],flush=True)\ntime.sleep(60)'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      const stuckPort = await new Promise<number>((resolve) => py.stdout.once('data', (d: Buffer) => resolve(Number(d.toString().trim()))));
      const fillers = Array.from({ length: 4 }, () => net.connect(stuckPort, '127.0.0.1').on('error', () => {}));
      await Promise.all(fillers.slice(0, 1).map((f) => new Promise((resolve) => f.once('connect', resolve))));
      const handler = new DirectHttpHandler({ connectionTimeoutMs: 150, maxSockets: 1 });
      const started = Date.now();
      await assert.rejects(handler.handle(request(stuckPort)), (e: NodeJS.ErrnoException) => e.code === 'ETIMEDOUT' && /timed out after 150 ms/.test(e.message));
      assert.ok(Date.now() - started < 5_000);
      // The handler goes on serving (another origin here: this one still drops connects).
      const r = await roundTrip(handler, server, port, ok('after'));
      assert.equal(r.body, 'after');
      handler.destroy();
      for (const f of fillers) f.destroy();
    } finally {
      py.kill();
    }
  });

  it('connects to an IPv6 literal the SDK gives in brackets', async () => {
    const v6 = net.createServer((socket) => {
      socket.once('data', () => socket.write(ok('v6')));
    });
    const listening = await new Promise<boolean>((resolve) => {
      v6.once('error', () => resolve(false));
      v6.listen(0, '::1', () => resolve(true));
    });
    const handler = new DirectHttpHandler();
    try {
      if (listening) {
        const v6Port = (v6.address() as net.AddressInfo).port;
        const { response } = await handler.handle({ ...request(v6Port), hostname: '[::1]', headers: { host: `[::1]:${v6Port}` } });
        assert.equal(await drained(response), 'v6');
      } else {
        // No IPv6 loopback here: the connect to ::1 itself fails (no such address, no route, no IPv6, or
        // refused), never a name lookup of "[::1]" (ENOTFOUND) nor a connect anywhere else.
        const connectFailures = ['EADDRNOTAVAIL', 'ENETUNREACH', 'EAFNOSUPPORT', 'ECONNREFUSED'];
        await assert.rejects(
          handler.handle({ ...request(9), hostname: '[::1]', headers: { host: '[::1]:9' } }),
          (e: NodeJS.ErrnoException & { address?: string; port?: number }) => connectFailures.includes(e.code ?? '') && e.syscall === 'connect' && e.address === '::1' && e.port === 9,
        );
      }
    } finally {
      handler.destroy();
      if (listening) await new Promise<void>((resolve) => v6.close(() => resolve()));
    }
  });

  it('queues requests beyond maxSockets on the connections it has', async () => {
    const handler = new DirectHttpHandler({ maxSockets: 1 });
    const conns = server.connections.length;
    const a = handler.handle(request(port));
    const b = handler.handle(request(port));
    const ra = await server.next();
    ra.socket.write('HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\na');
    assert.equal(await drained((await a).response), 'a');
    const rb = await server.next();
    assert.equal(rb.socket, ra.socket);
    rb.socket.write('HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nb');
    assert.equal(await drained((await b).response), 'b');
    assert.equal(server.connections.length, conns + 1);
    handler.destroy();
  });

  it('consumeBody stops a direct body when its own signal fires, and a sink that throws fails it', async () => {
    const handler = new DirectHttpHandler({ maxSockets: 1 });
    const a = handler.handle(request(port));
    const ra = await server.next();
    ra.socket.write('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nabc');
    const reader = new AbortController();
    const consuming = consumeBody((await a).response.body, () => {}, reader.signal);
    await new Promise<void>((resolve) => setImmediate(resolve));
    reader.abort(new Error('reader gave up'));
    await assert.rejects(consuming, /reader gave up/);

    const b = handler.handle(request(port));
    const rb = await server.next();
    assert.notEqual(rb.socket, ra.socket, 'the abandoned connection is not reused');
    rb.socket.write('HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nbody');
    const refusing = consumeBody((await b).response.body, () => {
      throw new Error('checksum mismatch');
    });
    await assert.rejects(refusing, /checksum mismatch/);
    handler.destroy();
  });

  it('a body destroyed by its reader closes its connection instead of blocking it', async () => {
    const handler = new DirectHttpHandler({ maxSockets: 1 });
    const a = handler.handle(request(port));
    const ra = await server.next();
    ra.socket.write('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nabc');
    (await a).response.body.destroy();
    const rb = await roundTrip(handler, server, port, ok('b'));
    assert.equal(rb.body, 'b');
    assert.notEqual(rb.socket, ra.socket);
    handler.destroy();
  });

  it('keeps every byte of a large body read slowly as a stream (the socket pauses instead of buffering without end)', async () => {
    const handler = new DirectHttpHandler({ readBufferBytes: 16 * 1024 });
    const body = Buffer.alloc(4 * 1024 * 1024);
    for (let i = 0; i < body.length; i++) body[i] = (i * 7 + (i >> 11)) & 0xff;
    const a = handler.handle(request(port));
    const ra = await server.next();
    ra.socket.write(`HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\n\r\n`);
    ra.socket.write(body);
    const stream = (await a).response.body as Readable;
    const parts: Buffer[] = [];
    for await (const c of stream) {
      parts.push(c as Buffer);
      if (parts.length % 16 === 0) await new Promise<void>((resolve) => setImmediate(resolve));
    }
    assert.ok(Buffer.concat(parts).equals(body));
    handler.destroy();
  });

  it('sends string and byte bodies with their headers', async () => {
    const handler = new DirectHttpHandler();
    const a = handler.handle(request(port, 'PUT', { body: 'payload', headers: { host: 'h', 'content-length': '7' } }));
    const ra = await server.next();
    assert.match(ra.head, /^PUT /);
    assert.equal(await server.body(ra.socket, 7), 'payload');
    ra.socket.write('HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n');
    assert.equal((await a).response.statusCode, 200);
    await assert.rejects(handler.handle(request(port, 'GET', { headers: { host: 'h', evil: 'a\r\nInjected: yes' } })), { name: 'TypeError', message: 'header evil holds a line break' });
    handler.destroy();
  });
});

describe('DirectHttpHandler over TLS', () => {
  let dir: string;
  let server: https.Server;
  let port: number;
  let cert: Buffer;
  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'sediment-tls-'));
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost',
      '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem')], { stdio: 'ignore' });
    cert = readFileSync(path.join(dir, 'cert.pem'));
    server = https.createServer({ key: readFileSync(path.join(dir, 'key.pem')), cert }, (req, res) => {
      res.setHeader('content-length', '5');
      res.end(req.url === '/bucket/k?x-id=GetObject' ? 'tls!!' : 'wrong');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as net.AddressInfo).port;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
  });

  it('reads an https response, verifying the server against the given CA and name', async () => {
    const handler = new DirectHttpHandler({ tls: { ca: cert } });
    const req = { ...request(port), protocol: 'https:', hostname: 'localhost', path: '/bucket/k', headers: { host: `localhost:${port}` } };
    assert.equal(await drained((await handler.handle(req)).response), 'tls!!');
    assert.equal(await drained((await handler.handle(req)).response), 'tls!!');
    handler.destroy();
    const untrusting = new DirectHttpHandler();
    await assert.rejects(untrusting.handle(req), /self-signed|self signed/);
    untrusting.destroy();
  });
});
