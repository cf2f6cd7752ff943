// The records the coordinator keeps in `__consumer_offsets`, in Kafka's own
// formats (generated from group-coordinator/*.json): an int16 prefixes key and
// value. The key's is the record type (the definition's apiKey since Kafka 4.x
// calls them "coordinator-key": 0 legacy and 1 offset commit, 2 group
// metadata), followed by the key body at its only version, 0; the value's is
// the value version. (The older definitions gave the key body the record type
// as its version: the bytes are the same.) We
// write what Kafka 3.x/4.x writes (OffsetCommitValue v3, or v1 when an
// explicit expire timestamp exists; GroupMetadataValue v3) and read every
// version. Records of other group types (key versions 3+) are reported as
// `unknown`: the loader hands KIP-848 consumer-group ones to consumer/ and
// share-group ones (11-15) to the attached share groups (broker/share/).
import { Reader } from '../protocol/reader.js';
import { decodeVersioned, encodeVersioned } from '../protocol/messages/records/frame.js';
import { GroupMetadataKeyMeta, decodeGroupMetadataKey, encodeGroupMetadataKey } from '../protocol/messages/records/group-metadata-key.js';
import {
  decodeGroupMetadataValue,
  encodeGroupMetadataValue,
  type GroupMetadataValue,
} from '../protocol/messages/records/group-metadata-value.js';
import { OffsetCommitKeyMeta, decodeOffsetCommitKey, encodeOffsetCommitKey } from '../protocol/messages/records/offset-commit-key.js';
import { LegacyOffsetCommitKeyMeta } from '../protocol/messages/records/legacy-offset-commit-key.js';
import { decodeOffsetCommitValue, encodeOffsetCommitValue } from '../protocol/messages/records/offset-commit-value.js';
import { decodeConsumerProtocolSubscription } from '../protocol/messages/records/consumer-protocol-subscription.js';
import type { OffsetsTopicRecord } from './offsets-topic.js';

export interface OffsetAndMetadata {
  readonly committedOffset: bigint;
  /** -1 when unknown. */
  readonly leaderEpoch: number;
  readonly metadata: string;
  readonly commitTimestampMs: number;
  /** Only from OffsetCommit v2-4 with an explicit retention time. */
  readonly expireTimestampMs: number | null;
}

export interface GroupMemberSnapshot {
  readonly memberId: string;
  readonly groupInstanceId: string | null;
  readonly clientId: string;
  readonly clientHost: string;
  readonly rebalanceTimeoutMs: number;
  readonly sessionTimeoutMs: number;
  readonly subscription: Buffer;
  readonly assignment: Buffer;
}

export interface GroupMetadataSnapshot {
  /** '' for groups created by offset commits alone. */
  readonly protocolType: string;
  readonly generationId: number;
  readonly protocolName: string | null;
  readonly leaderId: string | null;
  readonly currentStateTimestampMs: number | null;
  readonly members: readonly GroupMemberSnapshot[];
}

export type CoordinatorRecord =
  | {
      readonly type: 'offsetCommit';
      readonly groupId: string;
      readonly topic: string;
      readonly partition: number;
      /** null: tombstone. */
      readonly value: OffsetAndMetadata | null;
    }
  | { readonly type: 'groupMetadata'; readonly groupId: string; readonly value: GroupMetadataSnapshot | null }
  | { readonly type: 'unknown'; readonly keyVersion: number };

const LEGACY_OFFSET_COMMIT_RECORD = LegacyOffsetCommitKeyMeta.apiKey;
const OFFSET_COMMIT_RECORD = OffsetCommitKeyMeta.apiKey;
const GROUP_METADATA_RECORD = GroupMetadataKeyMeta.apiKey;
/** Every coordinator key body has one version. */
const KEY_BODY_VERSION = 0;
const OFFSET_COMMIT_VALUE_VERSION = 3;
const OFFSET_COMMIT_VALUE_VERSION_WITH_EXPIRY = 1;
const GROUP_METADATA_VALUE_VERSION = 3;

export function encodeCoordinatorRecord(record: CoordinatorRecord): OffsetsTopicRecord {
  switch (record.type) {
    case 'offsetCommit': {
      const key = encodeVersioned(OFFSET_COMMIT_RECORD, (w) =>
        encodeOffsetCommitKey(w, KEY_BODY_VERSION, {
          group: record.groupId,
          topic: record.topic,
          partition: record.partition,
        }),
      );
      const v = record.value;
      if (v === null) return { key, value: null };
      const version = v.expireTimestampMs === null ? OFFSET_COMMIT_VALUE_VERSION : OFFSET_COMMIT_VALUE_VERSION_WITH_EXPIRY;
      const value = encodeVersioned(version, (w) =>
        encodeOffsetCommitValue(w, version, {
          offset: v.committedOffset,
          leaderEpoch: v.leaderEpoch,
          metadata: v.metadata,
          commitTimestamp: BigInt(v.commitTimestampMs),
          expireTimestamp: BigInt(v.expireTimestampMs ?? -1),
        }),
      );
      return { key, value };
    }
    case 'groupMetadata': {
      const key = encodeVersioned(GROUP_METADATA_RECORD, (w) =>
        encodeGroupMetadataKey(w, KEY_BODY_VERSION, { group: record.groupId }),
      );
      const g = record.value;
      if (g === null) return { key, value: null };
      const body: GroupMetadataValue = {
        protocolType: g.protocolType,
        generation: g.generationId,
        protocol: g.protocolName,
        leader: g.leaderId,
        currentStateTimestamp: BigInt(g.currentStateTimestampMs ?? -1),
        members: g.members.map((m) => ({
          memberId: m.memberId,
          groupInstanceId: m.groupInstanceId,
          clientId: m.clientId,
          clientHost: m.clientHost,
          rebalanceTimeout: m.rebalanceTimeoutMs,
          sessionTimeout: m.sessionTimeoutMs,
          subscription: m.subscription,
          assignment: m.assignment,
        })),
      };
      const value = encodeVersioned(GROUP_METADATA_VALUE_VERSION, (w) =>
        encodeGroupMetadataValue(w, GROUP_METADATA_VALUE_VERSION, body),
      );
      return { key, value };
    }
    case 'unknown':
      throw new Error(`Cannot encode a record of unknown key version ${record.keyVersion}`);
  }
}

/** Throws ProtocolDecodeError / KafkaError(UNSUPPORTED_VERSION) on malformed bytes. */
export function decodeCoordinatorRecord(record: OffsetsTopicRecord): CoordinatorRecord {
  const k = decodeVersioned(record.key);
  // decodeVersioned reads the prefix as `version`: for a key, the record type.
  if (k.version === LEGACY_OFFSET_COMMIT_RECORD || k.version === OFFSET_COMMIT_RECORD) {
    // The legacy key's body is the same as the current one's.
    const key = decodeOffsetCommitKey(k.body, KEY_BODY_VERSION);
    if (record.value === null) {
      return { type: 'offsetCommit', groupId: key.group, topic: key.topic, partition: key.partition, value: null };
    }
    const v = decodeVersioned(record.value);
    const value = decodeOffsetCommitValue(v.body, v.version);
    return {
      type: 'offsetCommit',
      groupId: key.group,
      topic: key.topic,
      partition: key.partition,
      value: {
        committedOffset: value.offset,
        leaderEpoch: value.leaderEpoch,
        metadata: value.metadata,
        commitTimestampMs: Number(value.commitTimestamp),
        expireTimestampMs: value.expireTimestamp < 0n ? null : Number(value.expireTimestamp),
      },
    };
  }
  if (k.version === GROUP_METADATA_RECORD) {
    const key = decodeGroupMetadataKey(k.body, KEY_BODY_VERSION);
    if (record.value === null) return { type: 'groupMetadata', groupId: key.group, value: null };
    const v = decodeVersioned(record.value);
    const g = decodeGroupMetadataValue(v.body, v.version);
    return {
      type: 'groupMetadata',
      groupId: key.group,
      value: {
        protocolType: g.protocolType,
        generationId: g.generation,
        protocolName: g.protocol,
        leaderId: g.leader,
        currentStateTimestampMs: g.currentStateTimestamp < 0n ? null : Number(g.currentStateTimestamp),
        members: g.members.map((m) => ({
          memberId: m.memberId,
          groupInstanceId: m.groupInstanceId,
          clientId: m.clientId,
          clientHost: m.clientHost,
          // Version 0 has no rebalance timeout: Kafka falls back to the session timeout.
          rebalanceTimeoutMs: m.rebalanceTimeout === -1 ? m.sessionTimeout : m.rebalanceTimeout,
          sessionTimeoutMs: m.sessionTimeout,
          subscription: m.subscription,
          assignment: m.assignment,
        })),
      },
    };
  }
  return { type: 'unknown', keyVersion: k.version };
}

/**
 * Topics of a "consumer" protocol subscription, parsed as version 0 (the
 * prefix every version shares, as Kafka does); null when unparseable.
 */
export function subscribedTopicsOf(subscription: Buffer): string[] | null {
  try {
    const r = new Reader(subscription);
    r.readInt16();
    return decodeConsumerProtocolSubscription(r, 0).topics;
  } catch {
    return null;
  }
}
