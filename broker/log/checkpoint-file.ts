// Kafka's text checkpoint format, used by leader-epoch-checkpoint,
// recovery-point-offset-checkpoint and log-start-offset-checkpoint:
//   <version>\n<entry count>\n<entry>\n...
// Written atomically (tmp + fsync + rename). A malformed file reads as null so
// the caller falls back to a safe default (full recovery, log start from segments).
import { readFileIfExists, writeFileAtomic } from '../common/file-io.js';

export const CHECKPOINT_VERSION = 0;

export function formatCheckpoint(lines: readonly string[], version = CHECKPOINT_VERSION): string {
  return `${version}\n${lines.length}\n${lines.map((l) => l + '\n').join('')}`;
}

/** The entry lines, or null when the text is not a well-formed checkpoint of `version`. */
export function parseCheckpoint(text: string, version = CHECKPOINT_VERSION): string[] | null {
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  if (lines.length < 2 || lines[0]?.trim() !== String(version)) return null;
  const count = Number(lines[1]);
  if (!Number.isInteger(count) || count < 0 || lines.length !== count + 2) return null;
  return lines.slice(2);
}

export async function writeCheckpoint(file: string, lines: readonly string[]): Promise<void> {
  await writeFileAtomic(file, formatCheckpoint(lines));
}

export async function readCheckpoint(file: string): Promise<string[] | null> {
  const bytes = await readFileIfExists(file);
  return bytes === null ? null : parseCheckpoint(bytes.toString('utf8'));
}

export interface PartitionOffset {
  topic: string;
  partition: number;
  offset: bigint;
}

/** recovery-point / log-start-offset checkpoints: `<topic> <partition> <offset>` per line. */
export function formatOffsetsCheckpoint(entries: readonly PartitionOffset[]): string[] {
  return entries.map((e) => `${e.topic} ${e.partition} ${e.offset}`);
}

export function parseOffsetsCheckpoint(lines: readonly string[]): PartitionOffset[] | null {
  const out: PartitionOffset[] = [];
  for (const l of lines) {
    const parts = l.split(' ');
    if (parts.length !== 3) return null;
    const [topic, p, o] = parts as [string, string, string];
    if (!/^\d+$/.test(p) || !/^-?\d+$/.test(o)) return null;
    out.push({ topic, partition: Number(p), offset: BigInt(o) });
  }
  return out;
}
