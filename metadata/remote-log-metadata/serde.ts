// The value of a `__remote_log_metadata` record, byte-compatible with Kafka's
// RemoteLogMetadataSerde (BytesApiMessageSerde over AbstractApiMessageSerde):
//
//   value = frameVersion:uvarint(=1) apiKey:uvarint version:uvarint message
//
//   apiKey 0 RemoteLogSegmentMetadataRecord        (a segment, COPY_SEGMENT_STARTED)
//   apiKey 1 RemoteLogSegmentMetadataUpdateRecord  (a later state of a segment)
//   apiKey 2 RemotePartitionDeleteMetadataRecord
//   apiKey 3 RemoteLogSegmentMetadataSnapshotRecord (Kafka writes these to snapshot files only)
//
// Messages are flexible (compact strings/bytes/arrays, uvarint lengths + 1, a
// tagged-field section after every struct). The record key is null, as Kafka's
// ProducerManager writes it; the partition comes from metadata-partitioner.ts.
//
// Kafka 4.x defines TxnIndexEmpty (tag 0, bool, written only when true) on apiKeys
// 0 and 3 (the generated codecs carry it). Kafka's development line has had a
// version 1 adding BrokerLeaderEpoch (tag 1): such records are read with the
// version 0 body (the only difference is that tagged field) and tag 1 is ignored.
// Message bodies come from the generated codecs; only the framing is hand-written.
import { ProtocolDecodeError } from '../../broker/protocol/errors.js';
import {
  decodeRemoteLogSegmentMetadataRecord,
  encodeRemoteLogSegmentMetadataRecord,
  type RemoteLogSegmentMetadataRecord,
} from '../../broker/protocol/messages/records/remote-log-segment-metadata-record.js';
import {
  decodeRemoteLogSegmentMetadataSnapshotRecord,
  encodeRemoteLogSegmentMetadataSnapshotRecord,
  type RemoteLogSegmentMetadataSnapshotRecord,
} from '../../broker/protocol/messages/records/remote-log-segment-metadata-snapshot-record.js';
import {
  decodeRemoteLogSegmentMetadataUpdateRecord,
  encodeRemoteLogSegmentMetadataUpdateRecord,
} from '../../broker/protocol/messages/records/remote-log-segment-metadata-update-record.js';
import {
  decodeRemotePartitionDeleteMetadataRecord,
  encodeRemotePartitionDeleteMetadataRecord,
} from '../../broker/protocol/messages/records/remote-partition-delete-metadata-record.js';
import { Reader } from '../../broker/protocol/reader.js';
import { Writer } from '../../broker/protocol/writer.js';
import type {
  RemoteLogMetadataEvent,
  RemoteLogSegmentState,
  RemotePartitionDeleteState,
  SegmentLeaderEpoch,
  TopicIdPartition,
} from './types.js';
import { partitionDeleteStateForId, partitionDeleteStateId, segmentStateForId, segmentStateId } from './types.js';

export const FRAME_VERSION = 1;
export const API_KEY_SEGMENT = 0;
export const API_KEY_SEGMENT_UPDATE = 1;
export const API_KEY_PARTITION_DELETE = 2;
export const API_KEY_SEGMENT_SNAPSHOT = 3;

/** Kafka's record value for `event` (the record key is null). */
export function serializeRemoteLogMetadata(event: RemoteLogMetadataEvent): Buffer {
  const w = new Writer(128);
  w.writeUVarint(FRAME_VERSION);
  switch (event.type) {
    case 'segment': {
      const m = event.metadata;
      const id = m.remoteLogSegmentId;
      w.writeUVarint(API_KEY_SEGMENT);
      w.writeUVarint(0);
      const record: RemoteLogSegmentMetadataRecord = {
        remoteLogSegmentId: { topicIdPartition: topicIdPartitionEntry(id.topicIdPartition), id: id.id },
        startOffset: m.startOffset,
        endOffset: m.endOffset,
        brokerId: m.brokerId,
        maxTimestampMs: BigInt(m.maxTimestampMs),
        eventTimestampMs: BigInt(m.eventTimestampMs),
        segmentLeaderEpochs: m.segmentLeaderEpochs.map((e) => ({ leaderEpoch: e.leaderEpoch, offset: e.startOffset })),
        segmentSizeInBytes: m.segmentSizeInBytes,
        customMetadata: m.customMetadata ?? null,
        remoteLogSegmentState: segmentStateId(m.state),
        txnIndexEmpty: m.txnIndexEmpty,
      };
      encodeRemoteLogSegmentMetadataRecord(w, 0, record);
      break;
    }
    case 'segmentUpdate': {
      const u = event.update;
      w.writeUVarint(API_KEY_SEGMENT_UPDATE);
      w.writeUVarint(0);
      encodeRemoteLogSegmentMetadataUpdateRecord(w, 0, {
        remoteLogSegmentId: {
          topicIdPartition: topicIdPartitionEntry(u.remoteLogSegmentId.topicIdPartition),
          id: u.remoteLogSegmentId.id,
        },
        brokerId: u.brokerId,
        eventTimestampMs: BigInt(u.eventTimestampMs),
        customMetadata: u.customMetadata ?? null,
        remoteLogSegmentState: segmentStateId(u.state),
      });
      break;
    }
    case 'partitionDelete': {
      const d = event.delete;
      w.writeUVarint(API_KEY_PARTITION_DELETE);
      w.writeUVarint(0);
      encodeRemotePartitionDeleteMetadataRecord(w, 0, {
        topicIdPartition: topicIdPartitionEntry(d.topicIdPartition),
        brokerId: d.brokerId,
        eventTimestampMs: BigInt(d.eventTimestampMs),
        remotePartitionDeleteState: partitionDeleteStateId(d.state),
      });
      break;
    }
    case 'segmentSnapshot': {
      const s = event.snapshot;
      w.writeUVarint(API_KEY_SEGMENT_SNAPSHOT);
      w.writeUVarint(0);
      const record: RemoteLogSegmentMetadataSnapshotRecord = {
        segmentId: s.segmentId,
        startOffset: s.startOffset,
        endOffset: s.endOffset,
        brokerId: s.brokerId,
        maxTimestampMs: BigInt(s.maxTimestampMs),
        eventTimestampMs: BigInt(s.eventTimestampMs),
        segmentLeaderEpochs: s.segmentLeaderEpochs.map((e) => ({ leaderEpoch: e.leaderEpoch, offset: e.startOffset })),
        segmentSizeInBytes: s.segmentSizeInBytes,
        customMetadata: s.customMetadata ?? null,
        remoteLogSegmentState: segmentStateId(s.state),
        txnIndexEmpty: s.txnIndexEmpty,
      };
      encodeRemoteLogSegmentMetadataSnapshotRecord(w, 0, record);
      break;
    }
  }
  return w.toBuffer();
}

/** Decodes a record value; throws ProtocolDecodeError (CORRUPT_MESSAGE) on anything malformed. */
export function deserializeRemoteLogMetadata(value: Buffer): RemoteLogMetadataEvent {
  const r = new Reader(value);
  const frameVersion = r.readUVarint();
  if (frameVersion !== FRAME_VERSION) {
    throw new ProtocolDecodeError(`remote log metadata: unsupported frame version ${frameVersion}`);
  }
  const apiKey = r.readUVarint();
  const version = r.readUVarint();
  let event: RemoteLogMetadataEvent;
  switch (apiKey) {
    case API_KEY_SEGMENT: {
      checkVersion(apiKey, version, 1);
      const m = decodeRemoteLogSegmentMetadataRecord(r, 0);
      const id = m.remoteLogSegmentId;
      event = {
        type: 'segment',
        metadata: {
          remoteLogSegmentId: { topicIdPartition: topicIdPartition(id.topicIdPartition), id: id.id },
          startOffset: m.startOffset,
          endOffset: m.endOffset,
          brokerId: m.brokerId,
          maxTimestampMs: Number(m.maxTimestampMs),
          eventTimestampMs: Number(m.eventTimestampMs),
          segmentLeaderEpochs: leaderEpochs(m.segmentLeaderEpochs),
          segmentSizeInBytes: m.segmentSizeInBytes,
          ...(m.customMetadata === null ? {} : { customMetadata: Buffer.from(m.customMetadata) }),
          state: segmentState(m.remoteLogSegmentState),
          txnIndexEmpty: m.txnIndexEmpty ?? false,
        },
      };
      break;
    }
    case API_KEY_SEGMENT_UPDATE: {
      checkVersion(apiKey, version, 0);
      const u = decodeRemoteLogSegmentMetadataUpdateRecord(r, version);
      const id = u.remoteLogSegmentId;
      event = {
        type: 'segmentUpdate',
        update: {
          remoteLogSegmentId: { topicIdPartition: topicIdPartition(id.topicIdPartition), id: id.id },
          brokerId: u.brokerId,
          eventTimestampMs: Number(u.eventTimestampMs),
          ...(u.customMetadata === null ? {} : { customMetadata: Buffer.from(u.customMetadata) }),
          state: segmentState(u.remoteLogSegmentState),
        },
      };
      break;
    }
    case API_KEY_PARTITION_DELETE: {
      checkVersion(apiKey, version, 0);
      const d = decodeRemotePartitionDeleteMetadataRecord(r, version);
      event = {
        type: 'partitionDelete',
        delete: {
          topicIdPartition: topicIdPartition(d.topicIdPartition),
          brokerId: d.brokerId,
          eventTimestampMs: Number(d.eventTimestampMs),
          state: partitionDeleteState(d.remotePartitionDeleteState),
        },
      };
      break;
    }
    case API_KEY_SEGMENT_SNAPSHOT: {
      checkVersion(apiKey, version, 1);
      const s = decodeRemoteLogSegmentMetadataSnapshotRecord(r, 0);
      event = {
        type: 'segmentSnapshot',
        snapshot: {
          segmentId: s.segmentId,
          startOffset: s.startOffset,
          endOffset: s.endOffset,
          brokerId: s.brokerId,
          maxTimestampMs: Number(s.maxTimestampMs),
          eventTimestampMs: Number(s.eventTimestampMs),
          segmentLeaderEpochs: leaderEpochs(s.segmentLeaderEpochs),
          segmentSizeInBytes: s.segmentSizeInBytes,
          ...(s.customMetadata === null ? {} : { customMetadata: Buffer.from(s.customMetadata) }),
          state: segmentState(s.remoteLogSegmentState),
          txnIndexEmpty: s.txnIndexEmpty ?? false,
        },
      };
      break;
    }
    default:
      throw new ProtocolDecodeError(`remote log metadata: unknown apiKey ${apiKey}`);
  }
  if (r.remaining > 0) {
    throw new ProtocolDecodeError(`remote log metadata: ${r.remaining} byte(s) of garbage after apiKey ${apiKey}`);
  }
  return event;
}

function checkVersion(apiKey: number, version: number, max: number): void {
  if (version > max) throw new ProtocolDecodeError(`remote log metadata: apiKey ${apiKey} version ${version} > ${max}`);
}

function topicIdPartitionEntry(tp: TopicIdPartition): { name: string; id: string; partition: number } {
  return { name: tp.topic, id: tp.topicId, partition: tp.partition };
}

function topicIdPartition(e: { name: string; id: string; partition: number }): TopicIdPartition {
  return { topicId: e.id, topic: e.name, partition: e.partition };
}

function leaderEpochs(entries: readonly { leaderEpoch: number; offset: bigint }[]): SegmentLeaderEpoch[] {
  return entries.map((e) => ({ leaderEpoch: e.leaderEpoch, startOffset: e.offset }));
}

function segmentState(id: number): RemoteLogSegmentState {
  const state = segmentStateForId(id);
  if (state === undefined) throw new ProtocolDecodeError(`remote log metadata: unknown segment state id ${id}`);
  return state;
}

function partitionDeleteState(id: number): RemotePartitionDeleteState {
  const state = partitionDeleteStateForId(id);
  if (state === undefined) throw new ProtocolDecodeError(`remote log metadata: unknown partition delete state id ${id}`);
  return state;
}
