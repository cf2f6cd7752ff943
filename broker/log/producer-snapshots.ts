// Producer state snapshots in Kafka's `.snapshot` format (ProducerSnapshot v1):
// version int16 (1), crc uint32 (CRC-32C of everything after it), then an int32
// count of 46-byte entries: producerId int64, epoch int16, lastSequence int32,
// lastOffset int64, offsetDelta int32, timestamp int64, coordinatorEpoch int32,
// currentTxnFirstOffset int64. Like Kafka, only each producer's last batch is
// kept, so after a restart duplicates are detected for that batch only.
// A snapshot named N holds the state after applying every offset below N.
import { crc32c } from '@node-rs/crc32';
import { promises as fsp } from 'node:fs';
import { SNAPSHOT_SUFFIX, offsetFromFileName, snapshotFile } from './file-names.js';
import { readFileIfExists, unlinkIfExists, writeFileAtomic } from '../common/file-io.js';
import { ProducerStateEntry } from './producer-state.js';

const SNAPSHOT_VERSION = 1;
const CRC_OFFSET = 2;
const ENTRIES_OFFSET = 6;
const ENTRY_SIZE = 46;

export class CorruptSnapshotError extends Error {
  override name = 'CorruptSnapshotError';
}

export function encodeProducerSnapshot(entries: readonly ProducerStateEntry[]): Buffer {
  const buf = Buffer.allocUnsafe(ENTRIES_OFFSET + 4 + entries.length * ENTRY_SIZE);
  buf.writeInt16BE(SNAPSHOT_VERSION, 0);
  buf.writeInt32BE(entries.length, ENTRIES_OFFSET);
  let at = ENTRIES_OFFSET + 4;
  for (const e of entries) {
    buf.writeBigInt64BE(e.producerId, at);
    buf.writeInt16BE(e.producerEpoch, at + 8);
    buf.writeInt32BE(e.lastSeq, at + 10);
    buf.writeBigInt64BE(e.lastDataOffset, at + 14);
    buf.writeInt32BE(e.lastOffsetDelta, at + 22);
    buf.writeBigInt64BE(e.lastTimestamp, at + 26);
    buf.writeInt32BE(e.coordinatorEpoch, at + 34);
    buf.writeBigInt64BE(e.currentTxnFirstOffset, at + 38);
    at += ENTRY_SIZE;
  }
  buf.writeUInt32BE(crc32c(buf.subarray(ENTRIES_OFFSET)) >>> 0, CRC_OFFSET);
  return buf;
}

export function decodeProducerSnapshot(buf: Buffer): ProducerStateEntry[] {
  if (buf.length < ENTRIES_OFFSET + 4) throw new CorruptSnapshotError(`snapshot of ${buf.length} bytes is too short`);
  const version = buf.readInt16BE(0);
  if (version !== SNAPSHOT_VERSION) throw new CorruptSnapshotError(`snapshot version ${version} is not ${SNAPSHOT_VERSION}`);
  const crc = buf.readUInt32BE(CRC_OFFSET);
  const computed = crc32c(buf.subarray(ENTRIES_OFFSET)) >>> 0;
  if (crc !== computed) throw new CorruptSnapshotError(`snapshot CRC ${crc} does not match computed ${computed}`);
  const count = buf.readInt32BE(ENTRIES_OFFSET);
  if (count < 0 || buf.length !== ENTRIES_OFFSET + 4 + count * ENTRY_SIZE) {
    throw new CorruptSnapshotError(`snapshot declares ${count} entries in ${buf.length} bytes`);
  }
  const out: ProducerStateEntry[] = [];
  let at = ENTRIES_OFFSET + 4;
  for (let i = 0; i < count; i++) {
    const producerId = buf.readBigInt64BE(at);
    const epoch = buf.readInt16BE(at + 8);
    const lastSeq = buf.readInt32BE(at + 10);
    const lastOffset = buf.readBigInt64BE(at + 14);
    const offsetDelta = buf.readInt32BE(at + 22);
    const timestamp = buf.readBigInt64BE(at + 26);
    const coordinatorEpoch = buf.readInt32BE(at + 34);
    const txnFirst = buf.readBigInt64BE(at + 38);
    const batches = lastOffset >= 0n ? [{ lastSeq, lastOffset, offsetDelta, timestamp }] : [];
    out.push(new ProducerStateEntry(producerId, epoch, coordinatorEpoch, timestamp, txnFirst, batches));
    at += ENTRY_SIZE;
  }
  return out;
}

/** Snapshot offsets present in `dir`, ascending. */
export async function listSnapshotOffsets(dir: string): Promise<bigint[]> {
  const names = await fsp.readdir(dir);
  const out: bigint[] = [];
  for (const n of names) {
    const o = offsetFromFileName(n, SNAPSHOT_SUFFIX);
    if (o !== null) out.push(o);
  }
  return out.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

export async function writeSnapshot(dir: string, offset: bigint, entries: readonly ProducerStateEntry[]): Promise<string> {
  const file = snapshotFile(dir, offset);
  await writeFileAtomic(file, encodeProducerSnapshot(entries));
  return file;
}

/** The entries of snapshot `offset`, or null when it is missing or corrupt (then it is deleted). */
export async function readSnapshot(dir: string, offset: bigint): Promise<ProducerStateEntry[] | null> {
  const file = snapshotFile(dir, offset);
  const bytes = await readFileIfExists(file);
  if (bytes === null) return null;
  try {
    return decodeProducerSnapshot(bytes);
  } catch (e) {
    if (!(e instanceof CorruptSnapshotError)) throw e;
    await unlinkIfExists(file);
    return null;
  }
}

export async function deleteSnapshot(dir: string, offset: bigint): Promise<void> {
  await unlinkIfExists(snapshotFile(dir, offset));
}

/** Deletes the snapshots below `offset` (state older than the first local segment). */
export async function deleteSnapshotsBefore(dir: string, offset: bigint): Promise<number> {
  let n = 0;
  for (const o of await listSnapshotOffsets(dir)) {
    if (o >= offset) break;
    await deleteSnapshot(dir, o);
    n++;
  }
  return n;
}
