// Share sessions (KIP-932), as Kafka's ShareSessionCache keeps them: one per
// (group id, member id), holding the share-partitions the member fetches and
// the epoch its next request must carry.
//   ShareFetch epoch 0    opens a session (closing the member's previous one);
//                         acknowledgements are not allowed in it (INVALID_REQUEST);
//   ShareFetch epoch > 0  must match the session's epoch (INVALID_SHARE_SESSION_EPOCH,
//                         SHARE_SESSION_NOT_FOUND), adds the named partitions,
//                         drops the forgotten ones, and reads them all;
//   epoch -1              (ShareFetch with nothing to fetch, or ShareAcknowledge)
//                         closes the session after its acknowledgements.
// At most group.share.max.share.sessions sessions: a new one beyond that is
// SHARE_SESSION_LIMIT_REACHED. Closing a session (or its connection) releases
// the records its member acquired through it. Pure apart from the clock.
import { ErrorCode, KafkaError } from '../protocol/errors.js';

export const INITIAL_SHARE_EPOCH = 0;
export const FINAL_SHARE_EPOCH = -1;

export interface SharePartitionKey {
  readonly topicId: string;
  readonly partition: number;
}

export interface ShareSession {
  readonly groupId: string;
  readonly memberId: string;
  epoch: number;
  /** "topicId:partition" -> key, in the order they were added. */
  readonly partitions: Map<string, SharePartitionKey>;
  connectionId: number;
}

export function partitionKeyString(p: SharePartitionKey): string {
  return `${p.topicId}:${p.partition}`;
}

/** The epoch after `epoch`: wraps to 1, never back to 0 (Kafka's ShareRequestMetadata.nextEpoch). */
export function nextShareEpoch(epoch: number): number {
  return epoch >= 0x7fffffff ? 1 : epoch + 1;
}

export class ShareSessionCache {
  private readonly sessions = new Map<string, ShareSession>();

  constructor(readonly maxSessions: number) {}

  private static key(groupId: string, memberId: string): string {
    return `${groupId}\u0000${memberId}`;
  }

  get size(): number {
    return this.sessions.size;
  }

  get(groupId: string, memberId: string): ShareSession | undefined {
    return this.sessions.get(ShareSessionCache.key(groupId, memberId));
  }

  /** Opens a session (epoch 0 request); returns the one it replaced, whose records the caller releases. */
  open(groupId: string, memberId: string, partitions: readonly SharePartitionKey[], connectionId: number): { session: ShareSession; replaced: ShareSession | undefined } {
    const k = ShareSessionCache.key(groupId, memberId);
    const replaced = this.sessions.get(k);
    if (replaced !== undefined) this.sessions.delete(k);
    if (this.sessions.size >= this.maxSessions) {
      throw new KafkaError(ErrorCode.SHARE_SESSION_LIMIT_REACHED, `The share session cache holds ${this.maxSessions} sessions (group.share.max.share.sessions).`);
    }
    const session: ShareSession = { groupId, memberId, epoch: nextShareEpoch(INITIAL_SHARE_EPOCH), partitions: new Map(), connectionId };
    for (const p of partitions) session.partitions.set(partitionKeyString(p), p);
    this.sessions.set(k, session);
    return { session, replaced };
  }

  /** The session a request with `epoch` > 0 continues; its epoch then moves on. */
  continue(groupId: string, memberId: string, epoch: number, connectionId: number): ShareSession {
    const session = this.get(groupId, memberId);
    if (session === undefined) throw new KafkaError(ErrorCode.SHARE_SESSION_NOT_FOUND, `No share session for member ${memberId} of group ${groupId}.`);
    if (session.epoch !== epoch) throw new KafkaError(ErrorCode.INVALID_SHARE_SESSION_EPOCH, `The share session epoch is ${session.epoch}, the request has ${epoch}.`);
    session.epoch = nextShareEpoch(session.epoch);
    session.connectionId = connectionId;
    return session;
  }

  /** The session an epoch -1 request closes (it must exist). */
  closing(groupId: string, memberId: string): ShareSession {
    const session = this.get(groupId, memberId);
    if (session === undefined) throw new KafkaError(ErrorCode.SHARE_SESSION_NOT_FOUND, `No share session for member ${memberId} of group ${groupId}.`);
    return session;
  }

  remove(session: ShareSession): void {
    const k = ShareSessionCache.key(session.groupId, session.memberId);
    if (this.sessions.get(k) === session) this.sessions.delete(k);
  }

  /** Sessions opened over a connection (closed with it). */
  ofConnection(connectionId: number): ShareSession[] {
    return [...this.sessions.values()].filter((s) => s.connectionId === connectionId);
  }

  /** Sessions of one member (it left the group). */
  ofMember(groupId: string, memberId: string): ShareSession[] {
    const s = this.get(groupId, memberId);
    return s === undefined ? [] : [s];
  }
}
