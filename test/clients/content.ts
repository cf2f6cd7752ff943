// Deterministic record content for the real-client round trips, and the
// verification every TypeScript-side consumer applies. The Python program
// (test/clients/python/round_trip.py) implements the same rules by hand.
//
// Record i of N on a topic of P partitions:
//   partition  i % P            (on a fresh topic: offset floor(i / P))
//   key        "k-<i>"
//   value      "v-<i>-" + filler of (i * 7919) % 97 chars, + 10000 chars when i % 1000 == 0
//   headers    idx=<i>, src=<client>, and empty="" when i % 5 == 0
//   timestamp  CreateTime base + i
// Values are printable ASCII without tabs or newlines so kcat can carry them as lines.

const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';

export function recordPartition(i: number, partitions: number): number {
  return i % partitions;
}

export function recordKey(i: number): string {
  return `k-${i}`;
}

export function recordValue(i: number): string {
  const length = ((i * 7919) % 97) + (i % 1000 === 0 ? 10_000 : 0);
  const chars: string[] = [`v-${i}-`];
  for (let j = 0; j < length; j++) chars.push(alphabet[(i + j * 31) % 36]!);
  return chars.join('');
}

export function recordHeaders(i: number, client: string): Array<[string, string]> {
  const headers: Array<[string, string]> = [
    ['idx', String(i)],
    ['src', client],
  ];
  if (i % 5 === 0) headers.push(['empty', '']);
  return headers;
}

export function recordTimestamp(i: number, baseTimestamp: number): number {
  return baseTimestamp + i;
}

/** Records a fresh partition p ends with after N records. */
export function partitionRecordCount(count: number, partitions: number, p: number): number {
  return p >= count ? 0 : Math.ceil((count - p) / partitions);
}

/** Default base timestamp: an hour ago, whole seconds (inside Kafka's accepted skew). */
export function defaultBaseTimestamp(now: number = Date.now()): number {
  return Math.floor(now / 1000) * 1000 - 3_600_000;
}

export interface ConsumedRecord {
  readonly partition: number;
  readonly offset: number;
  readonly key: string | null;
  readonly value: string | null;
  readonly headers: ReadonlyArray<readonly [string, string]>;
  readonly timestamp: number;
  /** false when the record carries LogAppendTime; undefined when the client does not say. */
  readonly createTime?: boolean;
}

export interface Expectation {
  /** Headers expected on record i. */
  headers(i: number): ReadonlyArray<readonly [string, string]>;
  /** Checks the timestamp of record i; returns a complaint or null. */
  timestamp(i: number, ts: number, partition: number): string | null;
}

/** The content rules above, for a producer that sets CreateTime explicitly. */
export function exactExpectation(client: string, baseTimestamp: number): Expectation {
  return {
    headers: (i) => recordHeaders(i, client),
    timestamp: (i, ts) => (ts === baseTimestamp + i ? null : `timestamp ${ts}, expected ${baseTimestamp + i}`),
  };
}

const maxErrors = 20;

export interface VerificationResult {
  readonly consumed: number;
  readonly duplicates: number;
  readonly missing: number;
  readonly errorCount: number;
  readonly errors: string[];
}

/**
 * Checks records as they arrive: partition p must hold records p, p+P, ... at
 * offsets 0, 1, ... with the expected key, value, headers and timestamp.
 */
export class RoundTripVerifier {
  private readonly seen: Uint8Array;
  private readonly nextOffset: number[];
  private consumed = 0;
  private duplicates = 0;
  private errorCount = 0;
  private readonly errors: string[] = [];

  constructor(
    private readonly count: number,
    private readonly partitions: number,
    private readonly expect: Expectation,
  ) {
    this.seen = new Uint8Array(count);
    this.nextOffset = new Array<number>(partitions).fill(0);
  }

  error(message: string): void {
    this.errorCount++;
    if (this.errors.length < maxErrors) this.errors.push(message);
  }

  /** Errors so far, without the end-of-run completeness checks of finish(). */
  report(): { errorCount: number; errors: string[] } {
    return { errorCount: this.errorCount, errors: [...this.errors] };
  }

  get consumedCount(): number {
    return this.consumed;
  }

  /** True once every partition has reached its expected end offset. */
  get complete(): boolean {
    for (let p = 0; p < this.partitions; p++) {
      if ((this.nextOffset[p] ?? 0) < partitionRecordCount(this.count, this.partitions, p)) return false;
    }
    return true;
  }

  observe(r: ConsumedRecord): void {
    this.consumed++;
    const where = `partition ${r.partition} offset ${r.offset}`;
    if (r.partition < 0 || r.partition >= this.partitions) {
      this.error(`${where}: unexpected partition`);
      return;
    }
    const want = this.nextOffset[r.partition] ?? 0;
    if (r.offset !== want) this.error(`${where}: expected offset ${want} next (gap or reorder)`);
    this.nextOffset[r.partition] = r.offset + 1;
    const m = r.key === null ? null : /^k-(\d+)$/.exec(r.key);
    const i = m?.[1] === undefined ? -1 : Number(m[1]);
    if (i < 0 || i >= this.count) {
      this.error(`${where}: unexpected key ${JSON.stringify(r.key)}`);
      return;
    }
    if (this.seen[i] === 1) {
      this.duplicates++;
      this.error(`${where}: duplicate of record ${i}`);
      return;
    }
    this.seen[i] = 1;
    const expectedIndex = r.partition + r.offset * this.partitions;
    if (i !== expectedIndex) this.error(`${where}: holds record ${i}, expected record ${expectedIndex}`);
    if (r.value !== recordValue(i)) this.error(`${where}: value of record ${i} differs`);
    const headers = this.expect.headers(i);
    if (!sameHeaders(r.headers, headers)) this.error(`${where}: headers of record ${i} are ${JSON.stringify(r.headers)}`);
    if (r.createTime === false) this.error(`${where}: record ${i} has LogAppendTime, expected CreateTime`);
    const tsComplaint = this.expect.timestamp(i, r.timestamp, r.partition);
    if (tsComplaint !== null) this.error(`${where}: record ${i}: ${tsComplaint}`);
  }

  finish(): VerificationResult {
    for (let p = 0; p < this.partitions; p++) {
      const want = partitionRecordCount(this.count, this.partitions, p);
      const got = this.nextOffset[p] ?? 0;
      if (got !== want) this.error(`partition ${p} ended at offset ${got}, expected ${want}`);
    }
    let unique = 0;
    for (const s of this.seen) unique += s;
    const missing = this.count - unique;
    if (missing > 0) this.error(`${missing} records missing`);
    return { consumed: this.consumed, duplicates: this.duplicates, missing, errorCount: this.errorCount, errors: this.errors };
  }
}

function sameHeaders(a: ReadonlyArray<readonly [string, string]>, b: ReadonlyArray<readonly [string, string]>): boolean {
  if (a.length !== b.length) return false;
  for (let k = 0; k < a.length; k++) {
    if (a[k]?.[0] !== b[k]?.[0] || a[k]?.[1] !== b[k]?.[1]) return false;
  }
  return true;
}

/** The JSON line every client program prints last. */
export interface RoundTripSummary {
  readonly client: string;
  readonly clientVersion: string;
  readonly compression: string;
  readonly idempotent: boolean;
  readonly mode: 'assign' | 'group';
  readonly topic: string;
  readonly partitions: number;
  readonly baseTimestamp: number;
  readonly produced: number;
  readonly consumed: number;
  readonly duplicates: number;
  readonly missing: number;
  readonly listOffsetsChecked: number;
  readonly produceMs: number;
  readonly consumeMs: number;
  readonly ok: boolean;
  readonly errorCount: number;
  readonly errors: string[];
  readonly [extra: string]: unknown;
}

/**
 * Expected ListOffsets answer for timestamp base + i on partition p: the first
 * record j >= i with j % P == p, at offset floor(j / P); -1 when there is none.
 */
export function expectedOffsetForTimestamp(i: number, p: number, count: number, partitions: number): number {
  const j = i + ((((p - i) % partitions) + partitions) % partitions);
  return j < count ? Math.floor(j / partitions) : -1;
}

/** The sample record indexes whose timestamps the ListOffsets checks query. */
export function timestampSamples(count: number): number[] {
  return [...new Set([0, 1, Math.floor(count / 3), Math.floor(count / 2), count - 1])].filter((i) => i >= 0 && i < count).sort((a, b) => a - b);
}
