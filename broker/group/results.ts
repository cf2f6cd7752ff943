// Answers and records the rebalance protocol builds: error answers for
// JoinGroup/SyncGroup, and the GroupMetadata records Kafka writes for a group.
import { EMPTY_ASSIGNMENT, type ClassicGroup } from './classic-group.js';
import type { CoordinatorRecord } from './group-records.js';
import { ErrorCode } from '../protocol/errors.js';
import type { DescribedGroup, JoinGroupResult, SyncGroupResult } from './types.js';

export function joinError(memberId: string, errorCode: number): JoinGroupResult {
  return {
    errorCode,
    generationId: -1,
    protocolType: null,
    protocolName: null,
    leader: '',
    skipAssignment: false,
    memberId,
    members: [],
  };
}

export function syncError(errorCode: number): SyncGroupResult {
  return { errorCode, protocolType: null, protocolName: null, assignment: EMPTY_ASSIGNMENT };
}

/** The group metadata record Kafka writes for a group, with the given assignment (or the members' own). */
export function groupMetadataRecord(group: ClassicGroup, assignment?: ReadonlyMap<string, Buffer>): CoordinatorRecord {
  const protocol = group.protocolName;
  const members = group.allMembers().map((m) => {
    if (protocol === null) throw new Error(`Group ${group.groupId} has members but no protocol`);
    return {
      memberId: m.memberId,
      groupInstanceId: m.groupInstanceId,
      clientId: m.clientId,
      clientHost: m.clientHost,
      rebalanceTimeoutMs: m.rebalanceTimeoutMs,
      sessionTimeoutMs: m.sessionTimeoutMs,
      subscription: m.metadataFor(protocol),
      assignment: assignment?.get(m.memberId) ?? m.assignment,
    };
  });
  return {
    type: 'groupMetadata',
    groupId: group.groupId,
    value: {
      protocolType: group.protocolType ?? '',
      generationId: group.generationId,
      protocolName: protocol,
      leaderId: group.leaderId,
      currentStateTimestampMs: group.stateTimestamp,
      members,
    },
  };
}

export function emptyGroupRecord(group: ClassicGroup): CoordinatorRecord {
  return {
    type: 'groupMetadata',
    groupId: group.groupId,
    value: {
      protocolType: '',
      generationId: 0,
      protocolName: null,
      leaderId: null,
      currentStateTimestampMs: group.stateTimestamp,
      members: [],
    },
  };
}

/** DescribeGroups of a classic group: member metadata and assignments only while Stable, as Kafka. */
export function describeClassicGroup(group: ClassicGroup): DescribedGroup {
  const stable = group.state === 'Stable' && group.protocolName !== null;
  const protocol = group.protocolName ?? '';
  return {
    errorCode: ErrorCode.NONE,
    groupId: group.groupId,
    groupState: group.state,
    protocolType: group.protocolType ?? '',
    protocolData: stable ? protocol : '',
    members: group.allMembers().map((m) => ({
      memberId: m.memberId,
      groupInstanceId: m.groupInstanceId,
      clientId: m.clientId,
      clientHost: m.clientHost,
      memberMetadata: stable ? m.metadataFor(protocol) : Buffer.alloc(0),
      memberAssignment: stable ? m.assignment : Buffer.alloc(0),
    })),
  };
}
