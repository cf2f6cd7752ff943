// Specific encodings where generated codecs are easy to get wrong: tagged
// fields (known, defaulted, unknown), nullable fields per version, header
// versions, zero-copy record payloads, version checks.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ErrorCode, KafkaError, ProtocolDecodeError, ProtocolEncodeError } from '../../../../broker/protocol/errors.js';
import {
  ZERO_UUID,
  apiRegistry,
  apis,
  decodeApiVersionsResponse,
  decodeFetchRequest,
  decodeHeartbeatRequest,
  decodeProduceRequest,
  encodeApiVersionsResponse,
  encodeFetchRequest,
  encodeHeartbeatRequest,
  encodeMetadataRequest,
  encodeProduceRequest,
  requestHeaderVersion,
  responseHeaderVersion,
  type ApiVersionsResponse,
  type FetchRequest,
  type ProduceRequest,
} from '../../../../broker/protocol/messages/index.js';
import {
  decodeMetadataRecord,
  decodeOffsetCommitKey,
  decodeRemoteLogSegmentMetadataRecord,
  decodeVersioned,
  encodeMetadataRecord,
  encodeOffsetCommitKey,
  encodeRemoteLogSegmentMetadataRecord,
  encodeVersioned,
  OffsetCommitKeyMeta,
  RemoteLogSegmentMetadataRecordMeta,
  type RemoteLogSegmentMetadataRecord,
} from '../../../../broker/protocol/messages/records/index.js';
import { Reader } from '../../../../broker/protocol/reader.js';
import { Writer } from '../../../../broker/protocol/writer.js';

function enc<T>(fn: (w: Writer, v: number, m: T) => void, version: number, m: T): Buffer {
  const w = new Writer();
  fn(w, version, m);
  return w.toBuffer();
}

const apiVersionsResponse: ApiVersionsResponse = {
  errorCode: 0,
  apiKeys: [{ apiKey: 18, minVersion: 0, maxVersion: 4 }],
  throttleTimeMs: 0,
};

test('ApiVersions v3 response: compact arrays, tagged section with defaults left out', () => {
  const b = enc(encodeApiVersionsResponse, 3, apiVersionsResponse);
  // errorCode, compact array (1 element + 1), apiKey/min/max, element tags, throttle, tags
  assert.equal(b.toString('hex'), '0000' + '02' + '0012' + '0000' + '0004' + '00' + '00000000' + '00');
  const d = decodeApiVersionsResponse(new Reader(b), 3);
  assert.equal(d.finalizedFeaturesEpoch, -1n, 'absent tagged field decodes to its default');
  assert.deepEqual(d.supportedFeatures, []);
  assert.equal(d.zkMigrationReady, false);
});

test('ApiVersions v0 response: classic encoding, no throttle, no tags', () => {
  const b = enc(encodeApiVersionsResponse, 0, apiVersionsResponse);
  assert.equal(b.toString('hex'), '0000' + '00000001' + '0012' + '0000' + '0004');
});

test('known tagged fields are written in tag order with their sizes', () => {
  const b = enc(encodeApiVersionsResponse, 3, {
    ...apiVersionsResponse,
    finalizedFeaturesEpoch: 5n,
    zkMigrationReady: true,
  });
  const tail = b.subarray(b.length - 14);
  // 2 fields; tag 1 size 8 int64 5; tag 3 size 1 true
  assert.equal(tail.toString('hex'), '02' + '01' + '08' + '0000000000000005' + '03' + '01' + '01');
  const d = decodeApiVersionsResponse(new Reader(b), 3);
  assert.equal(d.finalizedFeaturesEpoch, 5n);
  assert.equal(d.zkMigrationReady, true);
});

test('unknown tagged fields are preserved and re-encoded byte-identically, merged in tag order', () => {
  // HeartbeatRequest v4: groupId, generationId, memberId, groupInstanceId, tags
  const w = new Writer();
  w.writeCompactString('g');
  w.writeInt32(7);
  w.writeCompactString('m');
  w.writeCompactNullableString(null);
  w.writeUVarint(2);
  w.writeUVarint(5);
  w.writeUVarint(2);
  w.writeRaw(Buffer.from('abcd', 'hex'));
  w.writeUVarint(90);
  w.writeUVarint(0);
  const wire = w.toBuffer();
  const m = decodeHeartbeatRequest(new Reader(wire), 4);
  assert.deepEqual(
    m._unknownTaggedFields?.map((f) => [f.tag, f.data.toString('hex')]),
    [[5, 'abcd'], [90, '']],
  );
  assert.ok(enc(encodeHeartbeatRequest, 4, m).equals(wire));

  // A known tag (FetchRequest ClusterId = tag 0) goes between unknown tags 0 < x
  const fetch: FetchRequest = {
    ...decodeFetchRequest(new Reader(enc(encodeFetchRequest, 12, minimalFetch())), 12),
    clusterId: 'c',
    _unknownTaggedFields: [{ tag: 3, data: Buffer.from([1]) }],
  };
  const fb = enc(encodeFetchRequest, 12, fetch);
  const back = decodeFetchRequest(new Reader(fb), 12);
  assert.equal(back.clusterId, 'c');
  assert.deepEqual(back._unknownTaggedFields, [{ tag: 3, data: Buffer.from([1]) }]);
  assert.ok(enc(encodeFetchRequest, 12, back).equals(fb));
});

function minimalFetch(): FetchRequest {
  return {
    replicaId: -1,
    maxWaitMs: 500,
    minBytes: 1,
    maxBytes: 1 << 20,
    isolationLevel: 1,
    sessionId: 0,
    sessionEpoch: -1,
    topics: [],
    forgottenTopicsData: [],
    rackId: '',
  } as FetchRequest;
}

test('a known tag outside its versions is rejected like Kafka does', () => {
  // FetchRequest v12 with tag 1 (ReplicaState, valid from v15)
  const base = enc(encodeFetchRequest, 12, minimalFetch());
  const wire = Buffer.concat([base.subarray(0, base.length - 1), Buffer.from('01010100', 'hex')]);
  assert.throws(() => decodeFetchRequest(new Reader(wire), 12), /Tag 1 is not valid for version 12/);
  // From v15 the same tag is ReplicaState, a tagged struct compared against its default.
  const v15 = { ...minimalFetch(), replicaState: { replicaId: 3, replicaEpoch: 9n } };
  const b15 = enc(encodeFetchRequest, 15, v15);
  assert.deepEqual(decodeFetchRequest(new Reader(b15), 15).replicaState, { replicaId: 3, replicaEpoch: 9n });
  const dflt = enc(encodeFetchRequest, 15, { ...minimalFetch(), replicaState: { replicaId: -1, replicaEpoch: -1n } });
  assert.equal(dflt[dflt.length - 1], 0, 'a struct equal to its default is not written');
});

test('nullable per version: null where the version allows, error where it does not', () => {
  const m = { topics: null, allowAutoTopicCreation: true, includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false };
  assert.equal(enc(encodeMetadataRequest, 1, m).toString('hex'), 'ffffffff');
  assert.equal(enc(encodeMetadataRequest, 9, m).toString('hex'), '00' + '01' + '00' + '00' + '00');
  assert.throws(() => enc(encodeMetadataRequest, 0, m), ProtocolEncodeError);
});

test('fields absent in a version are omitted on encode and defaulted on decode', () => {
  const m: ProduceRequest = { transactionalId: 'tx', acks: -1, timeoutMs: 30000, topicData: [] };
  const v2 = enc(encodeProduceRequest, 2, m);
  assert.equal(v2.toString('hex'), 'ffff' + '00007530' + '00000000');
  assert.equal(decodeProduceRequest(new Reader(v2), 2).transactionalId, null);
  const v3 = enc(encodeProduceRequest, 3, m);
  assert.equal(decodeProduceRequest(new Reader(v3), 3).transactionalId, 'tx');
});

test('produce records are views on decode and references on encode (no copies)', () => {
  const records = Buffer.alloc(10000, 0x5a);
  const m: ProduceRequest = {
    transactionalId: null,
    acks: 1,
    timeoutMs: 1000,
    topicData: [{ name: 't', topicId: ZERO_UUID, partitionData: [{ index: 0, records }] }],
  };
  for (const version of [3, 9]) {
    const w = new Writer();
    encodeProduceRequest(w, version, m);
    assert.ok(w.toChunks().includes(records), `v${version} encode appends the records Buffer itself`);
    const frame = w.toBuffer();
    const d = decodeProduceRequest(new Reader(frame), version);
    const got = d.topicData[0]?.partitionData[0]?.records;
    assert.ok(got instanceof Buffer, `v${version} decoded records are a Buffer`);
    assert.equal(got.buffer, frame.buffer, `v${version} decoded records share the frame memory`);
    assert.ok(got.equals(records));
  }
});

test('versions outside the valid range are UNSUPPORTED_VERSION', () => {
  const w = new Writer();
  assert.throws(
    () => encodeProduceRequest(w, 14, { transactionalId: null, acks: 1, timeoutMs: 1, topicData: [] }),
    (e: unknown) => e instanceof KafkaError && e.code === ErrorCode.UNSUPPORTED_VERSION,
  );
  assert.throws(
    () => decodeProduceRequest(new Reader(Buffer.alloc(64)), -1),
    (e: unknown) => e instanceof KafkaError && e.code === ErrorCode.UNSUPPORTED_VERSION,
  );
});

test('header versions follow Kafka rules', () => {
  assert.equal(requestHeaderVersion(0, 8), 1);
  assert.equal(requestHeaderVersion(0, 9), 2);
  assert.equal(requestHeaderVersion(18, 3), 2);
  assert.equal(requestHeaderVersion(18, 7), 2, 'open-ended flexible range covers future versions');
  // ControlledShutdown (7, whose v0 had header v0) was removed in Kafka 4.0: an unknown key now.
  assert.equal(requestHeaderVersion(7, 0), 1);
  assert.equal(requestHeaderVersion(9999, 0), 1);
  assert.equal(responseHeaderVersion(18, 3), 0);
  assert.equal(responseHeaderVersion(18, 4), 0);
  assert.equal(responseHeaderVersion(3, 9), 1);
  assert.equal(responseHeaderVersion(3, 8), 0);
});

test('registry holds every API with its codecs and ranges', () => {
  assert.equal(apiRegistry.size, 89);
  for (const removed of [4, 5, 6, 7]) assert.equal(apiRegistry.get(removed), undefined, `api key ${removed} was removed in Kafka 4.0`);
  const produce = apiRegistry.get(0);
  assert.equal(produce?.name, 'Produce');
  // 3-13 in Kafka 4.3's definition; 0-2 kept (see generate.mjs) to answer them UNSUPPORTED_VERSION.
  assert.deepEqual(produce?.validVersions, { min: 0, max: 13 });
  assert.deepEqual(apiRegistry.get(1)?.validVersions, { min: 4, max: 18 });
  assert.deepEqual(produce?.flexibleVersions, { min: 9, max: null });
  assert.equal(apis.ApiVersions.apiKey, 18);
  assert.equal(apiRegistry.get(17)?.flexibleVersions, null, 'SaslHandshake is never flexible');
  for (const [key, d] of apiRegistry) assert.equal(d.apiKey, key);
});

test('remote log metadata record: frame envelope and uuids', () => {
  const rec: RemoteLogSegmentMetadataRecord = {
    remoteLogSegmentId: {
      topicIdPartition: { name: 'orders', id: 'AAECAwQFBgcICQoLDA0ODw', partition: 3 },
      id: ZERO_UUID,
    },
    startOffset: 0n,
    endOffset: 99n,
    brokerId: 1,
    maxTimestampMs: 1700000000000n,
    eventTimestampMs: 1700000000001n,
    segmentLeaderEpochs: [{ leaderEpoch: 0, offset: 0n }],
    segmentSizeInBytes: 4096,
    customMetadata: null,
    remoteLogSegmentState: 0,
    txnIndexEmpty: false,
  };
  const buf = encodeMetadataRecord(RemoteLogSegmentMetadataRecordMeta.apiKey, 0, (w) =>
    encodeRemoteLogSegmentMetadataRecord(w, 0, rec),
  );
  assert.equal(buf.subarray(0, 3).toString('hex'), '010000', 'frame version 1, apiKey 0, version 0');
  const f = decodeMetadataRecord(buf);
  assert.equal(f.apiKey, 0);
  assert.deepEqual(decodeRemoteLogSegmentMetadataRecord(f.body, f.version), rec);
  assert.equal(f.body.remaining, 0);
});

test('coordinator records carry an int16 prefix: the record type for keys, then the key body (v0)', () => {
  const key = { group: 'g', topic: 't', partition: 2 };
  assert.equal(OffsetCommitKeyMeta.apiKey, 1);
  const buf = encodeVersioned(OffsetCommitKeyMeta.apiKey, (w) => encodeOffsetCommitKey(w, 0, key));
  assert.equal(buf.toString('hex'), '0001' + '000167' + '000174' + '00000002');
  const v = decodeVersioned(buf);
  assert.equal(v.version, 1);
  assert.deepEqual(decodeOffsetCommitKey(v.body, 0), key);
});
