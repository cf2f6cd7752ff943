// Shared pieces of the consumer-group end-to-end suites: client processes that
// report what they do as JSON lines, a continuous keyed producer, a ledger of
// processed offsets per partition, and group/offset queries through the CLI's
// admin client (plain Kafka protocol).
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Kafka, logLevel, Partitioners, type Producer } from 'kafkajs';
import { AdminClient, OffsetSpec, type GroupDescription } from '../../broker/cli/admin-client.js';
import { decodeAssignment } from '../../broker/cli/reset-offsets.js';
import { ErrorCode, errorName } from '../../broker/protocol/errors.js';

export const here = path.dirname(fileURLToPath(import.meta.url));

/** Polls `check` until it returns true: the state belongs to another process, so it is observed, not slept on. */
export async function eventually(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 60_000, detail?: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (let backoff = 25; ; backoff = Math.min(backoff * 2, 250)) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${detail === undefined ? '' : `\n${detail()}`}`);
    await new Promise((r) => setTimeout(r, backoff));
  }
}

export type JsonEvent = Record<string, unknown> & { readonly ev?: string };

export interface ProcessExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/**
 * A client process whose stdout is one JSON object per line (other lines are
 * kept as text). Every event is handed to `onEvent` as it arrives and kept in
 * `events` unless `keep` says otherwise.
 */
export class JsonLineProcess {
  readonly events: JsonEvent[] = [];
  readonly text: string[] = [];
  private stderrTail = '';
  private partial = '';
  private readonly child: ChildProcess;
  readonly exited: Promise<ProcessExit>;
  private exitInfo: ProcessExit | null = null;
  private waiters: Array<{ match: (e: JsonEvent) => boolean; resolve: (e: JsonEvent) => void }> = [];

  constructor(
    readonly name: string,
    cmd: string,
    args: readonly string[],
    private readonly onEvent: (e: JsonEvent, from: JsonLineProcess) => void = () => undefined,
    private readonly keep: (e: JsonEvent) => boolean = () => true,
    env: NodeJS.ProcessEnv = process.env,
  ) {
    this.child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'], env });
    this.child.stdout?.setEncoding('utf8');
    this.child.stderr?.setEncoding('utf8');
    this.child.stdout?.on('data', (s: string) => this.write(s));
    this.child.stderr?.on('data', (s: string) => {
      this.stderrTail = (this.stderrTail + s).slice(-30_000);
    });
    this.child.stdin?.on('error', () => undefined);
    this.exited = new Promise((resolve) => {
      this.child.once('error', (err) => {
        this.stderrTail += `\nspawn error: ${err.message}`;
        resolve((this.exitInfo = { code: null, signal: null }));
      });
      // 'close' (not 'exit'): every byte of stdout has been read by then.
      this.child.once('close', (code, signal) => {
        if (this.partial !== '') this.line(this.partial);
        this.partial = '';
        resolve((this.exitInfo = { code, signal }));
      });
    });
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  get alive(): boolean {
    return this.exitInfo === null;
  }

  get stderr(): string {
    return this.stderrTail;
  }

  private write(chunk: string): void {
    const lines = (this.partial + chunk).split('\n');
    this.partial = lines.pop() ?? '';
    for (const l of lines) this.line(l);
  }

  private line(l: string): void {
    if (l.trim() === '') return;
    let e: JsonEvent;
    try {
      const parsed: unknown = JSON.parse(l);
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not an object');
      e = parsed as JsonEvent;
    } catch {
      this.text.push(l);
      if (this.text.length > 500) this.text.splice(0, 250);
      return;
    }
    this.onEvent(e, this);
    if (this.keep(e)) this.events.push(e);
    for (const w of [...this.waiters]) {
      if (w.match(e)) {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        w.resolve(e);
      }
    }
  }

  /** The first event (already seen or future) matching `match`. */
  async waitFor(what: string, match: (e: JsonEvent) => boolean, timeoutMs = 60_000): Promise<JsonEvent> {
    const seen = this.events.find(match);
    if (seen !== undefined) return seen;
    return this.next(what, match, timeoutMs);
  }

  /** The next future event matching `match`. */
  next(what: string, match: (e: JsonEvent) => boolean, timeoutMs = 60_000): Promise<JsonEvent> {
    return new Promise((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const waiter = {
        match,
        resolve: (e: JsonEvent) => {
          clearTimeout(timer);
          resolve(e);
        },
      };
      this.waiters.push(waiter);
      const fail = (why: string): void => {
        const i = this.waiters.indexOf(waiter);
        if (i >= 0) this.waiters.splice(i, 1);
        reject(new Error(`${this.name}: ${why} waiting for ${what}\n${this.diagnostics()}`));
      };
      timer = setTimeout(() => fail(`timed out after ${timeoutMs} ms`), timeoutMs);
      void this.exited.then((x) => {
        if (this.waiters.includes(waiter)) {
          clearTimeout(timer);
          fail(`exited (${x.code ?? x.signal})`);
        }
      });
    });
  }

  /** Writes one line to the process's stdin. */
  send(line: string): void {
    this.child.stdin?.write(`${line}\n`);
  }

  /** SIGTERM and wait for the exit. */
  async term(timeoutMs = 60_000): Promise<ProcessExit> {
    if (this.alive) this.child.kill('SIGTERM');
    return this.waitExit(timeoutMs);
  }

  /** SIGKILL and wait for the exit. */
  async kill(): Promise<ProcessExit> {
    if (this.alive) this.child.kill('SIGKILL');
    return this.waitExit(10_000);
  }

  async waitExit(timeoutMs = 60_000): Promise<ProcessExit> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), timeoutMs)));
    const r = await Promise.race([this.exited, timeout]).finally(() => clearTimeout(timer));
    if (r === 'timeout') {
      this.child.kill('SIGKILL');
      await this.exited;
      throw new Error(`${this.name}: no exit within ${timeoutMs} ms; killed\n${this.diagnostics()}`);
    }
    return r;
  }

  diagnostics(): string {
    const last = this.events.slice(-5).map((e) => JSON.stringify(e));
    return [`--- ${this.name} (pid ${this.pid}) last events:`, ...last, '--- text:', ...this.text.slice(-20), '--- stderr:', this.stderrTail.slice(-6000)].join('\n');
  }
}

/** Which offsets of each partition were processed, and how often. */
export class ProcessedLedger {
  private readonly counts = new Map<number, Map<bigint, number>>();
  /** Value seen at each offset (the first time): the same offset always carries the same record. */
  private readonly values = new Map<string, string>();
  readonly conflicts: string[] = [];

  record(partition: number, offset: bigint, value: string): void {
    let m = this.counts.get(partition);
    if (m === undefined) this.counts.set(partition, (m = new Map()));
    m.set(offset, (m.get(offset) ?? 0) + 1);
    const k = `${partition}:${offset}`;
    const before = this.values.get(k);
    if (before === undefined) this.values.set(k, value);
    else if (before !== value && this.conflicts.length < 20) this.conflicts.push(`${k}: '${before}' then '${value}'`);
  }

  valueAt(partition: number, offset: bigint): string | undefined {
    return this.values.get(`${partition}:${offset}`);
  }

  /** The first offset below `end` never processed, or null when [0, end) is covered. */
  firstGap(partition: number, end: bigint): bigint | null {
    const m = this.counts.get(partition);
    for (let o = 0n; o < end; o++) if (m?.get(o) === undefined) return o;
    return null;
  }

  /** Smallest offset not processed (the contiguous prefix end). */
  contiguousEnd(partition: number): bigint {
    const m = this.counts.get(partition);
    let o = 0n;
    while (m?.has(o) === true) o++;
    return o;
  }

  /** Per partition: distinct offsets, deliveries, duplicate deliveries, highest offset. */
  summary(partitions: number): Array<{ partition: number; distinct: number; deliveries: number; duplicates: number; max: string }> {
    const out = [];
    for (let p = 0; p < partitions; p++) {
      const m = this.counts.get(p) ?? new Map<bigint, number>();
      let deliveries = 0;
      let max = -1n;
      for (const [o, c] of m) {
        deliveries += c;
        if (o > max) max = o;
      }
      out.push({ partition: p, distinct: m.size, deliveries, duplicates: deliveries - m.size, max: String(max) });
    }
    return out;
  }

  /** Every value seen, for checking against what was produced. */
  allValues(): Set<string> {
    return new Set(this.values.values());
  }
}

/**
 * Sends keyed records (key `key-<n>`, value `<seq>`) in small batches until
 * stopped; `acked` holds every value the broker acknowledged.
 */
export class ContinuousProducer {
  readonly acked = new Map<string, string>();
  private producer: Producer;
  private running: Promise<void> | null = null;
  private stopping = false;
  private seq = 0;
  error: unknown = null;

  constructor(
    bootstrap: string,
    private readonly topic: string,
    private readonly options: { keys?: number; batch?: number; pauseMs?: number } = {},
  ) {
    const kafka = new Kafka({ brokers: [bootstrap], clientId: 'e2e-groups-producer', logLevel: logLevel.NOTHING });
    // A short metadata age: partitions added to the topic get records within a second.
    this.producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner, allowAutoTopicCreation: false, metadataMaxAge: 1000 });
  }

  async start(): Promise<void> {
    await this.producer.connect();
    this.running = this.loop();
  }

  private async loop(): Promise<void> {
    const keys = this.options.keys ?? 500;
    const batch = this.options.batch ?? 20;
    while (!this.stopping) {
      const messages = Array.from({ length: batch }, () => {
        const seq = this.seq++;
        return { key: `key-${seq % keys}`, value: String(seq) };
      });
      try {
        await this.producer.send({ topic: this.topic, messages, acks: -1 });
        for (const m of messages) this.acked.set(m.value, m.key);
      } catch (e) {
        this.error = e;
        return;
      }
      await new Promise((r) => setTimeout(r, this.options.pauseMs ?? 10));
    }
  }

  /** Stops after the batch in flight and disconnects; throws if a send failed. */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.running;
    await this.producer.disconnect();
    if (this.error !== null) throw this.error;
  }

  get count(): number {
    return this.acked.size;
  }
}

/** The CLI's admin client against `bootstrap`, closed by `fn`'s end. */
export async function withAdmin<T>(bootstrap: string, fn: (a: AdminClient) => Promise<T>): Promise<T> {
  const admin = await AdminClient.connect(bootstrap, { retryMs: 30_000 });
  try {
    return await fn(admin);
  } finally {
    admin.close();
  }
}

export const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i);

/** Log end offsets (ListOffsets latest), by partition. */
export async function logEndOffsets(admin: AdminClient, topic: string, partitions: number): Promise<bigint[]> {
  return listOffsets(admin, topic, partitions, OffsetSpec.latest);
}

export async function listOffsets(admin: AdminClient, topic: string, partitions: number, timestamp: bigint): Promise<bigint[]> {
  const r = await admin.listOffsets(range(partitions).map((partition) => ({ topic, partition, timestamp })));
  const out: bigint[] = [];
  for (const p of range(partitions)) {
    const a = r.find((x) => x.partition === p);
    assert.ok(a !== undefined && a.errorCode === ErrorCode.NONE, `ListOffsets ${topic}-${p}: ${a === undefined ? 'missing' : errorName(a.errorCode)}`);
    out.push(a.offset);
  }
  return out;
}

/** Committed offsets of `group` on `topic` by partition (-1 when none). */
export async function committedOffsets(admin: AdminClient, group: string, topic: string, partitions: number): Promise<bigint[]> {
  const r = await admin.offsetFetch(group, range(partitions).map((partition) => ({ topic, partition })));
  assert.equal(r.errorCode, ErrorCode.NONE, `OffsetFetch ${group}: ${errorName(r.errorCode)}`);
  return range(partitions).map((p) => {
    const o = r.offsets.find((x) => x.topic === topic && x.partition === p);
    assert.ok(o !== undefined && o.errorCode === ErrorCode.NONE, `OffsetFetch ${group} ${topic}-${p}: ${o === undefined ? 'missing' : errorName(o.errorCode)}`);
    return o.offset;
  });
}

/** memberId -> sorted partitions of `topic`, as the coordinator describes the group. */
export function assignments(g: GroupDescription, topic: string): Map<string, number[]> {
  return new Map(g.members.map((m) => [m.memberId, decodeAssignment(m.assignment).filter((tp) => tp.topic === topic).map((tp) => tp.partition).sort((a, b) => a - b)]));
}

/** Null when the assignments give every partition exactly one owner, else what is wrong. */
export function ownershipProblem(owned: ReadonlyMap<string, readonly number[]>, partitions: number): string | null {
  const owners = new Map<number, string[]>();
  for (const [member, ps] of owned) for (const p of ps) owners.set(p, [...(owners.get(p) ?? []), member]);
  const problems: string[] = [];
  for (const p of range(partitions)) {
    const o = owners.get(p) ?? [];
    if (o.length !== 1) problems.push(`partition ${p} has ${o.length} owners (${o.join(', ')})`);
  }
  for (const p of owners.keys()) if (p < 0 || p >= partitions) problems.push(`unknown partition ${p} assigned`);
  return problems.length === 0 ? null : problems.join('; ');
}

/** Bytes of the `.log` files of a partition directory. */
export function partitionLogBytes(dataDir: string, topic: string, partition: number): number {
  const dir = path.join(dataDir, `${topic}-${partition}`);
  let total = 0;
  for (const f of readdirSync(dir)) {
    if (!f.endsWith('.log')) continue;
    // The cleaner or retention may delete a segment between the listing and the stat: it holds no bytes then.
    total += statSync(path.join(dir, f), { throwIfNoEntry: false })?.size ?? 0;
  }
  return total;
}

/** Number of `.log` segment files of a partition directory. */
export function partitionSegmentCount(dataDir: string, topic: string, partition: number): number {
  return readdirSync(path.join(dataDir, `${topic}-${partition}`)).filter((f) => f.endsWith('.log')).length;
}

/** A line for the timing report printed at the end of a suite. */
export class Report {
  private readonly lines: string[] = [];
  add(line: string): void {
    this.lines.push(line);
  }
  print(title: string): void {
    console.log([`\n${title}`, ...this.lines.map((l) => `  ${l}`)].join('\n'));
  }
}

/** Produces `count` keyed records (values `<prefix>-<n>`, n from `first`), acks=all, in batches of 500. */
export async function produceKeyed(bootstrap: string, topic: string, count: number, options: { prefix?: string; first?: number; keys?: number } = {}): Promise<void> {
  const kafka = new Kafka({ brokers: [bootstrap], clientId: 'e2e-groups-producer', logLevel: logLevel.NOTHING });
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  const first = options.first ?? 0;
  const prefix = options.prefix ?? 'v';
  const keys = options.keys ?? 300;
  await producer.connect();
  try {
    for (let i = 0; i < count; i += 500) {
      const n = Math.min(500, count - i);
      await producer.send({ topic, acks: -1, messages: Array.from({ length: n }, (_, j) => ({ key: `key-${(first + i + j) % keys}`, value: `${prefix}-${first + i + j}` })) });
    }
  } finally {
    await producer.disconnect();
  }
}

/** Waits until the group's committed offsets equal the log end; returns the log end offsets. */
export async function waitCommittedToEnd(bootstrap: string, group: string, topic: string, partitions: number, timeoutMs = 120_000, detail?: () => string): Promise<bigint[]> {
  const ends = await withAdmin(bootstrap, (a) => logEndOffsets(a, topic, partitions));
  let committed: bigint[] = [];
  await eventually(`${group}: committed offsets to reach the log end`, async () => {
    committed = await withAdmin(bootstrap, (a) => committedOffsets(a, group, topic, partitions));
    return committed.every((o, p) => o === ends[p]);
  }, timeoutMs, () => `committed ${committed.join(',')} log end ${ends.join(',')}${detail === undefined ? '' : `\n${detail()}`}`);
  return ends;
}
