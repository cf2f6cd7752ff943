// S3ObjectStore's reading of GetObject bodies, against a scripted client: each
// piece is told the moment its last byte arrives, a retry after a body cut
// midway resumes at the first piece not told, a refusing listener is not
// retried, and an abort ends the body. (The MinIO suite covers the real SDK.)
import assert from 'node:assert/strict';
import { PassThrough, type Readable } from 'node:stream';
import { describe, it } from 'node:test';
import type { S3Client } from '@aws-sdk/client-s3';
import { RemoteAbortedError, RemoteStorageError } from '../../../remote-log/remote-storage.js';
import { S3ObjectStore } from '../../../remote-log/s3/s3-object-store.js';

interface Served {
  readonly range: string | undefined;
  readonly body: PassThrough;
}

/** Answers each GetObject with a body the test writes to (handed over through `next`). */
class ScriptedClient {
  readonly served: Served[] = [];
  private waiters: Array<(s: Served) => void> = [];

  constructor(private readonly object: Buffer) {}

  async send(command: { input: { Range?: string } }): Promise<{ Body: Readable; ContentLength: number }> {
    const range = command.input.Range;
    const m = /^bytes=(\d+)-(\d+)$/.exec(range ?? '');
    const start = m === null ? 0 : Number(m[1]);
    const end = m === null ? this.object.length - 1 : Math.min(Number(m[2]), this.object.length - 1);
    const served: Served = { range, body: new PassThrough() };
    this.served.push(served);
    for (const w of this.waiters.splice(0)) w(served);
    return { Body: served.body, ContentLength: end - start + 1 };
  }

  /** The next request's body (or the one just served when it is already waiting). */
  next(count: number): Promise<Served> {
    const s = this.served[count - 1];
    if (s !== undefined) return Promise.resolve(s);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  destroy(): void {}
}

function storeOn(client: ScriptedClient, maxAttempts = 3): S3ObjectStore {
  return new S3ObjectStore({
    client: client as unknown as S3Client,
    bucket: 'b',
    retry: { maxAttempts, initialBackoffMs: 1, maxBackoffMs: 1, requestTimeoutMs: 0 },
    transport: { sleep: async () => {} },
  });
}

const object = Buffer.from(Array.from({ length: 1000 }, (_, i) => i % 251));
const lengths = [300, 300, 300];
const range = { start: 50, endInclusive: 949 };

/** Resolves on the next turn of the event loop (lets stream events and promise jobs run). */
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('S3ObjectStore.getPieces', () => {
  it('tells each piece as soon as its last byte has arrived', async () => {
    const client = new ScriptedClient(object);
    const told: number[] = [];
    const answer = storeOn(client).getPieces('k', range, lengths, undefined, (k, piece) => {
      told.push(k);
      assert.deepEqual(piece, object.subarray(50 + k * 300, 50 + (k + 1) * 300));
    });
    const { body } = await client.next(1);
    body.write(object.subarray(50, 400));
    await turn();
    assert.deepEqual(told, [0], 'piece 0 told while the body streams');
    body.write(object.subarray(400, 650));
    await turn();
    assert.deepEqual(told, [0, 1]);
    body.end(object.subarray(650, 950));
    const pieces = await answer;
    assert.deepEqual(told, [0, 1, 2]);
    assert.deepEqual(Buffer.concat(pieces), object.subarray(50, 950));
    assert.equal(client.served.length, 1);
  });

  it('a retry after a body cut midway asks only for the pieces not told, and tells none twice', async () => {
    const client = new ScriptedClient(object);
    const told: number[] = [];
    const answer = storeOn(client).getPieces('k', range, lengths, undefined, (k) => told.push(k));
    const first = await client.next(1);
    first.body.write(object.subarray(50, 500)); // piece 0 and part of piece 1
    await turn();
    first.body.destroy(new Error('socket hang up'));
    const second = await client.next(2);
    assert.equal(second.range, 'bytes=350-949', 'resumes at piece 1');
    second.body.end(object.subarray(350, 950));
    const pieces = await answer;
    assert.deepEqual(told, [0, 1, 2]);
    assert.deepEqual(Buffer.concat(pieces), object.subarray(50, 950));
    assert.deepEqual(
      client.served.map((s) => s.range),
      ['bytes=50-949', 'bytes=350-949'],
    );
  });

  it('a body that ends early gives a short last piece, not told', async () => {
    const client = new ScriptedClient(object.subarray(0, 700));
    const told: number[] = [];
    const answer = storeOn(client).getPieces('k', range, lengths, undefined, (k) => told.push(k));
    (await client.next(1)).body.end(object.subarray(50, 700));
    const pieces = await answer;
    assert.deepEqual(told, [0, 1]);
    assert.deepEqual(
      pieces.map((p) => p.length),
      [300, 300, 50],
    );
  });

  it('a listener that refuses a piece fails the request at once, without a retry', async () => {
    const client = new ScriptedClient(object);
    const refusal = new RemoteStorageError('bad chunk');
    const answer = storeOn(client).getPieces('k', range, lengths, undefined, (k) => {
      if (k === 1) throw refusal;
    });
    const { body } = await client.next(1);
    body.write(object.subarray(50, 950));
    await assert.rejects(answer, (e) => e === refusal);
    assert.equal(client.served.length, 1);
    assert.equal(body.destroyed, true, 'the body is dropped');
  });

  it('an abort ends the body and the request', async () => {
    const client = new ScriptedClient(object);
    const controller = new AbortController();
    const told: number[] = [];
    const answer = storeOn(client).getPieces('k', range, lengths, controller.signal, (k) => told.push(k));
    const { body } = await client.next(1);
    body.write(object.subarray(50, 400));
    await turn();
    controller.abort(new Error('reader gone'));
    await assert.rejects(answer, RemoteAbortedError);
    assert.deepEqual(told, [0]);
    assert.equal(body.destroyed, true);
    assert.equal(client.served.length, 1);
  });
});

describe('S3ObjectStore.get', () => {
  it('reads the body into one buffer, and retries one cut short', async () => {
    const client = new ScriptedClient(object);
    const answer = storeOn(client).get('k', { start: 100, endInclusive: 899 });
    const first = await client.next(1);
    first.body.end(object.subarray(100, 300)); // ends early: 200 of 800 bytes
    const second = await client.next(2);
    second.body.end(object.subarray(100, 900));
    assert.deepEqual(await answer, object.subarray(100, 900));
  });
});
