// `partition.metadata`: the topic id of a partition directory, Kafka's format
//   version: 0
//   topic_id: <id>
// It lets a restarted broker tell a recreated topic from the old one.
import path from 'node:path';
import { PARTITION_METADATA } from './file-names.js';
import { readFileIfExists, writeFileAtomic } from '../common/file-io.js';

export function formatPartitionMetadata(topicId: string): string {
  return `version: 0\ntopic_id: ${topicId}\n`;
}

export function parsePartitionMetadata(text: string): { topicId: string } | null {
  const m = /^version:\s*0\s*\ntopic_id:\s*(\S+)\s*$/.exec(text.trim());
  return m === null ? null : { topicId: m[1] as string };
}

export async function readPartitionMetadata(dir: string): Promise<{ topicId: string } | null> {
  const bytes = await readFileIfExists(path.join(dir, PARTITION_METADATA));
  return bytes === null ? null : parsePartitionMetadata(bytes.toString('utf8'));
}

export async function writePartitionMetadata(dir: string, topicId: string): Promise<void> {
  await writeFileAtomic(path.join(dir, PARTITION_METADATA), formatPartitionMetadata(topicId));
}
