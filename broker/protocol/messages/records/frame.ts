// Envelopes of records stored in internal topics. Pure; no I/O.
// - Metadata records (`storage/`, `__remote_log_metadata`, and KRaft records) are
//   written as Kafka's AbstractApiMessageSerde does: unsigned varints frame
//   version (1), apiKey and version, then the message body.
// - Coordinator records (`__consumer_offsets`, `__transaction_state`) prefix
//   both key and value with an int16 version; the key's version tells the
//   record type in `__consumer_offsets` (0-1 offset commit, 2 group metadata).
import { ProtocolDecodeError } from '../../errors.js';
import { Reader } from '../../reader.js';
import { Writer } from '../../writer.js';

export const METADATA_FRAME_VERSION = 1;

export interface MetadataRecordFrame {
  apiKey: number;
  version: number;
  /** Positioned at the start of the message body. */
  body: Reader;
}

/** Serializes a metadata record: frame version, apiKey, version, then `writeBody`. */
export function encodeMetadataRecord(apiKey: number, version: number, writeBody: (w: Writer) => void): Buffer {
  const w = new Writer(128);
  w.writeUVarint(METADATA_FRAME_VERSION);
  w.writeUVarint(apiKey);
  w.writeUVarint(version);
  writeBody(w);
  return w.toBuffer();
}

export function decodeMetadataRecord(buf: Buffer): MetadataRecordFrame {
  const r = new Reader(buf);
  const frameVersion = r.readUVarint();
  if (frameVersion !== METADATA_FRAME_VERSION) {
    throw new ProtocolDecodeError(`Unsupported metadata record frame version ${frameVersion}`);
  }
  const apiKey = r.readUVarint();
  const version = r.readUVarint();
  if (apiKey > 0x7fff || version > 0x7fff) {
    throw new ProtocolDecodeError(`Metadata record apiKey ${apiKey} / version ${version} out of range`);
  }
  return { apiKey, version, body: r };
}

/** Serializes a coordinator key or value: int16 version, then `writeBody`. */
export function encodeVersioned(version: number, writeBody: (w: Writer) => void): Buffer {
  const w = new Writer(128);
  w.writeInt16(version);
  writeBody(w);
  return w.toBuffer();
}

export interface VersionedRecord {
  version: number;
  body: Reader;
}

export function decodeVersioned(buf: Buffer): VersionedRecord {
  const r = new Reader(buf);
  const version = r.readInt16();
  return { version, body: r };
}
