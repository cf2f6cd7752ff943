// Answers about consumer groups for the group APIs: ConsumerGroupDescribe,
// the classic DescribeGroups view of a consumer group, and Kafka's offset
// commit/fetch checks of member ids and epochs (ConsumerGroup.validateOffset*,
// with KIP-1251's per-partition assignment epochs for a lagging commit). Pure.
import { ErrorCode } from '../../protocol/errors.js';
import { Writer } from '../../protocol/writer.js';
import { encodeConsumerProtocolSubscription } from '../../protocol/messages/records/consumer-protocol-subscription.js';
import { encodeConsumerProtocolAssignment } from '../../protocol/messages/records/consumer-protocol-assignment.js';
import type { DescribedGroup } from '../types.js';
import type { Assignment, ConsumerGroup, Target } from './consumer-group.js';
import { memberTopicNames } from './target.js';
import type { ConsumerTopicsView, DescribedConsumerGroup, DescribedTopicPartitions } from './types.js';

function described(t: Target, topics: ConsumerTopicsView): DescribedTopicPartitions[] {
  const out: DescribedTopicPartitions[] = [];
  for (const [topicId, ps] of t) {
    const name = topics.byId(topicId)?.name;
    // A deleted topic's partitions are not shown, as in Kafka.
    if (name === undefined) continue;
    out.push({ topicId, topicName: name, partitions: [...ps].sort((a, b) => a - b) });
  }
  return out.sort((a, b) => (a.topicName < b.topicName ? -1 : a.topicName > b.topicName ? 1 : 0));
}

function partitionSet(a: Assignment): Target {
  return new Map([...a].map(([t, ps]) => [t, new Set(ps.keys())]));
}

export function describeConsumerGroup(group: ConsumerGroup, assignorName: string, topics: ConsumerTopicsView): DescribedConsumerGroup {
  return {
    errorCode: ErrorCode.NONE,
    errorMessage: null,
    groupId: group.groupId,
    groupState: group.state,
    groupEpoch: group.groupEpoch,
    assignmentEpoch: group.targetEpoch,
    assignorName,
    members: [...group.members.values()].map((m) => ({
      memberId: m.memberId,
      instanceId: m.instanceId,
      rackId: m.rackId,
      memberEpoch: m.memberEpoch,
      clientId: m.clientId,
      clientHost: m.clientHost,
      subscribedTopicNames: [...m.subscribedTopicNames],
      subscribedTopicRegex: m.subscribedTopicRegex,
      assignment: described(partitionSet(m.assigned), topics),
      targetAssignment: described(group.target.get(m.memberId) ?? new Map(), topics),
      memberType: m.classic === null ? 1 : 0,
    })),
  };
}

export function consumerGroupNotFound(groupId: string, message: string): DescribedConsumerGroup {
  return { errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: message, groupId, groupState: 'Dead', groupEpoch: 0, assignmentEpoch: 0, assignorName: '', members: [] };
}

/**
 * DescribeGroups of a consumer group, as Kafka answers it: protocol type
 * "consumer", the assignor as protocol data, and each member's subscription
 * and assignment in the classic ConsumerProtocol encodings (version 0).
 */
export function describeAsClassic(group: ConsumerGroup, assignorName: string, topics: ConsumerTopicsView): DescribedGroup {
  return {
    errorCode: ErrorCode.NONE,
    groupId: group.groupId,
    groupState: group.state,
    protocolType: 'consumer',
    protocolData: assignorName,
    members: [...group.members.values()].map((m) => {
      const sub = new Writer(64);
      sub.writeInt16(0);
      encodeConsumerProtocolSubscription(sub, 0, { topics: memberTopicNames(group, m).sort(), userData: null, ownedPartitions: [], generationId: -1, rackId: null });
      const asg = new Writer(64);
      asg.writeInt16(0);
      encodeConsumerProtocolAssignment(asg, 0, {
        assignedPartitions: described(partitionSet(m.assigned), topics).map((t) => ({ topic: t.topicName, partitions: t.partitions })),
        userData: null,
      });
      return {
        memberId: m.memberId,
        groupInstanceId: m.instanceId,
        clientId: m.clientId,
        clientHost: m.clientHost,
        memberMetadata: sub.toBuffer(),
        memberAssignment: asg.toBuffer(),
      };
    }),
  };
}

/**
 * Kafka's ConsumerGroup.validateOffsetCommit: NONE or the code refusing the
 * whole commit. `partitions` are the committed (topic id, partition) pairs
 * (unknown topics are left out by the caller: they are refused per partition).
 */
export function validateConsumerOffsetCommit(
  group: ConsumerGroup,
  p: { readonly memberId: string; readonly memberEpoch: number; readonly apiVersion: number; readonly transactional: boolean },
  partitions: readonly { readonly topicId: string; readonly partition: number }[],
): number {
  // Admin tools and consumers outside group management commit into an empty group.
  if (p.memberEpoch < 0 && group.members.size === 0) return ErrorCode.NONE;
  if (p.transactional && p.memberEpoch === -1 && p.memberId === '') return ErrorCode.NONE;
  const member = group.members.get(p.memberId);
  if (member === undefined) return ErrorCode.UNKNOWN_MEMBER_ID;
  // A classic member commits with its generation (its member epoch), on any OffsetCommit version.
  if (member.classic !== null) return p.memberEpoch === member.memberEpoch ? ErrorCode.NONE : ErrorCode.ILLEGAL_GENERATION;
  if (!p.transactional && p.apiVersion < 9) return ErrorCode.UNSUPPORTED_VERSION;
  if (p.memberEpoch === member.memberEpoch) return ErrorCode.NONE;
  if (p.memberEpoch > member.memberEpoch) return ErrorCode.STALE_MEMBER_EPOCH;
  // KIP-1251: a lagging epoch may commit partitions the member still holds since then.
  for (const x of partitions) {
    const at = member.assigned.get(x.topicId)?.get(x.partition) ?? member.pendingRevocation.get(x.topicId)?.get(x.partition);
    if (at === undefined || p.memberEpoch < at) return ErrorCode.STALE_MEMBER_EPOCH;
  }
  return ErrorCode.NONE;
}

/** Kafka's ConsumerGroup.validateOffsetFetch (OffsetFetch v9+ member id and epoch). */
export function validateConsumerOffsetFetch(group: ConsumerGroup, memberId: string | null, memberEpoch: number): number {
  if ((memberId === null || memberId === '') && memberEpoch < 0) return ErrorCode.NONE;
  const member = memberId === null ? undefined : group.members.get(memberId);
  if (member === undefined) return ErrorCode.UNKNOWN_MEMBER_ID;
  if (memberEpoch !== member.memberEpoch) return member.classic !== null ? ErrorCode.ILLEGAL_GENERATION : ErrorCode.STALE_MEMBER_EPOCH;
  return ErrorCode.NONE;
}

/** The (topic id, partition) pairs of a commit's topics that exist. */
export function committedPartitionIds(
  topics: ConsumerTopicsView,
  committed: readonly { readonly name: string; readonly partitions: readonly { readonly partitionIndex: number }[] }[],
): { topicId: string; partition: number }[] {
  return committed.flatMap((t) => {
    const topicId = topics.byName(t.name)?.topicId;
    return topicId === undefined ? [] : t.partitions.map((x) => ({ topicId, partition: x.partitionIndex }));
  });
}
