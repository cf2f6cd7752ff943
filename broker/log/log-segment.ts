// One segment: the `.log` file plus its offset, time and transaction indexes
// (Kafka's LogSegment). Appends go to the log file at the committed size; the
// sparse indexes gain an entry every `index.interval.bytes`, in memory only:
// `writeIndexTails()` brings the `.index`/`.timeindex` files up to date in one
// write each, at flush, when the segment becomes inactive (roll, clean close)
// and before the files are handed to anything that reads them from disk.
// Reads translate an offset to a byte position (index lookup, then a short
// header scan) and return whole batches. `recover()` re-validates the file and
// rebuilds the indexes; it is what makes a torn tail (of the log or of an
// index the crash cut short) disappear.
import { promises as fsp } from 'node:fs';
import {
  BATCH_HEADER_SIZE,
  type BatchHeader,
  LOG_OVERHEAD,
  OFFSET_BATCH_LENGTH,
  OFFSET_LAST_OFFSET_DELTA,
  OFFSET_MAX_TIMESTAMP,
  decodeRecordBatch,
} from '../protocol/record-batch.js';
import { type FileBatch, scanBatchHeaders, validateBatches } from './batch-scan.js';
import { logFile, offsetIndexFile, timeIndexFile, txnIndexFile } from './file-names.js';
import { INT32_MAX, CorruptIndexError } from './abstract-index.js';
import type { ReadLease } from '../common/read-buffer-pool.js';
import type { HandleBudget } from './file-handles.js';
import { IndexFile } from './index-file.js';
import { OFFSET_INDEX_ENTRY_SIZE, OffsetIndex } from './offset-index.js';
import { SegmentFile } from './segment-file.js';
import { NO_TIMESTAMP, TIME_INDEX_ENTRY_SIZE, TimeIndex, type TimestampOffset } from './time-index.js';
import { type AbortedTxn, TransactionIndex } from './txn-index.js';
import { RecentWrites } from './recent-writes.js';
import { batchSpan } from './batch-span.js';
import { readFullySync } from '../common/file-io.js';
import { fileRegion, type SendfileBinding } from '../common/sendfile.js';
import type { FileRecords } from '../protocol/record-parts.js';

/** Extra bytes a read takes beyond maxBytes to cover the scan from the index entry. */
const READ_SLACK = 64 * 1024;
/**
 * Reads of bytes written this recently are served with a pread on the event
 * loop (recent-writes.ts): Linux keeps dirty pages for vm.dirty_expire_centisecs
 * (30 s by default) and cannot drop them before they are written back.
 */
export const RESIDENT_READ_WINDOW_MS = 30_000;
/** Larger reads go through the libuv pool whatever their age: a pread on the event loop blocks it for the copy (~0.1 ms per MiB). */
export const RESIDENT_READ_MAX_BYTES = 4 * 1024 * 1024;

/** Shared by the segments of a partition and updated in place when its config changes. */
export interface SegmentOptions {
  indexIntervalBytes: number;
  /** segment.index.bytes: caps both sparse indexes (a full index rolls the segment). */
  maxIndexBytes: number;
  /** Open-file budget shared with other segments (default: the process-wide one). */
  handles?: HandleBudget;
}

export interface AppendMeta {
  /** First offset of the appended records (the first batch's base offset). */
  firstOffset: bigint;
  /** Last offset of the appended records. */
  lastOffset: bigint;
  /** Largest batch maxTimestamp among the records, and the last offset of the batch holding it. */
  maxTimestamp: bigint;
  offsetOfMaxTimestamp: bigint;
}

export interface ReadResult {
  /** Whole batches starting with the one containing the requested offset; may be empty. */
  records: Buffer;
  /** Base offset of the first returned batch (or of the batch that did not fit). */
  firstOffset: bigint;
  position: number;
}

/** readFile's answer: the bytes as a file region, or none (`file` null) when the limits or maxOffset leave none. */
export interface FileReadResult {
  file: FileRecords | null;
  firstOffset: bigint;
}

export interface TimestampAndOffset {
  timestamp: bigint;
  offset: bigint;
  leaderEpoch: number;
}

/** Called by recover() for every valid batch, in order; may return an aborted txn for the txn index. */
export type RecoveryVisitor = (header: BatchHeader, batch: Buffer) => AbortedTxn | null;

export class LogSegment {
  /** Committed bytes: everything below is written and readable. */
  private committedSize: number;
  private next: bigint;
  private maxTs: TimestampOffset = { timestamp: NO_TIMESTAMP, offset: -1n };
  private bytesSinceLastIndexEntry = 0;
  /** maxTimestamp of the first batch, for segment.ms rolling (Kafka's rollingBasedTimestamp). */
  private rollingBasedTimestamp: bigint | null = null;
  private created: number;
  private inactive = false;
  /** Where the bytes written in the last RESIDENT_READ_WINDOW_MS begin (reads after it skip the libuv pool). */
  private readonly recentWrites = new RecentWrites(RESIDENT_READ_WINDOW_MS);

  private constructor(
    readonly dir: string,
    readonly baseOffset: bigint,
    private readonly opts: SegmentOptions,
    readonly log: SegmentFile,
    readonly offsetIndex: OffsetIndex,
    readonly timeIndex: TimeIndex,
    readonly txnIndex: TransactionIndex,
    private readonly offsetIndexFile: IndexFile,
    private readonly timeIndexFile: IndexFile,
    private readonly txnIndexFile: IndexFile,
    size: number,
    now: number,
  ) {
    this.committedSize = size;
    this.next = baseOffset;
    this.created = now;
  }

  private static maxEntries(maxIndexBytes: number, entrySize: number): number {
    return Math.max(1, Math.floor(maxIndexBytes / entrySize));
  }

  /** A new, empty segment (files created; an existing log file of that name is emptied). */
  static async create(dir: string, baseOffset: bigint, opts: SegmentOptions, now: number): Promise<LogSegment> {
    const log = new SegmentFile(logFile(dir, baseOffset), opts.handles);
    await log.truncate(0);
    const seg = new LogSegment(
      dir,
      baseOffset,
      opts,
      log,
      new OffsetIndex(baseOffset, LogSegment.maxEntries(opts.maxIndexBytes, OFFSET_INDEX_ENTRY_SIZE)),
      new TimeIndex(baseOffset, LogSegment.maxEntries(opts.maxIndexBytes, TIME_INDEX_ENTRY_SIZE)),
      new TransactionIndex(baseOffset),
      new IndexFile(offsetIndexFile(dir, baseOffset), opts.handles),
      new IndexFile(timeIndexFile(dir, baseOffset), opts.handles),
      new IndexFile(txnIndexFile(dir, baseOffset), opts.handles),
      0,
      now,
    );
    await Promise.all([seg.offsetIndexFile.truncate(0), seg.timeIndexFile.truncate(0), seg.txnIndexFile.truncate(0)]);
    return seg;
  }

  /**
   * Opens an existing segment and loads its indexes. `indexesValid` is false when
   * an index is missing or fails its sanity check: the caller must recover() it.
   */
  static async open(dir: string, baseOffset: bigint, opts: SegmentOptions, now: number): Promise<{ segment: LogSegment; indexesValid: boolean }> {
    const logPath = logFile(dir, baseOffset);
    const size = (await fsp.stat(logPath)).size;
    const oi = new IndexFile(offsetIndexFile(dir, baseOffset), opts.handles);
    const ti = new IndexFile(timeIndexFile(dir, baseOffset), opts.handles);
    const xi = new IndexFile(txnIndexFile(dir, baseOffset), opts.handles);
    const [oBytes, tBytes, xBytes] = await Promise.all([oi.load(), ti.load(), xi.load()]);
    const seg = new LogSegment(
      dir,
      baseOffset,
      opts,
      new SegmentFile(logPath, opts.handles),
      new OffsetIndex(baseOffset, LogSegment.maxEntries(opts.maxIndexBytes, OFFSET_INDEX_ENTRY_SIZE), oBytes ?? undefined),
      new TimeIndex(baseOffset, LogSegment.maxEntries(opts.maxIndexBytes, TIME_INDEX_ENTRY_SIZE), tBytes ?? undefined),
      new TransactionIndex(baseOffset, xBytes ?? undefined),
      oi,
      ti,
      xi,
      size,
      now,
    );
    let indexesValid = oBytes !== null && tBytes !== null && xBytes !== null;
    if (indexesValid) {
      try {
        seg.offsetIndex.sanityCheck(size);
        seg.timeIndex.sanityCheck();
        seg.txnIndex.sanityCheck();
      } catch (e) {
        if (!(e instanceof CorruptIndexError)) throw e;
        indexesValid = false;
      }
    }
    if (indexesValid) seg.maxTs = seg.timeIndex.entries > 0 ? seg.timeIndex.lastEntry() : seg.maxTs;
    return { segment: seg, indexesValid };
  }

  get size(): number {
    return this.committedSize;
  }

  /** The offset after the last batch (the base offset when empty). */
  get nextOffset(): bigint {
    return this.next;
  }

  get isEmpty(): boolean {
    return this.committedSize === 0;
  }

  get maxTimestampSoFar(): bigint {
    return this.maxTs.timestamp;
  }

  get offsetOfMaxTimestampSoFar(): bigint {
    return this.maxTs.offset;
  }

  get createdMs(): number {
    return this.created;
  }

  get isInactive(): boolean {
    return this.inactive;
  }

  /** No aborted transaction recorded (Kafka's RemoteLogSegmentMetadata txnIdxEmpty). */
  get txnIndexEmpty(): boolean {
    return this.txnIndex.entries === 0;
  }

  get files(): { log: string; offsetIndex: string; timeIndex: string; txnIndex: string } {
    return {
      log: this.log.file,
      offsetIndex: this.offsetIndexFile.file,
      timeIndex: this.timeIndexFile.file,
      txnIndex: this.txnIndexFile.file,
    };
  }

  /**
   * The largest record timestamp, or the file's modification time when no batch
   * has a timestamp (Kafka's largestTimestamp, used by retention.ms).
   */
  async largestTimestamp(): Promise<number> {
    if (this.maxTs.timestamp >= 0n) return Number(this.maxTs.timestamp);
    try {
      return Math.floor((await fsp.stat(this.log.file)).mtimeMs);
    } catch {
      return this.created;
    }
  }

  canConvertToRelativeOffset(offset: bigint): boolean {
    return offset - this.baseOffset >= 0n && offset - this.baseOffset <= BigInt(INT32_MAX);
  }

  /**
   * After open() of a segment whose indexes are trusted: finds the end offset and
   * the max timestamp after the last index entries by scanning the tail.
   */
  async loadTail(): Promise<void> {
    const start = this.offsetIndex.lookup(this.offsetIndex.lastOffset).position;
    let next = this.baseOffset;
    for await (const b of scanBatchHeaders(this.log, 0, this.committedSize)) {
      this.rollingBasedTimestamp = b.header.maxTimestamp;
      break;
    }
    for await (const b of scanBatchHeaders(this.log, start, this.committedSize)) {
      next = b.lastOffset + 1n;
      if (b.header.maxTimestamp > this.maxTs.timestamp) this.maxTs = { timestamp: b.header.maxTimestamp, offset: b.lastOffset };
    }
    if (next === this.baseOffset && this.offsetIndex.entries > 0) next = this.offsetIndex.lastOffset + 1n;
    this.next = next;
    this.bytesSinceLastIndexEntry = this.committedSize - start;
  }

  /** For closed segments whose end is known from the next segment's base offset. */
  setNextOffset(next: bigint): void {
    this.next = next;
  }

  /**
   * Appends batches whose offsets are already assigned, at the committed size.
   * Resolves once the bytes are in the file (not fsynced).
   */
  async append(records: Buffer, meta: AppendMeta, now?: number): Promise<void> {
    return this.appendMany([{ records, meta }], now);
  }

  /**
   * Appends several appends' batches back to back with one writev (group commit);
   * index entries are decided per append exactly as if they came one by one.
   */
  async appendMany(parts: ReadonlyArray<{ records: Buffer; meta: AppendMeta }>, now?: number): Promise<void> {
    const last = parts[parts.length - 1];
    if (last === undefined) return;
    if (!this.canConvertToRelativeOffset(last.meta.lastOffset)) {
      throw new RangeError(`offset ${last.meta.lastOffset} overflows segment ${this.baseOffset}`);
    }
    const start = this.committedSize;
    let position = start;
    const bufs: Buffer[] = [];
    for (const { records, meta } of parts) {
      if (records.length === 0) continue;
      if (position === 0) this.rollingBasedTimestamp = records.readBigInt64BE(OFFSET_MAX_TIMESTAMP);
      if (meta.maxTimestamp > this.maxTs.timestamp) this.maxTs = { timestamp: meta.maxTimestamp, offset: meta.offsetOfMaxTimestamp };
      // Kafka's rule: an entry once more than index.interval.bytes went in since the last one.
      // A full index skips entries (it stays sparse-correct); the next roll check closes the segment.
      // The entries stay in memory (lookups read them there) until writeIndexTails().
      if (this.bytesSinceLastIndexEntry > this.opts.indexIntervalBytes && !this.offsetIndex.isFull && !this.timeIndex.isFull) {
        this.offsetIndex.append(meta.lastOffset, position);
        this.timeIndex.maybeAppend(this.maxTs.timestamp, this.maxTs.offset);
        this.bytesSinceLastIndexEntry = 0;
      }
      this.bytesSinceLastIndexEntry += records.length;
      bufs.push(records);
      position += records.length;
    }
    if (now !== undefined) this.recentWrites.noteWrite(start, now);
    await this.log.writev(bufs, start);
    this.committedSize = position;
    this.next = last.meta.lastOffset + 1n;
  }

  async appendAbortedTxn(t: AbortedTxn): Promise<void> {
    const before = this.txnIndex.sizeInBytes;
    await this.txnIndexFile.append(this.txnIndex.append(t), before);
  }

  /**
   * The batch holding the first offset >= `offset`, searching from the index
   * entry at or below it: Kafka's translateOffset. Null past the end.
   */
  async translateOffset(offset: bigint, maxPosition = this.committedSize): Promise<FileBatch | null> {
    const start = this.offsetIndex.lookup(offset).position;
    if (start >= maxPosition) return null;
    for await (const b of scanBatchHeaders(this.log, start, maxPosition)) {
      if (b.lastOffset >= offset) return b;
    }
    return null;
  }

  /**
   * Whole batches from the one containing `startOffset`, at most `maxBytes` (or
   * the first batch whatever its size when `minOneBatch`), below `maxPosition`
   * and holding no offset >= `maxOffset`. Null when `startOffset` is past the data.
   * With `lease`, the bytes returned are read into its pooled buffers (see
   * broker/common/read-buffer-pool.ts). With `now`, bytes written within
   * RESIDENT_READ_WINDOW_MS before it are read on this thread (see RecentWrites).
   */
  async read(startOffset: bigint, maxBytes: number, maxPosition: number, minOneBatch: boolean, maxOffset: bigint, lease?: ReadLease, now?: number): Promise<ReadResult | null> {
    // Usually one read: from the index entry, enough to pass the scan and fill maxBytes.
    const start = this.offsetIndex.lookup(startOffset).position;
    if (start >= maxPosition) return null;
    const hotFrom = now === undefined ? Infinity : this.recentWrites.hotFrom(now);
    const readAt = (position: number, length: number, into?: Buffer): Promise<Buffer> =>
      position >= hotFrom && length <= RESIDENT_READ_MAX_BYTES ? this.log.readResident(position, length, into) : this.log.read(position, length, into);
    const guessBytes = Math.min(maxPosition - start, maxBytes + READ_SLACK);
    const guess = await readAt(start, guessBytes, lease?.take(guessBytes));
    let at = 0;
    let first: { position: number; size: number; baseOffset: bigint; lastOffset: bigint } | null = null;
    while (at + BATCH_HEADER_SIZE <= guess.length) {
      const size = guess.readInt32BE(at + OFFSET_BATCH_LENGTH) + LOG_OVERHEAD;
      if (size < BATCH_HEADER_SIZE) break;
      const base = guess.readBigInt64BE(at);
      const last = base + BigInt(guess.readInt32BE(at + OFFSET_LAST_OFFSET_DELTA));
      if (last >= startOffset) {
        first = { position: start + at, size, baseOffset: base, lastOffset: last };
        break;
      }
      at += size;
    }
    if (first === null) {
      const b = await this.translateOffset(startOffset, maxPosition);
      if (b === null) return null;
      first = { position: b.position, size: b.size, baseOffset: b.header.baseOffset, lastOffset: b.lastOffset };
    }
    const empty = { records: Buffer.alloc(0), firstOffset: first.baseOffset, position: first.position };
    if (first.lastOffset >= maxOffset) return empty;
    const limit = minOneBatch ? Math.max(maxBytes, first.size) : maxBytes;
    const end = Math.min(maxPosition, first.position + limit);
    if (end - first.position < first.size) return empty;
    const inGuess = first.position >= start && end <= start + guess.length;
    const buf = inGuess ? guess.subarray(first.position - start, end - start) : await readAt(first.position, end - first.position, lease?.take(end - first.position));
    // Cut to whole batches below maxOffset; headers only.
    at = 0;
    while (at + LOG_OVERHEAD <= buf.length) {
      const size = buf.readInt32BE(at + OFFSET_BATCH_LENGTH) + LOG_OVERHEAD;
      if (at + size > buf.length) break;
      const last = buf.readBigInt64BE(at) + BigInt(buf.readInt32BE(at + OFFSET_LAST_OFFSET_DELTA));
      if (last >= maxOffset) break;
      at += size;
    }
    return { records: buf.subarray(0, at), firstOffset: first.baseOffset, position: first.position };
  }

  /**
   * read() for a connection that sends with sendfile(2): the same batches, found
   * from their headers alone and returned as a region of this segment's file,
   * never read into memory. Only for bytes written within RESIDENT_READ_WINDOW_MS
   * before `now` (in the page cache: the sendfile runs on the event loop, as the
   * pread it replaces would); undefined otherwise, and when the first batch is
   * one the cleaner emptied (PartitionLog steps over those with read()), so the
   * caller reads into buffers instead. Null when `startOffset` is past the data.
   */
  async readFile(startOffset: bigint, maxBytes: number, maxPosition: number, minOneBatch: boolean, maxOffset: bigint, binding: SendfileBinding, now: number): Promise<FileReadResult | null | undefined> {
    const start = this.offsetIndex.lookup(startOffset).position;
    if (start >= maxPosition) return null;
    if (start < this.recentWrites.hotFrom(now)) return undefined;
    return this.log.withFd((fd) => {
      const read = (position: number, length: number, into: Buffer): number => readFullySync(fd, position, length, into).length;
      const skipTo = (end: number, below: bigint): number => this.offsetIndex.floorByPosition(end, below)?.position ?? -1;
      const span = batchSpan(read, start, maxPosition, startOffset, maxBytes, minOneBatch, maxOffset, skipTo);
      if (span === null) return null;
      if (span.firstRecordCount === 0) return undefined;
      return { file: span.length === 0 ? null : fileRegion(binding, fd, span.position, span.length), firstOffset: span.firstOffset };
    });
  }

  /**
   * The first record with timestamp >= `timestamp` and offset >= `startingOffset`
   * (Kafka's findOffsetByTimestamp). Decodes only the batch where the target falls.
   */
  async findOffsetByTimestamp(timestamp: bigint, startingOffset: bigint): Promise<TimestampAndOffset | null> {
    const entry = this.timeIndex.lookup(timestamp);
    const from = entry.offset > startingOffset ? entry.offset : startingOffset;
    const position = this.offsetIndex.lookup(from).position;
    for await (const b of scanBatchHeaders(this.log, position, this.committedSize)) {
      if (b.header.maxTimestamp < timestamp || b.lastOffset < startingOffset) continue;
      const batch = await this.log.read(b.position, b.size);
      const decoded = decodeRecordBatch(batch, 0);
      for (const r of decoded.records) {
        if (r.timestamp >= timestamp && r.offset >= startingOffset) {
          return { timestamp: r.timestamp, offset: r.offset, leaderEpoch: b.header.partitionLeaderEpoch };
        }
      }
    }
    return null;
  }

  /**
   * Kafka's shouldRoll: the segment is full for `messagesSize` more bytes, old
   * enough by segment.ms, has a full index, or cannot index `maxOffsetInMessages`.
   */
  shouldRoll(p: { segmentBytes: number; segmentMs: number; messagesSize: number; maxTimestampInMessages: bigint; maxOffsetInMessages: bigint; now: number }): boolean {
    if (this.committedSize > p.segmentBytes - p.messagesSize) return true;
    if (this.committedSize > 0 && this.timeWaitedForRoll(p.now, p.maxTimestampInMessages) > p.segmentMs) return true;
    if (this.offsetIndex.isFull || this.timeIndex.isFull) return true;
    return !this.canConvertToRelativeOffset(p.maxOffsetInMessages);
  }

  /** First batch timestamp against the incoming one when known, else wall clock since creation. */
  timeWaitedForRoll(now: number, messageTimestamp: bigint): number {
    const ts = this.rollingBasedTimestamp;
    if (ts !== null && ts >= 0n) return Number(messageTimestamp - ts);
    return now - this.created;
  }

  /** Wall-clock age since creation (idle rolling by the scheduler). */
  ageMs(now: number): number {
    return now - this.created;
  }

  /** Restarts the segment.ms clock (an empty active segment "rolled" in place). */
  resetCreated(now: number): void {
    this.created = now;
  }

  /**
   * Rebuilds the indexes from the log, validating every batch, and truncates the
   * file at the first invalid byte. Returns the number of bytes cut.
   */
  async recover(minNextOffset: bigint, visit?: RecoveryVisitor): Promise<number> {
    this.offsetIndex.reset();
    this.timeIndex.reset();
    // Without a producer-state visitor the aborted txns cannot be rebuilt: keep the
    // loaded ones (if sane) and only drop those past the new end.
    let keepTxns = visit === undefined;
    if (keepTxns) {
      try {
        this.txnIndex.sanityCheck();
      } catch {
        keepTxns = false;
      }
    }
    if (!keepTxns) this.txnIndex.reset();
    this.maxTs = { timestamp: NO_TIMESTAMP, offset: -1n };
    this.rollingBasedTimestamp = null;
    const fileSize = await this.log.size();
    let lastIndexEntry = 0;
    let validBytes = 0;
    let next = this.baseOffset;
    const lower = minNextOffset > this.baseOffset ? minNextOffset : this.baseOffset;
    const result = await validateBatches(
      this.log,
      0,
      fileSize,
      { minNextOffset: lower, maxLastOffset: this.baseOffset + BigInt(INT32_MAX) },
      (header, buf, at, position, size) => {
        const last = header.baseOffset + BigInt(header.lastOffsetDelta);
        if (position === 0) this.rollingBasedTimestamp = header.maxTimestamp;
        if (header.maxTimestamp > this.maxTs.timestamp) this.maxTs = { timestamp: header.maxTimestamp, offset: last };
        if (position - lastIndexEntry > this.opts.indexIntervalBytes && !this.offsetIndex.isFull) {
          this.offsetIndex.append(last, position);
          this.timeIndex.maybeAppend(this.maxTs.timestamp, this.maxTs.offset);
          lastIndexEntry = position;
        }
        if (visit !== undefined) {
          const aborted = visit(header, buf.subarray(at, at + size));
          if (aborted !== null && !keepTxns) this.txnIndex.append(aborted);
        }
        validBytes = position + size;
        next = last + 1n;
      },
    );
    const truncated = fileSize - result.validBytes;
    if (truncated > 0) await this.log.truncate(result.validBytes);
    this.recentWrites.clear();
    this.committedSize = result.validBytes;
    this.next = next;
    this.bytesSinceLastIndexEntry = validBytes - lastIndexEntry;
    if (keepTxns) this.txnIndex.truncateTo(next);
    // As Kafka does: the largest timestamp goes in last, as a normally closed segment has it.
    if (this.maxTs.timestamp >= 0n) this.timeIndex.maybeAppend(this.maxTs.timestamp, this.maxTs.offset, true);
    await Promise.all([
      this.offsetIndexFile.rewrite(this.offsetIndex.bytes()),
      this.timeIndexFile.rewrite(this.timeIndex.bytes()),
      this.txnIndexFile.rewrite(this.txnIndex.bytes()),
    ]);
    this.offsetIndex.markWritten();
    this.timeIndex.markWritten();
    return truncated;
  }

  /**
   * Kafka's LogSegment.truncateTo: cuts the log before the first batch holding
   * an offset >= `offset` and rebuilds the indexes from what is left (the txn
   * index loses the entries past the new end). The segment is the active one
   * afterwards (the log removed every later segment). Returns the bytes cut.
   */
  async truncateTo(offset: bigint): Promise<number> {
    const at = await this.translateOffset(offset);
    if (at === null) return 0;
    const cut = this.committedSize - at.position;
    await this.log.truncate(at.position);
    this.recentWrites.clear();
    this.committedSize = at.position;
    this.inactive = false;
    await this.recover(this.baseOffset);
    if (this.committedSize === 0) this.next = this.baseOffset;
    return cut;
  }

  /**
   * The segment stops being the active one: its final max-timestamp entry goes
   * into the time index (so retention and time lookups see it), and everything is
   * fsynced by the caller's flush.
   */
  async onBecomeInactive(): Promise<void> {
    this.inactive = true;
    if (this.maxTs.timestamp >= 0n) this.timeIndex.maybeAppend(this.maxTs.timestamp, this.maxTs.offset, true);
    // A closed segment's index files are complete on disk from here on.
    await this.writeIndexTails();
  }

  markInactive(): void {
    this.inactive = true;
  }

  /**
   * Writes the offset and time index entries not yet in their files (one write
   * per index, none when nothing changed); not fsynced. The in-memory entries
   * are what lookups use; this is for the files' sake: flush, roll, close, and
   * anyone about to read the `.index`/`.timeindex` files from disk.
   */
  async writeIndexTails(): Promise<void> {
    await Promise.all([this.offsetIndexFile.writeTail(this.offsetIndex.takeUnwritten()), this.timeIndexFile.writeTail(this.timeIndex.takeUnwritten())]);
  }

  /** Index tails written, then everything fsynced. */
  async flush(): Promise<void> {
    const tails = this.writeIndexTails();
    await Promise.all([tails, this.log.flush(), this.offsetIndexFile.flush(), this.timeIndexFile.flush(), this.txnIndexFile.flush()]);
  }

  /** Flushes and releases the index fds of a closed segment (the log fd stays for reads). */
  async releaseIndexHandles(): Promise<void> {
    await this.writeIndexTails();
    await Promise.all([this.offsetIndexFile.close(), this.timeIndexFile.close(), this.txnIndexFile.close()]);
  }

  async close(): Promise<void> {
    await this.flush();
    await Promise.all([this.log.close(), this.offsetIndexFile.closeHandle(), this.timeIndexFile.closeHandle(), this.txnIndexFile.closeHandle()]);
  }

  /** Closes every fd without flushing. */
  async closeHandles(): Promise<void> {
    await Promise.all([this.log.close(), this.offsetIndexFile.closeHandle(), this.timeIndexFile.closeHandle(), this.txnIndexFile.closeHandle()]);
  }

  /** Removes the files; reads already in flight finish through the open fd. */
  async delete(): Promise<void> {
    await this.log.markDeleted();
    await Promise.all([this.offsetIndexFile.delete(), this.timeIndexFile.delete(), this.txnIndexFile.delete()]);
    await this.log.delete();
  }

  toString(): string {
    return `LogSegment(baseOffset=${this.baseOffset}, size=${this.committedSize}, nextOffset=${this.next})`;
  }
}
