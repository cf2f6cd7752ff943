import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ErrorCode, KafkaError } from '../../../broker/protocol/errors.js';
import { deserializeRemoteLogMetadata, serializeRemoteLogMetadata } from '../../../metadata/remote-log-metadata/serde.js';
import type { RemoteLogMetadataEvent, TopicIdPartition } from '../../../metadata/remote-log-metadata/types.js';

// Topic id = bytes 00..0f, segment id = bytes 10..1f.
const TOPIC_ID = Buffer.from([...Array(16).keys()]).toString('base64url');
const SEGMENT_ID = Buffer.from([...Array(16).keys()].map((i) => 0x10 + i)).toString('base64url');
const TP: TopicIdPartition = { topicId: TOPIC_ID, topic: 'foo', partition: 1 };

function hex(s: string): Buffer {
  return Buffer.from(s.replace(/\s+|\|/g, ''), 'hex');
}

// The bytes Kafka's RemoteLogMetadataSerde produces, laid out by hand from
// AbstractApiMessageSerde (frame version, apiKey, version as unsigned varints) and
// the flexible-version message layout (compact lengths are n + 1, each struct ends
// with its tagged-field section).
const TP_ENTRY =
  '04 666f6f' + //                      Name: compact string "foo"
  '000102030405060708090a0b0c0d0e0f' + // Id: uuid
  '00000001' + //                        Partition: int32 1
  '00'; //                               tagged fields: none
const SEGMENT_ID_ENTRY =
  TP_ENTRY +
  '101112131415161718191a1b1c1d1e1f' + // Id: uuid
  '00'; //                               tagged fields: none

const SEGMENT_VECTOR = hex(
  '01 00 00' + //                        frame version 1, apiKey 0 (RemoteLogSegmentMetadataRecord), version 0
    SEGMENT_ID_ENTRY +
    '0000000000000064' + //              StartOffset 100
    '00000000000000c7' + //              EndOffset 199
    '00000003' + //                      BrokerId 3
    '0000018bcfe56800' + //              MaxTimestampMs 1700000000000
    '0000018bcfe569f4' + //              EventTimestampMs 1700000000500
    '03' + //                            SegmentLeaderEpochs: compact array of 2
    '00000005 0000000000000064 00' + //  epoch 5 from offset 100, no tags
    '00000006 0000000000000096 00' + //  epoch 6 from offset 150, no tags
    '00001000' + //                      SegmentSizeInBytes 4096
    '00' + //                            CustomMetadata: null
    '00' + //                            RemoteLogSegmentState 0 (COPY_SEGMENT_STARTED)
    '01 00 01 01', //                    tagged fields: 1 field, tag 0 (TxnIndexEmpty), size 1, true
);

const SEGMENT_EVENT: RemoteLogMetadataEvent = {
  type: 'segment',
  metadata: {
    remoteLogSegmentId: { topicIdPartition: TP, id: SEGMENT_ID },
    startOffset: 100n,
    endOffset: 199n,
    brokerId: 3,
    maxTimestampMs: 1_700_000_000_000,
    eventTimestampMs: 1_700_000_000_500,
    segmentLeaderEpochs: [
      { leaderEpoch: 5, startOffset: 100n },
      { leaderEpoch: 6, startOffset: 150n },
    ],
    segmentSizeInBytes: 4096,
    state: 'COPY_SEGMENT_STARTED',
    txnIndexEmpty: true,
  },
};

const UPDATE_VECTOR = hex(
  '01 01 00' + //                        frame version 1, apiKey 1 (RemoteLogSegmentMetadataUpdateRecord), version 0
    SEGMENT_ID_ENTRY +
    '00000003' + //                      BrokerId 3
    '0000018bcfe56bE8' + //              EventTimestampMs 1700000001000
    '03 6162' + //                       CustomMetadata: compact bytes "ab"
    '01' + //                            RemoteLogSegmentState 1 (COPY_SEGMENT_FINISHED)
    '00',
);

const UPDATE_EVENT: RemoteLogMetadataEvent = {
  type: 'segmentUpdate',
  update: {
    remoteLogSegmentId: { topicIdPartition: TP, id: SEGMENT_ID },
    brokerId: 3,
    eventTimestampMs: 1_700_000_001_000,
    customMetadata: Buffer.from('ab'),
    state: 'COPY_SEGMENT_FINISHED',
  },
};

const DELETE_VECTOR = hex(
  '01 02 00' + //                        frame version 1, apiKey 2 (RemotePartitionDeleteMetadataRecord), version 0
    TP_ENTRY +
    '00000003' + //                      BrokerId 3
    '0000018bcfe56bE8' + //              EventTimestampMs 1700000001000
    '02' + //                            RemotePartitionDeleteState 2 (DELETE_PARTITION_FINISHED)
    '00',
);

const DELETE_EVENT: RemoteLogMetadataEvent = {
  type: 'partitionDelete',
  delete: { topicIdPartition: TP, brokerId: 3, eventTimestampMs: 1_700_000_001_000, state: 'DELETE_PARTITION_FINISHED' },
};

const SNAPSHOT_VECTOR = hex(
  '01 03 00' + //                        frame version 1, apiKey 3 (RemoteLogSegmentMetadataSnapshotRecord), version 0
    '101112131415161718191a1b1c1d1e1f' + // SegmentId
    '0000000000000064 00000000000000c7' + // StartOffset 100, EndOffset 199
    '00000003' + //                      BrokerId
    '0000018bcfe56800 0000018bcfe569f4' + // MaxTimestampMs, EventTimestampMs
    '02 00000005 0000000000000064 00' + // one leader epoch
    '00001000' + //                      SegmentSizeInBytes
    '00' + //                            CustomMetadata null
    '01' + //                            state COPY_SEGMENT_FINISHED
    '00', //                             TxnIndexEmpty false: not written
);

const SNAPSHOT_EVENT: RemoteLogMetadataEvent = {
  type: 'segmentSnapshot',
  snapshot: {
    segmentId: SEGMENT_ID,
    startOffset: 100n,
    endOffset: 199n,
    brokerId: 3,
    maxTimestampMs: 1_700_000_000_000,
    eventTimestampMs: 1_700_000_000_500,
    segmentLeaderEpochs: [{ leaderEpoch: 5, startOffset: 100n }],
    segmentSizeInBytes: 4096,
    state: 'COPY_SEGMENT_FINISHED',
    txnIndexEmpty: false,
  },
};

function rejectsAsCorrupt(value: Buffer, pattern: RegExp): void {
  assert.throws(
    () => deserializeRemoteLogMetadata(value),
    (e: unknown) => e instanceof KafkaError && e.code === ErrorCode.CORRUPT_MESSAGE && pattern.test(e.message),
  );
}

describe('remote log metadata serde', () => {
  const cases: Array<[string, RemoteLogMetadataEvent, Buffer]> = [
    ['RemoteLogSegmentMetadataRecord', SEGMENT_EVENT, SEGMENT_VECTOR],
    ['RemoteLogSegmentMetadataUpdateRecord', UPDATE_EVENT, UPDATE_VECTOR],
    ['RemotePartitionDeleteMetadataRecord', DELETE_EVENT, DELETE_VECTOR],
    ['RemoteLogSegmentMetadataSnapshotRecord', SNAPSHOT_EVENT, SNAPSHOT_VECTOR],
  ];
  for (const [name, event, vector] of cases) {
    it(`writes ${name} exactly as Kafka's serde lays it out`, () => {
      assert.equal(serializeRemoteLogMetadata(event).toString('hex'), vector.toString('hex'));
    });
    it(`reads ${name} from Kafka's bytes`, () => {
      assert.deepEqual(deserializeRemoteLogMetadata(vector), event);
    });
  }

  it('round-trips custom metadata, txnIndexEmpty=false and every state', () => {
    for (const state of ['COPY_SEGMENT_STARTED', 'COPY_SEGMENT_FINISHED', 'DELETE_SEGMENT_STARTED', 'DELETE_SEGMENT_FINISHED'] as const) {
      const event: RemoteLogMetadataEvent = {
        type: 'segment',
        metadata: { ...(SEGMENT_EVENT.type === 'segment' ? SEGMENT_EVENT.metadata : never()), state, txnIndexEmpty: false, customMetadata: Buffer.from([1, 2, 3]) },
      };
      assert.deepEqual(deserializeRemoteLogMetadata(serializeRemoteLogMetadata(event)), event);
    }
    const noCustom: RemoteLogMetadataEvent = {
      type: 'segmentUpdate',
      update: { remoteLogSegmentId: { topicIdPartition: TP, id: SEGMENT_ID }, brokerId: 0, eventTimestampMs: 0, state: 'DELETE_SEGMENT_FINISHED' },
    };
    assert.deepEqual(deserializeRemoteLogMetadata(serializeRemoteLogMetadata(noCustom)), noCustom);
  });

  it('reads version 1 records (newer Kafka) and ignores BrokerLeaderEpoch (tag 1)', () => {
    const v1 = Buffer.from(SEGMENT_VECTOR);
    v1[2] = 1; // version 1
    const tail = v1.length - 4; // replace the tagged fields: TxnIndexEmpty true + BrokerLeaderEpoch 7
    const withTag1 = Buffer.concat([v1.subarray(0, tail), hex('02 00 01 01 01 04 00000007')]);
    assert.deepEqual(deserializeRemoteLogMetadata(withTag1), SEGMENT_EVENT);
  });

  it('rejects malformed values with CORRUPT_MESSAGE', () => {
    const frame0 = Buffer.from(SEGMENT_VECTOR);
    frame0[0] = 0;
    rejectsAsCorrupt(frame0, /frame version 0/);
    rejectsAsCorrupt(Buffer.concat([DELETE_VECTOR, Buffer.from([0])]), /garbage/);
    rejectsAsCorrupt(hex('01 09 00'), /unknown apiKey 9/);
    const v2 = Buffer.from(DELETE_VECTOR);
    v2[2] = 1;
    rejectsAsCorrupt(v2, /version 1/);
    const badState = Buffer.from(DELETE_VECTOR);
    badState[badState.length - 2] = 3;
    rejectsAsCorrupt(badState, /partition delete state id 3/);
    const badSegmentState = Buffer.from(UPDATE_VECTOR);
    badSegmentState[badSegmentState.length - 2] = 4;
    rejectsAsCorrupt(badSegmentState, /segment state id 4/);
    rejectsAsCorrupt(SEGMENT_VECTOR.subarray(0, 40), /Truncated/);
    rejectsAsCorrupt(Buffer.alloc(0), /Truncated/);
  });
});

function never(): never {
  throw new Error('unreachable');
}
