// Produce requests Kafka refuses, and connection rules, each pinned to Kafka's
// behaviour (found by the frame fuzzer, test/fuzz/), against an in-process broker:
//  - Produce v3+ carries exactly one record batch per partition (INVALID_RECORD);
//  - zstd needs Produce v7+ (UNSUPPORTED_COMPRESSION_TYPE);
//  - a compressed batch whose CRC is right but whose payload does not decompress
//    into its records is refused, never stored (consumers would stall on it);
//  - acks=0: no response, and on an error the broker closes the connection;
//  - requests pipelined before an unparseable one are all answered, in order,
//    before the connection is closed.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { decodeResponse, encodeRequest, encodeRequestMessage } from '../../broker/protocol/frame.js';
import { ApiKey, ZERO_UUID, apis } from '../../broker/protocol/messages/index.js';
import { BATCH_HEADER_SIZE, buildRecordBatch, rewriteBatchCrc, type CompressionType } from '../../broker/protocol/record-batch.js';
import { BrokerConnection } from '../../broker/cli/broker-connection.js';
import { exchange } from '../fuzz/raw-client.js';
import { startSedimentInProcess, type InProcessSediment } from '../support/sediment.js';

const topic = 'validation';
let broker: InProcessSediment;
let correlationId = 100;

before(async () => {
  broker = await startSedimentInProcess();
  const conn = await BrokerConnection.connect('127.0.0.1', broker.port);
  try {
    const { body } = await conn.send(apis.CreateTopics, () => ({
      topics: [{ name: topic, numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }],
      timeoutMs: 30_000,
      validateOnly: false,
    }));
    assert.equal(body.topics[0]?.errorCode, 0);
  } finally {
    conn.close();
  }
});

after(async () => {
  await broker?.close();
});

function batch(compression: CompressionType = 'none', n = 3, tag = 'r'): Buffer {
  return buildRecordBatch({ compression, records: Array.from({ length: n }, (_, k) => ({ key: `${tag}${k}`, value: `value-${k}`, timestamp: Date.now() })) });
}

function produceFrame(records: Buffer, opts: { version?: number; acks?: number } = {}): { frame: Buffer; id: number; version: number } {
  const id = ++correlationId;
  const version = opts.version ?? 9;
  const chunks = encodeRequestMessage(apis.Produce, version, id, 'validation-test', {
    transactionalId: null,
    acks: opts.acks ?? -1,
    timeoutMs: 10_000,
    topicData: [{ name: topic, topicId: ZERO_UUID, partitionData: [{ index: 0, records }] }],
  });
  return { frame: Buffer.concat(chunks), id, version };
}

function apiVersionsFrame(id: number): Buffer {
  return Buffer.concat(encodeRequest(ApiKey.ApiVersions, 0, id, 'validation-test', () => undefined));
}

async function produce(records: Buffer, version = 9): Promise<{ errorCode: number; baseOffset: bigint }> {
  const { frame, id } = produceFrame(records, { version });
  const o = await exchange(broker.port, [frame], { timeoutMs: 10_000 });
  assert.equal(o.kind, 'response');
  const payload = o.frames[0]!;
  assert.equal(payload.readInt32BE(0), id);
  const r = decodeResponse(payload, apis.Produce, version).body.responses[0]?.partitionResponses[0];
  assert.ok(r !== undefined);
  return { errorCode: r.errorCode, baseOffset: r.baseOffset };
}

async function logEnd(): Promise<bigint> {
  const conn = await BrokerConnection.connect('127.0.0.1', broker.port);
  try {
    const { body } = await conn.send(apis.ListOffsets, () => ({
      replicaId: -1,
      isolationLevel: 0,
      timeoutMs: 10_000,
      topics: [{ name: topic, partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1n, maxNumOffsets: 1 }] }],
    }));
    return body.topics[0]?.partitions[0]?.offset ?? -1n;
  } finally {
    conn.close();
  }
}

const INVALID_RECORD = 87;
const UNSUPPORTED_COMPRESSION_TYPE = 76;

describe('Produce validation (Kafka: ProduceRequest.validateRecords, LogValidator)', () => {
  test('two whole batches for one partition: INVALID_RECORD, nothing stored', async () => {
    const end = await logEnd();
    const r = await produce(Buffer.concat([batch('none', 2, 'a'), batch('gzip', 2, 'b')]));
    assert.equal(r.errorCode, INVALID_RECORD);
    assert.equal(await logEnd(), end);
  });

  test('one batch followed by bytes that do not form a whole batch: trimmed, accepted', async () => {
    const end = await logEnd();
    const r = await produce(Buffer.concat([batch('none', 3, 'c'), Buffer.from([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 7])]));
    assert.equal(r.errorCode, 0);
    assert.equal(await logEnd(), end + 3n);
  });

  test('zstd before Produce v7: UNSUPPORTED_COMPRESSION_TYPE; from v7: accepted', async () => {
    const end = await logEnd();
    for (const v of [3, 5, 6]) assert.equal((await produce(batch('zstd'), v)).errorCode, UNSUPPORTED_COMPRESSION_TYPE, `v${v}`);
    assert.equal(await logEnd(), end);
    assert.equal((await produce(batch('zstd'), 7)).errorCode, 0);
    assert.equal(await logEnd(), end + 3n);
  });

  for (const codec of ['gzip', 'snappy', 'lz4', 'zstd'] as const) {
    test(`${codec} batch with a correct CRC over a payload that does not decompress: refused, nothing stored`, async () => {
      const end = await logEnd();
      const b = batch(codec, 5);
      for (let i = BATCH_HEADER_SIZE; i < b.length; i++) b[i] = (i * 131) & 0xff;
      rewriteBatchCrc(b, 0, b.length);
      const r = await produce(b);
      assert.notEqual(r.errorCode, 0, 'refused');
      assert.equal(await logEnd(), end);
    });

    test(`${codec} batch with a correct CRC over a truncated compressed payload: refused, nothing stored`, async () => {
      const end = await logEnd();
      const whole = batch(codec, 20);
      const b = Buffer.from(whole.subarray(0, whole.length - Math.floor((whole.length - BATCH_HEADER_SIZE) / 2)));
      b.writeInt32BE(b.length - 12, 8);
      rewriteBatchCrc(b, 0, b.length);
      const r = await produce(b);
      assert.notEqual(r.errorCode, 0, 'refused');
      assert.equal(await logEnd(), end);
    });
  }
});

describe('acks=0 (Kafka: KafkaApis.handleProduceRequest)', () => {
  test('a valid acks=0 Produce gets no response; the connection carries on', async () => {
    const end = await logEnd();
    const { frame } = produceFrame(batch('none', 4, 'z'), { acks: 0 });
    const o = await exchange(broker.port, [frame, apiVersionsFrame(7)], { timeoutMs: 10_000 });
    assert.equal(o.kind, 'response');
    assert.deepEqual(o.frames.map((f) => f.readInt32BE(0)), [7], 'only the ApiVersions request is answered');
    assert.equal(await logEnd(), end + 4n);
  });

  test('an acks=0 Produce that fails closes the connection (the request behind it is not answered)', async () => {
    const bad = batch('none', 4);
    bad.writeUInt32BE((bad.readUInt32BE(17) ^ 1) >>> 0, 17);
    const { frame } = produceFrame(bad, { acks: 0 });
    const o = await exchange(broker.port, [frame, apiVersionsFrame(8)], { timeoutMs: 10_000, expectFrames: 0 });
    assert.equal(o.kind, 'closed');
    assert.equal(o.frames.length, 0);
  });
});

describe('connection rules', () => {
  test('requests pipelined before an unparseable one are all answered in order, then the connection closes', async () => {
    const metadata = (id: number): Buffer =>
      Buffer.concat(encodeRequestMessage(apis.Metadata, 12, id, 'validation-test', { topics: null, allowAutoTopicCreation: false, includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false }));
    const unknown = Buffer.from([0, 0, 0, 8, 0x03, 0xe7, 0, 0, 0, 0, 0, 24]);
    for (const split of [false, true]) {
      const frames = [metadata(21), apiVersionsFrame(22), metadata(23)];
      const chunks = split ? [Buffer.concat(frames), unknown] : [Buffer.concat([...frames, unknown])];
      const o = await exchange(broker.port, chunks, { timeoutMs: 10_000, expectFrames: 0, separateWrites: split });
      assert.equal(o.kind, 'closed');
      assert.deepEqual(o.frames.map((f) => f.readInt32BE(0)), [21, 22, 23], split ? 'bad frame in a later write' : 'one write');
    }
  });

  test('an oversized size prefix closes the connection before the body arrives', async () => {
    const prefix = Buffer.alloc(4);
    prefix.writeInt32BE(200 * 1024 * 1024);
    const o = await exchange(broker.port, [prefix], { timeoutMs: 10_000, expectFrames: 0 });
    assert.equal(o.kind, 'closed');
  });
});
