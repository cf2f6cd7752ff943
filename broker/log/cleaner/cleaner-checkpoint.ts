// `cleaner-offset-checkpoint`, one per log dir (Kafka's LogCleanerManager
// checkpoints): the first dirty offset of every compacted partition of the dir,
// in the text format of the other offset checkpoints. Losing it only makes the
// next round treat the whole log as dirty.
import path from 'node:path';
import { formatOffsetsCheckpoint, parseOffsetsCheckpoint, readCheckpoint, writeCheckpoint } from '../checkpoint-file.js';

export const CLEANER_OFFSET_CHECKPOINT = 'cleaner-offset-checkpoint';

const key = (topic: string, partition: number): string => `${topic}\u0000${partition}`;

interface Entry {
  topic: string;
  partition: number;
  offset: bigint;
}

export class CleanerCheckpoints {
  private readonly byDir = new Map<string, Map<string, Entry>>();

  /** Reads a log dir's file once (a missing or malformed file reads as empty). */
  async load(logDir: string): Promise<void> {
    if (this.byDir.has(logDir)) return;
    const entries = new Map<string, Entry>();
    const lines = await readCheckpoint(path.join(logDir, CLEANER_OFFSET_CHECKPOINT));
    for (const e of (lines === null ? null : parseOffsetsCheckpoint(lines)) ?? []) entries.set(key(e.topic, e.partition), e);
    this.byDir.set(logDir, entries);
  }

  get(logDir: string, topic: string, partition: number): bigint | undefined {
    return this.byDir.get(logDir)?.get(key(topic, partition))?.offset;
  }

  /**
   * Records a partition's first dirty offset and rewrites the dir's file,
   * dropping partitions `keep` no longer knows (deleted topics).
   */
  async update(logDir: string, topic: string, partition: number, offset: bigint, keep: (topic: string, partition: number) => boolean): Promise<void> {
    await this.load(logDir);
    const entries = this.byDir.get(logDir) as Map<string, Entry>;
    entries.set(key(topic, partition), { topic, partition, offset });
    for (const [k, e] of entries) if (!keep(e.topic, e.partition)) entries.delete(k);
    const sorted = [...entries.values()].sort((a, b) => (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : a.partition - b.partition));
    await writeCheckpoint(path.join(logDir, CLEANER_OFFSET_CHECKPOINT), formatOffsetsCheckpoint(sorted));
  }
}
