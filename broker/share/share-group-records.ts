// The share-group records Sediment keeps in `__consumer_offsets`, in Kafka's
// formats (group-coordinator/ShareGroup*.json): ShareGroupMetadata (record
// type 11: the group epoch) and ShareGroupStatePartitionMetadata (type 15:
// which share-partitions are initializing, initialized or deleting with the
// share coordinator). As in Kafka, each key is an int16 record type then the
// key body (version 0), each value an int16 version then the body; a null
// value is the tombstone. Members and assignments (types 12-14) are not
// written: members rejoin by heartbeat after a load. Pure.
import { decodeVersioned, encodeVersioned } from '../protocol/messages/records/frame.js';
import { ShareGroupMetadataKeyMeta, decodeShareGroupMetadataKey, encodeShareGroupMetadataKey } from '../protocol/messages/records/share-group-metadata-key.js';
import { decodeShareGroupMetadataValue, encodeShareGroupMetadataValue } from '../protocol/messages/records/share-group-metadata-value.js';
import {
  ShareGroupStatePartitionMetadataKeyMeta,
  decodeShareGroupStatePartitionMetadataKey,
  encodeShareGroupStatePartitionMetadataKey,
} from '../protocol/messages/records/share-group-state-partition-metadata-key.js';
import {
  decodeShareGroupStatePartitionMetadataValue,
  encodeShareGroupStatePartitionMetadataValue,
  type ShareGroupStatePartitionMetadataValue,
} from '../protocol/messages/records/share-group-state-partition-metadata-value.js';

export const SHARE_GROUP_METADATA_RECORD = ShareGroupMetadataKeyMeta.apiKey;
export const SHARE_GROUP_STATE_PARTITION_METADATA_RECORD = ShareGroupStatePartitionMetadataKeyMeta.apiKey;
const KEY_BODY_VERSION = 0;
const VALUE_VERSION = 0;

export type ShareGroupRecord =
  | { readonly type: 'groupMetadata'; readonly groupId: string; readonly value: { readonly epoch: number } | null }
  | { readonly type: 'statePartitionMetadata'; readonly groupId: string; readonly value: ShareGroupStatePartitionMetadataValue | null }
  /** A share-group record type Sediment does not write (member, assignment). */
  | { readonly type: 'other'; readonly recordType: number };

export interface EncodedRecord {
  readonly key: Buffer;
  readonly value: Buffer | null;
}

export function encodeShareGroupRecord(r: Exclude<ShareGroupRecord, { type: 'other' }>): EncodedRecord {
  switch (r.type) {
    case 'groupMetadata': {
      const key = encodeVersioned(SHARE_GROUP_METADATA_RECORD, (w) => encodeShareGroupMetadataKey(w, KEY_BODY_VERSION, { groupId: r.groupId }));
      const v = r.value;
      if (v === null) return { key, value: null };
      // Sediment does not compute Kafka's metadata hash of the subscribed topics: 0.
      return { key, value: encodeVersioned(VALUE_VERSION, (w) => encodeShareGroupMetadataValue(w, VALUE_VERSION, { epoch: v.epoch, metadataHash: 0n })) };
    }
    case 'statePartitionMetadata': {
      const key = encodeVersioned(SHARE_GROUP_STATE_PARTITION_METADATA_RECORD, (w) => encodeShareGroupStatePartitionMetadataKey(w, KEY_BODY_VERSION, { groupId: r.groupId }));
      const v = r.value;
      if (v === null) return { key, value: null };
      return { key, value: encodeVersioned(VALUE_VERSION, (w) => encodeShareGroupStatePartitionMetadataValue(w, VALUE_VERSION, v)) };
    }
  }
}

/** Throws ProtocolDecodeError / KafkaError(UNSUPPORTED_VERSION) on malformed bytes. */
export function decodeShareGroupRecord(key: Buffer, value: Buffer | null): ShareGroupRecord {
  const k = decodeVersioned(key);
  switch (k.version) {
    case SHARE_GROUP_METADATA_RECORD: {
      const groupId = decodeShareGroupMetadataKey(k.body, KEY_BODY_VERSION).groupId;
      if (value === null) return { type: 'groupMetadata', groupId, value: null };
      const v = decodeVersioned(value);
      return { type: 'groupMetadata', groupId, value: { epoch: decodeShareGroupMetadataValue(v.body, v.version).epoch } };
    }
    case SHARE_GROUP_STATE_PARTITION_METADATA_RECORD: {
      const groupId = decodeShareGroupStatePartitionMetadataKey(k.body, KEY_BODY_VERSION).groupId;
      if (value === null) return { type: 'statePartitionMetadata', groupId, value: null };
      const v = decodeVersioned(value);
      return { type: 'statePartitionMetadata', groupId, value: decodeShareGroupStatePartitionMetadataValue(v.body, v.version) };
    }
    default:
      return { type: 'other', recordType: k.version };
  }
}
