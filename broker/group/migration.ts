// Online migration between a classic group and a KIP-848 consumer group
// (Kafka's ConsumerGroup.fromClassicGroup / ClassicGroup.fromConsumerGroup and
// GroupMetadataManager's validateOnlineUpgrade / validateOnlineDowngrade):
// when the conversions are allowed under `group.consumer.migration.policy`,
// the group each side becomes, and the records that persist it. Pure.
//
// Upgrade: every classic member becomes a member of the consumer group at the
// classic generation, Stable, owning the partitions of its last classic
// assignment, which is also its target; the group and target epochs are the
// generation. Downgrade: the members left (all classic) form a Stable classic
// group at the group epoch, each assigned its target assignment, and the
// caller starts a rebalance.
import { ClassicGroup, GroupMember } from './classic-group.js';
import { decodeClassicAssignment, decodeClassicSubscription, consumerProtocolVersion, encodeClassicAssignment } from './consumer/classic-protocol.js';
import type { MigrationPolicy } from './consumer/config.js';
import { ConsumerGroup, newMember, type ConsumerMember } from './consumer/consumer-group.js';
import { currentAssignmentRecord, memberMetadataRecord } from './consumer/consumer-group-manager.js';
import type { ConsumerGroupRecord } from './consumer/consumer-records.js';
import type { ConsumerTopicsView } from './consumer/types.js';

export function isUpgradeEnabled(policy: MigrationPolicy): boolean {
  return policy === 'bidirectional' || policy === 'upgrade';
}

export function isDowngradeEnabled(policy: MigrationPolicy): boolean {
  return policy === 'bidirectional' || policy === 'downgrade';
}

/** Kafka's validateOnlineUpgrade: why a classic group with members cannot become a consumer group, or null. */
export function upgradeRefusal(group: ClassicGroup, policy: MigrationPolicy, consumerMaxSize: number): string | null {
  if (!isUpgradeEnabled(policy)) return 'the online upgrade is disabled (group.consumer.migration.policy)';
  if (!group.usesConsumerProtocol()) return 'the group does not use the consumer embedded protocol';
  if (group.size > consumerMaxSize) return 'the group size exceeds group.consumer.max.size';
  return null;
}

/** Kafka's validateOnlineDowngradeWithFencedMember: why fencing `memberId` does not downgrade the group, or null. */
export function downgradeRefusal(group: ConsumerGroup, memberId: string, policy: MigrationPolicy, classicMaxSize: number): string | null {
  if (!group.allMembersUseClassicProtocolExcept(memberId)) return 'members other than the fenced one use the consumer protocol';
  if (group.members.size <= 1) return 'the group would be empty';
  if (!isDowngradeEnabled(policy)) return 'the online downgrade is disabled (group.consumer.migration.policy)';
  if (group.members.size - 1 > classicMaxSize) return 'the group size exceeds group.max.size';
  return null;
}

/** Kafka's validateOnlineDowngradeWithReplacedMemberId: why a classic member replacing static member `replacedMemberId` does not downgrade the group, or null. */
export function replacementDowngradeRefusal(group: ConsumerGroup, replacedMemberId: string, policy: MigrationPolicy, classicMaxSize: number): string | null {
  if (!group.allMembersUseClassicProtocolExcept(replacedMemberId)) return 'members other than the replaced one use the consumer protocol';
  if (!isDowngradeEnabled(policy)) return 'the online downgrade is disabled (group.consumer.migration.policy)';
  if (group.members.size > classicMaxSize) return 'the group size exceeds group.max.size';
  return null;
}

/**
 * The consumer group a classic group becomes, and the records that create
 * it (member metadata, group epoch, targets, target epoch, current
 * assignments, in Kafka's order). Throws when a member's embedded
 * ConsumerProtocol subscription or assignment is malformed.
 */
export function consumerGroupFromClassic(classic: ClassicGroup, topics: ConsumerTopicsView): { group: ConsumerGroup; records: ConsumerGroupRecord[] } {
  const groupId = classic.groupId;
  const group = new ConsumerGroup(groupId);
  const epoch = classic.generationId;
  group.groupEpoch = epoch;
  group.targetEpoch = epoch;
  const members: ConsumerMember[] = [];
  for (const m of classic.allMembers()) {
    const protocol = classic.protocolName ?? m.protocols[0]?.name ?? '';
    const subscription = decodeClassicSubscription(m.metadataFor(protocol));
    const assigned = decodeClassicAssignment(m.assignment, topics);
    const member: ConsumerMember = {
      ...newMember(m.memberId),
      instanceId: m.groupInstanceId,
      rackId: subscription.rackId,
      clientId: m.clientId,
      clientHost: m.clientHost,
      subscribedTopicNames: [...subscription.topics],
      rebalanceTimeoutMs: m.rebalanceTimeoutMs,
      memberEpoch: epoch,
      previousMemberEpoch: epoch,
      state: 'stable',
      assigned: new Map([...assigned].map(([t, ps]) => [t, new Map([...ps].map((p) => [p, epoch]))])),
      classic: { sessionTimeoutMs: m.sessionTimeoutMs, supportedProtocols: m.protocols.map((p) => ({ name: p.name, metadata: p.metadata })) },
    };
    group.target.set(m.memberId, assigned);
    group.updateMember(member);
    members.push(member);
  }
  const records: ConsumerGroupRecord[] = [
    ...members.map((m) => memberMetadataRecord(groupId, m)),
    { type: 'groupMetadata', groupId, value: { epoch, metadataHash: group.metadataHash } },
    ...members.map((m): ConsumerGroupRecord => ({ type: 'targetMember', groupId, memberId: m.memberId, value: group.target.get(m.memberId) ?? new Map() })),
    { type: 'targetMetadata', groupId, value: { assignmentEpoch: epoch, timestampMs: 0 } },
    ...members.map((m) => currentAssignmentRecord(groupId, m)),
  ];
  return { group, records };
}

/**
 * The classic group a consumer group becomes once `leavingMemberId` (its
 * last consumer-protocol member) is fenced: Stable at the group epoch,
 * protocol type "consumer", each remaining member assigned its target in the
 * ConsumerProtocol version of its subscription.
 */
export function classicGroupFromConsumer(group: ConsumerGroup, leavingMemberId: string, topics: ConsumerTopicsView, now: number): ClassicGroup {
  const classic = new ClassicGroup(group.groupId, { state: 'Stable', now, generationId: group.groupEpoch, protocolType: 'consumer' });
  for (const m of group.members.values()) {
    if (m.memberId === leavingMemberId || m.classic === null) continue;
    classic.add(
      new GroupMember({
        memberId: m.memberId,
        groupInstanceId: m.instanceId,
        clientId: m.clientId,
        clientHost: m.clientHost,
        rebalanceTimeoutMs: m.rebalanceTimeoutMs,
        sessionTimeoutMs: m.classic.sessionTimeoutMs,
        protocolType: 'consumer',
        protocols: m.classic.supportedProtocols,
      }),
      null,
    );
  }
  classic.protocolName = classic.selectProtocol();
  classic.subscribedTopics = classic.computeSubscribedTopics();
  for (const m of classic.allMembers()) {
    const version = consumerProtocolVersion(m.metadataFor(classic.protocolName));
    m.assignment = encodeClassicAssignment(group.target.get(m.memberId) ?? new Map(), topics, version);
  }
  return classic;
}
