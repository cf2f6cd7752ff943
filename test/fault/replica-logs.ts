// Reads what each replica holds, from its files, after the brokers have
// stopped: every `.log` segment of a partition directory walked with the
// broker's own recovery scan (broker/log/batch-scan.ts: whole, CRC-valid,
// ordered batches), each batch's records decoded with the broker's codecs; the
// high watermark each broker checkpointed (Kafka's replication-offset-checkpoint);
// and, with tiering on, the segments in the file:// remote store whose manifest
// exists (the copy finished), read through the RemoteStorage port.
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { validateBatches } from '../../broker/log/batch-scan.js';
import { parseOffsetsCheckpoint, readCheckpoint } from '../../broker/log/checkpoint-file.js';
import { LOG_SUFFIX, offsetFromFileName, partitionDirName } from '../../broker/log/file-names.js';
import { SegmentFile } from '../../broker/log/segment-file.js';
import { decompress } from '../../broker/protocol/compression.js';
import { BATCH_HEADER_SIZE, type BatchHeader, compressionOf, isControl } from '../../broker/protocol/record-batch.js';
import { readRecords } from '../../broker/protocol/records.js';
import { createRemoteStorage } from '../../remote-log/storage-url.js';

/** Kafka's per-log-dir checkpoint of high watermarks (ReplicaManager writes it). */
export const REPLICATION_OFFSET_CHECKPOINT = 'replication-offset-checkpoint';

export interface StoredRecord {
  readonly offset: bigint;
  readonly value: string | null;
}

export interface StoredBatch {
  readonly baseOffset: bigint;
  readonly lastOffset: bigint;
  readonly partitionLeaderEpoch: number;
  readonly crc: number;
  readonly producerId: bigint;
  readonly baseSequence: number;
  readonly control: boolean;
  readonly records: readonly StoredRecord[];
  /** Where it was read: a local segment file or a remote segment. */
  readonly source: string;
}

export interface ReplicaLog {
  readonly nodeId: number;
  readonly batches: readonly StoredBatch[];
  /** Torn tails, CRC failures, undecodable records: anything a stopped broker should not have left. */
  readonly problems: readonly string[];
}

function decodeBatch(header: BatchHeader, buf: Buffer, at: number, size: number, source: string): StoredBatch {
  const body = buf.subarray(at + BATCH_HEADER_SIZE, at + size);
  const control = isControl(header.attributes);
  const records = readRecords(decompress(compressionOf(header.attributes), body), header.recordsCount);
  return {
    baseOffset: header.baseOffset,
    lastOffset: header.baseOffset + BigInt(header.lastOffsetDelta),
    partitionLeaderEpoch: header.partitionLeaderEpoch,
    crc: header.crc,
    producerId: header.producerId,
    baseSequence: header.baseSequence,
    control,
    records: records.map((r) => ({ offset: header.baseOffset + BigInt(r.offsetDelta), value: control || r.value === null ? null : r.value.toString('utf8') })),
    source,
  };
}

/** Walks `bytes`-long segment data (read through `file`), collecting batches and problems. */
async function walkSegment(file: SegmentFile, size: number, baseOffset: bigint, source: string, batches: StoredBatch[], problems: string[]): Promise<void> {
  const decodeErrors: string[] = [];
  const result = await validateBatches(file, 0, size, { minNextOffset: baseOffset, maxLastOffset: (1n << 63n) - 1n }, (header, buf, at, _position, batchSize) => {
    try {
      batches.push(decodeBatch(header, buf, at, batchSize, source));
    } catch (e) {
      decodeErrors.push(`${source}: batch at offset ${header.baseOffset} does not decode: ${e instanceof Error ? e.message : String(e)}`);
    }
  });
  problems.push(...decodeErrors);
  if (result.stopReason !== null) problems.push(`${source}: ${result.stopReason} (${size - result.validBytes} bytes after the last valid batch)`);
}

/** The local log of one partition in `logDir`, every segment in offset order. */
export async function readLocalLog(nodeId: number, logDir: string, topic: string, partition: number): Promise<ReplicaLog> {
  const dir = path.join(logDir, partitionDirName(topic, partition));
  const batches: StoredBatch[] = [];
  const problems: string[] = [];
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (e) {
    return { nodeId, batches, problems: [`node ${nodeId}: no partition directory ${dir} (${e instanceof Error ? e.message : String(e)})`] };
  }
  const bases = names
    .filter((n) => n.endsWith(LOG_SUFFIX))
    .map((n) => offsetFromFileName(n, LOG_SUFFIX))
    .filter((b): b is bigint => b !== null)
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  for (const base of bases) {
    const name = path.join(dir, `${base.toString().padStart(20, '0')}${LOG_SUFFIX}`);
    const file = new SegmentFile(name);
    try {
      await walkSegment(file, await file.size(), base, `node ${nodeId} ${path.basename(name)}`, batches, problems);
    } finally {
      await file.close();
    }
  }
  return { nodeId, batches, problems };
}

/** High watermarks a broker checkpointed in `logDir`, by `<topic>-<partition>`; null when it wrote none. */
export async function readHighWatermarks(logDir: string): Promise<Map<string, bigint> | null> {
  const lines = await readCheckpoint(path.join(logDir, REPLICATION_OFFSET_CHECKPOINT));
  if (lines === null) return null;
  const entries = parseOffsetsCheckpoint(lines);
  if (entries === null) return null;
  return new Map(entries.map((e) => [partitionDirName(e.topic, e.partition), e.offset]));
}

/** Finished remote segments of one partition (manifest present), their batches in offset order. */
export async function readRemoteLog(storeUrl: string, topic: string, partition: number): Promise<ReplicaLog> {
  const storage = createRemoteStorage(storeUrl);
  const batches: StoredBatch[] = [];
  const problems: string[] = [];
  try {
    const listed = (await storage.listSegments()).filter((s) => s.ref.topic === topic && s.ref.partition === partition && s.hasManifest);
    listed.sort((a, b) => (a.ref.baseOffset < b.ref.baseOffset ? -1 : a.ref.baseOffset > b.ref.baseOffset ? 1 : 0));
    for (const s of listed) {
      const data = await storage.fetchData(s.ref, 0);
      // validateBatches reads through a SegmentFile-shaped source: give it the fetched bytes.
      const source = { read: (pos: number, len: number): Promise<Buffer> => Promise.resolve(data.subarray(pos, pos + len)) } as unknown as SegmentFile;
      await walkSegment(source, data.length, s.ref.baseOffset, `remote ${s.ref.baseOffset}-${s.ref.segmentId}`, batches, problems);
    }
  } finally {
    await storage.close();
  }
  return { nodeId: -1, batches, problems };
}
