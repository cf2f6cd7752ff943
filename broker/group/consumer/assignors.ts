// The server-side assignors of KIP-848 (`group.consumer.assignors`): pure
// functions from the members' subscriptions, the subscribed topics' partition
// counts and the current target to the next target assignment.
//
// `uniform` (Kafka's UniformAssignor, the default): every partition of the
// subscribed topics goes to one subscribed member, the counts differ by at
// most one between members of the same subscription, and a partition stays
// with its current owner whenever balance allows (stickiness, so fewer
// partitions move in a rebalance). For heterogeneous subscriptions the
// balance is best effort, like Kafka's general builder: no member can take a
// partition from a topic it does not subscribe to.
//
// `range` (Kafka's RangeAssignor): per topic, the subscribed members sorted
// by member id take contiguous ranges, the first `partitions % members` one
// partition more. Kafka's version also keeps ranges sticky; ours recomputes
// them from the sorted members (the same answer whenever membership is stable).
//
// Racks: neither assignor uses the members' RackId nor the partitions' replica
// racks, as in Kafka 4.3.1, whose UniformAssignor and RangeAssignor lost their
// rack awareness in 3.8 (KAFKA-16694); `rackId` is here for the input's
// completeness (Kafka's MemberSubscription carries it for custom assignors).

/** topic id -> partitions. */
export type TargetPartitions = ReadonlyMap<string, ReadonlySet<number>>;

export interface AssignorMember {
  readonly memberId: string;
  readonly instanceId: string | null;
  readonly rackId: string | null;
  /** Subscribed topic ids that exist. */
  readonly subscribedTopicIds: ReadonlySet<string>;
  /** The member's target in the previous target assignment. */
  readonly currentTarget: TargetPartitions;
}

export interface AssignorInput {
  readonly members: readonly AssignorMember[];
  /** topic id -> partition count, for every subscribed topic that exists. */
  readonly partitionCounts: ReadonlyMap<string, number>;
}

export type Assignor = (input: AssignorInput) => Map<string, Map<string, Set<number>>>;

export const UNIFORM_ASSIGNOR = 'uniform';
export const RANGE_ASSIGNOR = 'range';

/** Kafka accepts the class names in `group.consumer.assignors` too. */
const CLASS_NAMES: Readonly<Record<string, string>> = {
  'org.apache.kafka.coordinator.group.assignor.UniformAssignor': UNIFORM_ASSIGNOR,
  'org.apache.kafka.coordinator.group.assignor.RangeAssignor': RANGE_ASSIGNOR,
};

export function assignorName(configured: string): string | null {
  const n = configured.trim();
  if (n === UNIFORM_ASSIGNOR || n === RANGE_ASSIGNOR) return n;
  return CLASS_NAMES[n] ?? null;
}

export const assignors: ReadonlyMap<string, Assignor> = new Map<string, Assignor>([
  [UNIFORM_ASSIGNOR, uniformAssign],
  [RANGE_ASSIGNOR, rangeAssign],
]);

const tpKey = (topicId: string, partition: number): string => `${topicId}:${partition}`;

function emptyResult(members: readonly AssignorMember[]): Map<string, Map<string, Set<number>>> {
  return new Map(members.map((m) => [m.memberId, new Map<string, Set<number>>()]));
}

function add(target: Map<string, Set<number>>, topicId: string, partition: number): void {
  let s = target.get(topicId);
  if (s === undefined) {
    s = new Set();
    target.set(topicId, s);
  }
  s.add(partition);
}

function removeFrom(target: Map<string, Set<number>>, topicId: string, partition: number): void {
  const s = target.get(topicId);
  if (s === undefined) return;
  s.delete(partition);
  if (s.size === 0) target.delete(topicId);
}

export function uniformAssign(input: AssignorInput): Map<string, Map<string, Set<number>>> {
  const result = emptyResult(input.members);
  const counts = new Map<string, number>(input.members.map((m) => [m.memberId, 0]));
  const owner = new Map<string, string>();
  // Every partition with the members that may take it, fewest candidates first
  // (they are the hardest to place), then by topic and partition for determinism.
  const partitions: { topicId: string; partition: number; candidates: string[] }[] = [];
  for (const [topicId, count] of [...input.partitionCounts].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))) {
    const candidates = input.members.filter((m) => m.subscribedTopicIds.has(topicId)).map((m) => m.memberId).sort();
    if (candidates.length === 0) continue;
    for (let p = 0; p < count; p++) partitions.push({ topicId, partition: p, candidates });
  }
  const total = partitions.length;
  const subscribers = input.members.filter((m) => m.subscribedTopicIds.size > 0).length;
  // Each member's fair share if all subscriptions were equal; caps stickiness.
  const quota = subscribers === 0 ? 0 : Math.ceil(total / subscribers);
  // 1. Sticky: keep current owners while they subscribe and stay within the quota.
  for (const m of input.members) {
    for (const [topicId, ps] of m.currentTarget) {
      if (!m.subscribedTopicIds.has(topicId)) continue;
      const count = input.partitionCounts.get(topicId) ?? 0;
      for (const p of [...ps].sort((a, b) => a - b)) {
        if (p >= count || owner.has(tpKey(topicId, p))) continue;
        if ((counts.get(m.memberId) ?? 0) >= quota) break;
        owner.set(tpKey(topicId, p), m.memberId);
        add(result.get(m.memberId)!, topicId, p);
        counts.set(m.memberId, (counts.get(m.memberId) ?? 0) + 1);
      }
    }
  }
  // 2. The rest, each to its least loaded candidate.
  const ordered = [...partitions].sort((a, b) => a.candidates.length - b.candidates.length);
  for (const x of ordered) {
    if (owner.has(tpKey(x.topicId, x.partition))) continue;
    const pick = leastLoaded(x.candidates, counts);
    owner.set(tpKey(x.topicId, x.partition), pick);
    add(result.get(pick)!, x.topicId, x.partition);
    counts.set(pick, (counts.get(pick) ?? 0) + 1);
  }
  // 3. Balance: move a partition from a member to a candidate with two fewer,
  // until no such move exists (terminates: the sum of squares falls each move).
  let moved = true;
  while (moved) {
    moved = false;
    for (const x of partitions) {
      const from = owner.get(tpKey(x.topicId, x.partition));
      if (from === undefined) continue;
      const to = leastLoaded(x.candidates, counts);
      if ((counts.get(from) ?? 0) - (counts.get(to) ?? 0) < 2) continue;
      owner.set(tpKey(x.topicId, x.partition), to);
      removeFrom(result.get(from)!, x.topicId, x.partition);
      add(result.get(to)!, x.topicId, x.partition);
      counts.set(from, (counts.get(from) ?? 0) - 1);
      counts.set(to, (counts.get(to) ?? 0) + 1);
      moved = true;
    }
  }
  return result;
}

function leastLoaded(candidates: readonly string[], counts: ReadonlyMap<string, number>): string {
  let best = candidates[0]!;
  for (const c of candidates) if ((counts.get(c) ?? 0) < (counts.get(best) ?? 0)) best = c;
  return best;
}

export function rangeAssign(input: AssignorInput): Map<string, Map<string, Set<number>>> {
  const result = emptyResult(input.members);
  for (const [topicId, count] of input.partitionCounts) {
    const members = input.members.filter((m) => m.subscribedTopicIds.has(topicId)).map((m) => m.memberId).sort();
    if (members.length === 0) continue;
    const base = Math.floor(count / members.length);
    const extra = count % members.length;
    let next = 0;
    members.forEach((memberId, i) => {
      const n = base + (i < extra ? 1 : 0);
      for (let k = 0; k < n; k++) add(result.get(memberId)!, topicId, next++);
    });
  }
  return result;
}
