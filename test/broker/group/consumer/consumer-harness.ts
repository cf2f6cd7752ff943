// A coordinator over a memory __consumer_offsets log with a fake topic view,
// under ManualClock/ManualScheduler, and a simulated KIP-848 client that
// owns what it was last given (revoking at once) and reports it back.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { ManualClock } from '../../../../broker/common/clock.js';
import { ManualScheduler } from '../../../../broker/common/scheduler.js';
import { GroupCoordinator } from '../../../../broker/group/group-coordinator.js';
import { MemoryOffsetsTopicLog } from '../../../../broker/group/offsets-topic.js';
import type { ConsumerGroupConfig } from '../../../../broker/group/consumer/config.js';
import type { GroupCoordinatorConfig } from '../../../../broker/group/config.js';
import type { ConsumerHeartbeatParams, ConsumerHeartbeatResult, ConsumerTopicsView } from '../../../../broker/group/consumer/types.js';
import { ErrorCode } from '../../../../broker/protocol/errors.js';

export { ErrorCode };

export class FakeTopics implements ConsumerTopicsView {
  private readonly topics = new Map<string, { topicId: string; partitionCount: number }>();
  add(name: string, partitionCount: number): string {
    // A valid Kafka Uuid (22 base64url characters) derived from the name.
    const topicId = createHash('sha256').update(name).digest().subarray(0, 16).toString('base64url');
    this.topics.set(name, { topicId, partitionCount });
    return topicId;
  }
  remove(name: string): void {
    this.topics.delete(name);
  }
  byName(name: string): { topicId: string; partitionCount: number } | undefined {
    return this.topics.get(name);
  }
  byId(topicId: string): { name: string; partitionCount: number } | undefined {
    for (const [name, t] of this.topics) if (t.topicId === topicId) return { name, partitionCount: t.partitionCount };
    return undefined;
  }
  names(): Iterable<string> {
    return [...this.topics.keys()];
  }
}

export interface ConsumerHarness {
  readonly clock: ManualClock;
  readonly log: MemoryOffsetsTopicLog;
  readonly topics: FakeTopics;
  readonly coordinator: GroupCoordinator;
  advance(ms: number): Promise<void>;
  /** A second coordinator replaying the same log (a restart). */
  restart(): Promise<ConsumerHarness>;
}

export function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

export async function startConsumerHarness(
  options: { config?: Partial<ConsumerGroupConfig>; coordinator?: Partial<GroupCoordinatorConfig>; log?: MemoryOffsetsTopicLog; topics?: FakeTopics; clock?: ManualClock } = {},
): Promise<ConsumerHarness> {
  const clock = options.clock ?? new ManualClock();
  const scheduler = new ManualScheduler(clock);
  const log = options.log ?? new MemoryOffsetsTopicLog();
  const topics = options.topics ?? new FakeTopics();
  let ids = 0;
  const coordinator = new GroupCoordinator({
    log,
    clock,
    scheduler,
    config: { offsetsTopicNumPartitions: 5, ...options.coordinator },
    consumerConfig: options.config ?? {},
    topics: () => topics,
    newMemberId: () => `generated-${++ids}`,
  });
  await coordinator.start();
  const h: ConsumerHarness = {
    clock,
    log,
    topics,
    coordinator,
    async advance(ms: number) {
      for (let left = ms; left > 0; left -= 100) {
        clock.advance(Math.min(left, 100));
        await settle();
      }
    },
    async restart() {
      await coordinator.close();
      return startConsumerHarness({ ...options, log, topics, clock });
    },
  };
  return h;
}

export function hb(overrides: Partial<ConsumerHeartbeatParams> & { memberId: string }): ConsumerHeartbeatParams {
  return {
    groupId: 'g',
    memberEpoch: 0,
    instanceId: null,
    rackId: null,
    rebalanceTimeoutMs: 30_000,
    subscribedTopicNames: ['t'],
    subscribedTopicRegex: null,
    serverAssignor: null,
    topicPartitions: [],
    clientId: 'client',
    clientHost: '/127.0.0.1',
    apiVersion: 1,
    ...overrides,
  };
}

/** A KIP-848 client: joins, then heartbeats with the partitions it owns; revokes and takes at once unless told to hold. */
export class SimulatedMember {
  epoch = 0;
  owned = new Map<string, Set<number>>();
  /** While true the member keeps partitions it was asked to revoke (a slow onPartitionsRevoked). */
  holding = false;
  private pending: Map<string, Set<number>> | null = null;
  last: ConsumerHeartbeatResult | null = null;

  constructor(
    private readonly h: { coordinator: GroupCoordinator },
    readonly memberId: string,
    private readonly extra: Partial<ConsumerHeartbeatParams> = {},
  ) {}

  /** True while it keeps partitions it was asked to give up. */
  get revoking(): boolean {
    return this.pending !== null;
  }

  ownedList(): { topicId: string; partitions: number[] }[] {
    return [...this.owned].map(([topicId, ps]) => ({ topicId, partitions: [...ps].sort((a, b) => a - b) }));
  }

  ownedCount(): number {
    let n = 0;
    for (const ps of this.owned.values()) n += ps.size;
    return n;
  }

  async heartbeat(extra: Partial<ConsumerHeartbeatParams> = {}): Promise<ConsumerHeartbeatResult> {
    if (this.pending !== null && !this.holding) this.apply(this.pending);
    const r = await this.h.coordinator.consumerGroupHeartbeat(
      hb({ memberId: this.memberId, memberEpoch: this.epoch, topicPartitions: this.epoch === 0 ? [] : this.ownedList(), ...this.extra, ...extra }),
    );
    this.last = r;
    if (r.errorCode === ErrorCode.FENCED_MEMBER_EPOCH || r.errorCode === ErrorCode.UNKNOWN_MEMBER_ID) {
      // Fenced: drop everything and rejoin from epoch 0.
      this.owned.clear();
      this.pending = null;
      this.epoch = 0;
      return r;
    }
    if (r.errorCode !== ErrorCode.NONE) return r;
    this.epoch = r.memberEpoch;
    if (r.assignment !== null) {
      const next = new Map(r.assignment.map((tp) => [tp.topicId, new Set(tp.partitions)]));
      if (this.holding) {
        // Takes only what is new while keeping what it should give up.
        for (const [t, ps] of next) for (const p of ps) (this.owned.get(t) ?? this.owned.set(t, new Set()).get(t)!).add(p);
        this.pending = next;
      } else {
        this.apply(next);
      }
    }
    return r;
  }

  private apply(next: Map<string, Set<number>>): void {
    this.owned = new Map([...next].filter(([, ps]) => ps.size > 0).map(([t, ps]) => [t, new Set(ps)]));
    this.pending = null;
  }

  async leave(): Promise<ConsumerHeartbeatResult> {
    const r = await this.h.coordinator.consumerGroupHeartbeat(hb({ memberId: this.memberId, memberEpoch: -1, topicPartitions: null, ...this.extra }));
    this.owned.clear();
    this.epoch = 0;
    return r;
  }
}

/** No partition is owned by two of `members` (the clients' view). */
export function assertOneOwner(members: readonly SimulatedMember[], context = ''): void {
  const owner = new Map<string, string>();
  for (const m of members) {
    for (const [t, ps] of m.owned) {
      for (const p of ps) {
        const k = `${t}:${p}`;
        const other = owner.get(k);
        assert.equal(other, undefined, `${k} owned by ${other ?? ''} and ${m.memberId} ${context}`);
        owner.set(k, m.memberId);
      }
    }
  }
}
