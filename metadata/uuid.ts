// Kafka's Uuid: 128 bits shown as 22 characters of URL-safe base64 without
// padding (topic ids, cluster ids, remote segment ids). On the wire it is 16 bytes.
// Kafka never hands out the all-zero id (ZERO_UUID, "no id") nor the metadata
// topic's sentinel 0...01 (ONE_UUID), and regenerates ids whose text starts with
// '-' so they cannot be mistaken for a command-line option.
import { randomFillSync } from 'node:crypto';

/** 16 bytes, big-endian most significant bits first, as on the wire. */
export type UuidBytes = Buffer;

export const ZERO_UUID = 'AAAAAAAAAAAAAAAAAAAAAA';
/** Kafka's METADATA_TOPIC_ID / ONE_UUID. */
export const ONE_UUID = 'AAAAAAAAAAAAAAAAAAAAAQ';
export const RESERVED_UUIDS: ReadonlySet<string> = new Set([ZERO_UUID, ONE_UUID]);

/** Random bytes source; injectable for deterministic tests. */
export type RandomBytes = (buf: Uint8Array) => void;

const defaultRandom: RandomBytes = (buf) => {
  randomFillSync(buf);
};

/**
 * A random version-4 UUID as Kafka's Uuid.randomUuid does it, skipping
 * reserved ids and ids whose string form starts with '-'.
 */
export function randomUuid(random: RandomBytes = defaultRandom): string {
  for (;;) {
    const b = Buffer.alloc(16);
    random(b);
    // java.util.UUID.randomUUID: version 4, IETF variant.
    b[6] = ((b[6] as number) & 0x0f) | 0x40;
    b[8] = ((b[8] as number) & 0x3f) | 0x80;
    const id = uuidToString(b);
    if (!RESERVED_UUIDS.has(id) && !id.startsWith('-')) return id;
  }
}

export function uuidToString(bytes: Uint8Array): string {
  if (bytes.length !== 16) throw new RangeError(`a Uuid is 16 bytes, got ${bytes.length}`);
  return Buffer.from(bytes.buffer, bytes.byteOffset, 16).toString('base64url');
}

/** Decodes a Kafka Uuid string; throws on anything that is not 22 base64url chars of 16 bytes. */
export function uuidFromString(text: string): UuidBytes {
  if (!/^[A-Za-z0-9_-]{22}$/.test(text)) {
    throw new RangeError(`Input string '${text}' decoded as ${Math.floor((text.length * 3) / 4)} bytes, which is not equal to the expected 16 bytes of base64-encoded UUID`);
  }
  const bytes = Buffer.from(text, 'base64url');
  // Reject non-canonical encodings (trailing bits set) so each id has one spelling.
  if (bytes.length !== 16 || bytes.toString('base64url') !== text) {
    throw new RangeError(`Input string '${text}' is not a canonical base64url Uuid`);
  }
  return bytes;
}

export function isValidUuid(text: string): boolean {
  try {
    uuidFromString(text);
    return true;
  } catch {
    return false;
  }
}

/** The two signed 64-bit halves, as Kafka's Uuid(mostSignificantBits, leastSignificantBits). */
export function uuidToBigints(text: string): { mostSignificantBits: bigint; leastSignificantBits: bigint } {
  const b = uuidFromString(text);
  return { mostSignificantBits: b.readBigInt64BE(0), leastSignificantBits: b.readBigInt64BE(8) };
}

export function uuidFromBigints(mostSignificantBits: bigint, leastSignificantBits: bigint): string {
  const b = Buffer.alloc(16);
  b.writeBigInt64BE(BigInt.asIntN(64, mostSignificantBits), 0);
  b.writeBigInt64BE(BigInt.asIntN(64, leastSignificantBits), 8);
  return uuidToString(b);
}
