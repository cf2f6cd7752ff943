// Putting a cleaned segment in place of the segments it was made from, so that
// a crash at any point leaves a loadable log holding either the old segments or
// the cleaned one (Kafka's LocalLog.replaceSegments and the swap handling of
// LogLoader). Runs under the partition's lock; reads go on throughout.
//
//   1. `<base>.*.cleaned` -> `<base>.*.swap`          (commit point: all four renamed)
//   2. each old segment: `.log` -> `.log.deleted` (open reads continue through
//      it), its index files unlinked
//   3. `<base>.*.swap` -> `<base>.*`, the log first
//   4. the new segment replaces the old ones in memory; the old files go
//
// At load (recoverInterruptedSwaps, before the segments are listed):
//   - `.cleaned` files are deleted; so are `.swap` files at or above the lowest
//     `.cleaned` base (their renames never completed, the old files are intact);
//   - a `<base>.log.swap` replaces every segment starting in [base, its end):
//     those files are deleted, then the `.swap` files renamed (log first);
//   - index `.swap` files without a `.log.swap` (step 3 cut short) are renamed.
// The cleaner keeps the last batch of every group (emptied if need be), so a
// swapped segment ends exactly where the last segment it replaces ended.
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import { scanBatchHeaders } from '../batch-scan.js';
import { INDEX_SUFFIX, LOG_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX, offsetFromFileName } from '../file-names.js';
import { fsyncDir, unlinkIfExists } from '../../common/file-io.js';
import { LogSegment, type SegmentOptions } from '../log-segment.js';
import type { LogSegments } from '../log-segments.js';
import { deleteSnapshot } from '../producer-snapshots.js';
import { SegmentFile } from '../segment-file.js';
import { CLEANED_SUFFIX, SWAP_SUFFIX, segmentFileNames } from './cleaned-segment-writer.js';

/** Called after every file operation of a swap; a hook that throws stops the swap there (crash tests). */
export type SwapStepHook = (step: string) => void | Promise<void>;

export interface SwapRequest {
  dir: string;
  /** The segments replaced, consecutive, oldest first; the cleaned segment has the first one's base offset. */
  oldSegments: readonly LogSegment[];
  segments: LogSegments;
  segmentOptions: SegmentOptions;
  now: number;
  afterStep?: SwapStepHook;
  logger?: Logger;
}

/** Whether `old` are still consecutive members of `segments` (retention or a delete may have removed some). */
function stillPresent(segments: LogSegments, old: readonly LogSegment[]): boolean {
  for (let i = 0; i < old.length; i++) {
    const s = old[i] as LogSegment;
    if (segments.get(s.baseOffset) !== s) return false;
    const next = old[i + 1];
    if (next !== undefined && segments.higherSegment(s.baseOffset) !== next) return false;
  }
  return old.length > 0;
}

/**
 * Swaps the `.cleaned` segment at the first old segment's base offset in. Returns
 * the new segment, or null (nothing renamed) when the old segments changed meanwhile.
 */
export async function swapCleanedSegment(req: SwapRequest): Promise<LogSegment | null> {
  const { dir, oldSegments, segments } = req;
  if (!stillPresent(segments, oldSegments)) return null;
  const step = async (what: string): Promise<void> => {
    if (req.afterStep !== undefined) await req.afterStep(what);
  };
  const first = oldSegments[0] as LogSegment;
  const last = oldSegments[oldSegments.length - 1] as LogSegment;
  const base = first.baseOffset;
  const names = segmentFileNames(dir, base);

  for (const f of names) {
    await fsp.rename(f + CLEANED_SUFFIX, f + SWAP_SUFFIX);
    await step(`rename ${path.basename(f)}${CLEANED_SUFFIX} -> ${SWAP_SUFFIX}`);
  }
  await fsyncDir(dir);

  for (const old of oldSegments) {
    const { offsetIndex, timeIndex, txnIndex } = old.files;
    await old.log.markDeleted();
    await step(`mark ${old.baseOffset} deleted`);
    for (const f of [offsetIndex, timeIndex, txnIndex]) {
      await unlinkIfExists(f);
      await step(`unlink ${path.basename(f)}`);
    }
  }

  for (const f of names) {
    await fsp.rename(f + SWAP_SUFFIX, f);
    await step(`rename ${path.basename(f)}${SWAP_SUFFIX} -> live`);
  }
  await fsyncDir(dir);

  const { segment, indexesValid } = await LogSegment.open(dir, base, req.segmentOptions, req.now);
  if (indexesValid) await segment.loadTail();
  else await segment.recover(base);
  const following = segments.higherSegment(last.baseOffset);
  if (following !== undefined) segment.setNextOffset(following.baseOffset);
  segment.markInactive();
  for (const old of oldSegments) segments.remove(old.baseOffset);
  segments.add(segment);

  for (const old of oldSegments) {
    await old.log.delete();
    await old.closeHandles();
  }
  // Producer snapshots named by the merged segments' bases describe no segment boundary any more.
  for (const old of oldSegments.slice(1)) await deleteSnapshot(dir, old.baseOffset);
  req.logger?.debug({ dir, baseOffset: base.toString(), replaced: oldSegments.length, size: segment.size }, 'swapped in cleaned segment');
  return segment;
}

const KINDS = [LOG_SUFFIX, INDEX_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX] as const;

/** Base offset and kind of `<20 digits><kind><suffix>`, or null. */
function parseSuffixed(name: string, suffix: string): { base: bigint; kind: string } | null {
  if (!name.endsWith(suffix)) return null;
  const inner = name.slice(0, name.length - suffix.length);
  for (const kind of KINDS) {
    const base = offsetFromFileName(inner, kind);
    if (base !== null) return { base, kind };
  }
  return null;
}

/** The offset after the last batch of a segment file (`base` when it holds none). */
async function endOffsetOf(file: string, base: bigint): Promise<bigint> {
  const size = (await fsp.stat(file)).size;
  const seg = new SegmentFile(file);
  try {
    let end = base;
    for await (const b of scanBatchHeaders(seg, 0, size)) end = b.lastOffset + 1n;
    return end;
  } finally {
    await seg.close();
  }
}

/** Completes or rolls back swaps a crash interrupted (see the file comment). Returns what was done, for logs and tests. */
export async function recoverInterruptedSwaps(dir: string, logger?: Logger): Promise<{ completed: bigint[]; rolledBack: bigint[] }> {
  const names = await fsp.readdir(dir);
  const result = { completed: [] as bigint[], rolledBack: [] as bigint[] };
  let minCleaned: bigint | null = null;
  const swaps = new Map<bigint, Set<string>>();
  const liveBases: bigint[] = [];
  for (const n of names) {
    const cleaned = parseSuffixed(n, CLEANED_SUFFIX);
    if (cleaned !== null) {
      if (minCleaned === null || cleaned.base < minCleaned) minCleaned = cleaned.base;
      await unlinkIfExists(path.join(dir, n));
      continue;
    }
    const swap = parseSuffixed(n, SWAP_SUFFIX);
    if (swap !== null) {
      const kinds = swaps.get(swap.base) ?? new Set<string>();
      kinds.add(swap.kind);
      swaps.set(swap.base, kinds);
      continue;
    }
    const live = offsetFromFileName(n, LOG_SUFFIX);
    if (live !== null) liveBases.push(live);
  }
  if (swaps.size === 0) return result;
  const bases = [...swaps.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  for (const base of bases) {
    const kinds = swaps.get(base) as Set<string>;
    const [log, ...indexes] = segmentFileNames(dir, base);
    if (minCleaned !== null && base >= minCleaned) {
      for (const f of segmentFileNames(dir, base)) await unlinkIfExists(f + SWAP_SUFFIX);
      result.rolledBack.push(base);
      logger?.warn({ dir, baseOffset: base.toString() }, 'rolled back an unfinished segment swap');
      continue;
    }
    if (kinds.has(LOG_SUFFIX)) {
      const end = await endOffsetOf(log + SWAP_SUFFIX, base);
      for (const old of liveBases) {
        if (old !== base && (old < base || old >= end)) continue;
        for (const f of segmentFileNames(dir, old)) await unlinkIfExists(f);
      }
      await fsp.rename(log + SWAP_SUFFIX, log);
    }
    for (const f of indexes) {
      try {
        await fsp.rename(f + SWAP_SUFFIX, f);
      } catch (e) {
        if ((e as { code?: unknown }).code !== 'ENOENT') throw e;
      }
    }
    result.completed.push(base);
    logger?.warn({ dir, baseOffset: base.toString() }, 'completed an interrupted segment swap');
  }
  await fsyncDir(dir);
  return result;
}
