// Writes the segment a cleaning group becomes, under the `.cleaned` suffix
// (`<base>.log.cleaned`, `.index.cleaned`, `.timeindex.cleaned`,
// `.txnindex.cleaned`), next to the live segments it will replace. Batches are
// appended with their offsets unchanged; the sparse offset and time indexes get
// an entry every index.interval.bytes, as appends to a live segment do, and the
// time index ends with the segment's largest timestamp, as a closed segment's
// does. finish() fsyncs all four files; nothing is visible to the log until the
// swap renames them. A `.cleaned` file left by a crash is deleted at load.
import { constants as fsConstants, promises as fsp } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { LOG_OVERHEAD, OFFSET_BATCH_LENGTH, OFFSET_LAST_OFFSET_DELTA, OFFSET_MAX_TIMESTAMP } from '../../protocol/record-batch.js';
import { logFile, offsetIndexFile, timeIndexFile, txnIndexFile } from '../file-names.js';
import { unlinkIfExists, writeFully } from '../../common/file-io.js';
import { OFFSET_INDEX_ENTRY_SIZE, OffsetIndex } from '../offset-index.js';
import { NO_TIMESTAMP, TIME_INDEX_ENTRY_SIZE, TimeIndex } from '../time-index.js';
import { type AbortedTxn, TransactionIndex } from '../txn-index.js';

export const CLEANED_SUFFIX = '.cleaned';
export const SWAP_SUFFIX = '.swap';

/** The four files of a segment at `base`, without suffix: log first (the swap renames it first). */
export function segmentFileNames(dir: string, base: bigint): [string, string, string, string] {
  return [logFile(dir, base), offsetIndexFile(dir, base), timeIndexFile(dir, base), txnIndexFile(dir, base)];
}

export interface CleanedSegmentOptions {
  indexIntervalBytes: number;
  /** segment.index.bytes: caps both sparse indexes (entries beyond are skipped, the index stays correct). */
  maxIndexBytes: number;
}

const WRITE_BUFFER_BYTES = 1024 * 1024;

export class CleanedSegmentWriter {
  private readonly offsetIndex: OffsetIndex;
  private readonly timeIndex: TimeIndex;
  private readonly txnIndex: TransactionIndex;
  private position = 0;
  private bytesSinceLastIndexEntry = 0;
  private maxTimestamp = NO_TIMESTAMP;
  private offsetOfMaxTimestamp = -1n;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private written = 0;
  private batches = 0;
  private lastOffsetWritten = -1n;
  private closed = false;

  private constructor(
    readonly dir: string,
    readonly baseOffset: bigint,
    private readonly fh: FileHandle,
    private readonly opts: CleanedSegmentOptions,
  ) {
    this.offsetIndex = new OffsetIndex(baseOffset, Math.max(1, Math.floor(opts.maxIndexBytes / OFFSET_INDEX_ENTRY_SIZE)));
    this.timeIndex = new TimeIndex(baseOffset, Math.max(1, Math.floor(opts.maxIndexBytes / TIME_INDEX_ENTRY_SIZE)));
    this.txnIndex = new TransactionIndex(baseOffset);
  }

  /** Paths of the four `.cleaned` files. */
  static files(dir: string, base: bigint): string[] {
    return segmentFileNames(dir, base).map((f) => f + CLEANED_SUFFIX);
  }

  static async create(dir: string, baseOffset: bigint, opts: CleanedSegmentOptions): Promise<CleanedSegmentWriter> {
    const [log] = CleanedSegmentWriter.files(dir, baseOffset) as [string];
    const fh = await fsp.open(log, fsConstants.O_RDWR | fsConstants.O_CREAT | fsConstants.O_TRUNC, 0o644);
    return new CleanedSegmentWriter(dir, baseOffset, fh, opts);
  }

  get size(): number {
    return this.position;
  }

  get batchCount(): number {
    return this.batches;
  }

  /** Last offset of the last batch appended, -1 when none. */
  get lastOffset(): bigint {
    return this.lastOffsetWritten;
  }

  /** Appends one whole batch (offsets already in place, above the previous batch's). */
  async append(batch: Buffer): Promise<void> {
    const size = batch.readInt32BE(OFFSET_BATCH_LENGTH) + LOG_OVERHEAD;
    if (size !== batch.length) throw new RangeError(`expected one whole batch, got ${batch.length} bytes for a ${size}-byte batch`);
    const lastOffset = batch.readBigInt64BE(0) + BigInt(batch.readInt32BE(OFFSET_LAST_OFFSET_DELTA));
    if (lastOffset <= this.lastOffsetWritten) throw new RangeError(`batch ending at ${lastOffset} is not after ${this.lastOffsetWritten}`);
    const maxTs = batch.readBigInt64BE(OFFSET_MAX_TIMESTAMP);
    if (maxTs > this.maxTimestamp) {
      this.maxTimestamp = maxTs;
      this.offsetOfMaxTimestamp = lastOffset;
    }
    if (this.bytesSinceLastIndexEntry > this.opts.indexIntervalBytes && !this.offsetIndex.isFull && !this.timeIndex.isFull) {
      this.offsetIndex.append(lastOffset, this.position);
      this.timeIndex.maybeAppend(this.maxTimestamp, this.offsetOfMaxTimestamp);
      this.bytesSinceLastIndexEntry = 0;
    }
    this.bytesSinceLastIndexEntry += size;
    this.position += size;
    this.lastOffsetWritten = lastOffset;
    this.batches++;
    this.pending.push(batch);
    this.pendingBytes += size;
    if (this.pendingBytes >= WRITE_BUFFER_BYTES) await this.drain();
  }

  /** An aborted transaction whose marker this segment keeps (markers come in offset order). */
  appendAbortedTxn(txn: AbortedTxn): void {
    this.txnIndex.append(txn);
  }

  private async drain(): Promise<void> {
    if (this.pending.length === 0) return;
    const data = Buffer.concat(this.pending, this.pendingBytes);
    this.pending = [];
    await writeFully(this.fh, data, this.written);
    this.written += this.pendingBytes;
    this.pendingBytes = 0;
  }

  /** Writes the indexes (the time index closed with the largest timestamp) and fsyncs every file. */
  async finish(): Promise<void> {
    await this.drain();
    await this.fh.sync();
    await this.fh.close();
    this.closed = true;
    if (this.maxTimestamp >= 0n) this.timeIndex.maybeAppend(this.maxTimestamp, this.offsetOfMaxTimestamp, true);
    const [, index, timeIndex, txnIndex] = CleanedSegmentWriter.files(this.dir, this.baseOffset) as [string, string, string, string];
    await writeAndSync(index, this.offsetIndex.bytes());
    await writeAndSync(timeIndex, this.timeIndex.bytes());
    await writeAndSync(txnIndex, this.txnIndex.bytes());
  }

  /** Abandons the segment: closes and removes every `.cleaned` file. */
  async abort(): Promise<void> {
    if (!this.closed) {
      this.closed = true;
      await this.fh.close().catch(() => undefined);
    }
    for (const f of CleanedSegmentWriter.files(this.dir, this.baseOffset)) await unlinkIfExists(f).catch(() => false);
  }
}

async function writeAndSync(file: string, bytes: Buffer): Promise<void> {
  const fh = await fsp.open(file, fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_TRUNC, 0o644);
  try {
    await writeFully(fh, bytes, 0);
    await fh.sync();
  } finally {
    await fh.close();
  }
}
