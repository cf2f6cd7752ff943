// What the assignor is given for a group (each member's subscribed topic ids,
// the subscribed topics' partition counts, the current target) and the hash of
// the subscribed topics' metadata whose change starts a new group epoch. Pure.
import type { Assignor, AssignorMember } from './assignors.js';
import type { ConsumerGroup, ConsumerMember, Target } from './consumer-group.js';
import type { ConsumerTopicsView } from './types.js';
import { groupHash, topicHash } from './metadata-hash.js';

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
 * The group's metadata hash as Kafka 4.1+ computes it (KIP-1101, see
 * metadata-hash.ts): over the subscribed topics that exist, their ids,
 * partition counts and partition racks. A group loaded from Kafka's records
 * keeps its epoch when nothing changed.
 */
export function metadataHashOf(names: readonly string[], topics: ConsumerTopicsView): bigint {
  const hashes = new Map<string, bigint>();
  for (const name of names) {
    const t = topics.byName(name);
    if (t === undefined) continue;
    const topic = { name, topicId: t.topicId, partitionCount: t.partitionCount, partitionRacks: (p: number) => topics.partitionRacks?.(name, p) ?? [] };
    hashes.set(name, topics.topicHashes?.hash(topic) ?? topicHash(topic));
  }
  return groupHash(hashes);
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
