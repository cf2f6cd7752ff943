// Connection's processing rules over a real loopback socket with a scripted
// processor: up to MAX_PIPELINED_PRODUCE consecutive Produce requests in flight,
// every other request alone, answers always in request order, and a failing
// request closing the connection after the answers before it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { CloseConnectionError } from '../../../broker/common/errors.js';
import { Connection, MAX_PIPELINED_PRODUCE, type FrameContext, type RequestProcessor } from '../../../broker/server/connection.js';
import { silentLogger } from '../../../broker/common/logger.js';
import { releaseAfterWrite } from '../../../broker/server/response-release.js';
import { loopbackPair } from './loopback.js';

const PRODUCE = 0;
const METADATA = 3;

/** A request frame: size prefix, api key, version 0, correlation id. */
function requestFrame(apiKey: number, correlationId: number): Buffer {
  const b = Buffer.alloc(12);
  b.writeInt32BE(8, 0);
  b.writeInt16BE(apiKey, 4);
  b.writeInt16BE(0, 6);
  b.writeInt32BE(correlationId, 8);
  return b;
}

function responseFrame(correlationId: number): Buffer[] {
  const b = Buffer.alloc(8);
  b.writeInt32BE(4, 0);
  b.writeInt32BE(correlationId, 4);
  return [b];
}

interface Started {
  readonly correlationId: number;
  resolve(): void;
  reject(err: Error): void;
}

/** Records which requests have started and lets the test finish each one. */
class ScriptedProcessor implements RequestProcessor {
  readonly started: Started[] = [];
  private waiters: Array<() => void> = [];

  process(frame: Buffer, _ctx: FrameContext): Promise<Buffer[] | null> {
    const correlationId = frame.readInt32BE(4);
    return new Promise((resolve, reject) => {
      this.started.push({ correlationId, resolve: () => resolve(responseFrame(correlationId)), reject });
      for (const w of this.waiters.splice(0)) w();
    });
  }

  async startedCount(n: number): Promise<void> {
    while (this.started.length < n) await new Promise<void>((r) => this.waiters.push(r));
  }

  get(correlationId: number): Started {
    const s = this.started.find((x) => x.correlationId === correlationId);
    if (s === undefined) throw new Error(`request ${correlationId} has not started`);
    return s;
  }

  ids(): number[] {
    return this.started.map((s) => s.correlationId);
  }
}

/** The client end: sends frames, collects answered correlation ids, notices the close. */
class Client {
  readonly answered: number[] = [];
  closed = false;
  private buf = Buffer.alloc(0);
  private waiters: Array<() => void> = [];

  constructor(readonly socket: net.Socket) {
    socket.on('data', (d: Buffer) => {
      this.buf = Buffer.concat([this.buf, d]);
      while (this.buf.length >= 8) {
        this.answered.push(this.buf.readInt32BE(4));
        this.buf = this.buf.subarray(8);
      }
      this.wake();
    });
    socket.on('close', () => {
      this.closed = true;
      this.wake();
    });
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  send(...frames: Buffer[]): void {
    this.socket.write(Buffer.concat(frames));
  }

  async answers(n: number): Promise<number[]> {
    while (this.answered.length < n && !this.closed) await new Promise<void>((r) => this.waiters.push(r));
    return [...this.answered];
  }

  async waitClosed(): Promise<void> {
    while (!this.closed) await new Promise<void>((r) => this.waiters.push(r));
  }
}

/**
 * The broker end of the socket, watched: bytes received (counted by a 'data'
 * listener added after the Connection's, so it runs once the Connection has
 * handled them) and writes made.
 */
class ServerSide {
  received = 0;
  writes = 0;
  private waiters: Array<() => void> = [];

  constructor(socket: net.Socket) {
    socket.on('data', (d: Buffer) => {
      this.received += d.length;
      for (const w of this.waiters.splice(0)) w();
    });
    const write = socket.write.bind(socket) as (...args: unknown[]) => boolean;
    (socket as { write: (...args: unknown[]) => boolean }).write = (...args: unknown[]): boolean => {
      this.writes++;
      return write(...args);
    };
  }

  /** Resolves once `n` bytes have reached the Connection. */
  async untilReceived(n: number): Promise<void> {
    while (this.received < n) await new Promise<void>((r) => this.waiters.push(r));
  }
}

/**
 * Lets everything already queued run (microtasks, nextTicks, then this
 * setImmediate): the Connection decides what to start and write synchronously
 * on its data and settle callbacks, so after one turn nothing it would do in
 * response is still pending. An event, not a time: no sleep proves a negative.
 */
const turn = (): Promise<void> => new Promise((r) => setImmediate(r));

async function connected(processor: RequestProcessor): Promise<{ client: Client; server: ServerSide; done: () => Promise<void> }> {
  let serverSide!: (s: ServerSide) => void;
  const side = new Promise<ServerSide>((resolve) => (serverSide = resolve));
  const pair = await loopbackPair((socket) => {
    new Connection(socket, 1, 1 << 20, processor, silentLogger(), () => undefined);
    serverSide(new ServerSide(socket));
  });
  return { client: new Client(pair.client), server: await side, done: pair.close };
}


test(`up to ${MAX_PIPELINED_PRODUCE} Produce requests are in flight at once, answered in request order`, async (t) => {
  const p = new ScriptedProcessor();
  const { client, server, done } = await connected(p);
  // Closed even when an assertion fails, so a failure ends the file instead of an open server holding it.
  t.after(done);
  const ids = Array.from({ length: MAX_PIPELINED_PRODUCE + 1 }, (_, i) => i + 1);
  client.send(...ids.map((id) => requestFrame(PRODUCE, id)));
  await server.untilReceived(ids.length * 12);
  await turn();
  assert.deepEqual(p.ids(), ids.slice(0, MAX_PIPELINED_PRODUCE), 'started in arrival order, the last one waits');
  // Finished last to first: nothing is answered before request 1.
  for (const id of ids.slice(1, MAX_PIPELINED_PRODUCE).reverse()) p.get(id).resolve();
  await turn();
  assert.equal(server.writes, 0, 'nothing is written before request 1 is answered');
  assert.deepEqual(client.answered, []);
  p.get(1).resolve();
  await p.startedCount(MAX_PIPELINED_PRODUCE + 1);
  assert.deepEqual(await client.answers(MAX_PIPELINED_PRODUCE), ids.slice(0, MAX_PIPELINED_PRODUCE));
  p.get(MAX_PIPELINED_PRODUCE + 1).resolve();
  assert.deepEqual(await client.answers(ids.length), ids);
});

test('any other request waits for the Produce requests before it and holds back those after it', async (t) => {
  const p = new ScriptedProcessor();
  const { client, server, done } = await connected(p);
  // Closed even when an assertion fails, so a failure ends the file instead of an open server holding it.
  t.after(done);
  client.send(requestFrame(PRODUCE, 1), requestFrame(PRODUCE, 2), requestFrame(METADATA, 3), requestFrame(PRODUCE, 4));
  await server.untilReceived(4 * 12);
  await turn();
  assert.deepEqual(p.ids(), [1, 2]);
  p.get(1).resolve();
  await turn();
  assert.equal(server.writes, 1, 'request 1 is answered');
  assert.deepEqual(p.ids(), [1, 2], 'Metadata starts only once every Produce before it is answered');
  p.get(2).resolve();
  await p.startedCount(3);
  await turn();
  assert.deepEqual(p.ids(), [1, 2, 3], 'the Produce after Metadata waits for it');
  p.get(3).resolve();
  await p.startedCount(4);
  p.get(4).resolve();
  assert.deepEqual(await client.answers(4), [1, 2, 3, 4]);
});

test('a pipelined Produce arriving while others are in flight starts at once', async (t) => {
  const p = new ScriptedProcessor();
  const { client, done } = await connected(p);
  // Closed even when an assertion fails, so a failure ends the file instead of an open server holding it.
  t.after(done);
  client.send(requestFrame(PRODUCE, 1));
  await p.startedCount(1);
  client.send(requestFrame(PRODUCE, 2));
  await p.startedCount(2);
  p.get(2).resolve();
  p.get(1).resolve();
  assert.deepEqual(await client.answers(2), [1, 2]);
});

test('a failing request closes the connection after the answers before it; later results are not sent', async (t) => {
  const p = new ScriptedProcessor();
  const { client, done } = await connected(p);
  // Closed even when an assertion fails, so a failure ends the file instead of an open server holding it.
  t.after(done);
  client.send(requestFrame(PRODUCE, 1), requestFrame(PRODUCE, 2), requestFrame(PRODUCE, 3));
  await p.startedCount(3);
  p.get(3).resolve();
  p.get(2).reject(new CloseConnectionError('malformed produce'));
  p.get(1).resolve();
  await client.waitClosed();
  assert.deepEqual(client.answered, [1]);
});

/** Answers every request at once with chunks carrying a release hook (as a Fetch with pooled reads does). */
class ReleasingProcessor implements RequestProcessor {
  readonly released: number[] = [];
  private hold: Array<() => void> | null = null;
  private waiters: Array<() => void> = [];

  /** Answers wait until resume(). */
  holdAnswers(): void {
    this.hold = [];
  }

  resume(): void {
    for (const r of this.hold ?? []) r();
    this.hold = null;
  }

  process(frame: Buffer, _ctx: FrameContext): Promise<Buffer[] | null> {
    const correlationId = frame.readInt32BE(4);
    const chunks = [...responseFrame(correlationId), Buffer.alloc(0)];
    releaseAfterWrite(chunks, () => {
      this.released.push(correlationId);
      for (const w of this.waiters.splice(0)) w();
    });
    if (this.hold === null) return Promise.resolve(chunks);
    return new Promise((resolve) => this.hold!.push(() => resolve(chunks)));
  }

  async releasedCount(n: number): Promise<void> {
    while (this.released.length < n) await new Promise<void>((r) => this.waiters.push(r));
  }
}

test('a response release hook runs once its bytes are written, once per response', async (t) => {
  const p = new ReleasingProcessor();
  const { client, done } = await connected(p);
  t.after(done);
  client.send(requestFrame(METADATA, 1), requestFrame(METADATA, 2));
  assert.deepEqual(await client.answers(2), [1, 2]);
  await p.releasedCount(2);
  await turn();
  assert.deepEqual(p.released, [1, 2]);
});

test('a response never written (the connection closed first) never runs its release hook', async (t) => {
  const p = new ReleasingProcessor();
  p.holdAnswers();
  const { client, server, done } = await connected(p);
  t.after(done);
  client.send(requestFrame(METADATA, 1));
  await server.untilReceived(12);
  client.socket.destroy();
  await client.waitClosed();
  // The broker end has seen the close once its socket emitted 'close'; only then is the answer ready.
  await turn();
  await turn();
  p.resume();
  await turn();
  await turn();
  assert.deepEqual(p.released, []);
});
