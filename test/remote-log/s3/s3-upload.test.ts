// S3ObjectStore's uploads of streamed bodies against a scripted client: the
// part buffer pool keeps what uploads running side by side use and gives the
// surplus up when the last one ends; pieces read into the pool's buffers
// (readChunks with a lender) go up in place, without a copy; other pieces are
// copied; every part's checksum is its bytes' CRC-32C. (The MinIO suites
// cover the real SDK and server.)
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import type { S3Client } from '@aws-sdk/client-s3';
import { crc32c } from '@node-rs/crc32';
import { handedOverPieces, pieceCrc32c } from '../../../remote-log/objects/object-store.js';
import { readChunks } from '../../../remote-log/objects/segment-source.js';
import { crc32cBase64 } from '../../../remote-log/s3/s3-client.js';
import { PartBufferPool } from '../../../remote-log/s3/s3-multipart.js';
import { MIN_PART_SIZE, S3ObjectStore } from '../../../remote-log/s3/s3-object-store.js';

interface SentPart {
  readonly key: string;
  readonly partNumber: number;
  /** The Body as given (its memory, to tell a copy from the producer's buffer). */
  readonly body: Buffer;
  /** Its bytes when sent (the buffer is reused once the part settles). */
  readonly bytes: Buffer;
  readonly checksum: string | undefined;
}

/** Records PutObject / multipart requests and answers them at once. */
class UploadClient {
  readonly parts: SentPart[] = [];
  readonly puts: Array<{ key: string; bytes: Buffer; checksum: string | undefined }> = [];
  /** Whether each PutObject's body was streamed (not one Buffer). */
  readonly streamed: boolean[] = [];
  readonly completed: string[] = [];
  private uploads = 0;

  async send(command: { constructor: { name: string }; input: Record<string, unknown> }): Promise<unknown> {
    const input = command.input;
    switch (command.constructor.name) {
      case 'CreateMultipartUploadCommand':
        return { UploadId: `u${++this.uploads}` };
      case 'UploadPartCommand': {
        const body = input.Body as Buffer;
        this.parts.push({
          key: input.Key as string,
          partNumber: input.PartNumber as number,
          body,
          bytes: Buffer.from(body),
          checksum: input.ChecksumCRC32C as string | undefined,
        });
        await new Promise((resolve) => setImmediate(resolve));
        return { ETag: `"${String(input.PartNumber)}"` };
      }
      case 'CompleteMultipartUploadCommand':
        this.completed.push(input.Key as string);
        return {};
      case 'PutObjectCommand': {
        const body = input.Body as Buffer | Readable;
        this.streamed.push(!Buffer.isBuffer(body));
        const bytes = Buffer.isBuffer(body) ? Buffer.from(body) : Buffer.concat(await body.toArray());
        assert.equal(bytes.length, input.ContentLength);
        this.puts.push({ key: input.Key as string, bytes, checksum: input.ChecksumCRC32C as string | undefined });
        return {};
      }
      default:
        throw new Error(`unexpected ${command.constructor.name}`);
    }
  }

  destroy(): void {}

  object(key: string): Buffer {
    return Buffer.concat(
      this.parts
        .filter((p) => p.key === key)
        .sort((a, b) => a.partNumber - b.partNumber)
        .map((p) => p.bytes),
    );
  }
}

const PART = MIN_PART_SIZE;
const CHUNK = 1024 * 1024;

function storeOn(client: UploadClient, multipartThresholdBytes = 2 * PART): S3ObjectStore {
  return new S3ObjectStore({
    client: client as unknown as S3Client,
    bucket: 'b',
    partSizeBytes: PART,
    multipartThresholdBytes,
    uploadConcurrency: 2,
    retry: { maxAttempts: 1, initialBackoffMs: 1, maxBackoffMs: 1, requestTimeoutMs: 0 },
    transport: { sleep: async () => {} },
  });
}

/** Deterministic bytes that differ from part to part. */
function data(length: number, seed: number): Buffer {
  const b = Buffer.allocUnsafe(length);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < length; i += 4) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    b.writeUInt32LE(x >>> 0, i);
  }
  return b;
}

/** The pieces of readChunks, each with its CRC recorded as the copy task's producer does. */
async function* withCrcs(pieces: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  for await (const p of pieces) {
    pieceCrc32c.set(p, crc32c(p));
    yield p;
  }
}

describe('PartBufferPool', () => {
  it('keeps up to `retain` buffers per upload open at the peak, and all but `retain` go when the last closes', () => {
    const pool = new PartBufferPool(PART, 2);
    pool.open();
    pool.open();
    const taken = Array.from({ length: 5 }, () => pool.take());
    for (const b of taken) pool.give(b);
    assert.equal(pool.idle, 4, 'two uploads open: 2 x 2 kept, the fifth dropped');
    pool.close();
    assert.equal(pool.idle, 4, 'one upload still open: the peak share stays for the next upload that opens');
    pool.close();
    assert.equal(pool.idle, 2, 'idle: back to `retain`');
    pool.give(Buffer.allocUnsafeSlow(PART));
    assert.equal(pool.idle, 2);
    pool.give(Buffer.allocUnsafeSlow(PART - 1));
    assert.equal(pool.idle, 2, 'a buffer of another size is never kept');
  });
});

describe('readChunks with a lender', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'sediment-s3-upload-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('reads each block into a lent buffer, hands its pieces over, and gives back a buffer it read nothing into', async () => {
    const file = path.join(dir, 'two-blocks');
    const bytes = data(2 * PART, 7);
    await writeFile(file, bytes);
    const given: Buffer[] = [];
    let takes = 0;
    const lender = {
      bufferSize: PART,
      take: (): Buffer => {
        takes++;
        return Buffer.allocUnsafeSlow(PART);
      },
      give: (b: Buffer): void => void given.push(b),
    };
    const pieces: Buffer[] = [];
    for await (const p of readChunks(file, CHUNK, 'test', undefined, PART, lender)) {
      assert.ok(handedOverPieces.has(p));
      pieces.push(p);
    }
    assert.equal(pieces.length, 10);
    assert.deepEqual(Buffer.concat(pieces), bytes);
    assert.equal(pieces[0]?.buffer, pieces[4]?.buffer, 'a block: views of one buffer');
    assert.notEqual(pieces[4]?.buffer, pieces[5]?.buffer, 'the next block: another buffer');
    assert.equal(takes, 3, 'two blocks, and the read that found the end');
    assert.equal(given.length, 1, 'the buffer of the empty read goes back');
  });
});

describe('S3ObjectStore.put of a streamed body', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'sediment-s3-upload-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('uploads parts read into its own buffers in place, and copies pieces of other buffers', async () => {
    const size = 3 * PART + 123_456;
    const bytes = data(size, 11);
    const file = path.join(dir, 'segment');
    await writeFile(file, bytes);
    const client = new UploadClient();
    const store = storeOn(client);
    const read = new Set<ArrayBufferLike>(); // the buffers the reads filled
    const spy = {
      bufferSize: store.pieceBuffers.bufferSize,
      take: (): Buffer => {
        const b = store.pieceBuffers.take();
        read.add(b.buffer);
        return b;
      },
      give: (b: Buffer): void => store.pieceBuffers.give(b),
    };
    await store.put('lent', withCrcs(readChunks(file, CHUNK, 'segment', undefined, PART, spy)), undefined, size);
    await store.put('copied', withCrcs(readChunks(file, CHUNK, 'segment', undefined, PART)), undefined, size);
    for (const key of ['lent', 'copied']) {
      assert.deepEqual(client.object(key), bytes, key);
      for (const p of client.parts.filter((x) => x.key === key)) assert.equal(p.checksum, crc32cBase64(crc32c(p.bytes)), `${key} part ${p.partNumber}`);
    }
    assert.deepEqual(client.completed, ['lent', 'copied']);
    const lent = client.parts.filter((p) => p.key === 'lent');
    const copied = client.parts.filter((p) => p.key === 'copied');
    assert.equal(lent.length, 4);
    // In place: each part's body is the very buffer a read filled.
    for (const p of lent) assert.ok(read.has(p.body.buffer) && p.body.byteOffset === 0, `part ${p.partNumber} in place`);
    assert.equal(copied.length, 4);
  });

  it('copies a handed-over piece that does not start a part, and still sends the right bytes', async () => {
    const client = new UploadClient();
    const store = storeOn(client);
    const bytes = data(3 * PART, 5);
    async function* misaligned(): AsyncGenerator<Buffer> {
      yield bytes.subarray(0, 1000); // not handed over: the part starts with a copy
      for (let at = 1000; at < bytes.length; at += PART) {
        const block = store.pieceBuffers.take();
        const n = Math.min(PART, bytes.length - at);
        bytes.copy(block, 0, at, at + n);
        const piece = block.subarray(0, n);
        handedOverPieces.add(piece);
        yield piece;
      }
    }
    await store.put('k', misaligned(), undefined, bytes.length);
    assert.deepEqual(client.object('k'), bytes);
    for (const p of client.parts) assert.equal(p.checksum, crc32cBase64(crc32c(p.bytes)));
  });

  it('a body below the threshold goes up as one PutObject with its CRC, from lent buffers too', async () => {
    const size = PART + 4096;
    const bytes = data(size, 3);
    const file = path.join(dir, 'small');
    await writeFile(file, bytes);
    const client = new UploadClient();
    const store = storeOn(client);
    await store.put('small', withCrcs(readChunks(file, CHUNK, 'segment', undefined, PART, store.pieceBuffers)), undefined, size);
    assert.equal(client.parts.length, 0);
    assert.equal(client.puts.length, 1);
    assert.deepEqual(client.puts[0]?.bytes, bytes);
    assert.equal(client.puts[0]?.checksum, crc32cBase64(crc32c(bytes)));
    assert.deepEqual(client.streamed, [true], 'the parts streamed as they are, not concatenated');
  });

  it('uploads running side by side reuse their buffers instead of allocating more', async () => {
    const client = new UploadClient();
    const store = storeOn(client);
    const parts = 8;
    const files = await Promise.all(
      [0, 1].map(async (i) => {
        const f = path.join(dir, `side-${i}`);
        await writeFile(f, data(parts * PART, 20 + i));
        return f;
      }),
    );
    await Promise.all(
      files.map((f, i) => store.put(`side-${i}`, withCrcs(readChunks(f, CHUNK, 'segment', undefined, PART, store.pieceBuffers)), undefined, parts * PART)),
    );
    for (const [i] of files.entries()) assert.deepEqual(client.object(`side-${i}`), data(parts * PART, 20 + i));
    // Per upload: 2 parts in flight, one waiting for a slot, one being read (uploadConcurrency + 2).
    const buffers = new Set(client.parts.map((p) => p.body.buffer)).size;
    assert.ok(buffers <= 2 * (2 + 2), `${buffers} part buffers for ${client.parts.length} parts`);
  });
});
