// The transaction index of a segment, Kafka's `.txnindex` format: one 34-byte
// entry per aborted transaction whose marker is in the segment: version (int16,
// 0), producerId (int64), firstOffset (int64), lastOffset (int64, the abort
// marker), lastStableOffset (int64, the LSO right after the abort). READ_COMMITTED
// fetches use it to tell consumers which records to drop. Pure.
import { CorruptIndexError, ensureCapacity } from './abstract-index.js';

export const ABORTED_TXN_SIZE = 34;
const ABORTED_TXN_VERSION = 0;

export interface AbortedTxn {
  producerId: bigint;
  firstOffset: bigint;
  lastOffset: bigint;
  lastStableOffset: bigint;
}

export interface TxnIndexSearchResult {
  abortedTransactions: AbortedTxn[];
  /** True when an entry proved no later segment can hold aborts relevant below upperBoundOffset. */
  isComplete: boolean;
}

export function encodeAbortedTxn(t: AbortedTxn, out: Buffer = Buffer.allocUnsafe(ABORTED_TXN_SIZE), at = 0): Buffer {
  out.writeInt16BE(ABORTED_TXN_VERSION, at);
  out.writeBigInt64BE(t.producerId, at + 2);
  out.writeBigInt64BE(t.firstOffset, at + 10);
  out.writeBigInt64BE(t.lastOffset, at + 18);
  out.writeBigInt64BE(t.lastStableOffset, at + 26);
  return out;
}

export function decodeAbortedTxn(buf: Buffer, at: number): AbortedTxn {
  const version = buf.readInt16BE(at);
  if (version !== ABORTED_TXN_VERSION) throw new CorruptIndexError(`aborted txn entry version ${version} is not ${ABORTED_TXN_VERSION}`);
  return {
    producerId: buf.readBigInt64BE(at + 2),
    firstOffset: buf.readBigInt64BE(at + 10),
    lastOffset: buf.readBigInt64BE(at + 18),
    lastStableOffset: buf.readBigInt64BE(at + 26),
  };
}

export class TransactionIndex {
  private buf: Buffer;
  private count: number;
  private readonly initialBytes: number;

  constructor(
    readonly baseOffset: bigint,
    initial?: Buffer,
  ) {
    const n = initial === undefined ? 0 : Math.floor(initial.length / ABORTED_TXN_SIZE);
    this.buf = Buffer.allocUnsafe(Math.max(ABORTED_TXN_SIZE * 2, n * ABORTED_TXN_SIZE));
    if (initial !== undefined) initial.copy(this.buf, 0, 0, n * ABORTED_TXN_SIZE);
    this.count = n;
    this.initialBytes = initial?.length ?? 0;
  }

  get entries(): number {
    return this.count;
  }

  get sizeInBytes(): number {
    return this.count * ABORTED_TXN_SIZE;
  }

  entry(n: number): AbortedTxn {
    if (n < 0 || n >= this.count) throw new RangeError(`txn index entry ${n} out of range [0, ${this.count})`);
    return decodeAbortedTxn(this.buf, n * ABORTED_TXN_SIZE);
  }

  all(): AbortedTxn[] {
    const out: AbortedTxn[] = [];
    for (let i = 0; i < this.count; i++) out.push(this.entry(i));
    return out;
  }

  /** Adds an entry (last offsets must increase) and returns its encoded bytes. */
  append(t: AbortedTxn): Buffer {
    if (this.count > 0) {
      const last = this.entry(this.count - 1);
      if (t.lastOffset <= last.lastOffset) {
        throw new RangeError(`aborted txn last offset ${t.lastOffset} is not after the previous ${last.lastOffset}`);
      }
    }
    const at = this.count * ABORTED_TXN_SIZE;
    this.buf = ensureCapacity(this.buf, at, at + ABORTED_TXN_SIZE);
    encodeAbortedTxn(t, this.buf, at);
    this.count++;
    return this.buf.subarray(at, at + ABORTED_TXN_SIZE);
  }

  /**
   * Aborted transactions overlapping [fetchOffset, upperBoundOffset): Kafka's
   * collectAbortedTxns. Complete once an entry's LSO reaches the upper bound.
   */
  collectAbortedTxns(fetchOffset: bigint, upperBoundOffset: bigint): TxnIndexSearchResult {
    const abortedTransactions: AbortedTxn[] = [];
    for (let i = 0; i < this.count; i++) {
      const t = this.entry(i);
      if (t.lastOffset >= fetchOffset && t.firstOffset < upperBoundOffset) abortedTransactions.push(t);
      if (t.lastStableOffset >= upperBoundOffset) return { abortedTransactions, isComplete: true };
    }
    return { abortedTransactions, isComplete: false };
  }

  /** Removes entries whose abort marker is at or after `offset`; returns the number kept. */
  truncateTo(offset: bigint): number {
    let keep = 0;
    while (keep < this.count && this.entry(keep).lastOffset < offset) keep++;
    this.count = keep;
    return keep;
  }

  reset(): void {
    this.count = 0;
  }

  bytes(): Buffer {
    return this.buf.subarray(0, this.sizeInBytes);
  }

  /** Whole entries of version 0, markers inside the segment and increasing. */
  sanityCheck(): void {
    if (this.initialBytes % ABORTED_TXN_SIZE !== 0) {
      throw new CorruptIndexError(`txn index of base ${this.baseOffset} has a partial entry (${this.initialBytes} bytes)`);
    }
    let prev = this.baseOffset - 1n;
    for (let i = 0; i < this.count; i++) {
      const t = this.entry(i);
      if (t.lastOffset <= prev || t.firstOffset > t.lastOffset) {
        throw new CorruptIndexError(`txn index of base ${this.baseOffset}: entry ${i} out of order`);
      }
      prev = t.lastOffset;
    }
  }
}
