// Builders shared by the remote log metadata tests.
import type {
  RemoteLogSegmentMetadata,
  RemoteLogSegmentMetadataUpdate,
  RemoteLogSegmentState,
  SegmentLeaderEpoch,
  TopicIdPartition,
} from '../../../metadata/remote-log-metadata/types.js';

export const TOPIC_ID = 'x7lXV4zIQ0a1MNLTZ9Zc4w';
export const TP0: TopicIdPartition = { topicId: TOPIC_ID, topic: 'orders', partition: 0 };
export const TP1: TopicIdPartition = { topicId: TOPIC_ID, topic: 'orders', partition: 1 };

/** A deterministic segment id: the 16 bytes are `n` big-endian in the last 4 bytes, version bits set. */
export function segmentId(n: number): string {
  const b = Buffer.alloc(16);
  b.writeUInt32BE(0x5e9d0000, 0);
  b[6] = 0x40;
  b[8] = 0x80;
  b.writeUInt32BE(n >>> 0, 12);
  return b.toString('base64url');
}

export interface SegmentSpec {
  id: number;
  start: number | bigint;
  end: number | bigint;
  epochs?: Array<[number, number | bigint]>;
  size?: number;
  tp?: TopicIdPartition;
  txnIndexEmpty?: boolean;
  customMetadata?: Buffer;
}

export function segment(spec: SegmentSpec): RemoteLogSegmentMetadata {
  const epochs: SegmentLeaderEpoch[] = (spec.epochs ?? [[0, spec.start]]).map(([leaderEpoch, startOffset]) => ({
    leaderEpoch,
    startOffset: BigInt(startOffset),
  }));
  return {
    remoteLogSegmentId: { topicIdPartition: spec.tp ?? TP0, id: segmentId(spec.id) },
    startOffset: BigInt(spec.start),
    endOffset: BigInt(spec.end),
    brokerId: 1,
    maxTimestampMs: 1_700_000_000_000 + spec.id,
    eventTimestampMs: 1_700_000_100_000,
    segmentLeaderEpochs: epochs,
    segmentSizeInBytes: spec.size ?? 1000,
    ...(spec.customMetadata === undefined ? {} : { customMetadata: spec.customMetadata }),
    state: 'COPY_SEGMENT_STARTED',
    txnIndexEmpty: spec.txnIndexEmpty ?? true,
  };
}

export function update(
  id: number,
  state: RemoteLogSegmentState,
  tp: TopicIdPartition = TP0,
  eventTimestampMs = 1_700_000_200_000,
): RemoteLogSegmentMetadataUpdate {
  return { remoteLogSegmentId: { topicIdPartition: tp, id: segmentId(id) }, brokerId: 2, eventTimestampMs, state };
}
