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
// The first write of a share-partition is a snapshot, then updates until
// share.coordinator.snapshot.update.records.per.snapshot have been written
// since the last snapshot, when the next write is a snapshot again (the topic
// is compacted, so old updates go). Each update here carries the whole window
// from the start offset, so replaying it over the snapshot gives the state
// exactly. A delete writes tombstones for both keys.
//
// Alone, every partition of the topic is replayed at start-up and every key is
// served. Partitioned (a cluster), the coordinator serves the partitions of
// the topic this broker leads, as Kafka's ShareCoordinatorShard: loadPartition
// replays one (its keys answer COORDINATOR_LOAD_IN_PROGRESS meanwhile),
// unloadPartition forgets it, and a key of a partition not loaded answers
// NOT_COORDINATOR, so the share-partition leader's persister finds the new
// coordinator. A write is answered once the record is replicated (`committed`).
// The requests are Kafka's Read/Write/Initialize/Delete/ReadSummary
// ShareGroupState, with its fencing: a write or read whose leader epoch is
// below the last one recorded for the key is FENCED_LEADER_EPOCH (the
// share-partition moved to a newer leader), a write or initialize whose state
// epoch is below the stored one FENCED_STATE_EPOCH.
import type { Clock } from '../common/clock.js';
import { ErrorCode, KafkaError } from '../protocol/errors.js';
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

/** One share-partition of one share group: Kafka's SharePartitionKey. */
export interface ShareStateKey {
  readonly groupId: string;
  readonly topicId: string;
  readonly partition: number;
}

/** ReadShareGroupState's answer: startOffset -1 and no batches when the key was never initialised. */
export interface ShareStateRead {
  readonly stateEpoch: number;
  readonly startOffset: bigint;
  readonly stateBatches: readonly StateBatch[];
}

/** ReadShareGroupStateSummary's answer. */
export interface ShareStateSummary {
  readonly stateEpoch: number;
  readonly leaderEpoch: number;
  readonly startOffset: bigint;
  /** Offsets at or past the start whose delivery is complete (acknowledged or archived). */
  readonly deliveryCompleteCount: number;
}

/** How many offsets of the batches are acknowledged (2) or archived (4). */
export function deliveryCompleteCount(batches: readonly StateBatch[]): number {
  let n = 0n;
  for (const b of batches) if (b.deliveryState === 2 || b.deliveryState === 4) n += b.lastOffset - b.firstOffset + 1n;
  return Number(n);
}

/** WriteShareGroupState's partition data: startOffset -1 keeps the stored one; leaderEpoch -1 is not fenced nor recorded. */
export interface ShareStateWrite {
  readonly stateEpoch: number;
  readonly leaderEpoch: number;
  readonly startOffset: bigint;
  readonly stateBatches: readonly StateBatch[];
}

/** Kafka's PartitionFactory.UNINITIALIZED_START_OFFSET. */
export const UNINITIALIZED_START_OFFSET = -1n;

interface Stored {
  state: PersistedShareState;
  readonly partition: number;
  snapshotEpoch: number;
  stateEpoch: number;
  leaderEpoch: number;
  createTimestamp: bigint;
  updatesSinceSnapshot: number;
}

type PartitionLoad = { readonly state: 'loading' | 'loaded'; readonly token: number };

export interface ShareCoordinatorOptions {
  readonly log: OffsetsTopicLog;
  /** share.coordinator.state.topic.num.partitions */
  readonly numPartitions: number;
  /** share.coordinator.snapshot.update.records.per.snapshot */
  readonly updatesPerSnapshot: number;
  readonly clock: Clock;
  /** Serves only the partitions it is told to load (a cluster); alone (false) it serves every key after start(). */
  readonly partitioned?: boolean;
  /** Makes sure the topic exists before the first append (alone, it is created when first needed). */
  readonly ensureTopic?: () => Promise<void>;
  /** Resolves once what was appended to the partition is replicated (a cluster: the ISR has it); throws a KafkaError when it is not. */
  readonly committed?: (partition: number) => Promise<void>;
}

/** Kafka's coordinator runtime's mapping of a failed append to what the caller can act on. */
function appendError(err: unknown): KafkaError {
  const code = err instanceof KafkaError ? err.code : ErrorCode.UNKNOWN_SERVER_ERROR;
  const mapped =
    code === ErrorCode.NOT_ENOUGH_REPLICAS || code === ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND || code === ErrorCode.REQUEST_TIMED_OUT || code === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
      ? ErrorCode.COORDINATOR_NOT_AVAILABLE
      : code === ErrorCode.NOT_LEADER_OR_FOLLOWER || code === ErrorCode.KAFKA_STORAGE_ERROR
        ? ErrorCode.NOT_COORDINATOR
        : code;
  return new KafkaError(mapped, `__share_group_state write failed: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
}

export class ShareCoordinator implements ShareStatePersister {
  private readonly stored = new Map<string, Stored>();
  /** The highest leader epoch a read or write of the key carried (Kafka's leaderEpochMap). */
  private readonly leaderEpochs = new Map<string, number>();
  private readonly owned = new Map<number, PartitionLoad>();
  private nextToken = 0;
  private topicReady: Promise<void> | null = null;
  private readonly log: OffsetsTopicLog;
  private readonly numPartitions: number;
  private readonly updatesPerSnapshot: number;
  private readonly clock: Clock;
  /** Serves only the partitions loaded with leadership (a cluster). */
  readonly partitioned: boolean;

  constructor(private readonly o: ShareCoordinatorOptions) {
    this.log = o.log;
    this.numPartitions = o.numPartitions;
    this.updatesPerSnapshot = o.updatesPerSnapshot;
    this.clock = o.clock;
    this.partitioned = o.partitioned ?? false;
  }

  private static id(g: string, t: string, p: number): string {
    return `${g}\u0000${t}\u0000${p}`;
  }

  private async append(partition: number, records: readonly { key: Buffer; value: Buffer | null }[]): Promise<void> {
    try {
      if (this.o.ensureTopic !== undefined) {
        if (this.topicReady === null) this.topicReady = this.o.ensureTopic().catch((err: unknown) => {
          this.topicReady = null;
          throw err;
        });
        await this.topicReady;
      }
      await this.log.append(partition, records);
      await this.o.committed?.(partition);
    } catch (err) {
      throw appendError(err);
    }
  }

  /** Alone: replays every partition of __share_group_state. */
  async start(): Promise<void> {
    for (let p = 0; p < this.numPartitions; p++) await this.replayPartition(p, () => true);
  }

  private async replayPartition(p: number, current: () => boolean): Promise<void> {
    for await (const rec of this.log.readAll(p)) {
      if (!current()) return;
      if (rec.producerId !== undefined || rec.marker !== undefined) continue;
      this.replay(p, rec.key, rec.value);
    }
  }

  /**
   * Partitioned: this broker leads partition `p` of __share_group_state. Its
   * keys answer COORDINATOR_LOAD_IN_PROGRESS until it is replayed.
   */
  async loadPartition(p: number, _leaderEpoch = 0): Promise<void> {
    if (!this.partitioned || this.owned.has(p)) return;
    const token = this.nextToken++;
    this.owned.set(p, { state: 'loading', token });
    const current = (): boolean => this.owned.get(p)?.token === token;
    try {
      await this.replayPartition(p, current);
    } catch (err) {
      if (current()) this.owned.delete(p);
      this.forgetPartition(p);
      throw err;
    }
    if (!current()) {
      this.forgetPartition(p);
      return;
    }
    this.owned.set(p, { state: 'loaded', token });
  }

  /** Partitioned: leadership of partition `p` went; its keys answer NOT_COORDINATOR from now on. */
  unloadPartition(p: number): void {
    if (!this.owned.delete(p)) return;
    this.forgetPartition(p);
  }

  /** Partitions loaded or loading (tests, tools). */
  ownedPartitions(): ReadonlyMap<number, 'loading' | 'loaded'> {
    return new Map([...this.owned].map(([p, l]) => [p, l.state] as const));
  }

  private forgetPartition(p: number): void {
    for (const [id, s] of [...this.stored]) if (s.partition === p) this.stored.delete(id);
    for (const id of [...this.leaderEpochs.keys()]) {
      const [g, t, n] = id.split('\u0000');
      if (this.partitionFor(g!, t!, Number(n)) === p) this.leaderEpochs.delete(id);
    }
  }

  /** Throws NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS unless this coordinator serves the key's partition. */
  private serve(k: ShareStateKey): number {
    if (!Number.isInteger(k.partition) || k.partition < 0) throw new KafkaError(ErrorCode.INVALID_REQUEST, `negative partition ${k.partition}`);
    const p = this.partitionFor(k.groupId, k.topicId, k.partition);
    if (!this.partitioned) return p;
    const load = this.owned.get(p);
    if (load === undefined) throw new KafkaError(ErrorCode.NOT_COORDINATOR, `this broker is not the share coordinator of ${k.groupId}:${k.topicId}:${k.partition} (${SHARE_GROUP_STATE_TOPIC}-${p})`);
    if (load.state === 'loading') throw new KafkaError(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, `${SHARE_GROUP_STATE_TOPIC}-${p} is loading`);
    return p;
  }

  private replay(partition: number, keyBuf: Buffer, value: Buffer | null): void {
    const k = decodeShareKey(keyBuf);
    if (k === null) return;
    const id = ShareCoordinator.id(k.groupId, k.topicId, k.partition);
    if (value === null) {
      if (k.type === 'snapshot') {
        this.stored.delete(id);
        this.leaderEpochs.delete(id);
      }
      return;
    }
    const { body } = decodeVersioned(value);
    if (k.type === 'snapshot') {
      const v = decodeShareSnapshotValue(body, 0);
      this.stored.set(id, {
        state: { startOffset: v.startOffset, stateBatches: v.stateBatches.map((b) => ({ ...b })) },
        partition,
        snapshotEpoch: v.snapshotEpoch,
        stateEpoch: v.stateEpoch,
        leaderEpoch: v.leaderEpoch,
        createTimestamp: v.createTimestamp,
        updatesSinceSnapshot: 0,
      });
      this.recordLeaderEpoch(id, v.leaderEpoch);
      return;
    }
    const have = this.stored.get(id);
    if (have === undefined) return; // an update without its snapshot (compacted away with a delete)
    const u = decodeShareUpdateValue(body, 0);
    const start = u.startOffset >= 0n ? u.startOffset : have.state.startOffset;
    have.state = { startOffset: start, stateBatches: combineStateBatches(have.state.stateBatches, u.stateBatches, start) };
    if (u.leaderEpoch >= 0) have.leaderEpoch = u.leaderEpoch;
    this.recordLeaderEpoch(id, u.leaderEpoch);
    have.updatesSinceSnapshot++;
  }

  private recordLeaderEpoch(id: string, leaderEpoch: number): void {
    if (leaderEpoch < 0) return;
    const have = this.leaderEpochs.get(id);
    if (have === undefined || leaderEpoch > have) this.leaderEpochs.set(id, leaderEpoch);
  }

  private fenceLeaderEpoch(id: string, k: ShareStateKey, leaderEpoch: number): void {
    if (leaderEpoch < 0) return;
    const recorded = this.leaderEpochs.get(id);
    if (recorded !== undefined && recorded > leaderEpoch) {
      throw new KafkaError(ErrorCode.FENCED_LEADER_EPOCH, `leader epoch ${leaderEpoch} of ${k.topicId}-${k.partition} for ${k.groupId} is below the last one recorded (${recorded})`);
    }
  }

  partitionFor(groupId: string, topicId: string, partition: number): number {
    return partitionForShareKey(groupId, topicId, partition, this.numPartitions);
  }

  /** ReadShareGroupState: records the leader epoch (a later write from an older leader is fenced). */
  async readState(k: ShareStateKey, leaderEpoch: number): Promise<ShareStateRead> {
    this.serve(k);
    const id = ShareCoordinator.id(k.groupId, k.topicId, k.partition);
    this.fenceLeaderEpoch(id, k, leaderEpoch);
    const have = this.stored.get(id);
    if (have === undefined) return { stateEpoch: 0, startOffset: UNINITIALIZED_START_OFFSET, stateBatches: [] };
    this.recordLeaderEpoch(id, leaderEpoch);
    return { stateEpoch: have.stateEpoch, startOffset: have.state.startOffset, stateBatches: have.state.stateBatches };
  }

  /** ReadShareGroupStateSummary. */
  async readSummary(k: ShareStateKey, leaderEpoch: number): Promise<ShareStateSummary> {
    this.serve(k);
    const id = ShareCoordinator.id(k.groupId, k.topicId, k.partition);
    this.fenceLeaderEpoch(id, k, leaderEpoch);
    const have = this.stored.get(id);
    if (have === undefined) return { stateEpoch: 0, leaderEpoch: -1, startOffset: UNINITIALIZED_START_OFFSET, deliveryCompleteCount: 0 };
    return { stateEpoch: have.stateEpoch, leaderEpoch: have.leaderEpoch, startOffset: have.state.startOffset, deliveryCompleteCount: deliveryCompleteCount(have.state.stateBatches) };
  }

  /** WriteShareGroupState: the batches cover the whole in-flight window from the start offset. */
  async writeState(k: ShareStateKey, w: ShareStateWrite): Promise<void> {
    const target = this.serve(k);
    const { groupId, topicId, partition } = k;
    const id = ShareCoordinator.id(groupId, topicId, partition);
    this.fenceLeaderEpoch(id, k, w.leaderEpoch);
    const have = this.stored.get(id);
    // -1: the writer read no epoch (a tool, an older caller): not fenced, as Kafka 4.3's ShareCoordinatorShard.
    if (have !== undefined && w.stateEpoch !== -1 && have.stateEpoch > w.stateEpoch) {
      throw new KafkaError(ErrorCode.FENCED_STATE_EPOCH, `state epoch ${w.stateEpoch} of ${topicId}-${partition} for ${groupId} is below the stored one (${have.stateEpoch})`);
    }
    const startOffset = w.startOffset >= 0n ? w.startOffset : (have?.state.startOffset ?? 0n);
    const state: PersistedShareState = { startOffset, stateBatches: w.stateBatches.filter((b) => b.lastOffset >= startOffset) };
    const leaderEpoch = w.leaderEpoch >= 0 ? w.leaderEpoch : (have?.leaderEpoch ?? 0);
    const now = BigInt(this.clock.now());
    const snapshot = have === undefined || this.updatesPerSnapshot <= 0 || have.updatesSinceSnapshot >= this.updatesPerSnapshot || startOffset < have.state.startOffset;
    const batches = state.stateBatches.map((b) => ({ firstOffset: b.firstOffset, lastOffset: b.lastOffset, deliveryState: b.deliveryState, deliveryCount: b.deliveryCount }));
    if (snapshot) {
      const next: Stored = {
        state,
        partition: target,
        snapshotEpoch: (have?.snapshotEpoch ?? -1) + 1,
        stateEpoch: Math.max(have?.stateEpoch ?? 0, w.stateEpoch),
        leaderEpoch,
        createTimestamp: have?.createTimestamp ?? now,
        updatesSinceSnapshot: 0,
      };
      const value = encodeVersioned(0, (wr) => encodeShareSnapshotValue(wr, 0, {
        snapshotEpoch: next.snapshotEpoch,
        stateEpoch: next.stateEpoch,
        leaderEpoch: next.leaderEpoch,
        startOffset,
        createTimestamp: next.createTimestamp,
        writeTimestamp: now,
        stateBatches: batches,
      }));
      await this.append(target, [{ key: encodeShareKey({ type: 'snapshot', groupId, topicId, partition }), value }]);
      this.stored.set(id, next);
      this.recordLeaderEpoch(id, w.leaderEpoch);
      return;
    }
    const value = encodeVersioned(0, (wr) => encodeShareUpdateValue(wr, 0, { snapshotEpoch: have.snapshotEpoch, leaderEpoch, startOffset, stateBatches: batches }));
    await this.append(target, [{ key: encodeShareKey({ type: 'update', groupId, topicId, partition }), value }]);
    have.state = state;
    have.leaderEpoch = leaderEpoch;
    have.updatesSinceSnapshot++;
    this.recordLeaderEpoch(id, w.leaderEpoch);
  }

  /** InitializeShareGroupState: a snapshot at `startOffset` (or the stored one, -1) with no batches, at `stateEpoch`. */
  async initializeState(k: ShareStateKey, stateEpoch: number, startOffset: bigint): Promise<void> {
    const target = this.serve(k);
    const { groupId, topicId, partition } = k;
    const id = ShareCoordinator.id(groupId, topicId, partition);
    const have = this.stored.get(id);
    if (have !== undefined && have.stateEpoch > stateEpoch) {
      throw new KafkaError(ErrorCode.FENCED_STATE_EPOCH, `state epoch ${stateEpoch} of ${topicId}-${partition} for ${groupId} is below the stored one (${have.stateEpoch})`);
    }
    const now = BigInt(this.clock.now());
    const next: Stored = {
      state: { startOffset: startOffset >= 0n ? startOffset : (have?.state.startOffset ?? UNINITIALIZED_START_OFFSET), stateBatches: [] },
      partition: target,
      snapshotEpoch: (have?.snapshotEpoch ?? -1) + 1,
      stateEpoch,
      leaderEpoch: have?.leaderEpoch ?? -1,
      createTimestamp: now,
      updatesSinceSnapshot: 0,
    };
    const value = encodeVersioned(0, (wr) => encodeShareSnapshotValue(wr, 0, {
      snapshotEpoch: next.snapshotEpoch,
      stateEpoch,
      leaderEpoch: next.leaderEpoch,
      startOffset: next.state.startOffset,
      createTimestamp: now,
      writeTimestamp: now,
      stateBatches: [],
    }));
    await this.append(target, [{ key: encodeShareKey({ type: 'snapshot', groupId, topicId, partition }), value }]);
    this.stored.set(id, next);
  }

  /** DeleteShareGroupState: tombstones for both keys. */
  async deleteState(k: ShareStateKey): Promise<void> {
    const target = this.serve(k);
    const { groupId, topicId, partition } = k;
    const id = ShareCoordinator.id(groupId, topicId, partition);
    if (!this.stored.has(id)) return;
    await this.append(target, [
      { key: encodeShareKey({ type: 'update', groupId, topicId, partition }), value: null },
      { key: encodeShareKey({ type: 'snapshot', groupId, topicId, partition }), value: null },
    ]);
    this.stored.delete(id);
    this.leaderEpochs.delete(id);
  }

  // ShareStatePersister: the single broker's share-partitions reach this coordinator directly.

  async read(groupId: string, topicId: string, partition: number, leaderEpoch = -1): Promise<PersistedShareState | null> {
    const r = await this.readState({ groupId, topicId, partition }, leaderEpoch);
    return r.startOffset < 0n ? null : { startOffset: r.startOffset, stateBatches: r.stateBatches };
  }

  async readWithStateEpoch(groupId: string, topicId: string, partition: number, leaderEpoch = -1): Promise<{ state: PersistedShareState | null; stateEpoch: number }> {
    const r = await this.readState({ groupId, topicId, partition }, leaderEpoch);
    return { state: r.startOffset < 0n ? null : { startOffset: r.startOffset, stateBatches: r.stateBatches }, stateEpoch: r.stateEpoch };
  }

  async write(groupId: string, topicId: string, partition: number, state: PersistedShareState, leaderEpoch = -1, stateEpoch = -1): Promise<void> {
    await this.writeState({ groupId, topicId, partition }, { stateEpoch, leaderEpoch, startOffset: state.startOffset, stateBatches: state.stateBatches });
  }

  async delete(groupId: string, topicId: string, partition: number): Promise<void> {
    await this.deleteState({ groupId, topicId, partition });
  }

  async initialize(groupId: string, topicId: string, partition: number, stateEpoch: number, startOffset: bigint): Promise<void> {
    await this.initializeState({ groupId, topicId, partition }, stateEpoch, startOffset);
  }

  async partitionsOf(groupId: string): Promise<{ topicId: string; partition: number }[]> {
    const out: { topicId: string; partition: number }[] = [];
    for (const k of this.stored.keys()) {
      const [g, t, p] = k.split('\u0000');
      if (g === groupId && t !== undefined) out.push({ topicId: t, partition: Number(p) });
    }
    return out;
  }

  /** Group ids with share-partition state here (ListGroups after a restart, before any heartbeat). */
  groupIds(): string[] {
    return [...new Set([...this.stored.keys()].map((k) => k.split('\u0000')[0]!))];
  }
}
