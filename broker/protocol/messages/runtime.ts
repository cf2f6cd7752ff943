// Shared support for the generated message codecs in this folder: tagged
// fields, version checks and descriptor types. Hand-written; the generator
// (broker/protocol/codegen/generate.mjs) emits code against these names.
import { isDeepStrictEqual } from 'node:util';
import { ErrorCode, KafkaError, ProtocolDecodeError, ProtocolEncodeError } from '../errors.js';
import { Reader, ZERO_UUID } from '../reader.js';
import { Writer } from '../writer.js';

export { isDeepStrictEqual, ZERO_UUID };
/** The type of `records` fields: a Buffer, or a RecordParts written part by part. */
export type { Records } from '../record-parts.js';

/** A tagged field this version of the codec does not know, kept verbatim so re-encoding is byte-identical. */
export interface TaggedField {
  tag: number;
  data: Buffer;
}

/** Inclusive version range. */
export interface VersionRange {
  min: number;
  max: number;
}

/** First flexible version and, if bounded, the last; null when the message is never flexible. */
export type FlexibleVersions = { min: number; max: number | null } | null;

export interface MessageMeta {
  /** The API key for requests/responses and metadata records; -1 when the message has none. */
  apiKey: number;
  name: string;
  validVersions: VersionRange;
  flexibleVersions: FlexibleVersions;
  /** Kafka marks the highest version as still under development: do not advertise it. */
  latestVersionUnstable: boolean;
}

export const EMPTY_BUFFER: Buffer = Buffer.alloc(0);

export function isFlexible(meta: MessageMeta, version: number): boolean {
  const f = meta.flexibleVersions;
  return f !== null && version >= f.min && (f.max === null || version <= f.max);
}

export function checkVersion(meta: MessageMeta, version: number, what: string): void {
  if (version < meta.validVersions.min || version > meta.validVersions.max || !Number.isInteger(version)) {
    throw new KafkaError(
      ErrorCode.UNSUPPORTED_VERSION,
      `${what} version ${version} of ${meta.name} is outside ${meta.validVersions.min}-${meta.validVersions.max}`,
    );
  }
}

export function nonNull<T>(v: T | null, field: string): T {
  if (v === null) throw new ProtocolEncodeError(`Field ${field} is not nullable in this version`);
  return v;
}

export function unknownTagInVersion(tag: number, version: number): never {
  throw new ProtocolDecodeError(`Tag ${tag} is not valid for version ${version}`);
}

/** Encodes one tagged field's value into its own buffer (its size goes on the wire first). */
export function encodeTagged(tag: number, write: (w: Writer) => void): TaggedField {
  const w = new Writer(64);
  write(w);
  return { tag, data: w.toBuffer() };
}

/** Writes a tagged-field section: known fields and preserved unknown ones, in tag order. */
export function writeTaggedFields(
  w: Writer,
  known: TaggedField[] | null,
  unknown: TaggedField[] | undefined,
): void {
  let all: TaggedField[];
  if (unknown === undefined || unknown.length === 0) {
    if (known === null) {
      w.writeUVarint(0);
      return;
    }
    all = known;
  } else if (known === null) {
    all = unknown;
  } else {
    all = known.concat(unknown).sort((a, b) => a.tag - b.tag);
  }
  w.writeUVarint(all.length);
  for (const f of all) {
    w.writeUVarint(f.tag);
    w.writeUVarint(f.data.length);
    w.writeRaw(f.data);
  }
}

/** Reads a tagged-field section where no tag is known to this struct. */
export function readUnknownTaggedFields(r: Reader, into: { _unknownTaggedFields?: TaggedField[] }): void {
  const n = r.readUVarint();
  for (let i = 0; i < n; i++) {
    const tag = r.readUVarint();
    const data = r.readRaw(r.readUVarint());
    (into._unknownTaggedFields ??= []).push({ tag, data });
  }
}

/** A tagged field the struct knows of, but not in this version: kept raw like an unknown one. */
export function pushUnknownTag(into: { _unknownTaggedFields?: TaggedField[] }, tag: number, t: Reader): void {
  (into._unknownTaggedFields ??= []).push({ tag, data: t.readRaw(t.remaining) });
}
