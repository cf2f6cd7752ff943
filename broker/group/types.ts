// The group coordinator's API in plain data, independent of wire versions.
// Handlers translate requests of any version into these shapes and back;
// every failure is a Kafka error code (`ErrorCode`), never an exception.

export interface GroupProtocol {
  readonly name: string;
  readonly metadata: Buffer;
}

export interface JoinGroupParams {
  readonly groupId: string;
  /** '' when the member does not know its id yet. */
  readonly memberId: string;
  readonly groupInstanceId: string | null;
  readonly protocolType: string;
  readonly protocols: readonly GroupProtocol[];
  readonly sessionTimeoutMs: number;
  /** JoinGroup v0 has none: pass the session timeout, as Kafka does. */
  readonly rebalanceTimeoutMs: number;
  readonly clientId: string;
  readonly clientHost: string;
  /** JoinGroup v4+: an unknown dynamic member first gets MEMBER_ID_REQUIRED and its id. */
  readonly requireKnownMemberId: boolean;
  /** JoinGroup v9+: a rejoining static leader is told to skip the assignment. */
  readonly supportsSkipAssignment: boolean;
  readonly reason?: string | null;
}

export interface JoinGroupMember {
  readonly memberId: string;
  readonly groupInstanceId: string | null;
  readonly metadata: Buffer;
}

export interface JoinGroupResult {
  errorCode: number;
  generationId: number;
  protocolType: string | null;
  protocolName: string | null;
  leader: string;
  skipAssignment: boolean;
  memberId: string;
  /** Every member's metadata for the selected protocol; only the leader gets them. */
  members: JoinGroupMember[];
}

export interface SyncGroupParams {
  readonly groupId: string;
  readonly generationId: number;
  readonly memberId: string;
  readonly groupInstanceId: string | null;
  /** SyncGroup v5+; null (older versions) skips the consistency check. */
  readonly protocolType: string | null;
  readonly protocolName: string | null;
  readonly assignments: readonly { readonly memberId: string; readonly assignment: Buffer }[];
}

export interface SyncGroupResult {
  errorCode: number;
  protocolType: string | null;
  protocolName: string | null;
  assignment: Buffer;
}

export interface HeartbeatParams {
  readonly groupId: string;
  readonly generationId: number;
  readonly memberId: string;
  readonly groupInstanceId: string | null;
}

export interface LeavingMember {
  readonly memberId: string;
  readonly groupInstanceId: string | null;
  readonly reason?: string | null;
}

export interface LeaveGroupResult {
  /** Group-level error (unknown group, dead group, loading); NONE when members carry their own. */
  errorCode: number;
  members: { memberId: string; groupInstanceId: string | null; errorCode: number }[];
}

export interface OffsetCommitPartitionParams {
  readonly partitionIndex: number;
  readonly committedOffset: bigint;
  /** -1 when unknown. */
  readonly committedLeaderEpoch: number;
  readonly committedMetadata: string | null;
}

export interface OffsetCommitParams {
  readonly groupId: string;
  /** -1 for commits from outside group management (admin tools, kcat, assign()). */
  readonly generationId: number;
  readonly memberId: string;
  readonly groupInstanceId: string | null;
  /** OffsetCommit v2-4; -1 means the broker's `offsets.retention.minutes`. */
  readonly retentionTimeMs: number;
  readonly topics: readonly { readonly name: string; readonly partitions: readonly OffsetCommitPartitionParams[] }[];
  /** OffsetCommit v9+: a commit with a generation to an unknown group gets GROUP_ID_NOT_FOUND, else ILLEGAL_GENERATION. */
  readonly groupIdNotFoundSupported: boolean;
  /** The OffsetCommit version (consumer group members must use v9+); absent: 9. */
  readonly apiVersion?: number;
}

export interface OffsetCommitResult {
  topics: { name: string; partitions: { partitionIndex: number; errorCode: number }[] }[];
}

export interface OffsetFetchGroupParams {
  readonly groupId: string;
  /** null: every committed offset of the group. */
  readonly topics: readonly { readonly name: string; readonly partitionIndexes: readonly number[] }[] | null;
  /** OffsetFetch v9+: a consumer group member's id and epoch, checked against the group. */
  readonly memberId?: string | null;
  readonly memberEpoch?: number;
}

export interface OffsetFetchPartitionResult {
  partitionIndex: number;
  /** -1 when nothing is committed. */
  committedOffset: bigint;
  committedLeaderEpoch: number;
  metadata: string;
  errorCode: number;
}

export interface OffsetFetchGroupResult {
  groupId: string;
  errorCode: number;
  topics: { name: string; partitions: OffsetFetchPartitionResult[] }[];
}

export interface DescribedGroupMember {
  memberId: string;
  groupInstanceId: string | null;
  clientId: string;
  clientHost: string;
  memberMetadata: Buffer;
  memberAssignment: Buffer;
}

export interface DescribedGroup {
  errorCode: number;
  groupId: string;
  groupState: string;
  protocolType: string;
  protocolData: string;
  members: DescribedGroupMember[];
}

export interface ListedGroup {
  groupId: string;
  protocolType: string;
  groupState: string;
  groupType: string;
}

export interface ListGroupsResult {
  errorCode: number;
  groups: ListedGroup[];
}

export interface DeleteGroupsResult {
  groupId: string;
  errorCode: number;
}

export interface OffsetDeleteParams {
  readonly groupId: string;
  readonly topics: readonly { readonly name: string; readonly partitionIndexes: readonly number[] }[];
}

export interface OffsetDeleteResult {
  errorCode: number;
  topics: { name: string; partitions: { partitionIndex: number; errorCode: number }[] }[];
}
