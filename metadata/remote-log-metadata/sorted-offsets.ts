// A sorted list of (offset, slot) pairs in two typed arrays: 12 bytes a pair, no
// per-entry objects. Remote segments arrive in offset order and expire oldest
// first, so inserts land at the tail and removals at the head; both are O(1)
// amortised there (the live range floats inside the arrays), O(n) elsewhere.
// Equal offsets are allowed and kept in insertion order. Pure.

export class SortedOffsets {
  private keys: BigInt64Array;
  private values: Int32Array;
  private head = 0;
  private tail = 0;

  constructor(initialCapacity = 8) {
    this.keys = new BigInt64Array(initialCapacity);
    this.values = new Int32Array(initialCapacity);
  }

  get size(): number {
    return this.tail - this.head;
  }

  keyAt(i: number): bigint {
    return this.keys[this.head + i] as bigint;
  }

  valueAt(i: number): number {
    return this.values[this.head + i] as number;
  }

  /** Index of the last entry whose offset is <= `offset`, or -1. */
  floorIndex(offset: bigint): number {
    return this.upperBound(offset) - 1;
  }

  /** Inserts after any entries with the same offset; returns the index used. */
  insert(offset: bigint, value: number): number {
    const i = this.upperBound(offset);
    if (this.tail === this.keys.length) this.makeRoom();
    const at = this.head + i;
    if (at < this.tail) {
      this.keys.copyWithin(at + 1, at, this.tail);
      this.values.copyWithin(at + 1, at, this.tail);
    }
    this.keys[at] = offset;
    this.values[at] = value;
    this.tail++;
    return i;
  }

  setValueAt(i: number, value: number): void {
    this.values[this.head + i] = value;
  }

  /** Removes the entry (offset, value); false when there is none. */
  remove(offset: bigint, value: number): boolean {
    for (let i = this.upperBound(offset) - 1; i >= 0 && this.keyAt(i) === offset; i--) {
      if (this.valueAt(i) === value) {
        this.removeAt(i);
        return true;
      }
    }
    return false;
  }

  removeAt(i: number): void {
    const at = this.head + i;
    if (i < this.size / 2) {
      this.keys.copyWithin(this.head + 1, this.head, at);
      this.values.copyWithin(this.head + 1, this.head, at);
      this.head++;
    } else {
      this.keys.copyWithin(at, at + 1, this.tail);
      this.values.copyWithin(at, at + 1, this.tail);
      this.tail--;
    }
    if (this.head === this.tail) this.head = this.tail = 0;
  }

  /** Bytes held by the backing arrays. */
  get byteLength(): number {
    return this.keys.byteLength + this.values.byteLength;
  }

  /** Index of the first entry whose offset is > `offset` (relative to head). */
  private upperBound(offset: bigint): number {
    let lo = this.head;
    let hi = this.tail;
    const keys = this.keys;
    // Appends dominate: check the tail before searching.
    if (hi > lo && (keys[hi - 1] as bigint) <= offset) return hi - this.head;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((keys[mid] as bigint) <= offset) lo = mid + 1;
      else hi = mid;
    }
    return lo - this.head;
  }

  private makeRoom(): void {
    const size = this.size;
    const capacity = this.keys.length;
    if (this.head > 0 && size <= capacity / 2) {
      this.keys.copyWithin(0, this.head, this.tail);
      this.values.copyWithin(0, this.head, this.tail);
    } else {
      const keys = new BigInt64Array(Math.max(8, capacity * 2));
      const values = new Int32Array(keys.length);
      keys.set(this.keys.subarray(this.head, this.tail));
      values.set(this.values.subarray(this.head, this.tail));
      this.keys = keys;
      this.values = values;
    }
    this.head = 0;
    this.tail = size;
  }
}
