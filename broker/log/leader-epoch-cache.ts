// Leader epoch -> start offset history of a partition (Kafka's
// LeaderEpochFileCache), persisted as `leader-epoch-checkpoint`:
// `<epoch> <startOffset>` lines in the checkpoint format. Serves
// OffsetForLeaderEpoch and travels with remote segments.
import path from 'node:path';
import { parseCheckpoint, readCheckpoint, writeCheckpoint } from './checkpoint-file.js';
import { LEADER_EPOCH_CHECKPOINT } from './file-names.js';

export interface EpochEntry {
  epoch: number;
  startOffset: bigint;
}

/** Pure history; `LeaderEpochCheckpoint` persists it. */
export class LeaderEpochCache {
  private list: EpochEntry[];

  constructor(entries: readonly EpochEntry[] = []) {
    this.list = entries.map((e) => ({ ...e }));
  }

  entries(): readonly EpochEntry[] {
    return this.list;
  }

  latestEpoch(): number | null {
    return this.list[this.list.length - 1]?.epoch ?? null;
  }

  /**
   * Records that `epoch` starts at `startOffset`. Ignored unless the epoch is
   * newer than the latest; returns whether the history changed. Earlier
   * epochs starting at the same offset held no record and are replaced (as
   * Kafka's maybeTruncateNonMonotonicEntries does): a history [0@0, 2@0] would
   * answer a follower of epoch 1 with a DivergingEpoch of 0 that truncates
   * nothing, and it would ask again forever.
   */
  assign(epoch: number, startOffset: bigint): boolean {
    if (epoch < 0) return false;
    const latest = this.list[this.list.length - 1];
    if (latest !== undefined && (epoch <= latest.epoch || startOffset < latest.startOffset)) return false;
    while (this.list.length > 0 && (this.list[this.list.length - 1] as EpochEntry).startOffset >= startOffset) this.list.pop();
    this.list.push({ epoch, startOffset });
    return true;
  }

  /**
   * Kafka's endOffsetFor: the largest epoch <= `requested` and the start offset of
   * the next epoch (or `logEndOffset` for the latest). (-1, -1) when unknown.
   * A `requested` epoch older than every known one ends where the first known
   * one starts, as `(requested, that start)`: a leader whose history begins
   * after a follower's last epoch (it led first at a later epoch, its log empty
   * until then) must not send that follower a DivergingEpoch it cannot act on.
   */
  endOffsetFor(requested: number, logEndOffset: bigint): { epoch: number; endOffset: bigint } {
    const latest = this.list[this.list.length - 1];
    if (latest === undefined || requested < 0) return { epoch: -1, endOffset: -1n };
    if (requested === latest.epoch) return { epoch: requested, endOffset: logEndOffset };
    let floorIdx = -1;
    for (let i = 0; i < this.list.length; i++) if ((this.list[i] as EpochEntry).epoch <= requested) floorIdx = i;
    if (floorIdx < 0) return { epoch: requested, endOffset: (this.list[0] as EpochEntry).startOffset };
    const floor = this.list[floorIdx] as EpochEntry;
    const next = this.list[floorIdx + 1];
    return { epoch: floor.epoch, endOffset: next === undefined ? logEndOffset : next.startOffset };
  }

  /** Forgets the whole history (the log was emptied and starts again elsewhere). */
  clear(): boolean {
    const had = this.list.length > 0;
    this.list = [];
    return had;
  }

  /** Drops entries starting at or after `endOffset` (log truncated to it). */
  truncateFromEnd(endOffset: bigint): boolean {
    const before = this.list.length;
    this.list = this.list.filter((e) => e.startOffset < endOffset);
    return this.list.length !== before;
  }

  /** Log start moved to `startOffset`: older epochs go, the one covering it starts there. */
  truncateFromStart(startOffset: bigint): boolean {
    let idx = -1;
    for (let i = 0; i < this.list.length; i++) if ((this.list[i] as EpochEntry).startOffset <= startOffset) idx = i;
    if (idx < 0) return false;
    const covering = this.list[idx] as EpochEntry;
    const changed = idx > 0 || covering.startOffset !== startOffset;
    this.list = [{ epoch: covering.epoch, startOffset }, ...this.list.slice(idx + 1)];
    return changed;
  }
}

export function formatEpochEntries(entries: readonly EpochEntry[]): string[] {
  return entries.map((e) => `${e.epoch} ${e.startOffset}`);
}

export function parseEpochEntries(lines: readonly string[]): EpochEntry[] | null {
  const out: EpochEntry[] = [];
  for (const l of lines) {
    const m = /^(\d+)\s+(\d+)$/.exec(l.trim());
    if (m === null) return null;
    out.push({ epoch: Number(m[1]), startOffset: BigInt(m[2] as string) });
  }
  return out;
}

/** Parses a whole leader-epoch-checkpoint text (also used for remote copies). */
export function parseLeaderEpochCheckpoint(text: string): EpochEntry[] | null {
  const lines = parseCheckpoint(text);
  return lines === null ? null : parseEpochEntries(lines);
}

export class LeaderEpochCheckpoint {
  readonly file: string;

  constructor(dir: string) {
    this.file = path.join(dir, LEADER_EPOCH_CHECKPOINT);
  }

  async read(): Promise<EpochEntry[]> {
    const lines = await readCheckpoint(this.file);
    return (lines === null ? null : parseEpochEntries(lines)) ?? [];
  }

  async write(entries: readonly EpochEntry[]): Promise<void> {
    await writeCheckpoint(this.file, formatEpochEntries(entries));
  }
}
