// The per-segment manifest: a pure codec, no I/O. Written last by a copy, so
// its presence marks a complete segment. It records each object's size and
// CRC-32C, and how the data object is laid out: fixed-size chunks of the
// original data, either stored as is ('none') or each compressed as an
// independent zstd frame ('zstd-chunked'), with a CRC per stored chunk so a
// ranged read can be verified without fetching the whole object.
//
// It also records whether every record batch of the data passed its own CRC at
// upload (`batchesVerified`, added within version 1: manifests written before
// it decode as not verified, and older readers ignore the field).
//
// Encoding: one header line `sediment-manifest <version> crc32c=<8 hex>`, then
// the JSON body; the CRC covers the body bytes.
import { crc32c } from '@node-rs/crc32';
import type { ObjectKind, RemoteSegmentRef } from '../remote-storage.js';
import { RemoteCorruptionError } from '../remote-storage.js';
import { isObjectKind, validateRef } from './object-keys.js';

export const MANIFEST_FORMAT_VERSION = 1;
const HEADER_PREFIX = 'sediment-manifest ';

export interface ObjectEntry {
  readonly size: number;
  readonly crc32c: number;
}

interface DataLayoutBase {
  /** Size of the original (uncompressed) data. */
  readonly size: number;
  /** Original bytes per chunk; the last chunk may be shorter. */
  readonly chunkSize: number;
  /** CRC-32C of each stored chunk (compressed frame, or raw slice for 'none'). */
  readonly chunkCrcs: readonly number[];
}

export interface UncompressedLayout extends DataLayoutBase {
  readonly compression: 'none';
}

export interface ZstdChunkedLayout extends DataLayoutBase {
  readonly compression: 'zstd-chunked';
  /** Offset in the stored object where chunk i starts; one more entry: the stored size. */
  readonly compressedOffsets: readonly number[];
}

export type DataLayout = UncompressedLayout | ZstdChunkedLayout;

export interface Manifest {
  readonly formatVersion: number;
  readonly segment: RemoteSegmentRef;
  /** Every object of the segment except the manifest itself. */
  readonly objects: Readonly<Partial<Record<Exclude<ObjectKind, 'manifest'>, ObjectEntry>>>;
  readonly data: DataLayout;
  /** Every record batch in the data was whole and passed its CRC when uploaded. */
  readonly batchesVerified: boolean;
}

export function chunkCount(size: number, chunkSize: number): number {
  return size === 0 ? 0 : Math.ceil(size / chunkSize);
}

/** Stored byte range [start, endExclusive) of chunk i. */
export function storedChunkRange(layout: DataLayout, i: number): { start: number; end: number } {
  if (layout.compression === 'none') {
    const start = i * layout.chunkSize;
    return { start, end: Math.min(start + layout.chunkSize, layout.size) };
  }
  return { start: layout.compressedOffsets[i] ?? 0, end: layout.compressedOffsets[i + 1] ?? 0 };
}

/** Original length of chunk i. */
export function originalChunkLength(layout: DataLayout, i: number): number {
  return Math.min(layout.chunkSize, layout.size - i * layout.chunkSize);
}

export function encodeManifest(m: Manifest): Buffer {
  const body = Buffer.from(
    JSON.stringify({
      formatVersion: m.formatVersion,
      segment: { ...m.segment, baseOffset: m.segment.baseOffset.toString() },
      objects: m.objects,
      data: m.data,
      batchesVerified: m.batchesVerified,
    }),
    'utf8',
  );
  const crc = crc32c(body).toString(16).padStart(8, '0');
  return Buffer.concat([Buffer.from(`${HEADER_PREFIX}${m.formatVersion} crc32c=${crc}\n`, 'utf8'), body]);
}

function fail(what: string, cause?: unknown): never {
  throw new RemoteCorruptionError(`corrupt manifest: ${what}`, { cause });
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function nonNegInt(v: unknown, what: string): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) fail(`${what} is not a non-negative integer`);
  return v;
}

function u32(v: unknown, what: string): number {
  const n = nonNegInt(v, what);
  if (n > 0xffffffff) fail(`${what} is not a u32`);
  return n;
}

function u32Array(v: unknown, what: string): number[] {
  if (!Array.isArray(v)) fail(`${what} is not an array`);
  return v.map((x, i) => u32(x, `${what}[${i}]`));
}

function str(v: unknown, what: string): string {
  if (typeof v !== 'string') fail(`${what} is not a string`);
  return v;
}

function decodeLayout(v: unknown): DataLayout {
  if (!isRecord(v)) fail('data is not an object');
  const size = nonNegInt(v.size, 'data.size');
  const chunkSize = nonNegInt(v.chunkSize, 'data.chunkSize');
  if (chunkSize === 0) fail('data.chunkSize is 0');
  const chunkCrcs = u32Array(v.chunkCrcs, 'data.chunkCrcs');
  const n = chunkCount(size, chunkSize);
  if (chunkCrcs.length !== n) fail(`data.chunkCrcs has ${chunkCrcs.length} entries, want ${n}`);
  if (v.compression === 'none') return { compression: 'none', size, chunkSize, chunkCrcs };
  if (v.compression !== 'zstd-chunked') fail(`unknown data.compression ${String(v.compression)}`);
  const compressedOffsets = u32Array(v.compressedOffsets, 'data.compressedOffsets').map((x) => x);
  if (compressedOffsets.length !== n + 1) fail(`data.compressedOffsets has ${compressedOffsets.length} entries, want ${n + 1}`);
  for (let i = 1; i < compressedOffsets.length; i++) {
    if ((compressedOffsets[i] ?? 0) < (compressedOffsets[i - 1] ?? 0)) fail('data.compressedOffsets not ascending');
  }
  if (compressedOffsets[0] !== 0) fail('data.compressedOffsets does not start at 0');
  return { compression: 'zstd-chunked', size, chunkSize, chunkCrcs, compressedOffsets };
}

export function decodeManifest(buf: Buffer): Manifest {
  const nl = buf.indexOf(0x0a);
  if (nl < 0) fail('no header line');
  const header = buf.subarray(0, nl).toString('utf8');
  const m = /^sediment-manifest ([0-9]+) crc32c=([0-9a-f]{8})$/.exec(header);
  if (m === null) fail(`bad header ${JSON.stringify(header.slice(0, 80))}`);
  const version = Number(m[1]);
  if (version !== MANIFEST_FORMAT_VERSION) fail(`unsupported format version ${version}`);
  const body = buf.subarray(nl + 1);
  const want = Number.parseInt(m[2] ?? '', 16);
  const got = crc32c(body);
  if (got !== want) fail(`crc32c mismatch (header ${want.toString(16)}, body ${got.toString(16)})`);
  let json: unknown;
  try {
    json = JSON.parse(body.toString('utf8'));
  } catch (e) {
    fail('body is not JSON', e);
  }
  if (!isRecord(json)) fail('body is not an object');
  if (json.formatVersion !== version) fail('formatVersion differs from the header');
  const seg = json.segment;
  if (!isRecord(seg)) fail('segment is not an object');
  const offsetText = str(seg.baseOffset, 'segment.baseOffset');
  if (!/^[0-9]{1,19}$/.test(offsetText)) fail('segment.baseOffset is not an offset');
  const segment: RemoteSegmentRef = {
    topic: str(seg.topic, 'segment.topic'),
    topicId: str(seg.topicId, 'segment.topicId'),
    partition: nonNegInt(seg.partition, 'segment.partition'),
    baseOffset: BigInt(offsetText),
    segmentId: str(seg.segmentId, 'segment.segmentId'),
  };
  try {
    validateRef(segment);
  } catch (e) {
    fail('segment ref is invalid', e);
  }
  if (!isRecord(json.objects)) fail('objects is not an object');
  const objects: Partial<Record<Exclude<ObjectKind, 'manifest'>, ObjectEntry>> = {};
  for (const [kind, entry] of Object.entries(json.objects)) {
    if (!isObjectKind(kind) || kind === 'manifest') fail(`unknown object kind ${kind}`);
    if (!isRecord(entry)) fail(`objects.${kind} is not an object`);
    objects[kind] = { size: nonNegInt(entry.size, `objects.${kind}.size`), crc32c: u32(entry.crc32c, `objects.${kind}.crc32c`) };
  }
  const data = decodeLayout(json.data);
  const log = objects.log;
  if (log === undefined) fail('objects.log is missing');
  const storedSize = data.compression === 'none' ? data.size : (data.compressedOffsets[data.compressedOffsets.length - 1] ?? 0);
  if (log.size !== storedSize) fail(`objects.log.size ${log.size} differs from the data layout (${storedSize})`);
  const verified = json.batchesVerified;
  if (verified !== undefined && typeof verified !== 'boolean') fail('batchesVerified is not a boolean');
  return { formatVersion: version, segment, objects, data, batchesVerified: verified === true };
}
