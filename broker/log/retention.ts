// Which closed segments retention may delete, in one place (Kafka's
// UnifiedLog.deletableSegments and its three predicates). Deletion goes oldest
// first and stops at the first segment that must stay. Tiered storage adds its
// own condition through `canDeleteSegment` (e.g. "only once it is remote").
import type { LogConfig } from '../../metadata/log-config.js';
import type { LogSegment } from './log-segment.js';

export type DeletionReason = 'log-start-offset' | 'retention-bytes' | 'retention-ms';

export interface RetentionView {
  segments: readonly LogSegment[];
  logStartOffset: bigint;
  logEndOffset: bigint;
  highWatermark: bigint;
}

export type SegmentPredicate = (segment: LogSegment, next: LogSegment | undefined) => boolean;

/**
 * Segments from the oldest on for which `predicate` holds, stopping at the first
 * that fails. A segment is never deletable while it holds offsets at or above the
 * high watermark, nor when it is the last and empty.
 */
export function deletableSegments(view: RetentionView, predicate: SegmentPredicate, canDeleteSegment?: (s: LogSegment) => boolean): LogSegment[] {
  const out: LogSegment[] = [];
  const segs = view.segments;
  for (let i = 0; i < segs.length; i++) {
    const seg = segs[i] as LogSegment;
    const next = segs[i + 1];
    const upper = next?.baseOffset ?? view.logEndOffset;
    const lastAndEmpty = next === undefined && seg.size === 0;
    if (view.highWatermark < upper || lastAndEmpty || !predicate(seg, next)) break;
    if (canDeleteSegment !== undefined && !canDeleteSegment(seg)) break;
    out.push(seg);
  }
  return out;
}

/** Segments entirely below the log start offset (after DeleteRecords). */
export function logStartOffsetBreached(logStartOffset: bigint): SegmentPredicate {
  return (_seg, next) => next !== undefined && next.baseOffset <= logStartOffset;
}

type RetentionLimits = Pick<LogConfig, 'retentionMs' | 'retentionBytes' | 'remoteStorageEnable' | 'localRetentionMs' | 'localRetentionBytes'>;

/**
 * The limits that bound the local segments: retention.* for a local-only
 * partition, local.retention.* (-2 = inherit) for a tiered one, whose total
 * retention the RemoteLogManager applies across both tiers.
 */
export function localRetentionLimits(config: Partial<RetentionLimits> & Pick<LogConfig, 'retentionMs' | 'retentionBytes'>): {
  retentionMs: number;
  retentionBytes: number;
} {
  if (config.remoteStorageEnable !== true) return { retentionMs: config.retentionMs, retentionBytes: config.retentionBytes };
  const ms = config.localRetentionMs;
  const bytes = config.localRetentionBytes;
  return {
    retentionMs: ms === undefined || ms === -2 ? config.retentionMs : ms,
    retentionBytes: bytes === undefined || bytes === -2 ? config.retentionBytes : bytes,
  };
}

/** retention.bytes (local.retention.bytes when tiered): oldest segments while the log stays at or above the limit without them. */
export function retentionSizeBreached(
  config: Partial<RetentionLimits> & Pick<LogConfig, 'retentionBytes'>,
  totalBytes: number,
): SegmentPredicate | null {
  const { retentionBytes } = localRetentionLimits({ retentionMs: -1, ...config });
  if (retentionBytes < 0 || totalBytes < retentionBytes) return null;
  let diff = totalBytes - retentionBytes;
  return (seg) => {
    if (diff - seg.size >= 0) {
      diff -= seg.size;
      return true;
    }
    return false;
  };
}

/**
 * retention.ms (local.retention.ms when tiered): segments whose largest timestamp
 * is older than the limit. Timestamps are preloaded (largestTimestamp may stat
 * the file), hence the map.
 */
export function retentionMsBreached(
  config: Partial<RetentionLimits> & Pick<LogConfig, 'retentionMs'>,
  now: number,
  largestTimestamps: ReadonlyMap<bigint, number>,
): SegmentPredicate | null {
  const { retentionMs } = localRetentionLimits({ retentionBytes: -1, ...config });
  if (retentionMs < 0) return null;
  return (seg) => {
    const ts = largestTimestamps.get(seg.baseOffset);
    return ts !== undefined && now - ts > retentionMs;
  };
}
