// A Connection writing answers that hold file regions (FileRecords), over a
// real loopback socket and real files: the bytes arrive whole and in request
// order, including regions much larger than the socket's buffers (so sends
// stop at a full buffer and wait for the reader), every region's descriptor is
// closed once sent, and a reader that goes away mid-send closes the connection
// and releases what was not sent.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { closeSync, fstatSync, openSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { Connection, type FrameContext, type RequestProcessor } from '../../../broker/server/connection.js';
import { silentLogger } from '../../../broker/common/logger.js';
import { CloseConnectionError } from '../../../broker/common/errors.js';
import { fileRegion, sendfileSupport, type SendfileBinding } from '../../../broker/common/sendfile.js';
import { FileRecords, type OutputChunk } from '../../../broker/protocol/record-parts.js';
import { tempDir } from '../log/helpers.js';
import { loopbackPair } from './loopback.js';

const FILE_BYTES = 24 * 1024 * 1024;

/** Answers request k with: a 4-byte size, the correlation id, then the chunks `answer(k)` gives. */
class FileAnswers implements RequestProcessor {
  readonly regions: FileRecords[] = [];
  readonly sendfileSeen: boolean[] = [];

  constructor(private readonly answer: (correlationId: number) => OutputChunk[]) {}

  async process(frame: Buffer, ctx: FrameContext): Promise<OutputChunk[] | null> {
    this.sendfileSeen.push(ctx.sendfile !== undefined);
    const correlationId = frame.readInt32BE(4);
    const body = this.answer(correlationId);
    for (const c of body) if (c instanceof FileRecords) this.regions.push(c);
    const head = Buffer.alloc(8);
    head.writeInt32BE(4 + body.reduce((n, c) => n + c.length, 0), 0);
    head.writeInt32BE(correlationId, 4);
    return [head, ...body];
  }
}

function requestFrame(correlationId: number): Buffer {
  const b = Buffer.alloc(12);
  b.writeInt32BE(8, 0);
  b.writeInt16BE(3, 4);
  b.writeInt32BE(correlationId, 8);
  return b;
}

async function setup(processor: RequestProcessor): Promise<{ client: net.Socket; closed: Promise<void>; done: () => Promise<void> }> {
  let closedResolve!: () => void;
  const closed = new Promise<void>((r) => (closedResolve = r));
  const pair = await loopbackPair((socket) => void new Connection(socket, 1, 1 << 20, processor, silentLogger(), () => closedResolve()));
  return { client: pair.client, closed, done: pair.close };
}

/** Reads from `socket` until `n` bytes have come (or it closes). */
function readBytes(socket: net.Socket, n: number): Promise<Buffer> {
  return new Promise((resolve) => {
    const parts: Buffer[] = [];
    let got = 0;
    const finish = (): void => {
      socket.off('data', onData);
      resolve(Buffer.concat(parts));
    };
    const onData = (d: Buffer): void => {
      parts.push(d);
      got += d.length;
      if (got >= n) finish();
    };
    socket.on('data', onData);
    socket.once('close', finish);
  });
}

/** The addon, and a file of FILE_BYTES random bytes open for reading (closed and removed after the test). */
async function dataFile(t: TestContext): Promise<{ binding: SendfileBinding; data: Buffer; fd: number }> {
  const binding = sendfileSupport;
  assert.ok(binding !== null, 'the sendfile addon is built (npm run build)');
  const { dir, cleanup } = await tempDir('sediment-sendfile-');
  const data = randomBytes(FILE_BYTES);
  const file = path.join(dir, 'segment.log');
  writeFileSync(file, data);
  const fd = openSync(file, 'r');
  t.after(async () => {
    closeSync(fd);
    await cleanup();
  });
  return { binding, data, fd };
}

const isClosed = (fd: number): boolean => {
  try {
    fstatSync(fd);
    return false;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EBADF';
  }
};

test('answers with file regions arrive whole, in request order, through full socket buffers; each region is closed once sent', async (t) => {
  const { binding, data, fd } = await dataFile(t);
  const middle = Buffer.from('between the regions, more than RAW_REF bytes long so it is its own chunk');
  // Request 1: two large regions with a buffer between; request 2: buffers only; request 3: one region.
  const processor = new FileAnswers((id) => {
    if (id === 1) return [fileRegion(binding, fd, 1000, 9_000_000), middle, fileRegion(binding, fd, 12_000_000, 10_000_000)];
    if (id === 2) return [middle];
    return [fileRegion(binding, fd, 5, 7)];
  });
  const { client, done } = await setup(processor);
  t.after(done);
  const expected = Buffer.concat([
    frameOf(1, [data.subarray(1000, 9_001_000), middle, data.subarray(12_000_000, 22_000_000)]),
    frameOf(2, [middle]),
    frameOf(3, [data.subarray(5, 12)]),
  ]);
  // The reader waits before reading: the first answer fills the socket's buffers many times over.
  client.pause();
  client.write(Buffer.concat([requestFrame(1), requestFrame(2), requestFrame(3)]));
  const received = readBytes(client, expected.length);
  await new Promise((r) => setImmediate(r));
  client.resume();
  const got = await received;
  assert.equal(got.length, expected.length);
  assert.ok(got.equals(expected), 'the same bytes, in order');
  assert.deepEqual(processor.sendfileSeen, [true, true, true], 'the requests were told the connection sends files');
  assert.equal(processor.regions.length, 3);
  for (const r of processor.regions) assert.ok(isClosed(r.fd), `region at ${r.position} released`);
});

test('a reader that goes away mid-send: the connection closes and releases the regions it did not send', async (t) => {
  const { binding, fd } = await dataFile(t);
  const processor = new FileAnswers(() => [fileRegion(binding, fd, 0, FILE_BYTES), fileRegion(binding, fd, 0, FILE_BYTES)]);
  const { client, closed, done } = await setup(processor);
  t.after(done);
  client.pause();
  client.write(requestFrame(1));
  // Some bytes of the answer reach the reader, which then resets the connection unread.
  await new Promise<void>((resolve) => {
    client.once('readable', () => resolve());
    client.resume();
    client.pause();
  });
  client.resetAndDestroy();
  await closed;
  assert.equal(processor.regions.length, 2);
  // The close aborts the send waiting for the socket; its chain releases every region in the same turn.
  await new Promise((r) => setImmediate(r));
  for (const r of processor.regions) assert.ok(isClosed(r.fd), `region at ${r.position} released`);
});

function frameOf(correlationId: number, body: Buffer[]): Buffer {
  const head = Buffer.alloc(8);
  head.writeInt32BE(4 + body.reduce((n, b) => n + b.length, 0), 0);
  head.writeInt32BE(correlationId, 4);
  return Buffer.concat([head, ...body]);
}

test('a request that closes the connection lets the file answers before it go out whole first', async (t) => {
  const { binding, data, fd } = await dataFile(t);
  const answers = new FileAnswers(() => [fileRegion(binding, fd, 0, FILE_BYTES)]);
  // Request 1 is answered with the whole file; request 2 fails and closes the connection.
  const processor: RequestProcessor = {
    process: (frame, ctx) => (frame.readInt32BE(4) === 1 ? answers.process(frame, ctx) : Promise.reject(new CloseConnectionError('request 2 is refused'))),
  };
  const { client, closed, done } = await setup(processor);
  t.after(done);
  client.pause();
  client.write(Buffer.concat([requestFrame(1), requestFrame(2)]));
  const expected = frameOf(1, [data]);
  const received = readBytes(client, expected.length + 1);
  await closed;
  client.resume();
  const got = await received;
  assert.ok(got.equals(expected), `answer 1 whole before the close (${got.length} of ${expected.length} bytes)`);
  assert.ok(isClosed(answers.regions[0]!.fd));
});
