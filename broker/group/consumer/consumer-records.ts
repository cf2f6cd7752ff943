// The KIP-848 consumer group records of `__consumer_offsets`, in Kafka's
// formats (group-coordinator/ConsumerGroup*.json): an int16 record type
// prefixes the key (the definition's apiKey: 3 group metadata, 5 member
// metadata, 6 target assignment metadata, 7 target assignment member, 8
// current member assignment, 16 regular expression; 4, partition metadata, is
// read and ignored as Kafka 4.x does), an int16 version the value. A null
// value is a tombstone. Pure.
import { decodeVersioned, encodeVersioned } from '../../protocol/messages/records/frame.js';
import type { Writer } from '../../protocol/writer.js';
import type { Reader } from '../../protocol/reader.js';
import { decodeConsumerGroupMetadataKey, encodeConsumerGroupMetadataKey } from '../../protocol/messages/records/consumer-group-metadata-key.js';
import { decodeConsumerGroupMetadataValue, encodeConsumerGroupMetadataValue } from '../../protocol/messages/records/consumer-group-metadata-value.js';
import { decodeConsumerGroupMemberMetadataKey, encodeConsumerGroupMemberMetadataKey } from '../../protocol/messages/records/consumer-group-member-metadata-key.js';
import { decodeConsumerGroupMemberMetadataValue, encodeConsumerGroupMemberMetadataValue } from '../../protocol/messages/records/consumer-group-member-metadata-value.js';
import { decodeConsumerGroupTargetAssignmentMetadataKey, encodeConsumerGroupTargetAssignmentMetadataKey } from '../../protocol/messages/records/consumer-group-target-assignment-metadata-key.js';
import { decodeConsumerGroupTargetAssignmentMetadataValue, encodeConsumerGroupTargetAssignmentMetadataValue } from '../../protocol/messages/records/consumer-group-target-assignment-metadata-value.js';
import { decodeConsumerGroupTargetAssignmentMemberKey, encodeConsumerGroupTargetAssignmentMemberKey } from '../../protocol/messages/records/consumer-group-target-assignment-member-key.js';
import { decodeConsumerGroupTargetAssignmentMemberValue, encodeConsumerGroupTargetAssignmentMemberValue } from '../../protocol/messages/records/consumer-group-target-assignment-member-value.js';
import {
  decodeConsumerGroupCurrentMemberAssignmentKey,
  encodeConsumerGroupCurrentMemberAssignmentKey,
} from '../../protocol/messages/records/consumer-group-current-member-assignment-key.js';
import {
  decodeConsumerGroupCurrentMemberAssignmentValue,
  encodeConsumerGroupCurrentMemberAssignmentValue,
  type ConsumerGroupCurrentMemberAssignmentValueTopicPartitions,
} from '../../protocol/messages/records/consumer-group-current-member-assignment-value.js';
import { decodeConsumerGroupRegularExpressionKey, encodeConsumerGroupRegularExpressionKey } from '../../protocol/messages/records/consumer-group-regular-expression-key.js';
import { decodeConsumerGroupRegularExpressionValue, encodeConsumerGroupRegularExpressionValue } from '../../protocol/messages/records/consumer-group-regular-expression-value.js';
import { decodeConsumerGroupPartitionMetadataKey } from '../../protocol/messages/records/consumer-group-partition-metadata-key.js';
import type { OffsetsTopicRecord } from '../offsets-topic.js';
import type { ClassicMemberMetadata } from './classic-protocol.js';
import { memberStateCode, memberStateFromCode, type Assignment, type MemberState, type ResolvedRegex, type Target } from './consumer-group.js';

export const CONSUMER_GROUP_METADATA_RECORD = 3;
export const CONSUMER_GROUP_PARTITION_METADATA_RECORD = 4;
export const CONSUMER_GROUP_MEMBER_METADATA_RECORD = 5;
export const CONSUMER_GROUP_TARGET_METADATA_RECORD = 6;
export const CONSUMER_GROUP_TARGET_MEMBER_RECORD = 7;
export const CONSUMER_GROUP_CURRENT_ASSIGNMENT_RECORD = 8;
export const CONSUMER_GROUP_REGEX_RECORD = 16;

const CONSUMER_RECORD_TYPES: ReadonlySet<number> = new Set([3, 4, 5, 6, 7, 8, 16]);

export function isConsumerGroupRecordType(type: number): boolean {
  return CONSUMER_RECORD_TYPES.has(type);
}

export interface MemberMetadata {
  readonly instanceId: string | null;
  readonly rackId: string | null;
  readonly clientId: string;
  readonly clientHost: string;
  readonly subscribedTopicNames: readonly string[];
  readonly subscribedTopicRegex: string | null;
  readonly rebalanceTimeoutMs: number;
  readonly serverAssignor: string | null;
  /** The tagged ClassicMemberMetadata: set for members using the classic protocol. */
  readonly classic: ClassicMemberMetadata | null;
}

export interface CurrentAssignment {
  readonly memberEpoch: number;
  readonly previousMemberEpoch: number;
  readonly state: MemberState;
  readonly assigned: Assignment;
  readonly pendingRevocation: Assignment;
}

export type ConsumerGroupRecord =
  | { readonly type: 'groupMetadata'; readonly groupId: string; readonly value: { readonly epoch: number; readonly metadataHash: bigint } | null }
  | { readonly type: 'partitionMetadata'; readonly groupId: string }
  | { readonly type: 'memberMetadata'; readonly groupId: string; readonly memberId: string; readonly value: MemberMetadata | null }
  | { readonly type: 'targetMetadata'; readonly groupId: string; readonly value: { readonly assignmentEpoch: number; readonly timestampMs: number } | null }
  | { readonly type: 'targetMember'; readonly groupId: string; readonly memberId: string; readonly value: Target | null }
  | { readonly type: 'currentAssignment'; readonly groupId: string; readonly memberId: string; readonly value: CurrentAssignment | null }
  | { readonly type: 'regex'; readonly groupId: string; readonly regex: string; readonly value: ResolvedRegex | null };

const KEY_VERSION = 0;
const VALUE_VERSION = 0;

function value(write: (w: Writer) => void): Buffer {
  return encodeVersioned(VALUE_VERSION, write);
}

function assignmentOut(a: Assignment): ConsumerGroupCurrentMemberAssignmentValueTopicPartitions[] {
  return [...a].map(([topicId, ps]) => {
    const partitions = [...ps.keys()].sort((x, y) => x - y);
    return { topicId, partitions, assignmentEpochs: partitions.map((p) => ps.get(p) ?? 0) };
  });
}

function assignmentIn(tps: readonly ConsumerGroupCurrentMemberAssignmentValueTopicPartitions[], epoch: number): Assignment {
  const a = new Map<string, Map<number, number>>();
  for (const tp of tps) {
    const epochs = tp.assignmentEpochs ?? null;
    const byPartition = new Map<number, number>();
    // Records without assignment epochs (before KIP-1251): the member epoch, as Kafka assumes.
    tp.partitions.forEach((p, i) => byPartition.set(p, epochs?.[i] ?? epoch));
    a.set(tp.topicId, byPartition);
  }
  return a;
}

export function encodeConsumerGroupRecord(r: ConsumerGroupRecord): OffsetsTopicRecord {
  switch (r.type) {
    case 'groupMetadata': {
      const key = encodeVersioned(CONSUMER_GROUP_METADATA_RECORD, (w) => encodeConsumerGroupMetadataKey(w, KEY_VERSION, { groupId: r.groupId }));
      const v = r.value;
      return { key, value: v === null ? null : value((w) => encodeConsumerGroupMetadataValue(w, VALUE_VERSION, { epoch: v.epoch, metadataHash: v.metadataHash })) };
    }
    case 'partitionMetadata':
      throw new Error('partition metadata records are not written since Kafka 4.0');
    case 'memberMetadata': {
      const key = encodeVersioned(CONSUMER_GROUP_MEMBER_METADATA_RECORD, (w) =>
        encodeConsumerGroupMemberMetadataKey(w, KEY_VERSION, { groupId: r.groupId, memberId: r.memberId }),
      );
      const v = r.value;
      if (v === null) return { key, value: null };
      return {
        key,
        value: value((w) =>
          encodeConsumerGroupMemberMetadataValue(w, VALUE_VERSION, {
            instanceId: v.instanceId,
            rackId: v.rackId,
            clientId: v.clientId,
            clientHost: v.clientHost,
            subscribedTopicNames: [...v.subscribedTopicNames],
            subscribedTopicRegex: v.subscribedTopicRegex,
            rebalanceTimeoutMs: v.rebalanceTimeoutMs,
            serverAssignor: v.serverAssignor,
            classicMemberMetadata:
              v.classic === null
                ? null
                : { sessionTimeoutMs: v.classic.sessionTimeoutMs, supportedProtocols: v.classic.supportedProtocols.map((p) => ({ name: p.name, metadata: p.metadata })) },
          }),
        ),
      };
    }
    case 'targetMetadata': {
      const key = encodeVersioned(CONSUMER_GROUP_TARGET_METADATA_RECORD, (w) => encodeConsumerGroupTargetAssignmentMetadataKey(w, KEY_VERSION, { groupId: r.groupId }));
      const v = r.value;
      if (v === null) return { key, value: null };
      return { key, value: value((w) => encodeConsumerGroupTargetAssignmentMetadataValue(w, VALUE_VERSION, { assignmentEpoch: v.assignmentEpoch, assignmentTimestamp: BigInt(v.timestampMs) })) };
    }
    case 'targetMember': {
      const key = encodeVersioned(CONSUMER_GROUP_TARGET_MEMBER_RECORD, (w) =>
        encodeConsumerGroupTargetAssignmentMemberKey(w, KEY_VERSION, { groupId: r.groupId, memberId: r.memberId }),
      );
      const v = r.value;
      if (v === null) return { key, value: null };
      const topicPartitions = [...v].map(([topicId, ps]) => ({ topicId, partitions: [...ps].sort((x, y) => x - y) }));
      return { key, value: value((w) => encodeConsumerGroupTargetAssignmentMemberValue(w, VALUE_VERSION, { topicPartitions })) };
    }
    case 'currentAssignment': {
      const key = encodeVersioned(CONSUMER_GROUP_CURRENT_ASSIGNMENT_RECORD, (w) =>
        encodeConsumerGroupCurrentMemberAssignmentKey(w, KEY_VERSION, { groupId: r.groupId, memberId: r.memberId }),
      );
      const v = r.value;
      if (v === null) return { key, value: null };
      return {
        key,
        value: value((w) =>
          encodeConsumerGroupCurrentMemberAssignmentValue(w, VALUE_VERSION, {
            memberEpoch: v.memberEpoch,
            previousMemberEpoch: v.previousMemberEpoch,
            state: memberStateCode[v.state],
            assignedPartitions: assignmentOut(v.assigned),
            partitionsPendingRevocation: assignmentOut(v.pendingRevocation),
          }),
        ),
      };
    }
    case 'regex': {
      const key = encodeVersioned(CONSUMER_GROUP_REGEX_RECORD, (w) =>
        encodeConsumerGroupRegularExpressionKey(w, KEY_VERSION, { groupId: r.groupId, regularExpression: r.regex }),
      );
      const v = r.value;
      if (v === null) return { key, value: null };
      return {
        key,
        value: value((w) => encodeConsumerGroupRegularExpressionValue(w, VALUE_VERSION, { topics: [...v.topics], version: v.version, timestamp: BigInt(v.timestampMs) })),
      };
    }
  }
}

/** A consumer group record of record type `type` (see isConsumerGroupRecordType); throws on malformed bytes. */
export function decodeConsumerGroupRecord(type: number, keyBody: Reader, rawValue: Buffer | null): ConsumerGroupRecord {
  const v = rawValue === null ? null : decodeVersioned(rawValue);
  switch (type) {
    case CONSUMER_GROUP_METADATA_RECORD: {
      const k = decodeConsumerGroupMetadataKey(keyBody, KEY_VERSION);
      if (v === null) return { type: 'groupMetadata', groupId: k.groupId, value: null };
      const m = decodeConsumerGroupMetadataValue(v.body, v.version);
      return { type: 'groupMetadata', groupId: k.groupId, value: { epoch: m.epoch, metadataHash: m.metadataHash ?? 0n } };
    }
    case CONSUMER_GROUP_PARTITION_METADATA_RECORD:
      return { type: 'partitionMetadata', groupId: decodeConsumerGroupPartitionMetadataKey(keyBody, KEY_VERSION).groupId };
    case CONSUMER_GROUP_MEMBER_METADATA_RECORD: {
      const k = decodeConsumerGroupMemberMetadataKey(keyBody, KEY_VERSION);
      if (v === null) return { type: 'memberMetadata', groupId: k.groupId, memberId: k.memberId, value: null };
      const m = decodeConsumerGroupMemberMetadataValue(v.body, v.version);
      return {
        type: 'memberMetadata',
        groupId: k.groupId,
        memberId: k.memberId,
        value: {
          instanceId: m.instanceId,
          rackId: m.rackId,
          clientId: m.clientId,
          clientHost: m.clientHost,
          subscribedTopicNames: m.subscribedTopicNames,
          subscribedTopicRegex: m.subscribedTopicRegex,
          rebalanceTimeoutMs: m.rebalanceTimeoutMs,
          serverAssignor: m.serverAssignor,
          classic:
            m.classicMemberMetadata == null
              ? null
              : { sessionTimeoutMs: m.classicMemberMetadata.sessionTimeoutMs, supportedProtocols: m.classicMemberMetadata.supportedProtocols.map((p) => ({ name: p.name, metadata: Buffer.from(p.metadata) })) },
        },
      };
    }
    case CONSUMER_GROUP_TARGET_METADATA_RECORD: {
      const k = decodeConsumerGroupTargetAssignmentMetadataKey(keyBody, KEY_VERSION);
      if (v === null) return { type: 'targetMetadata', groupId: k.groupId, value: null };
      const m = decodeConsumerGroupTargetAssignmentMetadataValue(v.body, v.version);
      return { type: 'targetMetadata', groupId: k.groupId, value: { assignmentEpoch: m.assignmentEpoch, timestampMs: Number(m.assignmentTimestamp ?? 0n) } };
    }
    case CONSUMER_GROUP_TARGET_MEMBER_RECORD: {
      const k = decodeConsumerGroupTargetAssignmentMemberKey(keyBody, KEY_VERSION);
      if (v === null) return { type: 'targetMember', groupId: k.groupId, memberId: k.memberId, value: null };
      const m = decodeConsumerGroupTargetAssignmentMemberValue(v.body, v.version);
      return { type: 'targetMember', groupId: k.groupId, memberId: k.memberId, value: new Map(m.topicPartitions.map((tp) => [tp.topicId, new Set(tp.partitions)])) };
    }
    case CONSUMER_GROUP_CURRENT_ASSIGNMENT_RECORD: {
      const k = decodeConsumerGroupCurrentMemberAssignmentKey(keyBody, KEY_VERSION);
      if (v === null) return { type: 'currentAssignment', groupId: k.groupId, memberId: k.memberId, value: null };
      const m = decodeConsumerGroupCurrentMemberAssignmentValue(v.body, v.version);
      return {
        type: 'currentAssignment',
        groupId: k.groupId,
        memberId: k.memberId,
        value: {
          memberEpoch: m.memberEpoch,
          previousMemberEpoch: m.previousMemberEpoch,
          state: memberStateFromCode(m.state),
          assigned: assignmentIn(m.assignedPartitions, m.memberEpoch),
          pendingRevocation: assignmentIn(m.partitionsPendingRevocation, m.memberEpoch),
        },
      };
    }
    case CONSUMER_GROUP_REGEX_RECORD: {
      const k = decodeConsumerGroupRegularExpressionKey(keyBody, KEY_VERSION);
      if (v === null) return { type: 'regex', groupId: k.groupId, regex: k.regularExpression, value: null };
      const m = decodeConsumerGroupRegularExpressionValue(v.body, v.version);
      return { type: 'regex', groupId: k.groupId, regex: k.regularExpression, value: { topics: m.topics, version: m.version, timestampMs: Number(m.timestamp) } };
    }
    default:
      throw new Error(`record type ${type} is not a consumer group record`);
  }
}
