// Verification for the drivers whose producer cannot pick partitions or
// timestamps itself (Kafka's console producer, kcat): records are placed by a
// partitioner function, and the timestamps are the producer's clock, checked to
// lie in the produce window and never to go back within a partition.
import { partitionRecordCount, recordKey, recordValue } from '../clients/content.js';

/** Kafka's Utils.murmur2 (the Java client's partitioner hash), over UTF-8 bytes. */
export function murmur2(data: Uint8Array): number {
  const length = data.length;
  const m = 0x5bd1e995;
  const r = 24;
  let h = (0x9747b28c ^ length) | 0;
  const length4 = length >>> 2;
  for (let i = 0; i < length4; i++) {
    const i4 = i * 4;
    let k = (data[i4]! & 0xff) | ((data[i4 + 1]! & 0xff) << 8) | ((data[i4 + 2]! & 0xff) << 16) | ((data[i4 + 3]! & 0xff) << 24);
    k = Math.imul(k, m);
    k ^= k >>> r;
    k = Math.imul(k, m);
    h = Math.imul(h, m);
    h ^= k;
  }
  const tail = length & ~3;
  const rest = length % 4;
  if (rest >= 3) h ^= (data[tail + 2]! & 0xff) << 16;
  if (rest >= 2) h ^= (data[tail + 1]! & 0xff) << 8;
  if (rest >= 1) {
    h ^= data[tail]! & 0xff;
    h = Math.imul(h, m);
  }
  h ^= h >>> 13;
  h = Math.imul(h, m);
  h ^= h >>> 15;
  return h | 0;
}

/** The Java client's partition for a keyed record: toPositive(murmur2(key)) % partitions. */
export function keyedPartition(key: string, partitions: number): number {
  return (murmur2(Buffer.from(key, 'utf8')) & 0x7fffffff) % partitions;
}

/** Where each record lands and at which offset, for records 0..count-1 produced in order. */
export class Placement {
  readonly partitionOf: Int32Array;
  readonly offsetOf: Int32Array;
  readonly counts: number[];

  constructor(
    readonly count: number,
    readonly partitions: number,
    partitioner: (i: number) => number,
  ) {
    this.partitionOf = new Int32Array(count);
    this.offsetOf = new Int32Array(count);
    this.counts = new Array<number>(partitions).fill(0);
    for (let i = 0; i < count; i++) {
      const p = partitioner(i);
      this.partitionOf[i] = p;
      this.offsetOf[i] = this.counts[p]!++;
    }
  }

  /** Record i on partition i % P (a producer that names the partition). */
  static modulo(count: number, partitions: number): Placement {
    const p = new Placement(count, partitions, (i) => i % partitions);
    for (let q = 0; q < partitions; q++) {
      if (p.counts[q] !== partitionRecordCount(count, partitions, q)) throw new Error('placement disagrees with content.ts');
    }
    return p;
  }
}

export interface ObservedRecord {
  readonly partition: number;
  readonly offset: number;
  readonly key: string | null;
  readonly value: string | null;
  readonly headers: ReadonlyArray<readonly [string, string]>;
  readonly timestamp: number;
  readonly createTime: boolean;
}

const maxErrors = 20;

/**
 * Checks consumed records against a Placement: keys, values, headers (given per
 * record), CreateTime inside [windowStart - 1 s, windowEnd + 1 s] and never going
 * back within a partition, offsets without gaps. Keeps each record's timestamp
 * for the ListOffsets-by-timestamp checks.
 */
export class PlacedVerifier {
  private readonly seen: Uint8Array;
  private readonly next: number[];
  /** timestamps[p][offset] */
  readonly timestamps: number[][];
  consumed = 0;
  duplicates = 0;
  errorCount = 0;
  readonly errors: string[] = [];

  constructor(
    private readonly placement: Placement,
    private readonly headersOf: (i: number) => ReadonlyArray<readonly [string, string]>,
    private readonly window: { readonly start: number; readonly end: number },
  ) {
    this.seen = new Uint8Array(placement.count);
    this.next = new Array<number>(placement.partitions).fill(0);
    this.timestamps = Array.from({ length: placement.partitions }, () => []);
  }

  error(message: string): void {
    this.errorCount++;
    if (this.errors.length < maxErrors) this.errors.push(message);
  }

  get complete(): boolean {
    return this.next.every((n, p) => n >= this.placement.counts[p]!);
  }

  observe(r: ObservedRecord): void {
    this.consumed++;
    const where = `partition ${r.partition} offset ${r.offset}`;
    if (r.partition < 0 || r.partition >= this.placement.partitions) {
      this.error(`${where}: unexpected partition`);
      return;
    }
    const want = this.next[r.partition]!;
    if (r.offset !== want) this.error(`${where}: expected offset ${want} next (gap or reorder)`);
    this.next[r.partition] = r.offset + 1;
    const ts = this.timestamps[r.partition]!;
    const previous = ts[r.offset - 1];
    ts[r.offset] = r.timestamp;
    const m = r.key === null ? null : /^k-(\d+)$/.exec(r.key);
    const i = m?.[1] === undefined ? -1 : Number(m[1]);
    if (i < 0 || i >= this.placement.count) {
      this.error(`${where}: unexpected key ${JSON.stringify(r.key)}`);
      return;
    }
    if (this.seen[i] === 1) {
      this.duplicates++;
      this.error(`${where}: duplicate of record ${i}`);
      return;
    }
    this.seen[i] = 1;
    if (this.placement.partitionOf[i] !== r.partition || this.placement.offsetOf[i] !== r.offset) {
      this.error(`${where}: holds record ${i}, expected at partition ${this.placement.partitionOf[i]} offset ${this.placement.offsetOf[i]}`);
    }
    if (r.key !== recordKey(i) || r.value !== recordValue(i)) this.error(`${where}: key or value of record ${i} differs`);
    const headers = this.headersOf(i);
    if (r.headers.length !== headers.length || r.headers.some(([k, v], n) => headers[n]?.[0] !== k || headers[n]?.[1] !== v)) {
      this.error(`${where}: headers of record ${i} are ${JSON.stringify(r.headers)}, expected ${JSON.stringify(headers)}`);
    }
    if (!r.createTime) this.error(`${where}: record ${i} has LogAppendTime, expected CreateTime`);
    if (r.timestamp < this.window.start - 1000 || r.timestamp > this.window.end + 1000) {
      this.error(`${where}: timestamp ${r.timestamp} outside the produce window ${this.window.start}..${this.window.end}`);
    }
    if (previous !== undefined && r.timestamp < previous) this.error(`${where}: timestamp ${r.timestamp} goes back from ${previous}`);
  }

  finish(): void {
    for (let p = 0; p < this.placement.partitions; p++) {
      if (this.next[p] !== this.placement.counts[p]) this.error(`partition ${p} ended at offset ${this.next[p]}, expected ${this.placement.counts[p]}`);
    }
    let unique = 0;
    for (const s of this.seen) unique += s;
    if (unique < this.placement.count) this.error(`${this.placement.count - unique} records missing`);
  }

  /** First offset of partition p whose timestamp is >= target, or -1 (ListOffsets semantics). */
  offsetForTimestamp(p: number, target: number): number {
    const ts = this.timestamps[p] ?? [];
    for (let off = 0; off < ts.length; off++) if ((ts[off] ?? -Infinity) >= target) return off;
    return -1;
  }

  /** Sample timestamps to query: those of a few records spread over the run, plus one past the end. */
  sampleTimestamps(): number[] {
    const out = new Set<number>();
    for (const ts of this.timestamps) {
      for (const f of [0, 0.37, 0.71]) {
        const v = ts[Math.floor(f * (ts.length - 1))];
        if (v !== undefined) out.add(v);
      }
    }
    const max = Math.max(...this.timestamps.flat());
    if (Number.isFinite(max)) out.add(max + 1000);
    return [...out].sort((a, b) => a - b);
  }
}
