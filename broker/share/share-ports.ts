// What share groups need from the rest of the broker, as ports of their own
// (so broker/share/ does not import the broker's context, which holds it).
// The broker's PartitionView and topic store satisfy them.
import type { Records } from '../protocol/record-parts.js';

/** A partition's log as share fetches read it (local or remote tier). */
export interface ShareLogView {
  readonly logStartOffset: bigint;
  readonly highWatermark: bigint;
  readonly lastStableOffset: bigint;
  readonly leaderEpoch: number;
  read(fetchOffset: bigint, maxBytes: number, opts: { maxOffset: bigint; minOneBatch: boolean; signal?: AbortSignal }): Promise<{ records: Records | null; abortedTransactions: { producerId: bigint; firstOffset: bigint }[] }>;
  offsetForTimestamp(timestamp: bigint): Promise<{ offset: bigint } | null>;
}

export interface ShareBrokerPort {
  topicName(topicId: string): string | undefined;
  topicByName(name: string): { topicId: string; partitionCount: number } | undefined;
  partition(topic: string, partition: number): ShareLogView | undefined;
  /** null when this broker leads it. */
  notLeader(topic: string, partition: number): { errorCode: number; leaderId: number; leaderEpoch: number } | null;
  /** A classic or consumer group of this id exists. */
  otherGroupExists(groupId: string): boolean;
}
