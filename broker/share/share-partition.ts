// One share-partition (KIP-932): the delivery state of a topic partition for
// one share group. Pure: no I/O and no timers; time comes from the injected
// Clock and lock expiry runs when the owner calls `expireLocks()` (the manager
// schedules it at `nextLockExpiry()`, and every operation expires first).
//
// The in-flight window is [startOffset, endOffset]: offsets below startOffset
// are done (acknowledged or archived) for this group; offsets above endOffset
// have never been acquired. Kafka calls them SPSO and SPEO. Inside the window
// each offset has a state:
//   available -> acquired                (a ShareFetch hands it to a member, deliveryCount+1)
//   acquired  -> acknowledged            (ACCEPT)
//   acquired  -> archived                (REJECT, GAP, or released at the delivery limit)
//   acquired  -> available               (RELEASE, lock expiry, member gone; below the limit)
//   acquired  -> acquired                (RENEW: the lock starts again)
// acknowledged and archived are final. The window start moves past the leading
// final offsets, so the window holds at most the in-flight records plus the
// final ones between them.
//
// Offsets the consumer must never see are archived without being delivered:
// control batches (transaction markers), offsets in no batch (compaction
// gaps), and under read_committed the records of aborted transactions. Kafka
// hands gaps out and lets the client acknowledge them as GAP; archiving them
// here is equivalent and saves the client the bookkeeping.
import type { Clock } from '../common/clock.js';
import { ErrorCode, KafkaError } from '../protocol/errors.js';

export type RecordState = 'available' | 'acquired' | 'acknowledged' | 'archived';

/** The ids Kafka persists (ShareSnapshotValue.StateBatches.DeliveryState). */
export const RECORD_STATE_ID: Readonly<Record<RecordState, number>> = { available: 0, acquired: 1, acknowledged: 2, archived: 4 };

export function recordStateFromId(id: number): RecordState {
  switch (id) {
    case 0: return 'available';
    case 1: return 'acquired';
    case 2: return 'acknowledged';
    case 4: return 'archived';
    default: throw new KafkaError(ErrorCode.INVALID_REQUEST, `unknown record state id ${id}`);
  }
}

/** AcknowledgementBatch.AcknowledgeTypes. */
export const AcknowledgeType = { GAP: 0, ACCEPT: 1, RELEASE: 2, REJECT: 3, RENEW: 4 } as const;

/** ShareFetch v2 ShareAcquireMode: whole batches (soft MaxRecords) or exactly MaxRecords at most. */
export type AcquireMode = 'batch_optimized' | 'record_limit';

export interface SharePartitionConfig {
  /** group.share.record.lock.duration.ms */
  readonly recordLockDurationMs: number;
  /** group.share.delivery.count.limit */
  readonly deliveryCountLimit: number;
  /** group.share.partition.max.record.locks: no new records are acquired while the window is this long. */
  readonly maxInFlightRecords: number;
}

/** One record batch of the log, as far as acquisition needs it (from its header). */
export interface BatchInfo {
  readonly baseOffset: bigint;
  readonly lastOffset: bigint;
  readonly isControl: boolean;
  readonly isTransactional: boolean;
  readonly producerId: bigint;
}

export interface AcquiredRange {
  readonly firstOffset: bigint;
  readonly lastOffset: bigint;
  readonly deliveryCount: number;
}

/** A run of offsets with one state, as persisted (ShareSnapshot/ShareUpdate StateBatches). */
export interface StateBatch {
  readonly firstOffset: bigint;
  readonly lastOffset: bigint;
  readonly deliveryState: number;
  readonly deliveryCount: number;
}

export interface PersistedShareState {
  readonly startOffset: bigint;
  readonly stateBatches: readonly StateBatch[];
}

export interface AcknowledgementBatch {
  readonly firstOffset: bigint;
  readonly lastOffset: bigint;
  readonly acknowledgeTypes: readonly number[];
}

interface OffsetState {
  state: RecordState;
  deliveryCount: number;
  memberId: string | null;
  /** When the acquisition lock ends (acquired only). */
  lockExpiresAt: number;
}

/** Which offsets of the given batches belong to aborted transactions (the consumer's rule, on the listed aborts). */
export function abortedOffsetRanges(batches: readonly BatchInfo[], aborted: readonly { producerId: bigint; firstOffset: bigint }[]): { firstOffset: bigint; lastOffset: bigint }[] {
  const pending = [...aborted].sort((a, b) => (a.firstOffset < b.firstOffset ? -1 : a.firstOffset > b.firstOffset ? 1 : 0));
  const open = new Set<bigint>();
  const out: { firstOffset: bigint; lastOffset: bigint }[] = [];
  for (const b of batches) {
    while (pending.length > 0 && pending[0]!.firstOffset <= b.lastOffset) open.add(pending.shift()!.producerId);
    if (!b.isTransactional) continue;
    // The abort marker closes the producer's aborted transaction; it is a control batch itself.
    if (b.isControl) {
      open.delete(b.producerId);
      continue;
    }
    if (open.has(b.producerId)) out.push({ firstOffset: b.baseOffset, lastOffset: b.lastOffset });
  }
  return out;
}

export class SharePartition {
  private start: bigint;
  /** states[i] is the state of offset start + i. */
  private states: OffsetState[] = [];
  /** Below it the log has no records: what is released there is archived. */
  private logStartOffset = 0n;
  /** Bumped on every change a persister must write (not on acquisition). */
  private version = 0;

  constructor(
    readonly groupId: string,
    readonly topicId: string,
    readonly partition: number,
    private readonly config: SharePartitionConfig,
    private readonly clock: Clock,
    initial: PersistedShareState,
  ) {
    if (initial.startOffset < 0n) throw new KafkaError(ErrorCode.INVALID_REQUEST, `negative start offset ${initial.startOffset}`);
    this.start = initial.startOffset;
    for (const b of initial.stateBatches) {
      if (b.lastOffset < this.start) continue;
      const state = recordStateFromId(b.deliveryState);
      for (let o = b.firstOffset > this.start ? b.firstOffset : this.start; o <= b.lastOffset; o++) {
        this.ensure(o);
        // An acquisition does not survive its broker: acquired records are available again.
        this.states[Number(o - this.start)] = { state: state === 'acquired' ? 'available' : state, deliveryCount: b.deliveryCount, memberId: null, lockExpiresAt: 0 };
      }
    }
    this.advanceStart();
  }

  /** SPSO: the first offset not yet done. */
  get startOffset(): bigint {
    return this.start;
  }

  /** SPEO: the last offset in flight; startOffset - 1 when the window is empty. */
  get endOffset(): bigint {
    return this.start + BigInt(this.states.length) - 1n;
  }

  /** The persister's change counter: differs after any change worth writing. */
  get stateVersion(): number {
    return this.version;
  }

  /** Offsets acquired now (the record locks in use). */
  get acquiredCount(): number {
    this.expireLocks();
    let n = 0;
    for (const s of this.states) if (s.state === 'acquired') n++;
    return n;
  }

  /** The state of one offset (tests, describe); offsets below the start are done, above the end never acquired. */
  stateOf(offset: bigint): { state: RecordState; deliveryCount: number; memberId: string | null } | 'done' | 'new' {
    if (offset < this.start) return 'done';
    const s = this.states[Number(offset - this.start)];
    if (s === undefined) return 'new';
    return { state: s.state, deliveryCount: s.deliveryCount, memberId: s.memberId };
  }

  /** Where the next fetch reads: the first available offset in flight, else just past the window. */
  nextFetchOffset(): bigint {
    this.expireLocks();
    const i = this.states.findIndex((s) => s.state === 'available');
    return i < 0 ? this.start + BigInt(this.states.length) : this.start + BigInt(i);
  }

  /** Whether a fetch could acquire anything: something to redeliver, or room for new records. */
  canAcquire(): boolean {
    this.expireLocks();
    return this.states.some((s) => s.state === 'available') || this.states.length < this.config.maxInFlightRecords;
  }

  /**
   * Acquires for `memberId` what the fetched batches cover and is available:
   * offsets in flight that are available, and new offsets past the window
   * (whole batches, while the window is below its limit). `maxRecords` is soft
   * in batch_optimized mode (a batch is never split) and exact in record_limit.
   */
  acquire(memberId: string, batches: readonly BatchInfo[], maxRecords: number, mode: AcquireMode, aborted: readonly { firstOffset: bigint; lastOffset: bigint }[] = []): AcquiredRange[] {
    this.expireLocks();
    const acquired: bigint[] = [];
    const now = this.clock.now();
    const isAborted = (o: bigint): boolean => aborted.some((r) => o >= r.firstOffset && o <= r.lastOffset);
    let prevLast: bigint | null = null;
    for (const b of batches) {
      if (acquired.length >= maxRecords) break;
      // A compaction gap before this batch: never delivered.
      if (prevLast !== null && b.baseOffset > prevLast + 1n) this.archiveRange(prevLast + 1n, b.baseOffset - 1n);
      prevLast = b.lastOffset;
      if (b.lastOffset < this.start) continue;
      const pastWindow = b.baseOffset > this.endOffset;
      if (pastWindow && this.states.length >= this.config.maxInFlightRecords) break;
      if (pastWindow && b.baseOffset > this.endOffset + 1n) this.archiveRange(this.endOffset + 1n, b.baseOffset - 1n);
      if (b.isControl) {
        this.archiveRange(b.baseOffset, b.lastOffset);
        continue;
      }
      for (let o = b.baseOffset < this.start ? this.start : b.baseOffset; o <= b.lastOffset; o++) {
        if (mode === 'record_limit' && acquired.length >= maxRecords) break;
        const s = this.ensure(o);
        if (s.state !== 'available') continue;
        if (isAborted(o)) {
          s.state = 'archived';
          this.version++;
          continue;
        }
        s.state = 'acquired';
        s.deliveryCount++;
        s.memberId = memberId;
        s.lockExpiresAt = now + this.config.recordLockDurationMs;
        acquired.push(o);
      }
    }
    this.advanceStart();
    return this.ranges(acquired);
  }

  /**
   * Applies a member's acknowledgements. Either all apply or none: an offset
   * that is not acquired by this member is INVALID_RECORD_STATE, a malformed
   * batch INVALID_REQUEST (thrown as KafkaError, nothing changed).
   */
  acknowledge(memberId: string, batches: readonly AcknowledgementBatch[]): void {
    this.expireLocks();
    const changes: { s: OffsetState; type: number; offset: bigint }[] = [];
    for (const b of batches) {
      if (b.lastOffset < b.firstOffset) throw new KafkaError(ErrorCode.INVALID_REQUEST, `acknowledgement batch ${b.firstOffset}-${b.lastOffset} ends before it starts`);
      const count = b.lastOffset - b.firstOffset + 1n;
      if (b.acknowledgeTypes.length !== 1 && BigInt(b.acknowledgeTypes.length) !== count) {
        throw new KafkaError(ErrorCode.INVALID_REQUEST, `acknowledgement batch ${b.firstOffset}-${b.lastOffset} has ${b.acknowledgeTypes.length} types for ${count} offsets`);
      }
      for (const t of b.acknowledgeTypes) if (t < AcknowledgeType.GAP || t > AcknowledgeType.RENEW) throw new KafkaError(ErrorCode.INVALID_REQUEST, `unknown acknowledge type ${t}`);
      for (let o = b.firstOffset; o <= b.lastOffset; o++) {
        const s = o >= this.start ? this.states[Number(o - this.start)] : undefined;
        if (s === undefined || s.state !== 'acquired') throw new KafkaError(ErrorCode.INVALID_RECORD_STATE, `offset ${o} of ${this.topicId}-${this.partition} is not acquired`);
        if (s.memberId !== memberId) throw new KafkaError(ErrorCode.INVALID_RECORD_STATE, `offset ${o} of ${this.topicId}-${this.partition} is acquired by another member`);
        const type = b.acknowledgeTypes.length === 1 ? b.acknowledgeTypes[0]! : b.acknowledgeTypes[Number(o - b.firstOffset)]!;
        changes.push({ s, type, offset: o });
      }
    }
    const now = this.clock.now();
    for (const { s, type, offset } of changes) {
      switch (type) {
        case AcknowledgeType.ACCEPT: this.finish(s, 'acknowledged'); break;
        case AcknowledgeType.GAP:
        case AcknowledgeType.REJECT: this.finish(s, 'archived'); break;
        case AcknowledgeType.RELEASE: this.release(s, offset); break;
        case AcknowledgeType.RENEW: s.lockExpiresAt = now + this.config.recordLockDurationMs; break;
      }
    }
    this.advanceStart();
  }

  /** Releases every record a member holds (its share session closed, or it left the group). */
  releaseMember(memberId: string): number {
    let n = 0;
    this.states.forEach((s, i) => {
      if (s.state === 'acquired' && s.memberId === memberId) {
        this.release(s, this.start + BigInt(i));
        n++;
      }
    });
    this.advanceStart();
    return n;
  }

  /** Releases acquisitions whose lock has run out; returns how many. */
  expireLocks(): number {
    const now = this.clock.now();
    let n = 0;
    this.states.forEach((s, i) => {
      if (s.state === 'acquired' && s.lockExpiresAt <= now) {
        this.release(s, this.start + BigInt(i));
        n++;
      }
    });
    if (n > 0) this.advanceStart();
    return n;
  }

  /** The earliest lock end among acquired records, or null. */
  nextLockExpiry(): number | null {
    let min: number | null = null;
    for (const s of this.states) if (s.state === 'acquired' && (min === null || s.lockExpiresAt < min)) min = s.lockExpiresAt;
    return min;
  }

  /** The log start moved (retention, DeleteRecords): what is available below it is archived, the window follows. */
  updateLogStartOffset(logStartOffset: bigint): void {
    if (logStartOffset <= this.logStartOffset) return;
    this.logStartOffset = logStartOffset;
    for (let i = 0; i < this.states.length && this.start + BigInt(i) < logStartOffset; i++) {
      const s = this.states[i]!;
      if (s.state === 'available') this.finish(s, 'archived');
    }
    this.advanceStart();
    if (this.states.length === 0 && this.start < logStartOffset) {
      this.start = logStartOffset;
      this.version++;
    }
  }

  /** Moves the start (AlterShareGroupOffsets): the window is dropped; only allowed with no acquisition (the group is empty). */
  resetStartOffset(offset: bigint): void {
    if (this.states.some((s) => s.state === 'acquired')) throw new KafkaError(ErrorCode.NON_EMPTY_GROUP, 'records are acquired');
    this.start = offset;
    this.states = [];
    this.version++;
  }

  /** The whole state, as a snapshot record holds it: runs of equal state and delivery count. */
  persistedState(): PersistedShareState {
    const batches: StateBatch[] = [];
    this.states.forEach((s, i) => {
      const offset = this.start + BigInt(i);
      const deliveryState = RECORD_STATE_ID[s.state === 'acquired' ? 'available' : s.state];
      const last = batches[batches.length - 1];
      if (last !== undefined && last.lastOffset === offset - 1n && last.deliveryState === deliveryState && last.deliveryCount === s.deliveryCount) {
        batches[batches.length - 1] = { ...last, lastOffset: offset };
      } else {
        batches.push({ firstOffset: offset, lastOffset: offset, deliveryState, deliveryCount: s.deliveryCount });
      }
    });
    return { startOffset: this.start, stateBatches: batches };
  }

  private release(s: OffsetState, offset: bigint): void {
    if (offset < this.logStartOffset || s.deliveryCount >= this.config.deliveryCountLimit) {
      this.finish(s, 'archived');
      return;
    }
    s.state = 'available';
    s.memberId = null;
    s.lockExpiresAt = 0;
    this.version++;
  }

  private finish(s: OffsetState, state: 'acknowledged' | 'archived'): void {
    s.state = state;
    s.memberId = null;
    s.lockExpiresAt = 0;
    this.version++;
  }

  /** Marks offsets archived that were never delivered (markers, gaps); only new or available ones. */
  private archiveRange(first: bigint, last: bigint): void {
    for (let o = first < this.start ? this.start : first; o <= last; o++) {
      const s = this.ensure(o);
      if (s.state === 'available') this.finish(s, 'archived');
    }
  }

  /** The state of an offset at or past the start, extending the window with new available offsets. */
  private ensure(offset: bigint): OffsetState {
    while (this.start + BigInt(this.states.length) <= offset) this.states.push({ state: 'available', deliveryCount: 0, memberId: null, lockExpiresAt: 0 });
    return this.states[Number(offset - this.start)]!;
  }

  private advanceStart(): void {
    let k = 0;
    while (k < this.states.length && (this.states[k]!.state === 'acknowledged' || this.states[k]!.state === 'archived')) k++;
    if (k === 0) return;
    this.states.splice(0, k);
    this.start += BigInt(k);
    this.version++;
  }

  /** Consecutive acquired offsets with one delivery count form one range. */
  private ranges(offsets: readonly bigint[]): AcquiredRange[] {
    const out: AcquiredRange[] = [];
    for (const o of offsets) {
      const count = o >= this.start ? (this.states[Number(o - this.start)]?.deliveryCount ?? 1) : 1;
      const last = out[out.length - 1];
      if (last !== undefined && last.lastOffset === o - 1n && last.deliveryCount === count) out[out.length - 1] = { ...last, lastOffset: o };
      else out.push({ firstOffset: o, lastOffset: o, deliveryCount: count });
    }
    return out;
  }
}
