// The share coordinator (KIP-932): share-partition state kept in the internal
// topic __share_group_state in Kafka's record formats (share-coordinator/*.json).
// A share-partition's records go to partition
// abs(javaHash("groupId:topicId:partition")) % share.coordinator.state.topic.num.partitions,
// Kafka's SharePartitionKey placement. Records are keyed by (group, topic id,
// partition) and framed as Kafka's coordinator records are: an int16 record
// type (0 ShareSnapshot, 1 ShareUpdate) before the key, an int16 version (0)
// before the value.
//   ShareSnapshot  the whole state: start offset and every in-flight state batch;
//   ShareUpdate    changed state batches (and the start offset, or -1), applied
//                  on top of the last snapshot.
// The first write of a share-partition is a snapshot (Kafka's
// InitializeShareGroupState), then updates until
// share.coordinator.snapshot.update.records.per.snapshot have been written
// since the last snapshot, when the next write is a snapshot again (the topic
// is compacted, so old updates go). Each update here carries the whole window
// from the start offset, so replaying it over the snapshot gives the state
// exactly. A delete writes tombstones for both keys. At start-up every
// partition of the topic is replayed into memory; reads are served from there.
import type { Clock } from '../common/clock.js';
import { javaStringHashCode, type OffsetsTopicLog } from '../group/offsets-topic.js';
import { decodeVersioned, encodeVersioned } from '../protocol/messages/records/frame.js';
import { decodeShareSnapshotKey, encodeShareSnapshotKey } from '../protocol/messages/records/share-snapshot-key.js';
import { decodeShareSnapshotValue, encodeShareSnapshotValue } from '../protocol/messages/records/share-snapshot-value.js';
import { decodeShareUpdateKey, encodeShareUpdateKey } from '../protocol/messages/records/share-update-key.js';
import { decodeShareUpdateValue, encodeShareUpdateValue } from '../protocol/messages/records/share-update-value.js';
import type { PersistedShareState, StateBatch } from './share-partition.js';
import type { ShareStatePersister } from './share-partition-manager.js';

export const SHARE_GROUP_STATE_TOPIC = '__share_group_state';
const SNAPSHOT = 0;
const UPDATE = 1;

/** Kafka's share coordinator placement of a share-partition's state. */
export function partitionForShareKey(groupId: string, topicId: string, partition: number, numPartitions: number): number {
  const h = javaStringHashCode(`${groupId}:${topicId}:${partition}`);
  const abs = h === -2147483648 ? 0 : Math.abs(h);
  return abs % numPartitions;
}

interface Stored {
  state: PersistedShareState;
  snapshotEpoch: number;
  stateEpoch: number;
  leaderEpoch: number;
  createTimestamp: bigint;
  updatesSinceSnapshot: number;
}

export interface ShareRecordKey {
  readonly type: 'snapshot' | 'update';
  readonly groupId: string;
  readonly topicId: string;
  readonly partition: number;
}

export function encodeShareKey(k: ShareRecordKey): Buffer {
  const body = { groupId: k.groupId, topicId: k.topicId, partition: k.partition };
  return k.type === 'snapshot' ? encodeVersioned(SNAPSHOT, (w) => encodeShareSnapshotKey(w, 0, body)) : encodeVersioned(UPDATE, (w) => encodeShareUpdateKey(w, 0, body));
}

export function decodeShareKey(buf: Buffer): ShareRecordKey | null {
  const { version: type, body } = decodeVersioned(buf);
  if (type === SNAPSHOT) return { type: 'snapshot', ...decodeShareSnapshotKey(body, 0) };
  if (type === UPDATE) return { type: 'update', ...decodeShareUpdateKey(body, 0) };
  return null;
}

/** Kafka's PersisterStateBatchCombiner in the form its inputs take here: the update's batches override, batches below the start go. */
export function combineStateBatches(base: readonly StateBatch[], update: readonly StateBatch[], startOffset: bigint): StateBatch[] {
  const cells = new Map<bigint, { s: number; c: number }>();
  for (const b of [...base, ...update]) for (let o = b.firstOffset; o <= b.lastOffset; o++) if (o >= startOffset) cells.set(o, { s: b.deliveryState, c: b.deliveryCount });
  const offsets = [...cells.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const out: StateBatch[] = [];
  for (const o of offsets) {
    const v = cells.get(o)!;
    const last = out[out.length - 1];
    if (last !== undefined && last.lastOffset === o - 1n && last.deliveryState === v.s && last.deliveryCount === v.c) out[out.length - 1] = { ...last, lastOffset: o };
    else out.push({ firstOffset: o, lastOffset: o, deliveryState: v.s, deliveryCount: v.c });
  }
  return out;
}

export class ShareCoordinator implements ShareStatePersister {
  private readonly stored = new Map<string, Stored>();

  constructor(
    private readonly log: OffsetsTopicLog,
    private readonly numPartitions: number,
    private readonly updatesPerSnapshot: number,
    private readonly clock: Clock,
    /** Makes sure the topic exists before the first append (it is created when first needed). */
    private readonly ensureTopic: () => Promise<void> = async () => undefined,
  ) {}

  private topicReady: Promise<void> | null = null;

  private async append(partition: number, records: readonly { key: Buffer; value: Buffer | null }[]): Promise<void> {
    if (this.topicReady === null) this.topicReady = this.ensureTopic().catch((err: unknown) => {
      this.topicReady = null;
      throw err;
    });
    await this.topicReady;
    await this.log.append(partition, records);
  }

  private static key(g: string, t: string, p: number): string {
    return `${g}\u0000${t}\u0000${p}`;
  }

  /** Replays every partition of __share_group_state. */
  async start(): Promise<void> {
    for (let p = 0; p < this.numPartitions; p++) {
      for await (const rec of this.log.readAll(p)) {
        if (rec.producerId !== undefined || rec.marker !== undefined) continue;
        this.replay(rec.key, rec.value);
      }
    }
  }

  private replay(keyBuf: Buffer, value: Buffer | null): void {
    const k = decodeShareKey(keyBuf);
    if (k === null) return;
    const id = ShareCoordinator.key(k.groupId, k.topicId, k.partition);
    if (value === null) {
      if (k.type === 'snapshot') this.stored.delete(id);
      return;
    }
    const { body } = decodeVersioned(value);
    if (k.type === 'snapshot') {
      const v = decodeShareSnapshotValue(body, 0);
      this.stored.set(id, {
        state: { startOffset: v.startOffset, stateBatches: v.stateBatches.map((b) => ({ ...b })) },
        snapshotEpoch: v.snapshotEpoch,
        stateEpoch: v.stateEpoch,
        leaderEpoch: v.leaderEpoch,
        createTimestamp: v.createTimestamp,
        updatesSinceSnapshot: 0,
      });
      return;
    }
    const have = this.stored.get(id);
    if (have === undefined) return; // an update without its snapshot (compacted away with a delete)
    const u = decodeShareUpdateValue(body, 0);
    const start = u.startOffset >= 0n ? u.startOffset : have.state.startOffset;
    have.state = { startOffset: start, stateBatches: combineStateBatches(have.state.stateBatches, u.stateBatches, start) };
    have.leaderEpoch = u.leaderEpoch;
    have.updatesSinceSnapshot++;
  }

  partitionFor(groupId: string, topicId: string, partition: number): number {
    return partitionForShareKey(groupId, topicId, partition, this.numPartitions);
  }

  async read(groupId: string, topicId: string, partition: number): Promise<PersistedShareState | null> {
    return this.stored.get(ShareCoordinator.key(groupId, topicId, partition))?.state ?? null;
  }

  async write(groupId: string, topicId: string, partition: number, state: PersistedShareState): Promise<void> {
    const id = ShareCoordinator.key(groupId, topicId, partition);
    const have = this.stored.get(id);
    const now = BigInt(this.clock.now());
    const target = this.partitionFor(groupId, topicId, partition);
    const snapshot = have === undefined || this.updatesPerSnapshot <= 0 || have.updatesSinceSnapshot >= this.updatesPerSnapshot || state.startOffset < have.state.startOffset;
    const batches = state.stateBatches.map((b) => ({ firstOffset: b.firstOffset, lastOffset: b.lastOffset, deliveryState: b.deliveryState, deliveryCount: b.deliveryCount }));
    if (snapshot) {
      const next: Stored = {
        state,
        snapshotEpoch: (have?.snapshotEpoch ?? -1) + 1,
        stateEpoch: have?.stateEpoch ?? 0,
        leaderEpoch: have?.leaderEpoch ?? 0,
        createTimestamp: have?.createTimestamp ?? now,
        updatesSinceSnapshot: 0,
      };
      const value = encodeVersioned(0, (w) => encodeShareSnapshotValue(w, 0, {
        snapshotEpoch: next.snapshotEpoch,
        stateEpoch: next.stateEpoch,
        leaderEpoch: next.leaderEpoch,
        startOffset: state.startOffset,
        createTimestamp: next.createTimestamp,
        writeTimestamp: now,
        stateBatches: batches,
      }));
      await this.append(target, [{ key: encodeShareKey({ type: 'snapshot', groupId, topicId, partition }), value }]);
      this.stored.set(id, next);
      return;
    }
    const value = encodeVersioned(0, (w) => encodeShareUpdateValue(w, 0, { snapshotEpoch: have.snapshotEpoch, leaderEpoch: have.leaderEpoch, startOffset: state.startOffset, stateBatches: batches }));
    await this.append(target, [{ key: encodeShareKey({ type: 'update', groupId, topicId, partition }), value }]);
    have.state = state;
    have.updatesSinceSnapshot++;
  }

  async delete(groupId: string, topicId: string, partition: number): Promise<void> {
    const id = ShareCoordinator.key(groupId, topicId, partition);
    if (!this.stored.has(id)) return;
    await this.append(this.partitionFor(groupId, topicId, partition), [
      { key: encodeShareKey({ type: 'update', groupId, topicId, partition }), value: null },
      { key: encodeShareKey({ type: 'snapshot', groupId, topicId, partition }), value: null },
    ]);
    this.stored.delete(id);
  }

  async partitionsOf(groupId: string): Promise<{ topicId: string; partition: number }[]> {
    const out: { topicId: string; partition: number }[] = [];
    for (const k of this.stored.keys()) {
      const [g, t, p] = k.split('\u0000');
      if (g === groupId && t !== undefined) out.push({ topicId: t, partition: Number(p) });
    }
    return out;
  }

  /** Group ids with share-partition state (ListGroups after a restart, before any heartbeat). */
  groupIds(): string[] {
    return [...new Set([...this.stored.keys()].map((k) => k.split('\u0000')[0]!))];
  }
}
