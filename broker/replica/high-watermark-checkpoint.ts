// Kafka's replication-offset-checkpoint: per log directory, the high watermark
// of every replicated partition in it (`<topic> <partition> <offset>` lines in
// the checkpoint format), written every
// replica.high.watermark.checkpoint.interval.ms and at shutdown, read at
// start-up so a restarted replica's HW starts where it was instead of at its
// log start (a leader elected right after a restart would otherwise answer a
// lower HW, and ListOffsets a lower end, until its followers fetched).
import path from 'node:path';
import { formatOffsetsCheckpoint, parseOffsetsCheckpoint, readCheckpoint, writeCheckpoint, type PartitionOffset } from '../log/checkpoint-file.js';
import type { PartitionLog } from '../log/partition-log.js';

export const REPLICATION_OFFSET_CHECKPOINT = 'replication-offset-checkpoint';

const key = (dir: string, topic: string, partition: number): string => `${dir}\u0000${topic}\u0000${partition}`;

export class HighWatermarkCheckpoints {
  private readonly loaded = new Map<string, bigint>();
  private writing: Promise<void> = Promise.resolve();

  /** Reads the checkpoint of each log dir (a missing or unreadable one counts as empty). */
  async load(logDirs: readonly string[]): Promise<void> {
    for (const dir of logDirs) {
      const lines = await readCheckpoint(path.join(dir, REPLICATION_OFFSET_CHECKPOINT)).catch(() => null);
      for (const e of (lines === null ? null : parseOffsetsCheckpoint(lines)) ?? []) this.loaded.set(key(path.resolve(dir), e.topic, e.partition), e.offset);
    }
  }

  /** The HW checkpointed for this log, if any. */
  initial(log: PartitionLog): bigint | undefined {
    return this.loaded.get(key(path.resolve(path.dirname(log.dir)), log.topic, log.partition));
  }

  /** Writes the HWs of `logs`, one file per log dir (writes are serialized). */
  write(logs: readonly PartitionLog[]): Promise<void> {
    const byDir = new Map<string, PartitionOffset[]>();
    for (const l of logs) {
      if (!l.isReplicated) continue;
      const dir = path.dirname(l.dir);
      let list = byDir.get(dir);
      if (list === undefined) byDir.set(dir, (list = []));
      list.push({ topic: l.topic, partition: l.partition, offset: l.highWatermark });
    }
    const run = this.writing.then(async () => {
      for (const [dir, entries] of byDir) await writeCheckpoint(path.join(dir, REPLICATION_OFFSET_CHECKPOINT), formatOffsetsCheckpoint(entries));
    });
    this.writing = run.catch(() => undefined);
    return run;
  }
}
