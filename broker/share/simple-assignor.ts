// The share groups' server-side assignor ("simple", Kafka's SimpleAssignor).
// Unlike a consumer group, a share-partition may have several members: every
// member gets partitions even when there are more members than partitions.
// With M members and P partitions of the subscribed topics, each partition is
// meant to be shared by S = ceil(M / P) members and the S * P slots are spread
// so that member counts differ by at most one. Balance comes first, then
// stickiness: a member keeps what it had while that fits the targets.
// Members with different subscriptions are balanced topic by topic among the
// members subscribed to each. Pure.

export interface AssignorMember {
  readonly memberId: string;
  /** Subscribed topic ids that exist. */
  readonly topicIds: readonly string[];
  /** The current assignment: topic id -> partitions. */
  readonly current: ReadonlyMap<string, readonly number[]>;
}

export type Assignment = Map<string, Map<string, number[]>>;

const key = (topicId: string, partition: number): string => `${topicId}:${partition}`;

/** Balances `partitions` (topic id, index) over `memberIds`, keeping current holdings where they fit. */
function balance(memberIds: readonly string[], partitions: readonly { topicId: string; partition: number }[], held: (memberId: string) => readonly string[], out: Assignment): void {
  const m = memberIds.length;
  const p = partitions.length;
  if (m === 0 || p === 0) return;
  const sharing = Math.ceil(m / p);
  const slots = sharing * p;
  // Quotas differ by at most one and add up to the slots.
  const quota = memberIds.map((_, i) => Math.ceil((slots * (i + 1)) / m) - Math.ceil((slots * i) / m));
  const owners = new Map<string, Set<number>>(partitions.map((tp) => [key(tp.topicId, tp.partition), new Set<number>()]));
  const given = memberIds.map(() => new Set<string>());
  memberIds.forEach((id, i) => {
    for (const k of held(id)) {
      const o = owners.get(k);
      if (o === undefined || o.size >= sharing || given[i]!.size >= quota[i]!) continue;
      o.add(i);
      given[i]!.add(k);
    }
  });
  // Fill the members below quota with the least shared partitions they do not hold.
  const order = partitions.map((tp) => key(tp.topicId, tp.partition));
  for (let i = 0; i < m; i++) {
    while (given[i]!.size < quota[i]!) {
      let best: string | null = null;
      for (const k of order) {
        const o = owners.get(k)!;
        if (o.has(i) || o.size >= sharing) continue;
        if (best === null || o.size < owners.get(best)!.size) best = k;
      }
      if (best === null) break; // every partition it could take is full: tolerate the imbalance
      owners.get(best)!.add(i);
      given[i]!.add(best);
    }
  }
  memberIds.forEach((id, i) => {
    let topics = out.get(id);
    if (topics === undefined) out.set(id, (topics = new Map()));
    for (const k of given[i]!) {
      const sep = k.lastIndexOf(':');
      const topicId = k.slice(0, sep);
      const list = topics.get(topicId) ?? [];
      list.push(Number(k.slice(sep + 1)));
      topics.set(topicId, list);
    }
  });
}

/** The target assignment of every member (members with no subscribed topic get an empty one); a topic's partitions by count, or the assignable ones. */
export function assignSimple(members: readonly AssignorMember[], partitionCount: (topicId: string) => number | readonly number[]): Assignment {
  const out: Assignment = new Map(members.map((mm) => [mm.memberId, new Map<string, number[]>()]));
  const sorted = [...members].sort((a, b) => (a.memberId < b.memberId ? -1 : a.memberId > b.memberId ? 1 : 0));
  const heldOf = (mm: AssignorMember | undefined, topics?: ReadonlySet<string>): string[] =>
    mm === undefined ? [] : [...mm.current].filter(([t]) => topics === undefined || topics.has(t)).flatMap(([t, ps]) => ps.map((p) => key(t, p)));
  const byId = new Map(sorted.map((mm) => [mm.memberId, mm]));
  const signature = (mm: AssignorMember): string => [...new Set(mm.topicIds)].sort().join(',');
  const homogeneous = new Set(sorted.map(signature)).size <= 1;
  const partitionsOf = (topicIds: Iterable<string>): { topicId: string; partition: number }[] =>
    [...topicIds].sort().flatMap((t) => {
      const c = partitionCount(t);
      const ps = typeof c === 'number' ? Array.from({ length: Math.max(0, c) }, (_, p) => p) : [...c].sort((x, y) => x - y);
      return ps.map((partition) => ({ topicId: t, partition }));
    });
  if (homogeneous) {
    const topics = new Set(sorted[0]?.topicIds ?? []);
    balance(sorted.map((mm) => mm.memberId), partitionsOf(topics), (id) => heldOf(byId.get(id), topics), out);
  } else {
    const allTopics = new Set(sorted.flatMap((mm) => mm.topicIds));
    for (const t of [...allTopics].sort()) {
      const subscribers = sorted.filter((mm) => mm.topicIds.includes(t)).map((mm) => mm.memberId);
      balance(subscribers, partitionsOf([t]), (id) => heldOf(byId.get(id), new Set([t])), out);
    }
  }
  for (const topics of out.values()) for (const ps of topics.values()) ps.sort((a, b) => a - b);
  return out;
}
