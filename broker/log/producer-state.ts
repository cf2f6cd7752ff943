// Idempotent and transactional producer state per partition, after Kafka's
// ProducerStateEntry / ProducerAppendInfo / ProducerStateManager. Pure: the
// snapshot files are handled by producer-snapshots.ts.
//
// Per producer id: the current epoch, the last 5 batches (first/last sequence
// and offsets, for duplicate detection), the coordinator epoch and the first
// offset of an open transaction. Rules (Kafka 4, transaction version unknown):
// - epoch below the current one: INVALID_PRODUCER_EPOCH (fenced);
// - new epoch: the first sequence must be 0, unless the producer had no epoch;
// - same epoch: the first sequence must follow the last one (wrapping at
//   Int32.MAX), unless no state is known for the producer (its records were
//   deleted by retention or DeleteRecords): then any sequence is accepted, which
//   is how Kafka 4 treats an unknown producer id (no UNKNOWN_PRODUCER_ID error);
// - a batch equal to one of the last 5 (same epoch, same sequence range) is a
//   duplicate: the append returns the original offsets and writes nothing.
import { ErrorCode, KafkaError } from '../protocol/errors.js';

export const NUM_BATCHES_TO_RETAIN = 5;
export const NO_PRODUCER_EPOCH = -1;
export const NO_SEQUENCE = -1;
const INT32_MAX = 0x7fffffff;

export type AppendOrigin = 'client' | 'coordinator' | 'replication';

export function incrementSequence(sequence: number, increment: number): number {
  if (sequence > INT32_MAX - increment) return increment - (INT32_MAX - sequence) - 1;
  return sequence + increment;
}

export function decrementSequence(sequence: number, decrement: number): number {
  if (sequence < decrement) return INT32_MAX - (decrement - sequence) + 1;
  return sequence - decrement;
}

export interface BatchMetadata {
  lastSeq: number;
  lastOffset: bigint;
  offsetDelta: number;
  timestamp: bigint;
}

export const firstSeqOf = (b: BatchMetadata): number => decrementSequence(b.lastSeq, b.offsetDelta);
export const firstOffsetOf = (b: BatchMetadata): bigint => b.lastOffset - BigInt(b.offsetDelta);

export class ProducerStateEntry {
  constructor(
    readonly producerId: bigint,
    public producerEpoch = NO_PRODUCER_EPOCH,
    public coordinatorEpoch = -1,
    public lastTimestamp = -1n,
    public currentTxnFirstOffset = -1n,
    readonly batches: BatchMetadata[] = [],
  ) {}

  clone(): ProducerStateEntry {
    return new ProducerStateEntry(
      this.producerId,
      this.producerEpoch,
      this.coordinatorEpoch,
      this.lastTimestamp,
      this.currentTxnFirstOffset,
      this.batches.map((b) => ({ ...b })),
    );
  }

  get isEmpty(): boolean {
    return this.batches.length === 0;
  }

  get lastSeq(): number {
    const b = this.batches[this.batches.length - 1];
    return b === undefined ? NO_SEQUENCE : b.lastSeq;
  }

  get lastDataOffset(): bigint {
    const b = this.batches[this.batches.length - 1];
    return b === undefined ? -1n : b.lastOffset;
  }

  get lastOffsetDelta(): number {
    return this.batches[this.batches.length - 1]?.offsetDelta ?? 0;
  }

  /** A new epoch forgets the batches of the old one. */
  maybeUpdateProducerEpoch(epoch: number): boolean {
    if (this.producerEpoch === epoch) return false;
    this.batches.length = 0;
    this.producerEpoch = epoch;
    return true;
  }

  addBatch(epoch: number, lastSeq: number, lastOffset: bigint, offsetDelta: number, timestamp: bigint): void {
    this.maybeUpdateProducerEpoch(epoch);
    this.batches.push({ lastSeq, lastOffset, offsetDelta, timestamp });
    if (this.batches.length > NUM_BATCHES_TO_RETAIN) this.batches.shift();
    this.lastTimestamp = timestamp;
  }

  /** One of the retained batches with exactly this epoch and sequence range. */
  findDuplicateBatch(epoch: number, firstSeq: number, lastSeq: number): BatchMetadata | null {
    if (epoch !== this.producerEpoch) return null;
    for (const b of this.batches) if (b.lastSeq === lastSeq && firstSeqOf(b) === firstSeq) return b;
    return null;
  }
}

export interface TxnMetadata {
  producerId: bigint;
  firstOffset: bigint;
}

export interface CompletedTxn {
  producerId: bigint;
  firstOffset: bigint;
  /** Offset of the COMMIT/ABORT marker. */
  lastOffset: bigint;
  isAborted: boolean;
}

export interface EndTxnMarker {
  type: 'COMMIT' | 'ABORT';
  coordinatorEpoch: number;
}

const fail = (code: number, message: string): never => {
  throw new KafkaError(code, message);
};

/** Validates one producer's batches of an append against its state and accumulates the new state. */
export class ProducerAppendInfo {
  readonly updatedEntry: ProducerStateEntry;
  readonly startedTransactions: TxnMetadata[] = [];

  constructor(
    readonly producerId: bigint,
    private readonly currentEntry: ProducerStateEntry,
    private readonly origin: AppendOrigin,
  ) {
    this.updatedEntry = currentEntry.clone();
  }

  private checkProducerEpoch(producerEpoch: number, offset: bigint): void {
    if (producerEpoch < this.updatedEntry.producerEpoch && this.origin !== 'replication') {
      fail(
        ErrorCode.INVALID_PRODUCER_EPOCH,
        `epoch of producer ${this.producerId} at offset ${offset} is ${producerEpoch}, older than the last seen epoch ${this.updatedEntry.producerEpoch}`,
      );
    }
  }

  private checkSequence(producerEpoch: number, appendFirstSeq: number, offset: bigint): void {
    const current = this.updatedEntry;
    if (producerEpoch !== current.producerEpoch) {
      if (appendFirstSeq !== 0 && current.producerEpoch !== NO_PRODUCER_EPOCH) {
        fail(
          ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
          `invalid sequence number for new epoch of producer ${this.producerId} at offset ${offset}: ${producerEpoch} (request epoch), ${appendFirstSeq} (seq. number), ${current.producerEpoch} (current producer epoch)`,
        );
      }
      return;
    }
    let currentLastSeq: number;
    if (!current.isEmpty) currentLastSeq = current.lastSeq;
    else if (producerEpoch === this.currentEntry.producerEpoch) currentLastSeq = this.currentEntry.lastSeq;
    else currentLastSeq = NO_SEQUENCE;
    const inSequence = appendFirstSeq === currentLastSeq + 1 || (appendFirstSeq === 0 && currentLastSeq === INT32_MAX);
    if (!(this.currentEntry.producerEpoch === NO_PRODUCER_EPOCH || inSequence)) {
      fail(
        ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
        `out of order sequence number for producer ${this.producerId} at offset ${offset}: ${appendFirstSeq} (incoming seq. number), ${currentLastSeq} (current end sequence number)`,
      );
    }
  }

  appendDataBatch(
    epoch: number,
    firstSeq: number,
    lastSeq: number,
    lastTimestamp: bigint,
    firstOffset: bigint,
    lastOffset: bigint,
    isTransactional: boolean,
  ): void {
    this.checkProducerEpoch(epoch, firstOffset);
    if (this.origin === 'client') this.checkSequence(epoch, firstSeq, firstOffset);
    this.updatedEntry.addBatch(epoch, lastSeq, lastOffset, Number(lastOffset - firstOffset), lastTimestamp);
    const txnFirst = this.updatedEntry.currentTxnFirstOffset;
    if (txnFirst >= 0n && !isTransactional) {
      fail(ErrorCode.INVALID_TXN_STATE, `expected a transactional write from producer ${this.producerId} at offset ${firstOffset}`);
    } else if (txnFirst < 0n && isTransactional) {
      this.updatedEntry.currentTxnFirstOffset = firstOffset;
      this.startedTransactions.push({ producerId: this.producerId, firstOffset });
    }
  }

  appendEndTxnMarker(marker: EndTxnMarker, producerEpoch: number, offset: bigint, timestamp: bigint): CompletedTxn {
    this.checkProducerEpoch(producerEpoch, offset);
    if (this.updatedEntry.coordinatorEpoch > marker.coordinatorEpoch && this.origin !== 'replication') {
      fail(
        ErrorCode.TRANSACTION_COORDINATOR_FENCED,
        `invalid coordinator epoch for producer ${this.producerId} at offset ${offset}: ${marker.coordinatorEpoch} (zombie), ${this.updatedEntry.coordinatorEpoch} (current)`,
      );
    }
    this.updatedEntry.maybeUpdateProducerEpoch(producerEpoch);
    const txnFirst = this.updatedEntry.currentTxnFirstOffset;
    const firstOffset = txnFirst >= 0n ? txnFirst : offset;
    this.updatedEntry.coordinatorEpoch = marker.coordinatorEpoch;
    this.updatedEntry.currentTxnFirstOffset = -1n;
    this.updatedEntry.lastTimestamp = timestamp;
    return { producerId: this.producerId, firstOffset, lastOffset: offset, isAborted: marker.type === 'ABORT' };
  }
}

export class ProducerStateManager {
  private readonly producers = new Map<bigint, ProducerStateEntry>();
  /** Open transactions by first offset. */
  private readonly ongoingTxns = new Map<bigint, TxnMetadata>();
  private mapEndOffset = 0n;

  constructor(readonly producerIdExpirationMs = 86_400_000) {}

  /** The offset up to which the log has been applied to this state. */
  get mapEndOffsetValue(): bigint {
    return this.mapEndOffset;
  }

  updateMapEndOffset(offset: bigint): void {
    this.mapEndOffset = offset;
  }

  get producerCount(): number {
    return this.producers.size;
  }

  lastEntry(producerId: bigint): ProducerStateEntry | undefined {
    return this.producers.get(producerId);
  }

  activeProducers(): ReadonlyMap<bigint, ProducerStateEntry> {
    return this.producers;
  }

  prepareUpdate(producerId: bigint, origin: AppendOrigin): ProducerAppendInfo {
    const current = this.producers.get(producerId) ?? new ProducerStateEntry(producerId);
    return new ProducerAppendInfo(producerId, current, origin);
  }

  update(info: ProducerAppendInfo): void {
    this.producers.set(info.producerId, info.updatedEntry);
    for (const t of info.startedTransactions) this.ongoingTxns.set(t.firstOffset, t);
  }

  /**
   * The LSO right after `completed` ends: the earliest other open transaction, else
   * the marker + 1. `alsoCompleted` holds first offsets of transactions already
   * ended by appends not yet written (still open for readers until then).
   */
  lastStableOffset(completed: CompletedTxn, alsoCompleted?: ReadonlySet<bigint>): bigint {
    let min: bigint | null = null;
    for (const t of this.ongoingTxns.values()) {
      if (alsoCompleted?.has(t.firstOffset) === true) continue;
      if (t.producerId !== completed.producerId && (min === null || t.firstOffset < min)) min = t.firstOffset;
    }
    return min ?? completed.lastOffset + 1n;
  }

  completeTxn(completed: CompletedTxn): void {
    this.ongoingTxns.delete(completed.firstOffset);
  }

  /** First offset of the earliest open transaction, or null. */
  firstUnstableOffset(): bigint | null {
    let min: bigint | null = null;
    for (const t of this.ongoingTxns.values()) if (min === null || t.firstOffset < min) min = t.firstOffset;
    return min;
  }

  ongoingTransactions(): TxnMetadata[] {
    return [...this.ongoingTxns.values()].sort((a, b) => (a.firstOffset < b.firstOffset ? -1 : 1));
  }

  /** Kafka's removeExpiredProducers: idle producers without an open transaction. */
  removeExpiredProducers(nowMs: number): number {
    let removed = 0;
    for (const [pid, e] of this.producers) {
      if (e.currentTxnFirstOffset < 0n && nowMs - Number(e.lastTimestamp) >= this.producerIdExpirationMs) {
        this.producers.delete(pid);
        removed++;
      }
    }
    return removed;
  }

  /** Forgets everything (before a reload from a snapshot). */
  clear(): void {
    this.producers.clear();
    this.ongoingTxns.clear();
    this.mapEndOffset = 0n;
  }

  /** Replaces the state with snapshot entries taken at `offset`. */
  loadEntries(entries: readonly ProducerStateEntry[], offset: bigint): void {
    this.clear();
    for (const e of entries) {
      this.producers.set(e.producerId, e);
      if (e.currentTxnFirstOffset >= 0n) {
        this.ongoingTxns.set(e.currentTxnFirstOffset, { producerId: e.producerId, firstOffset: e.currentTxnFirstOffset });
      }
    }
    this.mapEndOffset = offset;
  }

  entries(): ProducerStateEntry[] {
    return [...this.producers.values()];
  }
}
