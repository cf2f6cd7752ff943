// Offsets committed inside a transaction (TxnOffsetCommit), held per producer
// until the transaction ends: the coordinator materializes them as committed
// offsets on commit and drops them on abort. Pure data.
import { ErrorCode } from '../protocol/errors.js';
import type { OffsetAndMetadata } from './group-records.js';
import type { OffsetCommitParams, OffsetCommitResult } from './types.js';

export interface PendingOffset {
  readonly topic: string;
  readonly partition: number;
  readonly value: OffsetAndMetadata;
}

export class PendingTxnOffsets {
  /** producerId -> groupId -> "topic\0partition" -> offset (the latest commit wins). */
  private readonly byProducer = new Map<bigint, Map<string, Map<string, PendingOffset>>>();

  add(producerId: bigint, groupId: string, offset: PendingOffset): void {
    let groups = this.byProducer.get(producerId);
    if (groups === undefined) {
      groups = new Map();
      this.byProducer.set(producerId, groups);
    }
    let offsets = groups.get(groupId);
    if (offsets === undefined) {
      offsets = new Map();
      groups.set(groupId, offsets);
    }
    offsets.set(`${offset.topic}\u0000${offset.partition}`, offset);
  }

  /** Removes and returns a producer's pending offsets, by group. */
  take(producerId: bigint): Map<string, PendingOffset[]> {
    const groups = this.byProducer.get(producerId);
    this.byProducer.delete(producerId);
    const out = new Map<string, PendingOffset[]>();
    for (const [groupId, offsets] of groups ?? []) out.set(groupId, [...offsets.values()]);
    return out;
  }

  /** Whether some open transaction holds an offset for the partition (OffsetFetch requireStable). */
  isPending(groupId: string, topic: string, partition: number): boolean {
    const key = `${topic}\u0000${partition}`;
    for (const groups of this.byProducer.values()) if (groups.get(groupId)?.has(key) === true) return true;
    return false;
  }

  /** Forgets the pending offsets of the groups `which` selects (their partition was unloaded). */
  dropGroups(which: (groupId: string) => boolean): void {
    for (const [producerId, groups] of this.byProducer) {
      for (const groupId of [...groups.keys()]) if (which(groupId)) groups.delete(groupId);
      if (groups.size === 0) this.byProducer.delete(producerId);
    }
  }

  hasGroup(groupId: string): boolean {
    for (const groups of this.byProducer.values()) if (groups.has(groupId)) return true;
    return false;
  }
}

/** The answer to a TxnOffsetCommit before it is written: OFFSET_METADATA_TOO_LARGE where due, the rest accepted. */
export function acceptTxnOffsets(p: OffsetCommitParams, now: number, offsetMetadataMaxBytes: number): { result: OffsetCommitResult; accepted: PendingOffset[] } {
  const accepted: PendingOffset[] = [];
  const result: OffsetCommitResult = {
    topics: p.topics.map((t) => ({
      name: t.name,
      partitions: t.partitions.map((x) => {
        const metadata = x.committedMetadata ?? '';
        if (metadata.length > offsetMetadataMaxBytes) return { partitionIndex: x.partitionIndex, errorCode: ErrorCode.OFFSET_METADATA_TOO_LARGE as number };
        const value = { committedOffset: x.committedOffset, leaderEpoch: x.committedLeaderEpoch, metadata, commitTimestampMs: now, expireTimestampMs: null };
        accepted.push({ topic: t.name, partition: x.partitionIndex, value });
        return { partitionIndex: x.partitionIndex, errorCode: ErrorCode.NONE as number };
      }),
    })),
  };
  return { result, accepted };
}
