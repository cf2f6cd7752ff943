// File names of a partition directory, as Kafka lays them out so the folder is
// familiar to operators: segment files are named by their 20-digit base offset.
import path from 'node:path';

export const LOG_SUFFIX = '.log';
export const INDEX_SUFFIX = '.index';
export const TIME_INDEX_SUFFIX = '.timeindex';
export const TXN_INDEX_SUFFIX = '.txnindex';
export const SNAPSHOT_SUFFIX = '.snapshot';
/** Left by an interrupted atomic write or a deletion in progress; removed at load. */
export { TMP_SUFFIX } from '../common/file-io.js';
export const DELETED_SUFFIX = '.deleted';

export const LEADER_EPOCH_CHECKPOINT = 'leader-epoch-checkpoint';
export const PARTITION_METADATA = 'partition.metadata';
export const RECOVERY_POINT_CHECKPOINT = 'recovery-point-offset-checkpoint';
export const LOG_START_OFFSET_CHECKPOINT = 'log-start-offset-checkpoint';
export const CLEAN_SHUTDOWN_FILE = '.kafka_cleanshutdown';

export function filenamePrefixFromOffset(offset: bigint): string {
  return offset.toString().padStart(20, '0');
}

export const logFile = (dir: string, base: bigint): string => path.join(dir, filenamePrefixFromOffset(base) + LOG_SUFFIX);
export const offsetIndexFile = (dir: string, base: bigint): string =>
  path.join(dir, filenamePrefixFromOffset(base) + INDEX_SUFFIX);
export const timeIndexFile = (dir: string, base: bigint): string =>
  path.join(dir, filenamePrefixFromOffset(base) + TIME_INDEX_SUFFIX);
export const txnIndexFile = (dir: string, base: bigint): string =>
  path.join(dir, filenamePrefixFromOffset(base) + TXN_INDEX_SUFFIX);
export const snapshotFile = (dir: string, offset: bigint): string =>
  path.join(dir, filenamePrefixFromOffset(offset) + SNAPSHOT_SUFFIX);

/** The offset a `<20 digits><suffix>` file name encodes, or null for any other name. */
export function offsetFromFileName(name: string, suffix: string): bigint | null {
  if (!name.endsWith(suffix)) return null;
  const digits = name.slice(0, name.length - suffix.length);
  if (!/^\d{20}$/.test(digits)) return null;
  return BigInt(digits);
}

/** `<topic>-<partition>` */
export function partitionDirName(topic: string, partition: number): string {
  return `${topic}-${partition}`;
}

/** Splits `<topic>-<partition>` at the last dash; null when the name is not a partition directory. */
export function parsePartitionDirName(name: string): { topic: string; partition: number } | null {
  const dash = name.lastIndexOf('-');
  if (dash <= 0) return null;
  const p = name.slice(dash + 1);
  if (!/^\d+$/.test(p)) return null;
  return { topic: name.slice(0, dash), partition: Number(p) };
}
