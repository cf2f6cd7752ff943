// Framing: request headers of any API/version, size-prefixed responses and requests.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ErrorCode, KafkaError, ProtocolDecodeError } from '../../../broker/protocol/errors.js';
import {
  decodeRequestBody,
  decodeRequestHeader,
  decodeResponse,
  decodeResponseHeader,
  encodeRequest,
  encodeRequestMessage,
  encodeResponse,
  encodeResponseMessage,
  payloadOf,
} from '../../../broker/protocol/frame.js';
import { apis, type MetadataRequest } from '../../../broker/protocol/messages/index.js';

test('request header v1 (non-flexible API version)', () => {
  const frame = encodeRequest(3, 1, 42, 'cli', (w) => w.writeInt32(-1));
  const payload = payloadOf(frame);
  assert.equal(payload.toString('hex'), '0003' + '0001' + '0000002a' + '0003636c69' + 'ffffffff');
  const h = decodeRequestHeader(payload);
  assert.deepEqual(h, {
    apiKey: 3, apiVersion: 1, correlationId: 42, clientId: 'cli', taggedFields: [], headerVersion: 1, headerSize: 13,
  });
  assert.deepEqual(decodeRequestBody(h, payload), {
    body: { topics: null, allowAutoTopicCreation: true, includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false },
    trailingBytes: 0,
  });
});

test('request header v2: classic client id, then tagged fields', () => {
  const payload = payloadOf(
    encodeRequest(18, 3, 7, null, (w) => {
      w.writeCompactString('x');
      w.writeCompactString('1');
      w.writeUVarint(0);
    }, { headerTaggedFields: [{ tag: 9, data: Buffer.from([1, 2]) }] }),
  );
  assert.equal(payload.subarray(0, 15).toString('hex'), '0012' + '0003' + '00000007' + 'ffff' + '01' + '09' + '02' + '0102');
  const h = decodeRequestHeader(payload);
  assert.equal(h.headerVersion, 2);
  assert.equal(h.clientId, null);
  assert.deepEqual(h.taggedFields, [{ tag: 9, data: Buffer.from([1, 2]) }]);
  assert.deepEqual(decodeRequestBody(h, payload).body, { clientSoftwareName: 'x', clientSoftwareVersion: '1' });
});

test('headers of unknown APIs and future versions are readable', () => {
  const unknown = payloadOf(encodeRequest(999, 4, 5, 'c', () => {}));
  const h = decodeRequestHeader(unknown);
  assert.deepEqual([h.apiKey, h.apiVersion, h.correlationId, h.clientId, h.headerVersion], [999, 4, 5, 'c', 1]);
  assert.throws(() => decodeRequestBody(h, unknown), (e: unknown) => e instanceof KafkaError && e.code === ErrorCode.UNSUPPORTED_VERSION);
  // ApiVersions v9 (newer than we know): flexible header, body version unsupported
  const future = payloadOf(encodeRequest(18, 9, 6, 'c', (w) => w.writeUVarint(0)));
  const fh = decodeRequestHeader(future);
  assert.equal(fh.headerVersion, 2);
  assert.equal(fh.correlationId, 6);
  assert.throws(() => decodeRequestBody(fh, future), (e: unknown) => e instanceof KafkaError && e.code === ErrorCode.UNSUPPORTED_VERSION);
  // ControlledShutdown (7) was removed in Kafka 4.0: its v0 no longer gets header v0 (no client id).
  const cs = decodeRequestHeader(payloadOf(encodeRequest(7, 0, 1, 'cs', (w) => w.writeInt32(3))));
  assert.deepEqual([cs.headerVersion, cs.clientId, cs.headerSize], [1, 'cs', 12]);
});

test('bytes after a whole request body are counted and ignored, as Kafka does', () => {
  const payload = payloadOf(encodeRequest(12, 0, 1, 'c', (w) => {
    w.writeString('g');
    w.writeInt32(1);
    w.writeString('m');
    w.writeInt8(0);
  }));
  assert.deepEqual(decodeRequestBody(decodeRequestHeader(payload), payload), {
    body: { groupId: 'g', generationId: 1, memberId: 'm', groupInstanceId: null },
    trailingBytes: 1,
  });
});

test('librdkafka 2.16 all-topics Metadata v12, as captured, decodes with its 3 trailing bytes', () => {
  // AdminClient.list_topics() of confluent-kafka 2.16.1 (librdkafka 2.16.0), client.id "rdk":
  // header v2, then topics null, allowAutoTopicCreation false, includeTopicAuthorizedOperations
  // false, no tags, then 01 00 00 that no Metadata version describes.
  const payload = Buffer.from('0003000c00000003000372646b0000000000010000', 'hex');
  const h = decodeRequestHeader(payload);
  assert.deepEqual([h.apiKey, h.apiVersion, h.correlationId, h.clientId], [3, 12, 3, 'rdk']);
  assert.deepEqual(decodeRequestBody(h, payload), {
    body: { topics: null, allowAutoTopicCreation: false, includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false },
    trailingBytes: 3,
  });
});

test('a body cut short is still a decode error', () => {
  const payload = payloadOf(encodeRequest(12, 0, 1, 'c', (w) => {
    w.writeString('g');
    w.writeInt32(1);
    w.writeInt16(5); // memberId of 5 bytes, 1 sent
    w.writeInt8(0x6d);
  }));
  assert.throws(() => decodeRequestBody(decodeRequestHeader(payload), payload), ProtocolDecodeError);
  const cut = payloadOf(encodeRequest(3, 12, 4, 'c', (w) => w.writeUVarint(0)));
  assert.throws(() => decodeRequestBody(decodeRequestHeader(cut), cut), ProtocolDecodeError);
});

test('responses are size-prefixed chunks; ApiVersions keeps header v0 when flexible', () => {
  const body = { errorCode: 0, apiKeys: [{ apiKey: 0, minVersion: 0, maxVersion: 11 }], throttleTimeMs: 0 };
  const chunks = encodeResponseMessage(apis.ApiVersions, 3, 77, body);
  const payload = payloadOf(chunks);
  assert.equal(payload.readInt32BE(0), 77);
  assert.equal(payload[4], 0, 'errorCode high byte right after the correlation id: no header tags');
  assert.deepEqual(decodeResponse(payload, apis.ApiVersions, 3).body, {
    ...body, supportedFeatures: [], finalizedFeaturesEpoch: -1n, finalizedFeatures: [], zkMigrationReady: false,
  });

  const md = payloadOf(encodeResponse(3, 9, 5, (w) => {
    apis.Metadata.encodeResponse(w, 9, { errorCode: 0, throttleTimeMs: 0, brokers: [], clusterId: 'c', controllerId: 1, topics: [], clusterAuthorizedOperations: -2147483648 });
  }));
  const mh = decodeResponseHeader(md, 3, 9);
  assert.deepEqual([mh.correlationId, mh.headerVersion, mh.headerSize], [5, 1, 5]);
  assert.equal(decodeResponse(md, apis.Metadata, 9).body.clusterId, 'c');
  assert.ok(decodeResponse(md, 3, 9).body, 'by api key, untyped');
});

test('a large record payload travels by reference through a response frame', () => {
  const records = Buffer.alloc(1 << 20, 1);
  const chunks = encodeResponse(1, 12, 3, (w) =>
    apis.Fetch.encodeResponse(w, 12, {
      throttleTimeMs: 0, errorCode: 0, sessionId: 0,
      responses: [{ topic: 't', topicId: 'AAAAAAAAAAAAAAAAAAAAAA', partitions: [{
        partitionIndex: 0, errorCode: 0, highWatermark: 10n, lastStableOffset: 10n, logStartOffset: 0n,
        abortedTransactions: null, preferredReadReplica: -1, records,
      }] }],
    }),
  );
  assert.ok(chunks.includes(records));
  const total = chunks.reduce((n, c) => n + c.length, 0);
  assert.equal(chunks[0]?.readInt32BE(0), total - 4);
  const got = decodeResponse(payloadOf(chunks), apis.Fetch, 12).body.responses[0]?.partitions[0]?.records;
  assert.ok(got instanceof Buffer, 'decoded records are a Buffer');
  assert.ok(got.equals(records));
});

test('client-side request encoding with the typed descriptors', () => {
  const req: MetadataRequest = { topics: [{ topicId: 'AAAAAAAAAAAAAAAAAAAAAA', name: 't' }], allowAutoTopicCreation: false, includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: true };
  const payload = payloadOf(encodeRequestMessage(apis.Metadata, 12, 9, 'me', req));
  const h = decodeRequestHeader(payload);
  assert.equal(h.headerVersion, 2);
  assert.deepEqual(decodeRequestBody(h, payload), { body: req, trailingBytes: 0 });
});
