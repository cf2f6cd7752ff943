// The server's wire rules, over real sockets against an in-process broker:
// ApiVersions lists every handler; an unsupported ApiVersions version gets
// UNSUPPORTED_VERSION in a v0 body; unknown APIs, unsupported versions and
// oversized frames close only their connection; bytes after a whole body are
// ignored; pipelined requests are
// answered in order; acks=0 gets no response.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { startSedimentInProcess, type InProcessSediment } from '../../support/sediment.js';
import { encodeRequest, encodeRequestMessage, decodeResponse } from '../../../broker/protocol/frame.js';
import { ZERO_UUID, apis } from '../../../broker/protocol/messages/index.js';
import { Writer } from '../../../broker/protocol/writer.js';
import { buildRecordBatch } from '../../../broker/protocol/record-batch.js';
import { allHandlers } from '../../../broker/handlers/index.js';

let broker: InProcessSediment;

before(async () => {
  broker = await startSedimentInProcess({ overrides: { 'socket.request.max.bytes': '100000', 'remote.log.storage.system.enable': 'false' } });
});
after(async () => {
  await broker.close();
});

/** A raw client: sends frames, reads size-prefixed responses, notices the close. */
class RawClient {
  private buf = Buffer.alloc(0);
  private waiters: Array<() => void> = [];
  closed = false;
  private constructor(readonly socket: net.Socket) {
    socket.on('data', (d: Buffer) => {
      this.buf = Buffer.concat([this.buf, d]);
      this.wake();
    });
    socket.on('close', () => {
      this.closed = true;
      this.wake();
    });
  }
  static connect(port: number): Promise<RawClient> {
    return new Promise((resolve, reject) => {
      const s = net.connect(port, '127.0.0.1', () => resolve(new RawClient(s)));
      s.once('error', reject);
    });
  }
  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }
  send(chunks: Buffer[]): void {
    this.socket.write(Buffer.concat(chunks));
  }
  async frame(): Promise<Buffer | null> {
    for (;;) {
      if (this.buf.length >= 4) {
        const n = this.buf.readInt32BE(0);
        if (this.buf.length >= 4 + n) {
          const f = this.buf.subarray(4, 4 + n);
          this.buf = this.buf.subarray(4 + n);
          return f;
        }
      }
      if (this.closed) return null;
      await new Promise<void>((r) => this.waiters.push(r));
    }
  }
  async waitClosed(): Promise<void> {
    while (!this.closed) await new Promise<void>((r) => this.waiters.push(r));
  }
  close(): void {
    this.socket.destroy();
  }
}

const apiVersionsV3 = (corr: number) =>
  encodeRequestMessage(apis.ApiVersions, 3, corr, 'test', { clientSoftwareName: 'raw', clientSoftwareVersion: '1' });

test('ApiVersions lists exactly the registered handlers', async () => {
  const c = await RawClient.connect(broker.port);
  c.send(apiVersionsV3(1));
  const { header, body } = decodeResponse(await c.frame() as Buffer, apis.ApiVersions, 3);
  assert.equal(header.correlationId, 1);
  assert.equal(body.errorCode, 0);
  assert.deepEqual(
    body.apiKeys.map((k) => [k.apiKey, k.minVersion, k.maxVersion]),
    allHandlers.map((h) => [h.apiKey, h.minVersion, h.maxVersion]).sort((a, b) => a[0]! - b[0]!),
  );
  c.close();
});

test('an unsupported ApiVersions version is answered with error 35 in a v0 body', async () => {
  const c = await RawClient.connect(broker.port);
  c.send(encodeRequest(18, 99, 7, 'test', () => undefined));
  const { header, body } = decodeResponse(await c.frame() as Buffer, apis.ApiVersions, 0);
  assert.equal(header.correlationId, 7);
  assert.equal(body.errorCode, 35);
  assert.deepEqual(body.apiKeys.map((k) => k.apiKey), [18]);
  assert.equal(c.closed, false);
  c.close();
});

test('unknown api keys, unsupported versions and oversized frames close only their own connection', async () => {
  const good = await RawClient.connect(broker.port);
  const cases: Buffer[][] = [
    encodeRequest(9999, 0, 1, 'test', () => undefined),
    encodeRequest(1, 0, 1, 'test', () => undefined), // Fetch v0 is below the advertised range
    [Buffer.from([0x00, 0x01, 0x86, 0xa1])], // declares 100001 bytes > socket.request.max.bytes
    encodeRequest(3, 12, 1, 'test', (w: Writer) => w.writeRaw(Buffer.from([0xff, 0xff, 0xff]))), // garbage body
  ];
  for (const frame of cases) {
    const bad = await RawClient.connect(broker.port);
    bad.send(frame);
    await bad.waitClosed();
    good.send(apiVersionsV3(2));
    const { body } = decodeResponse(await good.frame() as Buffer, apis.ApiVersions, 3);
    assert.equal(body.errorCode, 0, 'the well-behaved connection keeps being served');
  }
  good.close();
});

test('bytes after a whole request body are ignored: answered, connection kept (librdkafka 2.1x Metadata v12)', async () => {
  const c = await RawClient.connect(broker.port);
  const all = { topics: null, allowAutoTopicCreation: true, includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false };
  const padded = Buffer.concat([...encodeRequestMessage(apis.Metadata, 12, 5, 'rdkafka', all), Buffer.from([1, 0, 0])]);
  padded.writeInt32BE(padded.length - 4, 0);
  c.send([padded]);
  const { header, body } = decodeResponse(await c.frame() as Buffer, apis.Metadata, 12);
  assert.equal(header.correlationId, 5);
  assert.equal(body.brokers.length, 1);
  c.send(apiVersionsV3(6));
  assert.equal(decodeResponse(await c.frame() as Buffer, apis.ApiVersions, 3).header.correlationId, 6);
  assert.equal(c.closed, false);
  c.close();
});

test('pipelined requests are answered in order, and acks=0 produce gets no response', async () => {
  const c = await RawClient.connect(broker.port);
  c.send(encodeRequestMessage(apis.Metadata, 12, 1, 'test', { topics: [{ topicId: 'AAAAAAAAAAAAAAAAAAAAAA', name: 'pipelined' }], allowAutoTopicCreation: true, includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false }));
  const meta = decodeResponse(await c.frame() as Buffer, apis.Metadata, 12);
  assert.equal(meta.body.topics[0]?.errorCode, 0);
  const batch = buildRecordBatch({ records: [{ key: 'k', value: 'v' }] });
  const produce = (corr: number, acks: number) =>
    encodeRequestMessage(apis.Produce, 9, corr, 'test', { transactionalId: null, acks, timeoutMs: 1000, topicData: [{ name: 'pipelined', topicId: ZERO_UUID, partitionData: [{ index: 0, records: Buffer.from(batch) }] }] });
  c.send([...produce(10, 0), ...produce(11, 1), ...apiVersionsV3(12), ...produce(13, 1)]);
  const order: number[] = [];
  for (let i = 0; i < 3; i++) {
    const f = await c.frame() as Buffer;
    order.push(f.readInt32BE(0));
  }
  assert.deepEqual(order, [11, 12, 13]);
  c.close();
});
