// Transaction state while the cleaner walks a log (Kafka's
// CleanedTransactionMetadata). It answers two questions, batch by batch, in log
// order:
//  - is this data batch part of an aborted transaction? (then its records can
//    be dropped: READ_COMMITTED consumers would skip them and READ_UNCOMMITTED
//    ones never owed them a place after cleaning);
//  - can this COMMIT/ABORT marker go? Only once no batch of its transaction is
//    left in the range being cleaned, and then (like a tombstone) only after its
//    delete horizon. An ABORT marker that stays keeps its entry in the cleaned
//    segment's transaction index.
// Pure: the aborted transactions come from the transaction indexes, fed in
// before the batches they cover.
import type { AbortedTxn } from '../txn-index.js';

export interface TxnBatchView {
  producerId: bigint;
  lastOffset: bigint;
  isTransactional: boolean;
}

/** The control record type of a marker batch (0 = ABORT, 1 = COMMIT), or null for an empty batch. */
export type ControlType = number | null;

const CONTROL_ABORT = 0;
const CONTROL_COMMIT = 1;

interface OngoingAbort {
  txn: AbortedTxn;
  /** Last offset of the latest batch of this transaction seen, or null if none was. */
  lastObservedBatchOffset: bigint | null;
}

export class CleanedTxnState {
  /** Aborted transactions not yet reached, by first offset (ascending). */
  private pending: AbortedTxn[] = [];
  private readonly known = new Set<string>();
  private readonly ongoingCommitted = new Set<bigint>();
  private readonly ongoingAborted = new Map<bigint, OngoingAbort>();
  /** Receives the aborted transactions whose marker is retained (the cleaned segment's txn index). */
  onRetainedAbort: ((txn: AbortedTxn) => void) | null = null;

  /** Adds aborted transactions from a transaction index; ones already known are ignored. */
  addAbortedTransactions(txns: readonly AbortedTxn[]): void {
    let added = false;
    for (const t of txns) {
      const id = `${t.producerId}:${t.firstOffset}`;
      if (this.known.has(id)) continue;
      this.known.add(id);
      this.pending.push(t);
      added = true;
    }
    if (added) this.pending.sort((a, b) => (a.firstOffset < b.firstOffset ? -1 : a.firstOffset > b.firstOffset ? 1 : 0));
  }

  private consumeAbortedUpTo(offset: bigint): void {
    let n = 0;
    while (n < this.pending.length && (this.pending[n] as AbortedTxn).firstOffset <= offset) {
      const t = this.pending[n] as AbortedTxn;
      if (!this.ongoingAborted.has(t.producerId)) this.ongoingAborted.set(t.producerId, { txn: t, lastObservedBatchOffset: null });
      n++;
    }
    if (n > 0) this.pending = this.pending.slice(n);
  }

  /** A data batch: returns true when it belongs to an aborted transaction (safe to discard). */
  onBatchRead(batch: TxnBatchView): boolean {
    this.consumeAbortedUpTo(batch.lastOffset);
    if (!batch.isTransactional) return false;
    const aborted = this.ongoingAborted.get(batch.producerId);
    if (aborted !== undefined) {
      aborted.lastObservedBatchOffset = batch.lastOffset;
      return true;
    }
    this.ongoingCommitted.add(batch.producerId);
    return false;
  }

  /** A control batch: returns true when the marker may be discarded (subject to its delete horizon). */
  onControlBatchRead(batch: TxnBatchView, type: ControlType): boolean {
    this.consumeAbortedUpTo(batch.lastOffset);
    // An empty control batch was emptied by an earlier round: nothing depends on it.
    if (type === null) return true;
    if (type === CONTROL_ABORT) {
      const aborted = this.ongoingAborted.get(batch.producerId);
      this.ongoingAborted.delete(batch.producerId);
      if (aborted !== undefined && aborted.lastObservedBatchOffset !== null) {
        this.onRetainedAbort?.(aborted.txn);
        return false;
      }
      return true;
    }
    if (type === CONTROL_COMMIT) return !this.ongoingCommitted.delete(batch.producerId);
    return false;
  }
}
