// The classic side of a consumer group member (KIP-848 online migration): the
// JoinGroup protocols and session timeout a classic member joined with (the
// tagged ClassicMemberMetadata of its member metadata record), the embedded
// ConsumerProtocol subscription read from those protocols, and the assignment
// a SyncGroup answer carries, in the ConsumerProtocol version the member
// speaks. Pure.
import { Reader } from '../../protocol/reader.js';
import { Writer } from '../../protocol/writer.js';
import { decodeConsumerProtocolSubscription } from '../../protocol/messages/records/consumer-protocol-subscription.js';
import { decodeConsumerProtocolAssignment, encodeConsumerProtocolAssignment } from '../../protocol/messages/records/consumer-protocol-assignment.js';
import type { Assignment, ClassicMemberMetadata, Target } from './consumer-group.js';
import type { ConsumerTopicsView } from './types.js';

export type { ClassicMemberMetadata };

/** ConsumerProtocolSubscription/Assignment versions this broker reads and writes. */
const HIGHEST_CONSUMER_PROTOCOL_VERSION = 3;

export interface ClassicSubscription {
  readonly topics: readonly string[];
  /** topic name -> partitions the member owns now (v1+; empty before). */
  readonly ownedPartitions: ReadonlyMap<string, readonly number[]>;
  readonly rackId: string | null;
}

/** The version prefix of an embedded ConsumerProtocol message, as Kafka reads it: newer versions are read as the highest known. */
export function consumerProtocolVersion(metadata: Buffer): number {
  if (metadata.length < 2) throw new Error('embedded consumer protocol metadata too short');
  const v = metadata.readInt16BE(0);
  if (v < 0) throw new Error(`unsupported consumer protocol version ${v}`);
  return Math.min(v, HIGHEST_CONSUMER_PROTOCOL_VERSION);
}

/** Decodes a ConsumerProtocolSubscription (the JoinGroup protocol metadata); throws on malformed bytes. */
export function decodeClassicSubscription(metadata: Buffer): ClassicSubscription {
  const version = consumerProtocolVersion(metadata);
  const r = new Reader(metadata, 2);
  const s = decodeConsumerProtocolSubscription(r, version);
  const owned = new Map<string, number[]>();
  for (const tp of s.ownedPartitions) owned.set(tp.topic, [...(owned.get(tp.topic) ?? []), ...tp.partitions]);
  return { topics: s.topics, ownedPartitions: owned, rackId: s.rackId };
}

/** A classic group member's assignment bytes as partitions by topic id (unknown topics are dropped, as Kafka does). */
export function decodeClassicAssignment(bytes: Buffer, topics: ConsumerTopicsView): Map<string, Set<number>> {
  const out = new Map<string, Set<number>>();
  if (bytes.length === 0) return out;
  const version = consumerProtocolVersion(bytes);
  const a = decodeConsumerProtocolAssignment(new Reader(bytes, 2), version);
  for (const tp of a.assignedPartitions) {
    const topicId = topics.byName(tp.topic)?.topicId;
    if (topicId === undefined) continue;
    const set = out.get(topicId) ?? new Set<number>();
    for (const p of tp.partitions) set.add(p);
    out.set(topicId, set);
  }
  return out;
}

/** Owned partitions by topic name -> by topic id (unknown topics dropped). */
export function ownedByTopicId(owned: ReadonlyMap<string, readonly number[]>, topics: ConsumerTopicsView): Map<string, readonly number[]> {
  const out = new Map<string, readonly number[]>();
  for (const [name, ps] of owned) {
    const topicId = topics.byName(name)?.topicId;
    if (topicId !== undefined) out.set(topicId, [...(out.get(topicId) ?? []), ...ps]);
  }
  return out;
}

/** A ConsumerProtocolAssignment of the partitions, in `version` (the member's subscription version). */
export function encodeClassicAssignment(partitions: Target | Assignment, topics: ConsumerTopicsView, version: number): Buffer {
  const assignedPartitions: { topic: string; partitions: number[] }[] = [];
  for (const [topicId, ps] of partitions) {
    const name = topics.byId(topicId)?.name;
    if (name === undefined) continue;
    const list = [...(ps instanceof Map ? ps.keys() : ps)].sort((a, b) => a - b);
    if (list.length > 0) assignedPartitions.push({ topic: name, partitions: list });
  }
  assignedPartitions.sort((a, b) => (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : 0));
  const w = new Writer(64);
  w.writeInt16(version);
  encodeConsumerProtocolAssignment(w, version, { assignedPartitions, userData: null });
  return w.toBuffer();
}

/** The version a classic member's answers are encoded in: that of its first protocol's subscription. */
export function assignmentVersionOf(classic: ClassicMemberMetadata): number {
  const first = classic.supportedProtocols[0];
  return first === undefined ? 0 : consumerProtocolVersion(first.metadata);
}

export function sameClassicMetadata(a: ClassicMemberMetadata | null, b: ClassicMemberMetadata | null): boolean {
  if (a === null || b === null) return a === b;
  if (a.sessionTimeoutMs !== b.sessionTimeoutMs || a.supportedProtocols.length !== b.supportedProtocols.length) return false;
  return a.supportedProtocols.every((p, i) => {
    const q = b.supportedProtocols[i];
    return q !== undefined && q.name === p.name && q.metadata.equals(p.metadata);
  });
}
