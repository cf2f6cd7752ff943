// What the assignor is given for a group (each member's subscribed topic ids,
// the subscribed topics' partition counts, the current target) and the hash of
// the subscribed topics' metadata whose change starts a new group epoch. Pure.
import type { Assignor, AssignorMember } from './assignors.js';
import type { ConsumerGroup, ConsumerMember, Target } from './consumer-group.js';
import type { ConsumerTopicsView } from './types.js';

/** The topic names a member subscribes to: its names and what its regex resolved to. */
export function memberTopicNames(group: ConsumerGroup, m: ConsumerMember): string[] {
  if (m.subscribedTopicRegex === null) return [...m.subscribedTopicNames];
  const resolved = group.resolvedRegexes.get(m.subscribedTopicRegex)?.topics ?? [];
  return [...new Set([...m.subscribedTopicNames, ...resolved])];
}

export function subscribedTopicNamesOf(group: ConsumerGroup): string[] {
  const names = new Set<string>();
  for (const m of group.members.values()) for (const n of memberTopicNames(group, m)) names.add(n);
  return [...names].sort();
}

export function subscribedTopicIdsOf(group: ConsumerGroup, m: ConsumerMember, topics: ConsumerTopicsView): Set<string> {
  const ids = new Set<string>();
  for (const n of memberTopicNames(group, m)) {
    const t = topics.byName(n);
    if (t !== undefined) ids.add(t.topicId);
  }
  return ids;
}

/**
 * FNV-1a (64 bit) over the subscribed topics' names, ids and partition
 * counts. Kafka hashes more (racks) with another function: the value is
 * only compared with itself, so a group loaded from Kafka's records is
 * simply re-assigned once.
 */
export function metadataHashOf(names: readonly string[], topics: ConsumerTopicsView): bigint {
  const mask = (1n << 64n) - 1n;
  let h = 0xcbf29ce484222325n;
  const feed = (s: string): void => {
    for (const b of Buffer.from(s, 'utf8')) {
      h ^= BigInt(b);
      h = (h * 0x100000001b3n) & mask;
    }
  };
  for (const n of names) {
    const t = topics.byName(n);
    if (t === undefined) continue;
    feed(`${n}\u0000${t.topicId}\u0000${t.partitionCount}\u0001`);
  }
  // As a signed int64, the record's type.
  return BigInt.asIntN(64, h);
}

export function computeTargetAssignment(group: ConsumerGroup, topics: ConsumerTopicsView, assignor: Assignor): Map<string, Target> {
  const partitionCounts = new Map<string, number>();
  const members: AssignorMember[] = [];
  for (const m of group.members.values()) {
    const ids = subscribedTopicIdsOf(group, m, topics);
    for (const id of ids) {
      const t = topics.byId(id);
      if (t !== undefined) partitionCounts.set(id, t.partitionCount);
    }
    members.push({
      memberId: m.memberId,
      instanceId: m.instanceId,
      rackId: m.rackId,
      subscribedTopicIds: ids,
      currentTarget: group.target.get(m.memberId) ?? new Map(),
    });
  }
  return assignor({ members, partitionCounts });
}
