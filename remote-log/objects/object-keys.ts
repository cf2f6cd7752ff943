// The only place object keys are built and parsed. Keys are deterministic from
// the segment ref, so a bucket listing alone can be read back into segments:
//   <prefix><topic>-<topicId>/<partition>/<baseOffset:20>-<segmentId>.<kind>
// Topic names are [a-zA-Z0-9._-] (no '/'), and both ids are 22-character
// base64url strings, which is what makes the key parseable despite '-' in
// topic names and ids.
import type { ObjectKind, RemoteSegmentRef } from '../remote-storage.js';

export const OBJECT_KINDS: readonly ObjectKind[] = [
  'log',
  'index',
  'timeindex',
  'txnindex',
  'snapshot',
  'leader-epoch-checkpoint',
  'manifest',
];

const ID_LENGTH = 22;
const ID_PATTERN = /^[A-Za-z0-9_-]{22}$/;
const TOPIC_PATTERN = /^[A-Za-z0-9._-]{1,249}$/;
const MAX_OFFSET = (1n << 63n) - 1n;

const KIND_SET: ReadonlySet<string> = new Set(OBJECT_KINDS);

export function isObjectKind(s: string): s is ObjectKind {
  return KIND_SET.has(s);
}

/** Throws a RangeError naming what is wrong with a ref that cannot become a key. */
export function validateRef(ref: RemoteSegmentRef): void {
  if (!TOPIC_PATTERN.test(ref.topic) || ref.topic === '.' || ref.topic === '..') {
    throw new RangeError(`invalid topic name for an object key: ${JSON.stringify(ref.topic)}`);
  }
  if (!ID_PATTERN.test(ref.topicId)) throw new RangeError(`invalid topicId (want 22 base64url chars): ${ref.topicId}`);
  if (!ID_PATTERN.test(ref.segmentId)) {
    throw new RangeError(`invalid segmentId (want 22 base64url chars): ${ref.segmentId}`);
  }
  if (!Number.isInteger(ref.partition) || ref.partition < 0 || ref.partition > 0x7fffffff) {
    throw new RangeError(`invalid partition: ${ref.partition}`);
  }
  if (ref.baseOffset < 0n || ref.baseOffset > MAX_OFFSET) throw new RangeError(`invalid baseOffset: ${ref.baseOffset}`);
}

/** `<prefix><topic>-<topicId>/`: everything of one topic. */
export function topicPrefix(prefix: string, topic: string, topicId: string): string {
  return `${prefix}${topic}-${topicId}/`;
}

/** `<prefix><topic>-<topicId>/<partition>/`: everything of one partition. */
export function partitionPrefix(prefix: string, topic: string, topicId: string, partition: number): string {
  return `${topicPrefix(prefix, topic, topicId)}${partition}/`;
}

/** `<prefix><topic>-<topicId>/<partition>/<baseOffset:20>-<segmentId>.`: every object of one segment. */
export function segmentPrefix(prefix: string, ref: RemoteSegmentRef): string {
  validateRef(ref);
  const offset = ref.baseOffset.toString().padStart(20, '0');
  return `${partitionPrefix(prefix, ref.topic, ref.topicId, ref.partition)}${offset}-${ref.segmentId}.`;
}

/**
 * A start-after bound for listing `<prefix><topic>-<topicId>/<partition>/`:
 * it sorts after every key of segments based at or below `baseOffset` and
 * before every key of segments based above it (offsets are zero-padded to 20
 * digits, and '.' sorts after the '-' that follows them and before any digit).
 */
export function afterBaseOffset(prefix: string, topic: string, topicId: string, partition: number, baseOffset: bigint): string {
  if (baseOffset < 0n || baseOffset > MAX_OFFSET) throw new RangeError(`invalid baseOffset: ${baseOffset}`);
  return `${partitionPrefix(prefix, topic, topicId, partition)}${baseOffset.toString().padStart(20, '0')}.`;
}

export function objectKey(prefix: string, ref: RemoteSegmentRef, kind: ObjectKind): string {
  return segmentPrefix(prefix, ref) + kind;
}

export interface ParsedKey {
  readonly ref: RemoteSegmentRef;
  readonly kind: ObjectKind;
}

/**
 * Reads a key back into its ref and kind, or undefined when the key (after
 * `prefix`) is not a segment object key.
 */
export function parseObjectKey(prefix: string, key: string): ParsedKey | undefined {
  if (!key.startsWith(prefix)) return undefined;
  const parts = key.slice(prefix.length).split('/');
  if (parts.length !== 3) return undefined;
  const [topicDir, partitionText, file] = parts as [string, string, string];
  // <topic>-<topicId>: the id is the last 22 characters.
  if (topicDir.length < ID_LENGTH + 2 || topicDir[topicDir.length - ID_LENGTH - 1] !== '-') return undefined;
  const topic = topicDir.slice(0, topicDir.length - ID_LENGTH - 1);
  const topicId = topicDir.slice(topicDir.length - ID_LENGTH);
  if (!/^(0|[1-9][0-9]{0,9})$/.test(partitionText)) return undefined;
  const partition = Number(partitionText);
  // <baseOffset:20>-<segmentId:22>.<kind>
  const m = /^([0-9]{20})-([A-Za-z0-9_-]{22})\.(.+)$/.exec(file);
  if (m === null) return undefined;
  const [, offsetText, segmentId, kind] = m as unknown as [string, string, string, string];
  if (!isObjectKind(kind)) return undefined;
  const ref: RemoteSegmentRef = { topic, topicId, partition, baseOffset: BigInt(offsetText), segmentId };
  try {
    validateRef(ref);
  } catch {
    return undefined;
  }
  return { ref, kind };
}

/** A stable string identity for a segment (for maps and cache keys). */
export function segmentIdentity(ref: RemoteSegmentRef): string {
  return `${ref.topicId}/${ref.partition}/${ref.baseOffset}/${ref.segmentId}`;
}
