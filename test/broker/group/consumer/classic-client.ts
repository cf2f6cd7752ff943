// A simulated classic consumer with a cooperative assignor, as the Java
// ClassicKafkaConsumer behaves against a consumer group during an online
// migration: JoinGroup with its owned partitions in a v1 ConsumerProtocol
// subscription, SyncGroup, then it owns what it was given (revoking at once)
// and rejoins when it had to revoke or a heartbeat says REBALANCE_IN_PROGRESS.
// In a classic group, the leader's assignment comes from the test.
import assert from 'node:assert/strict';
import { Reader } from '../../../../broker/protocol/reader.js';
import { Writer } from '../../../../broker/protocol/writer.js';
import { encodeConsumerProtocolSubscription } from '../../../../broker/protocol/messages/records/consumer-protocol-subscription.js';
import { decodeConsumerProtocolAssignment, encodeConsumerProtocolAssignment } from '../../../../broker/protocol/messages/records/consumer-protocol-assignment.js';
import type { GroupCoordinator } from '../../../../broker/group/group-coordinator.js';
import type { JoinGroupResult } from '../../../../broker/group/types.js';
import { ErrorCode } from '../../../../broker/protocol/errors.js';

export function cooperativeSubscription(topics: string[], owned: ReadonlyMap<string, ReadonlySet<number>>): Buffer {
  const w = new Writer(64);
  w.writeInt16(1);
  encodeConsumerProtocolSubscription(w, 1, {
    topics,
    userData: null,
    ownedPartitions: [...owned].map(([topic, ps]) => ({ topic, partitions: [...ps].sort((a, b) => a - b) })),
    generationId: -1,
    rackId: null,
  });
  return w.toBuffer();
}

export function assignmentBytes(byTopic: Record<string, number[]>, version = 1): Buffer {
  const w = new Writer(64);
  w.writeInt16(version);
  encodeConsumerProtocolAssignment(w, version, { assignedPartitions: Object.entries(byTopic).map(([topic, partitions]) => ({ topic, partitions })), userData: null });
  return w.toBuffer();
}

export function decodeAssignment(bytes: Buffer): Map<string, Set<number>> {
  const out = new Map<string, Set<number>>();
  if (bytes.length === 0) return out;
  const r = new Reader(bytes);
  const version = r.readInt16();
  for (const tp of decodeConsumerProtocolAssignment(r, Math.min(version, 3)).assignedPartitions) out.set(tp.topic, new Set(tp.partitions));
  return out;
}

export class ClassicClient {
  memberId = '';
  generation = -1;
  owned = new Map<string, Set<number>>();
  needsRejoin = true;
  lastJoin: JoinGroupResult | null = null;
  /** group.instance.id (static membership); null for a dynamic member. */
  instanceId: string | null = null;

  constructor(
    private readonly c: { coordinator: GroupCoordinator },
    readonly name: string,
    private readonly topics: string[] = ['t'],
    private readonly sessionTimeoutMs = 10_000,
    readonly groupId = 'g',
  ) {}

  ownedCount(): number {
    let n = 0;
    for (const ps of this.owned.values()) n += ps.size;
    return n;
  }

  /** JoinGroup (with the KIP-394 round trip); resolves when the coordinator answers. */
  async join(): Promise<JoinGroupResult> {
    const params = () => ({
      groupId: this.groupId,
      memberId: this.memberId,
      groupInstanceId: this.instanceId,
      protocolType: 'consumer',
      protocols: [{ name: 'cooperative-sticky', metadata: cooperativeSubscription(this.topics, this.owned) }],
      sessionTimeoutMs: this.sessionTimeoutMs,
      rebalanceTimeoutMs: 30_000,
      clientId: this.name,
      clientHost: '/127.0.0.1',
      requireKnownMemberId: true,
      supportsSkipAssignment: true,
    });
    let r = await this.c.coordinator.joinGroup(params());
    if (r.errorCode === ErrorCode.MEMBER_ID_REQUIRED) {
      this.memberId = r.memberId;
      r = await this.c.coordinator.joinGroup(params());
    }
    this.lastJoin = r;
    if (r.errorCode === ErrorCode.NONE) {
      this.memberId = r.memberId;
      this.generation = r.generationId;
    } else if (r.errorCode === ErrorCode.UNKNOWN_MEMBER_ID || r.errorCode === ErrorCode.ILLEGAL_GENERATION) {
      this.lose();
    }
    return r;
  }

  /** SyncGroup; applies the assignment cooperatively (revoked partitions go, then a rejoin is due). */
  async sync(leaderAssignments: { memberId: string; assignment: Buffer }[] = []): Promise<number> {
    const r = await this.c.coordinator.syncGroup({
      groupId: this.groupId,
      generationId: this.generation,
      memberId: this.memberId,
      groupInstanceId: this.instanceId,
      protocolType: 'consumer',
      protocolName: 'cooperative-sticky',
      assignments: leaderAssignments,
    });
    if (r.errorCode !== ErrorCode.NONE) {
      this.needsRejoin = true;
      if (r.errorCode === ErrorCode.UNKNOWN_MEMBER_ID || r.errorCode === ErrorCode.ILLEGAL_GENERATION) this.lose();
      return r.errorCode;
    }
    const next = decodeAssignment(r.assignment);
    let revoked = false;
    for (const [t, ps] of this.owned) for (const p of ps) if (next.get(t)?.has(p) !== true) revoked = true;
    this.owned = next;
    this.needsRejoin = revoked;
    return ErrorCode.NONE;
  }

  heartbeat(): number {
    const code = this.c.coordinator.heartbeat({ groupId: this.groupId, generationId: this.generation, memberId: this.memberId, groupInstanceId: this.instanceId });
    if (code === ErrorCode.REBALANCE_IN_PROGRESS) this.needsRejoin = true;
    if (code === ErrorCode.UNKNOWN_MEMBER_ID || code === ErrorCode.ILLEGAL_GENERATION) {
      this.lose();
      this.needsRejoin = true;
    }
    return code;
  }

  /** One step against a consumer group: heartbeat, and rejoin + sync when due. */
  async step(): Promise<void> {
    if (!this.needsRejoin) this.heartbeat();
    if (!this.needsRejoin) return;
    const j = await this.join();
    if (j.errorCode !== ErrorCode.NONE) return;
    await this.sync();
  }

  async leave(): Promise<number> {
    const r = await this.c.coordinator.leaveGroup(this.groupId, [{ memberId: this.memberId, groupInstanceId: null }]);
    this.owned.clear();
    return r.members[0]?.errorCode ?? r.errorCode;
  }

  /** Partitions lost (ILLEGAL_GENERATION / UNKNOWN_MEMBER_ID): dropped without a commit, the generation reset. */
  private lose(): void {
    this.owned.clear();
    this.generation = -1;
    if (this.lastJoin?.errorCode === ErrorCode.UNKNOWN_MEMBER_ID) this.memberId = '';
  }
}

/** No partition (topic name, partition) owned by two clients. */
export function assertSingleOwners(owners: readonly { name: string; owned: ReadonlyMap<string, ReadonlySet<number>> }[], context = ''): void {
  const seen = new Map<string, string>();
  for (const o of owners) {
    for (const [t, ps] of o.owned) {
      for (const p of ps) {
        const k = `${t}-${p}`;
        assert.equal(seen.get(k), undefined, `${k} owned by ${seen.get(k) ?? ''} and ${o.name} ${context}`);
        seen.set(k, o.name);
      }
    }
  }
}
