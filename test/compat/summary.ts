// The report every compatibility-matrix program prints as its last line (Java,
// Go and Python print the same JSON shape), and helpers to build it in
// TypeScript for the drivers that run here (kafkajs, Kafka's CLI tools, kcat).

/** Columns of docs/compatibility.md; each client maps its operations onto them. */
export const matrixColumns = ['createTopic', 'produce', 'consumeGroup', 'listOffsets', 'groupLag'] as const;
export type MatrixColumn = (typeof matrixColumns)[number];

export const columnTitles: Readonly<Record<MatrixColumn, string>> = {
  createTopic: 'create topic',
  produce: 'produce (codecs)',
  consumeGroup: 'group consume + commit, verify',
  listOffsets: 'list offsets',
  groupLag: 'group lag',
};

export interface Operation {
  readonly name: string;
  readonly ok: boolean;
  readonly detail: string;
  readonly ms: number;
}

export interface CompatSummary {
  readonly client: string;
  readonly clientVersion: string;
  readonly ok: boolean;
  readonly codecs: readonly string[];
  readonly idempotent: boolean;
  readonly count: number;
  readonly operations: readonly Operation[];
  readonly notes: readonly string[];
  readonly errorCount: number;
  readonly errors: readonly string[];
}

/** Arguments every program takes (Java, Go, Python and the kafkajs program alike). */
export interface CompatRunOptions {
  readonly bootstrap: string;
  readonly topic: string;
  readonly group: string;
  readonly count: number;
  readonly partitions: number;
  readonly codecs: readonly string[];
  readonly baseTimestamp: number;
  readonly timeoutMs: number;
}

export function programArgs(o: CompatRunOptions): string[] {
  return [
    '--bootstrap', o.bootstrap,
    '--topic', o.topic,
    '--group', o.group,
    '--count', String(o.count),
    '--partitions', String(o.partitions),
    '--codecs', o.codecs.join(','),
    '--base-timestamp', String(o.baseTimestamp),
    '--timeout-ms', String(o.timeoutMs),
  ];
}

/** Contiguous record ranges, one per codec, produced in this order (as compat_common.py). */
export function codecSlices(count: number, codecs: readonly string[]): Array<{ codec: string; from: number; to: number }> {
  const n = codecs.length;
  return codecs.map((codec, s) => ({ codec, from: Math.floor((count * s) / n), to: Math.floor((count * (s + 1)) / n) }));
}

const maxErrors = 20;

/** Builds a CompatSummary operation by operation (the TypeScript twin of compat_common.Report). */
export class OperationReport {
  private readonly operations: Operation[] = [];
  private readonly notes: string[] = [];
  private readonly errors: string[] = [];
  private errorCount = 0;
  private current = 'setup';
  private opErrors = 0;

  constructor(
    private readonly client: string,
    private readonly clientVersion: string,
    private readonly codecs: readonly string[],
    private readonly idempotent: boolean,
    private readonly count: number,
  ) {}

  error(message: string): void {
    this.errorCount++;
    this.opErrors++;
    if (this.errors.length < maxErrors) this.errors.push(`${this.current}: ${message}`);
  }

  note(message: string): void {
    this.notes.push(message);
  }

  /** Runs one operation; it passes when it throws nothing and reports no error. */
  async op(name: string, step: () => Promise<string>): Promise<boolean> {
    this.current = name;
    this.opErrors = 0;
    const t0 = performance.now();
    let detail: string;
    try {
      detail = await step();
    } catch (e) {
      detail = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
      this.error(detail);
    }
    const ok = this.opErrors === 0;
    this.operations.push({ name, ok, detail, ms: Math.round(performance.now() - t0) });
    return ok;
  }

  /** Records an operation the client cannot do, with the reason; it counts as passed-not-applicable. */
  notApplicable(name: string, why: string): void {
    this.operations.push({ name, ok: true, detail: `n/a: ${why}`, ms: 0 });
  }

  summary(): CompatSummary {
    return {
      client: this.client,
      clientVersion: this.clientVersion,
      ok: this.errorCount === 0,
      codecs: this.codecs,
      idempotent: this.idempotent,
      count: this.count,
      operations: [...this.operations],
      notes: [...this.notes],
      errorCount: this.errorCount,
      errors: [...this.errors],
    };
  }
}

/** Parses the last stdout line of a program as its summary. */
export function parseCompatSummary(stdout: string): CompatSummary | null {
  const lines = stdout.trim().split('\n');
  const last = lines[lines.length - 1] ?? '';
  try {
    const parsed = JSON.parse(last) as unknown;
    if (typeof parsed !== 'object' || parsed === null || !Array.isArray((parsed as { operations?: unknown }).operations)) return null;
    return parsed as CompatSummary;
  } catch {
    return null;
  }
}
